"""Probability-limited search (search/pls/pls.py, search/pls/pls_kernels.py): Giraffe's observation (a
constant branching factor b and the threshold b**-d give the depth-d search), the values of the
minimax oracle's alpha-beta on the tree the threshold defines, probabilities summing to 1, node limits
and deterministic iterative deepening, on positions of the shipped games."""

from __future__ import annotations

import math
import threading

import chess
import numpy as np
import pytest

from search.core.convert import from_chess, move_to_uci
from search.tree.iterative import _Deadline
from search.pls.move_model import MoveModel, load_move_model, move_probabilities
import search.pls.pls as pls_module
from search.pls.pls import FACTOR, START, PlsSearcher, pls_iterate, pls_search
from search.pls.pls_kernels import LOG_SCALE, root_budget
from search.tree.search_api import INF, KIND_EVAL, search
from search.params.weights import load_weights
from tests.oracles.minimax import Oracle

CLASSIC = load_weights("classic").values
GM = load_move_model("gm")


@pytest.fixture(scope="module")
def boards(real_boards: list[chess.Board]) -> list[chess.Board]:
    return [b.copy(stack=False) for b in real_boards[5::160]]


@pytest.mark.parametrize("b", [3, 30])
def test_constant_branching_gives_the_depth_limited_search(boards: list[chess.Board], b: int) -> None:
    """Every move costing ln(b) (the constant-branching mock), the threshold b**-d gives the
    depth-d search: the same nodes (same order: the default one), value, PV and leaf."""
    for board in boards[:8]:
        arr = from_chess(board)
        for d in (1, 2, 3):
            plain = search(arr, d, CLASSIC, tt_bits=12)
            pls = PlsSearcher(CLASSIC, MoveModel.uniform(), tt_bits=12, order="default", flat=b).search(arr, b ** -d)
            assert (pls.score, pls.pv, pls.kind, pls.nodes) == (plain.score, plain.pv, plain.kind, plain.nodes)
            assert np.array_equal(pls.leaf, plain.leaf)


def test_uniform_model_on_a_constant_branching_position() -> None:
    """A hand-checked position where every node of the first plies has the same number of legal
    moves: the uniform model's threshold b**-d is depth d there (Giraffe's observation)."""
    board = chess.Board("8/k7/8/8/8/8/8/1K6 w - - 0 1")
    assert board.legal_moves.count() == 5
    for move in board.legal_moves:
        board.push(move)
        assert board.legal_moves.count() == 5
        board.pop()
    arr = from_chess(board)
    for d in (1, 2):
        plain = search(arr, d, CLASSIC, tt_bits=12)
        pls = pls_search(arr, 5.0 ** -d, CLASSIC, MoveModel.uniform(), tt_bits=12, order="default")
        assert (pls.score, pls.pv, pls.kind, pls.nodes) == (plain.score, plain.pv, plain.kind, plain.nodes)
        assert pls_search(arr, 5.0 ** -d, CLASSIC, MoveModel.uniform(), tt_bits=12).score == plain.score
    # the thresholds in [b**-d, b**-(d-1)) give depth d: a node is expanded while its path's
    # probability stays above the threshold
    for threshold, d in ((0.2 * 1.01, 1), (0.2 * 0.99, 2), (0.04 * 1.01, 2)):
        assert pls_search(arr, threshold, CLASSIC, MoveModel.uniform(), order="default").nodes == \
            search(arr, d, CLASSIC).nodes


