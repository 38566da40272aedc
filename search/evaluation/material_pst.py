"""The linear evaluator's material and piece-square sums, kept up to date move by move.

A position's material and piece-square terms (:mod:`search.params.catalog`: ``material.<piece>`` and
``pst.<piece>.<square>``) add, over its pieces, one value per (colour, piece type, square). The
batch kernels' evaluator state (:func:`search.evaluation.static_eval.new_thread_eval_state`) keeps these
sums per ply of the search: set from the whole board at the root (:func:`psq_root`), then
changed by each move's few pieces (:func:`psq_move`: the mover, what it captures, a promotion,
the rook of a castling), so that the evaluation (:func:`search.evaluation.feature_kernels.collect` with
``psq``) skips its walk over every piece for these terms.

The sums are integers (weights times counts), so they equal the walk's to the last unit,
whatever the order of the additions.

Arrays (int64, eval units: weights x counts, before the game-phase taper):

* the table of one weight vector, :func:`new_psq_table`: ``[PSQ_ROWS, 2]``, row
  ``(colour * 6 + piece type) * 64 + square``, columns (middle game, end game), White's pieces
  counted positive and Black's negative;
* the per-ply stack, :func:`new_psq_stack`: ``[STACK_PLIES, 3]``, per ply (middle game, end
  game, the side to move there).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.bits import lsb, pop_lsb
from search.core.board import FLAG_CASTLE, FLAG_EP, KING, NO_PIECE, ROOK, W_OCC, W_STM, decode_move
from search.params.catalog import F_MATERIAL, F_PST, N_BASE
from search.evaluation.network_kernels import STACK_PLIES

#: rows of a table: 2 colours x 6 piece types x 64 squares
PSQ_ROWS = 2 * 6 * 64
#: columns of the per-ply stack (a table has the first two)
PSQ_MG, PSQ_EG, PSQ_STM = 0, 1, 2


@njit(cache=True)
def new_psq_table(w):  # type: ignore[no-untyped-def]
    """The material plus piece-square value of each (colour, piece type, square) under the
    weights ``w`` (int32[N_FEATURES]): int64[PSQ_ROWS, 2] (middle game, end game), Black's
    negated; square ``sq`` of a black piece reads the table of White's square ``sq ^ 56``."""
    table = np.zeros((PSQ_ROWS, 2), dtype=np.int64)
    for c in range(2):
        s = 1 if c == 0 else -1
        flip = 0 if c == 0 else 56
        for pt in range(KING + 1):
            for sq in range(64):
                f = F_PST + 64 * pt + (sq ^ flip)
                mg = np.int64(w[f])
                eg = np.int64(w[f + N_BASE])
                if pt < KING:
                    mg += np.int64(w[F_MATERIAL + pt])
                    eg += np.int64(w[F_MATERIAL + pt + N_BASE])
                row = (c * 6 + pt) * 64 + sq
                table[row, PSQ_MG] = s * mg
                table[row, PSQ_EG] = s * eg
    return table


@njit(cache=True)
def new_psq_stack():  # type: ignore[no-untyped-def]
    """An empty per-ply stack: int64[STACK_PLIES, 3] (middle game, end game, side to move)."""
    return np.zeros((STACK_PLIES, 3), dtype=np.int64)


@njit(cache=True, inline="always")
def _row(c, pt, sq):  # type: ignore[no-untyped-def]
    return (c * 6 + pt) * 64 + sq


@njit(cache=True)
def psq_sums(table, b):  # type: ignore[no-untyped-def]
    """The (middle game, end game) material and piece-square sums of board ``b``, every piece
    read from ``table``."""
    mg = np.int64(0)
    eg = np.int64(0)
    for c in range(2):
        own = b[W_OCC + c]
        for pt in range(KING + 1):
            bb = b[pt] & own
            while bb:
                r = _row(c, pt, lsb(bb))
                bb = pop_lsb(bb)
                mg += table[r, PSQ_MG]
                eg += table[r, PSQ_EG]
    return mg, eg


@njit(cache=True)
def psq_root(table, stack, b):  # type: ignore[no-untyped-def]
    """A search starts at ``b``: set ply 0 of ``stack`` from the whole board."""
    mg, eg = psq_sums(table, b)
    stack[0, PSQ_MG] = mg
    stack[0, PSQ_EG] = eg
    stack[0, PSQ_STM] = np.int64(b[W_STM])


@njit(cache=True)
def psq_move(table, stack, ply, m):  # type: ignore[no-untyped-def]
    """Move ``m`` (packed, :mod:`search.core.board`) took the board at ``ply`` to the one at
    ``ply + 1``: set ply + 1 of ``stack`` from ply by the pieces it moved, took or promoted."""
    c = stack[ply, PSQ_STM]
    frm, to, promo, flag, pt, cap = decode_move(m)
    lands = _row(c, promo if promo != 0 else pt, to)
    leaves = _row(c, pt, frm)
    mg = stack[ply, PSQ_MG] + table[lands, PSQ_MG] - table[leaves, PSQ_MG]
    eg = stack[ply, PSQ_EG] + table[lands, PSQ_EG] - table[leaves, PSQ_EG]
    if cap != NO_PIECE:
        on = to
        if flag == FLAG_EP:
            on = to - 8 if c == 0 else to + 8
        taken = _row(1 - c, cap, on)
        mg -= table[taken, PSQ_MG]
        eg -= table[taken, PSQ_EG]
    elif flag == FLAG_CASTLE:
        if to > frm:  # king's side: the rook from h to f
            rook_from, rook_to = frm + 3, frm + 1
        else:  # queen's side: from a to d
            rook_from, rook_to = frm - 4, frm - 1
        mg += table[_row(c, ROOK, rook_to), 0] - table[_row(c, ROOK, rook_from), 0]
        eg += table[_row(c, ROOK, rook_to), 1] - table[_row(c, ROOK, rook_from), 1]
    stack[ply + 1, PSQ_MG] = mg
    stack[ply + 1, PSQ_EG] = eg
    stack[ply + 1, PSQ_STM] = 1 - c

