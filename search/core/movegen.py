"""Legal move generation for numba kernels.

Strictly legal moves are produced directly, without make-and-test: a check mask (the
checker and the squares between it and the king), pin lines for pinned pieces, king moves
tested against attacks with the king lifted off the board, castling through and into check
refused, and en passant verified by recomputing the slider attacks on the king after both
pawns have left their squares (which covers the pinned-pawn and discovered-check cases).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.attacks import (
    BETWEEN,
    KING_ATTACKS,
    KNIGHT_ATTACKS,
    LINE,
    PAWN_ATTACKS,
    bishop_attacks,
    rook_attacks,
)
from search.core.bits import ALL, RANK_1, RANK_8, ZERO, bit, lsb, pop_lsb, popcount
from search.core.board import (
    BISHOP,
    FLAG_CASTLE,
    FLAG_DOUBLE,
    FLAG_EP,
    FLAG_NORMAL,
    KING,
    KNIGHT,
    NO_PIECE,
    NO_SQUARE,
    PAWN,
    QUEEN,
    ROOK,
    W_CASTLE,
    W_EP,
    W_OCC,
    W_STM,
    WHITE,
    attackers_to,
    encode_move,
    is_attacked,
    piece_at,
)

#: upper bound on the number of legal moves in any chess position (218 is the known maximum)
MAX_MOVES = 256
#: :func:`generate_moves`'s ``tactical`` argument as typed values for the kernels to pass: a
#: literal ``False`` or ``True`` in a caller makes numba compile a separate copy of the generator
#: per literal (and a search kernel called with a literal, a copy of the whole search)
ALL_MOVES = np.bool_(False)
TACTICAL_ONLY = np.bool_(True)

#: the squares a castling king crosses, typed (see ALL_MOVES)
_C1, _D1, _F1, _G1 = np.int64(2), np.int64(3), np.int64(5), np.int64(6)
_C8, _D8, _F8, _G8 = np.int64(58), np.int64(59), np.int64(61), np.int64(62)
_F1G1 = np.uint64((1 << 5) | (1 << 6))
_B1C1D1 = np.uint64((1 << 1) | (1 << 2) | (1 << 3))
_F8G8 = _F1G1 << np.uint64(56)
_B8C8D8 = _B1C1D1 << np.uint64(56)


@njit(cache=True, inline="always")
def _emit_targets(b, out, n, frm, pt, targets, opp):  # type: ignore[no-untyped-def]
    caps = targets & opp
    while caps:
        to = lsb(caps)
        caps = pop_lsb(caps)
        out[n] = encode_move(frm, to, 0, FLAG_NORMAL, pt, piece_at(b, to))
        n += 1
    quiet = targets & ~opp
    while quiet:
        to = lsb(quiet)
        quiet = pop_lsb(quiet)
        out[n] = encode_move(frm, to, 0, FLAG_NORMAL, pt, NO_PIECE)
        n += 1
    return n


@njit(cache=True, inline="always")
def _emit_promotions(out, n, frm, to, cap, queen_only):  # type: ignore[no-untyped-def]
    out[n] = encode_move(frm, to, QUEEN, FLAG_NORMAL, PAWN, cap)
    n += 1
    if not queen_only:
        for promo in (KNIGHT, ROOK, BISHOP):
            out[n] = encode_move(frm, to, promo, FLAG_NORMAL, PAWN, cap)
            n += 1
    return n


@njit(cache=True)
def checkers_of(b: np.ndarray) -> np.uint64:
    """Bitboard of the pieces giving check to the side to move."""
    us = np.int64(b[W_STM])
    own = b[W_OCC + us]
    occ = own | b[W_OCC + 1 - us]
    ksq = lsb(b[KING] & own)
    return attackers_to(b, ksq, occ) & b[W_OCC + 1 - us]  # type: ignore[no-any-return]


# long: the hottest kernel with the evaluation (every node), one compiled unit for speed and for its move order
# (king, knights, bishops, rooks, queens, pawns, castling: the search's tie-break). Split into helpers called in that
# order (king steps, pins, pieces, pawns, castling; plain @njit), the search ran ~3 % slower in bench/ab_search.py.
@njit(cache=True)
def generate_moves(b: np.ndarray, out: np.ndarray, tactical: bool | np.bool_) -> int:
    """Write the legal moves of board ``b`` into ``out[:n]``; return their number ``n``.

    Parameters
    ----------
    b : uint64[BOARD_WORDS]
    out : int32[>= MAX_MOVES]
    tactical : when true, only captures (en passant included) and queen promotions are
        generated, except that in check every legal evasion is (quiescence search).
    """
    us = np.int64(b[W_STM])
    them = 1 - us
    own = b[W_OCC + us]
    opp = b[W_OCC + them]
    occ = own | opp
    ksq = lsb(b[KING] & own)
    checkers = attackers_to(b, ksq, occ) & opp
    nchk = popcount(checkers)
    if nchk > 0:
        tactical = False
    n = 0

    # king moves: test the destination with the king lifted off the board
    targets = KING_ATTACKS[ksq] & ~own
    if tactical:
        targets &= opp
    occ_nok = occ ^ bit(ksq)
    while targets:
        to = lsb(targets)
        targets = pop_lsb(targets)
        if not is_attacked(b, to, them, occ_nok):  # type: ignore[arg-type]
            out[n] = encode_move(ksq, to, 0, FLAG_NORMAL, KING, piece_at(b, to))
            n += 1
    if nchk > 1:
        return n

    if nchk == 1:
        mask = BETWEEN[ksq, lsb(checkers)] | checkers
    else:
        mask = ALL
    # pieces other than pawns only capture in tactical mode
    piece_mask = mask & opp if tactical else mask

    # pinned pieces: own pieces alone between the king and an enemy slider
    pinned = ZERO
    snipers = (
        (rook_attacks(ksq, ZERO) & (b[ROOK] | b[QUEEN]))
        | (bishop_attacks(ksq, ZERO) & (b[BISHOP] | b[QUEEN]))
    ) & opp
    while snipers:
        s = lsb(snipers)
        snipers = pop_lsb(snipers)
        btw = BETWEEN[ksq, s] & occ
        if btw != ZERO and pop_lsb(btw) == ZERO and (btw & own) != ZERO:
            pinned |= btw

    # knights (a pinned knight never moves)
    bb = b[KNIGHT] & own & ~pinned
    while bb:
        frm = lsb(bb)
        bb = pop_lsb(bb)
        n = _emit_targets(b, out, n, frm, KNIGHT, KNIGHT_ATTACKS[frm] & ~own & piece_mask, opp)

    # sliders
    for pt in (BISHOP, ROOK, QUEEN):
        bb = b[pt] & own
        while bb:
            frm = lsb(bb)
            bb = pop_lsb(bb)
            if pt == BISHOP:
                att = bishop_attacks(frm, occ)
            elif pt == ROOK:
                att = rook_attacks(frm, occ)
            else:
                att = bishop_attacks(frm, occ) | rook_attacks(frm, occ)
            t = att & ~own & piece_mask
            if pinned & bit(frm):
                t &= LINE[ksq, frm]
            n = _emit_targets(b, out, n, frm, pt, t, opp)

    # pawns
    up = 8 if us == WHITE else -8
    promo_rank = RANK_8 if us == WHITE else RANK_1
    ep = np.int64(b[W_EP])
    bb = b[PAWN] & own
    while bb:
        frm = lsb(bb)
        bb = pop_lsb(bb)
        allowed = mask
        if pinned & bit(frm):
            allowed &= LINE[ksq, frm]
        to = frm + up
        bto = bit(to)
        if not (occ & bto):
            if bto & promo_rank:
                if bto & allowed:
                    n = _emit_promotions(out, n, frm, to, NO_PIECE, tactical)
            elif not tactical:
                if bto & allowed:
                    out[n] = encode_move(frm, to, 0, FLAG_NORMAL, PAWN, NO_PIECE)
                    n += 1
                rank = frm >> 3
                if (us == WHITE and rank == 1) or (us != WHITE and rank == 6):
                    to2 = to + up
                    if not (occ & bit(to2)) and (bit(to2) & allowed):
                        out[n] = encode_move(frm, to2, 0, FLAG_DOUBLE, PAWN, NO_PIECE)
                        n += 1
        caps = PAWN_ATTACKS[us, frm] & opp & allowed
        while caps:
            to = lsb(caps)
            caps = pop_lsb(caps)
            cap = piece_at(b, to)
            if bit(to) & promo_rank:
                n = _emit_promotions(out, n, frm, to, cap, tactical)
            else:
                out[n] = encode_move(frm, to, 0, FLAG_NORMAL, PAWN, cap)
                n += 1
        if ep != NO_SQUARE and (PAWN_ATTACKS[us, frm] & bit(ep)):  # type: ignore[arg-type]
            capsq = ep - up
            occ2 = occ ^ bit(frm) ^ bit(ep) ^ bit(capsq)  # type: ignore[arg-type]
            opp2 = opp ^ bit(capsq)  # type: ignore[arg-type]
            exposed = (
                (rook_attacks(ksq, occ2) & (b[ROOK] | b[QUEEN]) & opp2)
                | (bishop_attacks(ksq, occ2) & (b[BISHOP] | b[QUEEN]) & opp2)
                | (KNIGHT_ATTACKS[ksq] & b[KNIGHT] & opp2)
                | (PAWN_ATTACKS[us, ksq] & b[PAWN] & opp2)
            )
            if exposed == ZERO:
                out[n] = encode_move(frm, ep, 0, FLAG_EP, PAWN, PAWN)  # type: ignore[arg-type]
                n += 1

    # castling (never out of check, through or into an attacked square)
    if not tactical and nchk == 0:
        rights = np.int64(b[W_CASTLE])
        if us == WHITE:
            if rights & 1 and not (occ & _F1G1):
                if not is_attacked(b, _F1, them, occ) and not is_attacked(b, _G1, them, occ):  # type: ignore[arg-type]
                    out[n] = encode_move(4, 6, 0, FLAG_CASTLE, KING, NO_PIECE)
                    n += 1
            if rights & 2 and not (occ & _B1C1D1):
                if not is_attacked(b, _D1, them, occ) and not is_attacked(b, _C1, them, occ):  # type: ignore[arg-type]
                    out[n] = encode_move(4, 2, 0, FLAG_CASTLE, KING, NO_PIECE)
                    n += 1
        else:
            if rights & 4 and not (occ & _F8G8):
                if not is_attacked(b, _F8, them, occ) and not is_attacked(b, _G8, them, occ):  # type: ignore[arg-type]
                    out[n] = encode_move(60, 62, 0, FLAG_CASTLE, KING, NO_PIECE)
                    n += 1
            if rights & 8 and not (occ & _B8C8D8):
                if not is_attacked(b, _D8, them, occ) and not is_attacked(b, _C8, them, occ):  # type: ignore[arg-type]
                    out[n] = encode_move(60, 58, 0, FLAG_CASTLE, KING, NO_PIECE)
                    n += 1
    return n
