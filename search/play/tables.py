"""The playing search's tables: the transposition table, the history and countermove tables and
the late-move reduction table, as plain arrays with the kernels that read and write them.

Transposition table: ``tt`` int64[2**k, 4], one entry a row of 32 bytes (the key's low bits pick
it) and the table aligned to a cache line (:func:`new_table`), so that a probe touches one line
(``docs/search.md`` measures what that saved):

* ``tt[s, TT_KEY]``: the key (its bits), XORed with the three data words (below);
* ``tt[s, TT_SCORE]``: the score in eval units, a mate score stored relative to the node
  (:func:`score_to_tt`, :func:`score_from_tt`: the distance from the root is added back on
  reading, so a mate found at one ply reads right at another);
* ``tt[s, TT_STATIC]``: the node's static evaluation (:data:`NO_STATIC` in check);
* ``tt[s, TT_PACKED]``: the move (bits 0..23, the packed move of :mod:`search.core.board`),
  the depth + :data:`DEPTH_OFFSET` (bits 24..31), the bound (bits 32..33: :data:`BOUND_LOWER`,
  :data:`BOUND_UPPER`, :data:`BOUND_EXACT`) and the generation (bits 34..41: the search that
  wrote it).

Replacement (Stockfish's rule, ``tt.cpp``, simplified to one entry a slot): an entry of another
position is replaced when it is of an earlier search or not deeper than the new one; an entry of
the same position when the new one is exact or not much shallower (3 plies); the move of an
entry kept for the same position survives a store without a move.

An entry's key and data are written apart, and threads of a Lazy SMP search share the table
without locks, so a reader may see a torn entry (the key of one write, data of another). The
slot therefore keeps the key XOR its three data words (Hyatt and Mann's lockless hashing, as
Stockfish and Crafty do): a torn entry does not match its key and reads as absent. The search
only orders by the table's move (it matches it against the node's generated moves), so even an
undetected collision costs a wrong bound, never an illegal move.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from search.core.prefetch import prefetch_row
from search.tree.alphabeta import MATE_BOUND

TT_KEY, TT_SCORE, TT_STATIC, TT_PACKED = 0, 1, 2, 3
TT_COLUMNS = 4
BOUND_NONE, BOUND_LOWER, BOUND_UPPER, BOUND_EXACT = 0, 1, 2, 3
#: stored depths are ``depth + DEPTH_OFFSET`` (quiescence entries would be at 0 or below)
DEPTH_OFFSET = 8
#: bytes a table entry takes (key + three int64)
TT_ENTRY_BYTES = 32
#: a static evaluation not computed (the side to move is in check)
NO_STATIC = 1 << 50
_MOVE_MASK = np.int64((1 << 24) - 1)


#: the alignment of the table's first entry (a cache line), so that no entry spans two lines
TT_ALIGN_BYTES = 64


def new_table(bits: int) -> np.ndarray:
    """An empty table of ``2**bits`` entries: int64[2**bits, TT_COLUMNS], C-contiguous, its first
    entry on a cache line's start. numpy's large arrays start 16 bytes past one (the allocator's
    header), which put every other 32-byte entry across two lines: its probe loaded two lines,
    and the prefetch (:func:`tt_prefetch`) fetched only the first (``docs/search.md``)."""
    n = (1 << bits) * TT_COLUMNS
    spare = TT_ALIGN_BYTES // 8
    raw = np.zeros(n + spare, dtype=np.int64)
    skip = (-raw.ctypes.data % TT_ALIGN_BYTES) // 8
    return raw[skip: skip + n].reshape(1 << bits, TT_COLUMNS)


def table_bits_for(mb: int) -> int:
    """Log2 of the number of entries that fit in ``mb`` MiB (at least one)."""
    entries = max(1, mb * (1 << 20) // TT_ENTRY_BYTES)
    return entries.bit_length() - 1


@njit(cache=True, inline="always")
def score_to_tt(v, ply):  # type: ignore[no-untyped-def]
    """A score at ``ply`` as the table keeps it: a mate score counted from the node."""
    if v > MATE_BOUND:
        return v + ply
    if v < -MATE_BOUND:
        return v - ply
    return v


@njit(cache=True, inline="always")
def score_from_tt(v, ply):  # type: ignore[no-untyped-def]
    """The table's score read at ``ply``: a mate score counted from the root again."""
    if v > MATE_BOUND:
        return v - ply
    if v < -MATE_BOUND:
        return v + ply
    return v


