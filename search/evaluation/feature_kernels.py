"""The static evaluation's kernels (call them through :mod:`search.evaluation.evaluation_api`): one code path
yields the features and the score.

Definitions of every term: ``docs/features.md``; names and indices: :mod:`search.params.catalog`.

:func:`collect` adds each colour's term counts into a dense scratch vector (White's
counts positive, Black's negative) and records which base terms it touched; the two public
kernels read that vector:

* :func:`features_kernel` writes the sorted (index, value) pairs of the side to move's
  tapered feature vector;
* :func:`evaluate_kernel` returns the score ``w . phi`` in *eval units* (centipawns times
  ``PHASE_MAX``), from the side to move's view.

:func:`features_kernel` leaves its scratch arrays as it found them (all zero), so a caller
allocates one :func:`new_scratch` per thread and reuses it. Scoring passes the weights into
the same walk, which then sums weighted terms directly (no scratch vector); a batch search
may hand it the material and piece-square sums it keeps move by move
(:func:`evaluate_psq_kernel`, :mod:`search.evaluation.material_pst`), which the walk then skips.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np
from numba import njit, types
from numba.extending import overload

from search.core.attacks import KING_ATTACKS, KNIGHT_ATTACKS, PAWN_ATTACKS, bishop_attacks, rook_attacks
from search.core.bits import FILE_A, FILE_H, ZERO, bit, lsb, pop_lsb, popcount
from search.core.board import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, W_OCC, W_STM
from search.core.types import BitboardArray
from search.params.catalog import (
    F_ATTACKS,
    F_BACKWARD,
    F_BISHOP_PAIR,
    F_DEFENDS,
    F_DOUBLED,
    F_ISOLATED,
    F_KING_OPEN,
    F_KING_SEMIOPEN,
    F_KNIGHT_OUTPOST,
    F_MATERIAL,
    F_MOB_BISHOP,
    F_MOB_KNIGHT,
    F_MOB_QUEEN,
    F_MOB_ROOK,
    F_PASSED,
    F_PASSED_FREE,
    F_PHALANX,
    F_PST,
    F_ROOK_OPEN,
    F_ROOK_SEMIOPEN,
    F_ROOK_SEVENTH,
    F_SHIELD1,
    F_SHIELD2,
    F_SUPPORTED,
    F_TEMPO,
    F_THREAT_MINOR,
    F_THREAT_PAWN,
    F_THREAT_ROOK,
    F_ZONE_ATTACKERS,
    F_ZONE_COUNT,
    N_BASE,
    PHASE_MAX,
    PHASE_WEIGHTS,
)

#: more entries than any position can have (every base term in both copies)
MAX_FEATURES = 2 * N_BASE


def _masks() -> tuple[BitboardArray, BitboardArray, BitboardArray, BitboardArray, BitboardArray]:
    """Per file: its squares, its neighbour files; per rank: its squares; per colour and square:
    the squares ahead, and those behind or on the same rank."""
    file_mask = np.zeros(8, dtype=np.uint64)
    for sq in range(64):
        file_mask[sq % 8] |= np.uint64(1) << np.uint64(sq)
    adjacent = np.zeros(8, dtype=np.uint64)
    for f in range(8):
        if f > 0:
            adjacent[f] |= file_mask[f - 1]
        if f < 7:
            adjacent[f] |= file_mask[f + 1]
    rank_mask = np.zeros(8, dtype=np.uint64)
    for sq in range(64):
        rank_mask[sq // 8] |= np.uint64(1) << np.uint64(sq)
    # [colour, square]: squares on a strictly higher / same-or-lower relative rank
    ahead = np.zeros((2, 64), dtype=np.uint64)
    behind_or_same = np.zeros((2, 64), dtype=np.uint64)
    for sq in range(64):
        r = sq // 8
        for r2 in range(8):
            if r2 > r:
                ahead[0, sq] |= rank_mask[r2]
            else:
                behind_or_same[0, sq] |= rank_mask[r2]
            if r2 < r:
                ahead[1, sq] |= rank_mask[r2]
            else:
                behind_or_same[1, sq] |= rank_mask[r2]
    return file_mask, adjacent, rank_mask, ahead, behind_or_same


FILE_MASK, ADJACENT_FILES, RANK_MASK, AHEAD, BEHIND_OR_SAME = _masks()
#: by king file: the king's file and its neighbours on the board
KING_FILES = np.array([FILE_MASK[f] | ADJACENT_FILES[f] for f in range(8)], dtype=np.uint64)


@njit(cache=True, inline="always")
def _file_fill(bb: np.uint64) -> np.uint64:
    """Every square of every file that holds a square of ``bb``."""
    bb |= bb << np.uint64(8)
    bb |= bb << np.uint64(16)
    bb |= bb << np.uint64(32)
    bb |= bb >> np.uint64(8)
    bb |= bb >> np.uint64(16)
    bb |= bb >> np.uint64(32)
    return bb


@njit(cache=True, inline="always")
def _files_of(filled: np.uint64) -> np.uint64:
    """The files of a file-filled bitboard as an 8-bit mask (bit f = file f)."""
    return filled & np.uint64(0xFF)


#: length of the scratch vector of :func:`features_kernel`
SCRATCH_SIZE = 3 * N_BASE


@njit(cache=True)
def new_scratch() -> np.ndarray:
    """Per-thread scratch int64[SCRATCH_SIZE]: ``[0, N_BASE)`` term counts, ``[N_BASE,
    2 N_BASE)`` touched marks, ``[2 N_BASE, 3 N_BASE)`` the list of touched terms."""
    return np.zeros(SCRATCH_SIZE, dtype=np.int64)


@njit(cache=True)
def new_feature_buffers():  # type: ignore[no-untyped-def]
    """Per-thread arrays for :func:`features_kernel`: ``(scratch, indices, values)``, the
    :func:`new_scratch` vector and two int32[MAX_FEATURES] outputs."""
    return new_scratch(), np.zeros(MAX_FEATURES, dtype=np.int32), np.zeros(MAX_FEATURES, dtype=np.int32)


@njit(cache=True)
def _count(st, nt, f, x):  # type: ignore[no-untyped-def]
    """:func:`_add` without weights: count ``x`` into the scratch vector ``st``."""
    if x != 0:
        if st[N_BASE + f] == 0:
            st[N_BASE + f] = 1
            st[2 * N_BASE + nt] = f
            nt += 1
        st[f] += x
    return nt


@njit(cache=True)
def _weigh(w, sums, f, x):  # type: ignore[no-untyped-def]
    """:func:`_add` with weights: ``sums`` (middle game, end game) plus ``x`` times term
    ``f``'s two weights; no branch (a zero ``x`` adds zero)."""
    return (sums[0] + np.int64(w[f]) * x, sums[1] + np.int64(w[f + N_BASE]) * x)


