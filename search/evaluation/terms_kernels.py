"""The kernels of an engine author's own terms (:mod:`search.params.terms`), made once per process from
the plug-in's ``count`` extractor by a factory (:func:`plugin_kernels`).

The built-in kernels (:mod:`search.evaluation.feature_kernels`) stay as they are and cached on disk; a
plug-in adds its part beside them:

* ``evaluate(b, w, scratch)``: the built-in score plus the plug-in's, eval units, side to
  move's view (``w`` the whole int32[N_FEATURES] vector): the search calls it through the
  evaluator argument ``(w, tag)`` (:mod:`search.evaluation.static_eval`), whose
  :class:`search.evaluation.plugin_tag.PluginTag` (:attr:`PluginKernels.tag`) names it;
* ``counts_batch(boards)``: the plug-in's net counts int64[n, N_PLUGIN_BASE] (White minus
  Black) and the phases int64[n] of uint64[n, BOARD_WORDS] boards, from which
  :func:`plugin_csr` and :func:`plugin_scores` derive features and scores.

The search kernels compiled for a plug-in are cached by numba as the default ones, keyed by the
tag's type (the plug-in's name and file digest, :func:`search.evaluation.plugin_tag.plugin_key`):
the first process that searches with a plug-in compiles them (``tuner``'s note says so,
:func:`tuner.cli.use_terms`), the next load them. ``counts_batch`` calls a C function through
``ctypes`` (``labs(0)``, which adds 0), which keeps it out of the cache ("dynamic globals"): it
is compiled once in each process that derives a plug-in's features.
"""

from __future__ import annotations

import ctypes
import functools
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from numba.core.errors import NumbaWarning

from search.core.board import W_STM
from search.params.catalog import N_PLUGIN_BASE, PHASE_MAX, PLUGIN, PLUGIN_START
from search.evaluation.feature_kernels import evaluate_kernel, phase_of
from search.evaluation.plugin_tag import EVALUATORS, PluginTag, plugin_key

_LIBC = ctypes.CDLL(None)
_labs = _LIBC.labs
_labs.restype = ctypes.c_long
_labs.argtypes = [ctypes.c_long]


@dataclass(frozen=True)
class PluginKernels:
    """The compiled functions of the active plug-in (module docstring)."""

    evaluate: Any
    counts_batch: Any
    #: the value standing for ``evaluate`` in the evaluator argument ``(w, tag)``
    tag: PluginTag


@functools.cache
def plugin_kernels() -> PluginKernels | None:
    """The active plug-in's kernels (made on the first call), or None without a plug-in."""
    if PLUGIN is None:
        return None
    # numba says, for every kernel compiled for the plug-in, that it will not cache it: intended
    warnings.filterwarnings("ignore", message=".*Cannot cache compiled function.*", category=NumbaWarning)
    count = PLUGIN.count
    n_plug = N_PLUGIN_BASE
    start = PLUGIN_START

    @njit
    def plugin_part(b, w):  # type: ignore[no-untyped-def]
        counts = np.zeros(n_plug, dtype=np.int64)
        count(b, counts)
        mg = 0
        eg = 0
        for k in range(n_plug):
            c = counts[k]
            if c != 0:
                mg += np.int64(w[start + k]) * c
                eg += np.int64(w[start + n_plug + k]) * c
        phase = phase_of(b)
        total = mg * phase + eg * (PHASE_MAX - phase)
        return total if b[W_STM] == 0 else -total

    @njit
    def evaluate(b, w, scratch):  # type: ignore[no-untyped-def]
        return evaluate_kernel(b, w, scratch) + plugin_part(b, w)

    @njit
    def counts_batch(boards):  # type: ignore[no-untyped-def]
        n = boards.shape[0]
        counts = np.zeros((n, n_plug), dtype=np.int64)
        phases = np.zeros(n, dtype=np.int64)
        for p in range(n):
            count(boards[p], counts[p])
            phases[p] = phase_of(boards[p]) + _labs(0)
        return counts, phases

    key = plugin_key(PLUGIN.name, PLUGIN.path, start, n_plug)
    EVALUATORS[key] = evaluate
    return PluginKernels(evaluate, counts_batch, PluginTag(key))


def _tapered(boards: np.ndarray) -> np.ndarray:
    """The plug-in's tapered feature values, side to move's view: int64[n, 2 * N_PLUGIN_BASE]
    (mg copies, then eg copies), as :func:`search.evaluation.feature_kernels.features_kernel` defines them."""
    kernels = plugin_kernels()
    assert kernels is not None
    counts, phases = kernels.counts_batch(boards)
    sign = np.where(boards[:, W_STM] == 0, 1, -1).astype(np.int64)
    x = counts * sign[:, None]
    return np.concatenate([x * phases[:, None], x * (PHASE_MAX - phases)[:, None]], axis=1)


def plugin_scores(boards: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The plug-in's part of each board's score, int64[n] eval units, side to move's view."""
    vals = _tapered(boards)
    out: np.ndarray = vals @ np.asarray(w[PLUGIN_START:], dtype=np.int64)
    return out


def with_plugin_features(boards: np.ndarray, csr: tuple[np.ndarray, np.ndarray, np.ndarray],
                         signs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR rows ``csr`` (indptr int64[n+1], indices, values) of the built-in features of
    ``boards`` with the plug-in's features appended to each row (their indices follow every
    built-in one, so rows stay sorted), optionally times ``signs`` (int8[n]; 0: row left empty).
    Dtypes are kept."""
    indptr, idx, val = csr
    vals = _tapered(boards)
    if signs is not None:
        vals = vals * signs.astype(np.int64)[:, None]
    rows, cols = np.nonzero(vals)
    pk = np.bincount(rows, minlength=len(boards)).astype(np.int64)
    nb = np.diff(indptr)
    new_ptr = np.zeros(len(boards) + 1, dtype=np.int64)
    np.cumsum(nb + pk, out=new_ptr[1:])
    out_idx = np.empty(int(new_ptr[-1]), dtype=idx.dtype)
    out_val = np.empty(int(new_ptr[-1]), dtype=val.dtype)
    pos = np.arange(len(idx), dtype=np.int64) + np.repeat(new_ptr[:-1] - indptr[:-1], nb)
    out_idx[pos] = idx
    out_val[pos] = val
    first = np.repeat(np.cumsum(pk) - pk, pk)
    ppos = new_ptr[rows] + nb[rows] + (np.arange(len(rows), dtype=np.int64) - first)
    out_idx[ppos] = (PLUGIN_START + cols).astype(idx.dtype)
    out_val[ppos] = vals[rows, cols].astype(val.dtype)
    return new_ptr, out_idx, out_val


__all__ = ["PluginKernels", "plugin_kernels", "plugin_scores", "with_plugin_features"]
