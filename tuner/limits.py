"""The ranges of the per-move search limits that EPD suites (:class:`tuner.arena.epd.SearchLimits`)
and matches (:class:`tuner.arena.match.MatchConfig`) accept."""

from __future__ import annotations

from search.tree.iterative import MAX_DEPTH


#: the most nodes a move may search: the kernels count nodes in int64 (a larger budget overflowed
#: the call, "Int value is too large")
MAX_NODES = 2**62
#: the longest time a move may take, in milliseconds (about 24.8 days; a UCI GUI's int32; a larger
#: one overflowed the deadline's clock, "timestamp out of range for platform time_t")
MAX_MOVETIME = 2**31 - 1


def check_limits(depth: int | None, nodes: int | None, movetime: int | None) -> None:
    """Raise ValueError unless each limit given (not None) lies in range: ``depth`` in plies,
    1 to ``MAX_DEPTH``; ``nodes`` 1 to :data:`MAX_NODES`; ``movetime`` 1 to
    :data:`MAX_MOVETIME` milliseconds."""
    if depth is not None and not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be between 1 and {MAX_DEPTH}, not {depth}")
    if nodes is not None and not 1 <= nodes <= MAX_NODES:
        raise ValueError(f"nodes must be between 1 and {MAX_NODES}, not {nodes}")
    if movetime is not None and not 1 <= movetime <= MAX_MOVETIME:
        raise ValueError(f"movetime must be between 1 and {MAX_MOVETIME} ms, not {movetime}")
