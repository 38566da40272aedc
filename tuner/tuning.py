"""What every optimizer shares: the common settings of ``tuner tune``, the data and masks they
derive, and move-match measurement.

A run is configured by :class:`TuneConfig` (top level of the TOML file) and the method's own
dataclass (``[mmto]`` or ``[ga]`` table); ``RUN/config.toml`` holds both.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from search.api import DEFAULT_BUDGET, move_match, threads
from search.catalog import GROUPS, select
from search.weights import load_weights
from tuner.config import help_field
from tuner.data import Positions, check_played, load_positions
from tuner.errors import TunerError

METHODS = ("mmto", "ga")


@dataclass(frozen=True, kw_only=True)
class TuneConfig:
    """Settings every optimizer shares."""

    method: str = help_field("mmto", "optimizer: mmto or ga")
    data: str = help_field("", "position set written by 'tuner ingest' (a folder)", metavar="DIR")
    out: str = help_field("", "run folder for config.toml, metrics.jsonl, weights.json", metavar="RUN")
    start: str = help_field("material", "weights to start from: a weights file or material, classic",
                            metavar="WEIGHTS")
    train: tuple[str, ...] = help_field(GROUPS, "weights to train, by group or feature-name prefix; "
                                                "the others stay frozen", metavar="GROUPS")
    depth: int = help_field(1, "search depth counted from the training position: 1 = each move's "
                               "child searched by quiescence only (1 ply + quiescence)")
    budget: int = help_field(DEFAULT_BUDGET, "node budget of each search (a runaway guard)")
    max_train: int = help_field(0, "use a seeded random sample of this many training positions (0: all)")
    max_validation: int = help_field(5000, "validation positions for the move-match figures (0: all)")
    threads: int = help_field(0, "threads for the numba kernels (0: all cores)")
    seed: int = help_field(0, "seed of every random choice of the run")

    def validate(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, not {self.method!r}")
        if self.depth < 1 or self.depth > 4:
            raise ValueError(f"depth must be between 1 and 4, not {self.depth}")
        if self.budget < 1:
            raise ValueError(f"budget must be positive, not {self.budget}")
        if self.max_train < 0 or self.max_validation < 0:
            raise ValueError("max_train and max_validation must be >= 0")
        if not 0 <= self.threads <= numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads must be between 0 and {numba.config.NUMBA_NUM_THREADS}, not {self.threads}")
        mask_of(self.train, "train")


def mask_of(items: tuple[str, ...], what: str) -> np.ndarray:
    """bool[N_FEATURES] of the features named by ``items`` (groups or prefixes; empty: none)."""
    if not items:
        return np.zeros(len(select(["material"])), dtype=bool)
    try:
        return np.array(select(list(items)), dtype=bool)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


def n_threads(cfg: TuneConfig) -> int:
    return cfg.threads or numba.config.NUMBA_NUM_THREADS


def start_weights(cfg: TuneConfig) -> np.ndarray:
    """The starting weight vector (int32[N_FEATURES]); one-line error for a bad file."""
    try:
        return load_weights(cfg.start).values.copy()
    except ValueError as exc:
        raise TunerError(str(exc)) from None


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


def validation_match(cfg: TuneConfig, data: TrainingData, weights: np.ndarray) -> float | None:
    """Mean move-match (ties as fractions) of ``weights`` on the validation positions."""
    if len(data.validation) == 0:
        return None
    m = move_match(data.validation.boards, data.validation.played, weights, cfg.depth,
                   budget=cfg.budget, n_threads=n_threads(cfg))
    return float(m.mean())


def config_record(*configs: Any) -> dict[str, Any]:
    """The configuration dataclasses as one JSON-able mapping (for weights' metadata)."""
    out: dict[str, Any] = {}
    for c in configs:
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(c).items()})
    return out


__all__ = ["METHODS", "TrainingData", "TuneConfig", "config_record", "load_training_data",
           "mask_of", "n_threads", "start_weights", "validation_match"]
