"""The move model's loss (objectives/move_choice.py): its value against a plain softmax written
here, its gradient against central finite differences, and results independent of threads."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from objectives.move_choice import MoveChoiceSet, loss_and_gradient, mean_loss, row_scores
from search.tree.search_api import threads

N_FEATURES = 40
GROUPS = 5


def synthetic(n_positions: int, seed: int) -> MoveChoiceSet:
    """Positions of 1 to 30 rows, each row with up to GROUPS active features (some slots -1,
    repeated features across rows), and a played row per position."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 31, n_positions)
    pos_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    slots = rng.integers(0, N_FEATURES, (int(pos_ptr[-1]), GROUPS)).astype(np.int16)
    slots[rng.random(slots.shape) < 0.3] = -1
    played = np.array([rng.integers(0, c) for c in counts], dtype=np.int64)
    return MoveChoiceSet(pos_ptr, played, slots)


def plain_loss(data: MoveChoiceSet, w: np.ndarray, l2: float) -> float:
    total = 0.0
    for p in range(len(data)):
        scores = [sum(w[k] for k in data.slots[r] if k >= 0) for r in range(data.pos_ptr[p], data.pos_ptr[p + 1])]
        top = max(scores)
        total += math.log(sum(math.exp(s - top) for s in scores)) + top - scores[data.played[p]]
    return total / len(data) + 0.5 * l2 * float(w @ w)


def test_the_loss_is_the_plain_softmax_cross_entropy() -> None:
    data = synthetic(60, 1)
    w = np.random.default_rng(2).normal(0, 1, N_FEATURES)
    for l2 in (0.0, 0.01):
        loss, _ = loss_and_gradient(data, w, l2=l2)
        assert loss == pytest.approx(plain_loss(data, w, l2), rel=1e-12)
    assert mean_loss(data, row_scores(data, w)) == pytest.approx(plain_loss(data, w, 0.0), rel=1e-12)
    # the uniform model's loss is the mean log of the number of moves
    uniform, _ = loss_and_gradient(data, np.zeros(N_FEATURES))
    assert uniform == pytest.approx(float(np.mean(np.log(np.diff(data.pos_ptr)))), rel=1e-12)


def test_the_gradient_matches_central_finite_differences() -> None:
    data = synthetic(80, 3)
    w = np.random.default_rng(4).normal(0, 0.7, N_FEATURES)
    rows = np.arange(0, 80, 3, dtype=np.int64)
    for l2 in (0.0, 0.05):
        _, grad = loss_and_gradient(data, w, l2=l2, rows=rows)
        h = 1e-6
        for i in range(N_FEATURES):
            e = np.zeros(N_FEATURES)
            e[i] = h
            up, _ = loss_and_gradient(data, w + e, l2=l2, rows=rows)
            down, _ = loss_and_gradient(data, w - e, l2=l2, rows=rows)
            assert grad[i] == pytest.approx((up - down) / (2 * h), abs=1e-8), i


def test_extreme_scores_stay_finite() -> None:
    data = synthetic(20, 5)
    w = np.zeros(N_FEATURES)
    w[::2] = 800.0  # exp(800) overflows; the kernel works relative to each position's best score
    loss, grad = loss_and_gradient(data, w)
    assert math.isfinite(loss) and np.all(np.isfinite(grad))


def test_results_do_not_depend_on_the_number_of_threads() -> None:
    data = synthetic(2000, 6)  # several chunks
    w = np.random.default_rng(7).normal(0, 1, N_FEATURES)
    with threads(1):
        one = loss_and_gradient(data, w)
    with threads(numba.config.NUMBA_NUM_THREADS):
        many = loss_and_gradient(data, w)
    assert one[0] == many[0]
    np.testing.assert_array_equal(one[1], many[1])


def test_bad_arrays_are_refused() -> None:
    data = synthetic(5, 8)
    with pytest.raises(ValueError, match="played"):
        MoveChoiceSet(data.pos_ptr, data.played + 100, data.slots)
    with pytest.raises(ValueError, match="pos_ptr"):
        MoveChoiceSet(data.pos_ptr[:-1], data.played[:-1], data.slots)
    with pytest.raises(ValueError, match="beyond"):
        loss_and_gradient(data, np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        loss_and_gradient(data, np.full(N_FEATURES, np.nan))
