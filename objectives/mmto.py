"""MMTO's main objective and its gradient, from stored principal-variation leaves.

Hoki & Kaneko, "Large-Scale Optimization for Evaluation Functions with Minimax Search",
JAIR 49:527-568, 2014 (``docs/references.md`` [HK2014]: J_main, T and the PV-leaf gradient):

    J_main(P, w) = sum_p sum_{m in M_p, m != d_p} T(s(p.m, w) - s(p.d_p, w)),
    T(x) = 1 / (1 + exp(-a x)),

and, with the search value taken at the PV leaf pi(p.m) of a linear evaluation
e(q, w) = w . phi(q), the partial derivatives

    dJ_main/dw_i = sum_p sum_{m != d_p} T'(s(p.m) - s(p.d_p)) * (dphi_i(p.m) - dphi_i(p.d_p)),
    T'(x) = a T(x) (1 - T(x)),

where dphi(p.m) is the leaf's feature vector with the sign it enters the mover's score.

Here the objective is reported per position (J_main / |P|) so that the L1 coefficient of
:mod:`tuner.training.optim.grid` does not depend on the size of the training set (the paper's sum is
|P| times this value; only the scale of lambda_1 differs).

Layout of the stored sweep (arrays only; built by :mod:`tuner.methods.mmto` from :func:`search.tree.search_api.sweep`):

* rows are (position, move) pairs; the rows of position ``p`` are ``pos_ptr[p]:pos_ptr[p+1]``
  and ``played[p]`` is the global index of the row of the move actually played;
* a row's score in *eval units* (centipawns x PHASE_MAX, mover's view) is
  ``offset[r] + sum_j w[indices[j]] * values[j]`` over ``j`` in ``indptr[r]:indptr[r+1]``:
  a row whose search ended in a rule's verdict (mate, draw) has its score in ``offset`` and no
  features; a PV-leaf row has ``offset`` 0 and the signed leaf features.

The slope ``a`` is given per centipawn; the kernels convert it to eval units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from objectives._kernel_parts import add_row_gradient, sigmoid, sum_part_rows, sum_parts

#: positions per work item of the parallel kernels; partial sums are added in chunk order, so
#: the results do not depend on the number of threads (a round value, not tuned)
CHUNK = 256
#: most rows (legal moves) one position may have in a table: every chess position has at most
#: 218 legal moves; the kernels' per-position scratch arrays have this length
MAX_ROWS = 512


#: the move-choice loss of a position (``kind`` of the kernels)
LOSS_SIGMOID = 0  # Hoki & Kaneko's sum of sigmoids over the other moves
LOSS_SOFTMAX = 1  # cross-entropy of the played move under a softmax of the move scores
LOSSES = {"sigmoid": LOSS_SIGMOID, "softmax": LOSS_SOFTMAX}


@njit(cache=True, inline="always")
def _move_terms(scores, n, d, slope_eu, kind, coef):  # type: ignore[no-untyped-def]
    """The move-choice loss of one position from its ``n`` row scores (``d``: the played row,
    local index) and, in ``coef[:n]``, its derivative with respect to each row's score.

    sigmoid (Hoki & Kaneko 2014, eq. of J_main): sum_{m != d} T(a (s_m - s_d));
    softmax: -log(exp(a s_d) / sum_m exp(a s_m)) = logsumexp_m(a s_m) - a s_d, whose
    derivative is a (pi_m - [m = d]) with pi the softmax probabilities.
    """
    sd = scores[d]
    loss = 0.0
    if kind == LOSS_SIGMOID:
        coef_d = 0.0
        for r in range(n):
            if r == d:
                coef[r] = 0.0
                continue
            t = sigmoid(slope_eu * (scores[r] - sd))
            loss += t
            dt = slope_eu * t * (1.0 - t)
            coef[r] = dt
            coef_d -= dt
        coef[d] = coef_d
    else:
        top = scores[0]
        for r in range(1, n):
            if scores[r] > top:
                top = scores[r]
        total = 0.0
        for r in range(n):
            e = math.exp(slope_eu * (scores[r] - top))
            coef[r] = e
            total += e
        loss = math.log(total) + slope_eu * (top - sd)
        for r in range(n):
            coef[r] = slope_eu * coef[r] / total
        coef[d] -= slope_eu
    return loss


@njit(cache=True, inline="always")
def _result_term(s, result, k_eu):  # type: ignore[no-untyped-def]
    """Texel's squared error (R - sigma(K s))^2 of one score and its derivative in s."""
    t = sigmoid(k_eu * s)
    e = result - t
    return e * e, -2.0 * e * k_eu * t * (1.0 - t)


