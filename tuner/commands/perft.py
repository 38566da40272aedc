"""``tuner perft FEN DEPTH [--divide]``: count legal move tree leaves (a move generator check)."""

from __future__ import annotations

import argparse
import time

from search.convert import STARTING_FEN, from_fen
from search.perft import PERFT_SUITE
from search.rules import divide, perft
from tuner.errors import TunerError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("perft", help="count the leaves of the legal move tree of a position",
                       description="Count the leaf nodes of the legal move tree of FEN to DEPTH plies.")
    p.add_argument("fen", metavar="FEN",
                   help="position in FEN, 'startpos', or a perft suite name (kiwipete, position3..6)")
    p.add_argument("depth", metavar="DEPTH", type=int, help="depth in plies (>= 0)")
    p.add_argument("--divide", action="store_true", help="print the count below each root move")
    p.add_argument("--no-bulk", dest="bulk", action="store_false",
                   help="play every move of the last ply instead of counting the move list")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    fen = STARTING_FEN if args.fen == "startpos" else PERFT_SUITE.get(args.fen, (args.fen,))[0]
    try:
        board = from_fen(fen)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    if args.depth < 0 or (args.divide and args.depth < 1):
        raise TunerError(f"depth must be >= {1 if args.divide else 0}, not {args.depth}")
    start = time.perf_counter()
    if args.divide:
        counts = divide(board, args.depth, bulk=args.bulk)
        for uci in sorted(counts):
            print(f"{uci}: {counts[uci]}")
        nodes = sum(counts.values())
        print()
    else:
        nodes = perft(board, args.depth, bulk=args.bulk)
    seconds = time.perf_counter() - start
    print(f"nodes {nodes}")
    print(f"time {seconds:.3f} s, {nodes / max(seconds, 1e-9) / 1e6:.1f} million nodes/s")
    return 0
