"""``tuner perft FEN DEPTH [--divide]``: count legal move tree leaves (a move generator check).

A deep count is split into kernel calls of at most :data:`SPLIT_DEPTH` plies (the tree above
them is walked here, one move at a time), so that Ctrl-C stops it within a fraction of a
second (exit code 130) instead of when the count ends.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from search.tree.alphabeta import MAX_PLY
from search.core.convert import STARTING_FEN, from_fen, legal_moves, move_to_uci, push
from search.core.perft import PERFT_SUITE, perft
from tuner.commands import command_help
from tuner.errors import DeferredSigint, Interrupted, TunerError, check_interrupt

#: deepest subtree counted by one kernel call: at most a few million leaves (under 0.1 s with
#: bulk counting at 40+ million per second, about 0.3 s without)
SPLIT_DEPTH = 4


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("perft", help=command_help("perft"),
                       description="Count the leaf nodes of the legal move tree of FEN to DEPTH plies.")
    p.add_argument("fen", metavar="FEN",
                   help="position in FEN, 'startpos', or a perft suite name (kiwipete, position3..6)")
    p.add_argument("depth", metavar="DEPTH", type=int, help=f"depth in plies (0 to {MAX_PLY})")
    p.add_argument("--divide", action="store_true", help="print the count below each root move")
    p.add_argument("--no-bulk", dest="bulk", action="store_false",
                   help="play every move of the last ply instead of counting the move list")
    p.set_defaults(func=run)


def count(board: np.ndarray, depth: int, *, bulk: bool = True) -> int:
    """Leaf count of ``board`` to ``depth`` plies, as :func:`search.core.perft.perft`, in kernel
    calls of at most :data:`SPLIT_DEPTH` plies with a Ctrl-C check between them."""
    if depth <= SPLIT_DEPTH:
        n = perft(board, depth, bulk=bulk)
        check_interrupt()
        return n
    return sum(count(push(board, int(m)), depth - 1, bulk=bulk) for m in legal_moves(board))


def run(args: argparse.Namespace) -> int:
    fen = STARTING_FEN if args.fen == "startpos" else PERFT_SUITE.get(args.fen, (args.fen,))[0]
    try:
        board = from_fen(fen)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    if args.depth < 0 or (args.divide and args.depth < 1) or args.depth > MAX_PLY:
        raise TunerError(f"depth must be from {1 if args.divide else 0} to {MAX_PLY} (the search's deepest ply), "
                         f"not {args.depth}")
    start = time.perf_counter()
    counts: dict[str, int] = {}
    try:
        with DeferredSigint():
            if args.divide:
                for m in legal_moves(board):
                    counts[move_to_uci(int(m))] = count(push(board, int(m)), args.depth - 1, bulk=args.bulk)
            else:
                nodes = count(board, args.depth, bulk=args.bulk)
    except Interrupted:
        done = f", {len(counts)} root moves counted" if args.divide else ""
        raise Interrupted(f"interrupted after {time.perf_counter() - start:.1f} s{done}") from None
    if args.divide:
        for uci in sorted(counts):
            print(f"{uci}: {counts[uci]}")
        nodes = sum(counts.values())
        print()
    seconds = time.perf_counter() - start
    print(f"nodes {nodes}")
    print(f"time {seconds:.3f} s, {nodes / max(seconds, 1e-9) / 1e6:.1f} million nodes/s")
    return 0