@njit(cache=True, inline="always")
def _position_terms(scores, n, d, slope_eu, kind, coef, move_scale, result, res_scale, k_eu):  # type: ignore[no-untyped-def]
    """One position's move loss and result loss (``scores``: its n rows, row ``d`` played) and,
    in ``coef``, the derivative of ``move_scale * move loss + res_scale * result loss`` with
    respect to each row's score; no result term when ``res_scale`` is 0 or ``result`` is NaN."""
    loss = _move_terms(scores, n, d, slope_eu, kind, coef)
    for r in range(n):
        coef[r] *= move_scale
    res_loss = 0.0
    if res_scale > 0.0 and not math.isnan(result):
        res_loss, de = _result_term(float(scores[d]), result, k_eu)
        coef[d] += res_scale * de
    return loss, res_loss


# many parameters: the CSR table, the weights and the loss's constants; a numba kernel takes arrays and scalars (no
# dataclass in nopython mode)
@njit(cache=True, parallel=True)
def loss_and_gradient_kernel(pos_ptr, played, offset, indptr, indices, values, w, slope_eu, kind,  # type: ignore[no-untyped-def]
                             move_scale, results, res_scale, k_eu):
    """``(move loss summed over positions, result loss summed over positions with a result,
    gradient float64[len(w)] of move_scale * move loss + res_scale * result loss)`` for int
    weights ``w``.

    ``slope_eu`` is ``a`` per eval unit, ``kind`` one of :data:`LOSSES`; ``results[p]`` is the
    game's result from the mover's view (NaN: none), compared with ``sigma(k_eu s_d)`` of the
    played move's score when ``res_scale > 0``. Positions whose ``played[p]`` is negative are
    skipped.
    """
    p_count = pos_ptr.shape[0] - 1
    n_w = w.shape[0]
    n_chunks = (p_count + CHUNK - 1) // CHUNK
    part_loss = np.zeros(n_chunks, dtype=np.float64)
    part_res = np.zeros(n_chunks, dtype=np.float64)
    part_grad = np.zeros((n_chunks, n_w), dtype=np.float64)
    for c in prange(n_chunks):
        wl = w.copy()  # thread-private (shared-array refcounts are contended atomics)
        grad = part_grad[c]
        scores = np.zeros(MAX_ROWS, dtype=np.int64)
        coef = np.zeros(MAX_ROWS, dtype=np.float64)
        loss = 0.0
        res_loss = 0.0
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            d = played[p]
            if d < 0:
                continue
            a = pos_ptr[p]
            z = pos_ptr[p + 1]
            for r in range(a, z):
                s = offset[r]
                for j in range(indptr[r], indptr[r + 1]):
                    s += np.int64(wl[indices[j]]) * values[j]
                scores[r - a] = s
            move, res = _position_terms(scores, z - a, d - a, slope_eu, kind, coef, move_scale, results[p], res_scale,
                                        k_eu)
            loss += move
            res_loss += res
            for r in range(a, z):
                add_row_gradient(grad, coef[r - a], r, indptr, indices, values)
        part_loss[c] = loss
        part_res[c] = res_loss
    return sum_parts(part_loss), sum_parts(part_res), sum_part_rows(part_grad)


@njit(cache=True, parallel=True)
def sweep_loss_kernel(pos_ptr, played, scores, slope_eu, kind):  # type: ignore[no-untyped-def]
    """The move loss summed over positions from the scores of a full sweep (int64[M], eval
    units, mover's view), every legal move counted; positions with ``played[p] < 0`` are skipped."""
    p_count = pos_ptr.shape[0] - 1
    n_chunks = (p_count + CHUNK - 1) // CHUNK
    part = np.zeros(n_chunks, dtype=np.float64)
    for c in prange(n_chunks):
        loss = 0.0
        coef = np.zeros(MAX_ROWS, dtype=np.float64)
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            d = played[p]
            if d < 0:
                continue
            a = pos_ptr[p]
            loss += _move_terms(scores[a:pos_ptr[p + 1]], pos_ptr[p + 1] - a, d - a, slope_eu, kind, coef)
        part[c] = loss
    return sum_parts(part)


