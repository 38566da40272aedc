"""MMTO's objective as raw sums over a part of the training set, so that parts held in different
places (the chunks of a sweep kept on Dask workers, :meth:`tuner.training.executor.Executor.reduce_kept`)
add up to the whole set's objective in one fixed order (chunk order), whatever held them.

:func:`objective_sums` is :func:`objectives.leaf_table.objective_compact` without its final
divisions: the move and result losses summed over the part's positions (not yet divided by the
whole set's counts), and the gradient already scaled by the whole set's ``move_scale`` and
``res_scale`` (they enter each row's coefficient, as in the one-table kernel). The whole set's
figures are then ``move = sum(moves) / n``, ``result = sum(results) / cnt`` and
``gradient = sum(gradients)``, summed part after part. Folding per part changes the last bits
against one kernel call over the concatenated table (the kernel adds its partials in chunks of
:data:`objectives.mmto.CHUNK` positions across the whole table): both are sums of the same
float64 terms in a different association.
"""

from __future__ import annotations

import math

import numpy as np

from objectives.leaf_table import CompactLeaves, compact_loss_and_gradient_kernel, value_bits
from objectives.mmto import _kind


def objective_sums(t: CompactLeaves, w: np.ndarray, slope_cp: float, eval_scale: int, *, loss: str,
                   results: np.ndarray, move_scale: float, res_scale: float,
                   k_cp: float) -> tuple[float, float, np.ndarray]:
    """``(move loss sum, result loss sum, gradient float64[2 * n_base])`` of the part ``t``
    (``w``: int weights in the table's order; ``results`` float64[P], NaN for none;
    ``move_scale`` 1 / the whole set's positions with a played move; ``res_scale`` mu / the
    whole set's such positions with a result, 0 for no result term; ``k_cp`` K per centipawn)."""
    if len(w) != 2 * t.n_base:
        raise ValueError(f"objectives/leaf_sums.py: {len(w)} weights for a table of {2 * t.n_base} features")
    p = len(t.pos_ptr) - 1
    if results.shape != (p,):
        raise ValueError("objectives/leaf_sums.py: results must be float64[P]")
    if res_scale < 0 or not math.isfinite(res_scale) or (res_scale > 0 and not k_cp > 0):
        raise ValueError("objectives/leaf_sums.py: res_scale must be >= 0, and K > 0 when it is > 0")
    move, res, grad = compact_loss_and_gradient_kernel(
        t.pos_ptr, t.played, t.phase, t.row_nnz, t.ref_nnz, t.entry_ptr, t.entries, t.verdict_rows, t.verdict_scores,
        t.n_base, t.phase_max, value_bits(t.n_base), np.ascontiguousarray(w, dtype=np.int32),
        slope_cp / eval_scale, _kind(loss), float(move_scale), np.ascontiguousarray(results, dtype=np.float64),
        float(res_scale), k_cp / eval_scale)
    return float(move), float(res), grad


__all__ = ["objective_sums"]
