"""tuner/optim: Adam and SGD against plain-Python transcriptions of their rules; masks, L1 and
L2 at their fixed points; exact resumption from JSON state; rounding to search weights; and
synthetic recovery of known weights through Texel's objective, full-batch and mini-batch."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from objectives import texel
from search.tree.search_api import threads
from tuner.training.optim import SGD, Adam, OptimStateError, optimizer_from_state, to_search_weights

SCALE = 24


def adam_oracle(w: list[float], grads: list[list[float]], lr: float, b1: float, b2: float, eps: float,
                trainable: list[bool]) -> list[float]:
    """Kingma & Ba 2015, Algorithm 1, one scalar at a time."""
    m = [0.0] * len(w)
    v = [0.0] * len(w)
    w = list(w)
    for t, g in enumerate(grads, start=1):
        for i in range(len(w)):
            if not trainable[i]:
                continue
            m[i] = b1 * m[i] + (1.0 - b1) * g[i]
            v[i] = b2 * v[i] + (1.0 - b2) * (g[i] * g[i])
            m_hat = m[i] / (1.0 - b1**t)
            v_hat = v[i] / (1.0 - b2**t)
            w[i] = w[i] - lr * m_hat / (math.sqrt(v_hat) + eps)
    return w


def test_adam_follows_algorithm_1_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    n = 12
    trainable = rng.random(n) < 0.75
    w0 = rng.normal(0, 50, n)
    grads = [rng.normal(0, 1e-4, n) for _ in range(30)]
    opt = Adam(n, lr=0.7, beta1=0.85, beta2=0.995, eps=1e-9, trainable=trainable)
    w = w0.copy()
    for g in grads:
        w_next = opt.step(w, g)
        assert w_next is not w
        w = w_next
    want = adam_oracle(w0.tolist(), [g.tolist() for g in grads], 0.7, 0.85, 0.995, 1e-9, trainable.tolist())
    assert w.tolist() == want
    assert np.array_equal(w[~trainable], w0[~trainable])


def test_sgd_with_momentum_follows_its_rule_bit_for_bit() -> None:
    rng = np.random.default_rng(2)
    n = 10
    w0 = rng.normal(0, 50, n)
    grads = [rng.normal(0, 1.0, n) for _ in range(20)]
    opt = SGD(n, lr=0.05, momentum=0.9)
    w = w0.copy()
    for g in grads:
        w = opt.step(w, g)
    b = np.zeros(n)
    want = w0.copy()
    for g in grads:
        b = 0.9 * b + g
        want = want - 0.05 * b
    assert np.array_equal(w, want)


@pytest.mark.parametrize("make", [lambda: Adam(3, lr=0.05), lambda: SGD(3, lr=0.05)], ids=["adam", "sgd"])
def test_l1_and_l2_reach_the_minimiser_of_the_penalised_objective(make) -> None:  # type: ignore[no-untyped-def]
    # E(w) = sum (w - 3)^2 per weight. Weight 0 takes L1 = 1: argmin (w-3)^2 + |w| = 2.5.
    # Weight 1 takes L2 = 0.5: argmin (w-3)^2 + 0.5 w^2 = 2. Weight 2 is frozen.
    opt = make()
    opt.l1, opt.l2 = 1.0, 0.5
    opt.l1_mask = np.array([True, False, False])
    opt.l2_mask = np.array([False, True, False])
    opt.trainable = np.array([True, True, False])
    w = np.array([-4.0, 8.0, 7.0])
    lr0 = opt.lr
    for s in range(3000):
        opt.lr = lr0 * 0.998**s  # a decaying step lets Adam settle on its fixed point
        w = opt.step(w, 2.0 * (w - 3.0))
    assert w[0] == pytest.approx(2.5, abs=1e-3)
    assert w[1] == pytest.approx(2.0, abs=1e-3)
    assert w[2] == 7.0
    assert opt.penalty(w) == pytest.approx(2.5 + 0.5 * 4.0, abs=1e-2)


@pytest.mark.parametrize("cls", [Adam, SGD])
def test_l1_sends_weights_without_gradient_to_exactly_zero(cls) -> None:  # type: ignore[no-untyped-def]
    w = np.array([5.0, -3.0, 0.25, 4.0])
    mask = np.array([True, True, True, False])
    opt = cls(4, lr=0.5, l1=1.0, l1_mask=mask)
    for _ in range(20):
        w = opt.step(w, np.zeros(4))
    assert w.tolist() == [0.0, 0.0, 0.0, 4.0]
    plain = cls(4, lr=0.5)
    assert plain.step(np.array([5.0, -3.0, 0.25, 4.0]), np.zeros(4)).tolist() == [5.0, -3.0, 0.25, 4.0]


def test_step_refuses_nan_and_wrong_shapes() -> None:
    opt = Adam(3, lr=1.0)
    with pytest.raises(ValueError, match="NaN"):
        opt.step(np.zeros(3), np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="shape"):
        opt.step(np.zeros(4), np.zeros(4))


def test_to_search_weights_rounds_half_to_even_and_clips() -> None:
    w = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 7.6, -9e12, 9e12])
    out = to_search_weights(w)
    assert out.dtype == np.int32
    assert out.tolist() == [0, 2, 2, 0, -2, -2, 2, 8, -(2**31), 2**31 - 1]
    lo = np.array([-1, -1, -1, -1, -1, -1, -1, 0, -5, 0])
    assert to_search_weights(w, lo, 5).tolist() == [0, 2, 2, 0, -1, -1, 2, 5, -5, 5]
    with pytest.raises(ValueError, match="NaN"):
        to_search_weights(np.array([np.nan]))


# ----------------------------------------------------------------- Texel recovery and resume


def synthetic(seed: int, n: int = 2000, n_w: int = 40, scale: float = 300.0, k_cp: float = 0.01):  # type: ignore[no-untyped-def]
    """Random sparse rows (6..10 features, values in +-1..4), true weights w* uniform in
    [-scale, scale] eval units, continuous targets R = sigma(K q(w*)): E(w*) = 0 exactly."""
    rng = np.random.default_rng(seed)
    nnz = rng.integers(6, 11, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nnz, out=indptr[1:])
    indices = np.concatenate([np.sort(rng.choice(n_w, k, replace=False)) for k in nnz]).astype(np.int16)
    values = rng.choice(np.r_[-4:0, 1:5], len(indices)).astype(np.int16)
    offset = np.zeros(n, dtype=np.int64)
    w_star = rng.uniform(-scale, scale, n_w)
    q = texel.scores(offset, indptr, indices, values, w_star)
    results = 1.0 / (1.0 + np.exp(-k_cp / SCALE * q))
    return (offset, indptr, indices, values, results), w_star, k_cp


def batches(seed: int, n: int, size: int, count: int) -> list[np.ndarray]:
    """``count`` mini-batches of ``size`` rows: seeded permutations cut in order (epochs)."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < count:
        perm = rng.permutation(n).astype(np.int64)
        out.extend(perm[i:i + size] for i in range(0, n - size + 1, size))
    return out[:count]


