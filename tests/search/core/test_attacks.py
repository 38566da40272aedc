"""Slider attacks (search/core/attacks.py, kindergarten bitboards) against ray walks: the kernels'
for every square and every occupancy of the lines through it, and the board validator's two
copies (vectorised and plain integers) on random occupancies."""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.attacks import (ANTI_EX, BISHOP_DIRS, DIAG_EX, RANK_EX, ROOK_DIRS, _ray_attacks, bishop_attacks,
                            queen_attacks, rook_attacks)
from search.core.bits import FILE_A, ZERO
from search.core.validate import _bishop, _bishop_attacks, _rook, _rook_attacks


@njit(cache=True)
def _mismatches(kind):  # type: ignore[no-untyped-def]
    """(cases, mismatches) of ``rook_attacks`` (kind 0) or ``bishop_attacks`` (1) against ray
    walks: each square, each subset of the squares on its lines (board edges included), alone
    and with every other square occupied too."""
    cases = 0
    bad = 0
    for sq in range(64):
        f = sq & 7
        file_ex = (FILE_A << np.uint64(f)) & ~(np.uint64(1) << np.uint64(sq))
        lines = RANK_EX[sq] | file_ex if kind == 0 else DIAG_EX[sq] | ANTI_EX[sq]
        sub = ZERO
        while True:
            for rest in (ZERO, ~lines):
                occ = sub | rest
                if kind == 0:
                    want = _ray_attacks(sq, occ, ROOK_DIRS)
                    got = rook_attacks(sq, occ)
                else:
                    want = _ray_attacks(sq, occ, BISHOP_DIRS)
                    got = bishop_attacks(sq, occ)
                cases += 1
                if got != want:
                    bad += 1
            sub = (sub - lines) & lines
            if sub == ZERO:
                break
    return cases, bad


def test_rook_attacks_equal_ray_walks_for_every_occupancy_of_its_lines() -> None:
    cases, bad = _mismatches(0)
    assert cases == 2 * 64 * 2**14 and bad == 0


def test_bishop_attacks_equal_ray_walks_for_every_occupancy_of_its_diagonals() -> None:
    cases, bad = _mismatches(1)
    assert cases > 2 * 64 * 2**6 and bad == 0


@njit(cache=True)
def _queen_mismatches(sq, occ):  # type: ignore[no-untyped-def]
    bad = 0
    for i in range(len(sq)):
        want = _ray_attacks(sq[i], occ[i], ROOK_DIRS) | _ray_attacks(sq[i], occ[i], BISHOP_DIRS)
        bad += queen_attacks(sq[i], occ[i]) != want
    return bad


def _random_occupancies(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(squares int64[3n], occupancies uint64[3n]): sparse, middling and dense boards."""
    rng = np.random.default_rng(7)

    def word() -> np.ndarray:
        high = rng.integers(0, 2**63, size=n, dtype=np.uint64) << np.uint64(1)
        return high | rng.integers(0, 2, size=n, dtype=np.uint64)

    occ = np.concatenate([word() & word() & word(), word(), word() | word()])
    return rng.integers(0, 64, size=len(occ)), occ


def test_queen_attacks_equal_ray_walks_along_both_kinds_of_line() -> None:
    sq, occ = _random_occupancies(20_000)
    assert _queen_mismatches(sq, occ) == 0


def test_the_validators_sliders_equal_ray_walks() -> None:
    """search/core/validate.py's vectorised and plain-integer copies of the kernels' formulas."""
    sq, occ = _random_occupancies(1000)
    rook, bishop = _rook_attacks(sq, occ), _bishop_attacks(sq, occ)
    for i in range(len(occ)):
        s, o = int(sq[i]), occ[i]
        want_rook = int(_ray_attacks(s, o, ROOK_DIRS))
        want_bishop = int(_ray_attacks(s, o, BISHOP_DIRS))
        assert (int(rook[i]), _rook(s, int(o))) == (want_rook, want_rook), (s, hex(int(o)))
        assert (int(bishop[i]), _bishop(s, int(o))) == (want_bishop, want_bishop), (s, hex(int(o)))


def test_the_shipped_tables_equal_what_the_kernels_build() -> None:
    """search/data/attack_tables.npz, which the import reads, is exactly what the builders make
    (and what the module holds)."""
    import search.core.attacks as attacks

    built = attacks.build_tables()
    with np.load(attacks.TABLES_FILE, allow_pickle=False) as shipped:
        assert sorted(shipped.files) == sorted(attacks.TABLE_SHAPES)
        for name, table in built.items():
            assert table.dtype == np.uint64 and table.shape == attacks.TABLE_SHAPES[name]
            assert np.array_equal(shipped[name], table), name
    held = {"knight": attacks.KNIGHT_ATTACKS, "king": attacks.KING_ATTACKS, "pawn": attacks.PAWN_ATTACKS,
            "between": attacks.BETWEEN, "line": attacks.LINE, "rank_ex": attacks.RANK_EX,
            "diag_ex": attacks.DIAG_EX, "anti_ex": attacks.ANTI_EX, "fill_up": attacks.FILL_UP,
            "file_a": attacks.FILE_A_ATTACKS}
    assert all(np.array_equal(held[k], built[k]) for k in built)
