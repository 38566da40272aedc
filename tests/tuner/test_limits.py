"""The search limits' ranges and their one check (:mod:`tuner.limits`), and the limits declared
once: :class:`tuner.arena.match.MatchConfig` holds :class:`tuner.limits.SearchLimits`' fields."""

from __future__ import annotations

import dataclasses

import pytest

from search.tree.iterative import MAX_DEPTH
from search.tree.search_api import MAX_BUDGET, MAX_SEARCH_DEPTH
from tuner.arena.match import MatchConfig
from tuner.limits import (
    DEPTH,
    LABEL_DEPTH,
    MAX_MOVETIME,
    MAX_NODES,
    MOVETIME,
    NODES,
    SWEEP_DEPTH,
    TRAINING_DEPTH,
    SearchLimits,
    check_limits,
    check_range,
)
from tuner.moves.train import MoveTrainConfig
from tuner.training.tune_config import TuneConfig


def test_the_ranges_come_from_the_search() -> None:
    assert DEPTH == (1, MAX_DEPTH)
    assert SWEEP_DEPTH == (1, MAX_SEARCH_DEPTH)
    assert NODES == (1, MAX_NODES) and MAX_NODES == MAX_BUDGET
    assert MOVETIME == (1, MAX_MOVETIME)
    assert TRAINING_DEPTH[1] <= SWEEP_DEPTH[1]


def test_check_range_accepts_both_ends_and_names_the_setting() -> None:
    assert check_range("--depth", 1, (1, 5)) == 1
    assert check_range("--depth", 5, (1, 5)) == 5
    with pytest.raises(ValueError, match=r"^--depth must be between 1 and 5, not 6$"):
        check_range("--depth", 6, (1, 5))
    with pytest.raises(ValueError, match=r"^movetime must be between 1 and 9 ms, not 0$"):
        check_range("movetime", 0, (1, 9), " ms")


@pytest.mark.parametrize("depth, nodes, movetime, message", [
    (0, None, None, f"depth must be between 1 and {MAX_DEPTH}, not 0"),
    (MAX_DEPTH + 1, None, None, f"depth must be between 1 and {MAX_DEPTH}, not {MAX_DEPTH + 1}"),
    (None, 0, None, f"nodes must be between 1 and {MAX_NODES}, not 0"),
    (None, None, MAX_MOVETIME + 1, f"movetime must be between 1 and {MAX_MOVETIME} ms, not {MAX_MOVETIME + 1}"),
])
def test_check_limits(depth: int | None, nodes: int | None, movetime: int | None, message: str) -> None:
    with pytest.raises(ValueError) as info:
        check_limits(depth, nodes, movetime)
    assert str(info.value) == message
    check_limits(MAX_DEPTH, MAX_NODES, MAX_MOVETIME)
    check_limits(None, None, None)


def test_search_limits_need_a_limit() -> None:
    with pytest.raises(ValueError, match="give a limit"):
        SearchLimits().validate()
    SearchLimits(nodes=1).validate()
    assert SearchLimits(depth=2, nodes=500).describe() == "depth 2, 500 nodes per position"


def test_match_config_holds_the_search_limits() -> None:
    limit_fields = [f.name for f in dataclasses.fields(SearchLimits)]
    assert issubclass(MatchConfig, SearchLimits)
    assert [f.name for f in dataclasses.fields(MatchConfig)][:len(limit_fields)] == limit_fields
    with pytest.raises(ValueError, match="depth must be between 1"):
        MatchConfig(games=2, depth=0).validate()
    with pytest.raises(ValueError, match="exactly one of"):
        MatchConfig(games=2, depth=1, nodes=5).validate()
    MatchConfig(games=2, nodes=5).validate()


def test_the_training_depths_are_checked_by_the_same_rule() -> None:
    with pytest.raises(ValueError, match=rf"^depth must be between 1 and {TRAINING_DEPTH[1]}, not 0$"):
        TuneConfig(depth=0).validate()
    with pytest.raises(ValueError, match=rf"^label-depth must be between 1 and {LABEL_DEPTH[1]}, not 7$"):
        MoveTrainConfig(label_depth=7).validate()
