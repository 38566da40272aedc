"""The recording search of TreeStrap (search/tree/bootstrap_tree.py) against the independent oracle
(tests/oracles/minimax.py, python-chess + the reference extractor: its exact full-window values) and the
fast alpha-beta kernel:
root scores, every recorded node's static value, minimax value and bound type."""

from __future__ import annotations

import chess
import numpy as np
import pytest
from tests.oracles.minimax import Oracle

from search.tree.search_api import search
from search.tree.bootstrap_tree import BOUND_EXACT, BOUND_LOWER, BOUND_UPPER, TreeSearcher
from search.core.convert import from_chess, to_chess
from search.params.weights import load_weights

CLASSIC = load_weights("classic").values
RANDOM_W = np.random.default_rng(5).integers(-150, 150, CLASSIC.shape[0]).astype(np.int32)


@pytest.fixture(scope="module")
def boards(real_boards: list[chess.Board]) -> list[chess.Board]:
    return [b.copy(stack=False) for b in real_boards[40::97][:24]]


@pytest.mark.parametrize("name,w", [("classic", CLASSIC), ("random", RANDOM_W)])
def test_root_score_is_the_fast_kernels_at_every_depth(boards: list[chess.Board], name: str, w: np.ndarray) -> None:
    ts = TreeSearcher()
    for board in boards:
        b = from_chess(board)
        for depth in (1, 2, 3):
            ts.clear()
            rec = ts.search(b, w, depth=depth)
            assert rec.score == search(b, depth, w).score, (board.fen(), depth)
            # the root is recorded last, exact, with its static value and the search's value
            assert rec.ply[-1] == 0 and rec.bound[-1] == BOUND_EXACT and rec.value[-1] == rec.score
            assert rec.depth[-1] == depth


def _oracle_checks(oracle: Oracle, rec, exact_only: bool) -> dict[int, int]:  # type: ignore[no-untyped-def]
    seen = {BOUND_EXACT: 0, BOUND_LOWER: 0, BOUND_UPPER: 0}
    for r in range(len(rec)):
        node = to_chess(rec.boards[r])
        assert rec.static[r] == oracle.static(node), node.fen()
        true = oracle.value(node, int(rec.depth[r]), int(rec.ply[r]))  # exact (full window)
        bound = int(rec.bound[r])
        seen[bound] += 1
        if exact_only:
            assert bound == BOUND_EXACT
        if bound == BOUND_EXACT:
            assert rec.value[r] == true, node.fen()
        elif bound == BOUND_LOWER:
            assert true >= rec.value[r], node.fen()
        else:
            assert true <= rec.value[r], node.fen()
    return seen


def test_minimax_mode_records_every_interior_node_with_its_exact_minimax_value(boards: list[chess.Board]) -> None:
    oracle = Oracle(CLASSIC)
    ts = TreeSearcher()
    checked = 0
    for board in boards[:8]:
        rec = ts.search(from_chess(board), CLASSIC, depth=2, minimax=True)
        if rec.nodes > 3000:  # keep the plain-Python oracle's work small
            continue
        assert rec.score == oracle.value(board, 2)
        _oracle_checks(oracle, rec, exact_only=True)
        # the root, every full-width node at depth 1, and each quiescence root that tried a move
        assert (rec.ply == 0).sum() == 1 and (rec.depth >= 0).all()
        assert (rec.depth == 1).sum() == board.legal_moves.count() - _resolved_children(board)
        checked += len(rec)
    assert checked > 50


def _resolved_children(board: chess.Board) -> int:
    """Children of ``board`` that end the game at once (checkmate, stalemate): no moves searched."""
    n = 0
    for move in board.legal_moves:
        board.push(move)
        n += board.is_checkmate() or board.is_stalemate()
        board.pop()
    return n


def test_alphabeta_bounds_hold_against_the_oracles_exact_values(boards: list[chess.Board]) -> None:
    # exact: the node's minimax value; lower bound: minimax >= value; upper: minimax <= value
    oracle = Oracle(CLASSIC)
    ts = TreeSearcher()
    totals = {BOUND_EXACT: 0, BOUND_LOWER: 0, BOUND_UPPER: 0}
    for board in boards[:5]:
        ts.clear()
        rec = ts.search(from_chess(board), CLASSIC, depth=2)
        if len(rec) > 150:
            continue
        for k, v in _oracle_checks(oracle, rec, exact_only=False).items():
            totals[k] += v
    # the real trees hold all three kinds, so each rule was exercised
    assert min(totals.values()) > 5, totals


def test_full_width_only_records_no_quiescence_node(boards: list[chess.Board]) -> None:
    ts = TreeSearcher()
    for board in boards[:6]:
        b = from_chess(board)
        full = ts.search(b, CLASSIC, depth=2, quiescence=False)
        assert len(full) >= 1 and (full.depth >= 1).all()
        both = ts.search(b, CLASSIC, depth=2)
        assert both.score == full.score


def test_node_limit_keeps_the_last_complete_iteration(boards: list[chess.Board]) -> None:
    ts = TreeSearcher()
    b = from_chess(boards[3])
    deep = ts.search(b, CLASSIC, depth=6, nodes=3000)
    assert 1 <= deep.search_depth < 6
    ts.clear()
    same = ts.search(b, CLASSIC, depth=deep.search_depth)
    assert same.score == deep.score  # the kept iteration is a whole search of that depth


def test_a_full_record_says_so(boards: list[chess.Board]) -> None:
    ts = TreeSearcher(max_records=3)
    rec = ts.search(from_chess(boards[0]), CLASSIC, depth=3)
    assert rec.overflow and len(rec) == 3
