"""Where a static evaluation's time goes, single-threaded, on positions from real games.

Prints one JSON line:
- ``source``, ``positions``: GM game positions (or seeded playouts when the GM folder is absent);
- ``ns_evaluate``: nanoseconds per position of ``evaluate_batch_kernel`` (the search's path:
  every term walked once, weighted sums, ``gm`` weights), best of ``REPEATS`` passes;
- ``ns_evaluate_cached``: the same with a pawn-king table (the search's batch kernels), the
  positions taken in game order (consecutive positions share most pawn structures, fewer
  than the nodes of a search tree do);
- ``ns_features``: the same for ``features_batch_kernel`` (the counting path: sorted CSR rows);
- ``ns_phase``: of ``phase_of`` alone, ``ns_movegen``: of generating the legal moves,
  ``ns_make_move``: of one ``make_move`` (per move made): the other costs of a search node, to
  set the evaluation's share against;
- ``nrt_incref_evaluate`` / ``nrt_incref_features``: the reference-count increments numba left
  in the LLVM IR of ``collect`` (the term walk) with weights / with the scratch vector (an
  atomic operation each per call site reached; 0 is the goal), compiled anew for the count;
- ``load_before``: the machine's 1-minute load average when the bench started.

Times are the calling thread's CPU time (``time.thread_time``), not wall time: the kernels run
single-threaded in this thread, and on a shared machine the wall time also counts the other
processes' turns on the core.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable

import numpy as np
from common import bench_boards
from numba import njit, typeof

from search.core.board import BOARD_WORDS, make_move
from search.core.convert import from_chess
from search.evaluation.feature_kernels import (collect, evaluate_batch_kernel, evaluate_cached_kernel, features_batch_kernel,
                                    new_pawn_king_table, new_scratch, phase_of)
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.params.weights import load_weights

N_POSITIONS = 20_000
REPEATS = 5


@njit(cache=True)
def _evaluate_cached_all(boards, w):  # type: ignore[no-untyped-def]
    pk = new_pawn_king_table()
    score = np.zeros(4, dtype=np.int64)
    t = 0
    for p in range(boards.shape[0]):
        t += evaluate_cached_kernel(boards[p], w, score, pk)
    return t


@njit(cache=True)
def _phase_all(boards):  # type: ignore[no-untyped-def]
    t = 0
    for p in range(boards.shape[0]):
        t += phase_of(boards[p])
    return t


@njit(cache=True)
def _movegen_all(boards):  # type: ignore[no-untyped-def]
    buf = np.zeros(MAX_MOVES, dtype=np.int32)
    t = 0
    for p in range(boards.shape[0]):
        t += generate_moves(boards[p], buf, ALL_MOVES)
    return t


@njit(cache=True)
def _make_all(boards):  # type: ignore[no-untyped-def]
    buf = np.zeros(MAX_MOVES, dtype=np.int32)
    child = np.zeros(BOARD_WORDS, dtype=np.uint64)
    t = 0
    for p in range(boards.shape[0]):
        n = generate_moves(boards[p], buf, ALL_MOVES)
        for i in range(n):
            make_move(boards[p], child, buf[i])
        t += n
    return t


def _cpu_best(fn: Callable[[], object], repeats: int) -> float:
    """The least thread CPU seconds of ``repeats`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
    return best


def _increfs(kernel: object, *args: object) -> int:
    """``NRT_incref`` calls in the LLVM IR of ``kernel`` compiled anew (no cache: numba cannot
    show cached code) for ``args``."""
    fresh = njit(kernel.py_func)  # type: ignore[attr-defined]
    fresh.compile(tuple(typeof(a) for a in args))
    return sum(text.count("call void @NRT_incref") for text in fresh.inspect_llvm().values())


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, and no stray arguments
    load = round(os.getloadavg()[0], 2)
    boards, source = bench_boards(N_POSITIONS)
    arr = np.ascontiguousarray(np.stack([from_chess(b) for b in boards]))
    w = np.ascontiguousarray(load_weights("gm").values, dtype=np.int32)
    n = len(arr)
    runs = {"evaluate": lambda: evaluate_batch_kernel(arr, w),
            "evaluate_cached": lambda: _evaluate_cached_all(arr, w), "features": lambda: features_batch_kernel(arr),
            "phase": lambda: _phase_all(arr), "movegen": lambda: _movegen_all(arr)}
    out: dict[str, object] = {"source": source, "positions": n, "load_before": load}
    for name, run in runs.items():
        run()  # compile, or load numba's cache
        out[f"ns_{name}"] = round(_cpu_best(run, REPEATS) * 1e9 / n, 1)
    n_moves = _make_all(arr)
    out["ns_make_move"] = round(_cpu_best(lambda: _make_all(arr), REPEATS) * 1e9 / n_moves - out["ns_movegen"] * n / n_moves, 1)  # type: ignore[operator]
    score = np.zeros(2, dtype=np.int64)
    out["nrt_incref_evaluate"] = _increfs(collect, arr[0], w, score, None, None)
    out["nrt_incref_features"] = _increfs(collect, arr[0], None, new_scratch(), None, None)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
