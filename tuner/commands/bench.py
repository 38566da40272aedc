"""``tuner bench <what>``: measure weight sets. Sub-subcommands, one ``_register_*`` each:

- ``move-match``: how often each weight set's search picks the played move (:mod:`tuner.arena.movematch`);
- ``match``: games between two weight sets, or one and an external UCI engine (:mod:`tuner.arena.match`);
- ``plot``: PNG plots of a run's metrics and learnt piece-square tables (:mod:`tuner.arena.plots`);
- ``epd``: EPD test suites, solved positions and STS-style points (:mod:`tuner.commands.bench_epd`);
- ``compare``: several weight sets, runs and engines side by side (:mod:`tuner.commands.bench_compare`);
- ``openings``: a large suite of balanced opening positions from games or a book (:mod:`tuner.commands.bench_openings`);
- ``ladder``: a gauntlet against rated engines, a rating on their scale (:mod:`tuner.commands.bench_ladder`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any


from search.params.weights import load_weights
from tuner.commands import PLAYER_SUFFIXES_HELP, builtins_help, command_help
from tuner.commands import bench_compare, bench_epd, bench_ladder, bench_openings
from tuner.commands.arguments import (add_search_arguments, add_sprt_argument, add_weights_argument, check_sweep_options,
                                      load_players, load_weight_sets, sprt_of)
from tuner.commands.bench_compare import add_engine_arguments
from tuner.config import add_arguments, from_namespace, seed_option
from tuner.errors import TunerError, is_interrupt, one_line
from tuner.outputs import add_overwrite_argument, check_output, check_output_files
from tuner.progress import RunningLog, progress_bar
from tuner.training.executor import EXECUTORS, DaskExecutor
from tuner.arena.match import (
    DEFAULT_OPENINGS,
    MatchConfig,
    PgnWriter,
    check_confirmation,
    default_pgn_path,
    describe_limit,
    load_openings,
    openings_record,
    pgn_time_control,
    run_match,
    running_line,
    summarize,
)
from tuner.methods.registry import methods

if TYPE_CHECKING:
    import numpy as np

    from tuner.training.run_folder import RunDir

MATCH_EPILOG = """\
game end: checkmate, stalemate, insufficient material, the fifty-move rule and threefold
repetition as soon as they occur; a win is adjudicated when the last 2 x ADJUDICATE_MOVES
scores (each engine's own score after its move, in White's view) all exceed ADJUDICATE_CP
for the same side, i.e. both engines agree for that many moves each; a draw is adjudicated
after MAX_PLIES plies.
external engines: --engine CMD (repeatable; split as a shell would) plays in place of A or B
with the same openings, colour swaps, limit (as go depth/nodes/movetime) and statistics;
--engine-options "Name=Value,..." sets UCI options (once for every engine, or once per
--engine); --engine-protocol xboard drives an XBoard (CECP 2) engine instead of UCI. An engine
that cannot start, exits, answers an illegal move or exceeds --engine-timeout stops the match
with a one-line error; with --forfeit it loses that game instead (termination "forfeit: ...",
the error on stderr) and a fresh process plays on.
statistics: W/D/L and score from A's view; Elo = -400 log10(1/score - 1) with a 95% interval
from the pentanomial model (game pairs of one opening are the independent unit: normal
approximation on the per-pair mean score, 1.96 standard errors, ends converted to Elo).
SPRT (--sprt ELO0 ELO1 ALPHA BETA): checked after every game pair, in opening order; the match
stops when the log-likelihood ratio reaches ln(BETA / (1 - ALPHA)) (H0 accepted: A is not ELO1
stronger) or ln((1 - BETA) / ALPHA) (H1 accepted), or after --games games (inconclusive).
The LLR is fishtest's: a GSPRT on the pentanomial pair counts in logistic Elo (tuner/arena/sprt.py).
It also stops when the score lies outside both hypotheses: H0 when the mean score is below ELO0's
and no pentanomial distribution of ELO0's mean has more than (BETA / (1 - ALPHA)) times the
likelihood of the best fit, H1 likewise above ELO1 (e.g. 5 pairs lost twice, at 0 against 5).
openings: --openings FILE is EPD (one EPD or FEN a line) or PGN (a .pgn name, or a first line
starting with '['): each game's mainline played to its end is one opening. Default: the shipped
datasets/openings/openings.epd. The --json summary records the openings file, its sha256 and the
seed. Confirmation (docs/strength.md): a candidate chosen by one match is reported from another
on other openings or another seed; --chosen-by JSON (the choosing match's summary) refuses a
match that would reuse that match's openings and seed.
output: --pgn (or --out) is written game pair by game pair, so a stopped match keeps its
finished games; an existing file is refused unless --overwrite. Without it: results/match-A-vs-B.pgn,
or -2, -3, ... when that exists. Every 30 s a line on stderr gives the games, W/D/L, Elo and LLR
(MOVETUNER_LOG_SECONDS sets another interval).
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", help=command_help("bench"),
                       description="Measure weight sets: on held-out positions, against each other, "
                                   "and plot what a run learnt.")
    bench_sub = p.add_subparsers(dest="bench_command", metavar="WHAT")
    p.set_defaults(func=lambda args: _missing(p))
    _register_move_match(bench_sub)
    _register_match(bench_sub)
    _register_plot(bench_sub)
    bench_epd.register(bench_sub)
    bench_compare.register(bench_sub)
    bench_openings.register(bench_sub)
    bench_ladder.register(bench_sub)


