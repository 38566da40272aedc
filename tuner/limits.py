"""The ranges of the per-move search limits that EPD suites (:class:`tuner.arena.epd.SearchLimits`)
and matches (:class:`tuner.arena.match.MatchConfig`) accept."""

from __future__ import annotations

from search.iterative import MAX_DEPTH


def check_limits(depth: int | None, nodes: int | None, movetime: int | None) -> None:
    """Raise ValueError unless each limit given (not None) lies in range: ``depth`` in plies,
    1 to ``MAX_DEPTH``; ``nodes`` >= 1; ``movetime`` >= 1 millisecond."""
    if depth is not None and not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be between 1 and {MAX_DEPTH}, not {depth}")
    if nodes is not None and nodes < 1:
        raise ValueError(f"nodes must be positive, not {nodes}")
    if movetime is not None and movetime < 1:
        raise ValueError(f"movetime must be positive, not {movetime}")
