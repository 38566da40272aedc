"""The sweep through the probability-limited search (search/pls/pls_sweep.py, search.pls.pls.pls_sweep):
Giraffe's observation for whole sweeps (the constant-branching mock, and a uniform model on a
hand-built position where every node has the same number of moves, give the depth sweep, row
for row), each row's value the minimax oracle's on the move's subtree of the probability tree,
true PV leaves (their static evaluation is the score, sign-adjusted), and bad arguments."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from search.core.convert import from_chess, move_to_uci, to_chess
from search.pls.move_model import MoveModel, load_move_model, move_probabilities
from search.evaluation.network import QuantizedNetwork
from search.pls.pls import pls_sweep
from search.pls.pls_kernels import LOG_SCALE, root_budget
from search.tree.search_api import INF, KIND_EVAL, sweep
from search.params.weights import load_weights
from tests.oracles.minimax import Oracle
from tests.search.pls.test_pls import _pls_value

CLASSIC = load_weights("classic").values
GM = load_move_model("gm")
FIELDS = ("pos_ptr", "moves", "scores", "kinds", "signs", "leaves", "nodes")


@pytest.fixture(scope="module")
def boards(real_boards: list[chess.Board]) -> list[chess.Board]:
    return [b.copy(stack=False) for b in real_boards[7::200]]


def _same(a: object, b: object) -> None:
    for f in FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


@pytest.mark.parametrize("b", [4, 30])
def test_the_constant_branching_mock_gives_the_depth_sweep(boards: list[chess.Board], b: int) -> None:
    arr = np.stack([from_chess(x) for x in boards[:10]])
    for d in (1, 2):
        _same(pls_sweep(arr, float(b) ** -d, CLASSIC, GM, order="default", flat=b), sweep(arr, d, CLASSIC))
    _same(pls_sweep(arr, 1.0, CLASSIC, GM), sweep(arr, 1, CLASSIC))  # threshold 1: quiescence children


def test_a_uniform_model_on_a_constant_branching_position_gives_the_depth_sweep() -> None:
    board = chess.Board("8/k7/8/8/8/8/8/1K6 w - - 0 1")  # 5 moves at the root and after each
    for move in board.legal_moves:
        board.push(move)
        assert board.legal_moves.count() == 5
        board.pop()
    arr = from_chess(board)[None, :]
    for d in (1, 2):
        _same(pls_sweep(arr, 5.0 ** -d, CLASSIC, MoveModel.uniform(), order="default"), sweep(arr, d, CLASSIC))
        # the model's order searches another tree order: the same values
        assert np.array_equal(pls_sweep(arr, 5.0 ** -d, CLASSIC, MoveModel.uniform()).scores,
                              sweep(arr, d, CLASSIC).scores)


def test_rows_are_the_oracle_s_values_and_true_leaves(boards: list[chess.Board]) -> None:
    """Row of move m: minus the oracle's value of p.m with the budget root + log p(m) (the tree
    of the probability limit, written independently of the kernel); a row scored by a leaf's
    evaluation has that leaf's static evaluation times its sign."""
    oracle = Oracle(CLASSIC)
    for board in boards[:3]:
        arr = from_chess(board)
        for threshold in (0.3, 0.05):
            sw = pls_sweep(arr[None, :], threshold, CLASSIC, GM)
            mp = move_probabilities(arr[None, :], GM)
            lse = float(np.logaddexp.reduce(mp.scores))
            lps = {move_to_uci(int(m)): min(0, int(round((s - lse) * LOG_SCALE))) for m, s in zip(mp.moves, mp.scores)}
            for row, m in enumerate(sw.moves):
                uci = move_to_uci(int(m))
                child = board.copy()
                child.push_uci(uci)
                expected = -_pls_value(oracle, GM, child, root_budget(threshold) + lps[uci], 0, -int(INF), int(INF))
                assert sw.scores[row] == expected, (board.fen(), threshold, uci)
                if sw.kinds[row] == KIND_EVAL:  # the leaf's static evaluation (the oracle's) is the score
                    assert sw.scores[row] == int(sw.signs[row]) * oracle.static(to_chess(sw.leaves[row]))


def test_bad_arguments_are_refused() -> None:
    arr = from_chess(chess.Board())[None, :]
    with pytest.raises(ValueError, match="threshold must be a probability"):
        pls_sweep(arr, 0.0, CLASSIC, GM)
    with pytest.raises(ValueError, match="order must be one of"):
        pls_sweep(arr, 0.1, CLASSIC, GM, order="best")
    with pytest.raises(ValueError, match="flat must be"):
        pls_sweep(arr, 0.1, CLASSIC, GM, flat=0.5)
    net = QuantizedNetwork.__new__(QuantizedNetwork)
    with pytest.raises(ValueError, match="linear weights, not a network"):
        pls_sweep(arr, 0.1, net, GM)
