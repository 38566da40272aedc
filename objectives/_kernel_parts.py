"""Pieces shared by the objective kernels of :mod:`objectives.mmto` and :mod:`objectives.texel`:
the logistic function and the ordered sums of per-chunk partial results.

Every function is ``@njit(cache=True, inline="always")`` and is called only from njit code,
so the kernels compile them in place, as fast as if written there. The parallel kernels let
each chunk of positions (``prange``) write its own partial sum and add the partials here in
chunk order, so their results do not depend on the number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def sigmoid(z: float) -> float:
    """The logistic 1 / (1 + exp(-z)), computed without overflow for either sign of ``z``."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@njit(cache=True, inline="always")
def sum_parts(parts):  # type: ignore[no-untyped-def]
    """The sum of float64[C] per-chunk partials, added in chunk order."""
    total = 0.0
    for c in range(parts.shape[0]):
        total += parts[c]
    return total


@njit(cache=True, inline="always")
def sum_part_rows(parts):  # type: ignore[no-untyped-def]
    """float64[W]: the sum of the rows of float64[C, W] per-chunk partial gradients, added in
    chunk order."""
    n_w = parts.shape[1]
    out = np.zeros(n_w, dtype=np.float64)
    for c in range(parts.shape[0]):
        for i in range(n_w):
            out[i] += parts[c, i]
    return out


@njit(cache=True, inline="always")
def add_row_gradient(grad, k, r, indptr, indices, values):  # type: ignore[no-untyped-def]
    """``grad[indices[j]] += k * values[j]`` over row ``r``'s features (``j`` in
    ``indptr[r]:indptr[r+1]`` of a CSR table): the gradient of ``k`` times the row's score."""
    if k != 0.0:
        for j in range(indptr[r], indptr[r + 1]):
            grad[indices[j]] += k * values[j]
