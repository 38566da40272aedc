"""The shared work queue (search/tree/work_queue.py): every item handed out once across threads, and
the batch kernels that share their chunks through it give the same results on one thread and
on several, whichever thread searched which chunk."""

from __future__ import annotations

import chess
import numba
import numpy as np
from numba import njit, prange

from search.core.convert import from_chess
from search.tree.search_api import move_match, search_many, sweep
from search.params.weights import load_weights
from search.tree.work_queue import new_queue, take


@njit(parallel=True)
def _takers(n_items):  # type: ignore[no-untyped-def]
    """How often each of ``n_items`` items was taken, with a little work per item."""
    taken = np.zeros(n_items, dtype=np.int64)
    work = np.zeros(n_items, dtype=np.float64)
    queue = new_queue()
    for _ in prange(n_items):
        c = take(queue)
        while c < n_items:
            taken[c] += 1
            x = 0.0
            for k in range(200 + (c % 7) * 50):
                x += np.sqrt(k + c)
            work[c] = x
            c = take(queue)
    return taken


def test_each_item_is_taken_exactly_once_across_threads() -> None:
    old = numba.get_num_threads()
    try:
        for n_threads in sorted({1, int(getattr(numba.config, "NUMBA_NUM_THREADS"))}):
            numba.set_num_threads(n_threads)
            taken = _takers(20_000)
            assert taken.min() == 1 and taken.max() == 1
    finally:
        numba.set_num_threads(old)


def test_take_hands_out_consecutive_items() -> None:
    queue = new_queue()
    assert [int(take(queue)) for _ in range(4)] == [0, 1, 2, 3]


def _boards(real_boards: list[chess.Board], n: int) -> np.ndarray:
    # every 9th position of the shipped games: openings, middle games and endings
    return np.stack([from_chess(b) for b in real_boards[::9][:n]])


def test_the_batch_kernels_give_the_same_results_on_any_number_of_threads(real_boards: list[chess.Board]) -> None:
    arr = _boards(real_boards, 120)
    w = load_weights("classic").values
    many = int(getattr(numba.config, "NUMBA_NUM_THREADS"))
    one, all_ = sweep(arr, 2, w, n_threads=1), sweep(arr, 2, w, n_threads=many)
    for name in ("moves", "scores", "kinds", "signs", "leaves", "nodes"):
        assert np.array_equal(getattr(one, name), getattr(all_, name)), name
    a, b = search_many(arr, 3, w, n_threads=1), search_many(arr, 3, w, n_threads=many)
    for name in ("scores", "pv", "pv_len", "kinds", "leaves", "nodes"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    played = one.moves[one.pos_ptr[:-1]]  # each position's first legal move
    weights = np.stack([w, w // 2, w * 2])
    m1 = move_match(arr, played, weights, 1, n_threads=1)
    m2 = move_match(arr, played, weights, 1, n_threads=many)
    assert m1.shape == (3, len(arr)) and np.array_equal(m1, m2)
    assert 0 < m1.mean() < 1
