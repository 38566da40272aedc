"""What TD-Leaf(lambda)'s two trainers share, the linear evaluator's
(:class:`tuner.methods.tdleaf.TDLeafTrainer`) and a network's
(:class:`tuner.methods.network_tdleaf.NetworkTDLeafTrainer`): the method's name, its settings
and the walk through whole games of a position set (:class:`TDLeafBase`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from search.core.board import W_STM
from tuner.config import help_field
from tuner.errors import TunerError, check_interrupt
from tuner.methods.bootstrap import BootstrapConfig, BootstrapTrainer, Tally
from tuner.training.training_data import TrainingData
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig

#: the method's name (registry and messages)
TDLEAF = "tdleaf"


@dataclass(frozen=True, kw_only=True)
class TDLeafConfig(BootstrapConfig):
    """TD-Leaf(lambda) settings."""

    lr: float = help_field(2000.0, "learning rate: weight units (cp) per unit of J difference per unit of "
                                "d J / d w (J = tanh(score / td_scale))")
    max_step: float = help_field(0.0, "cap on any weight's change per search, in cp (0: none)")
    td_lambda: float = help_field(0.7, "TD's lambda: discount of later differences (Giraffe: 0.7)")
    td_scale: float = help_field(400.0, "J = tanh(score / td_scale), score in cp")
    network_lr: float = help_field(0.001, "a network's Adam step per game (--start network:... or a .mtnn file), "
                                          "in the parameter units of MMTO's network trainer")

    def validate(self) -> None:
        super().validate()
        if not (self.network_lr > 0 and math.isfinite(self.network_lr)):
            raise ValueError(f"network_lr must be a positive number, not {self.network_lr}")
        if not 0 <= self.td_lambda <= 1:
            raise ValueError(f"td_lambda must lie in [0, 1], not {self.td_lambda}")
        if self.td_scale <= 0:
            raise ValueError(f"td_scale must be positive, not {self.td_scale}")


class TDLeafBase(BootstrapTrainer):
    """TD-Leaf(lambda)'s trainers (:class:`tuner.methods.bootstrap.BootstrapTrainer` with TD-Leaf
    settings): from a position set they walk whole games in order, their results as the final
    targets; they report no rms error (a game's differences take its place)."""

    method = TDLEAF

    def __init__(self, common: TuneConfig, cfg: BootstrapConfig, data: TrainingData, w0: Any,
                 ctx: RunContext) -> None:
        super().__init__(common, cfg, data, w0, ctx)
        if not isinstance(cfg, TDLeafConfig):
            raise TypeError(f"{self.method} needs TD-Leaf settings, not {type(cfg).__name__}")
        self.td = cfg
        if cfg.source != "selfplay" and data.train.results is None:
            raise TunerError(f"{common.data}: tdleaf from positions needs the games' results")

    def rms_error(self, tally: Tally) -> float | None:
        return None

    def _positions(self, iteration: int, tally: Tally) -> None:
        """Whole games of the training split, in a seeded order, until ``positions`` positions."""
        pos = self.data.train
        rng = np.random.default_rng([self.common.seed, iteration])
        results = pos.results
        assert results is not None
        ids = pos.game_ids
        taken = 0
        for g in rng.permutation(np.unique(ids)):
            if taken >= self.cfg.positions:
                break
            rows = np.flatnonzero(ids == g)
            if not np.isfinite(results[rows[0]]):
                continue  # an unfinished game: no final target
            self._new_game()
            trace = self.game_trace()
            for r in rows:
                b = pos.boards[r]
                self._learn(self._search(b, None), b, trace, tally)
                check_interrupt()
            r0 = rows[-1]
            white_score = results[r0] if int(pos.boards[r0][W_STM]) == 0 else 1.0 - results[r0]
            self.end_game(trace, 2.0 * white_score - 1.0, tally)
            taken += len(rows)
            tally.games += 1
            tally.plies += len(rows)


__all__ = ["TDLEAF", "TDLeafBase", "TDLeafConfig"]
