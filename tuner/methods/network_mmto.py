"""MMTO's two steps (Hoki & Kaneko 2014; ``tuner.methods.mmto``) when the evaluator is a network.

1. *search*: every legal move of every training position is searched with the quantized
   network (the same sweep, :func:`tuner.training.paced.paced_sweep`); the move loss over all moves and
   the training move-match are computed from the search scores, and the rows within ``window``
   of the played move (one-sided for the softmax) keep their PV leaf as network inputs
   (:class:`objectives.network_moves.NetworkLeafTable`);
2. *update*: ``inner_steps`` Adam steps on the float parameters, each from the objective and
   its gradient at the stored leaves (:func:`objectives.network_moves.network_objective`),
   every parameter clipped to the magnitudes whose integer form cannot overflow; the float
   network is then quantized for the next search.

A hybrid network's linear weights stay fixed: only the network is trained, its output added to
the linear terms (a network started with a zero output layer searches exactly as its linear
part, so MMTO begins where the linear tuning ended).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from objectives.mmto import sweep_loss
from objectives.network import input_table
from objectives.network_moves import NetworkLeafTable, network_objective
from objectives.texel import KBracketError, fit_k_scores, loss_of_scores
from search.tree.alphabeta import KIND_EVAL
from search.params.catalog import PHASE_MAX
from search.evaluation.evaluation_api import evaluate_batch_units
from search.evaluation.network import NetworkShape, QuantizedNetwork, quantize
from search.tree.search_api import threads
from tuner.errors import TunerError, check_interrupt
from tuner.training.executor import LocalExecutor
from tuner.progress import progress_bar
from tuner.arena.movematch import top_k_credit
from tuner.training.optim import Adam, Optimizer, floats_from_json, floats_to_json, optimizer_from_state
from tuner.training.paced import Pacer, paced_sweep
from tuner.training.training_data import TrainingData, result_array
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig

from tuner.methods.mmto_config import MmtoConfig, stalled, value_target



class NetworkChunk(NamedTuple):
    """What one chunk of the network sweep measured and kept (see :func:`network_search_chunk`)."""

    j_sum: float  # the move loss summed over the chunk's positions
    match_sum: float  # the sum of their top-1 move-match credits
    rows: int  # legal moves searched
    nodes: int
    table: NetworkLeafTable  # the rows kept for the updates
    played_scores: np.ndarray  # int64[P]: each played move's search score (eval units)


def network_search_chunk(boards: np.ndarray, played_index: np.ndarray, results: np.ndarray, *,
                         net: QuantizedNetwork, depth: int, budget: int, slope: float, window: float,
                         loss: str = "softmax", pacer: Pacer | None = None) -> NetworkChunk:
    """Sweep ``boards`` (uint64[P, BOARD_WORDS]) with ``net``; ``played_index`` int64[P] is the
    played move's index among each position's legal moves, ``results`` float64[P] the game
    results from the mover's view (NaN: none). ``window`` in centipawns (0: keep every row)."""
    sw = paced_sweep(boards, depth, net, budget=budget, pacer=pacer or Pacer())
    rows = sw.pos_ptr[:-1] + played_index
    j_sum = sweep_loss(sw.pos_ptr, rows, sw.scores, slope, PHASE_MAX, loss=loss) * len(boards)
    match_sum = float(top_k_credit(sw.pos_ptr, rows, sw.scores, 1).sum())
    counts = np.diff(sw.pos_ptr)
    played_score = np.repeat(sw.scores[rows], counts)
    keep = np.ones(len(sw.scores), dtype=bool)
    if window > 0:
        lo = -window * PHASE_MAX
        keep = (sw.scores - played_score >= lo) if loss == "softmax" else (np.abs(sw.scores - played_score) <= -lo)
        keep[rows] = True
    kept_counts = np.add.reduceat(keep.astype(np.int64), sw.pos_ptr[:-1]) if len(boards) else np.zeros(0, np.int64)
    pos_ptr = np.zeros(len(boards) + 1, dtype=np.int64)
    np.cumsum(kept_counts, out=pos_ptr[1:])
    played = (np.cumsum(keep) - 1)[rows].astype(np.int64)
    is_eval = sw.kinds[keep] == KIND_EVAL
    sign = np.where(is_eval, sw.signs[keep], 0).astype(np.int8)
    leaves = sw.leaves[keep]
    base = np.where(is_eval, 0, sw.scores[keep]).astype(np.float64)
    if net.linear is not None and len(leaves):
        base += sign * evaluate_batch_units(leaves, net.linear).astype(np.float64)
    table = NetworkLeafTable(pos_ptr, played, sign, base, input_table(leaves, net.shape.bucket_table),
                             np.asarray(results, dtype=np.float64))
    return NetworkChunk(j_sum, match_sum, len(sw.scores), int(sw.nodes.sum()), table,
                        sw.scores[rows].astype(np.int64))