@njit(cache=True, parallel=True)
def row_loss_kernel(pos_ptr, played, scores, slope_eu, kind, move_scale, results, res_scale, k_eu):  # type: ignore[no-untyped-def]
    """The move loss and result loss (summed over positions) of rows whose scores are given
    (float64[rows], eval units, mover's view), and ``coef`` float64[rows]: the derivative of
    ``move_scale * move loss + res_scale * result loss`` with respect to each row's score.
    The same terms as :func:`loss_and_gradient_kernel`, for an evaluator whose scores are not
    a weighted sum of stored features (the network: its gradient is ``sum_r coef[r] d s_r``,
    :func:`objectives.network.network_gradient`)."""
    p_count = pos_ptr.shape[0] - 1
    n_chunks = (p_count + CHUNK - 1) // CHUNK
    part_loss = np.zeros(n_chunks, dtype=np.float64)
    part_res = np.zeros(n_chunks, dtype=np.float64)
    coef = np.zeros(scores.shape[0], dtype=np.float64)
    for c in prange(n_chunks):
        loss = 0.0
        res_loss = 0.0
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            d = played[p]
            if d < 0:
                continue
            a = pos_ptr[p]
            z = pos_ptr[p + 1]
            move, res = _position_terms(scores[a:z], z - a, d - a, slope_eu, kind, coef[a:z], move_scale, results[p],
                                        res_scale, k_eu)
            loss += move
            res_loss += res
        part_loss[c] = loss
        part_res[c] = res_loss
    return sum_parts(part_loss), sum_parts(part_res), coef


@dataclass(frozen=True)
class RowObjective:
    """The objective per position at given row scores, and its derivative per row score."""

    move: float
    result: float
    total: float
    coef: np.ndarray  # float64[rows]: d total / d score of each row (per eval unit)


def row_objective(pos_ptr: np.ndarray, played: np.ndarray, scores: np.ndarray, slope_cp: float, eval_scale: int,
                  *, loss: str = "softmax", results: np.ndarray | None = None, mu: float = 0.0,
                  k_cp: float = 0.0) -> RowObjective:
    """:func:`objective` for rows whose scores (float64[rows], eval units, mover's view) are
    given instead of computed from stored features; returns the derivative of the total with
    respect to each row's score instead of a weight gradient."""
    kind = _kind(loss)
    p = len(pos_ptr) - 1
    if results is None:
        results = np.full(p, np.nan)
    if scores.shape != (int(pos_ptr[-1]),) or results.shape != (p,) or played.shape != (p,):
        raise ValueError("scores must be float64[rows], played and results [P]")
    if mu < 0 or not math.isfinite(mu) or (mu > 0 and not k_cp > 0):
        raise ValueError("mu must be >= 0, and K > 0 when mu > 0")
    n = max(int(np.count_nonzero(played >= 0)), 1)
    cnt = max(int(np.count_nonzero((played >= 0) & ~np.isnan(results))), 1)
    move, res, coef = row_loss_kernel(np.ascontiguousarray(pos_ptr, dtype=np.int64),
                                      np.ascontiguousarray(played, dtype=np.int64),
                                      np.ascontiguousarray(scores, dtype=np.float64), slope_cp / eval_scale, kind,
                                      1.0 / n, np.ascontiguousarray(results, dtype=np.float64), float(mu) / cnt,
                                      k_cp / eval_scale)
    result = res / cnt if mu > 0 else 0.0
    return RowObjective(move / n, result, move / n + mu * result, coef)


def check_table(pos_ptr: np.ndarray, played: np.ndarray, offset: np.ndarray, indptr: np.ndarray,
                indices: np.ndarray, values: np.ndarray, n_weights: int) -> None:
    """Validate the stored-sweep arrays (see the module docstring); raise ValueError."""
    if pos_ptr.dtype != np.int64 or pos_ptr.ndim != 1 or len(pos_ptr) < 1 or pos_ptr[0] != 0:
        raise ValueError("pos_ptr must be int64[P + 1] starting at 0")
    if np.any(np.diff(pos_ptr) < 0) or np.any(np.diff(pos_ptr) > MAX_ROWS):
        raise ValueError(f"pos_ptr must be non-decreasing with at most {MAX_ROWS} rows per position")
    rows = int(pos_ptr[-1])
    if played.dtype != np.int64 or played.shape != (len(pos_ptr) - 1,):
        raise ValueError("played must be int64[P]")
    ok = played < 0
    ok |= (played >= pos_ptr[:-1]) & (played < pos_ptr[1:])
    if not np.all(ok):
        raise ValueError("played[p] must be a row of position p (or negative to skip p)")
    if offset.dtype != np.int64 or offset.shape != (rows,):
        raise ValueError("offset must be int64[rows]")
    if indptr.dtype != np.int64 or indptr.shape != (rows + 1,) or indptr[0] != 0 or indptr[-1] != len(indices):
        raise ValueError("indptr must be int64[rows + 1] from 0 to len(indices)")
    if len(values) != len(indices):
        raise ValueError("indices and values must have the same length")
    if len(indices) and (indices.min() < 0 or indices.max() >= n_weights):
        raise ValueError(f"feature indices must lie in [0, {n_weights})")


