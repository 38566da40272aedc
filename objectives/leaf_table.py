"""MMTO's stored PV leaves in a compact layout (:class:`CompactLeaves`), and the objective and
gradient computed from it, bit-identical to :func:`objectives.mmto.objective` on the tapered
CSR table it encodes, in far fewer bytes (the sizes per position, measured by
``python bench/scale.py``, are in ``docs/scaling.md``).

Why it is smaller. A tapered leaf row holds every touched base term ``f`` twice, as
``(f, x * phase)`` and ``(f + n_base, x * (phase_max - phase))`` in int16 (4 bytes per entry, an
int64 row pointer and an int64 offset per row). Here a row keeps its phase once (uint8) and its
base counts ``x`` as *differences* against a per-position reference vector (for each term, the
count most rows of the position share): moves of one position lead to leaves that differ in a
few terms. Each entry is one uint16, ``(f << value_bits) | (d & mask)``, the signed difference
``d`` in the low ``value_bits = 16 - index_bits`` bits; a larger difference is written as
several entries of the same term (they add).

Layout (P positions, R rows; rows as in :mod:`objectives.mmto`):

* ``pos_ptr`` int64[P + 1], ``played`` int64[P]: as in the tapered table;
* ``phase`` uint8[R]: the leaf's phase 0..phase_max, or :data:`VERDICT` for a row whose search
  ended in a rule's verdict (its score in ``verdict_scores``, no features);
* ``row_nnz`` uint16[R]: the row's entries; ``ref_nnz`` uint16[P]: the reference's entries;
* ``entry_ptr`` int64[P + 1]: position ``p``'s entries are ``entries[entry_ptr[p]:entry_ptr[p+1]]``,
  the reference's first, then each row's in row order;
* ``verdict_rows`` int64[V] (sorted), ``verdict_scores`` int64[V]: the verdict rows and their
  scores (eval units, mover's view; a draw, score 0, may be stored as a row without features).

A leaf row's score is ``phase * (w_mg . x) + (phase_max - phase) * (w_eg . x)`` with
``x = reference + differences``: the same integer as the tapered row's ``w . values``. Its
gradient adds ``coef * (x_f * phase)`` to ``w_mg[f]`` and ``coef * (x_f * (phase_max - phase))``
to ``w_eg[f]`` for each non-zero ``x_f``, row after row: the same products, added to each
gradient element in the same order as the tapered kernel, hence the same float64 sums.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from objectives._kernel_parts import sum_part_rows, sum_parts
from objectives.mmto import CHUNK, MAX_ROWS, Objective, _kind, _position_terms

#: ``phase`` of a row whose score is a rule's verdict (mate, draw)
VERDICT = 255
#: positions per work item of the encoder (one dense scratch matrix each)
ENCODE_BLOCK = 64
#: the encoder's error codes (a numba parallel loop cannot raise)
ERRORS = {-1: "a row with a verdict score has features", -2: "a row's middle- and end-game entries differ",
          -3: "a row is not a tapered feature vector"}


@dataclass(frozen=True)
class CompactLeaves:
    """A stored sweep in the compact layout (see the module docstring)."""

    pos_ptr: np.ndarray
    played: np.ndarray
    phase: np.ndarray
    row_nnz: np.ndarray
    ref_nnz: np.ndarray
    entry_ptr: np.ndarray
    entries: np.ndarray
    verdict_rows: np.ndarray
    verdict_scores: np.ndarray
    n_base: int
    phase_max: int

    @property
    def rows(self) -> int:
        """Rows (stored moves)."""
        return len(self.phase)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays."""
        return sum(int(getattr(self, f).nbytes) for f in ARRAYS)

    def tapered(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The tapered CSR form ``(offset int64[R], indptr int64[R + 1], indices int16,
        values int16)`` of :mod:`objectives.mmto` (the reference layout; tests and oracles)."""
        offset = np.zeros(self.rows, dtype=np.int64)
        offset[self.verdict_rows] = self.verdict_scores
        counts = _expand_kernel(self.pos_ptr, self.phase, self.row_nnz, self.ref_nnz, self.entry_ptr, self.entries,
                                self.n_base, self.phase_max, value_bits(self.n_base), np.zeros(0, dtype=np.int64),
                                np.zeros(0, dtype=np.int16), np.zeros(0, dtype=np.int16), False)
        indptr = np.zeros(self.rows + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = np.zeros(int(indptr[-1]), dtype=np.int16)
        values = np.zeros(int(indptr[-1]), dtype=np.int16)
        _expand_kernel(self.pos_ptr, self.phase, self.row_nnz, self.ref_nnz, self.entry_ptr, self.entries,
                       self.n_base, self.phase_max, value_bits(self.n_base), indptr, indices, values, True)
        return offset, indptr, indices, values


#: the array fields of :class:`CompactLeaves`
ARRAYS = ("pos_ptr", "played", "phase", "row_nnz", "ref_nnz", "entry_ptr", "entries", "verdict_rows", "verdict_scores")


def value_bits(n_base: int) -> int:
    """Bits of an entry's signed value: 16 minus the bits of a base-term index below ``n_base``."""
    bits = 16 - max(1, (n_base - 1).bit_length())
    if bits < 2:
        raise ValueError(f"objectives/leaf_table.py: {n_base} base terms leave no room for a value in 16 bits")
    return bits


@njit(cache=True, inline="always")
def _unpack(e, vb):  # type: ignore[no-untyped-def]
    """(term, signed value) of a packed entry."""
    e = np.int64(e)
    raw = e & ((1 << vb) - 1)
    if raw >= (1 << (vb - 1)):
        raw -= 1 << vb
    return e >> vb, raw


@njit(cache=True, inline="always")
def _emit(out, k, write, f, v, vb):  # type: ignore[no-untyped-def]
    """Write ``v`` for term ``f`` as entries from ``out[k]`` (several when it does not fit);
    return the next free index."""
    hi = (1 << (vb - 1)) - 1
    lo = -(1 << (vb - 1))
    while v != 0:
        piece = min(max(v, lo), hi)
        if write:
            out[k] = np.uint16((f << vb) | (piece & ((1 << vb) - 1)))
        k += 1
        v -= piece
    return k


# long, many parameters: hot, one position's rows encoded in one compiled unit from the CSR arrays and the block's
# scratch; a numba kernel takes arrays and scalars (no dataclass in nopython mode)
@njit(cache=True)
def _encode_position(p, pos_ptr, offset, indptr, indices, values, n_base, phase_max, vb, m, in_u, u_list, refv,  # type: ignore[no-untyped-def]
                     vals, cnts, phase, row_nnz, ref_nnz, out, k, write):
    """Encode position ``p``'s rows from ``out[k]``; return the next free index (``write``
    False: count only), or a negative error code (:data:`ERRORS`) when a row is not a tapered
    leaf row. ``m`` int32[MAX_ROWS, n_base] and ``in_u`` int8[n_base] are zero on entry and on
    a successful return."""
    a = pos_ptr[p]
    z = pos_ptr[p + 1]
    nu = 0
    for r in range(a, z):
        i0 = indptr[r]
        n = indptr[r + 1] - i0
        if offset[r] != 0:
            if n != 0:
                return -1
            if write:
                phase[r] = VERDICT
                row_nnz[r] = 0
            continue
        n_mg = 0
        for j in range(i0, i0 + n):
            if indices[j] < n_base:
                n_mg += 1
        n_eg = n - n_mg
        if n_mg > 0 and n_eg > 0 and n_mg != n_eg:
            return -2
        ph = 0
        if n_eg == 0 and n_mg > 0:
            ph = phase_max
        elif n_mg > 0:
            x0 = (np.int64(values[i0]) + np.int64(values[i0 + n_mg])) // phase_max
            if x0 == 0:
                return -3
            ph = np.int64(values[i0]) // x0
            if ph <= 0 or ph >= phase_max:
                return -3
        for j in range(i0, i0 + n):
            f = np.int64(indices[j])
            if f >= n_base:
                if n_mg > 0:
                    continue  # the middle-game entry gave it
                f -= n_base
                x = np.int64(values[j]) // phase_max
                ok = x * phase_max == values[j]
            else:
                x = (np.int64(values[j]) + (np.int64(values[j + n_mg]) if n_eg > 0 else 0)) // phase_max
                ok = x * ph == values[j] and (n_eg == 0 or (indices[j + n_mg] == f + n_base
                                                            and x * (phase_max - ph) == values[j + n_mg]))
            if not ok:
                return -3
            m[r - a, f] = x
            if in_u[f] == 0:
                in_u[f] = 1
                u_list[nu] = f
                nu += 1
        if write:
            phase[r] = ph
    # the reference: each term's most common count over the position's leaf rows
    n_ref = 0
    k0 = k
    for c in range(nu):
        f = u_list[c]
        nv = 0
        for r in range(a, z):
            if offset[r] != 0:
                continue
            x = m[r - a, f]
            found = False
            for t in range(nv):
                if vals[t] == x:
                    cnts[t] += 1
                    found = True
                    break
            if not found:
                vals[nv] = x
                cnts[nv] = 1
                nv += 1
        best = 0
        for t in range(1, nv):
            if cnts[t] > cnts[best]:
                best = t
        refv[c] = vals[best] if nv > 0 else 0
        k = _emit(out, k, write, f, refv[c], vb)
    n_ref = k - k0
    if write:
        ref_nnz[p] = n_ref
    for r in range(a, z):
        if offset[r] != 0:
            continue
        k1 = k
        for c in range(nu):
            f = u_list[c]
            k = _emit(out, k, write, f, np.int64(m[r - a, f]) - refv[c], vb)
        if write:
            row_nnz[r] = k - k1
    for r in range(a, z):
        for c in range(nu):
            m[r - a, u_list[c]] = 0
    for c in range(nu):
        in_u[u_list[c]] = 0
    return k


# many parameters: the CSR table, its compact layout and outputs; a numba kernel takes arrays and scalars (no
# dataclass in nopython mode)
@njit(cache=True, parallel=True)
def _encode_kernel(pos_ptr, offset, indptr, indices, values, n_base, phase_max, vb, entry_ptr, phase, row_nnz,  # type: ignore[no-untyped-def]
                   ref_nnz, out, write):
    """Count (``write`` False: into ``entry_ptr[1:]``, per position) or write the entries of
    every position, in parallel over blocks of positions; returns int64[blocks], each block's
    first error code (0: none)."""
    p_count = pos_ptr.shape[0] - 1
    n_blocks = (p_count + ENCODE_BLOCK - 1) // ENCODE_BLOCK
    errors = np.zeros(n_blocks, dtype=np.int64)
    for blk in prange(n_blocks):
        m = np.zeros((MAX_ROWS, n_base), dtype=np.int32)
        in_u = np.zeros(n_base, dtype=np.int8)
        u_list = np.zeros(n_base, dtype=np.int64)
        refv = np.zeros(n_base, dtype=np.int64)
        vals = np.zeros(MAX_ROWS, dtype=np.int64)
        cnts = np.zeros(MAX_ROWS, dtype=np.int64)
        for p in range(blk * ENCODE_BLOCK, min((blk + 1) * ENCODE_BLOCK, p_count)):
            k0 = entry_ptr[p] if write else 0
            k = _encode_position(p, pos_ptr, offset, indptr, indices, values, n_base, phase_max, vb, m, in_u, u_list,
                                 refv, vals, cnts, phase, row_nnz, ref_nnz, out, k0, write)
            if k < 0:
                errors[blk] = k
                break
            if not write:
                entry_ptr[p + 1] = k
    return errors


def encode(pos_ptr: np.ndarray, played: np.ndarray, offset: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
           values: np.ndarray, *, n_base: int, phase_max: int) -> CompactLeaves:
    """The compact form of a tapered table (layout of :mod:`objectives.mmto`; indices below
    ``2 * n_base``, values ``x * phase`` and ``x * (phase_max - phase)``). One-line ValueError
    when the table is not such a table."""
    if not 0 < phase_max < VERDICT:
        raise ValueError(f"objectives/leaf_table.py: phase_max must lie in 1..{VERDICT - 1}, not {phase_max}")
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= 2 * n_base):
        raise ValueError(f"objectives/leaf_table.py: feature indices must lie in [0, {2 * n_base})")
    rows = len(offset)
    p = len(pos_ptr) - 1
    if np.any(np.diff(pos_ptr) > MAX_ROWS):
        raise ValueError(f"objectives/leaf_table.py: more than {MAX_ROWS} rows in a position")
    vb = value_bits(n_base)
    phase = np.zeros(rows, dtype=np.uint8)
    row_nnz = np.zeros(rows, dtype=np.uint16)
    ref_nnz = np.zeros(p, dtype=np.uint16)
    counts = np.zeros(p + 1, dtype=np.int64)
    none = np.zeros(0, dtype=np.uint16)
    args = (np.ascontiguousarray(pos_ptr, dtype=np.int64), np.ascontiguousarray(offset, dtype=np.int64),
            np.ascontiguousarray(indptr, dtype=np.int64), np.ascontiguousarray(indices, dtype=np.int16),
            np.ascontiguousarray(values, dtype=np.int16), n_base, phase_max, vb)
    errors = _encode_kernel(*args, counts, phase, row_nnz, ref_nnz, none, False)
    if np.any(errors):
        raise ValueError(f"objectives/leaf_table.py: {ERRORS[int(errors[np.flatnonzero(errors)[0]])]}")
    entry_ptr = np.cumsum(counts)
    entries = np.zeros(int(entry_ptr[-1]), dtype=np.uint16)
    _encode_kernel(*args, entry_ptr, phase, row_nnz, ref_nnz, entries, True)
    verdict_rows = np.flatnonzero(offset != 0).astype(np.int64)
    return CompactLeaves(np.asarray(pos_ptr, dtype=np.int64), np.asarray(played, dtype=np.int64), phase, row_nnz,
                         ref_nnz, entry_ptr, entries, verdict_rows, np.asarray(offset, dtype=np.int64)[verdict_rows],
                         n_base, phase_max)


