"""Texel's game-result method over the sparse evaluator: ``tuner tune --method texel``.

Texel's tuning method (Peter Österlund, 2014; Chess Programming Wiki, "Texel's Tuning Method";
the baseline of Ethereal's and Gedas' tuners and of Arasan since 2017): minimise

    E(w) = (1/N) sum_p (R_p - sigma(K q_p(w)))^2

over the training positions, ``R_p`` the target: the game's result from the side to move's view
(1, 1/2, 0), or on a set with search scores (``tuner selfplay``) the mix
``lam * sigma(K s_p) + (1 - lam) * result`` (:mod:`tuner.methods.texel_config`, which also
keeps only quiet positions by default and says why; positions without a target are left out
and counted), ``q_p`` the quiescence value
of p: the linear evaluation of the leaf of its quiescence principal variation
(:func:`search.tree.search_api.search_many` at depth 0), so that dE/dw is the leaf's feature vector times
the logistic's slope (:mod:`objectives.texel`). The leaves are refreshed once per epoch, as
MMTO refreshes its PV leaves once per outer iteration.

An epoch: the stored leaves of the training positions give E and its gradient; the optimizer
(Adam by default, :mod:`tuner.training.optim`) takes ``steps`` full-batch steps, or one pass of seeded
mini-batches of ``batch_size`` positions, on float64 master weights; the master weights are
rounded to the evaluator's integers (:func:`tuner.training.optim.to_search_weights`: to nearest, ties
to even); then the leaves of the training and validation positions are searched anew with
those integers, and E is reported on them. K is fitted once, on the start weights
(:func:`objectives.texel.fit_k`: log-grid scan then golden section), unless ``k`` is given; it
is printed and stored in the metrics and the checkpoint. The run keeps (``--keep best``) and
stops early (``--early-stop``) by the validation error ``e_validation``, Texel's own criterion,
not by the validation move-match the driver also reports.

Options shared with MMTO where they apply: ``--train`` (the others stay frozen), L1 on
``l1_on``, L2 on ``l2_on``, and equality constraints on ``constraint`` (for each entry, the
sum of its weights stays at its starting value: after each step their common mean shift is
removed, the Euclidean projection onto that hyperplane). ``l2_start`` adds
``l2_start * |w - w0|^2`` over the trainable weights: a pull toward the start weights ``w0``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from objectives.texel import KBracketError, fit_k, loss, loss_and_gradient
from search.tree.alphabeta import KIND_EVAL
from search.tree.search_api import search_many, signed_features, threads
from search.evaluation.evaluation_api import EVAL_SCALE
from search.evaluation.evaluators import is_network
from tuner.progress import progress_bar
from tuner.training.positions import Positions
from tuner.methods.network_texel import NetworkTexelTrainer, StreamedNetworkTexelTrainer
from tuner.methods.texel_config import (K_SAMPLE, StreamTally, TexelConfig, describe_drops, stream_windows, streams,
                                        uses_scores, value_positions, value_targets)
from tuner.errors import TunerError, check_interrupt
from tuner.training.executor import Executor, LocalExecutor
from tuner.methods.registry import RESULTS, Method
from tuner.training.optim import SGD, Adam, Optimizer, floats_from_json, floats_to_json, optimizer_from_state, to_search_weights
from tuner.training.paced import Pacer
from tuner.training.training_data import TrainingData
from tuner.training.run_context import RunContext
from tuner.training.position_set import PositionStream
from tuner.training.tune_config import TuneConfig
from tuner.training.weight_masks import constraint_masks, hold_sums, mask_of, tuning_bounds



@dataclass(frozen=True)
class LeafRows:
    """Quiescence leaves of a set of positions, one CSR row each (layout: :mod:`objectives.texel`)."""

    offset: np.ndarray  # int64[N] eval units; nonzero only for a mate/draw verdict
    indptr: np.ndarray  # int64[N + 1]
    indices: np.ndarray
    values: np.ndarray
    nodes: int


def quiescence_leaves(boards: np.ndarray, w: np.ndarray, *, budget: int, n_threads: int,
                      pacer: Pacer | None = None, executor: Executor | None = None) -> LeafRows:
    """Search every board by quiescence alone (depth 0) with weights ``w``; each row's dot
    product with ``w`` plus its offset is the search's score (eval units, side to move's view).

    The leaf's features enter with the sign of the side to move at the root: + when the PV
    has even length (the leaf's side to move is the root's), - otherwise. The boards go
    through ``executor`` (default: this process with ``n_threads`` threads, in calls of about
    ``pacer.target`` seconds with a Ctrl-C check between them); results as one call.
    """
    executor = executor or LocalExecutor(n_threads)
    parts = []
    for _, _, chunk_parts in executor.map_chunks(leaf_chunk, (boards,), shared={"w": w}, pacer=pacer,
                                                 what="texel-leaves", budget=budget):
        parts.extend(chunk_parts)
    if not parts:
        return LeafRows(np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int16), np.zeros(0, np.int16), 0)
    offset = np.concatenate([p[0] for p in parts])
    nnz = np.cumsum([0] + [len(p[2]) for p in parts[:-1]])
    indptr = np.concatenate([parts[0][1][:1]] + [p[1][1:] + base for p, base in zip(parts, nnz)])
    return LeafRows(offset, indptr, np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]),
                    sum(p[4] for p in parts))


def leaf_chunk(boards: np.ndarray, *, w: np.ndarray, budget: int, pacer: Pacer | None = None) -> list[tuple[Any, ...]]:
    """The quiescence leaves of one chunk of boards (run by an executor): a list of
    ``(offset, indptr, indices, values, nodes)``, one per kernel call of about
    ``pacer.target`` seconds (a Ctrl-C check after each)."""
    pacer = pacer or Pacer()
    parts = []
    for a, z in pacer.pieces(len(boards)):
        t = time.perf_counter()
        r = search_many(boards[a:z], 0, w, budget=budget)
        pacer.record(z - a, time.perf_counter() - t)
        leaf = r.kinds == KIND_EVAL
        signs = np.where(leaf, np.where(r.pv_len % 2 == 0, 1, -1), 0).astype(np.int8)
        indptr, indices, values = signed_features(r.leaves, signs)
        parts.append((np.where(leaf, 0, r.scores).astype(np.int64), indptr, indices, values, int(r.nodes.sum())))
        check_interrupt()
    return parts


class TexelTrainer:
    """Texel's method, one epoch per outer iteration (see the module docstring)."""

    def __init__(self, common: TuneConfig, cfg: TexelConfig, data: TrainingData, w0: np.ndarray,
                 ctx: RunContext) -> None:
        self.common, self.cfg, self.ctx = common, cfg, ctx
        if cfg.teacher:
            raise TunerError("texel: --teacher distils into a network; start from one (--start network:...)")
        self._positions(data)
        self.targets_train = np.zeros(0)
        self.targets_validation = np.zeros(0)
        self.trainable = mask_of(common.train, "train")
        groups = [g & self.trainable for g in constraint_masks(cfg.constraint)]
        self.constrained = [g for g in groups if g.any()]
        self.w0 = np.asarray(w0, dtype=np.int32)
        self.constraint_sums = [float(self.w0[g].astype(np.int64).sum()) for g in self.constrained]
        self.low, self.high = tuning_bounds(self.w0)
        self.master = self.w0.astype(np.float64)
        self.w = self.w0.copy()
        self.k = float(cfg.k)
        self.opt: Optimizer | None = None
        self.leaves: LeafRows | None = None

    def _positions(self, data: TrainingData) -> None:
        """The training and validation positions with a target (:func:`value_positions`)."""
        cfg = self.cfg
        self.train, dropped = value_positions(data.train, cfg, "training")
        self.validation, dropped_val = value_positions(data.validation, cfg, "validation")
        if len(self.train) == 0:
            raise TunerError(f"{self.common.data}: no training position to learn from ({describe_drops(dropped)})")
        self.skipped, self.dropped = sum(dropped.values()), dropped
        if dropped or dropped_val:
            self.ctx.log(f"texel: left out training positions: {describe_drops(dropped) or 'none'}; validation: "
                         f"{describe_drops(dropped_val) or 'none'}")
        if uses_scores(self.train, cfg):
            self.ctx.log(f"texel: target = {cfg.lam:g} * sigma(K score) + {1 - cfg.lam:g} * result")

    # -- helpers
    def _optimizer(self) -> Optimizer:
        cfg, n = self.cfg, len(self.w0)
        masks = {"trainable": self.trainable, "l1": cfg.l1, "l1_mask": mask_of(cfg.l1_on, "l1_on") & self.trainable,
                 "l2": cfg.l2, "l2_mask": mask_of(cfg.l2_on, "l2_on") & self.trainable}
        if cfg.optimizer == "adam":
            return Adam(n, lr=cfg.lr, beta1=cfg.beta1, beta2=cfg.beta2, **masks)
        return SGD(n, lr=cfg.lr, momentum=cfg.momentum, **masks)

    def _leaves(self, pos: Positions) -> LeafRows:
        return quiescence_leaves(pos.boards, self.w, budget=self.common.budget, n_threads=self.ctx.threads,
                                 pacer=self.ctx.pacer("leaves"), executor=self.ctx.executor)

    def _e(self, rows: LeafRows, pos: Positions) -> float | None:
        if len(pos) == 0:
            return None
        with threads(self.ctx.threads):
            targets = self.targets_train if pos is self.train else self.targets_validation
            return loss(rows.offset, rows.indptr, rows.indices, rows.values, targets, self.w, self.k, EVAL_SCALE)

    def _measure(self) -> dict[str, Any]:
        t = time.perf_counter()
        self.leaves = self._leaves(self.train)
        e_train = self._e(self.leaves, self.train)
        e_val = self._e(self._leaves(self.validation), self.validation) if len(self.validation) else None
        return {"e_train": e_train, "e_validation": e_val, "k": self.k, "nodes": self.leaves.nodes,
                "search_seconds": round(time.perf_counter() - t, 3)}

    # -- the Trainer protocol
    def begin(self) -> dict[str, Any]:
        self.leaves = self._leaves(self.train)
        if self.k == 0.0:
            lv = self.leaves
            results = self.train.results
            finished = np.flatnonzero(np.isfinite(results)) if results is not None else np.zeros(0, np.int64)
            if results is None or len(finished) == 0:
                raise TunerError("texel: the positions carry no game results to fit K on; give --k")
            try:
                with threads(self.ctx.threads):
                    self.k = fit_k(lv.offset, lv.indptr, lv.indices, lv.values, np.nan_to_num(results), self.w,
                                   EVAL_SCALE, rows=finished)
            except KBracketError as exc:
                raise TunerError(f"cannot fit K on the start weights ({exc}): their quiescence values do not "
                                 "predict the game results; give --k, or start from other weights") from None
            self.ctx.log(f"texel: K = {self.k:.6g} per centipawn, fitted on the start weights")
        self._set_targets()
        self.opt = self._optimizer()
        return {**self._measure(), "updates": 0, "update_seconds": 0.0, "train_positions": len(self.train),
                "skipped_unfinished": self.dropped.get("unfinished", 0), "left_out": self.skipped}

    def _set_targets(self) -> None:
        self.targets_train = value_targets(self.train, self.cfg, self.k)
        self.targets_validation = value_targets(self.validation, self.cfg, self.k)

    def restore(self, state: dict[str, Any]) -> None:
        self.k = float(state["k"])
        self._set_targets()
        self.master = floats_from_json(state["master"], len(self.w0), "master")
        self.w = to_search_weights(self.master, self.low, self.high)
        self.opt = optimizer_from_state(state["optimizer"])
        self.leaves = self._leaves(self.train)

    def step(self, iteration: int) -> dict[str, Any]:
        assert self.opt is not None and self.leaves is not None
        cfg, lv, n = self.cfg, self.leaves, len(self.train)
        t = time.perf_counter()
        batches: list[np.ndarray | None]
        if cfg.batch_size > 0:
            order = np.random.default_rng([self.common.seed, iteration]).permutation(n)
            batches = [np.sort(order[a:a + cfg.batch_size]) for a in range(0, n, cfg.batch_size)]
        else:
            batches = [None] * cfg.steps
        check = True
        with threads(self.ctx.threads):
            for rows in progress_bar(batches, desc="update", unit="step", leave=False, disable=not self.ctx.progress):
                _, grad = loss_and_gradient(lv.offset, lv.indptr, lv.indices, lv.values, self.targets_train,
                                            self.master, self.k, EVAL_SCALE, rows=rows, validate=check)
                check = False
                if cfg.l2_start > 0:  # the pull toward the start: d/dw of l2_start * |w - w0|^2
                    with np.errstate(over="ignore", invalid="ignore"):  # the optimizer refuses a non-finite one
                        grad = grad + np.where(self.trainable, 2.0 * cfg.l2_start * (self.master - self.w0), 0.0)
                self.master = hold_sums(self.opt.step(self.master, grad), self.constrained, self.constraint_sums)
                check_interrupt()
        self.w = to_search_weights(self.master, self.low, self.high)
        t_update = time.perf_counter() - t
        return {**self._measure(), "updates": len(batches), "update_seconds": round(t_update, 3)}

    def weights(self) -> np.ndarray:
        return self.w

    def state(self) -> dict[str, Any]:
        assert self.opt is not None
        return {"k": self.k, "master": floats_to_json(self.master), "optimizer": self.opt.state_dict()}

    def finished(self) -> str | None:
        return None


