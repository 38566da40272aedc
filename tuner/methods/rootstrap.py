"""RootStrap(alpha-beta) (Veness et al. 2009, section 4; ``tuner tune --method rootstrap``): at
each search the root's evaluation moves towards the root's search value,
``dw = lr (V(s) - e(s)) x(s)`` (:func:`tuner.methods.search_targets.tree_direction`); settings,
sources and the update's safeguards: :mod:`tuner.methods.bootstrap`."""

from __future__ import annotations

from dataclasses import dataclass

from tuner.config import help_field
from tuner.methods.bootstrap import LR_HELP, PANELS, BootstrapConfig
from tuner.methods.registry import Method
from tuner.methods.search_targets import ROOTSTRAP, SearchTargetTrainer


@dataclass(frozen=True, kw_only=True)
class RootStrapConfig(BootstrapConfig):
    """RootStrap(alpha-beta) settings."""

    lr: float = help_field(0.03, LR_HELP)


class RootStrapTrainer(SearchTargetTrainer):
    """RootStrap(alpha-beta): the root of each search."""

    method = ROOTSTRAP


METHOD = Method(
    name=ROOTSTRAP, config=RootStrapConfig, trainer=RootStrapTrainer,
    summary="RootStrap(ab) (Veness et al. 2009): move the root's evaluation towards its search value",
    iterations="iterations", unit="iteration", panels=PANELS, headline=("rms_error_cp",))

__all__ = ["METHOD", "RootStrapConfig", "RootStrapTrainer"]
