"""What every optimizer shares: the common settings of ``tuner tune``, the data and masks they
derive, move-match measurement, and the kernel calls cut into pieces of about 0.4 s
(:class:`Pacer`, :func:`paced_sweep`, :func:`paced_move_match`) so that Ctrl-C stops a run
promptly, with the same results as one call.

A run is configured by :class:`TuneConfig` (top level of the TOML file) and the method's own
dataclass (its ``[NAME]`` table, :mod:`tuner.methods`); ``RUN/config.toml`` holds both.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from search.api import DEFAULT_BUDGET, Sweep, move_match, sweep, threads
from search.batch import CHUNK
from search.catalog import GROUPS, select
from search.weights import load_weights
from tuner.config import help_field
from tuner.cores import available_cores
from tuner.data import Positions, check_played, load_positions
from tuner.errors import TunerError, check_interrupt
from tuner.executor import EXECUTORS, Executor, LocalExecutor, current_executor

@dataclass(frozen=True, kw_only=True)
class TuneConfig:
    """Settings every optimizer shares."""

    method: str = help_field("mmto", "tuning method (see the method sections below)")
    data: str = help_field("", "position set written by 'tuner ingest' (a folder)", metavar="DIR")
    out: str = help_field("", "run folder for config.toml, metrics.jsonl, weights.json", metavar="RUN")
    start: str = help_field("material", "weights to start from: a weights file or material, classic, gm",
                            metavar="WEIGHTS")
    train: tuple[str, ...] = help_field(GROUPS, "weights to train, by group or feature-name prefix; "
                                                "the others stay frozen", metavar="GROUPS")
    depth: int = help_field(1, "search depth counted from the training position: 1 = each move's "
                               "child searched by quiescence only (1 ply + quiescence)")
    budget: int = help_field(DEFAULT_BUDGET, "node budget of each search (a runaway guard)")
    max_train: int = help_field(0, "use a seeded random sample of this many training positions (0: all)")
    max_validation: int = help_field(5000, "validation positions for the move-match figures (0: all)")
    threads: int = help_field(0, "threads for the numba kernels (0: all cores)")
    seed: int = help_field(0, "seed of every random choice of the run")
    keep: str = help_field("best", "weights.json holds the weights of the iteration with the best "
                                   "validation move-match (best) or of the last iteration (last)")
    early_stop: int = help_field(0, "stop after this many iterations in a row without a better validation "
                                    "move-match (0: never)")
    executor: str = help_field("local", "where the searches run: local (this process's numba threads) or dask "
                                        "(a Dask cluster: --scheduler, or a LocalCluster of --workers processes)")
    scheduler: str = help_field("", "dask: address of a running scheduler, e.g. tcp://host:8786 (empty: start "
                                    "a LocalCluster on this machine)", metavar="ADDR")
    workers: int = help_field(0, "dask without --scheduler: worker processes of the LocalCluster (0: one per core)")
    chunk: int = help_field(4096, "positions per work item: an MMTO sweep batch, a Dask task (MMTO's "
                                  "figures are summed per chunk, so runs compare bit for bit at equal chunk)")
    stages: str = help_field("", "staged training (Duchess): groups per stage, stages separated by ';' "
                                 "(e.g. 'material;material,pieces,king;all'); each stage trains its groups "
                                 "from the last stage's weights, for an equal share of the iterations (or "
                                 "until the method's own limit); overrides train; empty: one stage",
                             metavar="STAGES")

    def validate(self) -> None:
        from tuner.methods import get  # noqa: PLC0415 - the registry imports the methods, which import this

        get(self.method)
        if self.keep not in ("best", "last"):
            raise ValueError(f"keep must be best or last, not {self.keep!r}")
        if self.early_stop < 0:
            raise ValueError(f"early_stop must be >= 0, not {self.early_stop}")
        if self.depth < 1 or self.depth > 4:
            raise ValueError(f"depth must be between 1 and 4, not {self.depth}")
        if self.budget < 1:
            raise ValueError(f"budget must be positive, not {self.budget}")
        if self.max_train < 0 or self.max_validation < 0:
            raise ValueError("max_train and max_validation must be >= 0")
        if not 0 <= self.threads <= numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads must be between 0 and {numba.config.NUMBA_NUM_THREADS}, not {self.threads}")
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        if self.workers < 0 or self.chunk < 1:
            raise ValueError("workers must be >= 0 and chunk >= 1")
        if self.scheduler and self.executor != "dask":
            raise ValueError("scheduler is an option of executor dask")
        if not mask_of(self.train, "train").any():
            raise ValueError("no weights to train: train names no group or feature (it is empty)")
        for k, groups in enumerate(parse_stages(self.stages)):
            if not mask_of(groups, f"stages: stage {k + 1}").any():
                raise ValueError(f"stages: stage {k + 1} names no group or feature")


def parse_stages(text: str) -> list[tuple[str, ...]]:
    """The groups of each stage of ``TuneConfig.stages`` ('a,b;c;all'); ``all`` stands for
    every group; [] for no staging."""
    if not text.strip():
        return []
    out = []
    for k, part in enumerate(text.split(";")):
        items = tuple(i.strip() for i in part.split(",") if i.strip())
        if not items:
            raise ValueError(f"stages: stage {k + 1} is empty")
        out.append(GROUPS if items == ("all",) else items)
    return out


def mask_of(items: tuple[str, ...], what: str) -> np.ndarray:
    """bool[N_FEATURES] of the features named by ``items`` (groups or prefixes; empty: none)."""
    if not items:
        return np.zeros(len(select(["material"])), dtype=bool)
    try:
        return np.array(select(list(items)), dtype=bool)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


def constraint_masks(items: tuple[str, ...]) -> list[np.ndarray]:
    """One bool[N_FEATURES] mask per equality-constraint entry (each entry's weights keep their
    sum); ValueError if two entries name the same weight."""
    groups = [mask_of((c,), "constraint") for c in items]
    if groups and int(np.sum(groups, axis=0).max()) > 1:
        raise ValueError("the constraint's entries must not name the same weights twice")
    return groups


def hold_sums(w: np.ndarray, groups: list[np.ndarray], sums: list[float]) -> np.ndarray:
    """Float weights ``w`` (float64[N], changed in place and returned) with each constrained
    subset's sum put back to its value in ``sums``: the subset's common mean shift removed, the
    Euclidean projection onto that hyperplane (the equality constraint of the float-weight
    optimizers; the grid step holds its constraints exactly by itself)."""
    for g, total in zip(groups, sums):
        idx = np.flatnonzero(g)
        w[idx] -= (w[idx].sum() - total) / len(idx)
    return w


def n_threads(cfg: TuneConfig) -> int:
    """The numba threads of a run: ``cfg.threads``, or the cores this process may use
    (:func:`tuner.cores.available_cores`) up to numba's ceiling ``NUMBA_NUM_THREADS``."""
    return cfg.threads or min(available_cores(), numba.config.NUMBA_NUM_THREADS)