#: the walk's state: the number of distinct terms touched (counting), or the weighted sums
#: (middle game, end game), int64 each
WalkState = Union[int, tuple[int, int]]


def _start(w: np.ndarray | None) -> WalkState:
    """The walk's state before any term (:func:`_add`): 0 terms touched, or sums (0, 0)."""
    return 0 if w is None else (0, 0)


@overload(_start)
def _start_overload(w):  # type: ignore[no-untyped-def]
    if isinstance(w, (types.NoneType, types.Omitted)):
        return lambda w: 0
    return lambda w: (np.int64(0), np.int64(0))


def _add(w: np.ndarray | None, st: np.ndarray, nt: Any, f: int, x: int) -> Any:
    """Add ``x`` to base term ``f``. Without weights (``w`` None) count it into the scratch
    vector ``st`` (layout in :func:`new_scratch`), ``nt`` being the number of distinct terms
    touched; with weights, ``nt`` is the pair of weighted sums (middle game, end game) and
    ``st`` is unused. Returns the new ``nt``.

    The weighted sums travel as values, not in an array: a sum kept in ``st[0]`` was loaded
    and stored again at each of the walk's ~70 terms, a chain of dependent memory operations
    (the weights' loads may alias it, so the compiler cannot keep it in a register).

    This Python body runs with ``NUMBA_DISABLE_JIT=1``; compiled kernels get the version
    :func:`_add_overload` picks by the type of ``w``."""
    return int(_count(st, nt, f, x)) if w is None else _weigh(w, nt, f, x)


@overload(_add)
def _add_overload(w, st, nt, f, x):  # type: ignore[no-untyped-def]
    """:func:`_add` for one use, chosen when the calling kernel is typed: :func:`_count` for
    ``w=None``, else :func:`_weigh`; no test of ``w`` at run time. Neither is inlined by numba
    (LLVM inlines them): numba reference-counts an array argument of a numba-inlined function
    at every call site (an atomic operation), which the term walk did about 20 times per
    evaluation; now twice."""
    if isinstance(w, (types.NoneType, types.Omitted)):
        return lambda w, st, nt, f, x: _count(st, nt, f, x)
    return lambda w, st, nt, f, x: _weigh(w, nt, f, x)


