"""TreeStrap(alpha-beta) (Veness et al. 2009, section 5; ``tuner tune --method treestrap-ab``):
every interior node of the alpha-beta tree (:mod:`search.tree.bootstrap_tree`) moves towards its
search value, one-sided at bounds (:func:`tuner.methods.search_targets.node_errors`); settings,
sources and the update's safeguards: :mod:`tuner.methods.bootstrap`."""

from __future__ import annotations

from dataclasses import dataclass

from tuner.methods.bootstrap import PANELS, BootstrapConfig
from tuner.methods.registry import Method
from tuner.methods.search_targets import TREESTRAP_AB, TreeStrapTrainer


@dataclass(frozen=True, kw_only=True)
class TreeStrapABConfig(BootstrapConfig):
    """TreeStrap(alpha-beta) settings."""


class TreeStrapABTrainer(TreeStrapTrainer):
    """TreeStrap(alpha-beta): the alpha-beta tree, one-sided targets at bounds."""

    method = TREESTRAP_AB


METHOD = Method(
    name=TREESTRAP_AB, config=TreeStrapABConfig, trainer=TreeStrapABTrainer,
    summary="TreeStrap(ab): every interior node of the alpha-beta tree towards its bounds (one-sided)",
    iterations="iterations", unit="iteration", panels=PANELS, headline=("rms_error_cp",))

__all__ = ["METHOD", "TreeStrapABConfig", "TreeStrapABTrainer"]