def run_adam(table, k_cp: float, steps: int, rows: list[np.ndarray] | None, lr0: float = 20.0,
             lr1: float = 0.5) -> tuple[np.ndarray, float]:  # type: ignore[no-untyped-def]
    """Adam from zeros with lr decaying geometrically from lr0 to lr1 (weight units)."""
    n_w = 40
    opt = Adam(n_w, lr=lr0)
    w = np.zeros(n_w)
    # one thread: these are ~100 kernel calls on 200..2000 rows each, where the cost of waking
    # a second OpenMP thread dominates (and the 2 cores are shared); results are identical
    with threads(1):
        texel.check_table(*table, n_w)
        for s in range(steps):
            opt.lr = lr0 * (lr1 / lr0) ** (s / steps)
            _, g = texel.loss_and_gradient(*table, w, k_cp, SCALE, rows=None if rows is None else rows[s],
                                           validate=False)
            w = opt.step(w, g)
        e = texel.loss(*table, w, k_cp, SCALE)
    return w, e


def test_adam_recovers_the_true_weights_full_batch() -> None:
    table, w_star, k_cp = synthetic(11)
    w, e = run_adam(table, k_cp, 300, None)
    # measured: max error ~5e-5 eval units after 300 steps (2e-2 after 200); bound 0.1% of 300
    assert np.max(np.abs(w - w_star)) < 0.3
    assert e < 1e-12


