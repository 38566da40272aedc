"""The float network's score and its gradient over many boards: what every training method
differentiates when the evaluator is a network (``docs/network.md``, float form).

Boards are reduced once to an *input table* (:func:`input_table`): per row, each side's active
inputs (int16[2, 32], padded), their counts and the side to move; the kernels then never look
at a board again. The float form, per row (side to move first)::

    acc[c] = b1 + sum_{i in active(c)} W1[i]       x = clip(acc[stm], 0, 1) ++ clip(acc[opp], 0, 1)
    z2 = b2 + x W2     h2 = clip(z2, 0, 1)         z3 = b3 + h2 W3     h3 = clip(z3, 0, 1)
    out = b4[o] + h3 . W4[o]                        (centipawns, side to move's view)

or, in the direct form (no hidden layers), ``out = b4[o] + sum_j x_j^2 W4[o, j]``, where ``o`` is
the row's output bucket (:func:`search.evaluation.network_kernels.output_bucket` of its number of
pieces, which is its count of active inputs).

:func:`network_scores` gives ``out`` for every row; :func:`network_gradient` gives
``sum_r coef[r] * d out_r / d theta`` as a flat vector in :meth:`search.evaluation.network.FloatNetwork.vector`
order (the derivative of a clipped ReLU is 1 strictly inside (0, 1), else 0). Rows are summed
in :data:`N_PARTS` fixed parts, each in row order, and the parts in order, so the result does
not depend on the number of threads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from search.evaluation.network import PARAMS, FloatNetwork
from search.evaluation.network_kernels import active_inputs, output_bucket

#: parts the rows of a gradient are summed in (fixed, so that results do not depend on threads)
N_PARTS = 16
#: active inputs per side at most (one per piece)
MAX_ACTIVE = 32


@dataclass(frozen=True)
class InputTable:
    """Boards reduced to the network's inputs: ``inputs`` int16[n, 2, 32] (each side's active
    inputs, row 0 White's perspective), ``counts`` int8[n, 2], ``stm`` int8[n]."""

    inputs: np.ndarray
    counts: np.ndarray
    stm: np.ndarray

    def __len__(self) -> int:
        return len(self.stm)

    def take(self, rows: np.ndarray) -> InputTable:
        """The table of ``rows`` only."""
        return InputTable(self.inputs[rows], self.counts[rows], self.stm[rows])

    def concat(self, others: list[InputTable]) -> InputTable:
        """This table's rows followed by those of ``others``, in order."""
        tables = [self, *others]
        return InputTable(*(np.concatenate([getattr(t, f) for t in tables]) for f in ("inputs", "counts", "stm")))

    @property
    def nbytes(self) -> int:
        return int(self.inputs.nbytes + self.counts.nbytes + self.stm.nbytes)


