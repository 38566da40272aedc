"""The move model's kernels: a move's feature slots, and batched features, scores and probabilities.

The features are those of :mod:`search.pls.move_catalog` (definitions: ``docs/move-model.md``). A
move's *slots* are int16[N_GROUPS]: slot ``g`` holds the index of group ``g``'s active feature
(value 1) or -1. A move's score is the sum of the float64 weights at its slots (log-odds units:
the model's probabilities are ``softmax(scores)`` over the position's legal moves). Moves are
in :func:`search.core.movegen.generate_moves` order, as in a sweep's rows.

The Python API (validation, loading, saving) is :mod:`search.pls.move_model`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from search.core.attacks import KING_ATTACKS, KNIGHT_ATTACKS, PAWN_ATTACKS, bishop_attacks, rook_attacks
from search.core.bits import ZERO, bit, lsb, pop_lsb, popcount
from search.core.board import (BISHOP, BOARD_WORDS, FLAG_CASTLE, FLAG_EP, KING, KNIGHT, NO_PIECE, PAWN, QUEEN, ROOK,
                          W_OCC, W_STM, WHITE, attackers_to, decode_move, king_square, make_move, make_null_move,
                          move_captured, move_promo, piece_at)
from search.params.catalog import PHASE_MAX
from search.evaluation.feature_kernels import evaluate_kernel, phase_of
from search.pls.move_catalog import (CAPTURE_EDGES, CHANGE_EDGES, ENDGAME_PHASE, EXCHANGE_EDGES, G_CAPTURE, G_CASTLE, G_CHECK,
                                 G_ENDGAME_TO, G_EVAL_CHANGE, G_EXCHANGE, G_EXCHANGE_GAP, G_FROM_ATTACKED,
                                 G_FROM_HANGING, G_OWN_THREAT, G_PASSED, G_PIECE_FROM, G_PIECE_TO, G_PROMOTION,
                                 G_REPLY_CAPTURE, G_SEE, G_THREATS, G_TO_ATTACKED, G_TO_DEFENDED, GAP_EDGES, N_GROUPS,
                                 OFF_CAPTURE, OFF_CASTLE, OFF_CHECK, OFF_ENDGAME_TO, OFF_EVAL_CHANGE, OFF_EXCHANGE,
                                 OFF_EXCHANGE_GAP, OFF_FROM_ATTACKED, OFF_FROM_HANGING, OFF_OWN_THREAT, OFF_PASSED,
                                 OFF_PIECE_FROM, OFF_PIECE_TO, OFF_PROMOTION, OFF_REPLY_CAPTURE, OFF_SEE, OFF_THREATS,
                                 OFF_TO_ATTACKED, OFF_TO_DEFENDED, SEE_EDGES)
from search.core.movegen import ALL_MOVES, MAX_MOVES, TACTICAL_ONLY, generate_moves
from search.tree.quiescence import SEE_VALUE, see

#: positions per parallel work item
CHUNK = 64
_SEE_EDGES = np.array(SEE_EDGES, dtype=np.int64)
_N_SEE = len(SEE_EDGES) + 1
# the bucket edges in eval units (centipawns x PHASE_MAX)
_CHANGE_UNITS = np.array(CHANGE_EDGES, dtype=np.int64) * PHASE_MAX
_CAPTURE_UNITS = np.array(CAPTURE_EDGES, dtype=np.int64) * PHASE_MAX
_EXCHANGE_UNITS = np.array(EXCHANGE_EDGES, dtype=np.int64) * PHASE_MAX
_GAP_UNITS = np.array(GAP_EDGES, dtype=np.int64) * PHASE_MAX
#: scratch of :func:`new_scratch`, by position
S_CHILD, S_NULL, S_BUF, S_GAIN, S_SCORE, S_EXCHANGE = range(6)


def _ahead_masks() -> np.ndarray:
    """``[colour, square]``: the squares on the square's file and the adjacent files strictly ahead
    of it for that colour (where an enemy pawn stops a pawn on the square from being passed)."""
    out = np.zeros((2, 64), dtype=np.uint64)
    for sq in range(64):
        r, f = divmod(sq, 8)
        for rr in range(8):
            for ff in (f - 1, f, f + 1):
                if 0 <= ff < 8 and rr != r:
                    out[0 if rr > r else 1, sq] |= np.uint64(1) << np.uint64(rr * 8 + ff)
    return out


PASSED_AHEAD = _ahead_masks()


@njit(cache=True, inline="always")
def _least_valuable(b, attackers):  # type: ignore[no-untyped-def]
    """The type (PAWN .. KING) of the least valuable piece in the non-empty set ``attackers``."""
    pt = PAWN
    while pt < KING and (attackers & b[pt]) == ZERO:
        pt += 1
    return pt


@njit(cache=True, inline="always")
def _attacks_from(pt, colour, sq, occ):  # type: ignore[no-untyped-def]
    """Squares a ``colour`` piece of type ``pt`` on ``sq`` attacks, given occupancy ``occ``."""
    if pt == PAWN:
        return PAWN_ATTACKS[colour, sq]
    if pt == KNIGHT:
        return KNIGHT_ATTACKS[sq]
    if pt == BISHOP:
        return bishop_attacks(sq, occ)
    if pt == ROOK:
        return rook_attacks(sq, occ)
    if pt == QUEEN:
        return bishop_attacks(sq, occ) | rook_attacks(sq, occ)
    return KING_ATTACKS[sq]


@njit(cache=True)
def new_scratch():  # type: ignore[no-untyped-def]
    """Scratch for :func:`position_slots` (one per thread): a child board, a null-move board,
    a move list, SEE's swap list, the evaluation's sums and the moves' exchange values."""
    return (np.zeros(BOARD_WORDS, dtype=np.uint64), np.zeros(BOARD_WORDS, dtype=np.uint64),
            np.zeros(MAX_MOVES, dtype=np.int32), np.zeros(40, dtype=np.int64), np.zeros(2, dtype=np.int64),
            np.zeros(MAX_MOVES, dtype=np.int64))