def concatenate_tables(parts: list[NetworkLeafTable]) -> NetworkLeafTable:
    """One table of consecutive chunks' tables (rows and positions renumbered)."""
    starts = np.cumsum([0] + [int(t.pos_ptr[-1]) for t in parts[:-1]])
    pos_ptr = np.concatenate([np.zeros(1, np.int64)] + [t.pos_ptr[1:] + s for t, s in zip(parts, starts)])
    played = np.concatenate([t.played + s for t, s in zip(parts, starts)]) if parts else np.zeros(0, np.int64)

    def cat(name: str) -> np.ndarray:
        return np.concatenate([getattr(t, name) for t in parts])

    inputs = parts[0].inputs.concat([t.inputs for t in parts[1:]]) if parts else None
    if inputs is None:
        raise ValueError("no chunks to concatenate")
    return NetworkLeafTable(pos_ptr, played.astype(np.int64), cat("sign"), cat("base"), inputs, cat("results"))


@dataclass(frozen=True)
class NetworkSweepSummary:
    """A network sweep of the training set: the move loss per position (over every legal
    move), the training move-match, the stored leaves, rows, nodes and played-move scores."""

    j_main: float
    match: float
    table: NetworkLeafTable
    rows_total: int
    nodes: int
    played_scores: np.ndarray


# many parameters: the sweep's settings as plain keyword values, as tuner.methods.mmto.sweep_kept's
def search_network_training_set(boards: np.ndarray, played_index: np.ndarray, results: np.ndarray,
                                net: QuantizedNetwork, *, depth: int, budget: int, slope: float, window: float,
                                loss: str, n_threads: int, executor: Any = None, pacer: Pacer | None = None,
                                batch: int = 4096, progress: bool = False) -> NetworkSweepSummary:
    """Step 1 over all positions, in chunks of ``batch`` through ``executor`` (default: this
    process), summed in chunk order."""
    executor = executor or LocalExecutor(n_threads)
    parts: list[NetworkChunk] = []
    bar = progress_bar(total=len(boards), desc="search", unit="pos", leave=False, disable=not progress)
    with threads(n_threads):
        for a, z, part in executor.map_chunks(network_search_chunk, (boards, played_index, results), size=batch,
                                              shared={"net": net}, pacer=pacer, what="network-mmto-sweep",
                                              depth=depth, budget=budget, slope=slope, window=window, loss=loss):
            parts.append(part)
            bar.update(z - a)
    bar.close()
    n = max(len(boards), 1)
    return NetworkSweepSummary(sum(p.j_sum for p in parts) / n, sum(p.match_sum for p in parts) / n,
                               concatenate_tables([p.table for p in parts]), sum(p.rows for p in parts),
                               sum(p.nodes for p in parts), np.concatenate([p.played_scores for p in parts]))


def parameter_scales(shape: NetworkShape) -> np.ndarray:
    """float64[size]: the unit each parameter is stepped in (:meth:`FloatNetwork.vector` order):
    1 for the layers whose values are clipped activations, 100 (a pawn) for the output layer's
    W4 and b4, which are centipawns. Adam's step is about ``lr`` units per parameter, so one
    learning rate suits every layer."""
    return np.concatenate([np.full(int(np.prod(s)), 100.0 if k in ("w4", "b4") else 1.0)
                           for k, s in shape.array_shapes().items()])


def _results(data: TrainingData, cfg: MmtoConfig) -> np.ndarray:
    """The result term's targets of the training positions (float64[P], NaN: none)."""
    value = value_target(cfg)
    return result_array(data.train) if value is None else value.targets(data.train)


