"""The registry entry of TD-Leaf(lambda) (``tuner tune --method tdleaf``): the linear evaluator's
trainer (:class:`tuner.methods.bootstrap.TDLeafTrainer`, online, per search) or a network's
(:class:`tuner.methods.network_tdleaf.NetworkTDLeafTrainer`, one step per game), by the start's
evaluator kind."""

from __future__ import annotations

from search.evaluators import Evaluator
from search.network import QuantizedNetwork
from tuner.methods.bootstrap import TDLEAF, TDLeafConfig, TDLeafTrainer
from tuner.methods.network_tdleaf import NetworkTDLeafTrainer
from tuner.methods.registry import Method
from tuner.training.run_context import RunContext
from tuner.training.training_data import TrainingData
from tuner.training.tune_config import TuneConfig


def tdleaf_trainer(common: TuneConfig, cfg: TDLeafConfig, data: TrainingData, w0: Evaluator,
                   ctx: RunContext) -> TDLeafTrainer | NetworkTDLeafTrainer:
    """The trainer for the start's evaluator kind: linear weights or a network."""
    if isinstance(w0, QuantizedNetwork):
        return NetworkTDLeafTrainer(common, cfg, data, w0, ctx)
    return TDLeafTrainer(common, cfg, data, w0, ctx)


METHOD = Method(
    name=TDLEAF, config=TDLeafConfig, trainer=tdleaf_trainer,
    summary="TD-Leaf(lambda) (Baxter et al. 1998): PV leaves towards later searches' and the result",
    iterations="iterations", unit="iteration", panels=[("mean |d_t|", [("mean_abs_td", "mean |d|")])],
    headline=("mean_abs_td",), evaluators=("linear", "network"))

__all__ = ["METHOD", "tdleaf_trainer"]