@njit(cache=True, inline="always")
def _bucket(value, edges):  # type: ignore[no-untyped-def]
    """The number of ``edges`` (ascending) below ``value``: its bucket."""
    k = 0
    while k < len(edges) and edges[k] < value:
        k += 1
    return k


@njit(cache=True)
def best_capture(b, buf, gain):  # type: ignore[no-untyped-def]
    """The side to move's best static exchange value (centipawns, at least 0) among its legal
    captures (a capturing promotion only to a queen) and queen promotions; ``buf`` int32[MAX_MOVES]
    and ``gain`` int64[>= 34] scratch."""
    n = generate_moves(b, buf, TACTICAL_ONLY)
    best = 0
    for i in range(n):
        m = buf[i]
        promo = move_promo(m)
        if promo == QUEEN or (promo == 0 and move_captured(m) != NO_PIECE):
            best = max(best, see(b, m, gain))
    return best


@njit(cache=True, inline="always")
def premove_slots(b, m, endgame, gain, out):  # type: ignore[no-untyped-def]
    """Write the slots of the groups that need no move made (:data:`search.pls.move_catalog.PREMOVE_GROUPS`:
    the moving piece, its squares, capture, promotion, static exchange, the attackers and defenders
    of both squares, castling, the end-game destination) of the legal packed move ``m`` of board
    ``b`` into ``out[:N_GROUPS]``, -1 in every other group; ``endgame``: whether ``b``'s phase is at
    most ``ENDGAME_PHASE``; ``gain`` int64[>= 34] SEE's scratch."""
    us = np.int64(b[W_STM])
    them = 1 - us
    flip = 0 if us == WHITE else 56
    frm, to, promo, flag, pt, cap = decode_move(m)
    own = b[W_OCC + us]
    opp = b[W_OCC + them]
    occ = own | opp
    for g in range(N_GROUPS):
        out[g] = -1
    out[G_PIECE_TO] = OFF_PIECE_TO + pt * 64 + (to ^ flip)
    out[G_PIECE_FROM] = OFF_PIECE_FROM + pt * 64 + (frm ^ flip)
    if cap != NO_PIECE:
        out[G_CAPTURE] = OFF_CAPTURE + pt * 5 + cap
    if promo != 0:
        out[G_PROMOTION] = OFF_PROMOTION + promo - 1
    # static exchange
    v = see(b, m, gain)
    bucket = 0
    while bucket < _N_SEE - 1 and v > _SEE_EDGES[bucket]:
        bucket += 1
    out[G_SEE] = OFF_SEE + (_N_SEE if cap != NO_PIECE else 0) + bucket
    # the destination, with the mover (and a pawn taken en passant) off the board
    occ2 = occ ^ bit(frm)
    if flag == FLAG_EP:
        occ2 ^= bit(to - 8 if us == WHITE else to + 8)
    att = attackers_to(b, to, occ2) & occ2
    if att & opp:
        out[G_TO_ATTACKED] = OFF_TO_ATTACKED + pt * 6 + _least_valuable(b, att & opp)
    defenders = popcount(att & own)
    if defenders > 0:
        out[G_TO_DEFENDED] = OFF_TO_DEFENDED + pt * 2 + min(defenders, 2) - 1
    # the origin: is the mover attacked where it stands, and hanging?
    att = attackers_to(b, frm, occ)
    if att & opp:
        least = _least_valuable(b, att & opp)
        out[G_FROM_ATTACKED] = OFF_FROM_ATTACKED + pt * 6 + least
        if (att & own) == ZERO or SEE_VALUE[least] < SEE_VALUE[pt]:
            out[G_FROM_HANGING] = OFF_FROM_HANGING + pt
    if flag == FLAG_CASTLE:
        out[G_CASTLE] = OFF_CASTLE + (0 if to > frm else 1)
    if endgame:
        out[G_ENDGAME_TO] = OFF_ENDGAME_TO + pt * 64 + (to ^ flip)