def test_adam_recovers_the_true_weights_with_mini_batches() -> None:
    table, w_star, k_cp = synthetic(12)
    w, e = run_adam(table, k_cp, 300, batches(13, 2000, 200, 300))
    # exact targets: every row's residual vanishes at w*, so batch noise vanishes there too
    assert np.max(np.abs(w - w_star)) < 0.3
    assert e < 1e-12


def train_steps(opt, w: np.ndarray, table, k_cp: float, rows: list[np.ndarray]) -> np.ndarray:  # type: ignore[no-untyped-def]
    for r in rows:
        _, g = texel.loss_and_gradient(*table, w, k_cp, SCALE, rows=r, validate=False)
        w = opt.step(w, g)
    return w


@pytest.mark.parametrize("make", [
    lambda mask, l1m: Adam(40, lr=5.0, beta1=0.8, trainable=mask, l1=1e-6, l1_mask=l1m, l2=1e-9),
    lambda mask, l1m: SGD(40, lr=2e6, momentum=0.9, trainable=mask, l1=1e-6, l1_mask=l1m, l2=1e-9),
], ids=["adam", "sgd"])
def test_resuming_from_json_state_gives_bit_identical_weights(make) -> None:  # type: ignore[no-untyped-def]
    table, _, k_cp = synthetic(21, n=600)
    rng = np.random.default_rng(22)
    mask = rng.random(40) < 0.8
    l1m = rng.random(40) < 0.5
    rows = batches(23, 600, 100, 50)
    w0 = rng.uniform(-50, 50, 40)
    with threads(1):
        straight = train_steps(make(mask, l1m), w0, table, k_cp, rows)

        first = make(mask, l1m)
        w = train_steps(first, w0, table, k_cp, rows[:20])
        text = json.dumps({"optimizer": first.state_dict(), "weights": w.tolist()})
        saved = json.loads(text)
        resumed = optimizer_from_state(saved["optimizer"])
        assert type(resumed) is type(first)
        w = train_steps(resumed, np.array(saved["weights"], dtype=np.float64), table, k_cp, rows[20:])
    assert np.array_equal(w, straight)
    assert not np.array_equal(straight[mask], w0[mask]) and np.array_equal(straight[~mask], w0[~mask])
    # load_state into an existing optimizer is the same as from_state
    other = make(np.ones(40, dtype=bool), None)
    other.load_state(saved["optimizer"])
    assert other.state_dict() == resumed.__class__.from_state(saved["optimizer"]).state_dict()


def test_a_state_of_another_optimizer_is_refused() -> None:
    d = Adam(5, lr=1.0).state_dict()
    with pytest.raises(OptimStateError, match="adam"):
        SGD(5, lr=1.0).load_state(d)
    with pytest.raises(OptimStateError, match="weights"):
        Adam(6, lr=1.0).load_state(d)
    with pytest.raises(OptimStateError, match="version"):
        Adam.from_state({**d, "version": 99})
    with pytest.raises(OptimStateError, match="beta1"):
        Adam.from_state({**d, "beta1": 1.5})
    with pytest.raises(OptimStateError, match="kind"):
        optimizer_from_state({**d, "kind": "rmsprop"})
