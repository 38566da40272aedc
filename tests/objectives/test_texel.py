"""objectives/texel.py: Texel's loss against a plain-Python oracle and central finite
differences; the int32 path against the float path; sample weights and mini-batch rows; the
thread count; fitting K on exact and on noisy results."""

from __future__ import annotations

import math

import numpy as np
import pytest

from objectives import texel
from search.tree.search_api import threads

SCALE = 24  # eval units per centipawn (search.evaluation.evaluation_api.EVAL_SCALE; a parameter here)


def random_table(rng: np.random.Generator, n: int, n_w: int, *, max_nnz: int = 8, vmax: int = 5,
                 fixed_share: float = 0.03):  # type: ignore[no-untyped-def]
    """One row per position: 0..max_nnz distinct features with small nonzero int16 values, and
    now and then a row with a fixed (mate/draw) score in ``offset`` and no features."""
    nnz = rng.integers(0, max_nnz + 1, n)
    fixed = rng.random(n) < fixed_share
    nnz[fixed] = 0
    offset = np.zeros(n, dtype=np.int64)
    offset[fixed] = rng.choice([-30000, 0, 30000], int(fixed.sum()))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nnz, out=indptr[1:])
    indices = np.concatenate([np.sort(rng.choice(n_w, k, replace=False)) for k in nnz]).astype(np.int16)
    nonzero = np.r_[-vmax:0, 1:vmax + 1]
    values = rng.choice(nonzero, len(indices)).astype(np.int16)
    results = rng.choice([0.0, 0.5, 1.0], n)
    return offset, indptr, indices, values, results


def oracle_loss(table, w: np.ndarray, k_cp: float, scale: int, sample_w=None, rows=None) -> float:  # type: ignore[no-untyped-def]
    """E from the definition, one position at a time, in plain Python."""
    offset, indptr, indices, values, results = table
    rows = range(len(offset)) if rows is None else rows
    total = den = 0.0
    for r in rows:
        q = int(offset[r]) + sum(float(w[indices[j]]) * int(values[j]) for j in range(indptr[r], indptr[r + 1]))
        sig = 1.0 / (1.0 + math.exp(-k_cp / scale * q))
        s = 1.0 if sample_w is None else float(sample_w[r])
        total += s * (float(results[r]) - sig) ** 2
        den += s
    return total / den


def test_loss_equals_plain_python_oracle() -> None:
    rng = np.random.default_rng(1)
    table = random_table(rng, 300, 40)
    w = rng.integers(-300, 300, 40).astype(np.int32)
    e, _ = texel.loss_and_gradient(*table, w, 0.01, SCALE)
    assert e == pytest.approx(oracle_loss(table, w, 0.01, SCALE), rel=1e-12)
    assert texel.loss(*table, w, 0.01, SCALE) == e


def test_gradient_equals_central_finite_differences() -> None:
    rng = np.random.default_rng(2)
    table = random_table(rng, 300, 40)
    w = rng.uniform(-300, 300, 40)
    k = 0.01
    _, grad = texel.loss_and_gradient(*table, w, k, SCALE)
    h = 1e-2  # weight units; K_eu * h * |value| <= 2e-5, so the O(h^2) error is far below rel 1e-6
    for i in range(40):
        e = np.zeros(40)
        e[i] = h
        fd = (texel.loss(*table, w + e, k, SCALE) - texel.loss(*table, w - e, k, SCALE)) / (2 * h)
        assert fd == pytest.approx(grad[i], rel=1e-6, abs=1e-12)
    assert np.count_nonzero(grad) == 40


def test_int32_path_equals_float_path_bit_for_bit_on_integer_weights() -> None:
    rng = np.random.default_rng(3)
    table = random_table(rng, 300, 40)
    w = rng.integers(-2000, 2000, 40).astype(np.int32)
    e_int, g_int = texel.loss_and_gradient(*table, w, 0.0065, SCALE)
    e_flt, g_flt = texel.loss_and_gradient(*table, w.astype(np.float64), 0.0065, SCALE)
    assert e_int == e_flt and np.array_equal(g_int, g_flt)
    assert np.array_equal(texel.scores(*table[:4], w), texel.scores(*table[:4], w.astype(np.float64)))


def test_sample_weights_equal_repeated_rows_and_mini_batches_take_the_mean_over_rows() -> None:
    rng = np.random.default_rng(4)
    table = random_table(rng, 200, 30)
    w = rng.uniform(-300, 300, 30)
    mult = rng.integers(0, 4, 200)
    mult[0] = 1
    repeated = np.repeat(np.arange(200, dtype=np.int64), mult)
    e_w, g_w = texel.loss_and_gradient(*table, w, 0.01, SCALE, mult.astype(np.float64))
    e_r, g_r = texel.loss_and_gradient(*table, w, 0.01, SCALE, rows=repeated)
    assert e_w == pytest.approx(e_r, rel=1e-12)
    np.testing.assert_allclose(g_w, g_r, rtol=1e-10, atol=1e-18)
    batch = rng.choice(200, 37, replace=False).astype(np.int64)
    assert texel.loss(*table, w, 0.01, SCALE, rows=batch) == pytest.approx(
        oracle_loss(table, w, 0.01, SCALE, rows=batch), rel=1e-12)
    sw = rng.random(200)
    assert texel.loss(*table, w, 0.01, SCALE, sw, rows=batch) == pytest.approx(
        oracle_loss(table, w, 0.01, SCALE, sample_w=sw, rows=batch), rel=1e-12)


