"""MMTO, Minimax Tree Optimization (Hoki & Kaneko, JAIR 49:527-568, 2014), over the sparse
evaluator: ``tuner tune --method mmto``.

The loop (``shared/BACKGROUND.md``, section MMTO):

1. *search*: every legal move of every training position is searched with the current weights
   (:func:`search.api.sweep`, ``depth`` plies counted from the position, then quiescence);
   each move keeps its PV leaf's signed features (:func:`search.api.signed_features`). The
   objective J_main over *all* moves is computed here, exactly, together with the training
   move-match;
2. *update*: ``inner_steps`` grid-adjacent steps (:mod:`objectives.grid`) reuse the stored
   leaves: each step computes J_main and its gradient from them (:mod:`objectives.mmto`) and
   moves every trainable weight by ``step``, with L1 on ``l1_on`` and the equality constraint
   on ``constraint`` held by the median rule;
3. repeat for ``iterations`` outer iterations, or until J_main on the training set has failed
   to fall by ``min_improvement`` (relative) ``patience`` times in a row.

Between searches the weights change by at most ``inner_steps * step`` each, so moves whose
score lies far from the played move's cannot come close: as in Arasan's MMTO tuner, only moves
within ``window`` centipawns of the played move's score are stored for the update (their
T' is below 1 % of its peak beyond 300 cp at the default slope). The reported J_main is always
the exact one over every move, from step 1.

Iteration ``t``'s metrics describe the weights after ``t`` outer iterations (``t = 0``: the
start); the checkpoint after each is what ``--resume`` continues from, and the sweep that
measures iteration ``t`` is the one whose leaves iteration ``t + 1`` updates from, so a resumed
run recomputes it and ends with the same weights as an uninterrupted one.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from objectives.grid import grid_adjacent_step, l1_penalty
from objectives.mmto import loss_and_gradient, sweep_loss
from search.alphabeta import KIND_EVAL
from search.api import signed_features, sweep, threads
from search.catalog import GROUPS
from search.evaluator import EVAL_SCALE
from tuner.config import help_field
from tuner.data import Positions
from tuner.movematch import top_k_credit
from tuner.run import Checkpoint, RunDir, provenance
from tuner.tuning import (
    TrainingData,
    TuneConfig,
    config_record,
    mask_of,
    n_threads,
    validation_match,
)

#: positions per sweep call (a progress-bar tick; bounds the memory of PV-leaf boards)
SWEEP_BATCH = 4096


@dataclass(frozen=True, kw_only=True)
class MmtoConfig:
    """MMTO's settings (the ``[mmto]`` table of a run's config.toml)."""

    iterations: int = help_field(10, "outer iterations: searches of the whole training set")
    inner_steps: int = help_field(32, "updates between searches, reusing the stored PV leaves "
                                      "(32 in Hoki & Kaneko 2014)")
    step: int = help_field(1, "h: every trainable weight moves by h per update (grid-adjacent)")
    slope: float = help_field(0.02, "a: slope of the sigmoid T(x) = 1/(1+exp(-a x)), per centipawn")
    window: float = help_field(300.0, "keep for the updates only moves scored within this many "
                                      "centipawns of the played move (0: all moves)")
    l1: float = help_field(2e-5, "lambda_1 of the L1 term on the weights named by l1_on "
                                 "(J_main is per position)")
    l1_on: tuple[str, ...] = help_field(tuple(g for g in GROUPS if g != "material"),
                                        "weights under L1, by group or feature-name prefix")
    constraint: tuple[str, ...] = help_field(("mg.material",), "weights whose sum stays at its "
                                             "starting value (empty: no constraint)")
    patience: int = help_field(2, "stop after J_main failed to fall this many iterations in a row")
    min_improvement: float = help_field(0.0, "relative fall of J_main that counts as falling")

    def validate(self) -> None:
        if self.iterations < 0 or self.inner_steps < 1 or self.step < 1 or self.patience < 1:
            raise ValueError("iterations must be >= 0; inner_steps, step and patience >= 1")
        if not (self.slope > 0 and math.isfinite(self.slope)):
            raise ValueError(f"slope must be a positive number, not {self.slope}")
        if self.window < 0 or self.l1 < 0 or self.min_improvement < 0:
            raise ValueError("window, l1 and min_improvement must be >= 0")
        l1_mask = mask_of(self.l1_on, "l1_on")
        constrained = mask_of(self.constraint, "constraint")
        if np.any(l1_mask & constrained):
            raise ValueError("l1_on and constraint must not name the same weights")


@dataclass(frozen=True)
class LeafTable:
    """The stored sweep of one training set (layout: :mod:`objectives.mmto`)."""

    pos_ptr: np.ndarray
    played: np.ndarray
    offset: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class SweepSummary:
    """What a search of the training set measured, and the leaves it stored."""

    j_main: float
    match: float
    table: LeafTable
    rows_total: int
    nodes: int


def search_training_set(pos: Positions, played_index: np.ndarray, w: np.ndarray, *, depth: int,
                        budget: int, slope: float, window: float, threads_n: int,
                        progress: bool) -> SweepSummary:
    """Step 1: sweep every position, measure J_main and move-match, store the PV leaves."""
    parts: list[tuple[np.ndarray, ...]] = []
    j_sum = 0.0
    match_sum = 0.0
    rows_total = 0
    nodes = 0
    bar = tqdm(total=len(pos), desc="search", unit="pos", leave=False, disable=not progress)
    with threads(threads_n):
        for a in range(0, len(pos), SWEEP_BATCH):
            z = min(a + SWEEP_BATCH, len(pos))
            sw = sweep(pos.boards[a:z], depth, w, budget=budget, leaves=True)
            rows = sw.pos_ptr[:-1] + played_index[a:z]
            j_sum += sweep_loss(sw.pos_ptr, rows, sw.scores, slope, EVAL_SCALE) * (z - a)
            match_sum += float(top_k_credit(sw.pos_ptr, rows, sw.scores, 1).sum())
            rows_total += len(sw.scores)
            nodes += int(sw.nodes.sum())
            parts.append(_keep_rows(sw, rows, window))
            bar.update(z - a)
    bar.close()
    table = _concatenate(parts)
    n = len(pos)
    return SweepSummary(j_sum / n, match_sum / n, table, rows_total, nodes)


def _keep_rows(sw: Any, played_rows: np.ndarray, window: float) -> tuple[np.ndarray, ...]:
    """The rows of one sweep batch that the updates use, with their signed leaf features."""
    counts = np.diff(sw.pos_ptr)
    sd = np.repeat(sw.scores[played_rows], counts)
    is_played = np.zeros(len(sw.scores), dtype=bool)
    is_played[played_rows] = True
    leaf = sw.kinds == KIND_EVAL
    keep = leaf | is_played
    if window > 0:
        keep &= np.abs(sw.scores - sd) <= window * EVAL_SCALE
        keep |= is_played
    kept_counts = np.add.reduceat(keep.astype(np.int64), sw.pos_ptr[:-1])
    pos_ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(kept_counts, out=pos_ptr[1:])
    new_index = np.cumsum(keep) - 1
    played = new_index[played_rows].astype(np.int64)
    signs = np.where(leaf, sw.signs, 0)[keep].astype(np.int8)
    offset = np.where(leaf, 0, sw.scores)[keep].astype(np.int64)
    indptr, indices, values = signed_features(sw.leaves[keep], signs)
    return pos_ptr, played, offset, indptr, indices, values


def _concatenate(parts: list[tuple[np.ndarray, ...]]) -> LeafTable:
    pos_ptrs, playeds, offsets, indptrs, indices, values = [], [], [], [], [], []
    row_base = 0
    nnz_base = 0
    for k, (pp, pl, off, ip, ix, va) in enumerate(parts):
        pos_ptrs.append(pp[(0 if k == 0 else 1):] + row_base)
        playeds.append(pl + row_base)
        offsets.append(off)
        indptrs.append(ip[(0 if k == 0 else 1):] + nnz_base)
        indices.append(ix)
        values.append(va)
        row_base += len(off)
        nnz_base += len(ix)
    return LeafTable(np.concatenate(pos_ptrs), np.concatenate(playeds), np.concatenate(offsets),
                     np.concatenate(indptrs), np.concatenate(indices), np.concatenate(values))


@dataclass(frozen=True)
class Masks:
    trainable: np.ndarray
    l1: np.ndarray
    constrained: np.ndarray


def masks_of(common: TuneConfig, cfg: MmtoConfig) -> Masks:
    trainable = mask_of(common.train, "train")
    return Masks(trainable, mask_of(cfg.l1_on, "l1_on") & trainable, mask_of(cfg.constraint, "constraint") & trainable)


def update(table: LeafTable, w: np.ndarray, cfg: MmtoConfig, masks: Masks, *, threads_n: int,
           progress: bool) -> tuple[np.ndarray, list[float]]:
    """Step 2: ``inner_steps`` grid-adjacent updates from the stored leaves; returns the new
    weights and J_main (on the stored rows) before each step."""
    losses = []
    with threads(threads_n):
        for _ in tqdm(range(cfg.inner_steps), desc="update", unit="step", leave=False, disable=not progress):
            j, grad = loss_and_gradient(table.pos_ptr, table.played, table.offset, table.indptr,
                                        table.indices, table.values, w, cfg.slope, EVAL_SCALE)
            if not math.isfinite(j) or not np.all(np.isfinite(grad)):
                raise FloatingPointError("MMTO objective became NaN or infinite; lower --slope")
            losses.append(j)
            w = grid_adjacent_step(w, grad, step=cfg.step, trainable=masks.trainable, l1=cfg.l1,
                                   l1_mask=masks.l1, constrained=masks.constrained).weights
    return w, losses


def _metrics(iteration: int, summary: SweepSummary, w: np.ndarray, cfg: MmtoConfig, masks: Masks,
             val_match: float | None, constraint_sum0: int, seconds: dict[str, float]) -> dict[str, Any]:
    j_r = l1_penalty(w, cfg.l1, masks.l1)
    residual = int(np.asarray(w, dtype=np.int64)[masks.constrained].sum()) - constraint_sum0
    return {
        "iteration": iteration,
        "j": summary.j_main + j_r,
        "j_main": summary.j_main,
        "j_constraint": 0.0 if residual == 0 else float("nan"),
        "j_l1": j_r,
        "constraint_residual": residual,
        "match_train": summary.match,
        "match_validation": val_match,
        "nonzero_weights": int(np.count_nonzero(w)),
        "rows": summary.rows_total,
        "rows_stored": int(len(summary.table.offset)),
        "nodes": summary.nodes,
        **{f"{k}_seconds": round(v, 3) for k, v in seconds.items()},
    }


def train_mmto(common: TuneConfig, cfg: MmtoConfig, data: TrainingData, run: RunDir, w0: np.ndarray, *,
               resume: Checkpoint | None = None, progress: bool = True, log: Any = print) -> np.ndarray:
    """Run MMTO from ``w0`` (or from the checkpoint ``resume``); return the final weights.

    Writes ``RUN/metrics.jsonl``, ``RUN/weights.json`` and the checkpoint after every outer
    iteration (see the module docstring).
    """
    masks = masks_of(common, cfg)
    nt = n_threads(common)
    constraint_sum0 = int(np.asarray(w0, dtype=np.int64)[masks.constrained].sum())

    def measure(w: np.ndarray) -> tuple[SweepSummary, float | None, float, float]:
        t = time.perf_counter()
        s = search_training_set(data.train, data.train_played_index, w, depth=common.depth, budget=common.budget,
                                slope=cfg.slope, window=cfg.window, threads_n=nt, progress=progress)
        t_search = time.perf_counter() - t
        t = time.perf_counter()
        vm = validation_match(common, data, w)
        return s, vm, t_search, time.perf_counter() - t

    def save(iteration: int, w: np.ndarray, record: dict[str, Any], history: list[float]) -> None:
        run.append_metrics(record)
        meta = {"method": "mmto", "iteration": iteration, "j_main": record["j_main"],
                "match_train": record["match_train"], "match_validation": record["match_validation"],
                "config": config_record(common, cfg), **provenance()}
        run.save(Checkpoint("mmto", iteration, w, {"j_history": history, "constraint_sum0": constraint_sum0}), meta)

    if resume is None:
        w = np.asarray(w0, dtype=np.int32).copy()
        summary, vm, t_s, t_v = measure(w)
        history = [summary.j_main]
        record = _metrics(0, summary, w, cfg, masks, vm, constraint_sum0,
                          {"search": t_s, "update": 0.0, "validation": t_v})
        save(0, w, record, history)
        start = 1
    else:
        w = resume.weights.copy()
        history = [float(x) for x in resume.extra.get("j_history", [])]
        constraint_sum0 = int(resume.extra.get("constraint_sum0", constraint_sum0))
        run.truncate_metrics(resume.iteration)
        summary, _, _, _ = measure(w)
        start = resume.iteration + 1
        record = run.read_metrics()[-1] if run.read_metrics() else {}
    log(f"mmto: iteration {start - 1}: J_main {history[-1]:.4f}, move-match train {summary.match:.4f}, "
        f"validation {_fmt(record.get('match_validation'))}")
    if _stalled(history, cfg):
        log("mmto: J_main had already stopped falling; nothing to do")
        return w
    bar = tqdm(range(start, cfg.iterations + 1), desc="mmto", unit="iter", disable=not progress,
               initial=start - 1, total=cfg.iterations)
    for it in bar:
        t = time.perf_counter()
        w, _ = update(summary.table, w, cfg, masks, threads_n=nt, progress=progress)
        t_update = time.perf_counter() - t
        summary, vm, t_s, t_v = measure(w)
        history.append(summary.j_main)
        if not math.isfinite(summary.j_main):
            raise FloatingPointError("MMTO objective became NaN or infinite")
        record = _metrics(it, summary, w, cfg, masks, vm, constraint_sum0,
                          {"search": t_s, "update": t_update, "validation": t_v})
        save(it, w, record, history)
        bar.set_postfix(J=f"{summary.j_main:.4f}", match=f"{summary.match:.3f}", val=_fmt(vm))
        log(f"mmto: iteration {it}: J_main {summary.j_main:.4f}, move-match train {summary.match:.4f}, "
            f"validation {_fmt(vm)}, search {t_s:.1f} s, update {t_update:.1f} s")
        if _stalled(history, cfg):
            log(f"mmto: J_main stopped falling for {cfg.patience} iteration(s); stopping")
            break
    bar.close()
    return w


def _stalled(history: list[float], cfg: MmtoConfig) -> bool:
    """Whether the last ``patience`` iterations each failed to lower J_main enough."""
    if len(history) <= cfg.patience:
        return False
    recent = history[-cfg.patience - 1:]
    return all(b >= a * (1 - cfg.min_improvement) for a, b in zip(recent, recent[1:]))


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"