@njit(cache=True, inline="always")
def _pawn_attack_set(pawns: np.uint64, colour: int) -> np.uint64:
    if colour == 0:
        return ((pawns & ~FILE_A) << np.uint64(7)) | ((pawns & ~FILE_H) << np.uint64(9))
    return ((pawns & ~FILE_A) >> np.uint64(9)) | ((pawns & ~FILE_H) >> np.uint64(7))


#: bits per target type in a packed pair count (:func:`_pairs`). A colour's count for one
#: (attacker type, target type) never exceeds 128 (16 pieces x 8 attacked squares), so a
#: field biased by PAIR_ZERO holds White's count minus Black's without borrowing from the next.
PAIR_BITS = 12
PAIR_MASK = (1 << PAIR_BITS) - 1
PAIR_ZERO = 1 << (PAIR_BITS - 1)
#: a packed net count of 0 for every target type
PAIR_BIAS = sum(PAIR_ZERO << (PAIR_BITS * k) for k in range(5))


@njit(cache=True, inline="always")
def _pairs(x: np.uint64, p: np.uint64, n: np.uint64, bi: np.uint64, r: np.uint64, q: np.uint64) -> int:
    """The pieces of ``x`` (an attack set restricted to the targets' colour) on the pawn,
    knight, bishop, rook and queen bitboards ``p .. q``, packed: field ``k`` (bits
    ``PAIR_BITS * k`` up) counts target type ``k``. A king in ``x`` is no target. Packed counts
    add field by field, so a sum over pieces needs no array (see :func:`_add`)."""
    if not x:
        return 0
    return (popcount(x & p) | (popcount(x & n) << PAIR_BITS) | (popcount(x & bi) << (2 * PAIR_BITS))
            | (popcount(x & r) << (3 * PAIR_BITS)) | (popcount(x & q) << (4 * PAIR_BITS)))


@njit(cache=True)
def _add_pairs(w, st, nt, f, net):  # type: ignore[no-untyped-def]
    """Add the net pair counts ``net`` (packed, each field biased by PAIR_ZERO; see
    :data:`PAIR_BIAS`) to the five base terms from ``f`` (target pawn .. queen).

    Both colours' counts are summed before this one call. No branch on the counts: a zero
    adds zero to the weighted sums, and counting (:func:`_count`) skips it; branches on these
    hard-to-predict counts cost more than the five multiply-adds (``docs/scaling.md``)."""
    for k in range(5):
        x = ((net >> (PAIR_BITS * k)) & PAIR_MASK) - PAIR_ZERO
        nt = _add(w, st, nt, f + k, x)
    return nt


@njit(cache=True)
def phase_of(b: np.ndarray) -> int:
    """Game phase 0..PHASE_MAX: the catalogue's phase weight of each piece left (both colours)."""
    ph = 0
    for piece in range(PAWN, KING + 1):
        ph += PHASE_WEIGHTS[piece] * popcount(b[piece])
    return min(ph, PHASE_MAX)


@njit(cache=True)
def _side(b, c):  # type: ignore[no-untyped-def]
    """Colour ``c``'s view of ``b``: ``(sign, own, opp, own pawns, opponent's pawns, own pawn
    attacks, opponent's pawn attacks, enemy king zone)`` (the zone: the enemy king's square and
    the squares it attacks; empty without an enemy king)."""
    own = b[W_OCC + c]
    opp = b[W_OCC + 1 - c]
    own_p = b[PAWN] & own
    opp_p = b[PAWN] & opp
    ezone = ZERO
    ek = b[KING] & opp
    if ek:
        eksq = lsb(ek)
        ezone = KING_ATTACKS[eksq] | bit(eksq)
    return (1 if c == 0 else -1, own, opp, own_p, opp_p, _pawn_attack_set(own_p, c),
            _pawn_attack_set(opp_p, 1 - c), ezone)


