"""The static evaluation as a user calls it (:func:`features`, :func:`evaluate` and their batch
forms): validated wrappers over the kernels of :mod:`search.evaluation.feature_kernels`. The search is :mod:`search.tree.search_api`.

Scores are in centipawns from the side to move's point of view:
``score = w . phi / PHASE_MAX`` where ``phi`` is the sparse tapered feature vector of
:mod:`search.params.catalog`. The kernels work in integer *eval units* (centipawns x PHASE_MAX) so
that sums are exact; these wrappers convert. Boards and weights are checked by
:mod:`search.core.validate` (:class:`~search.core.validate.InvalidBoardError`) and
:mod:`search.evaluation.validate` (:class:`~search.evaluation.validate.InvalidWeightsError`)
before any kernel sees them.
"""

from __future__ import annotations

import numpy as np

from search.params.catalog import PHASE_MAX, PLUGIN
from search.core.convert import Board
from search.evaluation.feature_kernels import evaluate_batch_kernel, features_batch_kernel, features_kernel, new_feature_buffers
from search.evaluation.terms_kernels import plugin_scores, with_plugin_features
from search.core.validate import check_board, check_boards
from search.evaluation.validate import check_weights

__all__ = ["EVAL_SCALE", "check_boards", "check_weights", "evaluate", "evaluate_batch", "evaluate_batch_units", "features",
           "features_batch"]

EVAL_SCALE = PHASE_MAX
"""Eval units per centipawn."""


def _features(b: Board) -> tuple[np.ndarray, np.ndarray]:
    """:func:`features` of a board known to be valid (no check)."""
    st, idx, val = new_feature_buffers()
    n = features_kernel(b, st, idx, val)
    if PLUGIN is not None:  # an engine author's terms follow (search.evaluation.terms_kernels)
        _, pi, pv = with_plugin_features(b[None, :], (np.array([0, n], dtype=np.int64), idx[:n], val[:n]))
        return pi, pv
    return idx[:n].copy(), val[:n].copy()


def features(b: Board) -> tuple[np.ndarray, np.ndarray]:
    """Sorted feature indices (int32) and values (int32) of one board, side to move's view."""
    return _features(check_board(b))


def evaluate(b: Board, w: np.ndarray) -> float:
    """Static score of one board in centipawns, side to move's view."""
    b = check_board(b)
    return float(evaluate_batch_units(b[None, :], w)[0]) / EVAL_SCALE


def features_batch(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR features of ``boards`` (uint64[n, BOARD_WORDS]): indptr int64[n+1], indices int32,
    values int32; row ``p`` is ``indices[indptr[p]:indptr[p+1]]``."""
    boards = check_boards(boards)
    csr: tuple[np.ndarray, np.ndarray, np.ndarray] = features_batch_kernel(boards)
    if PLUGIN is not None:
        return with_plugin_features(boards, csr)
    return csr


def evaluate_batch_units(boards: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Static scores (int64 eval units, 1/EVAL_SCALE centipawn, side to move's view) of ``boards``."""
    boards = check_boards(boards)
    w = check_weights(w)
    scores: np.ndarray = evaluate_batch_kernel(boards, w)
    if PLUGIN is not None:
        with_terms: np.ndarray = scores + plugin_scores(boards, w)
        return with_terms
    return scores


def evaluate_batch(boards: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Static scores (float64 centipawns, side to move's view) of ``boards``."""
    return evaluate_batch_units(boards, w) / EVAL_SCALE

