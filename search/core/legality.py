"""Whether one packed move is legal on a board, without generating the others.

The playing search tries the transposition table's move before it generates a node's moves
(:mod:`search.play.kernel`); the table's move was stored under the same 64-bit key, so it is
almost always legal, but a key collision (or a slot written by another thread that still reads
as this key) could hand it a move of another position, and playing an illegal move corrupts the
board. :func:`is_legal` answers exactly what membership in :func:`search.core.movegen.generate_moves`'s
list would (``tests/search/core/test_legality.py`` checks the two agree), at the cost of a few
attack lookups instead of a whole generation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.attacks import KING_ATTACKS, KNIGHT_ATTACKS, PAWN_ATTACKS, bishop_attacks, rook_attacks
from search.core.bits import ZERO, bit, lsb
from search.core.board import (BISHOP, FLAG_CASTLE, FLAG_DOUBLE, FLAG_EP, KING, KNIGHT, NO_PIECE, NO_SQUARE, PAWN,
                               QUEEN, ROOK, W_CASTLE, W_EP, W_OCC, W_STM, WHITE, decode_move, is_attacked, piece_at)
from search.core.types import Move

#: the squares that must be empty for each castling (king side, queen side) by colour
_CASTLE_EMPTY = np.array([[(1 << 5) | (1 << 6), (1 << 1) | (1 << 2) | (1 << 3)],
                          [(1 << 61) | (1 << 62), (1 << 57) | (1 << 58) | (1 << 59)]], dtype=np.uint64)


@njit(cache=True, inline="always")
def _attacked_after(b, sq, opp, occ):  # type: ignore[no-untyped-def]
    """Whether pieces of ``opp`` (a bitboard of the opponent's pieces still on the board) attack
    ``sq`` with occupancy ``occ``; the side to move is the attacked side."""
    us = np.int64(b[W_STM])
    return ((PAWN_ATTACKS[us, sq] & b[PAWN] & opp) | (KNIGHT_ATTACKS[sq] & b[KNIGHT] & opp)
            | (KING_ATTACKS[sq] & b[KING] & opp)
            | (rook_attacks(sq, occ) & (b[ROOK] | b[QUEEN]) & opp)
            | (bishop_attacks(sq, occ) & (b[BISHOP] | b[QUEEN]) & opp)) != ZERO


@njit(cache=True)
def is_legal(b: np.ndarray, m: Move) -> bool:
    """Whether the packed move ``m`` (``search.core.board``'s encoding, its every field as
    :func:`search.core.movegen.generate_moves` writes it) is a legal move of board ``b``
    (uint64[BOARD_WORDS]). ``m == 0`` is not."""
    if m <= 0 or (m >> 23) != 0:
        return False
    us = np.int64(b[W_STM])
    them = 1 - us
    frm, to, promo, flag, pt, cap = decode_move(m)
    if frm == to or pt > KING:
        return False
    own = b[W_OCC + us]
    opp = b[W_OCC + them]
    occ = own | opp
    bfrom = bit(frm)
    bto = bit(to)
    if (b[pt] & own & bfrom) == ZERO:
        return False
    if flag == FLAG_CASTLE:
        if pt != KING or promo != 0 or cap != NO_PIECE:
            return False
        home = 4 if us == WHITE else 60
        if frm != home or (to != home + 2 and to != home - 2):
            return False
        side = 0 if to == home + 2 else 1
        if (np.int64(b[W_CASTLE]) & (1 << (2 * us + side))) == 0:
            return False
        if (occ & _CASTLE_EMPTY[us, side]) != ZERO:
            return False
        # never out of check, through or into an attacked square (the rook's squares are the
        # generator's: its rights imply the rook stands there)
        step = 1 if side == 0 else -1
        for sq in (frm, frm + step, frm + 2 * step):
            if is_attacked(b, sq, them, occ):  # type: ignore[arg-type]
                return False
        return True
    if flag == FLAG_EP:
        ep = np.int64(b[W_EP])
        if pt != PAWN or cap != PAWN or promo != 0 or ep == NO_SQUARE or to != ep:
            return False
        if (PAWN_ATTACKS[us, frm] & bto) == ZERO:
            return False
        capsq = to - 8 if us == WHITE else to + 8
        if (b[PAWN] & opp & bit(capsq)) == ZERO or (occ & bto) != ZERO:
            return False
        ksq = lsb(b[KING] & own)
        return not _attacked_after(b, ksq, opp ^ bit(capsq), occ ^ bfrom ^ bto ^ bit(capsq))
    # a normal move or a double push: the target and its captured piece as encoded
    if (own & bto) != ZERO or piece_at(b, to) != cap or cap == KING:
        return False
    if pt == PAWN:
        up = 8 if us == WHITE else -8
        last = (to >> 3) == (7 if us == WHITE else 0)
        if last != (promo != 0) or (promo != 0 and (promo < KNIGHT or promo > QUEEN)):
            return False
        if flag == FLAG_DOUBLE:
            start = (frm >> 3) == (1 if us == WHITE else 6)
            if not start or to != frm + 2 * up or cap != NO_PIECE or (occ & bit(frm + up)) != ZERO:
                return False
        elif cap == NO_PIECE:
            if to != frm + up:
                return False
        elif (PAWN_ATTACKS[us, frm] & bto) == ZERO:
            return False
    else:
        if promo != 0 or flag == FLAG_DOUBLE:
            return False
        if pt == KNIGHT:
            reach = KNIGHT_ATTACKS[frm]
        elif pt == BISHOP:
            reach = bishop_attacks(frm, occ)
        elif pt == ROOK:
            reach = rook_attacks(frm, occ)
        elif pt == QUEEN:
            reach = bishop_attacks(frm, occ) | rook_attacks(frm, occ)
        else:
            reach = KING_ATTACKS[frm]
        if (reach & bto) == ZERO:
            return False
    # the own king not attacked after the move (a captured piece no longer attacks)
    after_occ = (occ ^ bfrom) | bto
    ksq = to if pt == KING else lsb(b[KING] & own)
    return not _attacked_after(b, ksq, opp & ~bto, after_occ)


__all__ = ["is_legal"]