@njit(cache=True)
def _pawn_king(b, w, st, nt):  # type: ignore[no-untyped-def]
    """The terms of ``b`` that depend on the pawns and the kings only (:func:`_add` into ``st``
    with weights ``w`` or None): doubled, isolated, backward, passed (by rank), phalanx and
    supported pawns, pawns attacking the enemy king zone, the king's pawn shield and its open
    and half-open files.

    ``nt``: the walk's state (:func:`_add`). Returns ``(nt, passed_w, passed_b, zone_w,
    zone_b)``: each colour's passed pawns (bitboards, for the free-passer term, which depends
    on every piece) and its number of pawns attacking the enemy king zone (part of the zone
    count)."""
    passed_w = ZERO
    passed_b = ZERO
    zone_w = 0
    zone_b = 0
    for c in range(2):
        s, own, opp, own_p, opp_p, own_pa, opp_pa, ezone = _side(b, c)
        passed = ZERO
        zone_n = 0
        bb = own_p
        while bb:
            sq = lsb(bb)
            bb = pop_lsb(bb)
            f = sq & 7
            rr = (sq >> 3) if c == 0 else 7 - (sq >> 3)
            stop = sq + 8 if c == 0 else sq - 8
            if FILE_MASK[f] & AHEAD[c, sq] & own_p:
                nt = _add(w, st, nt, F_DOUBLED, s)
            adj_own = ADJACENT_FILES[f] & own_p
            if adj_own == ZERO:
                nt = _add(w, st, nt, F_ISOLATED, s)
            elif (adj_own & BEHIND_OR_SAME[c, sq]) == ZERO and (bit(stop) & opp_pa):
                nt = _add(w, st, nt, F_BACKWARD, s)
            if ((FILE_MASK[f] | ADJACENT_FILES[f]) & AHEAD[c, sq] & opp_p) == ZERO:
                nt = _add(w, st, nt, F_PASSED + rr - 1, s)
                passed |= bit(sq)
            if adj_own & RANK_MASK[sq >> 3]:
                nt = _add(w, st, nt, F_PHALANX, s)
            if bit(sq) & own_pa:
                nt = _add(w, st, nt, F_SUPPORTED, s)
            if PAWN_ATTACKS[c, sq] & ezone:
                zone_n += 1
        if zone_n:
            nt = _add(w, st, nt, F_ZONE_ATTACKERS + PAWN, s * zone_n)

        # king: pawn shield and files next to the king (files as 8-bit masks)
        kb = b[KING] & own
        if kb:
            ksq = lsb(kb)
            kfiles = KING_FILES[ksq & 7]
            kr = (ksq >> 3) if c == 0 else 7 - (ksq >> 3)
            shield1 = 0
            shield2 = 0
            if kr <= 6:
                row1 = own_p & RANK_MASK[kr + 1 if c == 0 else 6 - kr] & kfiles
                shield1 = popcount(row1)
                if kr <= 5:
                    row2 = own_p & RANK_MASK[kr + 2 if c == 0 else 5 - kr] & kfiles & ~_file_fill(row1)
                    shield2 = popcount(row2)
            kf8 = _files_of(kfiles)
            own_f8 = _files_of(_file_fill(own_p))
            opp_f8 = _files_of(_file_fill(opp_p))
            nt = _add(w, st, nt, F_SHIELD1, s * shield1)
            nt = _add(w, st, nt, F_SHIELD2, s * shield2)
            nt = _add(w, st, nt, F_KING_OPEN, s * popcount(kf8 & ~own_f8 & ~opp_f8))
            nt = _add(w, st, nt, F_KING_SEMIOPEN, s * popcount(kf8 & ~own_f8 & opp_f8))
        if c == 0:
            passed_w = passed
            zone_w = zone_n
        else:
            passed_b = passed
            zone_b = zone_n
    return nt, passed_w, passed_b, zone_w, zone_b


#: rows of a pawn-king table (:func:`new_pawn_king_table`), a power of two
PK_ROWS = 2048
#: a pawn-king table row: the entry's white pawns, black pawns and kings (its identity), its
#: passed pawns by colour, its middle-game and end-game sums (two's complement) and its pawns
#: attacking the enemy king zone by colour
PK_WP, PK_BP, PK_KINGS, PK_PASSED_W, PK_PASSED_B, PK_MG, PK_EG, PK_ZONE_W, PK_ZONE_B = range(9)
PK_WIDTH = 9


@njit(cache=True)
def new_pawn_king_table():  # type: ignore[no-untyped-def]
    """An empty pawn-king table, uint64[PK_ROWS, PK_WIDTH] (all zero: a row of no pawns and no
    kings, whose terms are indeed all zero): one per thread and weight vector."""
    return np.zeros((PK_ROWS, PK_WIDTH), dtype=np.uint64)


