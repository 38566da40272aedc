"""Kernel calls cut into pieces of about 0.4 s (:class:`Pacer`, :func:`paced_sweep`,
:func:`paced_move_match`) so that Ctrl-C stops a run promptly, with the same results as one
call; and the validation move-match of a run, measured that way."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from search.search_api import Sweep, move_match, sweep
from search.batch import CHUNK
from tuner.errors import check_interrupt
from tuner.executor import Executor, LocalExecutor, current_executor
from tuner.training_data import TrainingData
from tuner.tune_config import TuneConfig, n_threads


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
    """:func:`search.search_api.move_match` (float64[I, P] for weights int32[I, N]) of ``weights`` on
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
    """:func:`search.search_api.sweep` with leaves, in calls of about ``pacer.target`` seconds with a
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
    """Mean move-match (ties as fractions) of ``weights`` on the validation positions that have
    a played move; None when none has."""
    validation = data.validation
    has = validation.has_moves()
    if not has.all():
        validation = validation.subset(np.flatnonzero(has))
    if len(validation) == 0:
        return None
    m = paced_move_match(validation.boards, validation.played, weights, cfg.depth,
                         budget=cfg.budget, threads_n=n_threads(cfg), pacer=pacer,
                         executor=current_executor(cfg), what="validation")
    return float(m.mean())


__all__ = ["Pacer", "move_match_chunk", "paced_move_match", "paced_sweep", "validation_match"]
