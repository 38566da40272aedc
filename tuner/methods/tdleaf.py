"""The registry entry of TD-Leaf(lambda) (``tuner tune --method tdleaf``): the linear evaluator's
trainer (:class:`tuner.methods.bootstrap.TDLeafTrainer`, online, per search) or a network's
(:class:`tuner.methods.network_tdleaf.NetworkTDLeafTrainer`, one step per game), by the start's
evaluator kind."""

from __future__ import annotations

from tuner.methods.bootstrap import TDLEAF, TDLeafConfig, TDLeafTrainer
from tuner.methods.network_tdleaf import NetworkTDLeafTrainer
from tuner.methods.registry import Method, by_evaluator

METHOD = Method(
    name=TDLEAF, config=TDLeafConfig, trainer=by_evaluator(TDLeafTrainer, NetworkTDLeafTrainer),
    summary="TD-Leaf(lambda) (Baxter et al. 1998): PV leaves towards later searches' and the result",
    iterations="iterations", unit="iteration", panels=[("mean |d_t|", [("mean_abs_td", "mean |d|")])],
    headline=("mean_abs_td",), evaluators=("linear", "network"))

__all__ = ["METHOD"]