@njit(cache=True, inline="always")
def tt_slot(tt, key):  # type: ignore[no-untyped-def]
    return np.int64(key & np.uint64(tt.shape[0] - 1))


@njit(cache=True, inline="always")
def tt_prefetch(tt, key):  # type: ignore[no-untyped-def]
    """Start loading ``key``'s entry into the cache (a hint: no effect on any value). The search
    calls it as soon as a child's key is known, so that the child's probe, after the move's
    evaluator update, finds the line loaded."""
    prefetch_row(tt, tt_slot(tt, key))


@njit(cache=True, inline="always")
def _checksum(score, static, packed):  # type: ignore[no-untyped-def]
    """What a slot's key is XORed with: its three data words (as unsigned bits)."""
    return np.uint64(score) ^ np.uint64(static) ^ np.uint64(packed)


@njit(cache=True, inline="always")
def tt_read(tt, key):  # type: ignore[no-untyped-def]
    """``(found, move, depth, bound, score, static)`` of ``key``'s entry (score as stored)."""
    s = tt_slot(tt, key)
    score = tt[s, TT_SCORE]
    static = tt[s, TT_STATIC]
    packed = tt[s, TT_PACKED]
    if np.uint64(tt[s, TT_KEY]) ^ _checksum(score, static, packed) != key:
        return False, 0, 0, BOUND_NONE, np.int64(0), NO_STATIC
    move = np.int32(packed & _MOVE_MASK)
    depth = np.int64((packed >> 24) & 255) - DEPTH_OFFSET
    bound = np.int64((packed >> 32) & 3)
    return True, move, depth, bound, score, static


@njit(cache=True, inline="always")
def tt_write(tt, key, move, depth, bound, score, static, generation):  # type: ignore[no-untyped-def]
    """Store an entry for ``key`` by the replacement rule (module docstring)."""
    s = tt_slot(tt, key)
    packed = tt[s, TT_PACKED]
    old_depth = np.int64((packed >> 24) & 255) - DEPTH_OFFSET
    old_gen = np.int64((packed >> 34) & 255)
    same = np.uint64(tt[s, TT_KEY]) ^ _checksum(tt[s, TT_SCORE], tt[s, TT_STATIC], packed) == key
    if same:
        if bound != BOUND_EXACT and depth < old_depth - 3:
            return
        if move == 0:
            move = np.int32(packed & _MOVE_MASK)
    elif old_gen == generation and depth < old_depth:
        return
    d = min(max(depth + DEPTH_OFFSET, 0), 255)
    new_packed = ((np.int64(move) & _MOVE_MASK) | (np.int64(d) << 24) | (np.int64(bound) << 32)
                  | ((generation & 255) << 34))
    tt[s, TT_KEY] = np.int64(key ^ _checksum(np.int64(score), np.int64(static), new_packed))
    tt[s, TT_SCORE] = score
    tt[s, TT_STATIC] = static
    tt[s, TT_PACKED] = new_packed


#: the history table's bound: a move's score stays within +-HISTORY_MAX
HISTORY_MAX = 16384


@njit(cache=True, inline="always")
def history_update(history, colour, m, bonus):  # type: ignore[no-untyped-def]
    """Add ``bonus`` (negative: a malus) to quiet move ``m``'s history for ``colour`` with
    gravity (Ethereal and Stockfish: ``h += bonus - h * |bonus| / HISTORY_MAX``), so that the
    entry stays within +-:data:`HISTORY_MAX` and recent results weigh more."""
    frm = m & 63
    to = (m >> 6) & 63
    h = history[colour, frm, to]
    history[colour, frm, to] = h + bonus - h * abs(bonus) // HISTORY_MAX


def lmr_table(max_depth: int = 64, max_moves: int = 256, base: float = 0.75, divisor: float = 2.25) -> np.ndarray:
    """Late-move reductions int64[max_depth, max_moves]: ``base + ln(depth) ln(moves) / divisor``
    plies, rounded down (Ethereal's ``LMRTable``; 0 where either is 0)."""
    table = np.zeros((max_depth, max_moves), dtype=np.int64)
    for d in range(1, max_depth):
        for k in range(1, max_moves):
            table[d, k] = int(base + math.log(d) * math.log(k) / divisor)
    return table
