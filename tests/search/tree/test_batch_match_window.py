"""The move-match kernel's windowed searches (issue 26): the fail-soft root window of
search_window_kernel against full-window searches, and match_kernel's credit against the
credit of full sweeps (full_match_kernel, and played_credit over search_api.sweep's scores)."""

from __future__ import annotations

import chess
import numpy as np
import pytest
from tests.conftest import played_positions

from search.tree.alphabeta import INF, new_workspace, search_kernel, search_window_kernel
from search.tree.batch import full_match_kernel, match_kernel, played_credit
from search.core.board import move_uci_key
from search.core.convert import from_chess, move_from_chess
from search.tree.search_api import DEFAULT_BUDGET, move_indices, sweep
from search.params.weights import load_weights


@pytest.fixture(scope="module")
def played(real_games: list[list[chess.Move]]) -> tuple[np.ndarray, np.ndarray]:
    boards, moves, _ = played_positions(real_games, 240)
    arr = np.stack([from_chess(b) for b in boards])
    packed = np.array([move_from_chess(arr[i], m) for i, m in enumerate(moves)], dtype=np.int32)
    return arr, packed


def move_keys(packed: np.ndarray) -> np.ndarray:
    return np.array([move_uci_key(m) for m in packed], dtype=np.int32)


def weight_sets() -> np.ndarray:
    rng = np.random.default_rng(4)
    classic = load_weights("classic").values
    material = load_weights("material").values
    noisy = classic + rng.integers(-30, 31, len(classic)).astype(np.int32)
    # coarse weights make ties among the moves common (the credit 1/k of k equal moves)
    coarse = (material // 100) * 100
    return np.stack([classic, material, noisy, coarse]).astype(np.int32)


def test_window_search_bounds_hold_and_inner_scores_are_exact(played: tuple[np.ndarray, np.ndarray]) -> None:
    boards, _ = played
    w = load_weights("classic").values
    ws = new_workspace()
    hist = np.zeros(1, dtype=np.uint64)
    none_k = np.zeros(0, dtype=np.uint64)
    none_m = np.zeros(0, dtype=np.int32)
    rng = np.random.default_rng(9)
    kinds = {"low": 0, "high": 0, "exact": 0}
    for b in boards[:120]:
        for depth in (0, 1):
            exact = search_kernel(ws, None, b, depth, w, DEFAULT_BUDGET, hist, 0, none_k, none_m)
            for _ in range(3):
                alpha = exact + int(rng.integers(-400, 401))
                beta = alpha + int(rng.choice([2, 50, 1000]))
                v = search_window_kernel(ws, None, b, depth, w, DEFAULT_BUDGET, hist, 0, none_k, none_m, alpha, beta)
                if v <= alpha:
                    assert exact <= v
                    kinds["low"] += 1
                elif v >= beta:
                    assert exact >= v
                    kinds["high"] += 1
                else:
                    assert v == exact
                    kinds["exact"] += 1
            assert search_window_kernel(ws, None, b, depth, w, DEFAULT_BUDGET, hist, 0, none_k, none_m,
                                        -INF, INF) == exact
    assert min(kinds.values()) > 20, kinds


@pytest.mark.parametrize("depth", [1, 2])
def test_match_kernel_equals_the_credit_of_full_sweeps(played: tuple[np.ndarray, np.ndarray], depth: int) -> None:
    boards, keys = played
    if depth == 2:
        boards, keys = boards[:100], keys[:100]
    weights = weight_sets()
    fast = match_kernel(boards, keys, weights, depth, DEFAULT_BUDGET)
    full = full_match_kernel(boards, keys, weights, depth, DEFAULT_BUDGET)
    assert np.array_equal(fast, full)
    # and the credit from the public sweep's scores
    index = move_indices(boards, move_keys(keys))
    for i, w in enumerate(weights):
        sw = sweep(boards, depth, w, leaves=False)
        ref = [played_credit(sw.scores[sw.pos_ptr[p]:sw.pos_ptr[p + 1]], int(index[p]), 1) for p in range(len(boards))]
        assert np.array_equal(fast[i], np.array(ref))
    # the positions cover matches, misses and shared first places
    assert np.any(fast == 1.0) and np.any(fast == 0.0) and np.any((fast > 0) & (fast < 1))
