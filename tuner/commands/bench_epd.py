"""``tuner bench epd FILE --weights W... (--depth D | --nodes N | --movetime MS) [--search pls]``: EPD test suites.

A thin wrapper over :mod:`tuner.arena.epd`: parse the file (bad lines are reported on stderr with
their line numbers and skipped), let the ``tuner uci`` engine answer every position with each
weight set (``W@pls`` or ``--search pls``: with the probability-limited search), and print the
positions solved and the points, overall and per theme, with 95 % intervals; ``--out`` writes
every answer as JSON. :func:`register` adds the subcommand to the ``tuner bench`` subparsers.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any


from search.params.weights import atomic_write_text
from tuner.commands.arguments import (add_limit_arguments, add_search_arguments, add_weights_argument, check_workers,
                                      load_players)
from tuner.limits import SearchLimits
from tuner.arena.epd import (
    DEFAULT_SUITE,
    MAX_POINTS,
    PositionResult,
    parse_epd,
    process_pool,
    run_suite,
    running_line,
    summarise,
)
from tuner.cores import resolve_workers
from tuner.errors import TunerError, one_line
from tuner.outputs import add_overwrite_argument, check_output
from tuner.progress import RunningLog, progress_bar

EPD_EPILOG = f"""\
operations read: bm and am (moves in SAN or UCI), c8/c9 partial credit as the Strategic Test
Suite writes it (c8 "10 5 3"; c9 "e2e4 d2d4 g1f3", c9 in UCI or SAN; c7 when c9 is absent),
id (quoted). Blank lines and lines starting with '#' are ignored.
scoring, at most {MAX_POINTS} points a position: with c8/c9, the points c8 gives the engine's move if
c9 lists it, else 0; otherwise {MAX_POINTS} if the move is one of bm and not one of am (an am-only
position: not one of am), else 0. Solved: {MAX_POINTS} points.
theme: the id up to its first dot or digit (tactic.fork.01 -> tactic).
intervals (95%): Wilson for the solved fraction; normal (sample standard deviation) for the
mean points, clipped to [0, {MAX_POINTS}].
the shipped suite: {DEFAULT_SUITE.relative_to(DEFAULT_SUITE.parents[2])}
"""


def register(bench_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench_sub.add_parser(
        "epd", help="score weight sets on an EPD test suite (bm, am, STS c8/c9 credit)",
        description="Let the engine of 'tuner uci' answer every position of an EPD test suite with "
                    "each weight set, and report the positions solved and the points, overall and per "
                    "theme, with 95% intervals.",
        epilog=EPD_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="EPD file")
    add_weights_argument(p, players=True)
    add_limit_arguments(p, required=True)
    add_search_arguments(p)
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="worker processes (default: 1; 0: one per core)")
    p.add_argument("--scheduler", default="", metavar="ADDR",
                   help="answer on the workers of a running Dask scheduler (tcp://host:8786) instead of "
                        "--workers local processes (needs movetuner[dask])")
    p.add_argument("--out", metavar="JSON", help="write every position's answer and points to this JSON file")
    add_overwrite_argument(p, "the --out JSON")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.set_defaults(func=run_epd_command)


def run_epd_command(args: argparse.Namespace) -> int:
    check_output(args.out, overwrite=args.overwrite, inputs=(args.file, *args.weights))
    limits = SearchLimits(depth=args.depth, nodes=args.nodes, movetime=args.movetime)
    try:
        limits.validate()
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    check_workers(args.workers)
    args.workers = resolve_workers(args.workers)  # 0: one per core, as everywhere
    weight_sets = load_players(args.weights, args.search, args.move_model, args.pls_model_above,
                               args.pls_leaf_model)
    positions, problems = parse_epd(args.file)
    for problem in problems:
        print(one_line(f"skipped {problem}"), file=sys.stderr)
    if not positions:
        raise TunerError(f"{args.file}: no usable position ({len(problems)} lines skipped)")
    runs: list[tuple[str, list[PositionResult], float]] = []
    with contextlib.ExitStack() as stack:
        # one pool for all weight sets: each worker loads the kernels once
        pool = stack.enter_context(process_pool(args.workers)) if args.workers > 1 and not args.scheduler else None
        workers = args.workers
        if args.scheduler:
            from tuner.training.executor import DaskExecutor  # noqa: PLC0415

            dask = DaskExecutor(scheduler=args.scheduler, log=lambda m: print(m, file=sys.stderr))
            stack.callback(dask.close)
            pool = dask.client.get_executor(pure=False)
            workers = max(2, len(dask.client.scheduler_info()["workers"]))
        for name, w in weight_sets:
            start = time.perf_counter()
            done: list[PositionResult] = []  # answers so far, read by the running log

            def line(name: str = name, done: list[PositionResult] = done, start: float = start) -> str:
                return running_line(name, list(done), len(positions), time.perf_counter() - start)

            with progress_bar(total=len(positions), unit="pos", desc=name, disable=not sys.stderr.isatty(), leave=False,
                              file=sys.stderr) as bar, \
                    RunningLog(line, write=lambda text: bar.write(text, file=sys.stderr)):
                results = run_suite(positions, w, limits, workers, pool=pool, progress=bar.update,
                                    on_result=done.append)
            runs.append((name, results, time.perf_counter() - start))
    summaries = {name: {**summarise(results), "seconds": round(seconds, 2)} for name, results, seconds in runs}
    if args.out:
        atomic_write_text(args.out, json.dumps(_document(args, limits, problems, runs, summaries), indent=1) + "\n")
    if args.json:
        print(json.dumps({"file": args.file, "limits": dataclasses.asdict(limits), "skipped": len(problems),
                          "weights": summaries}))
        return 0
    _print_table(args.file, limits, len(positions), len(problems), summaries)
    if args.out:
        print(one_line(f"answers written to {args.out}"))
    return 0


def _document(args: argparse.Namespace, limits: SearchLimits, problems: list[Any],
              runs: list[tuple[str, list[PositionResult], float]], summaries: dict[str, Any]) -> dict[str, Any]:
    return {"file": args.file, "limits": dataclasses.asdict(limits), "workers": args.workers,
            "problems": [str(p) for p in problems],
            "weights": {name: {"summary": summaries[name], "positions": [r.to_json() for r in results]}
                        for name, results, _ in runs}}


def _interval(ci: list[float] | None, scale: float, fmt: str) -> str:
    return "-" if ci is None else f"[{fmt.format(ci[0] * scale)}, {fmt.format(ci[1] * scale)}]"


def _row(name: str, theme: str, s: dict[str, Any], name_width: int, theme_width: int) -> str:
    solved = f"{s['solved']}/{s['positions']}"
    points = f"{s['points']}/{s['max_points']}"
    return (f"{name:<{name_width}}  {theme:<{theme_width}}  {solved:>9}  {100 * s['solved_fraction']:5.1f}%  "
            f"{_interval(s['solved_ci95'], 100, '{:.1f}'):>14}  {points:>9}  {s['mean_points']:5.2f}  "
            f"{_interval(s['mean_points_ci95'], 1, '{:.2f}'):>14}")


def _print_table(file: str, limits: SearchLimits, n: int, skipped: int, summaries: dict[str, Any]) -> None:
    print(f"{one_line(Path(file).name)}: {n} positions ({skipped} lines skipped), {limits.describe()}")
    themes = [t for s in summaries.values() for t in s["themes"]]
    name_width = max(7, *(len(name) for name in summaries))
    theme_width = max(5, *(len(t) for t in themes))
    print(f"{'weights':<{name_width}}  {'theme':<{theme_width}}  {'solved':>9}  {'%':>6}  {'95% interval':>14}  "
          f"{'points':>9}  {'mean':>5}  {'95% interval':>14}")
    for name, s in summaries.items():
        print(_row(name, "all", s, name_width, theme_width) + f"   ({s['seconds']:.1f} s)")
        for theme, t in s["themes"].items():
            print(_row("", theme, t, name_width, theme_width))
    print(f"points: at most {MAX_POINTS} a position; intervals: Wilson (solved), normal from the sample "
          f"standard deviation (mean points)")