# long: numba kernel, one move's feature groups in one compiled unit (hot: every move of a full-width PLS node)
@njit(cache=True)
def move_slots(b, m, endgame, parent_eval, evw, scratch, out):  # type: ignore[no-untyped-def]
    """Write the feature slots of the legal packed move ``m`` of board ``b`` into
    ``out[:N_GROUPS]`` (feature indices of :mod:`search.pls.move_catalog`, -1 for a group that does
    not apply), all but ``exchange_gap``, and return the move's ``exchange`` value in eval units.
    ``endgame``: whether ``b``'s phase is at most ``ENDGAME_PHASE``; ``parent_eval``: ``b``'s
    static evaluation under ``evw`` (int32[N_FEATURES], the ``EVALUATION`` weights), eval units,
    side to move's view; ``scratch`` from :func:`new_scratch` (its child board is left holding
    ``b`` after ``m``)."""
    child = scratch[S_CHILD]
    gain = scratch[S_GAIN]
    premove_slots(b, m, endgame, gain, out)
    us = np.int64(b[W_STM])
    them = 1 - us
    flip = 0 if us == WHITE else 56
    _, to, promo, _, pt, _ = decode_move(m)
    # after the move
    make_move(b, child, m)
    c_own = child[W_OCC + us]
    c_opp = child[W_OCC + them]
    c_occ = c_own | c_opp
    landed = promo if promo != 0 else pt
    checkers = attackers_to(child, king_square(child, them), c_occ) & c_own  # type: ignore[arg-type]
    if checkers:
        out[G_CHECK] = OFF_CHECK + (landed if checkers & bit(to) else 6)
    targets = (_attacks_from(landed, us, to, c_occ) & c_opp
               & (child[KNIGHT] | child[BISHOP] | child[ROOK] | child[QUEEN]))
    n_threats = 0
    while targets:
        t = lsb(targets)
        targets = pop_lsb(targets)
        if SEE_VALUE[piece_at(child, t)] > SEE_VALUE[landed] or (attackers_to(child, t, c_occ) & c_opp) == ZERO:
            n_threats += 1
    if n_threats > 0:
        out[G_THREATS] = OFF_THREATS + landed * 2 + min(n_threats, 2) - 1
    if pt == PAWN and promo == 0 and (PASSED_AHEAD[us, to] & child[PAWN] & c_opp) == ZERO:
        out[G_PASSED] = OFF_PASSED + ((to ^ flip) >> 3)
    # the evaluation's change, the opponent's best reply capture and the mover's own threat
    change = -evaluate_kernel(child, evw, scratch[S_SCORE]) - parent_eval
    out[G_EVAL_CHANGE] = OFF_EVAL_CHANGE + _bucket(change, _CHANGE_UNITS)
    reply = best_capture(child, scratch[S_BUF], gain) * PHASE_MAX
    out[G_REPLY_CAPTURE] = OFF_REPLY_CAPTURE + _bucket(reply, _CAPTURE_UNITS)
    if not checkers:
        make_null_move(child, scratch[S_NULL])
        threat = best_capture(scratch[S_NULL], scratch[S_BUF], gain) * PHASE_MAX
        out[G_OWN_THREAT] = OFF_OWN_THREAT + _bucket(threat, _CAPTURE_UNITS)
    exchange = change - reply
    out[G_EXCHANGE] = OFF_EXCHANGE + _bucket(exchange, _EXCHANGE_UNITS)
    return exchange


@njit(cache=True)
def position_slots(b, moves, n, evw, scratch, slots):  # type: ignore[no-untyped-def]
    """The slots of the first ``n`` of ``moves`` (the legal moves of ``b``, or all of them for
    ``exchange_gap`` to mean what it says) into ``slots[:n]`` (int16 or int64 [>= n, N_GROUPS]);
    ``evw`` and ``scratch`` as for :func:`move_slots`."""
    endgame = phase_of(b) <= ENDGAME_PHASE
    parent_eval = evaluate_kernel(b, evw, scratch[S_SCORE])
    exchange = scratch[S_EXCHANGE]
    best = -(np.int64(1) << np.int64(62))
    for i in range(n):
        exchange[i] = move_slots(b, moves[i], endgame, parent_eval, evw, scratch, slots[i])
        best = max(best, exchange[i])
    for i in range(n):
        slots[i, G_EXCHANGE_GAP] = OFF_EXCHANGE_GAP + _bucket(best - exchange[i], _GAP_UNITS)


