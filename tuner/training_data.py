"""The positions a run trains and validates on: the train and validation splits of a position
set, sampled per the run's settings, with each played move's index among the legal moves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from search.search_api import threads
from tuner.data import Positions, check_played, load_positions
from tuner.errors import TunerError
from tuner.tune_config import TuneConfig, n_threads


@dataclass(frozen=True)
class TrainingData:
    """The training and validation positions of a run, and each played move's index among the
    legal moves of its position (the row order of a sweep)."""

    train: Positions
    validation: Positions
    train_played_index: np.ndarray  # int64[P_train]


def load_training_data(cfg: TuneConfig, *, progress: bool = True) -> TrainingData:
    """The train and validation splits of ``cfg.data`` (sampled per ``max_train`` and
    ``max_validation``), with every played move checked legal; one-line errors."""
    if not cfg.data:
        raise TunerError("no position set given: pass --data DIR (built by 'tuner ingest')")
    train = load_positions(cfg.data, "train", limit=cfg.max_train, seed=cfg.seed, progress=progress)
    if len(train) == 0:
        raise TunerError(f"{cfg.data}: the train split holds no positions")
    validation = load_positions(cfg.data, "validation", limit=cfg.max_validation, seed=cfg.seed + 1,
                                progress=progress)
    with threads(n_threads(cfg)):
        index = check_played(train)
    return TrainingData(train, validation, index)


__all__ = ["TrainingData", "load_training_data"]
