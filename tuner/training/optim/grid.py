"""MMTO's grid-adjacent update with L1 regularisation and an equality constraint.

Hoki & Kaneko, JAIR 49:527-568, 2014 (``docs/references.md`` [HK2014]: J_C, J_R and the update):

* grid-adjacent update: ``w_i(t+1) = w_i(t) - h * sign(dJ/dw_i)`` on integer weights;
* J_R = lambda_1 * |w''|_1 on a subset w'': its derivative adds ``lambda_1 * sign(w_i)``;
* J_C = lambda_0 * g(w') with g(w') = sum(w') - const on a subset w': lambda_0 is set to the
  median of the partial derivatives of w', so that after the step n weights rise by h, n fall
  by h and (for |w'| = 2n + 1) one stays: the sum, hence the constraint, holds exactly.

Two details the paper leaves open are fixed here so that the guarantees hold exactly:

* L1 at zero: a weight at 0 moves only when the main gradient outweighs lambda_1
  (``|g_i| > lambda_1``, the subgradient condition); a step that would cross zero stops at 0.
  So a weight that the data never touches (g_i = 0) walks to 0 and stays there.
* The constraint with ties: the constrained weights are sorted by their partial derivative
  (stable, by index), and the k-th lowest rises together with the k-th highest falling, only
  when their derivatives differ. This is the median rule with lambda_0 the median, and keeps
  the number of rises equal to the number of falls even when several derivatives tie.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StepResult:
    """One update: the new weights, the multiplier and what moved."""

    weights: np.ndarray  # int32[N]
    lambda0: float  # median of the constrained partial derivatives (0.0 without a constraint; the
    # last subset's with several)
    moved: int  # number of weights that changed


def grid_adjacent_step(w: np.ndarray, grad: np.ndarray, *, step: int, trainable: np.ndarray,
                       l1: float = 0.0, l1_mask: np.ndarray | None = None,
                       constrained: np.ndarray | Sequence[np.ndarray] | None = None) -> StepResult:
    """Apply one grid-adjacent step to integer weights.

    Parameters
    ----------
    w : int32[N] current weights.
    grad : float64[N] partial derivatives of the main objective (without J_R and J_C).
    step : h, a positive integer (weight units).
    trainable : bool[N]; other weights never change.
    l1 : lambda_1 >= 0, applied to ``l1_mask`` (bool[N]).
    constrained : bool[N], the subset whose sum is held constant, or a sequence of disjoint
        such subsets, each with its own constraint (its own multiplier); must not overlap
        ``l1_mask``.
    """
    w = np.asarray(w, dtype=np.int32)
    grad = np.asarray(grad, dtype=np.float64)
    n = w.shape[0]
    if grad.shape != (n,) or trainable.shape != (n,):
        raise ValueError("weights, gradient and masks must have the same length")
    if step < 1:
        raise ValueError(f"step must be a positive integer, not {step}")
    if l1 < 0:
        raise ValueError(f"l1 must be >= 0, not {l1}")
    if not np.all(np.isfinite(grad)):
        raise ValueError("the gradient has NaN or infinite entries")
    l1_mask = np.zeros(n, dtype=bool) if l1_mask is None else np.asarray(l1_mask, dtype=bool)
    groups = _constraint_groups(constrained, n)
    constrained = np.zeros(n, dtype=bool)
    for g in groups:
        if np.any(constrained & g):
            raise ValueError("the constrained subsets must be disjoint")
        constrained |= g
    if np.any(l1_mask & constrained):
        raise ValueError("the L1 subset and the constrained subset must not overlap")
    new = w.astype(np.int64)
    free = trainable & ~constrained

    # plain weights: w -= h * sign(g)
    plain = free & ~(l1_mask & (l1 > 0))
    new[plain] -= step * np.sign(grad[plain]).astype(np.int64)

    # L1 weights: subgradient of g + l1 * |w|, never stepping across zero
    reg = free & l1_mask & (l1 > 0)
    if np.any(reg):
        wi = new[reg]
        g = grad[reg] + l1 * np.sign(wi)
        at_zero = wi == 0
        g[at_zero] = np.where(np.abs(grad[reg][at_zero]) > l1, grad[reg][at_zero], 0.0)
        moved = wi - step * np.sign(g).astype(np.int64)
        crossed = (wi != 0) & (np.sign(moved) != np.sign(wi))
        moved[crossed] = 0
        new[reg] = moved

    # constrained weights, each subset on its own: pair the k-th lowest derivative with the
    # k-th highest
    lam = 0.0
    for g in groups:
        idx = np.flatnonzero(trainable & g)
        if len(idx) == 0:
            continue
        lam = float(np.median(grad[idx]))
        order = idx[np.argsort(grad[idx], kind="stable")]
        for k in range(len(order) // 2):
            lo, hi = order[k], order[len(order) - 1 - k]
            if grad[lo] < grad[hi]:
                new[lo] += step
                new[hi] -= step

    if np.any(np.abs(new) >= 2**31):
        raise OverflowError("a weight left the 32-bit range")
    out = new.astype(np.int32)
    return StepResult(out, lam, int(np.count_nonzero(out != w)))


def _constraint_groups(constrained: np.ndarray | Sequence[np.ndarray] | None, n: int) -> list[np.ndarray]:
    if constrained is None:
        return []
    if isinstance(constrained, np.ndarray) and constrained.ndim == 1:
        groups = [constrained]
    else:
        groups = list(constrained)
    out = [np.asarray(g, dtype=bool) for g in groups]
    if any(g.shape != (n,) for g in out):
        raise ValueError("weights, gradient and masks must have the same length")
    return out


def l1_penalty(w: np.ndarray, l1: float, l1_mask: np.ndarray) -> float:
    """J_R = lambda_1 * sum(|w_i|) over ``l1_mask``."""
    return float(l1 * np.abs(np.asarray(w, dtype=np.int64)[l1_mask]).sum())