def concatenate(parts: list[CompactLeaves]) -> CompactLeaves:
    """One table of the positions of ``parts``, in order (row and entry numbers shifted)."""
    if not parts:
        raise ValueError("objectives/leaf_table.py: no tables to concatenate")
    first = parts[0]
    pos_ptrs, playeds, entry_ptrs, vrows = [first.pos_ptr[:1]], [], [first.entry_ptr[:1]], []
    row_base = 0
    entry_base = 0
    for t in parts:
        if (t.n_base, t.phase_max) != (first.n_base, first.phase_max):
            raise ValueError("objectives/leaf_table.py: tables of different feature layouts")
        pos_ptrs.append(t.pos_ptr[1:] + row_base)
        playeds.append(t.played + row_base)
        entry_ptrs.append(t.entry_ptr[1:] + entry_base)
        vrows.append(t.verdict_rows + row_base)
        row_base += t.rows
        entry_base += len(t.entries)
    return CompactLeaves(np.concatenate(pos_ptrs), np.concatenate(playeds), np.concatenate([t.phase for t in parts]),
                         np.concatenate([t.row_nnz for t in parts]), np.concatenate([t.ref_nnz for t in parts]),
                         np.concatenate(entry_ptrs), np.concatenate([t.entries for t in parts]), np.concatenate(vrows),
                         np.concatenate([t.verdict_scores for t in parts]), first.n_base, first.phase_max)


