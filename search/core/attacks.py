"""Attack tables: pawn, knight and king lookups, kindergarten-bitboard sliders, lines and betweens.

All tables are module-level ``numpy`` arrays read by the kernels as compile-time constants.
They are built by the numba kernels below (:func:`build_tables`) and shipped, as built, in
``search/data/attack_tables.npz``, which the import reads: on an empty numba cache, building
them would first compile six kernels (seconds on a loaded machine, before ``tuner uci`` can
answer ``uci``). ``tests/search/core/test_attacks.py`` checks that the file equals what the kernels
build; ``python -m search.core.attacks`` writes it again. Square indices run a1=0 .. h8=63.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from search.core.bits import FILE_A, ZERO, bit

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
    """Slow slider attacks by walking rays (table construction and tests only): the reference."""
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




# Kindergarten sliders (Chess Programming Wiki, "Kindergarten Bitboards"): a line with at most
# one square per file (a rank, a diagonal, an anti-diagonal) has its occupancy on files b..g
# gathered into the top six bits by one multiplication by FILE_B; the file's occupancy is first
# shifted onto file a and gathered by a multiplication along a diagonal. Tables of 8 x 64
# entries (8 KB in all) index those six bits, small enough for the first-level cache, where
# magic tables (800 KB for rooks) are not (why this was changed: docs/scaling.md).
FILE_B_MUL = np.uint64(0x0202020202020202)
FILE_GATHER_MUL = np.uint64(0x0004081020408000)


@njit(cache=True)
def _line_masks():  # type: ignore[no-untyped-def]
    """``[kind, square]``: the rank (kind 0), diagonal (1) and anti-diagonal (2) through the
    square, the square itself left out."""
    out = np.zeros((3, 64), dtype=np.uint64)
    for sq in range(64):
        r0, f0 = sq // 8, sq % 8
        for r in range(8):
            for f in range(8):
                if r * 8 + f == sq:
                    continue
                if r == r0:
                    out[0, sq] |= bit(r * 8 + f)
                if r - r0 == f - f0:
                    out[1, sq] |= bit(r * 8 + f)
                if r - r0 == f0 - f:
                    out[2, sq] |= bit(r * 8 + f)
    return out


@njit(cache=True)
def _kindergarten_tables():  # type: ignore[no-untyped-def]
    """``fill_up[file, index]``: the squares a rook on that file of the first rank attacks along
    the rank when the rank's files b..g hold the occupancy ``index`` (bit k = file k + 1), the
    byte copied onto all eight ranks; ``file_a[rank, index]``: the squares of file a that a rook
    on that rank of file a attacks along the file when ranks 2..7 hold the gathered occupancy
    ``index``. Both are filled from ray walks over every occupancy, so the gathering formulas
    are checked as the tables are built: returns ``bad`` >= 0 when one is not a function of the
    gathered index."""
    fill_up = np.zeros((8, 64), dtype=np.uint64)
    file_a = np.zeros((8, 64), dtype=np.uint64)
    seen_r = np.zeros((8, 64), dtype=np.bool_)
    seen_f = np.zeros((8, 64), dtype=np.bool_)
    bad = -1
    for k in range(8):
        for inner in range(64):
            occ_rank = np.uint64(inner) << np.uint64(1)  # files b..g of the first rank
            att = _ray_attacks(k, occ_rank, ROOK_DIRS) & np.uint64(0xFF)
            idx = np.int64(((occ_rank & np.uint64(0x7E)) * FILE_B_MUL) >> np.uint64(58))
            row = att * FILE_A
            if seen_r[k, idx] and fill_up[k, idx] != row:
                bad = k
            fill_up[k, idx] = row
            seen_r[k, idx] = True
            occ_file = ZERO
            for j in range(6):
                if inner & (1 << j):
                    occ_file |= bit(8 * (j + 1))
            att = _ray_attacks(8 * k, occ_file, ROOK_DIRS) & FILE_A
            idx = np.int64((occ_file * FILE_GATHER_MUL) >> np.uint64(58))
            if seen_f[k, idx] and file_a[k, idx] != att:
                bad = 8 * k
            file_a[k, idx] = att
            seen_f[k, idx] = True
    return fill_up, file_a, bad


#: the shipped tables (module docstring)
TABLES_FILE = Path(__file__).parent.parent / "data" / "attack_tables.npz"
#: each table's name, dtype uint64, and shape
TABLE_SHAPES = {"knight": (64,), "king": (64,), "pawn": (2, 64), "between": (64, 64), "line": (64, 64),
                "rank_ex": (64,), "diag_ex": (64,), "anti_ex": (64,), "fill_up": (8, 64), "file_a": (8, 64)}


def build_tables() -> dict[str, np.ndarray]:
    """Every table of :data:`TABLE_SHAPES`, built by the kernels (compiling them on an empty cache)."""
    between, line = _build_lines()
    rank_ex, diag_ex, anti_ex = (masks.copy() for masks in _line_masks())
    fill_up, file_a, bad = _kindergarten_tables()
    if bad >= 0:  # pragma: no cover - guards the gathering constants
        raise RuntimeError(f"kindergarten index is not a function of the occupancy (square {bad})")
    return {"knight": _step_table(KNIGHT_STEPS), "king": _step_table(KING_STEPS), "pawn": _pawn_table(),
            "between": between, "line": line, "rank_ex": rank_ex, "diag_ex": diag_ex, "anti_ex": anti_ex,
            "fill_up": fill_up, "file_a": file_a}


def _load_tables() -> dict[str, np.ndarray]:
    """The shipped tables, or those :func:`build_tables` makes when the file is missing or not
    exactly the expected arrays."""
    try:
        with np.load(TABLES_FILE, allow_pickle=False) as data:
            tables = {k: np.ascontiguousarray(data[k]) for k in TABLE_SHAPES}
        if all(t.dtype == np.uint64 and t.shape == TABLE_SHAPES[k] for k, t in tables.items()):
            return tables
    except (OSError, KeyError, ValueError):
        pass
    return build_tables()


_T = _load_tables()
KNIGHT_ATTACKS, KING_ATTACKS, PAWN_ATTACKS = _T["knight"], _T["king"], _T["pawn"]
BETWEEN, LINE = _T["between"], _T["line"]
RANK_EX, DIAG_EX, ANTI_EX = _T["rank_ex"], _T["diag_ex"], _T["anti_ex"]
FILL_UP, FILE_A_ATTACKS = _T["fill_up"], _T["file_a"]


@njit(cache=True, inline="always")
def _line_attacks(mask: np.uint64, file: int, occ: np.uint64) -> np.uint64:
    """A slider's attacks along ``mask`` (a rank or diagonal through its square, the square
    left out) on file ``file`` given occupancy ``occ``."""
    idx = np.int64(((occ & mask) * FILE_B_MUL) >> np.uint64(58))
    return FILL_UP[file, idx] & mask  # type: ignore[no-any-return]


@njit(cache=True, inline="always")
def rook_attacks(sq: int, occ: np.uint64) -> np.uint64:
    """Squares a rook on ``sq`` attacks given occupancy ``occ`` (includes blockers)."""
    f = sq & 7
    idx = np.int64((((occ >> np.uint64(f)) & FILE_A) * FILE_GATHER_MUL) >> np.uint64(58))
    file_attacks: np.uint64 = FILE_A_ATTACKS[sq >> 3, idx] << np.uint64(f)
    return _line_attacks(RANK_EX[sq], f, occ) | file_attacks


@njit(cache=True, inline="always")
def bishop_attacks(sq: int, occ: np.uint64) -> np.uint64:
    """Squares a bishop on ``sq`` attacks given occupancy ``occ`` (includes blockers)."""
    f = sq & 7
    return _line_attacks(DIAG_EX[sq], f, occ) | _line_attacks(ANTI_EX[sq], f, occ)


@njit(cache=True, inline="always")
def queen_attacks(sq: int, occ: np.uint64) -> np.uint64:
    return rook_attacks(sq, occ) | bishop_attacks(sq, occ)




if __name__ == "__main__":  # write the shipped tables again
    tables = build_tables()
    np.savez(TABLES_FILE, knight=tables["knight"], king=tables["king"], pawn=tables["pawn"],
             between=tables["between"], line=tables["line"], rank_ex=tables["rank_ex"], diag_ex=tables["diag_ex"],
             anti_ex=tables["anti_ex"], fill_up=tables["fill_up"], file_a=tables["file_a"])
    print(f"wrote {TABLES_FILE}")