class StreamedTexelTrainer(TexelTrainer):
    """Texel's method over a stream of the training positions (:mod:`tuner.training.position_set`), a
    window at a time: each window of ``stream_buffer`` chunks, its rows shuffled, is searched
    with the current integer weights, then a pass of ``batch_size`` mini-batches over it updates
    the master weights, which are rounded before the next window is searched. The leaves are
    refreshed every window, not every epoch, and only a window's are held. K is fitted on a
    sample of :data:`K_SAMPLE` positions (whole chunks in a seeded order) unless given;
    ``e_train`` is the mean over the epoch of each position's E when its window was searched
    (at the start: E on that sample); ``e_validation`` is measured as in memory."""

    stream: PositionStream

    def _positions(self, data: TrainingData) -> None:
        cfg = self.cfg
        if cfg.batch_size < 1:
            raise TunerError("texel: a streamed run trains by mini-batches: give --batch-size (e.g. 4096), or "
                             "--stream off")
        assert data.train_stream is not None
        self.stream = data.train_stream
        self.validation, dropped_val = value_positions(data.validation, cfg, "validation")
        if dropped_val:
            self.ctx.log(f"texel: left out validation positions: {describe_drops(dropped_val)}; the training "
                         "positions left out are counted an epoch at a time (left_out)")
        self.train = self.validation.subset(np.zeros(0, np.int64))  # a window's at a time, from begin() on
        self.skipped, self.dropped = 0, {}

    def begin(self) -> dict[str, Any]:
        sample, _ = value_positions(self.stream.sample(K_SAMPLE, self.common.seed), self.cfg, "training")
        if len(sample) == 0:
            raise TunerError(f"{self.common.data}: no training position to learn from in a sample of the set")
        self.train = sample
        if uses_scores(sample, self.cfg):
            self.ctx.log(f"texel: target = {self.cfg.lam:g} * sigma(K score) + {1 - self.cfg.lam:g} * result")
        out = super().begin()  # K on the sample, its leaves and E
        # from here on only a window's positions and leaves are held
        self.train, self.leaves = self.validation.subset(np.zeros(0, np.int64)), None
        self.targets_train = np.zeros(0)
        return {**out, "train_positions": None, "train_rows": len(self.stream), "sample_positions": len(sample),
                "skipped_unfinished": None, "left_out": None}

    def restore(self, state: dict[str, Any]) -> None:
        self.k = float(state["k"])
        self.targets_validation = value_targets(self.validation, self.cfg, self.k)
        self.master = floats_from_json(state["master"], len(self.w0), "master")
        self.w = to_search_weights(self.master, self.low, self.high)
        self.opt = optimizer_from_state(state["optimizer"])

    def step(self, iteration: int) -> dict[str, Any]:
        assert self.opt is not None
        cfg, tally, check = self.cfg, StreamTally(), True
        for pos in stream_windows(self.stream, cfg, iteration, self.common.seed, tally, self.ctx.threads):
            t = time.perf_counter()
            targets = value_targets(pos, cfg, self.k)
            lv = self._leaves(pos)
            tally.search_seconds += time.perf_counter() - t
            t = time.perf_counter()
            n = len(pos)
            with threads(self.ctx.threads):
                tally.e_sum += n * loss(lv.offset, lv.indptr, lv.indices, lv.values, targets, self.w, self.k,
                                        EVAL_SCALE)
                for a in range(0, n, cfg.batch_size):
                    rows = np.arange(a, min(a + cfg.batch_size, n), dtype=np.int64)
                    _, grad = loss_and_gradient(lv.offset, lv.indptr, lv.indices, lv.values, targets, self.master,
                                                self.k, EVAL_SCALE, rows=rows, validate=check)
                    check = False
                    if cfg.l2_start > 0:
                        with np.errstate(over="ignore", invalid="ignore"):
                            grad = grad + np.where(self.trainable, 2.0 * cfg.l2_start * (self.master - self.w0), 0.0)
                    self.master = hold_sums(self.opt.step(self.master, grad), self.constrained, self.constraint_sums)
                    tally.updates += 1
                    check_interrupt()
            self.w = to_search_weights(self.master, self.low, self.high)
            tally.n += n
            tally.nodes += lv.nodes
            tally.update_seconds += time.perf_counter() - t
        if tally.n == 0:
            raise TunerError(f"{self.common.data}: no training position to learn from "
                             f"({describe_drops(tally.dropped) or 'the set is empty'})")
        t = time.perf_counter()
        e_val = self._e(self._leaves(self.validation), self.validation) if len(self.validation) else None
        tally.search_seconds += time.perf_counter() - t
        return {**tally.metrics(), "e_validation": e_val, "k": self.k, "nodes": tally.nodes,
                "search_seconds": round(tally.search_seconds, 3)}


def texel_trainer(common: TuneConfig, cfg: TexelConfig, data: TrainingData, w0: Any, ctx: RunContext) -> Any:
    """Texel's trainer for ``w0``'s kind (linear or network), streamed when ``data`` is."""
    if is_network(w0):
        return (StreamedNetworkTexelTrainer if data.train_stream is not None else NetworkTexelTrainer)(
            common, cfg, data, w0, ctx)
    return (StreamedTexelTrainer if data.train_stream is not None else TexelTrainer)(common, cfg, data, w0, ctx)


METHOD = Method(
    name="texel",
    config=TexelConfig,
    trainer=texel_trainer,
    summary="Texel: fit sigma(K q) of the quiescence value to game results (least squares, Adam)",
    iterations="epochs",
    unit="epoch",
    panels=[("E = mean (R - sigma(K q))^2", [("e_train", "train"), ("e_validation", "validation")])],
    headline=("e_train", "e_validation"),
    needs=frozenset({RESULTS}),
    best_by=("e_validation", "min"),  # Texel's own criterion: the validation error it minimises
    evaluators=("linear", "network"),
    reads_stream=streams,
)
