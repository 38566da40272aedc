"""The positions a run trains and validates on: the train and validation splits of a position
set, sampled per the run's settings, with each played move's index among the legal moves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from search.search_api import threads
from tuner.training.positions import Positions, load_positions, played_indices
from tuner.cores import threads_for
from tuner.errors import TunerError
from tuner.methods.registry import PLAYED_MOVES, methods
from tuner.training.tune_config import TuneConfig


@dataclass(frozen=True)
class TrainingData:
    """The training and validation positions of a run, and each played move's index among the
    legal moves of its position (the row order of a sweep; -1 for a position without one)."""

    train: Positions
    validation: Positions
    train_played_index: np.ndarray  # int64[P_train]


def load_training_data(cfg: TuneConfig, *, needs: frozenset[str] = frozenset({PLAYED_MOVES}),
                       progress: bool = True) -> TrainingData:
    """The train and validation splits of ``cfg.data`` (sampled per ``max_train`` and
    ``max_validation``), with every played move checked legal; one-line errors.

    ``needs``: what the method needs (:attr:`tuner.methods.registry.Method.needs`). With
    ``played_moves``, a set whose train split has no played move (built from a position file
    with results only) is refused before its positions are read, naming the methods that do
    without; of a set with some, only the positions that have one are used.
    """
    if not cfg.data:
        raise TunerError("no position set given: pass --data DIR (built by 'tuner ingest')")
    if PLAYED_MOVES in needs:
        _require_moves(cfg.data)
    train = load_positions(cfg.data, "train", limit=cfg.max_train, seed=cfg.seed, progress=progress)
    if len(train) == 0:
        raise TunerError(f"{cfg.data}: the train split holds no positions")
    validation = load_positions(cfg.data, "validation", limit=cfg.max_validation, seed=cfg.seed + 1,
                                progress=progress)
    if PLAYED_MOVES in needs:
        train, validation = (p.subset(np.flatnonzero(p.has_moves())) for p in (train, validation))
    with threads(threads_for(cfg.threads)):
        index = played_indices(train)
    return TrainingData(train, validation, index)


def _require_moves(data: str) -> None:
    from tuner.ingest.reader import read_split  # noqa: PLC0415 - keeps polars out of search-only imports

    moves = read_split(data, "train", columns=["move"])["move"]
    if len(moves) and moves.null_count() == len(moves):
        users = [name for name, m in methods().items() if PLAYED_MOVES not in m.needs]
        raise TunerError(f"{data} has no played moves (a position file with results only); "
                         f"methods that use results: {', '.join(users) or 'none'}")


__all__ = ["TrainingData", "load_training_data"]