@njit(cache=True, inline="always")
def _pk_slot(wp: np.uint64, bpawns: np.uint64, kings: np.uint64, rows: int) -> int:
    """The row of a pawn-king structure in a table of ``rows`` rows, a power of two
    (multiplicative hashing; the row's identity words decide whether it holds this structure)."""
    h = (wp * np.uint64(0x9E3779B97F4A7C15)) ^ (bpawns * np.uint64(0xC2B2AE3D27D4EB4F)) ^ (
        kings * np.uint64(0x165667B19E3779F9))
    h ^= h >> np.uint64(31)
    return int(h & np.uint64(rows - 1))


@njit(cache=True)
def _pawn_king_cached(b, w, sums, pk):  # type: ignore[no-untyped-def]
    """:func:`_pawn_king` with weights ``w``, its sums (middle game, end game) added to the
    pair ``sums``, read from the pawn-king table ``pk`` (uint64[2**k, PK_WIDTH]) when it holds
    this structure (else computed and stored). Pawns move rarely in a search tree, so most
    nodes find their structure there. Integer sums: the score is exactly the uncached one's.
    Returns ``(sums, passed_w, passed_b, zone_w, zone_b)``."""
    own_w = b[W_OCC]
    wp = b[PAWN] & own_w
    bpawns = b[PAWN] & b[W_OCC + 1]
    kings = b[KING]
    r = _pk_slot(wp, bpawns, kings, pk.shape[0])
    if pk[r, PK_WP] != wp or pk[r, PK_BP] != bpawns or pk[r, PK_KINGS] != kings:
        own, passed_w, passed_b, zone_w, zone_b = _pawn_king(b, w, None, _start(w))
        pk[r, PK_WP] = wp
        pk[r, PK_BP] = bpawns
        pk[r, PK_KINGS] = kings
        pk[r, PK_PASSED_W] = passed_w
        pk[r, PK_PASSED_B] = passed_b
        pk[r, PK_MG] = np.uint64(own[0])
        pk[r, PK_EG] = np.uint64(own[1])
        pk[r, PK_ZONE_W] = np.uint64(zone_w)
        pk[r, PK_ZONE_B] = np.uint64(zone_b)
    sums = (sums[0] + np.int64(pk[r, PK_MG]), sums[1] + np.int64(pk[r, PK_EG]))
    return sums, pk[r, PK_PASSED_W], pk[r, PK_PASSED_B], np.int64(pk[r, PK_ZONE_W]), np.int64(pk[r, PK_ZONE_B])