def start_weights(cfg: TuneConfig) -> np.ndarray:
    """The starting weight vector (int32[N_FEATURES]); one-line error for a bad file."""
    try:
        return load_weights(cfg.start).values.copy()
    except ValueError as exc:
        raise TunerError(str(exc)) from None


@dataclass(frozen=True)
class TrainingData:
    """The training and validation positions of a run, and each played move's index among the
    legal moves of its position (the row order of a sweep)."""

    train: Positions
    validation: Positions
    train_played_index: np.ndarray  # int64[P_train]


def load_training_data(cfg: TuneConfig, *, progress: bool = True) -> TrainingData:
    """The train and validation splits of ``cfg.data`` (sampled per ``max_train`` and
    ``max_validation``), with every played move checked legal; one-line errors."""
    if not cfg.data:
        raise TunerError("no position set given: pass --data DIR (built by 'tuner ingest')")
    train = load_positions(cfg.data, "train", limit=cfg.max_train, seed=cfg.seed, progress=progress)
    if len(train) == 0:
        raise TunerError(f"{cfg.data}: the train split holds no positions")
    validation = load_positions(cfg.data, "validation", limit=cfg.max_validation, seed=cfg.seed + 1,
                                progress=progress)
    with threads(n_threads(cfg)):
        index = check_played(train)
    return TrainingData(train, validation, index)


