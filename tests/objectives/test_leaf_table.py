"""objectives/leaf_table.py: the compact PV-leaf table decodes to the tapered table it encodes,
and its objective and gradient equal objectives.mmto.objective's bit for bit (the reference
kernel, itself checked against a plain-Python oracle and finite differences in test_mmto)."""

from __future__ import annotations

import numpy as np
import pytest

from objectives.leaf_table import concatenate, encode, objective_compact, value_bits
from objectives.mmto import objective

N_BASE = 40
PHASE_MAX = 24


def tapered_table(rng: np.random.Generator, positions: int, *, big: bool = False):  # type: ignore[no-untyped-def]
    """A random tapered table: each leaf row a base vector ``x`` (a few terms, shared in part by
    the position's rows, as leaves after different moves are) at a random phase, written as
    ``(f, x * phase)`` and ``(f + N_BASE, x * (PHASE_MAX - phase))`` for non-zero copies; now and
    then a verdict row (score in ``offset``, no features) or an empty leaf row. ``big``: counts up
    to 300 (several packed entries per difference)."""
    counts = rng.integers(1, 14, positions)
    pos_ptr = np.zeros(positions + 1, dtype=np.int64)
    np.cumsum(counts, out=pos_ptr[1:])
    rows = int(pos_ptr[-1])
    played = pos_ptr[:-1] + rng.integers(0, counts)
    offset = np.zeros(rows, dtype=np.int64)
    idx_rows, val_rows = [], []
    limit = 300 if big else 4
    for p in range(positions):
        common = np.zeros(N_BASE, dtype=np.int64)
        terms = rng.choice(N_BASE, 8, replace=False)
        common[terms] = rng.integers(-limit, limit + 1, 8)
        for r in range(pos_ptr[p], pos_ptr[p + 1]):
            u = rng.random()
            if u < 0.05 and r != played[p]:
                offset[r] = rng.integers(-3000, 3000)
                idx_rows.append(np.zeros(0, dtype=np.int64))
                val_rows.append(np.zeros(0, dtype=np.int64))
                continue
            x = common.copy() if u > 0.1 else np.zeros(N_BASE, dtype=np.int64)
            extra = rng.choice(N_BASE, 3, replace=False)
            x[extra] += rng.integers(-limit, limit + 1, 3)
            x = x * rng.choice([-1, 1])
            phase = int(rng.choice([0, PHASE_MAX, *rng.integers(1, PHASE_MAX, 3)]))
            nz = np.flatnonzero(x)
            idx, val = [], []
            if phase:
                idx.append(nz)
                val.append(x[nz] * phase)
            if PHASE_MAX - phase:
                idx.append(nz + N_BASE)
                val.append(x[nz] * (PHASE_MAX - phase))
            idx_rows.append(np.concatenate(idx) if idx else np.zeros(0, dtype=np.int64))
            val_rows.append(np.concatenate(val) if val else np.zeros(0, dtype=np.int64))
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum([len(i) for i in idx_rows], out=indptr[1:])
    indices = np.concatenate(idx_rows).astype(np.int16)
    values = np.concatenate(val_rows).astype(np.int16)
    return pos_ptr, played.astype(np.int64), offset, indptr, indices, values


@pytest.mark.parametrize("big", [False, True])
def test_compact_table_decodes_to_the_tapered_table(big: bool) -> None:
    table = tapered_table(np.random.default_rng(3), 150, big=big)
    pos_ptr, played, offset, indptr, indices, values = table
    t = encode(*table, n_base=N_BASE, phase_max=PHASE_MAX)
    o, ip, ix, va = t.tapered()
    assert np.array_equal(o, offset) and np.array_equal(ip, indptr)
    assert np.array_equal(ix, indices) and np.array_equal(va, values)
    assert np.array_equal(t.pos_ptr, pos_ptr) and np.array_equal(t.played, played)
    # smaller than the tapered table: one uint16 per differing term instead of two (int16, int16)
    tapered_bytes = sum(a.nbytes for a in table)
    assert t.nbytes < tapered_bytes / (2 if big else 3)
    if big:  # counts beyond one entry's range were split into several entries
        assert np.abs(values).max() // PHASE_MAX > 2 ** (value_bits(N_BASE) - 1)


