"""Perft: count the leaf nodes of the legal move tree (the first correctness check of a core).

:func:`perft` and :func:`divide` are the validated entry points; :func:`perft_kernel` and
:func:`divide_kernel` the kernels behind them. The walk uses an explicit stack, not recursion:
numba segfaults when it loads a cached recursive function (numba issue #6061), and every kernel
here is cached.
"""

from __future__ import annotations

import operator

import numpy as np
from numba import njit

from search.core.board import BOARD_WORDS, make_move
from search.core.convert import move_to_uci
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.core.types import BoardArray
from search.core.validate import check_board

#: The six perft positions of the Chess Programming Wiki ("Perft Results"):
#: name -> (FEN, published leaf counts at depth 1..5).
PERFT_SUITE: dict[str, tuple[str, list[int]]] = {
    "start": ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", [20, 400, 8902, 197281, 4865609]),
    "kiwipete": ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                 [48, 2039, 97862, 4085603, 193690690]),
    "position3": ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", [14, 191, 2812, 43238, 674624]),
    "position4": ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                  [6, 264, 9467, 422333, 15833292]),
    "position5": ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
                  [44, 1486, 62379, 2103487, 89941194]),
    "position6": ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
                  [46, 2079, 89890, 3894594, 164075551]),
}


@njit(cache=True)
def _perft_from(boards: np.ndarray, moves: np.ndarray, depth: int, bulk: bool) -> int:
    """Leaf count below ``boards[0]``; ``boards``/``moves`` are stacks of ``depth + 1`` rows."""
    if depth == 0:
        return 1
    count = np.zeros(depth, dtype=np.int64)
    index = np.zeros(depth, dtype=np.int64)
    total = 0
    ply = 0
    count[0] = generate_moves(boards[0], moves[0], ALL_MOVES)
    while ply >= 0:
        if ply == depth - 1:  # last ply: count the moves here
            if bulk:
                total += count[ply]
            else:
                for i in range(count[ply]):
                    make_move(boards[ply], boards[ply + 1], moves[ply, i])
                    total += 1
            ply -= 1
            continue
        i = index[ply]
        if i == count[ply]:
            ply -= 1
            continue
        index[ply] = i + 1
        make_move(boards[ply], boards[ply + 1], moves[ply, i])
        ply += 1
        count[ply] = generate_moves(boards[ply], moves[ply], ALL_MOVES)
        index[ply] = 0
    return total


@njit(cache=True)
def perft_kernel(board: np.ndarray, depth: int, bulk: bool) -> int:
    """Leaf count of ``board`` (uint64[BOARD_WORDS]) to ``depth`` plies.

    With ``bulk`` the last ply is counted from the move list without playing the moves.
    """
    boards = np.zeros((depth + 1, BOARD_WORDS), dtype=np.uint64)
    moves = np.zeros((depth + 1, MAX_MOVES), dtype=np.int32)
    boards[0] = board
    return _perft_from(boards, moves, depth, bulk)


@njit(cache=True)
def divide_kernel(board: np.ndarray, depth: int, bulk: bool):  # type: ignore[no-untyped-def]
    """(root moves int32[n], leaf counts int64[n]) for ``depth`` >= 1."""
    boards = np.zeros((depth + 1, BOARD_WORDS), dtype=np.uint64)
    moves = np.zeros((depth + 1, MAX_MOVES), dtype=np.int32)
    root = np.zeros(MAX_MOVES, dtype=np.int32)
    n = generate_moves(board, root, ALL_MOVES)
    counts = np.zeros(n, dtype=np.int64)
    for i in range(n):
        make_move(board, boards[0], root[i])
        counts[i] = _perft_from(boards, moves, depth - 1, bulk)
    return root[:n].copy(), counts


# ---------------------------------------------------------------- validated entry points

#: deepest perft accepted (the kernels allocate one stack row per ply; the same as the search's
#: ``MAX_PLY``, :mod:`search.tree.alphabeta`)
MAX_PERFT_DEPTH = 64


def _check_depth(depth: int, low: int, what: str) -> int:
    try:
        depth = operator.index(depth)
    except TypeError:
        raise ValueError(f"{what} depth must be an integer, not {type(depth).__name__}") from None
    if not low <= depth <= MAX_PERFT_DEPTH:
        raise ValueError(f"{what} depth must be between {low} and {MAX_PERFT_DEPTH}, not {depth}")
    return depth


def perft(b: BoardArray, depth: int, *, bulk: bool = True) -> int:
    """Number of leaf nodes of the legal move tree of ``b`` to ``depth`` plies.

    ``bulk`` counts the last ply from the move list instead of playing each move. Raises
    :class:`~search.core.validate.InvalidBoardError` for an invalid board.
    """
    b = check_board(b)
    depth = _check_depth(depth, 0, "perft")
    return int(perft_kernel(b, depth, bool(bulk)))


def divide(b: BoardArray, depth: int, *, bulk: bool = True) -> dict[str, int]:
    """Leaf count below each root move (UCI text -> count), for ``depth`` >= 1."""
    b = check_board(b)
    depth = _check_depth(depth, 1, "divide")
    moves, counts = divide_kernel(b, depth, bool(bulk))
    return {move_to_uci(int(m)): int(c) for m, c in zip(moves, counts)}
