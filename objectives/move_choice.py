"""The move model's loss: softmax cross-entropy of the played move over the legal moves, and its
gradient, over arrays of one-hot feature slots.

A position ``p`` has rows ``pos_ptr[p]:pos_ptr[p+1]`` (its legal moves); row ``r`` has slots
``slots[r, :]``, each the index of an active feature (value 1) or -1, and score
``s_r = sum_g w[slots[r, g]]``. With ``d_p`` the played row, the model's probability of row ``r``
is ``pi_r = exp(s_r) / sum_{r' of p} exp(s_r')`` and the loss of position ``p`` is

    L_p(w) = -log pi_{d_p} = logsumexp_{r of p}(s_r) - s_{d_p},

the multinomial logistic (softmax) regression of a choice among alternatives (McFadden's
conditional logit, 1974; the move-probability model of Giraffe, Lai 2015, trained the same way).
Its gradient is ``dL_p/dw_i = sum_{r of p} (pi_r - [r = d_p]) * [i in slots[r]]``. The objective
is the mean over a set of positions plus ``l2 / 2 * |w|^2``.

Kernels run in parallel over chunks of positions and add the chunks' partial sums in chunk order
(:mod:`objectives._kernel_parts`), so their results do not depend on the number of threads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from objectives._kernel_parts import sum_part_rows, sum_parts

#: positions per work item of the parallel kernels (a round value, not tuned)
CHUNK = 256


@njit(cache=True, inline="always")
def _row_scores(slots, a, n, w, out):  # type: ignore[no-untyped-def]
    """``out[:n]`` = the scores of rows ``a .. a+n-1``; returns their maximum."""
    top = -math.inf
    for i in range(n):
        s = 0.0
        for g in range(slots.shape[1]):
            k = slots[a + i, g]
            if k >= 0:
                s += w[k]
        out[i] = s
        if s > top:
            top = s
    return top


@njit(cache=True, parallel=True)
def loss_gradient_kernel(pos_ptr, played, slots, w, rows, max_moves):  # type: ignore[no-untyped-def]
    """``(sum of L_p over the positions in rows, its gradient float64[len(w)])``.

    ``pos_ptr`` int64[P+1], ``played`` int64[P] (the played move's index among its position's
    rows), ``slots`` int16[M, G], ``w`` float64[N], ``rows`` int64[B] (positions to include),
    ``max_moves`` at least the largest number of rows of a position."""
    n_pos = rows.shape[0]
    n_chunks = (n_pos + CHUNK - 1) // CHUNK
    loss_parts = np.zeros(n_chunks, dtype=np.float64)
    grad_parts = np.zeros((n_chunks, w.shape[0]), dtype=np.float64)
    for c in prange(n_chunks):
        scores = np.zeros(max_moves, dtype=np.float64)
        grad = grad_parts[c]
        loss = 0.0
        for j in range(c * CHUNK, min((c + 1) * CHUNK, n_pos)):
            p = rows[j]
            a = pos_ptr[p]
            n = pos_ptr[p + 1] - a
            d = played[p]
            top = _row_scores(slots, a, n, w, scores)
            gap = top - scores[d]
            total = 0.0
            for i in range(n):
                scores[i] = math.exp(scores[i] - top)
                total += scores[i]
            loss += math.log(total) + gap
            for i in range(n):
                q = scores[i] / total - (1.0 if i == d else 0.0)
                for g in range(slots.shape[1]):
                    k = slots[a + i, g]
                    if k >= 0:
                        grad[k] += q
        loss_parts[c] = loss
    return sum_parts(loss_parts), sum_part_rows(grad_parts)


@njit(cache=True, parallel=True)
def scores_kernel(slots, w):  # type: ignore[no-untyped-def]
    """float64[M]: every row's score ``s_r``."""
    m_count = slots.shape[0]
    out = np.zeros(m_count, dtype=np.float64)
    for r in prange(m_count):
        s = 0.0
        for g in range(slots.shape[1]):
            k = slots[r, g]
            if k >= 0:
                s += w[k]
        out[r] = s
    return out


@dataclass(frozen=True)
class MoveChoiceSet:
    """A set of positions for the loss: ``pos_ptr`` int64[P+1], ``played`` int64[P] (the played
    move's index among its position's rows, 0 <= played[p] < rows of p), ``slots`` int16[M, G]."""

    pos_ptr: np.ndarray
    played: np.ndarray
    slots: np.ndarray

    def __post_init__(self) -> None:
        counts = np.diff(self.pos_ptr)
        if (self.pos_ptr.ndim != 1 or len(self.pos_ptr) < 1 or self.pos_ptr[0] != 0 or np.any(counts < 1)
                or self.pos_ptr[-1] != len(self.slots)):
            raise ValueError("pos_ptr must rise from 0 to len(slots) by at least 1 per position")
        if self.played.shape != (len(counts),) or np.any(self.played < 0) or np.any(self.played >= counts):
            raise ValueError("played[p] must index a row of position p")
        if self.slots.ndim != 2:
            raise ValueError("slots must be a 2-d array")

    def __len__(self) -> int:
        return len(self.played)

    @property
    def max_moves(self) -> int:
        return int(np.diff(self.pos_ptr).max(initial=1))


def _check_weights(w: np.ndarray, n_features: int) -> np.ndarray:
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (n_features,) or not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be {n_features} finite numbers")
    return w


def loss_and_gradient(data: MoveChoiceSet, w: np.ndarray, *, l2: float = 0.0,
                      rows: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """The objective ``mean_p L_p(w) + l2 / 2 * |w|^2`` over ``rows`` (positions; default all)
    and its gradient float64[len(w)]. ``w`` must cover every slot index."""
    if data.slots.size and int(data.slots.max()) >= len(w):
        raise ValueError(f"slot index {int(data.slots.max())} beyond the {len(w)} weights")
    w = _check_weights(w, len(w))
    rows = np.arange(len(data), dtype=np.int64) if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return 0.5 * l2 * float(w @ w), l2 * w
    total, grad = loss_gradient_kernel(data.pos_ptr, data.played, data.slots, w, rows, data.max_moves)
    n = len(rows)
    return float(total) / n + 0.5 * l2 * float(w @ w), grad / n + l2 * w


def row_scores(data: MoveChoiceSet, w: np.ndarray) -> np.ndarray:
    """float64[M]: the score of every row under ``w``."""
    out: np.ndarray = scores_kernel(data.slots, np.ascontiguousarray(w, dtype=np.float64))
    return out


def mean_loss(data: MoveChoiceSet, scores: np.ndarray) -> float:
    """The mean cross-entropy of the played moves given every row's score (float64[M])."""
    starts = data.pos_ptr[:-1]
    top = np.maximum.reduceat(scores, starts)
    shifted = np.exp(scores - np.repeat(top, np.diff(data.pos_ptr)))
    lse = np.log(np.add.reduceat(shifted, starts)) + top
    return float(np.mean(lse - scores[starts + data.played])) if len(data) else 0.0


__all__ = ["CHUNK", "MoveChoiceSet", "loss_and_gradient", "mean_loss", "row_scores"]
