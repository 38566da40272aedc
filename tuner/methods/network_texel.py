"""Texel's method (Österlund 2014; :mod:`tuner.methods.texel`) when the evaluator is a network,
and distillation from a teacher's evaluation.

    E(theta) = (1/N) sum_p (R_p - sigma(K q_p(theta)))^2

``q_p`` is the quiescence value of position p under the quantized network (the static score of
the leaf of its quiescence principal variation, :func:`search.tree.search_api.search_many` at depth
0, plus a hybrid network's linear part), ``R_p`` the game's result from the mover's view, or
with ``teacher`` set, ``sigma(K q_teacher,p)``: the teacher's quiescence value through the same
logistic (distillation: a network fitted to a trained linear evaluator's scores first; positions of
unfinished games are then kept, since the teacher labels every position).

An epoch: the quiescence leaves of the training positions, found with the quantized network,
are stored as network inputs (one row per position of an
:class:`objectives.network_moves.NetworkLeafTable`); ``steps`` Adam steps (or a pass of
seeded mini-batches of ``batch_size`` positions) on the float parameters follow, each from E
and its gradient by back-propagation at those leaves (:func:`objectives.network_moves.network_objective`
with the result term alone: a position's single row has no move loss), in the parameter units
of MMTO's network trainer (:func:`tuner.methods.network_mmto.parameter_scales`, ``network_lr``)
and clipped to the magnitudes whose integer form cannot overflow. The float network is then
quantized and the leaves searched anew; ``e_train`` and ``e_validation`` are E of the quantized
network's own quiescence values, the figures the run keeps its best epoch by. K is fitted once
on the start network's values against the targets (or the teacher's against the results, with a
teacher), unless ``k`` is given.

A hybrid network's linear weights stay fixed, as with MMTO; Texel's L1, L2 and constraint
settings concern linear weights and are not used.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from objectives.network import input_table
from objectives.network_moves import NetworkLeafTable, network_objective
from objectives.texel import KBracketError, fit_k_scores, loss_of_scores
from search.tree.alphabeta import KIND_EVAL
from search.params.catalog import PHASE_MAX
from search.evaluation.evaluation_api import evaluate_batch_units
from search.evaluation.evaluators import Evaluator, load_evaluator
from search.evaluation.network import QuantizedNetwork, quantize
from search.tree.search_api import search_many, threads
from tuner.errors import TunerError, check_interrupt
from tuner.progress import progress_bar
from tuner.methods.network_mmto import parameter_scales
from tuner.methods.texel_config import (K_SAMPLE, StreamTally, TexelConfig, describe_drops, stream_windows, uses_scores,
                                        value_positions, value_targets)
from tuner.training.executor import Executor, LocalExecutor
from tuner.training.optim import Adam, Optimizer, floats_from_json, floats_to_json, optimizer_from_state
from tuner.training.pacer import Pacer
from tuner.training.positions import Positions
from tuner.training.run_context import RunContext
from tuner.training.training_data import TrainingData
from tuner.training.tune_config import TuneConfig


def quiescence_chunk(boards: np.ndarray, *, evaluator: Evaluator, budget: int,
                     pacer: Pacer | None = None) -> list[tuple[np.ndarray, ...]]:
    """The quiescence searches of one chunk of boards (run by an executor): per kernel call of
    about ``pacer.target`` seconds, ``(scores int64[n] eval units mover's view, kinds int8[n],
    leaves uint64[n, BOARD_WORDS], pv_len int64[n], nodes)``; a Ctrl-C check after each."""
    pacer = pacer or Pacer()
    parts: list[tuple[np.ndarray, ...]] = []
    for a, z in pacer.pieces(len(boards)):
        t = time.perf_counter()
        r = search_many(boards[a:z], 0, evaluator, budget=budget)
        pacer.record(z - a, time.perf_counter() - t)
        parts.append((r.scores.astype(np.int64), r.kinds, r.leaves, r.pv_len.astype(np.int64),
                      np.array([int(r.nodes.sum())])))
        check_interrupt()
    return parts


def quiescence_values(boards: np.ndarray, evaluator: Evaluator, *, budget: int, n_threads: int,
                      pacer: Pacer | None = None, executor: Executor | None = None) -> tuple[np.ndarray, ...]:
    """:func:`quiescence_chunk` over every board through ``executor`` (default: this process),
    concatenated in order: ``(scores, kinds, leaves, pv_len, nodes)``."""
    executor = executor or LocalExecutor(n_threads)
    parts: list[tuple[np.ndarray, ...]] = []
    for _, _, chunk_parts in executor.map_chunks(quiescence_chunk, (boards,), shared={"evaluator": evaluator},
                                                 pacer=pacer, what="texel-leaves", budget=budget):
        parts.extend(chunk_parts)
    if not parts:
        return (np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros((0, boards.shape[1]), np.uint64),
                np.zeros(0, np.int64), np.zeros(1, np.int64))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(5))


def leaf_table(net: QuantizedNetwork, scores: np.ndarray, kinds: np.ndarray, leaves: np.ndarray,
               pv_len: np.ndarray, targets: np.ndarray) -> NetworkLeafTable:
    """One row per position: its quiescence leaf as network inputs, with the sign of the root's
    mover (+1 when the leaf's side to move is the root's), the linear part's score as the row's
    base, and a mate or draw verdict as a constant (sign 0); ``targets`` float64[P] in [0, 1]."""
    p = len(scores)
    is_eval = kinds == KIND_EVAL
    sign = np.where(is_eval, np.where(pv_len % 2 == 0, 1, -1), 0).astype(np.int8)
    base = np.where(is_eval, 0, scores).astype(np.float64)
    if net.linear is not None and p:
        base += sign * evaluate_batch_units(leaves, net.linear).astype(np.float64)
    return NetworkLeafTable(np.arange(p + 1, dtype=np.int64), np.arange(p, dtype=np.int64), sign, base,
                            input_table(leaves, net.shape.bucket_table), np.asarray(targets, dtype=np.float64))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return out


class NetworkTexelTrainer:
    """Texel's method (or distillation) for a network, one epoch per outer iteration (module
    docstring); a :class:`tuner.training.driver.Trainer`."""

    def __init__(self, common: TuneConfig, cfg: TexelConfig, data: TrainingData, w0: QuantizedNetwork,
                 ctx: RunContext) -> None:
        self.common, self.cfg, self.ctx = common, cfg, ctx
        self.teacher: Evaluator | None = None
        if cfg.teacher:
            try:
                self.teacher = load_evaluator(cfg.teacher)
            except ValueError as exc:
                raise TunerError(f"texel: teacher: {exc}") from None
        self._positions(data)
        self.float = w0.dequantize()
        self.q = quantize(self.float, dict(w0.metadata))
        self.scale = parameter_scales(w0.shape)
        self.limit = self.float.limits_vector() / self.scale
        self.u = self.float.vector() / self.scale
        self.opt: Optimizer = Adam(self.float.size, lr=cfg.network_lr)
        self.k = float(cfg.k)
        self.targets_train: np.ndarray | None = None
        self.targets_validation: np.ndarray | None = None
        self.table: NetworkLeafTable | None = None

    def _positions(self, data: TrainingData) -> None:
        """The training and validation positions with a target (all of them with a teacher)."""
        cfg = self.cfg
        if self.teacher is not None:
            self.train, self.validation, self.skipped = data.train, data.validation, 0
        else:
            self.train, dropped = value_positions(data.train, cfg, "training")
            self.validation, dropped_val = value_positions(data.validation, cfg, "validation")
            self.skipped = sum(dropped.values())
            if dropped or dropped_val:
                self.ctx.log(f"texel: left out training positions: {describe_drops(dropped) or 'none'}; validation: "
                             f"{describe_drops(dropped_val) or 'none'}")
        if len(self.train) == 0:
            raise TunerError(f"{self.common.data}: no training position to learn from")

    # -- searches
    def _quiescence(self, pos: Positions, evaluator: Evaluator) -> tuple[np.ndarray, ...]:
        return quiescence_values(pos.boards, evaluator, budget=self.common.budget, n_threads=self.ctx.threads,
                                 pacer=self.ctx.pacer("leaves"), executor=self.ctx.executor)

    def _targets(self) -> None:
        """The targets of both splits: the game results, or the teacher's ``sigma(K q)`` (K fitted
        on the teacher's values against the results when not given)."""
        if self.teacher is None:
            if uses_scores(self.train, self.cfg):
                if self.k == 0.0:  # the scores' sigma needs K first: fit it on the results
                    results = self.train.results
                    has = np.isfinite(results) if results is not None else np.zeros(len(self.train), dtype=bool)
                    if not has.any():
                        raise TunerError("texel: the positions carry no game results to fit K on; give --k")
                    assert results is not None
                    q = self._quiescence(self.train, self.q)[0].astype(np.float64)
                    self.k = self._fit_k(q[has], results[has], "the start network")
                self.ctx.log(f"texel: target = {self.cfg.lam:g} * sigma(K score) + {1 - self.cfg.lam:g} * result")
            self.targets_train = value_targets(self.train, self.cfg, self.k)
            self.targets_validation = value_targets(self.validation, self.cfg, self.k)
            return
        q_train = self._quiescence(self.train, self.teacher)[0].astype(np.float64)
        q_val = self._quiescence(self.validation, self.teacher)[0].astype(np.float64)
        if self.k == 0.0:
            results = self.train.results
            has = np.isfinite(results) if results is not None else np.zeros(len(self.train), dtype=bool)
            if not has.any():
                raise TunerError("texel: the positions carry no game results to fit K on; give --k")
            assert results is not None
            self.k = self._fit_k(q_train[has], results[has], "the teacher")
        k_eu = self.k / PHASE_MAX
        self.targets_train, self.targets_validation = _sigmoid(k_eu * q_train), _sigmoid(k_eu * q_val)

    def _fit_k(self, q: np.ndarray, targets: np.ndarray, whose: str) -> float:
        try:
            k = fit_k_scores(q, targets, PHASE_MAX)
        except KBracketError as exc:
            raise TunerError(f"cannot fit K on {whose}'s quiescence values ({exc}); give --k") from None
        self.ctx.log(f"texel: K = {k:.6g} per centipawn, fitted on {whose}'s quiescence values")
        return k

    def _measure(self) -> dict[str, Any]:
        """Search both splits with the quantized network; store the training leaves; E of both."""
        assert self.targets_train is not None and self.targets_validation is not None
        t = time.perf_counter()
        scores, kinds, leaves, pv_len, nodes = self._quiescence(self.train, self.q)
        self.table = leaf_table(self.q, scores, kinds, leaves, pv_len, self.targets_train)
        e_train = loss_of_scores(scores.astype(np.float64), self.targets_train, self.k, PHASE_MAX)
        e_val = None
        if len(self.validation):
            v_scores = self._quiescence(self.validation, self.q)[0]
            e_val = loss_of_scores(v_scores.astype(np.float64), self.targets_validation, self.k, PHASE_MAX)
        return {"e_train": e_train, "e_validation": e_val, "k": self.k, "nodes": int(nodes.sum()),
                "search_seconds": round(time.perf_counter() - t, 3)}

    # -- the Trainer protocol
    def begin(self) -> dict[str, Any]:
        self._targets()
        if self.k == 0.0:
            assert self.targets_train is not None
            q = self._quiescence(self.train, self.q)[0].astype(np.float64)
            self.k = self._fit_k(q, self.targets_train, "the start network")
        return {**self._measure(), "updates": 0, "update_seconds": 0.0, "train_positions": len(self.train),
                "skipped_unfinished": self.skipped, "parameters": int(self.float.size)}

    def _restore_weights(self, state: dict[str, Any]) -> None:
        """K, the master vector, the network it gives (float and quantized) and the optimizer of a
        saved ``state``."""
        self.k = float(state["k"])
        self.u = floats_from_json(state["master"], self.float.size, "master")
        self.float = self.float.with_vector(self.u * self.scale)
        self.q = quantize(self.float, dict(self.q.metadata))
        self.opt = optimizer_from_state(state["optimizer"])

    def restore(self, state: dict[str, Any]) -> None:
        self._restore_weights(state)
        self._targets()
        self._measure()

    def step(self, iteration: int) -> dict[str, Any]:
        assert self.table is not None
        cfg, table, n = self.cfg, self.table, len(self.train)
        self.opt.lr = cfg.network_lr_of(iteration)
        t = time.perf_counter()
        batches: list[NetworkLeafTable]
        if cfg.batch_size > 0:
            order = np.random.default_rng([self.common.seed, iteration]).permutation(n)
            batches = [_rows(table, np.sort(order[a:a + cfg.batch_size])) for a in range(0, n, cfg.batch_size)]
        else:
            batches = [table] * cfg.steps
        with threads(self.ctx.threads):
            # plain lines, not tqdm's \r frames, when standard error is a log file (issue 58 item 15)
            for part in progress_bar(batches, desc="update", unit="step", leave=False, disable=not self.ctx.progress):
                o = network_objective(part, self.float, 1.0, mu=1.0, k_cp=self.k)
                if not math.isfinite(o.total) or not np.all(np.isfinite(o.gradient)):
                    raise FloatingPointError("Texel's objective became NaN or infinite; lower --network-lr")
                self.u = np.clip(self.opt.step(self.u, o.gradient * self.scale), -self.limit, self.limit)
                self.float = self.float.with_vector(self.u * self.scale)
                check_interrupt()
        self.q = quantize(self.float, dict(self.q.metadata))
        t_update = time.perf_counter() - t
        return {**self._measure(), "updates": len(batches), "update_seconds": round(t_update, 3),
                "network_lr": self.opt.lr}

    def weights(self) -> QuantizedNetwork:
        return self.q

    def state(self) -> dict[str, Any]:
        return {"k": self.k, "master": floats_to_json(self.u), "optimizer": self.opt.state_dict()}

    def finished(self) -> str | None:
        return None


