"""Texel's settings (:class:`TexelConfig`) and the positions it learns from, shared by the
linear trainer (:mod:`tuner.methods.texel`) and the network's (:mod:`tuner.methods.network_texel`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from search.catalog import GROUPS
from tuner.config import help_field
from tuner.errors import TunerError
from tuner.training.positions import Positions
from tuner.training.weight_masks import constraint_masks, mask_of


@dataclass(frozen=True, kw_only=True)
class TexelConfig:
    """Texel's settings (the ``[texel]`` table of a run's config.toml)."""

    # defaults: beta1, beta2 are Kingma & Ba's (docs/references.md [KB2015]); epochs, lr and
    # steps are round values, not tuned (docs/quality.md has the Texel run measured with them)
    epochs: int = help_field(10, "epochs: each refreshes the quiescence leaves, then updates the weights")
    optimizer: str = help_field("adam", "update rule: adam (Kingma & Ba 2015) or sgd")
    lr: float = help_field(1.0, "learning rate: Adam's step size in weight units (centipawns); for sgd, "
                                "weight units per unit of gradient")
    beta1: float = help_field(0.9, "Adam's beta1")
    beta2: float = help_field(0.999, "Adam's beta2")
    momentum: float = help_field(0.0, "sgd: heavy-ball momentum")
    batch_size: int = help_field(0, "positions per mini-batch, a pass of seeded mini-batches per epoch "
                                    "(0: full batch, 'steps' steps per epoch)")
    steps: int = help_field(50, "full batch: optimizer steps per epoch")
    k: float = help_field(0.0, "K of sigma(K q) per centipawn (0: fitted on the start weights)")
    l1: float = help_field(0.0, "L1 strength on the weights named by l1_on (per position, as E)")
    l1_on: tuple[str, ...] = help_field(tuple(g for g in GROUPS if g != "material"),
                                        "weights under L1, by group or feature-name prefix")
    l2: float = help_field(0.0, "L2 strength on the weights named by l2_on")
    l2_on: tuple[str, ...] = help_field((), "weights under L2, by group or feature-name prefix")
    constraint: tuple[str, ...] = help_field((), "equality constraints: each entry's weights keep their "
                                                 "sum at its starting value (empty: none)")
    network_lr: float = help_field(0.002, "a network's Adam step (--start network:... or a .mtnn file), in "
                                          "units of its clipped activations (the output layer's in pawns; "
                                          "docs/network.md has the runs behind the default)")
    teacher: str = help_field("", "networks: distil from these weights instead of the game results: the target "
                                  "of a position is sigma(K q_teacher), q_teacher its quiescence value under "
                                  "the teacher (a built-in name, a weights file or a network file; "
                                  "empty: the game results)", metavar="WEIGHTS")

    def validate(self) -> None:
        if self.epochs < 0 or self.steps < 1 or self.batch_size < 0:
            raise ValueError("epochs and batch_size must be >= 0, steps >= 1")
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"optimizer must be adam or sgd, not {self.optimizer!r}")
        for name in ("lr", "beta1", "beta2", "momentum", "k", "l1", "l2", "network_lr"):
            if not math.isfinite(getattr(self, name)) or getattr(self, name) < 0:
                raise ValueError(f"{name} must be a finite number >= 0, not {getattr(self, name)}")
        if self.lr <= 0 or self.network_lr <= 0:
            raise ValueError(f"lr and network_lr must be positive, not {self.lr} and {self.network_lr}")
        if not (self.beta1 < 1 and self.beta2 < 1 and self.momentum < 1):
            raise ValueError("beta1, beta2 and momentum must be below 1")
        for what in ("l1_on", "l2_on", "constraint"):
            mask_of(getattr(self, what), what)
        constraint_masks(self.constraint)



def with_results(pos: Positions, what: str) -> tuple[Positions, int]:
    """The positions of finished games (result 1-0, 0-1 or 1/2-1/2) and how many were skipped."""
    if pos.results is None:
        raise TunerError(f"the {what} positions carry no game results (texel needs the 'result' column)")
    keep = np.flatnonzero(np.isfinite(pos.results))
    return pos.subset(keep), len(pos) - len(keep)


def results_of(pos: Positions) -> np.ndarray:
    """The game results float64[P] of positions kept by :func:`with_results`."""
    if pos.results is None:
        raise TunerError("positions without game results reached Texel's objective")
    return pos.results


__all__ = ["TexelConfig", "results_of", "with_results"]
