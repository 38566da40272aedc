"""Attack tables: pawn, knight and king lookups, magic-bitboard sliders, lines and betweens.

All tables are module-level ``numpy`` arrays built at import by cached numba kernels and read
by other kernels as compile-time constants. Square indices run a1=0 .. h8=63.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.bits import ONE, ZERO, bit
from search.magics import BISHOP_MAGICS, ROOK_MAGICS

ROOK_DIRS = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.int64)
BISHOP_DIRS = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=np.int64)
KNIGHT_STEPS = np.array(
    [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]], dtype=np.int64
)
KING_STEPS = np.array(
    [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]], dtype=np.int64
)


@njit(cache=True)
def _ray_attacks(sq: int, occ: np.uint64, dirs: np.ndarray) -> np.uint64:
    """Slow slider attacks by walking rays (table construction and tests only)."""
    att = ZERO
    r0, f0 = sq // 8, sq % 8
    for d in range(dirs.shape[0]):
        dr, df = dirs[d, 0], dirs[d, 1]
        r, f = r0 + dr, f0 + df
        while 0 <= r < 8 and 0 <= f < 8:
            b = bit(r * 8 + f)
            att |= b
            if occ & b:
                break
            r += dr
            f += df
    return att


@njit(cache=True)
def _relevant_mask(sq: int, dirs: np.ndarray) -> np.uint64:
    """Squares whose occupancy matters to a slider on ``sq`` (board edges excluded)."""
    m = ZERO
    r0, f0 = sq // 8, sq % 8
    for d in range(dirs.shape[0]):
        dr, df = dirs[d, 0], dirs[d, 1]
        r, f = r0 + dr, f0 + df
        while 0 <= r + dr < 8 and 0 <= f + df < 8:
            m |= bit(r * 8 + f)
            r += dr
            f += df
    return m


@njit(cache=True)
def _step_table(steps: np.ndarray) -> np.ndarray:
    out = np.zeros(64, dtype=np.uint64)
    for sq in range(64):
        r0, f0 = sq // 8, sq % 8
        for k in range(steps.shape[0]):
            r, f = r0 + steps[k, 0], f0 + steps[k, 1]
            if 0 <= r < 8 and 0 <= f < 8:
                out[sq] |= bit(r * 8 + f)
    return out


@njit(cache=True)
def _pawn_table() -> np.ndarray:
    """``[colour, square]``: squares a pawn of that colour on that square attacks."""
    out = np.zeros((2, 64), dtype=np.uint64)
    for sq in range(64):
        r, f = sq // 8, sq % 8
        for c in range(2):
            rr = r + 1 if c == 0 else r - 1
            if 0 <= rr < 8:
                if f > 0:
                    out[c, sq] |= bit(rr * 8 + f - 1)
                if f < 7:
                    out[c, sq] |= bit(rr * 8 + f + 1)
    return out


@njit(cache=True)
def _build_magic(dirs: np.ndarray, magics: np.ndarray):  # type: ignore[no-untyped-def]
    """Masks, shifts, offsets and the shared attack table for one slider kind.

    Returns ``bad`` = the first square whose magic collides, or -1.
    """
    masks = np.zeros(64, dtype=np.uint64)
    shifts = np.zeros(64, dtype=np.uint64)
    offsets = np.zeros(64, dtype=np.int64)
    total = 0
    for sq in range(64):
        masks[sq] = _relevant_mask(sq, dirs)
        n = 0
        m = masks[sq]
        while m:
            m &= m - ONE
            n += 1
        shifts[sq] = np.uint64(64 - n)
        offsets[sq] = total
        total += 1 << n
    table = np.zeros(total, dtype=np.uint64)
    filled = np.zeros(total, dtype=np.bool_)
    bad = -1
    for sq in range(64):
        mask = masks[sq]
        sub = ZERO
        while True:
            att = _ray_attacks(sq, sub, dirs)
            idx = offsets[sq] + np.int64((sub * magics[sq]) >> shifts[sq])
            if filled[idx] and table[idx] != att:
                if bad < 0:
                    bad = sq
            table[idx] = att
            filled[idx] = True
            sub = (sub - mask) & mask
            if sub == ZERO:
                break
    return masks, shifts, offsets, table, bad


@njit(cache=True)
def _build_lines():  # type: ignore[no-untyped-def]
    """``between[a, b]``: squares strictly between aligned a and b; ``line[a, b]``: the whole
    rank, file or diagonal through both (0 when not aligned or a == b)."""
    between = np.zeros((64, 64), dtype=np.uint64)
    line = np.zeros((64, 64), dtype=np.uint64)
    for a in range(64):
        for b in range(64):
            if a == b:
                continue
            ra, fa, rb, fb = a // 8, a % 8, b // 8, b % 8
            dr, df = rb - ra, fb - fa
            if not (dr == 0 or df == 0 or abs(dr) == abs(df)):
                continue
            sr = (dr > 0) - (dr < 0)
            sf = (df > 0) - (df < 0)
            r, f = ra + sr, fa + sf
            while r != rb or f != fb:
                between[a, b] |= bit(r * 8 + f)
                r += sr
                f += sf
            # whole line: walk both ways from a
            full = bit(a)
            for sgn in (1, -1):
                r, f = ra + sgn * sr, fa + sgn * sf
                while 0 <= r < 8 and 0 <= f < 8:
                    full |= bit(r * 8 + f)
                    r += sgn * sr
                    f += sgn * sf
            line[a, b] = full
    return between, line


KNIGHT_ATTACKS = _step_table(KNIGHT_STEPS)
KING_ATTACKS = _step_table(KING_STEPS)
PAWN_ATTACKS = _pawn_table()
ROOK_MAGIC = np.array(ROOK_MAGICS, dtype=np.uint64)
BISHOP_MAGIC = np.array(BISHOP_MAGICS, dtype=np.uint64)
ROOK_MASK, ROOK_SHIFT, ROOK_OFFSET, ROOK_TABLE, _bad_rook = _build_magic(ROOK_DIRS, ROOK_MAGIC)
BISHOP_MASK, BISHOP_SHIFT, BISHOP_OFFSET, BISHOP_TABLE, _bad_bishop = _build_magic(
    BISHOP_DIRS, BISHOP_MAGIC
)
if _bad_rook >= 0 or _bad_bishop >= 0:  # pragma: no cover - guards the constants in magics.py
    raise RuntimeError(f"magic multiplier collides (rook square {_bad_rook}, bishop {_bad_bishop})")
BETWEEN, LINE = _build_lines()


@njit(cache=True, inline="always")
def rook_attacks(sq: int, occ: np.uint64) -> np.uint64:
    """Squares a rook on ``sq`` attacks given occupancy ``occ`` (includes blockers)."""
    idx = np.int64(((occ & ROOK_MASK[sq]) * ROOK_MAGIC[sq]) >> ROOK_SHIFT[sq])
    return ROOK_TABLE[ROOK_OFFSET[sq] + idx]  # type: ignore[no-any-return]


@njit(cache=True, inline="always")
def bishop_attacks(sq: int, occ: np.uint64) -> np.uint64:
    """Squares a bishop on ``sq`` attacks given occupancy ``occ`` (includes blockers)."""
    idx = np.int64(((occ & BISHOP_MASK[sq]) * BISHOP_MAGIC[sq]) >> BISHOP_SHIFT[sq])
    return BISHOP_TABLE[BISHOP_OFFSET[sq] + idx]  # type: ignore[no-any-return]


@njit(cache=True, inline="always")
def queen_attacks(sq: int, occ: np.uint64) -> np.uint64:
    return rook_attacks(sq, occ) | bishop_attacks(sq, occ)
