"""Texel's game-result objective and its gradient, over a CSR table of quiescence leaves.

Texel's tuning method (Peter Österlund, 2014; Chess Programming Wiki, "Texel's Tuning Method";
as done in Ethereal's tuner, Gedas' tuner and Arasan; ``docs/references.md`` [Texel],
[Grant2020]): fit the logistic of the quiescence value to the game results by least
squares,

    E(w) = (1/N) sum_p (R_p - sigma(K q_p(w)))^2,        sigma(x) = 1 / (1 + exp(-x)),

with R_p in {0, 0.5, 1} the game's result from the point of view of the side to move at p
(any target in [0, 1] is accepted), q_p(w) the quiescence value of p (the linear evaluation
of the leaf of its principal variation) and K the scaling constant. For a linear evaluation
q_p = offset_p + w . phi(p), so

    dE/dw_i = (1/N) sum_p -2 (R_p - sigma_p) sigma_p (1 - sigma_p) K phi_i(p).

With per-position sample weights s_p >= 0 both sums are weighted and divided by sum_p s_p
instead of N (the weighted mean; unit weights give the formula above).

Layout of the table (arrays only; one row per position):

* row ``r``'s score in *eval units* (centipawns x ``eval_scale``; the evaluator's
  ``EVAL_SCALE`` = PHASE_MAX, passed in so that this package stays chess-free), from the side
  to move's view, is ``offset[r] + sum_j w[indices[j]] * values[j]`` over ``j`` in
  ``indptr[r]:indptr[r+1]``: ``offset`` is nonzero only for a row whose search ended in a
  rule's verdict (mate, draw), which then has no features;
* ``w`` holds the evaluator's int32 weights, or float64 master weights of an optimizer. With
  integer weights (and integer ``values``) a score is summed exactly in int64; with float
  weights it is summed in float64 (exact too while the weights are integers and the sums stay
  below 2**53, so both paths then give bit-identical results).

K is given per centipawn (``k_cp``) and converted here: ``K_eu = k_cp / eval_scale``; the
gradient is per weight unit (per eval unit of weight), with ``K_eu`` in it.

Mini-batches: every function takes ``rows`` (int64 row numbers, repeats allowed), so that an
optimizer can evaluate a subset without copying the table; the mean is then over those rows.

The parallel kernels split the rows into at most ``MAX_CHUNKS`` chunks whose bounds depend only
on the number of rows, and add the chunks' partial sums in chunk order, so the results do not
depend on the number of threads (and the gradient's scratch is at most MAX_CHUNKS x len(w)).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from objectives._kernel_parts import add_row_gradient, sigmoid, sum_part_rows, sum_parts

#: at least this many rows per chunk of the parallel kernels ...
CHUNK = 256
#: ... and at most this many chunks (bounds a function of the row count only, never of threads).
#: Both are round values, not tuned: enough chunks to share among the threads, few enough that
#: the gradient's scratch (MAX_CHUNKS x len(w) floats) stays small
MAX_CHUNKS = 64
#: default bracket of :func:`fit_k`, K per centipawn. The usual values sit near
#: ln(10)/400 ~ 0.0058 (a 400-cp edge is 10:1 odds), well inside.
K_LO = 1e-5
K_HI = 1.0
#: points of the coarse log-spaced grid scanned by :func:`fit_k` before the golden section
K_GRID = 41
#: relative width of K's bracket at which the golden section stops
K_RTOL = 1e-9

_INVPHI = (math.sqrt(5.0) - 1.0) / 2.0  # 1/phi, the golden section's ratio


class KBracketError(ValueError):
    """The K minimising E lies at an end of the bracket searched (widen ``lo``/``hi``)."""


# --------------------------------------------------------------------------- kernels


@njit(cache=True, inline="always")
def _n_chunks(n: int) -> int:
    c = (n + CHUNK - 1) // CHUNK
    if c > MAX_CHUNKS:
        c = MAX_CHUNKS
    if c < 1:
        c = 1
    return c


@njit(cache=True, inline="always")
def _row_score(r, offset, indptr, indices, values, w, zero):  # type: ignore[no-untyped-def]
    """Row ``r``'s score: int64 when ``w`` and ``values`` are integers (``zero`` int64),
    float64 when ``w`` is float (``zero`` float64)."""
    s = zero + offset[r]
    for j in range(indptr[r], indptr[r + 1]):
        s += w[indices[j]] * values[j]
    return s


# many parameters: the CSR table, the results, the weights and the loss's constants; a numba kernel takes arrays and
# scalars (no dataclass in nopython mode)
@njit(cache=True, parallel=True)
def _loss_kernel(rows, offset, indptr, indices, values, results, sample_w, w, zero, k_eu, with_grad):  # type: ignore[no-untyped-def]
    """``(sum_p s_p (R_p - sigma_p)^2, sum_p s_p, dSum/dw)`` over ``rows``: the gradient is
    float64[len(w)] when ``with_grad``, else float64[0] (no scratch, no gradient work).

    ``sample_w`` of length 0 means unit weights; ``k_eu`` is K per eval unit.
    """
    n = rows.shape[0]
    n_g = w.shape[0] if with_grad else 0
    n_chunks = _n_chunks(n)
    unit = sample_w.shape[0] == 0
    part_loss = np.zeros(n_chunks, dtype=np.float64)
    part_den = np.zeros(n_chunks, dtype=np.float64)
    part_grad = np.zeros((n_chunks, n_g), dtype=np.float64)
    for c in prange(n_chunks):
        wl = w.copy()  # thread-private (shared-array refcounts are contended atomics)
        grad = part_grad[c]
        loss = 0.0
        den = 0.0
        for i in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            r = rows[i]
            sp = 1.0 if unit else sample_w[r]
            s = _row_score(r, offset, indptr, indices, values, wl, zero)
            sig = sigmoid(k_eu * s)
            resid = results[r] - sig
            loss += sp * resid * resid
            den += sp
            if with_grad:
                add_row_gradient(grad, -2.0 * sp * resid * sig * (1.0 - sig) * k_eu, r, indptr, indices, values)
        part_loss[c] = loss
        part_den[c] = den
    return sum_parts(part_loss), sum_parts(part_den), sum_part_rows(part_grad)


@njit(cache=True, parallel=True)
def _scores_kernel(rows, offset, indptr, indices, values, w, zero):  # type: ignore[no-untyped-def]
    """float64 scores (eval units) of ``rows``."""
    n = rows.shape[0]
    n_chunks = _n_chunks(n)
    out = np.zeros(n, dtype=np.float64)
    for c in prange(n_chunks):
        wl = w.copy()
        for i in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            out[i] = _row_score(rows[i], offset, indptr, indices, values, wl, zero)
    return out


@njit(cache=True, parallel=True)
def _scores_loss_kernel(scores, results, sample_w, k_eu):  # type: ignore[no-untyped-def]
    """``(sum_p s_p (R_p - sigma(K q_p))^2, sum_p s_p)`` from precomputed scores."""
    n = scores.shape[0]
    n_chunks = _n_chunks(n)
    unit = sample_w.shape[0] == 0
    part_loss = np.zeros(n_chunks, dtype=np.float64)
    part_den = np.zeros(n_chunks, dtype=np.float64)
    for c in prange(n_chunks):
        loss = 0.0
        den = 0.0
        for i in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            sp = 1.0 if unit else sample_w[i]
            resid = results[i] - sigmoid(k_eu * scores[i])
            loss += sp * resid * resid
            den += sp
        part_loss[c] = loss
        part_den[c] = den
    return sum_parts(part_loss), sum_parts(part_den)


# --------------------------------------------------------------------------- validation


def check_table(offset: np.ndarray, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray,
                results: np.ndarray, n_weights: int, weights: np.ndarray | None = None) -> None:
    """Validate a Texel table (see the module docstring) in full; raise ValueError.

    ``offset`` int64[N]; ``indptr`` int64[N + 1], non-decreasing from 0 to ``len(indices)``;
    ``indices`` an integer array with entries in [0, n_weights); ``values`` integer or float,
    as long as ``indices``; ``results`` float64[N], finite, in [0, 1]; ``weights`` (sample
    weights) None or float64[N], finite, >= 0. Costs O(N + nnz).
    """
    _check_shapes(offset, indptr, indices, values, results, weights)
    if np.any(np.diff(indptr) < 0):
        raise ValueError("indptr must be non-decreasing")
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= n_weights):
        raise ValueError(f"feature indices must lie in [0, {n_weights})")
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        raise ValueError("values has NaN or infinite entries")
    if not (np.all(np.isfinite(results)) and np.all((results >= 0.0) & (results <= 1.0))):
        raise ValueError("results must be finite and lie in [0, 1]")
    if weights is not None and not (np.all(np.isfinite(weights)) and np.all(weights >= 0.0)):
        raise ValueError("sample weights must be finite and >= 0")


def _check_shapes(offset: np.ndarray, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray,
                  results: np.ndarray, weights: np.ndarray | None) -> None:
    """The O(1) checks: dtypes and shapes."""
    for name, a in (("offset", offset), ("indptr", indptr), ("indices", indices), ("values", values),
                    ("results", results)):
        if not isinstance(a, np.ndarray) or a.ndim != 1:
            raise ValueError(f"{name} must be a one-dimensional numpy array")
    n = offset.shape[0]
    if offset.dtype != np.int64:
        raise ValueError(f"offset must be int64, not {offset.dtype}")
    if indptr.dtype != np.int64 or indptr.shape != (n + 1,) or indptr[0] != 0 or indptr[-1] != len(indices):
        raise ValueError("indptr must be int64[N + 1] from 0 to len(indices)")
    if indices.dtype.kind not in "iu":
        raise ValueError(f"indices must be integers, not {indices.dtype}")
    if values.dtype.kind not in "iuf" or values.shape != indices.shape:
        raise ValueError("values must be integer or float numbers, as many as indices")
    if results.dtype != np.float64 or results.shape != (n,):
        raise ValueError(f"results must be float64[{n}]")
    if weights is not None and (not isinstance(weights, np.ndarray) or weights.dtype != np.float64
                                or weights.shape != (n,)):
        raise ValueError(f"sample weights must be float64[{n}]")


def _weights_and_zero(w: np.ndarray) -> tuple[np.ndarray, np.integer | np.floating]:
    """The weight vector the kernels take (int64 or float64, contiguous) and its zero."""
    w = np.asarray(w)
    if w.ndim != 1:
        raise ValueError("w must be one-dimensional")
    if w.dtype.kind in "iu":
        return np.ascontiguousarray(w, dtype=np.int64), np.int64(0)
    if w.dtype.kind == "f":
        w = np.ascontiguousarray(w, dtype=np.float64)
        if not np.all(np.isfinite(w)):
            raise ValueError("w has NaN or infinite entries")
        return w, np.float64(0.0)
    raise ValueError(f"w must be int32 or float64, not {w.dtype}")


def _rows(rows: np.ndarray | None, n: int) -> np.ndarray:
    if rows is None:
        return np.arange(n, dtype=np.int64)
    if not isinstance(rows, np.ndarray) or rows.dtype != np.int64 or rows.ndim != 1:
        raise ValueError("rows must be int64[B]")
    if len(rows) == 0:
        raise ValueError("rows must not be empty")
    if int(rows.min()) < 0 or int(rows.max()) >= n:
        raise ValueError(f"rows must lie in [0, {n})")
    return np.ascontiguousarray(rows)


def _k_eu(k_cp: float, eval_scale: int) -> float:
    if not (math.isfinite(k_cp) and k_cp > 0.0):
        raise ValueError(f"k_cp must be a positive number, not {k_cp}")
    if eval_scale <= 0:
        raise ValueError(f"eval_scale must be positive, not {eval_scale}")
    return float(k_cp) / float(eval_scale)


def _prepare(offset: np.ndarray, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray,
             results: np.ndarray, w: np.ndarray, weights: np.ndarray | None, rows: np.ndarray | None,
             validate: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.integer | np.floating]:
    """The kernels' arguments: rows int64[B], sample weights float64[N] (or [0]: unit), the
    weights int64/float64[W] and their zero (see :func:`_weights_and_zero`)."""
    wk, zero = _weights_and_zero(w)
    if validate:
        check_table(offset, indptr, indices, values, results, len(wk), weights)
    else:
        _check_shapes(offset, indptr, indices, values, results, weights)
    r = _rows(rows, offset.shape[0])
    sw = np.zeros(0, dtype=np.float64) if weights is None else weights
    return r, sw, wk, zero


def _mean(total: float, den: float) -> float:
    if not den > 0.0:
        raise ValueError("the sample weights of the rows used add up to 0")
    return total / den


# --------------------------------------------------------------------------- public API


# many parameters: the CSR table's arrays as the kernels take them, then keyword-only options
def loss_and_gradient(offset: np.ndarray, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray,
                      results: np.ndarray, w: np.ndarray, k_cp: float, eval_scale: int,
                      weights: np.ndarray | None = None, *, rows: np.ndarray | None = None,
                      validate: bool = True) -> tuple[float, np.ndarray]:
    """Texel's E(w) and its gradient dE/dw (float64[len(w)], per weight unit).

    Parameters
    ----------
    offset, indptr, indices, values : the table, one row per position (module docstring).
    results : float64[N], R_p in [0, 1] from the side to move's view (1 win, 0.5 draw, 0 loss).
    w : int32[W] evaluator weights (scores summed exactly in int64) or float64[W] master weights
        (scores summed in float64). Eval units per unit of feature value.
    k_cp : K per centipawn (> 0); the kernel uses ``k_cp / eval_scale`` per eval unit.
    eval_scale : eval units per centipawn of the scores (``search.evaluation.evaluation_api.EVAL_SCALE``).
    weights : optional float64[N] sample weights s_p >= 0; E is then the weighted mean.
    rows : optional int64[B] row numbers (a mini-batch; repeats count repeatedly); E and the
        gradient are then the (weighted) means over those rows. Default: every row.
    validate : False skips the O(N + nnz) checks of :func:`check_table` (index range, monotone
        indptr, result range) for callers that checked the table once; dtypes, shapes and
        ``rows`` are always checked.

    Returns
    -------
    (E, grad) with E dimensionless (squared result units) and
    ``grad[i] = (1/N) sum_p -2 (R_p - sigma_p) sigma_p (1 - sigma_p) K_eu phi_i(p)``.
    """
    r, sw, wk, zero = _prepare(offset, indptr, indices, values, results, w, weights, rows, validate)
    total, den, grad = _loss_kernel(r, offset, indptr, indices, values, results, sw, wk, zero,
                                    _k_eu(k_cp, eval_scale), True)
    mean = _mean(total, den)
    return mean, grad / den


# many parameters: the CSR table's arrays as the kernels take them, then keyword-only options
def loss(offset: np.ndarray, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray,
         results: np.ndarray, w: np.ndarray, k_cp: float, eval_scale: int,
         weights: np.ndarray | None = None, *, rows: np.ndarray | None = None,
         validate: bool = True) -> float:
    """Texel's E(w) alone (no gradient scratch); arguments as :func:`loss_and_gradient`."""
    r, sw, wk, zero = _prepare(offset, indptr, indices, values, results, w, weights, rows, validate)
    total, den, _ = _loss_kernel(r, offset, indptr, indices, values, results, sw, wk, zero,
                                 _k_eu(k_cp, eval_scale), False)
    return _mean(total, den)


