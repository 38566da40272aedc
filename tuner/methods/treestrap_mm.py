"""TreeStrap(minimax) (Veness et al. 2009, section 4; ``tuner tune --method treestrap-mm``):
every interior node of a full-width minimax search (depth plies + quiescence, no pruning) moves
towards its own minimax value (:func:`tuner.methods.search_targets.tree_direction`); settings,
sources and the update's safeguards: :mod:`tuner.methods.bootstrap`."""

from __future__ import annotations

from dataclasses import dataclass

from tuner.methods.bootstrap import PANELS, BootstrapConfig
from tuner.methods.registry import Method
from tuner.methods.search_targets import TREESTRAP_MM, TreeStrapTrainer


@dataclass(frozen=True, kw_only=True)
class TreeStrapMMConfig(BootstrapConfig):
    """TreeStrap(minimax) settings."""


class TreeStrapMMTrainer(TreeStrapTrainer):
    """TreeStrap(minimax): a full-width minimax tree, exact targets."""

    method = TREESTRAP_MM
    minimax = True


METHOD = Method(
    name=TREESTRAP_MM, config=TreeStrapMMConfig, trainer=TreeStrapMMTrainer,
    summary="TreeStrap(minimax): every interior node of a full-width minimax tree towards its value",
    iterations="iterations", unit="iteration", panels=PANELS, headline=("rms_error_cp",))

__all__ = ["METHOD", "TreeStrapMMConfig", "TreeStrapMMTrainer"]
