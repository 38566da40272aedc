"""A per-thread cache of the linear evaluator's static scores by position key, for the batch
kernels (the evaluator state of :func:`search.evaluation.static_eval.new_thread_eval_state`).

An alpha-beta tree reaches some positions more than once (one side's moves played in another
order), and each visit evaluated them anew (how often, and what the cache saves:
``docs/scaling.md``, "Small slider tables, shared chunks and a score cache").

The cache has :data:`EC_ROWS` entries of two words: the board's Zobrist key (``W_KEY``: pieces,
side to move, castling rights and en-passant square; the score depends on the first two only)
and the score plus :data:`SCORE_BIAS` (never 0, so that an all-zero entry is empty). A new
position's score replaces the entry in its slot.

A hit returns the score the evaluation gave, unless two different positions share one 64-bit
key: about one probe in 2**64 (1.8e19); a run of 10**12 evaluations meets one with a chance of
about 1 in 20 million. Such a score would be another position's, not an out-of-range value.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: entries of a cache (a power of two): 128 KB, beside the 147 KB pawn-king table
EC_ROWS = 8192
#: added to a stored score (eval units are far below it), so that a stored one is never 0
SCORE_BIAS = 1 << 62
#: columns of a cache's rows
EC_KEY, EC_SCORE = 0, 1


@njit(cache=True)
def new_eval_cache():  # type: ignore[no-untyped-def]
    """An empty score cache: uint64[EC_ROWS, 2] (key, score + SCORE_BIAS), columns ``EC_KEY``, ``EC_SCORE``; all zero."""
    return np.zeros((EC_ROWS, 2), dtype=np.uint64)


@njit(cache=True, inline="always")
def _slot(key: np.uint64, rows: int) -> int:
    """The entry of ``key`` (a Zobrist key: every bit as good as any other) in a cache of
    ``rows`` rows, a power of two."""
    return int((key >> np.uint64(40)) & np.uint64(rows - 1))


@njit(cache=True)
def cached_score(ec, key):  # type: ignore[no-untyped-def]
    """``(True, score)`` when the cache ``ec`` holds ``key``, else ``(False, 0)``."""
    r = _slot(key, ec.shape[0])
    if ec[r, EC_SCORE] != 0 and ec[r, EC_KEY] == key:
        return True, np.int64(ec[r, EC_SCORE]) - SCORE_BIAS
    return False, np.int64(0)


@njit(cache=True)
def store_score(ec, key, v):  # type: ignore[no-untyped-def]
    """Keep score ``v`` (int64, eval units) of the position with key ``key`` in ``ec``, in place
    of whatever its slot held."""
    r = _slot(key, ec.shape[0])
    ec[r, EC_KEY] = key
    ec[r, EC_SCORE] = np.uint64(v + SCORE_BIAS)

