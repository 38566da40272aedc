"""Iterative deepening's limits (issue 28): a node limit is used to the node, a fixed time to
within a tolerance suited to a loaded machine, and a deadline cuts an iteration that a
prediction let start."""

from __future__ import annotations

import chess
import pytest

from search.convert import from_fen
from search.iterative import Searcher, TimePlan
from search.weights import load_weights

MIDDLE_GAME = "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9"


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    s = Searcher(load_weights("classic").values, tt_bits=16)
    s.think(from_fen(chess.STARTING_FEN), [], max_depth=1)  # load the kernel before timing
    return s


@pytest.mark.parametrize("limit", [3_000, 20_000, 200_000])
@pytest.mark.parametrize("fen", [chess.STARTING_FEN, MIDDLE_GAME])
def test_node_limit_is_searched_to_the_node(searcher: Searcher, fen: str, limit: int) -> None:
    """Issue 28: ``go nodes 200000`` searched 46,757 nodes (the iteration that would have
    passed the limit never started) or, once started, more than the limit."""
    searcher.clear()
    best = searcher.think(from_fen(fen), [], node_limit=limit)
    assert best is not None and best.pv
    assert searcher.searched_nodes == limit  # the cut iteration's nodes count, exactly to the limit
    assert best.total_nodes < limit  # ... but its move is not played: the last complete one's is


def test_fixed_time_is_used(searcher: Searcher) -> None:
    """Issue 28: ``go movetime 1000`` used 0.22 s (no iteration started that was predicted
    not to fit); a fixed plan deepens until its deadline, which aborts the running iteration."""
    searcher.clear()
    best = searcher.think(from_fen(MIDDLE_GAME), [], plan=TimePlan.fixed(0.5))
    assert best is not None and best.pv
    assert 0.4 <= searcher.searched_seconds <= 0.7, searcher.searched_seconds
    assert best.seconds < searcher.searched_seconds  # the last iteration was cut and discarded


def test_deadline_cuts_an_iteration_the_prediction_let_start(searcher: Searcher) -> None:
    searcher.clear()
    fast = searcher.nps
    searcher.nps = 1e15  # a prediction that lets every iteration start
    try:
        best = searcher.think(from_fen(MIDDLE_GAME), [], plan=TimePlan(10.0, 0.3))
    finally:
        searcher.nps = fast
    assert best is not None and best.pv
    assert 0.25 <= searcher.searched_seconds <= 0.5, searcher.searched_seconds
    assert searcher.searched_nodes > best.total_nodes


def test_clock_plan_starts_no_iteration_after_its_soft_limit(searcher: Searcher) -> None:
    searcher.clear()
    best = searcher.think(from_fen(MIDDLE_GAME), [], plan=TimePlan(0.0, 5.0))
    assert best is not None and best.depth == 1 and searcher.searched_nodes == best.total_nodes


def test_a_search_after_a_deadline_is_not_cut(searcher: Searcher) -> None:
    """The watchdog of one search does not abort the next one."""
    searcher.think(from_fen(MIDDLE_GAME), [], plan=TimePlan.fixed(0.05))
    best = searcher.think(from_fen(MIDDLE_GAME), [], max_depth=4)
    assert best is not None and best.depth == 4 and searcher.searched_nodes == best.total_nodes
