"""The move model as a move predictor: how often the played move is its most likely one.

For each position, the played move's top-k credit under the model's scores is the one
definition of move-match (:func:`search.tree.search_api.move_credit`: ``clip((k - higher) / equal,
0, 1)``, ties as fractions), so the model's figures compare directly with a search's
(:mod:`tuner.arena.movematch`). The cross-entropy is the mean of ``-log pi(played move)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from objectives.move_choice import MoveChoiceSet, mean_loss, row_scores
from search.evaluation.evaluators import Evaluator
from search.pls.move_model import MoveFeatures, move_features
from search.tree.search_api import move_credit, search_many
from tuner.training.positions import Positions, check_played


def choice_set(pos: Positions, *, n_threads: int | None = None, mf: MoveFeatures | None = None) -> MoveChoiceSet:
    """The arrays of :mod:`objectives.move_choice` for a set of positions (every one with a legal
    played move: a one-line :class:`tuner.errors.TunerError` otherwise); ``mf``: their move
    features if already computed."""
    played = check_played(pos)
    mf = mf if mf is not None else move_features(pos.boards, n_threads=n_threads)
    return MoveChoiceSet(mf.pos_ptr, played, mf.slots)


def search_choice_set(pos: Positions, evaluator: Evaluator, depth: int, *, n_threads: int | None = None,
                      mf: MoveFeatures | None = None) -> tuple[MoveChoiceSet, int]:
    """The arrays of :mod:`objectives.move_choice` for a set of positions labelled by the engine's
    own choice instead of the played move: each position's label is the first move of a
    ``depth``-ply alpha-beta search (+ quiescence) with ``evaluator`` (Giraffe's training of its
    move model on the best moves of its searches). Positions whose search returns no move (a
    budget exhausted before the first move) are left out; returns the set and how many were.
    ``mf``: the positions' move features if already computed."""
    found = search_many(pos.boards, depth, evaluator, n_threads=n_threads)
    best = np.where(found.pv_len > 0, found.pv[:, 0], -1).astype(np.int64)
    mf = mf if mf is not None else move_features(pos.boards, n_threads=n_threads)
    counts = np.diff(mf.pos_ptr)
    owner = np.repeat(np.arange(len(pos)), counts)
    hit = np.flatnonzero(mf.moves.astype(np.int64) == best[owner])
    label = np.full(len(pos), -1, dtype=np.int64)
    label[owner[hit]] = hit - mf.pos_ptr[owner[hit]]
    keep = np.flatnonzero(label >= 0)
    if len(keep) == len(pos):
        return MoveChoiceSet(mf.pos_ptr, label, mf.slots), 0
    rows = np.flatnonzero(label[owner] >= 0)
    ptr = np.concatenate([[0], np.cumsum(counts[keep])]).astype(np.int64)
    return MoveChoiceSet(ptr, label[keep], mf.slots[rows]), len(pos) - len(keep)


def joined(a: MoveChoiceSet, b: MoveChoiceSet) -> MoveChoiceSet:
    """The positions of ``a`` then those of ``b`` as one set."""
    return MoveChoiceSet(np.concatenate([a.pos_ptr[:-1], a.pos_ptr[-1] + b.pos_ptr]), np.concatenate([a.played, b.played]),
                         np.concatenate([a.slots, b.slots]))


@dataclass(frozen=True)
class PredictorFigures:
    """The model's figures on a set of positions: ``loss`` (mean cross-entropy of the played
    move, nats), ``top1`` and ``top3`` (mean credit, ties as fractions), ``mean_legal_moves``."""

    positions: int
    loss: float
    top1: float
    top3: float
    mean_legal_moves: float

    def to_json(self) -> dict[str, float | int]:
        return {"positions": self.positions, "loss": round(self.loss, 5), "top1": round(self.top1, 5),
                "top3": round(self.top3, 5), "mean_legal_moves": round(self.mean_legal_moves, 2)}


def figures(data: MoveChoiceSet, weights: np.ndarray) -> PredictorFigures:
    """:class:`PredictorFigures` of the weights float64[N_MOVE_FEATURES] on ``data``."""
    n = len(data)
    if n == 0:
        return PredictorFigures(0, 0.0, 0.0, 0.0, 0.0)
    scores = row_scores(data, weights)
    rows = data.pos_ptr[:-1] + data.played
    return PredictorFigures(n, mean_loss(data, scores), float(move_credit(data.pos_ptr, rows, scores, 1).mean()),
                            float(move_credit(data.pos_ptr, rows, scores, 3).mean()), len(data.slots) / n)


__all__ = ["PredictorFigures", "choice_set", "figures", "joined", "search_choice_set"]