def scores(offset: np.ndarray, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray,
           w: np.ndarray, *, rows: np.ndarray | None = None) -> np.ndarray:
    """The rows' scores q_p(w) as float64[N] (or [B] with ``rows``), in eval units, side to
    move's view. Summed exactly in int64 for integer ``w`` and ``values``, then converted."""
    wk, zero = _weights_and_zero(w)
    n = offset.shape[0] if isinstance(offset, np.ndarray) else 0
    _check_shapes(offset, indptr, indices, values, np.zeros(n, dtype=np.float64), None)
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= len(wk)):
        raise ValueError(f"feature indices must lie in [0, {len(wk)})")
    out: np.ndarray = _scores_kernel(_rows(rows, n), offset, indptr, indices, values, wk, zero)
    return out


def loss_of_scores(q: np.ndarray, results: np.ndarray, k_cp: float, eval_scale: int,
                   weights: np.ndarray | None = None) -> float:
    """E from precomputed scores ``q`` (float64[N], eval units) and ``results`` (float64[N])."""
    q, results, sw = _check_scores(q, results, weights)
    total, den = _scores_loss_kernel(q, results, sw, _k_eu(k_cp, eval_scale))
    return _mean(total, den)


def _check_scores(q: np.ndarray, results: np.ndarray,
                  weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = np.ascontiguousarray(q, dtype=np.float64)
    results = np.ascontiguousarray(results, dtype=np.float64)
    if q.ndim != 1 or results.shape != q.shape or len(q) == 0:
        raise ValueError("scores and results must be float64[N] of the same length N >= 1")
    if not np.all(np.isfinite(q)):
        raise ValueError("scores have NaN or infinite entries")
    if not (np.all(np.isfinite(results)) and np.all((results >= 0.0) & (results <= 1.0))):
        raise ValueError("results must be finite and lie in [0, 1]")
    if weights is None:
        return q, results, np.zeros(0, dtype=np.float64)
    sw = np.ascontiguousarray(weights, dtype=np.float64)
    if sw.shape != q.shape or not (np.all(np.isfinite(sw)) and np.all(sw >= 0.0)):
        raise ValueError("sample weights must be float64[N], finite and >= 0")
    return q, results, sw


def fit_k_scores(q: np.ndarray, results: np.ndarray, eval_scale: int, *, lo: float = K_LO,
                 hi: float = K_HI, weights: np.ndarray | None = None, grid: int = K_GRID,
                 rtol: float = K_RTOL) -> float:
    """K per centipawn minimising E at fixed scores ``q`` (float64[N], eval units).

    E(K) is unimodal in practice for this loss, but that is not guaranteed, so the search is
    in two stages: a coarse scan of ``grid`` points spaced evenly in log K over ``[lo, hi]``
    (default 41 points over [1e-5, 1] per cp: neighbours a factor 1.33 apart), then a golden
    section search (Kiefer 1953) on the bracket formed by the best grid point's two neighbours,
    until the bracket is narrower than ``rtol`` (default 1e-9) times its midpoint. Returns the
    bracket's midpoint. E at the optimum is flat to second order, so float64 rounding of E
    bounds K's accuracy to about 1e-8 relative; ``rtol`` lower than that buys nothing.

    Raises :class:`KBracketError` when the minimum lies at ``lo`` or ``hi`` (the bracket must be
    widened, or the data carry no signal: e.g. all draws put the minimum at K -> 0).
    """
    q, results, sw = _check_scores(q, results, weights)
    if not (0.0 < lo < hi and math.isfinite(hi)):
        raise ValueError(f"the bracket must satisfy 0 < lo < hi, not [{lo}, {hi}]")
    if grid < 3:
        raise ValueError(f"grid must have at least 3 points, not {grid}")
    if eval_scale <= 0:
        raise ValueError(f"eval_scale must be positive, not {eval_scale}")
    scale = float(eval_scale)

    def e_of(k_cp: float) -> float:
        total, den = _scores_loss_kernel(q, results, sw, k_cp / scale)
        return _mean(total, den)

    ks = np.geomspace(lo, hi, grid)
    es = np.array([e_of(float(k)) for k in ks])
    best = int(np.argmin(es))
    a = float(ks[max(best - 1, 0)])
    b = float(ks[min(best + 1, grid - 1)])
    # golden section: keep two interior points c < d; drop the side of the worse one
    c = b - _INVPHI * (b - a)
    d = a + _INVPHI * (b - a)
    ec, ed = e_of(c), e_of(d)
    while b - a > rtol * 0.5 * (a + b):
        if ec <= ed:
            b, d, ed = d, c, ec
            c = b - _INVPHI * (b - a)
            ec = e_of(c)
        else:
            a, c, ec = c, d, ed
            d = a + _INVPHI * (b - a)
            ed = e_of(d)
    k = 0.5 * (a + b)
    tol = 2.0 * rtol * k
    if (best == 0 and k - lo <= tol) or (best == grid - 1 and hi - k <= tol):
        raise KBracketError(f"E(K) is smallest at the end of the bracket [{lo}, {hi}] per cp (K = {k:.6g})")
    return k


# many parameters: the CSR table's arrays as the kernels take them, then keyword-only options
def fit_k(offset: np.ndarray, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray,
          results: np.ndarray, w: np.ndarray, eval_scale: int, *, lo: float = K_LO, hi: float = K_HI,
          weights: np.ndarray | None = None, rows: np.ndarray | None = None, grid: int = K_GRID,
          rtol: float = K_RTOL) -> float:
    """K per centipawn minimising E at fixed weights ``w`` (Texel's first step): the scores are
    computed once, then :func:`fit_k_scores` searches K (see there for bracket and tolerance).
    Arguments as :func:`loss_and_gradient`."""
    wk, _ = _weights_and_zero(w)
    check_table(offset, indptr, indices, values, results, len(wk), weights)
    q = scores(offset, indptr, indices, values, w, rows=rows)
    r = None if rows is None else rows
    res = results if r is None else results[r]
    sw = weights if (weights is None or r is None) else weights[r]
    return fit_k_scores(q, res, eval_scale, lo=lo, hi=hi, weights=sw, grid=grid, rtol=rtol)


def l2_penalty(w: np.ndarray, l2: float, mask: np.ndarray) -> float:
    """``l2 * sum(w_i^2)`` over the bool ``mask`` (the term :mod:`tuner.training.optim` adds as L2)."""
    x = np.asarray(w, dtype=np.float64)[mask]
    return float(l2 * np.dot(x, x))


def l1_penalty(w: np.ndarray, l1: float, mask: np.ndarray) -> float:
    """``l1 * sum(|w_i|)`` over the bool ``mask`` (the term :mod:`tuner.training.optim` adds as L1)."""
    return float(l1 * np.abs(np.asarray(w, dtype=np.float64)[mask]).sum())
