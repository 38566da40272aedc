"""``tuner bench <what>``: measure weight sets. Sub-subcommands, one ``_register_*`` each:

- ``match``: games between two weight sets (:mod:`tuner.match`).

(``move-match`` and ``plot`` are registered beside ``match`` in :func:`register`.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from tqdm import tqdm

from search.weights import load_weights
from tuner.config import add_arguments, from_namespace
from tuner.errors import TunerError
from tuner.match import (
    DEFAULT_OPENINGS,
    MatchConfig,
    default_pgn_path,
    load_openings,
    run_match,
    summarize,
    write_pgn,
)

MATCH_EPILOG = """\
game end: checkmate, stalemate, insufficient material, the fifty-move rule and threefold
repetition as soon as they occur; a win is adjudicated when the last 2 x ADJUDICATE_MOVES
scores (each engine's own score after its move, in White's view) all exceed ADJUDICATE_CP
for the same side, i.e. both engines agree for that many moves each; a draw is adjudicated
after MAX_PLIES plies.
statistics: W/D/L and score from A's view; Elo = -400 log10(1/score - 1) with a 95% interval
from the pentanomial model (game pairs of one opening are the independent unit: normal
approximation on the per-pair mean score, 1.96 standard errors, ends converted to Elo).
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("bench", help="measure weight sets: matches between them",
                       description="Measure weight sets against each other.")
    bench_sub = p.add_subparsers(dest="bench_command", metavar="WHAT")
    p.set_defaults(func=lambda args: _missing(p))
    _register_match(bench_sub)
    # further measurements (move-match, plot) register here, one _register_* function each


def _missing(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


# ---------------------------------------------------------------- match


def _register_match(bench_sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = bench_sub.add_parser(
        "match", help="play games between two weight sets with the numba search",
        description="Play games between weight sets A and B: each opening twice with colours "
                    "swapped, both sides searching to --depth plies (or --nodes per move) with the "
                    "same search. Prints W/D/L from A's view, the score and the Elo difference with "
                    "a 95% interval, and writes the games as PGN.",
        epilog=MATCH_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", metavar="A", help="weights file or built-in set (material, classic)")
    p.add_argument("b", metavar="B", help="weights file or built-in set to play against")
    add_arguments(p, MatchConfig)
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.set_defaults(func=run_match_command)


def run_match_command(args: argparse.Namespace) -> int:
    config = from_namespace(MatchConfig, args)
    try:
        wa, wb = load_weights(args.a), load_weights(args.b)
        openings = load_openings(config.openings or DEFAULT_OPENINGS)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    names = {"A": args.a, "B": args.b}
    limit = f"depth {config.depth}" if config.depth is not None else f"{config.nodes} nodes per move"
    if config.games // 2 > len(openings):
        print(f"note: {config.games // 2} game pairs but only {len(openings)} openings: openings repeat, "
              f"and repeated games are identical (the engines are deterministic)", file=sys.stderr)
    start = time.perf_counter()
    with tqdm(total=config.games, unit="game", disable=not sys.stderr.isatty(), file=sys.stderr) as bar:
        pairs = run_match(wa.values, wb.values, openings, config, progress=bar.update)
    seconds = time.perf_counter() - start
    summary = summarize(pairs)
    out = config.out or str(default_pgn_path(args.a, args.b))
    write_pgn(out, pairs, names, f"movetuner match {args.a} vs {args.b}, {limit}")
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, "limit": limit, **summary.to_json(),
                          "seconds": round(seconds, 2), "pgn": out}))
        return 0
    s = summary
    print(f"{args.a} vs {args.b}: {s.games} games ({s.games // 2} openings x 2 colours), {limit}, "
          f"{seconds:.1f} s")
    print(f"W/D/L from {args.a}'s view: {s.wins} / {s.draws} / {s.losses}")
    print(f"score {100 * s.score:.1f}% (95% interval {100 * s.score_low:.1f}% .. {100 * s.score_high:.1f}%)")
    print(f"Elo {s.elo:+.0f} (95% interval {s.elo_low:+.0f} .. {s.elo_high:+.0f}; pentanomial over "
          f"{s.games // 2} game pairs, normal approximation)")
    print("pairs scoring 0/0.5/1/1.5/2 points: " + " / ".join(map(str, s.pentanomial)))
    print("terminations: " + ", ".join(f"{k} {v}" for k, v in s.terminations.items()))
    print(f"PGN written to {out}")
    return 0