@njit(cache=True, inline="always")
def slots_score(slots, w):  # type: ignore[no-untyped-def]
    """The score of one move: the sum of ``w`` (float64[N_MOVE_FEATURES]) at its slots."""
    s = 0.0
    for g in range(N_GROUPS):
        k = slots[g]
        if k >= 0:
            s += w[k]
    return s


@njit(cache=True)
def score_moves(b, moves, n, w, evw, scratch, slots, out):  # type: ignore[no-untyped-def]
    """The model's scores (float64, log-odds) of the ``n`` legal moves ``moves`` of ``b`` into
    ``out[:n]``; ``w`` float64[N_MOVE_FEATURES]; ``slots`` int64[>= n, N_GROUPS] scratch; ``evw``
    and ``scratch`` as for :func:`move_slots`."""
    position_slots(b, moves, n, evw, scratch, slots)
    for i in range(n):
        out[i] = slots_score(slots[i], w)


@njit(cache=True)
def premove_scores(b, moves, n, w, gain, row, out):  # type: ignore[no-untyped-def]
    """The pre-move model's scores (float64, log-odds) of the ``n`` legal moves ``moves`` of ``b``
    into ``out[:n]``: the sum of ``w`` (float64[N_MOVE_FEATURES]) at each move's
    :func:`premove_slots` (the other groups' weights are not read); ``gain`` SEE's scratch,
    ``row`` int64[>= N_GROUPS] scratch."""
    endgame = phase_of(b) <= ENDGAME_PHASE
    for i in range(n):
        premove_slots(b, moves[i], endgame, gain, row)
        out[i] = slots_score(row, w)


@njit(cache=True, parallel=True)
def count_kernel(boards):  # type: ignore[no-untyped-def]
    """Legal moves of each board, int64[P]."""
    p_count = boards.shape[0]
    out = np.zeros(p_count, dtype=np.int64)
    for c in prange((p_count + CHUNK - 1) // CHUNK):
        buf = np.zeros(MAX_MOVES, dtype=np.int32)
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            out[p] = generate_moves(boards[p], buf, ALL_MOVES)
    return out


@njit(cache=True, parallel=True)
def features_kernel(boards, pos_ptr, evw):  # type: ignore[no-untyped-def]
    """Every legal move of every board (uint64[P, BOARD_WORDS]) and its slots: moves int32[M]
    and slots int16[M, N_GROUPS], the rows of board ``p`` at ``pos_ptr[p]:pos_ptr[p+1]``
    (int64[P+1], from :func:`count_kernel`); ``evw`` the ``EVALUATION`` weights."""
    p_count = boards.shape[0]
    m_count = pos_ptr[p_count]
    moves = np.zeros(m_count, dtype=np.int32)
    slots = np.zeros((m_count, N_GROUPS), dtype=np.int16)
    for c in prange((p_count + CHUNK - 1) // CHUNK):
        scratch = new_scratch()
        buf = np.zeros(MAX_MOVES, dtype=np.int32)
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            a = pos_ptr[p]
            n = generate_moves(boards[p], buf, ALL_MOVES)
            for i in range(n):
                moves[a + i] = buf[i]
            position_slots(boards[p], buf, n, evw, scratch, slots[a:a + n])
    return moves, slots


@njit(cache=True, parallel=True)
def probabilities_kernel(boards, pos_ptr, w, evw):  # type: ignore[no-untyped-def]
    """Every legal move of every board, its score and its probability (softmax of the scores over
    the board's moves): moves int32[M], scores float64[M], probabilities float64[M], in the rows of
    :func:`features_kernel`; ``w`` float64[N_MOVE_FEATURES], ``evw`` the ``EVALUATION`` weights."""
    p_count = boards.shape[0]
    m_count = pos_ptr[p_count]
    moves = np.zeros(m_count, dtype=np.int32)
    scores = np.zeros(m_count, dtype=np.float64)
    probs = np.zeros(m_count, dtype=np.float64)
    for c in prange((p_count + CHUNK - 1) // CHUNK):
        scratch = new_scratch()
        buf = np.zeros(MAX_MOVES, dtype=np.int32)
        slots = np.zeros((MAX_MOVES, N_GROUPS), dtype=np.int64)
        out = np.zeros(MAX_MOVES, dtype=np.float64)
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            a = pos_ptr[p]
            n = generate_moves(boards[p], buf, ALL_MOVES)
            score_moves(boards[p], buf, n, w, evw, scratch, slots, out)
            top = -math.inf
            for i in range(n):
                moves[a + i] = buf[i]
                scores[a + i] = out[i]
                top = max(top, out[i])
            total = 0.0
            for i in range(n):
                e = math.exp(out[i] - top)
                probs[a + i] = e
                total += e
            for i in range(n):
                probs[a + i] /= total
    return moves, scores, probs