# many parameters: the compact table and the CSR outputs; a numba kernel takes arrays and scalars (no dataclass in
# nopython mode)
@njit(cache=True)
def _expand_kernel(pos_ptr, phase, row_nnz, ref_nnz, entry_ptr, entries, n_base, phase_max, vb, indptr, indices,  # type: ignore[no-untyped-def]
                   values, write):
    """The tapered rows of a compact table: their entry counts int64[R] (``write`` False), or
    (``write`` True) their sorted entries written from ``indptr``."""
    rows = phase.shape[0]
    counts = np.zeros(rows, dtype=np.int64)
    x = np.zeros(n_base, dtype=np.int64)
    ref = np.zeros(n_base, dtype=np.int64)
    for p in range(pos_ptr.shape[0] - 1):
        e = entry_ptr[p]
        for k in range(ref_nnz[p]):
            f, v = _unpack(entries[e + k], vb)
            ref[f] += v
        e += ref_nnz[p]
        for r in range(pos_ptr[p], pos_ptr[p + 1]):
            for f in range(n_base):
                x[f] = ref[f]
            for k in range(row_nnz[r]):
                f, v = _unpack(entries[e + k], vb)
                x[f] += v
            e += row_nnz[r]
            ph = np.int64(phase[r])
            if ph == VERDICT:
                continue
            n = 0
            j = indptr[r] if write else 0
            for copy in range(2):
                wt = ph if copy == 0 else phase_max - ph
                if wt == 0:
                    continue
                for f in range(n_base):
                    if x[f] != 0:
                        if write:
                            indices[j + n] = f + copy * n_base
                            values[j + n] = x[f] * wt
                        n += 1
            counts[r] = n
        for f in range(n_base):
            ref[f] = 0
    return counts


