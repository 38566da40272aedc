"""``tuner bench compare RUN_OR_WEIGHTS... --data DIR``: weight sets, runs and engines side by side.

A thin wrapper over :mod:`tuner.arena.compare`: held-out move-match, a round robin of games with Elo
ratings, an optional EPD suite, and each run's method and tuning time, as a Markdown table on
stdout, ``compare.json`` and ``compare.png`` in ``--out``. :func:`register` adds the
subcommand to the ``tuner bench`` subparsers; :func:`add_engine_arguments` gives ``--engine``
and ``--engine-options`` to ``bench match`` too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tuner.commands import PLAYER_SUFFIXES_HELP, builtins_help
from tuner.commands.arguments import (MoveModels, add_limit_arguments, add_search_arguments, add_sprt_argument,
                                      check_sweep_options, check_workers, leaf_models, sprt_of)
from tuner.config import add_arguments, from_namespace, seed_option
from tuner.cores import resolve_workers
from tuner.errors import TunerError, one_line
from tuner.outputs import check_output_files
from tuner.arena.match import MatchConfig

COMPARE_EPILOG = """\
entrants: a built-in set ({builtins}), a weights or network file, a run folder of 'tuner tune'
(weights.json, config.toml, metrics.jsonl: its method, and its tuning time = the sum of
iteration_seconds), or an external UCI engine (--engine; games only).
figures, each as its single command computes it (same seeds: same figures):
  move-match  'tuner bench move-match --weights ... --data DIR --split SPLIT --depth D'
  games       'tuner bench match A B --games N --seed S ...' for every pair (same openings);
              the PGN files go to OUT/games/; with --sprt each pair stops as
              'tuner bench match A B --sprt ...' does (A: the entrant given first)
  EPD         'tuner bench epd FILE --weights ...' with the games' --depth/--nodes/--movetime
ratings: maximum likelihood on the logistic Elo curve over all pairs' points, the anchor fixed
(--anchor, default the first entrant, at --anchor-elo); 95% intervals from the sandwich
covariance with each pair's pentanomial variance (as 'bench match' computes it). A player whose
group scored every point against the anchor's (or none) is rated +inf (-inf). Details:
tuner/arena/ratings.py.
"""


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine`` and ``--engine-options`` (``bench match`` and ``bench compare``)."""
    p.add_argument("--engine", action="append", metavar="CMD",
                   help="an external UCI engine as a player (repeatable), e.g. 'stockfish'")
    p.add_argument("--engine-options", action="append", metavar="OPTS",
                   help="UCI options 'Name=Value,Name2=Value2' (e.g. 'UCI_LimitStrength=true,UCI_Elo=1500'): "
                        "once for every engine, or once per --engine")
    p.add_argument("--engine-protocol", action="append", metavar="PROTOCOL", choices=("uci", "xboard"),
                   help="uci (default) or xboard (CECP 2, with the ping and setboard features): once for every "
                        "engine, or once per --engine")