@njit(cache=True, parallel=True)
def _input_table_kernel(boards, buckets):  # type: ignore[no-untyped-def]
    n = boards.shape[0]
    inputs = np.zeros((n, 2, MAX_ACTIVE), dtype=np.int16)
    counts = np.zeros((n, 2), dtype=np.int8)
    stm = np.zeros(n, dtype=np.int8)
    for c in prange((n + 255) // 256):
        buf = np.zeros(MAX_ACTIVE, dtype=np.int32)
        for r in range(c * 256, min(n, (c + 1) * 256)):
            for persp in range(2):
                k = active_inputs(boards[r], persp, buckets, buf)
                counts[r, persp] = k
                for i in range(k):
                    inputs[r, persp, i] = buf[i]
            stm[r] = np.int8(boards[r][8])
    return inputs, counts, stm


def input_table(boards: np.ndarray, buckets: np.ndarray) -> InputTable:
    """The input table of ``boards`` (uint64[n, BOARD_WORDS], valid) for king-bucket table
    ``buckets`` (int64[64], :attr:`search.evaluation.network.NetworkShape.bucket_table`)."""
    boards = np.ascontiguousarray(boards, dtype=np.uint64).reshape(-1, 16)
    return InputTable(*_input_table_kernel(boards, np.ascontiguousarray(buckets, dtype=np.int64)))


@njit(cache=True, inline="always")
def row_output_bucket(counts, r, n_outputs):  # type: ignore[no-untyped-def]
    """The output bucket of row ``r``: its number of pieces is White's count of active inputs."""
    if n_outputs == 1:
        return 0
    return output_bucket(np.int64(counts[r, 0]), n_outputs)


# many parameters: hot (inlined per row), the network's layers one by one and the row's scratch; numba kernel
@njit(cache=True, inline="always")
def _forward_row(inputs, counts, stm, r, o, w1, b1, w2, b2, w3, b3, w4, b4, acc, x, z2, z3):  # type: ignore[no-untyped-def]
    """Forward pass of row ``r`` with output bucket ``o`` (:func:`row_output_bucket`): fills
    ``acc`` (2, H), ``x`` (2H), ``z2``, ``z3``; returns out."""
    h = b1.shape[0]
    for persp in range(2):
        for j in range(h):
            acc[persp, j] = b1[j]
        for i in range(counts[r, persp]):
            row = inputs[r, persp, i]
            for j in range(h):
                acc[persp, j] += w1[row, j]
    s = stm[r]
    for half in range(2):
        persp = s if half == 0 else 1 - s
        for j in range(h):
            a = acc[persp, j]
            x[half * h + j] = 0.0 if a <= 0.0 else (1.0 if a >= 1.0 else a)
    h2n = b2.shape[0]
    if h2n == 0:  # the direct form: out = b4 + sum_j x_j^2 W4_j
        out = b4[o]
        for j in range(2 * h):
            out += x[j] * x[j] * w4[o, j]
        return out
    for k in range(h2n):
        z2[k] = b2[k]
    for j in range(2 * h):
        xj = x[j]
        if xj != 0.0:
            for k in range(h2n):
                z2[k] += xj * w2[j, k]
    h3n = b3.shape[0]
    for k in range(h3n):
        z3[k] = b3[k]
    for j in range(h2n):
        a = z2[j]
        a = 0.0 if a <= 0.0 else (1.0 if a >= 1.0 else a)
        if a != 0.0:
            for k in range(h3n):
                z3[k] += a * w3[j, k]
    out = b4[o]
    for j in range(h3n):
        a = z3[j]
        a = 0.0 if a <= 0.0 else (1.0 if a >= 1.0 else a)
        out += a * w4[o, j]
    return out


# many parameters: the rows and the network's layers one by one; a numba kernel takes arrays and scalars (no dataclass
# in nopython mode)
@njit(cache=True, parallel=True)
def _scores_kernel(inputs, counts, stm, w1, b1, w2, b2, w3, b3, w4, b4):  # type: ignore[no-untyped-def]
    n = stm.shape[0]
    out = np.zeros(n, dtype=np.float64)
    h = b1.shape[0]
    for c in prange((n + 255) // 256):
        acc = np.zeros((2, h), dtype=np.float64)
        x = np.zeros(2 * h, dtype=np.float64)
        z2 = np.zeros(b2.shape[0], dtype=np.float64)
        z3 = np.zeros(b3.shape[0], dtype=np.float64)
        for r in range(c * 256, min(n, (c + 1) * 256)):
            o = row_output_bucket(counts, r, b4.shape[0])
            out[r] = _forward_row(inputs, counts, stm, r, o, w1, b1, w2, b2, w3, b3, w4, b4, acc, x, z2, z3)
    return out


# many parameters: the rows and the network's layers one by one; a numba kernel takes arrays and scalars (no dataclass
# in nopython mode)
@njit(cache=True, parallel=True)
def _gradient_kernel(inputs, counts, stm, coef, w1, b1, w2, b2, w3, b3, w4, b4, n_parts):  # type: ignore[no-untyped-def]
    n = stm.shape[0]
    h = b1.shape[0]
    h2n = b2.shape[0]
    h3n = b3.shape[0]
    g1 = np.zeros((n_parts,) + w1.shape, dtype=np.float64)
    gb1 = np.zeros((n_parts, h), dtype=np.float64)
    g2 = np.zeros((n_parts,) + w2.shape, dtype=np.float64)
    gb2 = np.zeros((n_parts, h2n), dtype=np.float64)
    g3 = np.zeros((n_parts,) + w3.shape, dtype=np.float64)
    gb3 = np.zeros((n_parts, h3n), dtype=np.float64)
    g4 = np.zeros((n_parts,) + w4.shape, dtype=np.float64)
    gb4 = np.zeros((n_parts, b4.shape[0]), dtype=np.float64)
    for part in prange(n_parts):
        acc = np.zeros((2, h), dtype=np.float64)
        x = np.zeros(2 * h, dtype=np.float64)
        z2 = np.zeros(h2n, dtype=np.float64)
        z3 = np.zeros(h3n, dtype=np.float64)
        d3 = np.zeros(h3n, dtype=np.float64)
        d2 = np.zeros(h2n, dtype=np.float64)
        dx = np.zeros(2 * h, dtype=np.float64)
        a0 = part * n // n_parts
        a1 = (part + 1) * n // n_parts
        for r in range(a0, a1):
            c = coef[r]
            if c == 0.0:
                continue
            o = row_output_bucket(counts, r, b4.shape[0])
            _forward_row(inputs, counts, stm, r, o, w1, b1, w2, b2, w3, b3, w4, b4, acc, x, z2, z3)
            gb4[part, o] += c
            if h2n == 0:  # the direct form: d out / d W4_oj = x_j^2, d out / d x_j = 2 x_j W4_oj
                for j in range(2 * h):
                    xj = x[j]
                    g4[part, o, j] += c * xj * xj
                    dx[j] = 2.0 * c * xj * w4[o, j] if 0.0 < xj < 1.0 else 0.0
            for k in range(h3n):
                a = z3[k]
                if a > 0.0:
                    g4[part, o, k] += c * (a if a < 1.0 else 1.0)
                d3[k] = c * w4[o, k] if 0.0 < a < 1.0 else 0.0
            for k in range(h3n):
                gb3[part, k] += d3[k]
            for j in range(h2n):
                a = z2[j]
                act = 0.0 if a <= 0.0 else (1.0 if a >= 1.0 else a)
                s = 0.0
                for k in range(h3n):
                    if act != 0.0:
                        g3[part, j, k] += act * d3[k]
                    s += w3[j, k] * d3[k]
                d2[j] = s if 0.0 < a < 1.0 else 0.0
            for k in range(h2n):
                gb2[part, k] += d2[k]
            for j in range(2 * h if h2n > 0 else 0):
                xj = x[j]
                s = 0.0
                for k in range(h2n):
                    s += w2[j, k] * d2[k]
                if xj != 0.0:
                    for k in range(h2n):
                        g2[part, j, k] += xj * d2[k]
                dx[j] = s if 0.0 < xj < 1.0 else 0.0
            st = stm[r]
            for half in range(2):
                persp = st if half == 0 else 1 - st
                for j in range(h):
                    gb1[part, j] += dx[half * h + j]
                for i in range(counts[r, persp]):
                    row = inputs[r, persp, i]
                    for j in range(h):
                        g1[part, row, j] += dx[half * h + j]
    return g1, gb1, g2, gb2, g3, gb3, g4, gb4


def _arrays(net: FloatNetwork) -> tuple[np.ndarray, ...]:
    """The parameters as contiguous float64 arrays, in :data:`PARAMS` order."""
    return tuple(np.ascontiguousarray(net.params[k], dtype=np.float64) for k in PARAMS)


def network_scores(net: FloatNetwork, table: InputTable) -> np.ndarray:
    """The float network's part of each row's score: float64[n], centipawns, side to move's view."""
    w1, b1, w2, b2, w3, b3, w4, b4 = _arrays(net)
    scores: np.ndarray = _scores_kernel(table.inputs, table.counts, table.stm, w1, b1, w2, b2, w3, b3, w4, b4)
    return scores


def network_gradient(net: FloatNetwork, table: InputTable, coef: np.ndarray) -> np.ndarray:
    """``sum_r coef[r] * d score_r / d theta`` (float64[net.size], :meth:`FloatNetwork.vector`
    order) for the float scores of :func:`network_scores`; rows with ``coef`` 0 are skipped."""
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    if coef.shape != (len(table),):
        raise ValueError(f"coef must have shape ({len(table)},), not {coef.shape}")
    w1, b1, w2, b2, w3, b3, w4, b4 = _arrays(net)
    parts = _gradient_kernel(table.inputs, table.counts, table.stm, coef, w1, b1, w2, b2, w3, b3, w4, b4, N_PARTS)
    out = []
    for p in parts:  # the parts added in order, outside the parallel kernel: the same sums whatever the threads
        total = p[0].copy()
        for k in range(1, N_PARTS):
            total += p[k]
        out.append(total.ravel())
    return np.concatenate(out)


__all__ = ["InputTable", "N_PARTS", "input_table", "network_gradient", "network_scores"]
