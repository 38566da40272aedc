"""Search limits: the ranges of a depth (plies), a node budget and a movetime (milliseconds) as
named constants, the one check of a value against its range (:func:`check_range`), and
:class:`SearchLimits`, the limits of one engine move, declared once for EPD suites
(:mod:`tuner.arena.epd`) and matches (:class:`tuner.arena.match.MatchConfig` holds them).

A range is a ``(low, high)`` pair of ints, both included. Which range applies depends on the
search that runs: an engine move deepens iteratively (:data:`DEPTH`), a sweep searches every
legal move of a position to a fixed depth (:data:`SWEEP_DEPTH`), and training sweeps every
training position at every iteration (:data:`TRAINING_DEPTH`).
"""

from __future__ import annotations

from dataclasses import dataclass

from search.tree.iterative import MAX_DEPTH
from search.tree.search_api import MAX_BUDGET, MAX_SEARCH_DEPTH
from tuner.config import help_field

#: the most nodes a move may search: the kernels count nodes in int64 (a larger budget overflowed
#: the call, "Int value is too large"); the search API's own ceiling
MAX_NODES = MAX_BUDGET
#: the longest time a move may take, in milliseconds (about 24.8 days; a UCI GUI's int32; a larger
#: one overflowed the deadline's clock, "timestamp out of range for platform time_t")
MAX_MOVETIME = 2**31 - 1
#: the deepest training sweep (``tuner tune --depth``): every legal move of every training
#: position is searched at every iteration, so each ply more multiplies an iteration's cost
MAX_TRAINING_DEPTH = 4
#: the deepest search that labels the move model's training positions (``tuner moves train
#: --label-depth``): one search per training position, so its cost grows with the depth too
MAX_LABEL_DEPTH = 6

#: plies of an engine move's iterative deepening (EPD suites, matches, self-play)
DEPTH = (1, MAX_DEPTH)
#: plies of a sweep of every legal move, counted from the position (bench move-match, compare)
SWEEP_DEPTH = (1, MAX_SEARCH_DEPTH)
#: plies of the training sweep, counted from the position
TRAINING_DEPTH = (1, MAX_TRAINING_DEPTH)
#: plies of the search that labels the move model's training positions
LABEL_DEPTH = (1, MAX_LABEL_DEPTH)
#: nodes per move
NODES = (1, MAX_NODES)
#: milliseconds per move
MOVETIME = (1, MAX_MOVETIME)
#: megabytes of an engine's transposition table: ``tuner uci``'s ``Hash`` option (its default and
#: range), and the table of every in-process player of ``tuner bench match|compare|ladder|epd``
DEFAULT_HASH_MB = 16
HASH_MB = (1, 1024)


def check_range(what: str, value: int, bounds: tuple[int, int], unit: str = "") -> int:
    """``value`` if it lies in ``bounds`` (both ends included), else a one-line ``ValueError``
    naming ``what`` (a setting or an option such as ``--depth``), e.g. ``depth must be between 1
    and 60, not 0``; ``unit`` (e.g. ``" ms"``) follows the upper bound."""
    low, high = bounds
    if not low <= value <= high:
        raise ValueError(f"{what} must be between {low} and {high}{unit}, not {value}")
    return value


def check_limits(depth: int | None, nodes: int | None, movetime: int | None) -> None:
    """Raise ValueError unless each limit given (not None) lies in range: ``depth`` in
    :data:`DEPTH`, ``nodes`` in :data:`NODES`, ``movetime`` in :data:`MOVETIME`."""
    if depth is not None:
        check_range("depth", depth, DEPTH)
    if nodes is not None:
        check_range("nodes", nodes, NODES)
    if movetime is not None:
        check_range("movetime", movetime, MOVETIME, " ms")


@dataclass(frozen=True, kw_only=True)
class SearchLimits:
    """How long the engine thinks about each move (an EPD position, a game's move); give at
    least one limit. When several are given, the first reached ends the search."""

    depth: int | None = help_field(None, "search depth in plies per move", metavar="D")
    nodes: int | None = help_field(None, "node budget per move", metavar="N")
    movetime: int | None = help_field(None, "milliseconds per move (results then depend on the machine's speed "
                                            "and load)", metavar="MS")

    def validate(self) -> None:
        if self.depth is None and self.nodes is None and self.movetime is None:
            raise ValueError("give a limit: depth, nodes or movetime")
        check_limits(self.depth, self.nodes, self.movetime)

    def describe(self) -> str:
        """The limits as an EPD report states them, e.g. ``depth 2, 500 nodes per position``."""
        parts = [f"depth {self.depth}" if self.depth is not None else "",
                 f"{self.nodes} nodes" if self.nodes is not None else "",
                 f"{self.movetime} ms" if self.movetime is not None else ""]
        return ", ".join(p for p in parts if p) + " per position"


__all__ = ["DEPTH", "LABEL_DEPTH", "MAX_LABEL_DEPTH", "MAX_MOVETIME", "MAX_NODES", "MAX_TRAINING_DEPTH", "MOVETIME", "NODES", "SWEEP_DEPTH",
           "SearchLimits", "TRAINING_DEPTH", "check_limits", "check_range"]
