"""Kernel calls cut into pieces of about 0.4 s (:class:`Pacer`, :func:`paced_sweep`,
:func:`paced_move_match`) so that Ctrl-C stops a run promptly, with the same results as one
call; and the validation move-match of a run, measured that way."""

from __future__ import annotations

import time
import numpy as np

from search.evaluation.evaluators import Evaluator
from search.evaluation.network import QuantizedNetwork
from search.tree.search_api import Sweep, move_credit, move_indices, move_match, sweep
from search.pls.move_model import load_move_model
from search.pls.pls import pls_sweep
from tuner.errors import check_interrupt
from tuner.training.executor import Executor, LocalExecutor
from tuner.training.pacer import Pacer
from tuner.training.training_data import TrainingData
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig


def paced_move_match(boards: np.ndarray, played: np.ndarray, weights: np.ndarray, depth: int, *,
                     budget: int, n_threads: int, pacer: Pacer | None = None, rows: np.ndarray | None = None,
                     executor: Executor | None = None, what: str = "move-match") -> np.ndarray:
    """:func:`search.tree.search_api.move_match` (float64[I, P] for weights int32[I, N]) of ``weights`` on
    ``boards`` (or on the sorted ``rows`` of them: float64[I, len(rows)]), the same result as one
    call. Through ``executor`` (default: this process with ``n_threads`` threads) in chunks;
    locally each chunk runs in calls of about ``pacer.target`` seconds, with a Ctrl-C check
    between them."""
    weights = np.atleast_2d(weights)
    executor = executor or LocalExecutor(n_threads)
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


def paced_sweep(boards: np.ndarray, depth: int, w: Evaluator, *, budget: int, pacer: Pacer,
                pls_threshold: float = 0.0, pls_model: str = "gm") -> Sweep:
    """:func:`search.tree.search_api.sweep` with leaves, in calls of about ``pacer.target`` seconds with a
    Ctrl-C check between them; the same arrays as one call (see :class:`Pacer`). With
    ``pls_threshold`` > 0: :func:`search.pls.pls.pls_sweep` to that threshold with the move model
    ``pls_model`` instead (``depth`` unused)."""
    parts = []
    model = load_move_model(pls_model) if pls_threshold > 0 else None
    for a, z in pacer.pieces(len(boards)):
        t = time.perf_counter()
        parts.append(sweep(boards[a:z], depth, w, budget=budget, leaves=True) if model is None else
                     pls_sweep(boards[a:z], pls_threshold, w, model, budget=budget))
        pacer.record(z - a, time.perf_counter() - t)
        check_interrupt()
    if len(parts) == 1:
        return parts[0]
    starts = np.cumsum([0] + [int(p.pos_ptr[-1]) for p in parts[:-1]])
    pos_ptr = np.concatenate([parts[0].pos_ptr[:1]] + [p.pos_ptr[1:] + s for p, s in zip(parts, starts)])
    return Sweep(pos_ptr, *(np.concatenate([getattr(p, f) for p in parts])
                            for f in ("moves", "scores", "kinds", "signs", "leaves", "nodes")))


def network_match_chunk(boards: np.ndarray, played: np.ndarray, *, net: QuantizedNetwork, depth: int, budget: int,
                        pacer: Pacer | None = None) -> np.ndarray:
    """The move-match float64[P] (ties as fractions) of a network on one chunk of positions
    (``played``: packed moves int32[P]), in sweeps of about ``pacer.target`` seconds with a
    Ctrl-C check between them: the same credit as :func:`search.tree.search_api.move_match`."""
    pacer = pacer or Pacer()
    out = np.zeros(len(boards), dtype=np.float64)
    index = move_indices(boards, played)
    for a, z in pacer.pieces(len(boards)):
        t = time.perf_counter()
        sw = sweep(boards[a:z], depth, net, budget=budget, leaves=False)
        rows = sw.pos_ptr[:-1] + np.maximum(index[a:z], 0)
        out[a:z] = np.where(index[a:z] >= 0, move_credit(sw.pos_ptr, rows, sw.scores, 1), 0.0)
        pacer.record(z - a, time.perf_counter() - t)
        check_interrupt()
    return out


def paced_network_match(boards: np.ndarray, played: np.ndarray, net: QuantizedNetwork, depth: int, *,
                        budget: int, n_threads: int, pacer: Pacer | None = None,
                        executor: Executor | None = None, what: str = "move-match") -> np.ndarray:
    """:func:`paced_move_match` for a network: float64[P] through ``executor``, in chunks."""
    executor = executor or LocalExecutor(n_threads)
    out = np.zeros(len(boards), dtype=np.float64)
    for a, z, part in executor.map_chunks(network_match_chunk, (boards, played), shared={"net": net}, pacer=pacer,
                                          what=what, depth=depth, budget=budget):
        out[a:z] = part
    return out


def validation_match(ctx: RunContext, cfg: TuneConfig, data: TrainingData, weights: Evaluator) -> float | None:
    """Mean move-match (ties as fractions) of ``weights`` (linear or a network) on the
    validation positions that have a played move, searched at ``cfg.depth`` with ``cfg.budget``
    on ``ctx``'s executor; None when none has."""
    credits = validation_credits(ctx, cfg, data, weights)
    return None if credits is None else float(credits.mean())


def validation_credits(ctx: RunContext, cfg: TuneConfig, data: TrainingData, weights: Evaluator) -> np.ndarray | None:
    """The move-match credit (float64, ties as fractions) of ``weights`` on each validation
    position that has a played move (:func:`validation_match` is their mean); None when none has."""
    validation = data.validation
    has = validation.has_moves()
    if not has.all():
        validation = validation.subset(np.flatnonzero(has))
    if len(validation) == 0:
        return None
    if isinstance(weights, QuantizedNetwork):
        credits: np.ndarray = paced_network_match(validation.boards, validation.played, weights, cfg.depth,
                                                  budget=cfg.budget, n_threads=ctx.threads,
                                                  pacer=ctx.pacer("validation"), executor=ctx.executor,
                                                  what="validation")
        return np.asarray(credits, dtype=np.float64).ravel()
    m = paced_move_match(validation.boards, validation.played, weights, cfg.depth,
                         budget=cfg.budget, n_threads=ctx.threads, pacer=ctx.pacer("validation"),
                         executor=ctx.executor, what="validation")
    return np.asarray(m[0], dtype=np.float64)


__all__ = ["Pacer", "move_match_chunk", "network_match_chunk", "paced_move_match", "paced_network_match",
           "paced_sweep", "validation_credits", "validation_match"]
