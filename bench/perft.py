"""Perft speed of the numba core against python-chess, measured in the same run.

Prints one JSON line:
- ``core_nps_bulk`` / ``chess_nps_bulk``: nodes per second with the last ply counted from
  the move list, on the six CPW perft positions to depth 3 (python-chess's
  ``legal_moves.count()`` at the last ply), and their ratio;
- ``core_nps`` / ``chess_nps``: the same without bulk counting (every leaf move played);
- ``kiwipete_d5_nps_bulk`` / ``kiwipete_d5_nps``: the core on Kiwipete to depth 5,
  single-threaded;
- ``depth5_all_correct``: whether all six positions give the published depth-5 counts.
"""

from __future__ import annotations

import argparse
import json
import time

import chess

from search.core.convert import from_fen
from search.core.perft import PERFT_SUITE as PERFT_POSITIONS, perft

DEPTH = 3


def chess_perft(board: chess.Board, depth: int, bulk: bool) -> int:
    if depth == 0:
        return 1
    if depth == 1 and bulk:
        return board.legal_moves.count()
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += chess_perft(board, depth - 1, bulk)
        board.pop()
    return total


def timed(fn, repeat: int = 1):  # type: ignore[no-untyped-def]
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, and no stray arguments
    fens = [fen for fen, _ in PERFT_POSITIONS.values()]
    boards = [from_fen(f) for f in fens]
    perft(boards[0], 2)  # compile or load the cache outside the timings
    perft(boards[0], 2, bulk=False)
    out: dict[str, object] = {"depth": DEPTH, "positions": len(fens)}
    for bulk, suffix in ((True, "_bulk"), (False, "")):
        nodes_chess, t_chess = timed(lambda: sum(chess_perft(chess.Board(f), DEPTH, bulk) for f in fens))
        nodes_core, t_core = timed(lambda: sum(perft(b, DEPTH, bulk=bulk) for b in boards), repeat=5)
        assert nodes_chess == nodes_core, (nodes_chess, nodes_core)
        out["nodes" + suffix] = nodes_core
        out["core_nps" + suffix] = round(nodes_core / t_core)
        out["chess_nps" + suffix] = round(nodes_chess / t_chess)
        out["ratio" + suffix] = round(t_chess / t_core, 1)
    kiwi = from_fen(PERFT_POSITIONS["kiwipete"][0])
    for bulk, suffix in ((True, "_bulk"), (False, "")):
        nodes, seconds = timed(lambda: perft(kiwi, 5, bulk=bulk))
        assert nodes == 193690690
        out["kiwipete_d5_nps" + suffix] = round(nodes / seconds)
    out["depth5_all_correct"] = all(
        perft(from_fen(fen), 5) == counts[4] for fen, counts in PERFT_POSITIONS.values()
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