# long: the hottest kernel (every static evaluation), one compiled unit for speed. Split into per-colour and
# per-piece-type helpers (issue 44 item 2), the same walk was slower: with plain @njit helpers the searches of
# bench/ab_search.py took 23-32 % longer (~3 % of it the split movegen's), with inline="always" helpers a depth-2
# search ~15 % and the feature walk ~14 % longer (an alternated in-process A/B).
@njit(cache=True)
def collect(b, w, st, pk, psq):  # type: ignore[no-untyped-def]
    """Walk every term of ``b`` once, White's counts positive and Black's negative.

    With ``w=None``: add the counts into the scratch vector ``st`` (see :func:`new_scratch`)
    and return how many distinct base terms were touched.
    With a weight vector ``w``: return the sums of ``w[f] * x`` and of ``w[f + N_BASE] * x``
    (middle game, end game; int64) instead, ``st`` unused (numba compiles the two uses
    separately); then ``pk`` may be a pawn-king table (:func:`new_pawn_king_table`, made for
    these weights) whose cached sums stand for the pawn-king terms (``pk`` None: no table),
    and ``psq`` the (middle game, end game) sums of the material and piece-square terms,
    kept by the search (:mod:`search.evaluation.material_pst`), which the walk then skips (``psq`` None:
    walked). Numba compiles each combination apart: the tests of ``pk`` and ``psq`` against
    None are settled at compile time.
    """
    if pk is None:
        nt, passed_w, passed_b, zone_w, zone_b = _pawn_king(b, w, st, _start(w))
    else:
        nt, passed_w, passed_b, zone_w, zone_b = _pawn_king_cached(b, w, _start(w), pk)
    if psq is not None:
        nt = (nt[0] + psq[0], nt[1] + psq[1])
    passed = (passed_w, passed_b)
    zone_pawns = (zone_w, zone_b)
    occ = b[W_OCC] | b[W_OCC + 1]
    stm = np.int64(b[W_STM])
    bp = b[PAWN]
    bn = b[KNIGHT]
    bbi = b[BISHOP]
    br = b[ROOK]
    bq = b[QUEEN]
    # attack and defence pairs by attacker type, packed (_pairs), net White minus Black
    ap = an = ab = ar = aq = ak = PAIR_BIAS
    dp = dn = db = dr = dq = dk = PAIR_BIAS
    for c in range(2):
        s, own, opp, own_p, opp_p, own_pa, opp_pa, ezone = _side(b, c)
        flip = 0 if c == 0 else 56

        # material and piece-square tables (unless given)
        if psq is None:
            for pt in range(6):
                bb = b[pt] & own
                if pt < 5:
                    nt = _add(w, st, nt, F_MATERIAL + pt, s * popcount(bb))
                while bb:
                    sq = lsb(bb)
                    bb = pop_lsb(bb)
                    nt = _add(w, st, nt, F_PST + 64 * pt + (sq ^ flip), s)

        # pawn structure, pawns attacking the enemy king zone, the king's pawn shield and files
        # (pawns and kings only: cached by :func:`_pawn_king_cached`); free passed pawns
        zone_n = zone_pawns[c]
        zone_total = zone_n
        bb = passed[c]
        while bb:
            sq = lsb(bb)
            bb = pop_lsb(bb)
            stop = sq + 8 if c == 0 else sq - 8
            if not (occ & bit(stop)):
                rr = (sq >> 3) if c == 0 else 7 - (sq >> 3)
                nt = _add(w, st, nt, F_PASSED_FREE + rr - 1, s)

        # attacks / defends by pawns: each capture direction maps pawns one-to-one onto
        # squares; squares in one direction's set only are attacked by one pawn, in both by two
        if c == 0:
            west = (own_p & ~FILE_A) << np.uint64(7)
            east = (own_p & ~FILE_H) << np.uint64(9)
        else:
            west = (own_p & ~FILE_A) >> np.uint64(9)
            east = (own_p & ~FILE_H) >> np.uint64(7)
        m1 = (west ^ east) & occ
        m2 = west & east & occ
        ap += s * (_pairs(m1 & opp, bp, bn, bbi, br, bq) + 2 * _pairs(m2 & opp, bp, bn, bbi, br, bq))
        dp += s * (_pairs(m1 & own, bp, bn, bbi, br, bq) + 2 * _pairs(m2 & own, bp, bn, bbi, br, bq))

        # pieces: mobility, king-zone attackers, attacks / defends, threats, rook files, outposts
        minor_att = ZERO
        rook_att = ZERO
        safe = ~own & ~opp_pa
        for pt in (KNIGHT, BISHOP, ROOK, QUEEN):
            bb = b[pt] & own
            zone_n = 0
            # how many pieces of this type attack each square, in binary (bit-sliced counters:
            # a square is in m1 if the count's bit 0 is set, ...; at most 10 pieces of a type)
            m1 = ZERO
            m2 = ZERO
            m4 = ZERO
            m8 = ZERO
            while bb:
                sq = lsb(bb)
                bb = pop_lsb(bb)
                if pt == KNIGHT:
                    att = KNIGHT_ATTACKS[sq]
                    nt = _add(w, st, nt, F_MOB_KNIGHT + popcount(att & safe), s)
                    minor_att |= att
                    rr = (sq >> 3) if c == 0 else 7 - (sq >> 3)
                    if 3 <= rr <= 5 and (bit(sq) & own_pa) and not (
                        ADJACENT_FILES[sq & 7] & AHEAD[c, sq] & opp_p
                    ):
                        nt = _add(w, st, nt, F_KNIGHT_OUTPOST, s)
                elif pt == BISHOP:
                    att = bishop_attacks(sq, occ)
                    nt = _add(w, st, nt, F_MOB_BISHOP + popcount(att & safe), s)
                    minor_att |= att
                elif pt == ROOK:
                    att = rook_attacks(sq, occ)
                    nt = _add(w, st, nt, F_MOB_ROOK + popcount(att & safe), s)
                    rook_att |= att
                    fm = FILE_MASK[sq & 7]
                    if not (fm & own_p):
                        if fm & opp_p:
                            nt = _add(w, st, nt, F_ROOK_SEMIOPEN, s)
                        else:
                            nt = _add(w, st, nt, F_ROOK_OPEN, s)
                    rr = (sq >> 3) if c == 0 else 7 - (sq >> 3)
                    if rr == 6:
                        nt = _add(w, st, nt, F_ROOK_SEVENTH, s)
                else:
                    att = bishop_attacks(sq, occ) | rook_attacks(sq, occ)
                    nt = _add(w, st, nt, F_MOB_QUEEN + popcount(att & safe), s)
                if att & ezone:
                    zone_n += 1
                hit = att & occ
                carry = m1 & hit
                m1 ^= hit
                if carry:  # rare: a second piece of the type on the same target
                    carry2 = m2 & carry
                    m2 ^= carry
                    carry4 = m4 & carry2
                    m4 ^= carry2
                    m8 |= carry4
            attacked = _pairs(m1 & opp, bp, bn, bbi, br, bq)
            defended = _pairs(m1 & own, bp, bn, bbi, br, bq)
            if m2 | m4 | m8:
                attacked += (2 * _pairs(m2 & opp, bp, bn, bbi, br, bq) + 4 * _pairs(m4 & opp, bp, bn, bbi, br, bq)
                             + 8 * _pairs(m8 & opp, bp, bn, bbi, br, bq))
                defended += (2 * _pairs(m2 & own, bp, bn, bbi, br, bq) + 4 * _pairs(m4 & own, bp, bn, bbi, br, bq)
                             + 8 * _pairs(m8 & own, bp, bn, bbi, br, bq))
            if pt == KNIGHT:
                an += s * attacked
                dn += s * defended
            elif pt == BISHOP:
                ab += s * attacked
                db += s * defended
            elif pt == ROOK:
                ar += s * attacked
                dr += s * defended
            else:
                aq += s * attacked
                dq += s * defended
            if zone_n:
                nt = _add(w, st, nt, F_ZONE_ATTACKERS + pt, s * zone_n)
                zone_total += zone_n
        if zone_total:
            nt = _add(w, st, nt, F_ZONE_COUNT + min(zone_total, 5) - 1, s)

        if popcount(b[BISHOP] & own) >= 2:
            nt = _add(w, st, nt, F_BISHOP_PAIR, s)
        heavy_minor = (b[KNIGHT] | b[BISHOP] | b[ROOK] | b[QUEEN]) & opp
        nt = _add(w, st, nt, F_THREAT_PAWN, s * popcount(own_pa & heavy_minor))
        nt = _add(w, st, nt, F_THREAT_MINOR,
                  s * popcount(minor_att & (b[ROOK] | b[QUEEN]) & opp))
        nt = _add(w, st, nt, F_THREAT_ROOK, s * popcount(rook_att & b[QUEEN] & opp))
        if c == stm:
            nt = _add(w, st, nt, F_TEMPO, s)

        # king: attack and defence pairs
        kb = b[KING] & own
        if kb:
            katt = KING_ATTACKS[lsb(kb)]
            ak += s * _pairs(katt & opp, bp, bn, bbi, br, bq)
            dk += s * _pairs(katt & own, bp, bn, bbi, br, bq)

    nt = _add_pairs(w, st, nt, F_ATTACKS + 5 * PAWN, ap)
    nt = _add_pairs(w, st, nt, F_ATTACKS + 5 * KNIGHT, an)
    nt = _add_pairs(w, st, nt, F_ATTACKS + 5 * BISHOP, ab)
    nt = _add_pairs(w, st, nt, F_ATTACKS + 5 * ROOK, ar)
    nt = _add_pairs(w, st, nt, F_ATTACKS + 5 * QUEEN, aq)
    nt = _add_pairs(w, st, nt, F_ATTACKS + 5 * KING, ak)
    nt = _add_pairs(w, st, nt, F_DEFENDS + 5 * PAWN, dp)
    nt = _add_pairs(w, st, nt, F_DEFENDS + 5 * KNIGHT, dn)
    nt = _add_pairs(w, st, nt, F_DEFENDS + 5 * BISHOP, db)
    nt = _add_pairs(w, st, nt, F_DEFENDS + 5 * ROOK, dr)
    nt = _add_pairs(w, st, nt, F_DEFENDS + 5 * QUEEN, dq)
    nt = _add_pairs(w, st, nt, F_DEFENDS + 5 * KING, dk)
    return nt