def _pls_value(oracle: Oracle, model: MoveModel, b: chess.Board, budget: int, ply: int, alpha: int, beta: int) -> int:
    """The oracle's full-window alpha-beta (exact values, written independently of the kernel)
    over the tree of the probability limit: a child's budget is its parent's plus the move's
    log-probability (budget units) while the parent's is > 0."""
    settled, best, moves = oracle._node(b, budget, ply)
    if settled or best >= beta:
        return best
    alpha = max(alpha, best)
    lps: dict[str, int] = {}
    if budget > 0:
        mp = move_probabilities(from_chess(b)[None, :], model)
        lse = float(np.logaddexp.reduce(mp.scores))
        lps = {move_to_uci(int(m)): min(0, int(round((s - lse) * LOG_SCALE))) for m, s in zip(mp.moves, mp.scores)}
    for move in moves:
        child = budget + lps[move.uci()] if budget > 0 else budget - 1
        b.push(move)
        v = -_pls_value(oracle, model, b, child, ply + 1, -beta, -alpha)
        b.pop()
        best = max(best, v)
        alpha = max(alpha, v)
        if alpha >= beta:
            break
    return best


@pytest.mark.parametrize("model_name", ["gm", "uniform"])
def test_values_are_the_oracle_s_on_the_tree_the_threshold_defines(boards: list[chess.Board],
                                                                          model_name: str) -> None:
    model = load_move_model(model_name)
    oracle = Oracle(CLASSIC)
    for board in boards[:4]:
        for threshold in (0.3, 0.02):
            expected = _pls_value(oracle, model, board.copy(), root_budget(threshold), 0, -INF, INF)
            for order in ("model", "default"):
                result = pls_search(from_chess(board), threshold, CLASSIC, model, tt_bits=10, order=order)
                assert not result.budget_exhausted
                assert result.score == expected, (board.fen(), threshold, order)
                if result.kind == KIND_EVAL:  # the PV leaf's static evaluation is the value
                    leaf = board.copy()
                    for u in result.pv_uci():
                        leaf.push_uci(u)
                    assert result.score == result.leaf_sign * oracle.static(leaf)


def test_the_probabilities_used_sum_to_one(boards: list[chess.Board]) -> None:
    for board in boards:
        s = PlsSearcher(CLASSIC, GM)
        s.search(from_chess(board), 0.01)
        n = board.legal_moves.count()
        root_lps = s.ps[3][0, :n]
        assert (root_lps <= 0).all()
        assert abs(sum(math.exp(v / LOG_SCALE) for v in root_lps) - 1.0) < 1e-5 * n


def test_node_limits_are_honoured_and_iterating_is_deterministic(boards: list[chess.Board]) -> None:
    for board in boards[:6]:
        arr = from_chess(board)
        cut = pls_search(arr, 1e-9, CLASSIC, GM, budget=500)
        assert cut.nodes == 500 and cut.budget_exhausted
        first = pls_iterate(arr, CLASSIC, GM, node_limit=5000)
        again = pls_iterate(arr, CLASSIC, GM, node_limit=5000)
        assert [(i.threshold, i.result.score, i.result.pv, i.total_nodes) for i in first] == \
               [(i.threshold, i.result.score, i.result.pv, i.total_nodes) for i in again]
        assert 1 <= len(first) and first[-1].total_nodes <= 5000
        assert all(a.threshold > b.threshold for a, b in zip(first, first[1:]))
        assert all(it.result.pv for it in first)


def test_a_movetime_cuts_the_running_iteration_and_keeps_a_completed_one(boards: list[chess.Board]) -> None:
    """At the deadline the watchdog aborts the running iteration: it is discarded unless it is
    the first (then it is the answer, cut short) or its first root move was searched in full
    (then it is kept as partial), the answer is a legal move, and the nodes of a discarded
    iteration count in :attr:`PlsSearcher.searched_nodes`."""
    board = boards[3]
    arr = from_chess(board)
    searcher = PlsSearcher(CLASSIC, GM, tt_bits=12)
    searcher.search(arr, 0.5)  # load the kernel before the clock runs
    huge = pls_iterate(arr, CLASSIC, GM, movetime=0.05, start=1e-12, floor=1e-12, searcher=searcher)
    assert searcher.timed_out and searcher.cut  # a 1e-12 tree takes far more than 50 ms
    assert len(huge) == 1 and huge[0].result.budget_exhausted  # the first iteration, kept though cut
    assert chess.Move.from_uci(move_to_uci(huge[0].result.pv[0])) in board.legal_moves
    kept = pls_iterate(arr, CLASSIC, GM, movetime=0.05, searcher=searcher)
    assert searcher.timed_out  # the floor (1e-12) is far beyond 50 ms
    assert chess.Move.from_uci(move_to_uci(kept[-1].result.pv[0])) in board.legal_moves
    if searcher.cut and len(kept) > 1 and not kept[-1].partial:  # the cut iteration discarded
        assert searcher.searched_nodes > kept[-1].total_nodes and not kept[-1].result.budget_exhausted
    assert searcher.searched_seconds < 30  # generous: the deadline ended it, not the floor