# long, many parameters: hot, the loss and gradient in one parallel pass over the compact table; a numba kernel takes
# arrays and scalars (no dataclass in nopython mode)
@njit(cache=True, parallel=True)
def compact_loss_and_gradient_kernel(pos_ptr, played, phase, row_nnz, ref_nnz, entry_ptr, entries, verdict_rows,  # type: ignore[no-untyped-def]
                                     verdict_scores, n_base, phase_max, vb, w, slope_eu, kind, move_scale, results,
                                     res_scale, k_eu):
    """:func:`objectives.mmto.loss_and_gradient_kernel` on a compact table: the same
    ``(move loss, result loss, gradient)``, bit for bit (see the module docstring)."""
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
        starts = np.zeros(MAX_ROWS, dtype=np.int64)
        xr = np.zeros(n_base, dtype=np.int64)
        marked = np.zeros(n_base, dtype=np.int8)
        ref_list = np.zeros(n_base, dtype=np.int64)
        row_list = np.zeros(n_base, dtype=np.int64)
        loss = 0.0
        res_loss = 0.0
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            d = played[p]
            if d < 0:
                continue
            a = pos_ptr[p]
            z = pos_ptr[p + 1]
            e = entry_ptr[p]
            n_ref = 0
            for k in range(ref_nnz[p]):
                f, v = _unpack(entries[e + k], vb)
                xr[f] += v
                if marked[f] == 0:
                    marked[f] = 1
                    ref_list[n_ref] = f
                    n_ref += 1
            e += ref_nnz[p]
            ref_mg = np.int64(0)
            ref_eg = np.int64(0)
            for t in range(n_ref):
                f = ref_list[t]
                ref_mg += np.int64(wl[f]) * xr[f]
                ref_eg += np.int64(wl[f + n_base]) * xr[f]
            for r in range(a, z):
                starts[r - a] = e
                ph = np.int64(phase[r])
                if ph == VERDICT:
                    scores[r - a] = verdict_scores[np.searchsorted(verdict_rows, r)]
                    continue
                mg = ref_mg
                eg = ref_eg
                for k in range(e, e + row_nnz[r]):
                    f, v = _unpack(entries[k], vb)
                    mg += np.int64(wl[f]) * v
                    eg += np.int64(wl[f + n_base]) * v
                e += row_nnz[r]
                scores[r - a] = ph * mg + (phase_max - ph) * eg
            move, res = _position_terms(scores, z - a, d - a, slope_eu, kind, coef, move_scale, results[p], res_scale,
                                        k_eu)
            loss += move
            res_loss += res
            for r in range(a, z):
                k_r = coef[r - a]
                ph = np.int64(phase[r])
                if k_r == 0.0 or ph == VERDICT:
                    continue
                s = starts[r - a]
                n_row = 0
                for k in range(s, s + row_nnz[r]):
                    f, v = _unpack(entries[k], vb)
                    xr[f] += v
                    if marked[f] == 0:
                        marked[f] = 2
                        row_list[n_row] = f
                        n_row += 1
                eg_w = phase_max - ph
                for t in range(n_ref + n_row):
                    f = ref_list[t] if t < n_ref else row_list[t - n_ref]
                    x = xr[f]
                    if x != 0:
                        if ph != 0:
                            grad[f] += k_r * (x * ph)
                        if eg_w != 0:
                            grad[f + n_base] += k_r * (x * eg_w)
                for k in range(s, s + row_nnz[r]):
                    f, v = _unpack(entries[k], vb)
                    xr[f] -= v
                for t in range(n_row):
                    marked[row_list[t]] = 0
            for t in range(n_ref):
                f = ref_list[t]
                xr[f] = 0
                marked[f] = 0
        part_loss[c] = loss
        part_res[c] = res_loss
    return sum_parts(part_loss), sum_parts(part_res), sum_part_rows(part_grad)