@njit(cache=True)
def features_kernel(b, st, out_idx, out_val):  # type: ignore[no-untyped-def]
    """Write the side to move's feature vector as sorted pairs into ``out_idx``/``out_val``
    (int32, length >= MAX_FEATURES); return the number of pairs. Values are
    ``x * phase`` (middle-game copy) and ``x * (PHASE_MAX - phase)`` (end-game copy)."""
    nt = collect(b, None, st, None, None)
    touched = st[2 * N_BASE:]
    # insertion sort of the touched base indices (a few dozen)
    for i in range(1, nt):
        v = touched[i]
        j = i - 1
        while j >= 0 and touched[j] > v:
            touched[j + 1] = touched[j]
            j -= 1
        touched[j + 1] = v
    phase = phase_of(b)
    sign = 1 if b[W_STM] == ZERO else -1
    n_mg = 0
    for i in range(nt):
        f = touched[i]
        x = st[f] * sign
        st[f] = 0
        st[N_BASE + f] = 0
        if x != 0:
            out_val[n_mg] = x  # temporarily the net count; tapered below
            out_idx[n_mg] = f
            n_mg += 1
    if phase == 0:  # bare kings and pawns: only end-game copies
        for i in range(n_mg):
            out_idx[i] += N_BASE
            out_val[i] *= PHASE_MAX
        return n_mg
    n = n_mg
    eg_weight = PHASE_MAX - phase
    if eg_weight > 0:
        for i in range(n_mg):
            out_idx[n_mg + i] = out_idx[i] + N_BASE
            out_val[n_mg + i] = out_val[i] * eg_weight
        n = 2 * n_mg
    for i in range(n_mg):
        out_val[i] *= phase
    return n


