"""``tuner bench openings --from-pgn FILE... | --from-book BOOK.bin --out FILE``: build a large
suite of balanced opening positions (:mod:`tuner.arena.openings`) in the format of the shipped
quick set, for ``--openings``. :func:`register` adds the subcommand to the ``tuner bench``
subparsers.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
import time
from typing import Any

from tuner.config import add_arguments, from_namespace
from tuner.errors import TunerError, one_line
from tuner.outputs import add_overwrite_argument, check_output
from tuner.progress import RunningLog

OPENINGS_EPILOG = """\
sources: --from-pgn FILE... (e.g. ../shared/datasets/gm/*.pgn; games with a FEN tag or another
variant are skipped, as are games whose first moves do not read): each game gives at most one
position, after a seeded random ply of MIN_PLIES..MAX_PLIES (the other plies when that one is
refused). --from-book BOOK.bin: --book-walks seeded random walks through a Polyglot book, each
move by the book's weights (e.g. Debian's gnuchess-book: /usr/share/games/gnuchess/book.bin).
kept: a position not seen before and not in --exclude (default: the shipped quick set
datasets/openings/openings.epd; --exclude '' for none), not over, level material (P 1, N 3,
B 3, R 5, Q 9), scored within --margin cp of 0 (side to move) by the repository's search with
--weights at --depth (plus quiescence). Games are tried in a seeded order until --count are kept;
fewer kept: a note on stderr (the file holds those found).
output: EPD lines as the shipped openings (the arena reads them with --openings), id = the moves
in SAN, ce = score, acd = depth; comment lines give the command, seed and each source's sha256.
An existing --out is refused unless --overwrite. Build the large suite at bench time from the
grandmaster games; never copy them into the repository.
"""


def register(bench_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tuner.arena.openings import SuiteConfig  # noqa: PLC0415

    p = bench_sub.add_parser(
        "openings", help="build a large suite of balanced opening positions from games or a Polyglot book",
        description="Build a suite of balanced opening positions (for --openings of bench match, compare "
                    "and ladder) from PGN games or a Polyglot book, each scored within a margin by a short "
                    "search, in the format of the shipped openings.",
        epilog=OPENINGS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--from-pgn", nargs="+", metavar="PGN", default=[], help="PGN files of games")
    p.add_argument("--from-book", metavar="BOOK", default=None, help="a Polyglot opening book (.bin)")
    p.add_argument("--book-walks", type=int, default=None, metavar="N",
                   help="random walks through the book (default: 20 x --count)")
    p.add_argument("--exclude", metavar="FILE", default=None,
                   help="openings file whose positions are never kept (default: the shipped quick set; '' for none)")
    p.add_argument("--out", required=True, metavar="FILE", help="the suite file to write")
    add_arguments(p, SuiteConfig)
    add_overwrite_argument(p, "the --out file")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.set_defaults(func=run_openings_command)


def run_openings_command(args: argparse.Namespace) -> int:
    from search.params.weights import atomic_write_text, load_weights  # noqa: PLC0415
    from tuner.arena.match import DEFAULT_OPENINGS, load_openings  # noqa: PLC0415
    from tuner.arena.openings import (SuiteConfig, book_candidates, build_suite, pgn_candidates,  # noqa: PLC0415
                                      position_key, suite_text)

    try:
        config = from_namespace(SuiteConfig, args)
        config.validate()
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    sources = [*args.from_pgn, *([args.from_book] if args.from_book else [])]
    if not sources:
        raise TunerError("give --from-pgn FILE... or --from-book BOOK.bin")
    exclude_path = DEFAULT_OPENINGS if args.exclude is None else (args.exclude or None)
    check_output(args.out, overwrite=args.overwrite, inputs=(*sources, exclude_path))
    if args.book_walks is not None and args.book_walks < 1:
        raise TunerError(f"--book-walks must be positive, not {args.book_walks}")
    start = time.perf_counter()
    try:
        weights = load_weights(config.weights).values
        exclude = {position_key(_board(o.fen)) for o in load_openings(exclude_path)} if exclude_path else set()
        rng = random.Random(config.seed)
        groups: list[Any] = list(pgn_candidates(args.from_pgn, config, rng))
        if args.from_book:
            groups += book_candidates(args.from_book, config, rng, args.book_walks or 20 * config.count)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    status = {"kept": 0, "tried": 0}

    def progress(kept: int, tried: int) -> None:
        status["kept"], status["tried"] = kept, tried

    with RunningLog(lambda: f"openings: {status['kept']}/{config.count} kept of {status['tried']} "
                            f"games or walks tried, {time.perf_counter() - start:.0f} s"):
        positions = build_suite(groups, config, weights, exclude=exclude, rng=rng, progress=progress)
    command = " ".join(shlex.quote(str(x)) for x in (
        "tuner", "bench", "openings", *(["--from-pgn", *args.from_pgn] if args.from_pgn else []),
        *(["--from-book", args.from_book] if args.from_book else []),
        *(["--book-walks", args.book_walks] if args.book_walks else []),
        *(["--exclude", args.exclude] if args.exclude is not None else []),
        "--count", config.count, "--min-plies", config.min_plies, "--max-plies", config.max_plies,
        "--margin", config.margin, "--depth", config.depth, "--weights", config.weights, "--seed", config.seed,
        "--out", args.out))
    try:
        atomic_write_text(args.out, suite_text(positions, config, sources, command))
    except OSError as exc:
        raise TunerError(f"{args.out}: cannot write ({exc.strerror or exc})") from None
    seconds = time.perf_counter() - start
    if len(positions) < config.count:
        print(one_line(f"note: only {len(positions)} of {config.count} positions found in {len(groups)} games or "
                       "walks; give more sources, a wider --margin or ply range"), file=sys.stderr)
    summary = {"out": args.out, "positions": len(positions), "count": config.count, "candidates": len(groups),
               "tried": status["tried"], "margin": config.margin, "depth": config.depth, "seed": config.seed,
               "max_abs_cp": max((abs(p.score_cp) for p in positions), default=0.0),
               "seconds": round(seconds, 1)}
    if args.json:
        print(json.dumps(summary))
    else:
        print(one_line(f"{len(positions)} positions written to {args.out} ({len(groups)} games or walks, "
                       f"{status['tried']} tried, {seconds:.1f} s)"))
    return 0


def _board(fen: str) -> Any:
    import chess  # noqa: PLC0415

    return chess.Board(fen)