def register(bench_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = bench_sub.add_parser(
        "compare", help="weight sets, runs and engines side by side: move-match, Elo, EPD, tuning time",
        description="Measure several weight sets, run folders and external engines with the figures of "
                    "'bench move-match', 'bench match' (a round robin, with Elo ratings) and 'bench epd', "
                    "and print one Markdown table; write compare.json and compare.png to --out.",
        epilog=COMPARE_EPILOG.format(builtins=builtins_help()), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("entrants", nargs="*", metavar="RUN_OR_WEIGHTS",
                   help=f"run folders, weights or network files or built-in sets; {PLAYER_SUFFIXES_HELP}")
    p.add_argument("--data", required=True, metavar="DIR", help="position set written by 'tuner ingest'")
    p.add_argument("--split", default="test", choices=("train", "validation", "test"),
                   help="the split for move-match (default: test)")
    p.add_argument("--move-match-depth", type=int, default=1, metavar="D",
                   help="move-match search depth from the position (default: 1)")
    p.add_argument("--max-positions", type=int, default=0, metavar="N",
                   help="move-match on a seeded random sample of N positions (default: all)")
    p.add_argument("--threads", type=int, default=0, help="move-match threads (default: all cores)")
    p.add_argument("--games", type=int, default=100, metavar="N",
                   help="games per pair of entrants, even; 0: no games (default: 100)")
    add_limit_arguments(p, required=False, prefix="games and EPD: ")
    p.add_argument("--seed", type=seed_option, default=0, help="seed of the move-match sample and the openings (default: 0)")
    p.add_argument("--workers", type=int, default=None, metavar="W",
                   help="processes for the games and the EPD suite (default: one per core)")
    add_arguments(p, MatchConfig, exclude=("games", "depth", "nodes", "movetime", "tc", "out", "seed", "workers"))
    add_engine_arguments(p)
    add_search_arguments(p)
    add_sprt_argument(p, what="each pair's games")
    p.add_argument("--anchor", metavar="NAME", help="the entrant rated --anchor-elo (default: the first)")
    p.add_argument("--anchor-elo", type=float, default=0.0, metavar="ELO",
                   help="the anchor's rating, e.g. a rated engine's UCI_Elo (default: 0)")
    p.add_argument("--epd", metavar="FILE", help="also score an EPD suite (e.g. datasets/epd/movetuner.epd)")
    p.add_argument("--out", dest="out_dir", default="results/compare", metavar="DIR",
                   help="folder for compare.json, compare.png and the games (default: results/compare)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an earlier comparison's compare.json, compare.png and game PGNs in --out "
                        "(without it, a folder holding any of them is refused)")
    p.add_argument("--json", action="store_true", help="print compare.json's document as one JSON line")
    p.set_defaults(func=run_compare_command)


def run_compare_command(args: argparse.Namespace) -> int:
    import math  # noqa: PLC0415

    from search.params.weights import atomic_write_text  # noqa: PLC0415
    from tuner.arena.compare import (  # noqa: PLC0415
        CompareSettings,
        entrants,
        find_anchor,
        main_table,
        pair_table,
        run_compare,
    )
    from tuner.arena.engines import engine_specs  # noqa: PLC0415
    from tuner.limits import SearchLimits  # noqa: PLC0415
    from tuner.arena.plots import plot_compare  # noqa: PLC0415

    if args.max_positions < 0 or args.games < 0:
        raise TunerError("--max-positions and --games must be >= 0")
    check_sweep_options(args.move_match_depth, args.threads, "--move-match-depth")
    if not math.isfinite(args.anchor_elo):
        raise TunerError(f"--anchor-elo must be a finite number, not {args.anchor_elo}")
    has_limit = any(x is not None for x in (args.depth, args.nodes, args.movetime))
    if (args.games > 0 or args.epd) and not has_limit:
        raise TunerError("give --depth, --nodes or --movetime for the games and the EPD suite "
                         "(or --games 0 without --epd)")
    check_workers(args.workers)
    sprt = sprt_of(args.sprt)
    if sprt is not None and args.games == 0:
        raise TunerError("--sprt stops games: give --games N (the most games a pair plays)")
    try:
        engines = engine_specs(args.engine, args.engine_options, args.engine_protocol)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    players = entrants(args.entrants, engines, search=args.search, models=MoveModels(args.move_model).get,
                       model_above=args.pls_model_above, leaf_models=leaf_models(args.pls_leaf_model))
    anchor = find_anchor(players, args.anchor)
    match = from_namespace(MatchConfig, args) if args.games > 0 else None
    epd_limits = None
    if args.epd:
        epd_limits = SearchLimits(depth=args.depth, nodes=args.nodes, movetime=args.movetime)
        try:
            epd_limits.validate()
        except ValueError as exc:
            raise TunerError(str(exc)) from None
    workers = resolve_workers(args.workers)
    settings = CompareSettings(data=args.data, split=args.split, move_match_depth=args.move_match_depth,
                               max_positions=args.max_positions, seed=args.seed, threads=args.threads, match=match,
                               epd=args.epd, epd_limits=epd_limits, workers=workers, anchor=anchor,
                               anchor_elo=args.anchor_elo, sprt=sprt)
    out = Path(args.out_dir)
    if args.data is not None and out.resolve() == Path(args.data).resolve():
        raise TunerError(f"{out}: is the --data position set; --out names another folder")
    check_output_files(out, ("compare.json", "compare.png"), overwrite=args.overwrite,
                       patterns=("games/*.pgn",) if match is not None else ())
    doc = run_compare(players, settings, out, progress=sys.stderr.isatty())
    out.mkdir(parents=True, exist_ok=True)  # after the measures: a failed comparison leaves no empty folder
    json_path, png_path = out / "compare.json", out / "compare.png"
    atomic_write_text(json_path, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    plot_compare(doc, png_path, f"movetuner compare ({len(players)} entrants)")
    if args.json:
        print(json.dumps(doc, allow_nan=False))
        return 0
    print(_heading(doc))
    print()
    print(main_table(doc))
    if doc["pairs"]:
        print()
        print(pair_table(doc))
    print()
    print(one_line(f"written: {json_path}, {png_path}" + (f", {out / 'games'}/*.pgn" if doc["pairs"] else "")))
    return 0


def _heading(doc: dict[str, Any]) -> str:
    mm = doc["move_match"]
    parts = [f"move-match: {mm['positions']} positions of {doc['data']} ({doc['split']}), depth {mm['depth']}"]
    g = doc["games"]
    if g is not None and doc["pairs"]:
        limit = (f"depth {g['depth']}" if g["depth"] is not None
                 else f"{g['nodes']} nodes" if g["nodes"] is not None else f"{g['movetime']} ms")
        parts.append(f"games: {'at most ' if g.get('sprt') else ''}{g['per_pair']} per pair, {limit} per move, seed {g['seed']}; "
                     f"Elo: maximum likelihood, anchor {doc['anchor']} = {doc['anchor_elo']:g}")
        t = g.get("sprt")
        if t:
            parts.append(f"SPRT per pair: elo0 {t['elo0']:g} elo1 {t['elo1']:g} alpha {t['alpha']:g} beta {t['beta']:g}, "
                         f"LLR bounds {t['lower']:.3f} .. {t['upper']:.3f}; a pair stops when its LLR crosses one "
                         f"(H0 / H1), else after {g['per_pair']} games (inconclusive)")
    if doc["epd"] is not None:
        e = doc["epd"]
        parts.append(f"EPD: {e['file']}, {e['positions']} positions ({e['skipped']} lines skipped)")
    return "\n".join(parts)
