"""MMTO, Minimax Tree Optimization (Hoki & Kaneko, JAIR 49:527-568, 2014), over the sparse
evaluator: ``tuner tune --method mmto``.

The loop (Hoki & Kaneko's, ``docs/references.md`` [HK2014]):

1. *search*: every legal move of every training position is searched with the current weights
   (:func:`search.tree.search_api.sweep`, ``depth`` plies counted from the position, then quiescence);
   each move keeps its PV leaf's signed features (:func:`search.tree.search_api.signed_features`). The
   objective J_main over *all* moves is computed here, exactly, together with the training
   move-match;
2. *update*: ``inner_steps`` grid-adjacent steps (:mod:`tuner.training.optim.grid`) reuse the stored
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

Searches run in calls of about 0.4 s (:class:`tuner.training.paced.Pacer`), with the same results as
one call per batch, so that Ctrl-C stops a run within a fraction of a second
(:func:`tuner.errors.check_interrupt` between calls and between update steps).

Iteration ``t``'s metrics describe the weights after ``t`` outer iterations (``t = 0``: the
start); the checkpoint after each is what ``--resume`` continues from, and the sweep that
measures iteration ``t`` is the one whose leaves iteration ``t + 1`` updates from, so a resumed
run recomputes it and ends with the same weights as an uninterrupted one.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from tuner.progress import progress_bar
from tuner.training.optim import Adam, Optimizer, floats_from_json, floats_to_json, optimizer_from_state, to_search_weights
from tuner.training.optim.grid import grid_adjacent_step, l1_penalty
from objectives.leaf_sums import objective_sums
from objectives.leaf_table import CompactLeaves, concatenate, encode, objective_compact
from objectives.mmto import sweep_loss
from objectives.texel import KBracketError, _k_eu, _scores_loss_kernel, fit_k_scores
from search.tree.alphabeta import KIND_EVAL
from search.tree.search_api import signed_features, threads
from search.params.catalog import N_BASE, N_PLUGIN_BASE
from search.params.weights_base import MAX_ABS_WEIGHT
from search.evaluation.evaluation_api import EVAL_SCALE
from tuner.training.positions import Positions
from tuner.training.driver import drive
from tuner.errors import TunerError, check_interrupt
from tuner.training.executor import Dataset, Executor, LocalExecutor, dataset_length
from tuner.methods.registry import Method, by_evaluator
from tuner.methods.mmto_config import MmtoConfig, pls_options, pls_refusal, refusing_pls, stalled, value_target
from tuner.arena.movematch import top_k_credit
from tuner.methods.network_mmto import NetworkMmtoTrainer
from search.evaluation.evaluators import Evaluator
from tuner.training.run_folder import Checkpoint, RunDir
from tuner.training.paced import Pacer, paced_sweep
from tuner.training.training_data import TrainingData, train_arrays
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig
from tuner.training.weight_masks import constraint_masks, hold_sums, mask_of, tuning_bounds


#: positions per sweep call (a progress-bar tick; bounds the memory of PV-leaf boards)
SWEEP_BATCH = 4096


@dataclass(frozen=True)
class LeafTable:
    """The stored sweep of one training set in the compact layout of
    :mod:`objectives.leaf_table` (about a tenth of the tapered CSR table's bytes), with each
    position's game result from the mover's view (float64[P], NaN: none)."""

    leaves: CompactLeaves
    results: np.ndarray

    @property
    def pos_ptr(self) -> np.ndarray:
        return self.leaves.pos_ptr

    @property
    def played(self) -> np.ndarray:
        return self.leaves.played

    @property
    def nbytes(self) -> int:
        """Bytes of the stored leaves (the results not counted)."""
        return self.leaves.nbytes

    def tapered(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(offset, indptr, indices, values)``: the rows in the tapered CSR layout of
        :mod:`objectives.mmto` (the reference layout); with a term plug-in, in the table's feature
        order (:data:`TO_TABLE`)."""
        return self.leaves.tapered()


class SweepChunk(NamedTuple):
    """What one chunk of :func:`search_training_set` returns: the move loss summed over the
    chunk (its per-position value times its positions), the sum of its move-match credits, its
    sweep rows, its nodes, the rows kept for the updates (in the compact layout of
    :mod:`objectives.leaf_table`), and each played move's score (int64[P], eval units, the
    mover's view)."""

    j_sum: float
    match_sum: float
    rows: int
    nodes: int
    kept: CompactLeaves
    played_scores: np.ndarray


@dataclass(frozen=True)
class SweepSummary:
    """What a search of the training set measured, and the leaves it stored."""

    j_main: float  # the move loss per position, over every legal move
    match: float
    table: LeafTable
    rows_total: int
    nodes: int
    played_scores: np.ndarray  # int64[P]: each played move's search score (eval units, mover's view)


# many parameters: the sweep's settings as plain keyword values (they travel to Dask workers as they are)
def search_training_set(pos: Positions, played_index: np.ndarray, w: np.ndarray, *, depth: int,
                        budget: int, slope: float, window: float, n_threads: int,
                        progress: bool, pacer: Pacer | None = None, executor: Executor | None = None,
                        batch: int = SWEEP_BATCH, loss: str = "sigmoid", pls_threshold: float = 0.0,
                        pls_model: str = "gm") -> SweepSummary:
    """Step 1: sweep every position, measure the move loss and move-match, store the PV leaves.

    The positions go in chunks of ``batch`` through ``executor`` (default: this process with
    ``n_threads`` threads, each chunk searched in shorter calls (``pacer``) with Ctrl-C checks
    between them); the figures are summed per chunk in chunk order, whatever ran them
    (:func:`sweep_kept`, whose kept tables are then fetched here and joined)."""
    executor = executor or LocalExecutor(n_threads)
    arrays = train_arrays(pos, played_index)
    s = sweep_kept(arrays, w, depth=depth, budget=budget, slope=slope, window=window,
                   executor=executor, batch=batch, n_threads=n_threads, progress=progress, pacer=pacer, loss=loss,
                   pls_threshold=pls_threshold, pls_model=pls_model)
    kept: list[KeptChunk] = executor.fetch(s.handles)
    executor.release(s.handles)
    table = LeafTable(concatenate([k.leaves for k in kept]), arrays[2])
    return SweepSummary(s.j_main, s.match, table, s.rows_total, s.nodes, np.concatenate([k.played_scores for k in kept]))


# many parameters: the sweep's settings as plain keyword values (they travel to Dask workers as they are)
def search_chunk(boards: np.ndarray, played_index: np.ndarray, *, w: np.ndarray, depth: int, budget: int,
                 slope: float, window: float, pacer: Pacer | None = None, loss: str = "sigmoid",
                 pls_threshold: float = 0.0, pls_model: str = "gm") -> SweepChunk:
    """One chunk's sweep (:func:`sweep_kept_chunk`, run by an executor, perhaps on a Dask worker)."""
    sw = paced_sweep(boards, depth, w, budget=budget, pacer=pacer or Pacer(), pls_threshold=pls_threshold,
                     pls_model=pls_model)
    rows = sw.pos_ptr[:-1] + played_index
    j_part = sweep_loss(sw.pos_ptr, rows, sw.scores, slope, EVAL_SCALE, loss=loss) * len(boards)
    match_part = float(top_k_credit(sw.pos_ptr, rows, sw.scores, 1).sum())
    return SweepChunk(j_part, match_part, len(sw.scores), int(sw.nodes.sum()),
                      _keep_rows(sw, rows, window, one_sided=loss == "softmax"), sw.scores[rows].astype(np.int64))


class KeptChunk(NamedTuple):
    """What a chunk of :func:`sweep_kept` keeps where it was searched (a Dask worker's memory,
    or this process): its leaf table, its positions' game results (float64[p], mover's view,
    NaN: none) and their played moves' search scores (int64[p], eval units)."""

    leaves: CompactLeaves
    results: np.ndarray
    played_scores: np.ndarray


class SweepSums(NamedTuple):
    """What a chunk of :func:`sweep_kept` sends back: the figures :class:`SweepChunk` sums
    (move loss times positions, move-match credits, rows, nodes), the rows it kept, its
    positions with a played move and those with a game result too, and its table's bytes."""

    j_sum: float
    match_sum: float
    rows: int
    nodes: int
    rows_stored: int
    n_played: int
    n_result: int
    leaf_bytes: int


@dataclass(frozen=True)
class KeptSweep:
    """A search of the training set whose leaf tables stay where they were computed
    (``handles``: one per chunk, in order, for the executor's ``map_kept``/``reduce_kept``),
    with the figures summed over its chunks in chunk order. ``j_result``: the mean result error
    of the played moves' scores at the run's K (NaN until computed, :meth:`MmtoTrainer._search`)."""

    j_main: float
    match: float
    rows_total: int
    rows_stored: int
    nodes: int
    n_played: int
    n_result: int
    leaf_bytes: int
    handles: list[Any]
    j_result: float = math.nan


# many parameters: the sweep's settings as plain keyword values (they travel to Dask workers as they are)
def sweep_kept_chunk(boards: np.ndarray, played_index: np.ndarray, results: np.ndarray, *, w: np.ndarray, depth: int,
                     budget: int, slope: float, window: float, pacer: Pacer | None = None,
                     loss: str = "sigmoid", pls_threshold: float = 0.0,
                     pls_model: str = "gm") -> tuple[SweepSums, KeptChunk]:
    """One chunk of :func:`sweep_kept`: :func:`search_chunk`, its summary and what it keeps."""
    c = search_chunk(boards, played_index, w=w, depth=depth, budget=budget, slope=slope, window=window, pacer=pacer,
                     loss=loss, pls_threshold=pls_threshold, pls_model=pls_model)
    results = np.asarray(results, dtype=np.float64)
    has = c.kept.played >= 0
    sums = SweepSums(c.j_sum, c.match_sum, c.rows, c.nodes, c.kept.rows, int(has.sum()),
                     int((has & ~np.isnan(results)).sum()), c.kept.nbytes)
    return sums, KeptChunk(c.kept, results, c.played_scores)


# many parameters: the sweep's settings as plain keyword values (they travel to Dask workers as they are)
def sweep_kept(positions: Dataset, w: np.ndarray, *, depth: int, budget: int, slope: float, window: float,
               executor: Executor, batch: int, n_threads: int, progress: bool, pacer: Pacer | None = None,
               loss: str = "sigmoid", pls_threshold: float = 0.0, pls_model: str = "gm") -> KeptSweep:
    """Step 1 with the leaf tables kept by ``executor`` where they were computed (issue 26,
    item 3): on a Dask cluster they stay on the workers and only each chunk's
    :class:`SweepSums` (64 bytes) comes back; the figures are summed in chunk order, as in
    :func:`search_training_set`.

    ``positions``: ``(boards, played_index, results)`` (results float64[P], NaN: none), or a
    :class:`tuner.training.executor.ChunkSource` that builds those arrays chunk by chunk where
    they are searched (:meth:`tuner.training.training_data.TrainingData.train_chunks`); it must
    be the same object, or the same arrays, at every call (a Dask executor ships the positions
    once per dataset)."""
    handles: list[Any] = []
    j_sum = match_sum = 0.0
    rows = nodes = stored = n_played = n_result = leaf_bytes = 0
    n = dataset_length(positions)
    bar = progress_bar(total=n, desc="search", unit="pos", leave=False, disable=not progress)
    with threads(n_threads):
        for a, z, (s, handle) in executor.map_chunks(
                sweep_kept_chunk, positions, size=batch, shared={"w": w}, pacer=pacer,
                what="mmto-sweep", keep=True, depth=depth, budget=budget, slope=slope, window=window, loss=loss,
                **pls_options(pls_threshold, pls_model)):
            j_sum += s.j_sum
            match_sum += s.match_sum
            rows += s.rows
            nodes += s.nodes
            stored += s.rows_stored
            n_played += s.n_played
            n_result += s.n_result
            leaf_bytes += s.leaf_bytes
            handles.append(handle)
            bar.update(z - a)
    bar.close()
    return KeptSweep(j_main=j_sum / n, match=match_sum / n, rows_total=rows, rows_stored=stored, nodes=nodes,
                     n_played=n_played, n_result=n_result, leaf_bytes=leaf_bytes, handles=handles)


def kept_objective(kept: KeptChunk, *, w: np.ndarray, slope_cp: float, loss: str, move_scale: float,
                   res_scale: float, k_cp: float) -> tuple[float, float, np.ndarray]:
    """A kept chunk's share of the update's objective (:func:`objectives.leaf_sums.objective_sums`;
    ``w`` in the table's order), computed where the chunk is kept."""
    return objective_sums(kept.leaves, w, slope_cp, EVAL_SCALE, loss=loss, results=kept.results,
                          move_scale=move_scale, res_scale=res_scale, k_cp=k_cp)


def kept_result_sums(kept: KeptChunk, *, k_cp: float) -> tuple[float, float]:
    """A kept chunk's ``(sum of (R - sigma(K s_played))^2, positions)`` over its positions with a
    game result (:func:`objectives.texel.loss_of_scores` before the division)."""
    has = ~np.isnan(kept.results)
    if not has.any():
        return 0.0, 0.0
    total, den = _scores_loss_kernel(kept.played_scores[has].astype(np.float64), kept.results[has],
                                     np.zeros(0, dtype=np.float64), _k_eu(k_cp, EVAL_SCALE))
    return float(total), float(den)


def kept_played_scores(kept: KeptChunk) -> tuple[np.ndarray, np.ndarray]:
    """A kept chunk's played moves' scores and game results (the fit of K, once per run)."""
    return kept.played_scores, kept.results


#: the compact table's base terms: the built-in ones, then a term plug-in's (search.params.terms)
TABLE_N_BASE = N_BASE + N_PLUGIN_BASE
#: catalogue index -> the compact table's index, whose middle-game block (built-in, then
#: plug-in terms) precedes the end-game block in the same order; None without a plug-in (the
#: catalogue's own order: built-in mg, built-in eg, plug-in mg, plug-in eg)
TO_TABLE: np.ndarray | None = None if N_PLUGIN_BASE == 0 else np.concatenate([
    np.arange(N_BASE), np.arange(N_BASE, 2 * N_BASE) + N_PLUGIN_BASE,
    np.arange(N_PLUGIN_BASE) + N_BASE, np.arange(N_PLUGIN_BASE) + 2 * N_BASE + N_PLUGIN_BASE]).astype(np.int64)
#: the inverse map: table index -> catalogue index
FROM_TABLE: np.ndarray | None = None if TO_TABLE is None else np.argsort(TO_TABLE)


def _to_table_order(indptr: np.ndarray, indices: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of signed features in catalogue indices, renumbered by :data:`TO_TABLE` and sorted
    within each row (the compact encoder wants each row's middle-game entries first, its
    end-game ones after them in the same term order)."""
    if TO_TABLE is None:
        return indices, values
    renamed = TO_TABLE[indices].astype(indices.dtype)
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    order = np.lexsort((renamed, rows))
    return renamed[order], values[order]


def table_objective(leaves: CompactLeaves, w: np.ndarray, slope_cp: float, *, loss: str, results: np.ndarray,
                    mu: float, k_cp: float) -> tuple[float, np.ndarray]:
    """:func:`objectives.leaf_table.objective_compact` of weights in catalogue order: the total and
    its gradient (float64[N_FEATURES], catalogue order)."""
    w_table = w if FROM_TABLE is None else np.asarray(w)[FROM_TABLE]
    o = objective_compact(leaves, w_table, slope_cp, EVAL_SCALE, loss=loss, results=results, mu=mu, k_cp=k_cp)
    return o.total, (o.gradient if TO_TABLE is None else o.gradient[TO_TABLE])


def _keep_rows(sw: Any, played_rows: np.ndarray, window: float, *, one_sided: bool = False) -> CompactLeaves:
    """The rows of one sweep batch that the updates use, with their signed leaf features
    (encoded in the compact layout of :mod:`objectives.leaf_table`):
    those within ``window`` centipawns of the played move's score (``one_sided``: every move
    scored above it too, as a softmax's gradient is largest there)."""
    counts = np.diff(sw.pos_ptr)
    sd = np.repeat(sw.scores[played_rows], counts)
    is_played = np.zeros(len(sw.scores), dtype=bool)
    is_played[played_rows] = True
    leaf = sw.kinds == KIND_EVAL
    # every row counts: a move whose search ended in a verdict (mate, draw) has a constant
    # score, but its term T(s(p.m) - s(p.d)) still moves with the played move's score
    keep = np.ones(len(sw.scores), dtype=bool)
    if window > 0:
        if one_sided:
            keep &= sw.scores - sd >= -window * EVAL_SCALE
        else:
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
    indices, values = _to_table_order(indptr, indices, values)
    return encode(pos_ptr, played, offset, indptr, indices, values, n_base=TABLE_N_BASE, phase_max=EVAL_SCALE)


@dataclass(frozen=True)
class Masks:
    trainable: np.ndarray
    l1: np.ndarray
    constrained: list[np.ndarray]  # one mask per equality constraint


def masks_of(common: TuneConfig, cfg: MmtoConfig) -> Masks:
    trainable = mask_of(common.train, "train")
    groups = [g & trainable for g in constraint_masks(cfg.constraint)]
    return Masks(trainable, mask_of(cfg.l1_on, "l1_on") & trainable, [g for g in groups if g.any()])


def constraint_sums(w: np.ndarray, masks: Masks) -> list[int]:
    """The sum of each constrained subset's weights."""
    w64 = np.asarray(w, dtype=np.int64)
    return [int(w64[g].sum()) for g in masks.constrained]


def fit_result_k(executor: Executor, summary: KeptSweep) -> float:
    """K per centipawn of the game-result term, fitted on the played moves' scores of the start
    (Texel's first step, :func:`objectives.texel.fit_k_scores`); one-line error if it cannot be."""
    parts = list(executor.map_kept(kept_played_scores, summary.handles, what="mmto-fit-k"))
    scores = np.concatenate([p[0] for p in parts])
    results = np.concatenate([p[1] for p in parts])
    has = ~np.isnan(results)
    try:
        return fit_k_scores(scores[has].astype(np.float64), results[has], EVAL_SCALE)
    except KBracketError as exc:
        raise TunerError(f"result term: {exc}; give result_k (--result-k) instead") from None


def result_error(executor: Executor, summary: KeptSweep, k: float) -> float:
    """Mean (R - sigma(K s_played))^2 over the training positions with a result, summed chunk by
    chunk in chunk order where the chunks are kept."""
    total, den = executor.reduce_kept(kept_result_sums, summary.handles, what="mmto-result", k_cp=k)
    return total / den if den > 0 else 0.0


def update(summary: KeptSweep, w: np.ndarray, cfg: MmtoConfig, masks: Masks, *, executor: Executor, n_threads: int,
           progress: bool, k: float = 0.0, adam: AdamState | None = None) -> tuple[np.ndarray, list[float]]:
    """Step 2: ``inner_steps`` updates from the stored leaves; returns the new weights and the
    objective (on the stored rows, without L1) before each step.

    Each step sends the weights to where the chunks' leaf tables are kept and gets back the
    objective's sums (:func:`kept_objective`), added in chunk order by ``executor.reduce_kept``:
    a Dask run and a local one take the same steps, bit for bit.

    ``grid``: grid-adjacent steps on the integer weights (L1 by subgradient, each constraint by
    the median rule). ``adam``: Adam steps on ``adam.master`` (float64, updated in place), each
    gradient taken at the master weights rounded for the search; every constraint is then held
    by removing its subset's mean shift (the Euclidean projection), and the result is rounded.
    """
    losses = []
    n = max(summary.n_played, 1)
    cnt = max(summary.n_result, 1)
    mu = cfg.result_weight
    with threads(n_threads):
        for _ in progress_bar(range(cfg.inner_steps), desc="update", unit="step", leave=False, disable=not progress):
            w_table = np.ascontiguousarray(w if FROM_TABLE is None else np.asarray(w)[FROM_TABLE], dtype=np.int32)
            move, res, grad = executor.reduce_kept(kept_objective, summary.handles, shared={"w": w_table},
                                                   what="mmto-update", slope_cp=cfg.slope, loss=cfg.loss,
                                                   move_scale=1.0 / n, res_scale=float(mu) / cnt, k_cp=k)
            total = move / n + mu * (res / cnt if mu > 0 else 0.0)
            gradient = grad if TO_TABLE is None else grad[TO_TABLE]
            if not math.isfinite(total) or not np.all(np.isfinite(gradient)):
                raise FloatingPointError("MMTO objective became NaN or infinite; lower --slope")
            losses.append(total)
            if adam is None:
                w = grid_adjacent_step(w, gradient, step=cfg.step, trainable=masks.trainable, l1=cfg.l1,
                                       l1_mask=masks.l1, constrained=masks.constrained).weights
                worst = int(np.abs(np.asarray(w, dtype=np.int64)).max())
                if worst > MAX_ABS_WEIGHT:  # the next search would refuse the weights with a traceback
                    raise TunerError(f"mmto: a grid step of {cfg.step} took a weight to {worst}, beyond the "
                                     f"evaluator's limit +-{MAX_ABS_WEIGHT}; lower --step")
            else:
                adam.master = hold_sums(adam.opt.step(adam.master, gradient), adam.groups, adam.sums)
                w = to_search_weights(adam.master, adam.low, adam.high)
            check_interrupt()
    return w, losses


@dataclass
class AdamState:
    """MMTO's Adam option: the optimizer, the float master weights and the constraint sums."""

    opt: Optimizer
    master: np.ndarray  # float64[N]
    groups: list[np.ndarray]
    sums: list[float]
    low: np.ndarray  # float64[N], the tuning bounds the rounded weights keep to
    high: np.ndarray

    @classmethod
    def start(cls, w0: np.ndarray, cfg: MmtoConfig, masks: Masks) -> AdamState:
        opt = Adam(len(w0), lr=cfg.lr, trainable=masks.trainable, l1=cfg.l1, l1_mask=masks.l1)
        master = np.asarray(w0, dtype=np.float64).copy()
        return cls(opt, master, masks.constrained, [float(master[g].sum()) for g in masks.constrained],
                   *tuning_bounds(w0))


def _metrics(summary: KeptSweep, w: np.ndarray, cfg: MmtoConfig, masks: Masks, constraint_sum0: list[int],
             seconds: dict[str, float], k: float) -> dict[str, Any]:
    """The metrics of the weights ``w`` whose sweep is ``summary`` (the validation figures are
    the driver's)."""
    j_l1 = l1_penalty(w, cfg.l1, masks.l1)
    residuals = [a - b for a, b in zip(constraint_sums(w, masks), constraint_sum0)]
    e = summary.j_result if cfg.result_weight > 0 else 0.0
    extra = {"j_result": e, "k": k} if cfg.result_weight > 0 else {}
    return {
        "j": summary.j_main + cfg.result_weight * e + j_l1,
        "j_main": summary.j_main,
        **extra,
        "j_l1": j_l1,
        "constraint_residual": max(residuals, key=abs, default=0),
        "match_train": summary.match,
        "nonzero_weights": int(np.count_nonzero(w)),
        "rows": summary.rows_total,
        "rows_stored": summary.rows_stored,
        "nodes": summary.nodes,
        **{f"{k}_seconds": round(v, 3) for k, v in seconds.items()},
    }


class MmtoTrainer:
    """MMTO driven one outer iteration at a time (:class:`tuner.training.driver.Trainer`).

    Iteration ``t``'s metrics describe the weights after ``t`` outer iterations; the sweep that
    measures them is the one whose leaves iteration ``t + 1`` updates from, so :meth:`restore`
    searches the restored weights again and the run goes on as if never stopped.
    """

    def __init__(self, common: TuneConfig, cfg: MmtoConfig, data: TrainingData, w0: np.ndarray,
                 ctx: RunContext) -> None:
        self.common, self.cfg, self.data, self.ctx = common, cfg, data, ctx
        self.masks = masks_of(common, cfg)
        self.w = np.asarray(w0, dtype=np.int32).copy()
        self.constraint_sum0 = constraint_sums(self.w, self.masks)
        self.k = cfg.result_k
        self.adam = AdamState.start(self.w, cfg, self.masks) if cfg.optimizer == "adam" else None
        self.history: list[float] = []
        self.summary: KeptSweep | None = None

    def _search(self) -> tuple[KeptSweep, float]:
        """Sweep with the current weights, keeping the leaf tables where they are computed (the
        previous sweep's are released first); with a result term, its error at the run's K (K
        fitted on this sweep when not given and not yet fitted)."""
        t = time.perf_counter()
        ex = self.ctx.executor
        if self.summary is not None:
            ex.release(self.summary.handles)
            self.summary = None
        # the same dataset at every sweep (a Dask executor ships it once); chunked data's
        # positions are built by the workers, never loaded here (TrainingData.train_chunks)
        s = sweep_kept(self.data.train_chunks(value_target(self.cfg)), self.w, depth=self.common.depth,
                       budget=self.common.budget, slope=self.cfg.slope, window=self.cfg.window, executor=ex,
                       batch=self.ctx.chunk, n_threads=self.ctx.threads, progress=self.ctx.progress,
                       pacer=self.ctx.pacer("sweep"), loss=self.cfg.loss, pls_threshold=self.cfg.pls_threshold,
                       pls_model=self.cfg.pls_model)
        if not math.isfinite(s.j_main):
            raise FloatingPointError("MMTO objective became NaN or infinite")
        if self.cfg.result_weight > 0:
            if self.k == 0:
                self.k = fit_result_k(ex, s)
                self.ctx.log(f"result term: K = {self.k:.6g} per centipawn (fitted on the start weights)")
            s = replace(s, j_result=result_error(ex, s, self.k))
        return s, time.perf_counter() - t

    def _objective(self) -> float:
        """The objective the patience rule watches: the move loss plus the weighted result term."""
        assert self.summary is not None
        if self.cfg.result_weight > 0:
            return self.summary.j_main + self.cfg.result_weight * self.summary.j_result
        return self.summary.j_main

    def begin(self) -> dict[str, Any]:
        self.summary, t_s = self._search()
        self.history = [self._objective()]
        return _metrics(self.summary, self.w, self.cfg, self.masks, self.constraint_sum0,
                        {"search": t_s, "update": 0.0}, self.k)

    def restore(self, state: dict[str, Any]) -> None:
        self.w = np.array(state["weights"], dtype=np.int32)
        self.history = [float(x) for x in state["j_history"]]
        sums = state["constraint_sum0"]
        self.constraint_sum0 = [int(x) for x in (sums if isinstance(sums, list) else [sums])]
        self.k = float(state.get("k", self.cfg.result_k))
        if self.adam is not None:
            self.adam.master = floats_from_json(state["master"], len(self.w), "master")
            self.adam.opt = optimizer_from_state(state["optimizer"])
            self.adam.sums = [float(x) for x in state["master_sums"]]
        self.summary, _ = self._search()

    def step(self, iteration: int) -> dict[str, Any]:
        assert self.summary is not None
        t = time.perf_counter()
        self.w, _ = update(self.summary, self.w, self.cfg, self.masks, executor=self.ctx.executor,
                           n_threads=self.ctx.threads, progress=self.ctx.progress, k=self.k, adam=self.adam)
        t_update = time.perf_counter() - t
        self.summary, t_s = self._search()
        self.history.append(self._objective())
        return _metrics(self.summary, self.w, self.cfg, self.masks, self.constraint_sum0,
                        {"search": t_s, "update": t_update}, self.k)

    def weights(self) -> np.ndarray:
        return self.w

    def state(self) -> dict[str, Any]:
        state = {"weights": [int(v) for v in self.w], "j_history": self.history,
                 "constraint_sum0": self.constraint_sum0, "k": self.k}
        if self.adam is not None:
            state |= {"master": floats_to_json(self.adam.master), "optimizer": self.adam.opt.state_dict(),
                      "master_sums": self.adam.sums}
        return state

    def finished(self) -> str | None:
        if stalled(self.history, self.cfg):
            return f"J_main stopped falling for {self.cfg.patience} iteration(s)"
        return None


def train_mmto(common: TuneConfig, cfg: MmtoConfig, data: TrainingData, run: RunDir, w0: Evaluator, *,
               resume: Checkpoint | None = None, progress: bool = True, log: Any = print) -> Evaluator:
    """Run MMTO through the shared driver (:func:`tuner.training.driver.drive`); the weights it keeps."""
    return drive(METHOD, common, cfg, data, run, w0, resume=resume, progress=progress, log=log)


METHOD = Method(
    name="mmto",
    config=MmtoConfig,
    trainer=by_evaluator(MmtoTrainer, refusing_pls(NetworkMmtoTrainer)),
    summary="MMTO (Hoki & Kaneko 2014): sigmoid of score differences at PV leaves, grid-adjacent steps",
    panels=[("objective j (per position)", [("j", "j = j_main + j_l1 (+ the result term)"),
                                            ("j_main", "j_main"), ("j_l1", "j_l1")]),
            ("training move-match (ties as fractions)", [("match_train", "train")])],
    headline=("j_main", "match_train"),
    evaluators=("linear", "network"),
    streams_train=("linear",),
    refuses=pls_refusal,
)