def objective_compact(t: CompactLeaves, w: np.ndarray, slope_cp: float, eval_scale: int, *, loss: str = "sigmoid",
                      results: np.ndarray | None = None, mu: float = 0.0, k_cp: float = 0.0) -> Objective:
    """:func:`objectives.mmto.objective` of a compact table (``w``: int weights of length
    ``2 * t.n_base``): the same figures and gradient, bit for bit."""
    if len(w) != 2 * t.n_base:
        raise ValueError(f"objectives/leaf_table.py: {len(w)} weights for a table of {2 * t.n_base} features")
    kind = _kind(loss)
    p = len(t.pos_ptr) - 1
    if results is None:
        results = np.full(p, np.nan)
    if results.shape != (p,):
        raise ValueError("results must be float64[P]")
    if mu < 0 or not math.isfinite(mu) or (mu > 0 and not k_cp > 0):
        raise ValueError("mu must be >= 0, and K > 0 when mu > 0")
    n = max(int(np.count_nonzero(t.played >= 0)), 1)
    cnt = max(int(np.count_nonzero((t.played >= 0) & ~np.isnan(results))), 1)
    move, res, grad = compact_loss_and_gradient_kernel(
        t.pos_ptr, t.played, t.phase, t.row_nnz, t.ref_nnz, t.entry_ptr, t.entries, t.verdict_rows, t.verdict_scores,
        t.n_base, t.phase_max, value_bits(t.n_base), np.ascontiguousarray(w, dtype=np.int32),
        slope_cp / eval_scale, kind, 1.0 / n, np.ascontiguousarray(results, dtype=np.float64),
        float(mu) / cnt, k_cp / eval_scale)
    result = res / cnt if mu > 0 else 0.0
    return Objective(move / n, result, move / n + mu * result, grad)


__all__ = ["ARRAYS", "VERDICT", "CompactLeaves", "concatenate", "encode", "objective_compact", "value_bits"]