@dataclass(frozen=True)
class Objective:
    """The value of the objective at one weight vector (per position) and its gradient."""

    move: float  # move-choice loss per position (J_main for the sigmoid loss)
    result: float  # mean result error over positions with a result (0.0 when mu = 0)
    total: float  # move + mu * result
    gradient: np.ndarray  # float64[N], of ``total``, per weight unit


def _kind(loss: str) -> int:
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}, not {loss!r}")
    return LOSSES[loss]


# many parameters: the CSR table's arrays as the kernels take them, then keyword-only options
def objective(pos_ptr: np.ndarray, played: np.ndarray, offset: np.ndarray, indptr: np.ndarray,
              indices: np.ndarray, values: np.ndarray, w: np.ndarray, slope_cp: float, eval_scale: int, *,
              loss: str = "sigmoid", results: np.ndarray | None = None, mu: float = 0.0,
              k_cp: float = 0.0) -> Objective:
    """The objective per position and its gradient from a stored sweep.

    ``slope_cp`` is the slope ``a`` per centipawn; ``eval_scale`` the eval units per centipawn
    of the scores (PHASE_MAX); ``loss`` sigmoid or softmax (:func:`_move_terms`). With ``mu > 0``
    the game-result term of Texel's method over the played moves' scores is added:
    ``mu * mean_p (R_p - sigma(K s(p.d_p)))^2`` (``results`` float64[P], mover's view, NaN for
    none; ``k_cp`` K per centipawn). Positions with ``played < 0`` count in no sum.
    """
    check_table(pos_ptr, played, offset, indptr, indices, values, len(w))
    kind = _kind(loss)
    p = len(pos_ptr) - 1
    if results is None:
        results = np.full(p, np.nan)
    if results.shape != (p,):
        raise ValueError("results must be float64[P]")
    if mu < 0 or not math.isfinite(mu) or (mu > 0 and not k_cp > 0):
        raise ValueError("mu must be >= 0, and K > 0 when mu > 0")
    n = max(int(np.count_nonzero(played >= 0)), 1)
    cnt = max(int(np.count_nonzero((played >= 0) & ~np.isnan(results))), 1)
    move, res, grad = loss_and_gradient_kernel(
        pos_ptr, played, offset, indptr, indices, values, np.ascontiguousarray(w, dtype=np.int32),
        slope_cp / eval_scale, kind, 1.0 / n, np.ascontiguousarray(results, dtype=np.float64),
        float(mu) / cnt, k_cp / eval_scale)
    result = res / cnt if mu > 0 else 0.0
    return Objective(move / n, result, move / n + mu * result, grad)


def loss_and_gradient(pos_ptr: np.ndarray, played: np.ndarray, offset: np.ndarray, indptr: np.ndarray,
                      indices: np.ndarray, values: np.ndarray, w: np.ndarray,
                      slope_cp: float, eval_scale: int, *, loss: str = "sigmoid") -> tuple[float, np.ndarray]:
    """Per-position move loss (J_main for sigmoid) and its gradient (float64[len(w)], per weight
    unit) from a stored sweep (:func:`objective` without the result term)."""
    o = objective(pos_ptr, played, offset, indptr, indices, values, w, slope_cp, eval_scale, loss=loss)
    return o.move, o.gradient


def sweep_loss(pos_ptr: np.ndarray, played: np.ndarray, scores: np.ndarray, slope_cp: float,
               eval_scale: int, *, loss: str = "sigmoid") -> float:
    """Per-position move loss over every legal move, from a full sweep's scores (eval units)."""
    n = max(int(np.count_nonzero(played >= 0)), 1)
    return float(sweep_loss_kernel(pos_ptr, played, scores, slope_cp / eval_scale, _kind(loss))) / n
