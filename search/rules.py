"""Public rule functions on boards: perft and its divide (wrappers over the kernels)."""

from __future__ import annotations

import operator

from search.alphabeta import MAX_PLY
from search.convert import Board, move_to_uci
from search.perft import divide_kernel, perft_kernel
from search.validate import check_board

#: deepest perft accepted (the kernels allocate one stack row per ply)
MAX_PERFT_DEPTH = MAX_PLY


def _check_depth(depth: int, low: int, what: str) -> int:
    try:
        depth = operator.index(depth)
    except TypeError:
        raise ValueError(f"{what} depth must be an integer, not {type(depth).__name__}") from None
    if not low <= depth <= MAX_PERFT_DEPTH:
        raise ValueError(f"{what} depth must be between {low} and {MAX_PERFT_DEPTH}, not {depth}")
    return depth


def perft(b: Board, depth: int, *, bulk: bool = True) -> int:
    """Number of leaf nodes of the legal move tree of ``b`` to ``depth`` plies.

    ``bulk`` counts the last ply from the move list instead of playing each move. Raises
    :class:`~search.validate.InvalidBoardError` for an invalid board.
    """
    b = check_board(b)
    depth = _check_depth(depth, 0, "perft")
    return int(perft_kernel(b, depth, bool(bulk)))


def divide(b: Board, depth: int, *, bulk: bool = True) -> dict[str, int]:
    """Leaf count below each root move (UCI text -> count), for ``depth`` >= 1."""
    b = check_board(b)
    depth = _check_depth(depth, 1, "divide")
    moves, counts = divide_kernel(b, depth, bool(bulk))
    return {move_to_uci(int(m)): int(c) for m, c in zip(moves, counts)}