@njit(cache=True, inline="always")
def _tapered(b, mg, eg):  # type: ignore[no-untyped-def]
    """The score of the sums ``mg``, ``eg`` at ``b``'s game phase, side to move's view."""
    phase = phase_of(b)
    total = mg * phase + eg * (PHASE_MAX - phase)
    return total if b[W_STM] == ZERO else -total


@njit(cache=True)
def evaluate_kernel(b, w, score):  # type: ignore[no-untyped-def]
    """Static score ``w . phi`` in eval units (centipawns x PHASE_MAX), side to move's view.

    ``w`` is the integer weight vector (int32, length N_FEATURES); ``score`` is an int64[2]
    scratch array."""
    return evaluate_cached_kernel(b, w, score, None)


@njit(cache=True)
def evaluate_cached_kernel(b, w, score, pk):  # type: ignore[no-untyped-def]
    """:func:`evaluate_kernel` with the pawn-king table ``pk`` (:func:`new_pawn_king_table`,
    for these weights only) or None; ``score`` (int64[>= 2]) is not used (callers' scratch).
    The same score."""
    mg, eg = collect(b, w, score, pk, None)
    return _tapered(b, mg, eg)


@njit(cache=True)
def evaluate_psq_kernel(b, w, pk, psq):  # type: ignore[no-untyped-def]
    """:func:`evaluate_cached_kernel` with the material and piece-square sums ``psq`` (middle
    game, end game; :mod:`search.evaluation.material_pst`) given instead of walked. The same score when
    they are ``b``'s."""
    mg, eg = collect(b, w, None, pk, psq)
    return _tapered(b, mg, eg)



@njit(cache=True)
def features_batch_kernel(boards: np.ndarray):  # type: ignore[no-untyped-def]
    """CSR feature matrix of ``boards`` (uint64[n, BOARD_WORDS]):
    ``(indptr int64[n + 1], indices int32[nnz], values int32[nnz])``."""
    n = boards.shape[0]
    st, idx, val = new_feature_buffers()
    indptr = np.zeros(n + 1, dtype=np.int64)
    cap = max(16, n * 128)
    out_i = np.zeros(cap, dtype=np.int32)
    out_v = np.zeros(cap, dtype=np.int32)
    for p in range(n):
        k = features_kernel(boards[p], st, idx, val)
        start = indptr[p]
        if start + k > cap:
            while start + k > cap:
                cap *= 2
            grown_i = np.zeros(cap, dtype=np.int32)
            grown_v = np.zeros(cap, dtype=np.int32)
            grown_i[:start] = out_i[:start]
            grown_v[:start] = out_v[:start]
            out_i = grown_i
            out_v = grown_v
        out_i[start:start + k] = idx[:k]
        out_v[start:start + k] = val[:k]
        indptr[p + 1] = start + k
    nnz = indptr[n]
    return indptr, out_i[:nnz].copy(), out_v[:nnz].copy()


@njit(cache=True)
def evaluate_batch_kernel(boards: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Scores in eval units of ``boards`` (uint64[n, BOARD_WORDS]), int64[n]."""
    n = boards.shape[0]
    score = np.zeros(2, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for p in range(n):
        out[p] = evaluate_kernel(boards[p], w, score)
    return out