@pytest.mark.parametrize("loss,mu", [("sigmoid", 0.0), ("softmax", 0.0), ("sigmoid", 2.0), ("softmax", 3.0)])
def test_compact_objective_equals_the_tapered_one_bit_for_bit(loss: str, mu: float) -> None:
    rng = np.random.default_rng(7)
    table = tapered_table(rng, 400, big=loss == "softmax")
    pos_ptr, played, offset, indptr, indices, values = table
    played = played.copy()
    played[rng.random(len(played)) < 0.1] = -1  # skipped positions
    table = (pos_ptr, played, offset, indptr, indices, values)
    w = rng.integers(-60, 60, 2 * N_BASE).astype(np.int32)
    results = rng.choice([0.0, 0.5, 1.0, np.nan], size=len(played))
    kw = {"loss": loss, "results": results, "mu": mu, "k_cp": 0.004 if mu else 0.0}
    ref = objective(*table, w, 0.003, PHASE_MAX, **kw)  # type: ignore[arg-type]
    got = objective_compact(encode(*table, n_base=N_BASE, phase_max=PHASE_MAX), w, 0.003, PHASE_MAX,
                            **kw)  # type: ignore[arg-type]
    assert (got.move, got.result, got.total) == (ref.move, ref.result, ref.total)
    assert np.array_equal(got.gradient, ref.gradient) and np.count_nonzero(ref.gradient) > N_BASE


def test_concatenated_tables_equal_one_table() -> None:
    table = tapered_table(np.random.default_rng(11), 90)
    pos_ptr, played, offset, indptr, indices, values = table
    whole = encode(*table, n_base=N_BASE, phase_max=PHASE_MAX)
    parts = []
    for a, z in ((0, 30), (30, 31), (31, 90)):
        ra, rz = pos_ptr[a], pos_ptr[z]
        parts.append(encode(pos_ptr[a:z + 1] - ra, played[a:z] - ra, offset[ra:rz], indptr[ra:rz + 1] - indptr[ra],
                            indices[indptr[ra]:indptr[rz]], values[indptr[ra]:indptr[rz]], n_base=N_BASE,
                            phase_max=PHASE_MAX))
    joined = concatenate(parts)
    for f in ("pos_ptr", "played", "phase", "row_nnz", "ref_nnz", "entry_ptr", "entries", "verdict_rows",
              "verdict_scores"):
        assert np.array_equal(getattr(joined, f), getattr(whole, f)), f


def test_tables_that_are_not_tapered_are_refused_in_one_line() -> None:
    pos_ptr = np.array([0, 2], dtype=np.int64)
    played = np.array([0], dtype=np.int64)
    offset = np.zeros(2, dtype=np.int64)
    indptr = np.array([0, 2, 3], dtype=np.int64)
    # the middle- and end-game copies of term 1 do not add up to a multiple of PHASE_MAX
    indices = np.array([1, 1 + N_BASE, 2], dtype=np.int16)
    values = np.array([5, 7, 24], dtype=np.int16)
    with pytest.raises(ValueError, match="leaf_table.py: a row is not a tapered feature vector"):
        encode(pos_ptr, played, offset, indptr, indices, values, n_base=N_BASE, phase_max=PHASE_MAX)
    with pytest.raises(ValueError, match="feature indices"):
        encode(pos_ptr, played, offset, indptr, indices, values, n_base=2, phase_max=PHASE_MAX)
    with pytest.raises(ValueError, match="40 weights"):
        objective_compact(encode(pos_ptr, played, offset, np.array([0, 0, 1], dtype=np.int64), indices[2:], values[2:],
                                 n_base=N_BASE, phase_max=PHASE_MAX), np.zeros(40, dtype=np.int32), 0.01, PHASE_MAX)