def _missing(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


# ---------------------------------------------------------------- move-match


def _register_move_match(bench_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench_sub.add_parser(
        "move-match", help="how often each weight set's search picks the played move",
        description="Search every legal move of every position of a split (depth plies counted from the "
                    "position, then quiescence) with each weight set, and report the top-1 match (ties "
                    "as fractions), the top-3 match and the mean rank of the played move.")
    add_weights_argument(p)
    p.add_argument("--data", required=True, metavar="DIR", help="position set written by 'tuner ingest'")
    p.add_argument("--split", default="test", choices=("train", "validation", "test"),
                   help="which split to measure on (default: test)")
    p.add_argument("--depth", type=int, default=1, help="search depth from the position (default: 1)")
    p.add_argument("--max-positions", type=int, default=0, metavar="N",
                   help="a seeded random sample of N positions (default: all)")
    p.add_argument("--seed", type=seed_option, default=0, help="seed of the sample (default: 0)")
    p.add_argument("--threads", type=int, default=0, help="threads (default: all cores; dask: per worker)")
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="where the sweeps run: local, or dask (see 'tuner tune --help') (default: local)")
    p.add_argument("--scheduler", default="", metavar="ADDR",
                   help="dask: a running scheduler (default: a LocalCluster on this machine)")
    p.add_argument("--workers", type=int, default=0, metavar="N",
                   help="dask without --scheduler: worker processes (default: one per core)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    p.set_defaults(func=run_move_match_command)


def run_move_match_command(args: argparse.Namespace) -> int:
    from tuner.arena.movematch import measure_weight_sets  # noqa: PLC0415

    if args.max_positions < 0:
        raise TunerError(f"--max-positions must be >= 0, not {args.max_positions}")
    check_sweep_options(args.depth, args.threads)
    weight_sets = load_weight_sets(args.weights)
    if args.scheduler and args.executor != "dask":
        raise TunerError("--scheduler is an option of --executor dask")
    with contextlib.ExitStack() as stack:
        executor = None
        if args.executor == "dask":  # one cluster for every weight set: the positions go once
            executor = DaskExecutor(scheduler=args.scheduler, workers=args.workers, n_threads=args.threads,
                                    log=lambda m: print(m, file=sys.stderr))
            stack.callback(executor.close)
        pos, results = measure_weight_sets(args.data, args.split, weight_sets, depth=args.depth,
                                           max_positions=args.max_positions, seed=args.seed, threads=args.threads,
                                           progress=sys.stderr.isatty(), executor=executor)
    from tuner.training.verdict import paired  # noqa: PLC0415

    first_name, first = results[0]
    # each later set against the first, position by position (the paired difference of top-1 credits)
    against = {name: paired(first.credits, r.credits) for name, r in results[1:]}
    if args.json:
        print(json.dumps({"data": args.data, "split": args.split, "depth": args.depth, "positions": len(pos),
                          "weights": {name: r.to_json() for name, r in results},
                          "top1_vs_first": {name: {"first": first_name, "diff": round(m.diff, 5),
                                                   "ci95": [round(m.low, 5), round(m.high, 5)]}
                                            for name, m in against.items()}}))
        return 0
    width = max(len(n) for n, _ in results)
    print(f"{len(pos)} positions of {args.data} ({args.split}), depth {args.depth} + quiescence, "
          f"{results[0][1].mean_legal_moves:.1f} legal moves on average")
    print(f"{'weights':<{width}}  {'top-1':>7}  {'95% interval':>17}  {'top-3':>7}  {'95% interval':>17}  "
          f"{'mean rank':>9}")
    for name, r in results:
        print(f"{name:<{width}}  {100 * r.top1:6.2f}%  {_percent_interval(r.top1_ci95):>17}  {100 * r.top3:6.2f}%  "
              f"{_percent_interval(r.top3_ci95):>17}  {r.mean_rank:9.2f}")
    for name, m in against.items():
        print(f"top-1 {name} - {first_name}: {100 * m.diff:+.2f} points, 95% interval "
              f"[{100 * m.low:+.2f}, {100 * m.high:+.2f}] (paired over the {m.n} positions)")
    print("intervals: normal, from the standard deviation of the per-position credits")
    return 0


def _percent_interval(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{100 * ci[0]:.2f}, {100 * ci[1]:.2f}]%"


# ---------------------------------------------------------------- match


def _register_match(bench_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench_sub.add_parser(
        "match", help="play games between two weight sets with the numba search",
        description="Play games between weight sets A and B: each opening twice with colours "
                    "swapped, both sides searching to --depth plies (or --nodes or --movetime per move, or on "
                    "a --tc clock) with the "
                    "same search (--search, or per player a suffix: see A). "
                    "Prints W/D/L from A's view, the score and the Elo difference with a 95% interval, "
                    "and writes the games as PGN.",
        epilog=MATCH_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", metavar="A", nargs="?", help=f"weights file, network file or built-in set ({builtins_help()}); "
                                                      f"{PLAYER_SUFFIXES_HELP}")
    p.add_argument("b", metavar="B", nargs="?", help="weights file, network file or built-in set to play against (as A)")
    add_engine_arguments(p)
    add_search_arguments(p)
    add_arguments(p, MatchConfig)
    add_sprt_argument(p)
    p.add_argument("--pgn", dest="out", default=argparse.SUPPRESS, metavar="PGN", help="same as --out")
    add_overwrite_argument(p, "the --out PGN")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line (Ctrl-C or SIGTERM: "
                                                       "of the game pairs finished, with \"interrupted\": true)")
    p.add_argument("--chosen-by", metavar="JSON", default=None,
                   help="a confirmation match: the JSON summary (file) of the match that chose its candidate; "
                        "refused when this match would reuse its openings file and seed (docs/strength.md)")
    p.set_defaults(func=run_match_command)


def run_match_command(args: argparse.Namespace) -> int:
    from tuner.arena.engines import engine_specs  # noqa: PLC0415

    config = from_namespace(MatchConfig, args)
    check_output(config.out, overwrite=args.overwrite, inputs=(args.a, args.b, config.openings))
    sprt = sprt_of(args.sprt)
    try:
        engines = engine_specs(args.engine, args.engine_options, args.engine_protocol)
        given = [x for x in (args.a, args.b) if x is not None]
        if len(given) + len(engines) != 2:
            raise ValueError(f"a match has two players: got {len(given)} weight sets and {len(engines)} --engine "
                             "(several: use 'tuner bench compare')")
        loaded = load_players(given, args.search, args.move_model, args.pls_model_above, args.pls_leaf_model)
        players = [p for _, p in loaded] + list(engines)
        labels = [name for name, _ in loaded] + [e.name for e in engines]
        openings = load_openings(config.openings or DEFAULT_OPENINGS)
        record = openings_record(config.openings or DEFAULT_OPENINGS, config.seed)
        if args.chosen_by is not None:
            check_confirmation(args.chosen_by, record)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    args.a, args.b = labels
    wa, wb = players
    names = {"A": args.a, "B": args.b}
    limit = describe_limit(config)
    if config.games // 2 > len(openings):
        print(f"note: {config.games // 2} game pairs but only {len(openings)} openings: openings repeat, "
              f"and repeated games are identical (the engines are deterministic)", file=sys.stderr)
    out = config.out or str(default_pgn_path(args.a, args.b, free=not args.overwrite))
    played: list[Any] = []  # the game pairs finished so far, in opening order (read by the running log)
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        pgn = stack.enter_context(PgnWriter(out, names, f"movetuner match {args.a} vs {args.b}, {limit}",
                                            time_control=pgn_time_control(config.tc), overwrite=args.overwrite))

        def on_pair(index: int, pair: Any) -> None:
            pgn.add_pair(index, pair)
            played.append(pair)

        bar = progress_bar(total=config.games, unit="game", disable=not sys.stderr.isatty(), file=sys.stderr)
        stack.callback(bar.close)
        stack.enter_context(RunningLog(lambda: running_line("match", list(played), config.games, sprt,
                                                            time.perf_counter() - start),
                                       write=lambda line: bar.write(line, file=sys.stderr)))
        try:
            pairs = run_match(wa, wb, openings, config, progress=bar.update, sprt=sprt, on_pair=on_pair)
        except FileExistsError:  # made since the check
            raise TunerError(f"{out}: exists; pass --overwrite to replace it") from None
        except OSError as exc:
            if exc.filename is None or Path(exc.filename) != Path(out):
                raise
            raise TunerError(f"{out}: cannot write the PGN ({exc.strerror or exc})") from None
        except BaseException as exc:  # Ctrl-C or SIGTERM: the figures of the pairs finished, then stop
            if is_interrupt(exc) and played:
                bar.close()
                _report_match(args, limit, record, list(played), sprt, time.perf_counter() - start, out,
                              interrupted=config.games)
            raise
    _report_match(args, limit, record, pairs, sprt, time.perf_counter() - start, out)
    return 0


def _report_match(args: argparse.Namespace, limit: str, record: dict[str, Any], pairs: list[Any], sprt: Any,
                  seconds: float, out: str, interrupted: int | None = None) -> None:
    """Print a match's figures (``--json``: one line) from its finished game ``pairs``; with
    ``interrupted`` (the games asked for), of a match stopped before its end."""
    summary = summarize(pairs)
    test = sprt.check(summary.pentanomial) if sprt is not None else None
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, "limit": limit, **record, **summary.to_json(),
                          "sprt": test.to_json() if test is not None else None,
                          "seconds": round(seconds, 2), "pgn": out, "interrupted": interrupted is not None}),
              flush=True)
        return
    s = summary
    if interrupted is not None:
        print(f"interrupted: the figures of the {s.games} games finished (of {interrupted})")
    print(f"{args.a} vs {args.b}: {s.games} games ({s.games // 2} openings x 2 colours), {limit}, "
          f"{seconds:.1f} s")
    print(one_line(f"openings {record['openings']} (sha256 {str(record['openings_sha256'])[:12]}), seed {record['seed']}"))
    print(f"W/D/L from {args.a}'s view: {s.wins} / {s.draws} / {s.losses}")
    print(f"score {100 * s.score:.1f}% (95% interval {100 * s.score_low:.1f}% .. {100 * s.score_high:.1f}%)")
    print(f"Elo {s.elo:+.0f} (95% interval {s.elo_low:+.0f} .. {s.elo_high:+.0f}; pentanomial over "
          f"{s.games // 2} game pairs, normal approximation)")
    print("pairs scoring 0/0.5/1/1.5/2 points: " + " / ".join(map(str, s.pentanomial)))
    print("terminations: " + ", ".join(f"{k} {v}" for k, v in s.terminations.items()))
    if test is not None:
        print(test.describe())
    print(one_line(f"PGN written to {out}"), flush=True)


