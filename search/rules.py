"""Public rule functions on boards: perft and its divide (wrappers over the kernels)."""

from __future__ import annotations

import numpy as np

from search.convert import Board, move_to_uci
from search.perft import divide_kernel, perft_kernel


def _check_board(b: Board) -> None:
    if not isinstance(b, np.ndarray) or b.dtype != np.uint64 or b.shape != (16,):
        raise TypeError("a board is a uint64 array of shape (16,); build one with search.convert")


def perft(b: Board, depth: int, *, bulk: bool = True) -> int:
    """Number of leaf nodes of the legal move tree of ``b`` to ``depth`` plies.

    ``bulk`` counts the last ply from the move list instead of playing each move.
    """
    _check_board(b)
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, not {depth}")
    return int(perft_kernel(b, depth, bulk))


def divide(b: Board, depth: int, *, bulk: bool = True) -> dict[str, int]:
    """Leaf count below each root move (UCI text -> count), for ``depth`` >= 1."""
    _check_board(b)
    if depth < 1:
        raise ValueError(f"divide depth must be >= 1, not {depth}")
    moves, counts = divide_kernel(b, depth, bulk)
    return {move_to_uci(int(m)): int(c) for m, c in zip(moves, counts)}
