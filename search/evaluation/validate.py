"""The weights check at the boundary of the numba core, and the evaluator argument the kernels take.

Every public function of :mod:`search` that takes weights or an evaluator runs these once per
call, before any kernel sees the arrays (boards are checked by :mod:`search.core.validate`).

* :func:`check_weights` / :func:`check_weight_rows` raise :class:`InvalidWeightsError` unless
  the weights are integers of the catalogue's length within :data:`MAX_ABS_WEIGHT`, a bound
  under which no static evaluation can reach the mate band (derivation in
  :data:`MAX_TERM_COUNT`; :mod:`search.tree.search_api` asserts it against the search's
  ``MATE_BOUND``).
* :func:`check_evaluator` turns linear weights or a network into the kernels' evaluator argument.
"""

from __future__ import annotations

import numpy as np

from search.evaluation.network import QuantizedNetwork
from search.evaluation.plugin_tag import PluginTag
from search.params.catalog import N_FEATURES, PHASE_MAX, PLUGIN
from search.params.weights_base import MAX_ABS_WEIGHT as WEIGHTS_FILE_LIMIT

__all__ = [
    "InvalidWeightsError",
    "KernelEvaluator",
    "MAX_ABS_WEIGHT",
    "MAX_TERM_COUNT",
    "check_evaluator",
    "check_weight_rows",
    "check_weights",
]


class InvalidWeightsError(ValueError):
    """A weight vector of the wrong type, dtype or shape, or with a weight beyond
    :data:`MAX_ABS_WEIGHT`."""


MAX_TERM_COUNT = 546
"""An upper bound on ``sum_f |x_f|`` over the base terms of any board that passes
:func:`check_boards`, where ``x_f`` is the net count of term ``f`` (own minus opponent's).

Counting what :func:`search.evaluation.feature_kernels.collect` adds for each piece (both colours' additions,
so the bound holds for the net counts too):

* a pawn: material 1, piece-square 1, doubled / isolated-or-backward / passed / passed_free /
  phalanx / supported 1 each (6), king-zone attacker 1: **9**;
* a knight: material, piece-square, mobility, outpost, king-zone attacker (5) and, as the
  victim, threat_by_pawn (1): 6; a bishop 5; a rook 6 + threat_by_minor 2 = 8; a queen
  material, piece-square, mobility, zone (4) + threat by pawn, minor and rook (3): 7 --
  at most **9** for any piece other than a king;
* per side: king piece-square 1, shield1 + shield2 <= 3 (three files, shield2 only on files
  without a shield1 pawn), open + semi-open files <= 3, zone-attack count 1, bishop pair 1,
  tempo 1: **10**.

The material rule of :func:`board_problems` allows at most 15 pieces besides the king per
side, so the terms above sum to at most ``9 * 30 + 2 * 10 = 290``.

The ``attacks`` and ``defends`` terms add one per (piece, attacked occupied square) pair other
than a king target: a piece's attacks hold at most 8 occupied squares (a knight's or king's 8
squares, a queen's first piece in each of 8 directions; a rook or bishop 4, a pawn 2), so
at most ``8 * 16 = 128`` per side (king included) and 256 in all:
``sum_f |x_f| <= 290 + 256 = 546``.
"""

MAX_ABS_WEIGHT = WEIGHTS_FILE_LIMIT
"""Largest ``|w|`` accepted (262,144 centipawns, far beyond any useful weight; it was
``1 << 19`` before the ``attacks`` and ``defends`` groups raised :data:`MAX_TERM_COUNT`).

A static score is ``sum_f w_mg[f] x_f phase + w_eg[f] x_f (PHASE_MAX - phase)`` eval units,
so ``|score| <= max|w| * PHASE_MAX * MAX_TERM_COUNT = 2**18 * 24 * 546 = 3,435,134,976``,
below ``MATE_BOUND = 2**32 - 1000 = 4,294,966,296`` (:mod:`search.tree.alphabeta`): no evaluation
can be mistaken for a mate score, and every sum stays exact in int64.
"""


def _weights_array(w: object) -> np.ndarray:
    if isinstance(w, np.ndarray):
        return w
    try:
        return np.asarray(w)
    except (TypeError, ValueError, OverflowError) as exc:  # ragged nested lists and the like
        raise InvalidWeightsError(f"weights must be an integer array, not {type(w).__name__} ({exc})") from None


def _check_weight_values(w: np.ndarray) -> np.ndarray:
    if w.dtype.kind not in "iu":  # signed or unsigned integers (not bool, float, object)
        raise InvalidWeightsError(f"weights must be integers, not {w.dtype}")
    if w.size:
        low, high = int(w.min()), int(w.max())
        if low < -MAX_ABS_WEIGHT or high > MAX_ABS_WEIGHT:
            worst = low if -low > high else high
            raise InvalidWeightsError(
                f"weights must lie within +-{MAX_ABS_WEIGHT} so that no score reaches the mate band, "
                f"found {worst}")
    return np.ascontiguousarray(w, dtype=np.int32)


def check_weights(w: object) -> np.ndarray:
    """Validate a weight vector: integers, shape ``(N_FEATURES,)``, every ``|w| <=``
    :data:`MAX_ABS_WEIGHT`. Returns it as contiguous int32; raises :class:`InvalidWeightsError`."""
    arr = _weights_array(w)
    if arr.shape != (N_FEATURES,):
        raise InvalidWeightsError(f"weights must have shape ({N_FEATURES},), not {arr.shape}")
    return _check_weight_values(arr)


#: what the kernels take as an evaluator (:mod:`search.evaluation.static_eval`): linear int32 weights, a
#: network's kernel tuple, or a plug-in's pair (weights, tag)
KernelEvaluator = np.ndarray | tuple[np.ndarray, ...] | tuple[np.ndarray, PluginTag]


def check_evaluator(ev: object) -> KernelEvaluator:
    """The kernels' evaluator argument for ``ev``: a :class:`search.evaluation.network.QuantizedNetwork`'s
    kernel tuple (checked when the network was made or read), or linear weights validated by
    :func:`check_weights`."""
    if isinstance(ev, QuantizedNetwork):
        return ev.kernel_args()
    if isinstance(ev, tuple) and len(ev) == 2 and isinstance(ev[1], PluginTag):
        ev = ev[0]  # already a plug-in's kernel pair (w, tag): checked again, made again
    w = check_weights(ev)
    if PLUGIN is not None:  # an engine author's terms (search.params.terms): the search calls their kernel too
        from search.evaluation.terms_kernels import plugin_kernels  # noqa: PLC0415 - compiled only with a plug-in

        kernels = plugin_kernels()
        assert kernels is not None
        return (w, kernels.tag)
    return w


def check_weight_rows(w: object) -> np.ndarray:
    """Validate weight vectors stacked as rows (``(I, N_FEATURES)``, or one ``(N_FEATURES,)``
    vector, taken as one row). Returns contiguous int32 of shape ``(I, N_FEATURES)``."""
    arr = _weights_array(w)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != N_FEATURES:
        raise InvalidWeightsError(f"weights must have shape (n, {N_FEATURES}) or ({N_FEATURES},), not {arr.shape}")
    return _check_weight_values(arr)