class _LateWatchdog:
    """A deadline whose watchdog thread never got its turn: it never aborts nor expires."""

    def __init__(self, ws: object, when: float) -> None:
        self.when = when
        self.expired = threading.Event()

    def cancel(self) -> None:
        pass

    passed = _Deadline.passed


def test_the_deadline_counts_as_passed_when_the_watchdog_is_late(boards: list[chess.Board],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The search stops at the deadline by the clock (:func:`search.tree.iterative.may_start`) when
    the watchdog has not fired yet (a busy machine); :attr:`PlsSearcher.timed_out` still says
    the deadline passed. A search that stopped before it (the floor reached) did not time out."""
    monkeypatch.setattr(pls_module, "_Deadline", _LateWatchdog)
    arr = from_chess(boards[3])
    searcher = PlsSearcher(CLASSIC, GM, tt_bits=12)
    searcher.search(arr, 0.5)
    kept = pls_iterate(arr, CLASSIC, GM, movetime=0.05, searcher=searcher)
    assert searcher.searched_seconds >= 0.05 and searcher.timed_out and not searcher.cut
    assert kept and not kept[-1].result.budget_exhausted  # no abort: every iteration completed
    early = pls_iterate(arr, CLASSIC, GM, movetime=600.0, floor=START * FACTOR, searcher=searcher)
    assert len(early) == 2 and not searcher.timed_out


def test_think_counts_iterations_as_depths_and_stops_on_abort(boards: list[chess.Board]) -> None:
    """:meth:`PlsSearcher.think`: iteration d searches to start * factor**(d - 1) (the value of
    :func:`pls_search` at that threshold: the tree, hence the value, does not depend on the
    move order the table gives); after :meth:`abort` only the first iteration runs."""
    for board in boards[:3]:
        arr = from_chess(board)
        searcher = PlsSearcher(CLASSIC, GM, tt_bits=12)
        seen: list[int] = []
        best = searcher.think(arr, [], max_depth=3, on_iteration=lambda it: seen.append(it.depth))
        assert best is not None and seen == [1, 2, 3] and best.depth == 3
        assert best.score == pls_search(arr, START * FACTOR ** 2, CLASSIC, GM).score
        assert best.total_nodes == searcher.searched_nodes
        searcher.abort()
        first = searcher.think(arr, [], max_depth=3)
        assert first is not None and first.depth == 1 and first.pv
        searcher.rearm()


def test_bad_arguments_are_refused() -> None:
    arr = from_chess(chess.Board())
    with pytest.raises(ValueError, match="threshold must be a probability"):
        pls_search(arr, 0.0, CLASSIC, GM)
    with pytest.raises(ValueError, match="order must be one of"):
        pls_search(arr, 0.1, CLASSIC, GM, order="best")
    with pytest.raises(ValueError, match="factor must be in"):
        pls_iterate(arr, CLASSIC, GM, node_limit=100, factor=1.5)
    with pytest.raises(ValueError, match="give node_limit or movetime"):
        pls_iterate(arr, CLASSIC, GM)
    with pytest.raises(ValueError, match="movetime must be"):
        pls_iterate(arr, CLASSIC, GM, movetime=-1.0)
