"""Public evaluator API: features and scores of boards, single or batched.

Scores are in centipawns from the side to move's point of view:
``score = w . phi / PHASE_MAX`` where ``phi`` is the sparse tapered feature vector of
:mod:`search.catalog`. The kernels work in integer *eval units* (centipawns x PHASE_MAX) so
that sums are exact; these wrappers convert.
"""

from __future__ import annotations

import numpy as np

from search.board import BOARD_WORDS
from search.catalog import N_FEATURES, PHASE_MAX
from search.convert import Board
from search.features import (
    MAX_FEATURES,
    evaluate_batch_kernel,
    evaluate_kernel,
    features_batch_kernel,
    features_kernel,
    new_scratch,
)

EVAL_SCALE = PHASE_MAX
"""Eval units per centipawn."""


def check_weights(w: np.ndarray) -> np.ndarray:
    """Validate an integer weight vector of length N_FEATURES; return it as int32."""
    w = np.asarray(w)
    if w.shape != (N_FEATURES,):
        raise ValueError(f"weights must have shape ({N_FEATURES},), not {w.shape}")
    if not np.issubdtype(w.dtype, np.integer):
        raise ValueError(f"weights must be integers, not {w.dtype}")
    return np.ascontiguousarray(w, dtype=np.int32)


def check_boards(boards: np.ndarray) -> np.ndarray:
    boards = np.asarray(boards)
    if boards.dtype != np.uint64 or boards.ndim != 2 or boards.shape[1] != BOARD_WORDS:
        raise ValueError(f"boards must be uint64 of shape (n, {BOARD_WORDS}), not {boards.dtype} {boards.shape}")
    return np.ascontiguousarray(boards)


def features(b: Board) -> tuple[np.ndarray, np.ndarray]:
    """Sorted feature indices (int32) and values (int32) of one board, side to move's view."""
    idx = np.zeros(MAX_FEATURES, dtype=np.int32)
    val = np.zeros(MAX_FEATURES, dtype=np.int32)
    n = features_kernel(b, new_scratch(), idx, val)
    return idx[:n].copy(), val[:n].copy()


def evaluate(b: Board, w: np.ndarray) -> float:
    """Static score of one board in centipawns, side to move's view."""
    score = np.zeros(2, dtype=np.int64)
    return evaluate_kernel(b, check_weights(w), score) / EVAL_SCALE


def features_batch(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR features of ``boards`` (uint64[n, BOARD_WORDS]): indptr int64[n+1], indices int32,
    values int32; row ``p`` is ``indices[indptr[p]:indptr[p+1]]``."""
    return features_batch_kernel(check_boards(boards))


def evaluate_batch(boards: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Static scores (float64 centipawns, side to move's view) of ``boards``."""
    return evaluate_batch_kernel(check_boards(boards), check_weights(w)) / EVAL_SCALE