def test_results_do_not_depend_on_the_thread_count() -> None:
    rng = np.random.default_rng(5)
    table = random_table(rng, 40_000, 60)  # 64 chunks of 625 rows
    for w in (rng.integers(-300, 300, 60).astype(np.int32), rng.uniform(-300, 300, 60)):
        batch = rng.integers(0, 40_000, 3000).astype(np.int64)
        with threads(1):
            e1, g1 = texel.loss_and_gradient(*table, w, 0.01, SCALE)
            b1 = texel.loss_and_gradient(*table, w, 0.01, SCALE, rows=batch)
            l1 = texel.loss(*table, w, 0.01, SCALE)
        with threads(2):
            e2, g2 = texel.loss_and_gradient(*table, w, 0.01, SCALE)
            b2 = texel.loss_and_gradient(*table, w, 0.01, SCALE, rows=batch)
            l2 = texel.loss(*table, w, 0.01, SCALE)
        assert e1 == e2 and np.array_equal(g1, g2)
        assert b1[0] == b2[0] and np.array_equal(b1[1], b2[1])
        assert l1 == l2 == e1


def scored_table(rng: np.random.Generator, n: int):  # type: ignore[no-untyped-def]
    """A table and integer weights whose scores spread over a few hundred centipawns."""
    table = random_table(rng, n, 40, fixed_share=0.0)
    w = rng.integers(-600, 600, 40).astype(np.int32)
    q = texel.scores(*table[:4], w)
    return table, w, q


def test_fit_k_recovers_k_from_exact_targets() -> None:
    rng = np.random.default_rng(6)
    table, w, q = scored_table(rng, 5000)
    for k0 in (0.0035, 0.0065, 0.02):
        results = 1.0 / (1.0 + np.exp(-k0 / SCALE * q))
        k = texel.fit_k(*table[:4], results, w, SCALE)
        assert k == pytest.approx(k0, rel=1e-6)  # measured ~1e-10; the brief asked for 1e-3


def test_fit_k_recovers_k_from_noisy_game_results_within_five_percent() -> None:
    # R in {0, 0.5, 1} with mean sigma(K0 q): the mean of two Bernoulli draws. The least-squares
    # K is then K0 up to sampling noise: over five other seeds the error was 0.1% to 2.9% at
    # N = 20,000 (a standard error near 2%); the bound is 5%.
    rng = np.random.default_rng(7)
    table, w, q = scored_table(rng, 20_000)
    k0 = 0.0065
    p = 1.0 / (1.0 + np.exp(-k0 / SCALE * q))
    results = ((rng.random(len(q)) < p).astype(np.float64) + (rng.random(len(q)) < p)) / 2.0
    k = texel.fit_k(*table[:4], results, w, SCALE)
    assert k == pytest.approx(k0, rel=0.05)
    # fit_k_scores on the same scores is the same search
    assert texel.fit_k_scores(q, results, SCALE) == k


def test_fit_k_refuses_a_minimum_at_the_end_of_the_bracket() -> None:
    rng = np.random.default_rng(8)
    table, w, q = scored_table(rng, 500)
    draws = np.full(len(q), 0.5)  # E(K) is smallest at K -> 0
    with pytest.raises(texel.KBracketError):
        texel.fit_k(*table[:4], draws, w, SCALE)
    exact = 1.0 / (1.0 + np.exp(-0.0065 / SCALE * q))
    with pytest.raises(texel.KBracketError):
        texel.fit_k_scores(q, exact, SCALE, lo=0.01, hi=0.5)


def test_bad_input_is_refused_with_a_value_error() -> None:
    rng = np.random.default_rng(9)
    offset, indptr, indices, values, results = random_table(rng, 50, 10)
    w = np.zeros(10, dtype=np.int32)
    with pytest.raises(ValueError, match="indices"):
        texel.loss(offset, indptr, indices, values, results, np.zeros(5, dtype=np.int32), 0.01, SCALE)
    with pytest.raises(ValueError, match="results"):
        texel.loss(offset, indptr, indices, values, results * 2, w, 0.01, SCALE)
    with pytest.raises(ValueError, match="offset"):
        texel.loss(offset.astype(np.int32), indptr, indices, values, results, w, 0.01, SCALE)
    with pytest.raises(ValueError, match="rows"):
        texel.loss(offset, indptr, indices, values, results, w, 0.01, SCALE, rows=np.array([50], dtype=np.int64))
    with pytest.raises(ValueError, match="k_cp"):
        texel.loss(offset, indptr, indices, values, results, w, 0.0, SCALE)
    with pytest.raises(ValueError, match="NaN"):
        texel.loss(offset, indptr, indices, values, results, np.full(10, np.nan), 0.01, SCALE)


def test_penalties() -> None:
    w = np.array([3.0, -4.0, 5.0])
    mask = np.array([True, True, False])
    assert texel.l2_penalty(w, 0.5, mask) == 12.5
    assert texel.l1_penalty(w, 0.5, mask) == 3.5
