"""objectives/: MMTO's loss kernel against a plain-Python oracle and finite differences; the
grid-adjacent update's guarantees (constraint exact, L1 to zero, frozen weights fixed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuner.training.optim.grid import grid_adjacent_step, l1_penalty
from objectives.mmto import loss_and_gradient, objective, sweep_loss


def random_table(rng: np.random.Generator, positions: int, n_w: int):  # type: ignore[no-untyped-def]
    """A random stored sweep: 2..12 rows per position, a few signed features per row, and now
    and then a row with a fixed (mate/draw) score and no features."""
    counts = rng.integers(2, 13, positions)
    pos_ptr = np.zeros(positions + 1, dtype=np.int64)
    np.cumsum(counts, out=pos_ptr[1:])
    rows = int(pos_ptr[-1])
    played = pos_ptr[:-1] + rng.integers(0, counts)
    offset = np.zeros(rows, dtype=np.int64)
    nnz = rng.integers(0, 8, rows)
    fixed = rng.random(rows) < 0.05
    nnz[fixed] = 0
    offset[fixed] = rng.integers(-3000, 3000, int(fixed.sum()))
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(nnz, out=indptr[1:])
    indices = np.concatenate([np.sort(rng.choice(n_w, k, replace=False)) for k in nnz]).astype(np.int16)
    values = rng.integers(-48, 49, len(indices)).astype(np.int16)
    return pos_ptr, played.astype(np.int64), offset, indptr, indices, values


def oracle_losses(table, w: np.ndarray, slope_cp: float, scale: int) -> list[float]:  # type: ignore[no-untyped-def]
    """J_main of each position, computed directly from the definition."""
    pos_ptr, played, offset, indptr, indices, values = table
    out = []
    for p in range(len(pos_ptr) - 1):
        total = 0.0
        scores = {}
        for r in range(pos_ptr[p], pos_ptr[p + 1]):
            s = int(offset[r]) + sum(int(w[indices[j]]) * int(values[j]) for j in range(indptr[r], indptr[r + 1]))
            scores[r] = s / scale
        for r, s in scores.items():
            if r != played[p]:
                total += 1.0 / (1.0 + math.exp(-slope_cp * (s - scores[played[p]])))
        out.append(total)
    return out


def test_loss_equals_plain_python_oracle() -> None:
    rng = np.random.default_rng(1)
    table = random_table(rng, 200, 40)
    w = rng.integers(-100, 100, 40).astype(np.int32)
    j, _ = loss_and_gradient(*table, w, 0.02, 24)
    assert j == pytest.approx(np.mean(oracle_losses(table, w, 0.02, 24)), rel=1e-12)


def test_gradient_equals_central_finite_differences_of_the_loss() -> None:
    # J is smooth in w for fixed leaves; the weights are integers, so the difference is taken on
    # a loss whose scores are 1000 times finer (w * 1000, slope / 1000 gives the same J)
    rng = np.random.default_rng(2)
    table = random_table(rng, 150, 30)
    w = rng.integers(-50, 50, 30).astype(np.int64) * 1000
    _, grad = loss_and_gradient(*table, w.astype(np.int32), 0.02 / 1000, 24)
    for i in range(30):
        e = np.zeros(30, dtype=np.int64)
        e[i] = 1
        jp, _ = loss_and_gradient(*table, (w + e).astype(np.int32), 0.02 / 1000, 24)
        jm, _ = loss_and_gradient(*table, (w - e).astype(np.int32), 0.02 / 1000, 24)
        assert (jp - jm) / 2 == pytest.approx(grad[i], rel=1e-5, abs=1e-12)


def oracle_objective(table, w: np.ndarray, slope_cp: float, scale: int, results: np.ndarray,  # type: ignore[no-untyped-def]
                     mu: float, k_cp: float) -> tuple[float, float]:
    """(mean softmax cross-entropy of the played moves, mean (R - sigma(K s_d))^2 over the
    positions with a result), from the definitions with plain floats."""
    pos_ptr, played, offset, indptr, indices, values = table
    ce, err, n_res = [], 0.0, 0
    for p in range(len(pos_ptr) - 1):
        scores = {}
        for r in range(pos_ptr[p], pos_ptr[p + 1]):
            s = int(offset[r]) + sum(int(w[indices[j]]) * int(values[j]) for j in range(indptr[r], indptr[r + 1]))
            scores[r] = s / scale
        z = sum(math.exp(slope_cp * s) for s in scores.values())
        ce.append(-math.log(math.exp(slope_cp * scores[played[p]]) / z))
        if not math.isnan(results[p]):
            err += (results[p] - 1.0 / (1.0 + math.exp(-k_cp * scores[played[p]]))) ** 2
            n_res += 1
    return float(np.mean(ce)), err / n_res


def test_softmax_and_result_terms_equal_plain_python_oracle() -> None:
    rng = np.random.default_rng(11)
    table = random_table(rng, 120, 30)
    w = rng.integers(-10, 10, 30).astype(np.int32)  # scores stay small enough for exp()
    results = rng.choice([0.0, 0.5, 1.0, np.nan], 120)
    o = objective(*table, w, 0.02, 24, loss="softmax", results=results, mu=0.7, k_cp=0.006)
    ce, err = oracle_objective(table, w, 0.02, 24, results, 0.7, 0.006)
    assert o.move == pytest.approx(ce, rel=1e-10)
    assert o.result == pytest.approx(err, rel=1e-10)
    assert o.total == pytest.approx(ce + 0.7 * err, rel=1e-12)


@pytest.mark.parametrize("loss", ["sigmoid", "softmax"])
def test_hybrid_gradient_equals_central_finite_differences(loss: str) -> None:
    # as above: weights 1000 times finer, slope and K 1000 times smaller, the same objective
    rng = np.random.default_rng(12)
    table = random_table(rng, 150, 30)
    results = rng.choice([0.0, 0.5, 1.0, np.nan], 150)
    w = rng.integers(-50, 50, 30).astype(np.int64) * 1000
    kw = dict(loss=loss, results=results, mu=2.5, k_cp=0.006 / 1000)
    g = objective(*table, w.astype(np.int32), 0.02 / 1000, 24, **kw).gradient
    assert np.any(g != 0)
    for i in range(30):
        e = np.zeros(30, dtype=np.int64)
        e[i] = 1
        jp = objective(*table, (w + e).astype(np.int32), 0.02 / 1000, 24, **kw).total
        jm = objective(*table, (w - e).astype(np.int32), 0.02 / 1000, 24, **kw).total
        assert (jp - jm) / 2 == pytest.approx(g[i], rel=1e-5, abs=1e-12)


def test_loss_and_gradient_do_not_depend_on_the_thread_count() -> None:
    from search.tree.search_api import threads

    table = random_table(np.random.default_rng(3), 3000, 60)
    w = np.random.default_rng(4).integers(-80, 80, 60).astype(np.int32)
    with threads(1):
        j1, g1 = loss_and_gradient(*table, w, 0.02, 24)
    with threads(2):
        j2, g2 = loss_and_gradient(*table, w, 0.02, 24)
    assert j1 == j2 and np.array_equal(g1, g2)


@pytest.mark.parametrize("loss", ["sigmoid", "softmax"])
def test_sweep_loss_matches_the_table_loss_when_every_row_is_kept(loss: str) -> None:
    rng = np.random.default_rng(5)
    pos_ptr, played, offset, indptr, indices, values = random_table(rng, 100, 20)
    w = rng.integers(-100, 100, 20).astype(np.int32)
    scores = offset.copy()
    for r in range(len(offset)):
        scores[r] += int(np.dot(w[indices[indptr[r]:indptr[r + 1]]].astype(np.int64), values[indptr[r]:indptr[r + 1]]))
    j, _ = loss_and_gradient(pos_ptr, played, offset, indptr, indices, values, w, 0.03, 24, loss=loss)
    assert sweep_loss(pos_ptr, played, scores, 0.03, 24, loss=loss) == pytest.approx(j, rel=1e-12)


def test_positions_marked_negative_are_skipped() -> None:
    rng = np.random.default_rng(6)
    table = random_table(rng, 50, 10)
    pos_ptr, played, *rest = table
    w = rng.integers(-100, 100, 10).astype(np.int32)
    skipped = played.copy()
    skipped[::2] = -1
    j_half, _ = loss_and_gradient(pos_ptr, skipped, *rest, w, 0.02, 24)
    assert j_half == pytest.approx(np.mean(oracle_losses(table, w, 0.02, 24)[1::2]), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9), st.integers(1, 4))
def test_constraint_holds_exactly_and_moves_in_pairs(seed: int, n_constrained: int, step: int) -> None:
    rng = np.random.default_rng(seed)
    n = 20
    w = rng.integers(-500, 500, n).astype(np.int32)
    grad = rng.integers(-3, 4, n).astype(np.float64)  # many ties on purpose
    constrained = np.zeros(n, dtype=bool)
    constrained[:n_constrained] = True
    trainable = rng.random(n) < 0.8
    out = grid_adjacent_step(w, grad, step=step, trainable=trainable, constrained=constrained)
    c = constrained & trainable
    assert out.weights[c].astype(np.int64).sum() == w[c].astype(np.int64).sum()
    moved = out.weights[c].astype(np.int64) - w[c]
    assert np.all(np.isin(moved, (-step, 0, step)))
    assert np.count_nonzero(moved > 0) == np.count_nonzero(moved < 0) <= c.sum() // 2
    # rising weights have derivatives at or below the median, falling ones at or above it
    if c.any():
        assert np.all(grad[c][moved > 0] <= out.lambda0) and np.all(grad[c][moved < 0] >= out.lambda0)
    assert np.array_equal(out.weights[~trainable], w[~trainable])


def test_free_weights_move_by_the_sign_of_the_gradient() -> None:
    w = np.array([10, 10, 10, 0], dtype=np.int32)
    grad = np.array([0.5, -0.1, 0.0, 1e-9])
    out = grid_adjacent_step(w, grad, step=3, trainable=np.ones(4, dtype=bool))
    assert list(out.weights) == [7, 13, 10, -3] and out.moved == 3


def test_l1_walks_unused_weights_to_zero_and_keeps_them_there() -> None:
    n = 6
    w = np.array([7, -5, 3, 0, 40, -40], dtype=np.int32)
    l1_mask = np.array([True, True, True, True, False, True])
    trainable = np.ones(n, dtype=bool)
    grad = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -5e-4])  # only the last has evidence, above lambda
    for _ in range(10):
        w = grid_adjacent_step(w, grad, step=2, trainable=trainable, l1=1e-4, l1_mask=l1_mask).weights
    assert list(w[:4]) == [0, 0, 0, 0]  # never stepped across zero (7 -> 5 -> 3 -> 1 -> 0)
    assert w[4] == 40  # not under L1, no gradient: stays
    assert w[5] == -40 + 20  # evidence outweighs lambda: keeps moving
    assert l1_penalty(w, 1e-4, l1_mask) == pytest.approx(1e-4 * 20)


def test_l1_holds_a_zero_weight_against_weak_evidence() -> None:
    w = np.zeros(2, dtype=np.int32)
    out = grid_adjacent_step(w, np.array([5e-5, -2e-4]), step=1, trainable=np.ones(2, dtype=bool),
                             l1=1e-4, l1_mask=np.ones(2, dtype=bool))
    assert list(out.weights) == [0, 1]


def test_bad_updates_are_refused() -> None:
    w = np.zeros(3, dtype=np.int32)
    t = np.ones(3, dtype=bool)
    with pytest.raises(ValueError, match="overlap"):
        grid_adjacent_step(w, np.zeros(3), step=1, trainable=t, l1=1.0, l1_mask=t, constrained=t)
    with pytest.raises(ValueError, match="NaN"):
        grid_adjacent_step(w, np.array([0.0, np.nan, 0.0]), step=1, trainable=t)
    with pytest.raises(ValueError, match="step"):
        grid_adjacent_step(w, np.zeros(3), step=0, trainable=t)