class StreamedNetworkTexelTrainer(NetworkTexelTrainer):
    """Texel's method (or distillation) for a network over a stream of the training positions
    (:mod:`tuner.training.position_set`), a window at a time, as
    :class:`tuner.methods.texel.StreamedTexelTrainer` does for the linear evaluator: each
    window (its rows shuffled) is searched with the current quantized network (and the teacher),
    its leaves stored as a leaf table, a pass of ``batch_size`` mini-batches updates the float
    parameters, and the network is quantized again before the next window. K is fitted on a
    sample of positions unless given; ``e_train`` is the mean over the epoch of each position's E
    when its window was searched (at the start: E on that sample)."""

    def __init__(self, common: TuneConfig, cfg: TexelConfig, data: TrainingData, w0: QuantizedNetwork,
                 ctx: RunContext) -> None:
        assert data.train_stream is not None
        self.stream = data.train_stream
        super().__init__(common, cfg, data, w0, ctx)

    def _positions(self, data: TrainingData) -> None:
        """The validation positions as in memory; the training positions come a window at a time
        (the sample of :meth:`begin` first)."""
        if self.cfg.batch_size < 1:
            raise TunerError("texel: a streamed run trains by mini-batches: give --batch-size (e.g. 4096), or "
                             "--stream off")
        self.validation = data.validation
        if self.teacher is None:
            self.validation, dropped_val = value_positions(data.validation, self.cfg, "validation")
            if dropped_val:
                self.ctx.log(f"texel: left out validation positions: {describe_drops(dropped_val)}; the training "
                             "positions left out are counted an epoch at a time (left_out)")
        self.train, self.skipped = self.validation.subset(np.zeros(0, np.int64)), 0

    def _keep(self, pos: Positions) -> Positions:
        """The positions of a window that have a target (every one with a teacher)."""
        if self.teacher is not None:
            return pos
        return value_positions(pos, self.cfg, "training")[0]

    def _window_targets(self, pos: Positions) -> np.ndarray:
        """The targets of a window's kept positions, K known."""
        if self.teacher is None:
            return value_targets(pos, self.cfg, self.k)
        q = self._quiescence(pos, self.teacher)[0].astype(np.float64)
        out: np.ndarray = _sigmoid(self.k / PHASE_MAX * q)
        return out

    def begin(self) -> dict[str, Any]:
        self.train = self._keep(self.stream.sample(K_SAMPLE, self.common.seed))
        if len(self.train) == 0:
            raise TunerError(f"{self.common.data}: no training position to learn from in a sample of the set")
        out = super().begin()  # K on the sample, its targets, leaves and E
        self.train, self.table, self.targets_train = self.validation.subset(np.zeros(0, np.int64)), None, None
        return {**out, "train_positions": None, "train_rows": len(self.stream), "skipped_unfinished": None}

    def restore(self, state: dict[str, Any]) -> None:
        self._restore_weights(state)
        self.targets_validation = self._window_targets(self.validation) if len(self.validation) else np.zeros(0)

    def step(self, iteration: int) -> dict[str, Any]:
        cfg, tally = self.cfg, StreamTally()
        self.opt.lr = cfg.network_lr_of(iteration)
        for pos in stream_windows(self.stream, cfg, iteration, self.common.seed, tally, self.ctx.threads,
                                  keep=self.teacher is None):
            t = time.perf_counter()
            targets = self._window_targets(pos)
            scores, kinds, leaves, pv_len, nodes = self._quiescence(pos, self.q)
            table = leaf_table(self.q, scores, kinds, leaves, pv_len, targets)
            tally.search_seconds += time.perf_counter() - t
            t = time.perf_counter()
            n = len(pos)
            tally.e_sum += n * loss_of_scores(scores.astype(np.float64), targets, self.k, PHASE_MAX)
            with threads(self.ctx.threads):
                for a in range(0, n, cfg.batch_size):
                    part = _rows(table, np.arange(a, min(a + cfg.batch_size, n), dtype=np.int64))
                    o = network_objective(part, self.float, 1.0, mu=1.0, k_cp=self.k)
                    if not math.isfinite(o.total) or not np.all(np.isfinite(o.gradient)):
                        raise FloatingPointError("Texel's objective became NaN or infinite; lower --network-lr")
                    self.u = np.clip(self.opt.step(self.u, o.gradient * self.scale), -self.limit, self.limit)
                    self.float = self.float.with_vector(self.u * self.scale)
                    tally.updates += 1
                    check_interrupt()
            self.q = quantize(self.float, dict(self.q.metadata))
            tally.n += n
            tally.nodes += int(nodes.sum())
            tally.update_seconds += time.perf_counter() - t
        if tally.n == 0:
            raise TunerError(f"{self.common.data}: no training position to learn from "
                             f"({describe_drops(tally.dropped) or 'the set is empty'})")
        t = time.perf_counter()
        e_val = None
        if len(self.validation):
            assert self.targets_validation is not None
            v_scores = self._quiescence(self.validation, self.q)[0]
            e_val = loss_of_scores(v_scores.astype(np.float64), self.targets_validation, self.k, PHASE_MAX)
        tally.search_seconds += time.perf_counter() - t
        return {**tally.metrics(), "e_validation": e_val, "k": self.k, "nodes": tally.nodes,
                "search_seconds": round(tally.search_seconds, 3), "network_lr": self.opt.lr}


def _rows(table: NetworkLeafTable, rows: np.ndarray) -> NetworkLeafTable:
    """The positions ``rows`` (ascending) of a one-row-per-position table."""
    n = len(rows)
    return NetworkLeafTable(np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64), table.sign[rows],
                            table.base[rows], table.inputs.take(rows), table.results[rows])


__all__ = ["NetworkTexelTrainer", "StreamedNetworkTexelTrainer", "leaf_table", "quiescence_chunk", "quiescence_values"]