# ---------------------------------------------------------------- plot


#: the files ``bench plot`` writes into its --out folder
PLOT_FILES = ("metrics.png", "pst.png")


def _register_plot(bench_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench_sub.add_parser(
        "plot", help="PNG plots of a run: metrics by iteration, heat maps of the learnt PSTs",
        description="Draw RUN/metrics.jsonl (the objective and move-match against the iteration) and "
                    "heat maps of the piece-square tables of RUN/weights.json, as PNG files.")
    p.add_argument("run", metavar="RUN", help="a run folder written by 'tuner tune'")
    p.add_argument("--out", metavar="DIR", help="where to write the PNG files (default: RUN/plots)")
    add_overwrite_argument(p, "metrics.png and pst.png in the --out folder")
    p.set_defaults(func=run_plot_command)


def run_plot_command(args: argparse.Namespace) -> int:
    from tuner.arena.plots import plot_metrics, plot_psts  # noqa: PLC0415
    from tuner.training.run_folder import RunDir  # noqa: PLC0415

    run = RunDir(args.run)
    out = Path(args.out) if args.out else run.path / "plots"
    check_output_files(out, PLOT_FILES, overwrite=args.overwrite)
    if not run.metrics_path.exists() or not run.weights_path.exists():
        raise TunerError(f"{run.path}: not a run folder (needs metrics.jsonl and weights.json)")
    records = run.read_metrics()
    if not records:
        raise TunerError(f"{run.metrics_path}: no metrics yet")
    try:
        weights = load_weights(run.weights_path)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    method = weights.metadata.get("method")
    if not isinstance(method, str) or method not in methods():
        raise TunerError(f"{run.weights_path}: unknown method {method!r} in its metadata "
                         f"(known: {', '.join(methods())})")
    start = _start_weights(run)
    out.mkdir(parents=True, exist_ok=True)
    name = run.path.resolve().name
    metrics_png, pst_png = (out / f for f in PLOT_FILES)
    written = [plot_metrics(records, method, metrics_png, f"{name} ({method})"),
               plot_psts(weights.values, pst_png, f"{name}: piece-square tables", start)]
    for path in written:
        print(one_line(str(path)))
    return 0


def _start_weights(run: RunDir) -> np.ndarray | None:
    """The weights a run started from (its config.toml's ``start``: a built-in set or a file,
    as given, or relative to the run folder), or None with a note on stderr when they cannot
    be read (then ``pst.png`` shows the values, not the change)."""
    from tuner.config import read_toml  # noqa: PLC0415

    start = read_toml(run.config_path).get("start", "material") if run.config_path.exists() else None
    if not isinstance(start, str):
        return None
    for candidate in (start, str(run.path / start)):
        try:
            return load_weights(candidate).values
        except ValueError:
            continue
    print(one_line(f"note: {run.config_path}: cannot read the start weights {start!r}; pst.png shows the values, "
                   "not the change from the start"), file=sys.stderr)
    return None
