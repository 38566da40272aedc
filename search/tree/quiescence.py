"""Which moves quiescence search tries: the definition shared by alpha-beta and its oracle.

A side not in check tries captures (en passant included) and queen promotions, except
captures that lose material by static exchange evaluation (SEE < 0, piece values
100/300/300/500/900, pins ignored); a side in check tries every legal evasion. The filter
depends on the position only, never on the search window, so plain minimax with the same
filter gives alpha-beta's value exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.attacks import bishop_attacks, rook_attacks
from search.core.bits import ZERO, bit, lsb
from search.core.board import (BISHOP, FLAG_EP, KING, NO_PIECE, PAWN, QUEEN, ROOK, W_OCC, W_STM, attackers_to, move_captured,
                          move_flag, move_from, move_piece, move_promo, move_to)
from search.core.movegen import ALL_MOVES, TACTICAL_ONLY, generate_moves

SEE_VALUE = np.array([100, 300, 300, 500, 900, 20000, 0], dtype=np.int64)


@njit(cache=True)
def see(b: np.ndarray, m: int, gain: np.ndarray) -> int:
    """Static exchange evaluation of capture ``m`` (centipawns, mover's view): the material
    balance of the best sequence of recaptures on the target square, each side free to stop.
    ``gain`` is int64[>= 34] scratch."""
    frm = move_from(m)
    to = move_to(m)
    promo = move_promo(m)
    cap = move_captured(m)
    occ = (b[W_OCC] | b[W_OCC + 1]) ^ bit(frm)
    if move_flag(m) == FLAG_EP:
        occ ^= bit(to - 8 if b[W_STM] == ZERO else to + 8)
    gain[0] = SEE_VALUE[cap] if cap != NO_PIECE else 0
    on_square = move_piece(m)
    if promo != 0:
        gain[0] += SEE_VALUE[promo] - SEE_VALUE[PAWN]
        on_square = promo
    attackers = attackers_to(b, to, occ) & occ
    side = 1 - np.int64(b[W_STM])
    bq = b[BISHOP] | b[QUEEN]
    rq = b[ROOK] | b[QUEEN]
    d = 0
    while True:
        d += 1
        gain[d] = SEE_VALUE[on_square] - gain[d - 1]
        mine = attackers & b[W_OCC + side]
        if mine == ZERO:
            break
        # least valuable attacker
        pt = PAWN
        while pt <= KING and (mine & b[pt]) == ZERO:
            pt += 1
        sq = lsb(mine & b[pt])
        occ ^= bit(sq)
        attackers |= (rook_attacks(to, occ) & rq) | (bishop_attacks(to, occ) & bq)
        attackers &= occ
        on_square = pt
        side = 1 - side
        if d >= 32:
            break
    while d > 1:
        d -= 1
        gain[d - 1] = -max(-gain[d - 1], gain[d])
    return gain[0]  # type: ignore[no-any-return]


@njit(cache=True, inline="always")
def _wins_or_trades(m: int) -> bool:
    """Whether capture ``m`` takes a piece worth at least the capturing one (piece values of
    :data:`SEE_VALUE`): its SEE is then >= 0 without computing it, since the opponent's best
    reply to it leaves the mover at least ``victim - attacker`` (after a recapture the mover
    may stop) or ``victim`` (no recapture). A promotion is tried anyway; en passant takes a
    pawn with a pawn."""
    cap = move_captured(m)
    return cap != NO_PIECE and SEE_VALUE[cap] >= SEE_VALUE[move_piece(m)]


@njit(cache=True)
def quiescence_moves(b: np.ndarray, out: np.ndarray, in_check: bool, gain: np.ndarray) -> int:
    """Write the moves quiescence tries at ``b`` into ``out``; return their number.
    ``gain`` is int64[>= 34] scratch for :func:`see`."""
    if in_check:
        return generate_moves(b, out, ALL_MOVES)
    n = generate_moves(b, out, TACTICAL_ONLY)
    k = 0
    for i in range(n):
        m = out[i]
        if move_promo(m) != 0 or _wins_or_trades(m) or see(b, m, gain) >= 0:
            out[k] = m
            k += 1
    return k