class NetworkMmtoTrainer:
    """MMTO of a network (``tuner tune --method mmto --start network:...`` or a ``.mtnn``
    file), driven one outer iteration at a time (:class:`tuner.training.driver.Trainer`): a sweep with
    the quantized network, then ``inner_steps`` Adam steps (``network_lr``) on the float
    parameters from the stored leaves. The settings are MMTO's (loss, slope, window,
    inner_steps, result_weight, patience); ``optimizer``, ``step``, ``l1`` and the constraints
    concern linear weights and are not used. As :class:`tuner.methods.mmto.MmtoTrainer`, iteration
    ``t``'s metrics describe the network after ``t`` iterations and :meth:`restore` searches
    it again, so a resumed run ends bit for bit as an uninterrupted one."""

    def __init__(self, common: TuneConfig, cfg: MmtoConfig, data: TrainingData, w0: QuantizedNetwork,
                 ctx: RunContext) -> None:
        self.common, self.cfg, self.data, self.ctx = common, cfg, data, ctx
        self.float = w0.dequantize()
        self.q = quantize(self.float, dict(w0.metadata))
        self.scale = parameter_scales(w0.shape)
        self.limit = self.float.limits_vector() / self.scale
        self.u = self.float.vector() / self.scale
        self.opt: Optimizer = Adam(self.float.size, lr=cfg.network_lr)
        self.k = cfg.result_k
        self.history: list[float] = []
        self.summary: NetworkSweepSummary | None = None
        self.results = _results(data, cfg)

    def _search(self) -> tuple[NetworkSweepSummary, float]:
        t = time.perf_counter()
        s = search_network_training_set(self.data.train.boards, self.data.train_played_index, self.results, self.q,
                                        depth=self.common.depth, budget=self.common.budget, slope=self.cfg.slope,
                                        window=self.cfg.window, loss=self.cfg.loss, n_threads=self.ctx.threads,
                                        executor=self.ctx.executor, pacer=self.ctx.pacer("sweep"),
                                        batch=self.ctx.chunk, progress=self.ctx.progress)
        if not math.isfinite(s.j_main):
            raise FloatingPointError("MMTO objective became NaN or infinite")
        return s, time.perf_counter() - t

    def _result_error(self) -> float:
        assert self.summary is not None
        has = ~np.isnan(self.results)
        if not has.any():
            return 0.0
        return loss_of_scores(self.summary.played_scores[has].astype(np.float64), self.results[has], self.k, PHASE_MAX)

    def _objective(self) -> float:
        assert self.summary is not None
        if self.cfg.result_weight > 0:
            return self.summary.j_main + self.cfg.result_weight * self._result_error()
        return self.summary.j_main

    def _metrics(self, seconds: dict[str, float], losses: list[float]) -> dict[str, Any]:
        assert self.summary is not None
        s = self.summary
        extra = {"j_result": self._result_error(), "k": self.k} if self.cfg.result_weight > 0 else {}
        return {"j": self._objective(), "j_main": s.j_main, **extra, "match_train": s.match,
                "j_stored_first": losses[0] if losses else None, "j_stored_last": losses[-1] if losses else None,
                "parameters": int(self.float.size), "rows": s.rows_total, "rows_stored": int(s.table.pos_ptr[-1]),
                "leaf_bytes": int(s.table.nbytes), "nodes": s.nodes,
                **{f"{k}_seconds": round(v, 3) for k, v in seconds.items()}}

    def begin(self) -> dict[str, Any]:
        self.summary, t_s = self._search()
        if self.cfg.result_weight > 0 and self.k == 0:
            has = ~np.isnan(self.results)
            try:
                self.k = fit_k_scores(self.summary.played_scores[has].astype(np.float64), self.results[has], PHASE_MAX)
            except KBracketError as exc:
                raise TunerError(f"result term: {exc}; give result_k (--result-k) instead") from None
            self.ctx.log(f"result term: K = {self.k:.6g} per centipawn (fitted on the start network)")
        self.history = [self._objective()]
        return self._metrics({"search": t_s, "update": 0.0}, [])

    def _update(self) -> list[float]:
        assert self.summary is not None
        losses = []
        table = self.summary.table
        with threads(self.ctx.threads):
            for _ in progress_bar(range(self.cfg.inner_steps), desc="update", unit="step", leave=False,
                          disable=not self.ctx.progress):
                o = network_objective(table, self.float, self.cfg.slope, loss=self.cfg.loss,
                                      mu=self.cfg.result_weight, k_cp=self.k)
                if not math.isfinite(o.total) or not np.all(np.isfinite(o.gradient)):
                    raise FloatingPointError("MMTO objective became NaN or infinite; lower --network-lr")
                losses.append(o.total)
                self.u = np.clip(self.opt.step(self.u, o.gradient * self.scale), -self.limit, self.limit)
                self.float = self.float.with_vector(self.u * self.scale)
                check_interrupt()
        self.q = quantize(self.float, dict(self.q.metadata))
        return losses

    def restore(self, state: dict[str, Any]) -> None:
        self.u = floats_from_json(state["master"], self.float.size, "master")
        self.float = self.float.with_vector(self.u * self.scale)
        self.q = quantize(self.float, dict(self.q.metadata))
        self.opt = optimizer_from_state(state["optimizer"])
        self.history = [float(x) for x in state["j_history"]]
        self.k = float(state.get("k", self.cfg.result_k))
        self.summary, _ = self._search()

    def step(self, iteration: int) -> dict[str, Any]:
        t = time.perf_counter()
        losses = self._update()
        t_update = time.perf_counter() - t
        self.summary, t_s = self._search()
        self.history.append(self._objective())
        return self._metrics({"search": t_s, "update": t_update}, losses)

    def weights(self) -> QuantizedNetwork:
        return self.q

    def state(self) -> dict[str, Any]:
        return {"master": floats_to_json(self.u), "optimizer": self.opt.state_dict(), "j_history": self.history,
                "k": self.k}

    def finished(self) -> str | None:
        if stalled(self.history, self.cfg):
            return f"J_main stopped falling for {self.cfg.patience} iteration(s)"
        return None


__all__ = ["NetworkChunk", "NetworkMmtoTrainer", "parameter_scales", "NetworkSweepSummary", "concatenate_tables", "network_search_chunk",
           "search_network_training_set"]