class Pacer:
    """Sizes of kernel calls so that each lasts about ``target`` seconds (between half and
    twice that), which lets a run check for Ctrl-C (:func:`tuner.errors.check_interrupt`)
    between them.

    Sizes count *searches* (positions, times weight vectors for a move-match) and are
    multiples of :data:`search.batch.CHUNK`: the batch kernels give each chunk of ``CHUNK``
    positions one search workspace, so cutting a batch at multiples of ``CHUNK`` leaves every
    result bit-identical to one call over the whole batch. The size doubles while calls are
    short and shrinks in proportion when one is too long, so it follows the depth, the machine
    and its load. (Sizing from the measured rate alone shrinks without end on a loaded machine:
    each parallel call has a fixed cost, which makes small calls look slow.)
    """

    def __init__(self, target: float = 0.4, first: int = 16 * CHUNK) -> None:
        self.target = target
        self.size = first

    def pieces(self, n: int) -> Iterator[tuple[int, int]]:
        """``(a, z)`` ranges covering ``0..n``, each ``a`` a multiple of ``CHUNK``, sized by the
        latest :meth:`record` (call it after each piece's kernel call)."""
        a = 0
        while a < n:
            z = min(n, a + self.size)
            yield a, z
            a = z

    def record(self, searches: int, seconds: float) -> None:
        """Adjust the size after a call of ``searches`` searches that took ``seconds``."""
        if 2 * searches < self.size:  # a short last piece says little
            return
        if seconds < self.target / 2:
            self.size *= 2
        elif seconds > 2 * self.target:
            self.size = max(CHUNK, int(searches * self.target / seconds) // CHUNK * CHUNK)


def paced_move_match(boards: np.ndarray, played: np.ndarray, weights: np.ndarray, depth: int, *,
                     budget: int, threads_n: int, pacer: Pacer | None = None, rows: np.ndarray | None = None,
                     executor: Executor | None = None, what: str = "move-match") -> np.ndarray:
    """:func:`search.api.move_match` (float64[I, P] for weights int32[I, N]) of ``weights`` on
    ``boards`` (or on the sorted ``rows`` of them: float64[I, len(rows)]), the same result as one
    call. Through ``executor`` (default: this process with ``threads_n`` threads) in chunks;
    locally each chunk runs in calls of about ``pacer.target`` seconds, with a Ctrl-C check
    between them."""
    weights = np.atleast_2d(weights)
    executor = executor or LocalExecutor(threads_n)
    n_p = len(boards) if rows is None else len(rows)
    out = np.zeros((len(weights), n_p), dtype=np.float64)
    for a, z, part in executor.map_chunks(move_match_chunk, (boards, played), rows=rows, shared={"weights": weights},
                                          pacer=pacer, what=what, depth=depth, budget=budget):
        out[:, a:z] = part
    return out


def move_match_chunk(boards: np.ndarray, played: np.ndarray, *, weights: np.ndarray, depth: int, budget: int,
                     pacer: Pacer | None = None) -> np.ndarray:
    """The move-match float64[I, P] of ``weights`` int32[I, N] on one chunk of positions, in
    kernel calls of about ``pacer.target`` seconds with a Ctrl-C check between them (numba
    threads: the caller's setting)."""
    pacer = pacer or Pacer()
    n_w, n_p = len(weights), len(boards)
    out = np.zeros((n_w, n_p), dtype=np.float64)
    i = 0
    while i < n_w:
        if pacer.size >= n_p:  # whole rows: several weight vectors per call
            k = min(n_w - i, max(1, pacer.size // max(n_p, 1)))
            t = time.perf_counter()
            out[i:i + k] = move_match(boards, played, weights[i:i + k], depth, budget=budget)
            pacer.record(k * n_p, time.perf_counter() - t)
            check_interrupt()
            i += k
            continue
        for a, z in pacer.pieces(n_p):
            t = time.perf_counter()
            out[i, a:z] = move_match(boards[a:z], played[a:z], weights[i:i + 1], depth, budget=budget)[0]
            pacer.record(z - a, time.perf_counter() - t)
            check_interrupt()
        i += 1
    return out


def paced_sweep(boards: np.ndarray, depth: int, w: np.ndarray, *, budget: int, pacer: Pacer) -> Sweep:
    """:func:`search.api.sweep` with leaves, in calls of about ``pacer.target`` seconds with a
    Ctrl-C check between them; the same arrays as one call (see :class:`Pacer`)."""
    parts = []
    for a, z in pacer.pieces(len(boards)):
        t = time.perf_counter()
        parts.append(sweep(boards[a:z], depth, w, budget=budget, leaves=True))
        pacer.record(z - a, time.perf_counter() - t)
        check_interrupt()
    if len(parts) == 1:
        return parts[0]
    starts = np.cumsum([0] + [int(p.pos_ptr[-1]) for p in parts[:-1]])
    pos_ptr = np.concatenate([parts[0].pos_ptr[:1]] + [p.pos_ptr[1:] + s for p, s in zip(parts, starts)])
    return Sweep(pos_ptr, *(np.concatenate([getattr(p, f) for p in parts])
                            for f in ("moves", "scores", "kinds", "signs", "leaves", "nodes")))


def validation_match(cfg: TuneConfig, data: TrainingData, weights: np.ndarray, *,
                     pacer: Pacer | None = None) -> float | None:
    """Mean move-match (ties as fractions) of ``weights`` on the validation positions."""
    if len(data.validation) == 0:
        return None
    m = paced_move_match(data.validation.boards, data.validation.played, weights, cfg.depth,
                         budget=cfg.budget, threads_n=n_threads(cfg), pacer=pacer,
                         executor=current_executor(cfg), what="validation")
    return float(m.mean())


def config_record(*configs: Any) -> dict[str, Any]:
    """The configuration dataclasses as one JSON-able mapping (for weights' metadata)."""
    out: dict[str, Any] = {}
    for c in configs:
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(c).items()})
    return out


__all__ = ["Pacer", "TrainingData", "TuneConfig", "config_record", "load_training_data",
           "mask_of", "move_match_chunk", "n_threads", "paced_move_match", "paced_sweep", "parse_stages",
           "start_weights", "validation_match"]
