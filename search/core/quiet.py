"""Whether positions are quiet: the side to move not in check, and its move (a UCI key) neither a
capture nor a promotion. The filter of value training (Texel's method on search scores keeps
quiet positions only, as the data generators of NNUE trainers do: a static evaluation cannot
be expected to match a search score in the middle of an exchange)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from search.core.board import PAWN, W_EP, W_OCC, W_STM, in_check
from search.core.bits import ONE
from search.core.validate import check_boards_array


@njit(cache=True, parallel=True)
def _flags_kernel(boards: np.ndarray, keys: np.ndarray, check: np.ndarray, tactical: np.ndarray) -> None:
    for i in prange(boards.shape[0]):
        b = boards[i]
        check[i] = in_check(b)
        key = np.int64(keys[i])
        if key < 0:
            tactical[i] = False
            continue
        frm = key & 63
        to = (key >> 6) & 63
        promo = (key >> 12) & 7
        them = 1 - np.int64(b[W_STM])
        victim = (b[W_OCC + them] >> np.uint64(to)) & ONE
        ep = np.int64(b[W_EP]) == to and ((b[PAWN] >> np.uint64(frm)) & ONE) == ONE
        tactical[i] = victim == ONE or ep or promo != 0


def tactical_flags(boards: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each board (uint64[P, BOARD_WORDS]) and move (int32[P] UCI keys,
    :func:`search.core.convert.uci_key`; negative: no move): ``(in_check, tactical)``, bool[P] each,
    ``tactical`` true for a capture (en passant included) or a promotion, false without a move.
    The moves are not checked for legality."""
    boards = check_boards_array(boards)
    keys = np.ascontiguousarray(keys, dtype=np.int32)
    if keys.shape != (boards.shape[0],):
        raise ValueError(f"one move key per board: {keys.shape} for {boards.shape[0]} boards")
    check = np.zeros(len(keys), dtype=np.bool_)
    tactical = np.zeros(len(keys), dtype=np.bool_)
    _flags_kernel(boards, keys, check, tactical)
    return check, tactical


__all__ = ["tactical_flags"]
