"""The search as a user calls it (:func:`search`, :func:`search_many`, :func:`sweep`,
:func:`move_match`): validated wrappers over the alpha-beta kernel (:mod:`search.tree.alphabeta`) and the batch kernels
(:mod:`search.tree.batch`). The static evaluation is :mod:`search.evaluation.evaluation_api`.

Scores come back in centipawns (float, side to move's view) and as exact eval units
(int, centipawns x PHASE_MAX); mate scores are reported as ``mate_in`` plies instead.
Thread counts are applied only around the call (``numba.set_num_threads`` is restored after).

Every function checks its boards and weights once, before any kernel runs
(:mod:`search.core.validate`, :mod:`search.evaluation.validate`), and refuses bad input with
:class:`InvalidBoardError`, :class:`InvalidWeightsError` or another ``ValueError`` with a
one-line message: no input can crash the process.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import SupportsIndex

import numba
import numpy as np
import numpy.typing as npt

from search.tree.alphabeta import INF, KIND_DRAW, KIND_EVAL, KIND_MATE, MATE, MATE_BOUND, MAX_PLY, Workspace, search_kernel
from search.tree.batch import (
    count_moves_kernel,
    credit_kernel,
    match_kernel,
    move_index_kernel,
    search_batch_kernel,
    signed_features_kernel,
    sweep_kernel,
)
from search.params.catalog import PHASE_MAX, PLUGIN
from search.core.convert import Board, _push, move_to_uci
from search.evaluation.evaluation_api import EVAL_SCALE, _features
from search.core.validate import InvalidBoardError, check_board, check_boards
from search.evaluation.validate import (MAX_ABS_WEIGHT, MAX_TERM_COUNT, InvalidWeightsError, check_evaluator,
                                        check_weight_rows)
from search.evaluation.network import QuantizedNetwork
from search.core.types import Move, Score

# no static evaluation reaches the mate band (search.evaluation.validate.MAX_ABS_WEIGHT explains)
assert MAX_ABS_WEIGHT * PHASE_MAX * MAX_TERM_COUNT < MATE_BOUND

#: an evaluator as the search API takes it: linear int32[N_FEATURES] weights or a network
Evaluator = np.ndarray | QuantizedNetwork

__all__ = [
    "INF", "KIND_DRAW", "KIND_EVAL", "KIND_MATE", "MATE", "DEFAULT_BUDGET", "MAX_BUDGET", "MAX_TT_BITS",
    "InvalidBoardError", "InvalidWeightsError",
    "SearchResult", "Sweep", "mate_in", "move_credit", "move_indices", "move_match", "move_pointers", "search",
    "search_many", "signed_features", "sweep", "thread_ceiling", "threads", "MAX_SEARCH_DEPTH",
]

#: default node budget per search (a runaway guard: depth 1-2 searches use far fewer)
DEFAULT_BUDGET = 1_000_000
#: largest node budget accepted (the kernels count nodes in int64)
MAX_BUDGET = 1 << 62
#: deepest search of the batch kernels and :func:`search`, in plies (the kernel's stack holds MAX_PLY plies)
MAX_SEARCH_DEPTH = MAX_PLY - 1
#: largest move-ordering table of :func:`search` (2**MAX_TT_BITS entries, 12 bytes each)
MAX_TT_BITS = 30


def thread_ceiling() -> int:
    """The most threads numba's parallel kernels may use in this process: ``NUMBA_NUM_THREADS``
    (fixed at numba's import; by default numba's own count of the affinity set; numba sets its
    config attributes at run time, so they are read by name)."""
    return int(getattr(numba.config, "NUMBA_NUM_THREADS"))


@contextlib.contextmanager
def threads(n: int | None) -> Iterator[None]:
    """Run numba parallel kernels with ``n`` threads (1 .. :func:`thread_ceiling`) inside the block.
    ``None`` leaves numba's current count as it is (it does not mean "all cores": a request of
    0 for all cores is the caller's to resolve into a count)."""
    if n is None:
        yield
        return
    n = _check_int(n, "threads", 1, thread_ceiling())
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(old)


def mate_in(units: int) -> int | None:
    """Plies to mate for a mate score (positive: the side to move mates), else None."""
    if units > MATE_BOUND:
        return int(MATE - units)
    if units < -MATE_BOUND:
        return -int(MATE + units)
    return None


def _check_int(value: object, what: str, low: int, high: int) -> int:
    """``value`` as a Python int within ``[low, high]``; ``ValueError`` (one line) otherwise."""
    if not isinstance(value, SupportsIndex):
        raise ValueError(f"{what} must be an integer, not {type(value).__name__}")
    number = operator.index(value)
    if not low <= number <= high:
        raise ValueError(f"{what} must be between {low} and {high}, not {number}")
    return number


def _check_depth_budget(depth: int, budget: int) -> tuple[int, int]:
    return _check_int(depth, "depth", 0, MAX_SEARCH_DEPTH), _check_int(budget, "node budget", 1, MAX_BUDGET)


def _int_vector(values: object, what: str, length: int, dtype: type[np.integer]) -> np.ndarray:
    """``values`` as a contiguous ``dtype`` vector of ``length`` integers that fit ``dtype``."""
    arr = np.asarray(values)
    if arr.shape != (length,):
        raise ValueError(f"{what} must have shape ({length},), not {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{what} must be integers, not {arr.dtype}")
    info = np.iinfo(dtype)
    if length and (int(arr.min()) < info.min or int(arr.max()) > info.max):
        raise ValueError(f"{what} must fit {np.dtype(dtype).name}")
    return np.ascontiguousarray(arr, dtype=dtype)


@dataclass(frozen=True)
class SearchResult:
    """Outcome of one search.

    ``score`` is in eval units (centipawns x PHASE_MAX), side to move's view; ``pv`` the
    packed moves of the principal variation; ``leaf`` the board at its end; ``kind`` tells
    whether ``score`` is the leaf's static evaluation (``KIND_EVAL``, entering the score with
    sign ``leaf_sign``) or a rule's verdict (``KIND_MATE``, ``KIND_DRAW``).
    """

    score: Score
    pv: tuple[Move, ...]
    leaf: Board
    kind: int
    nodes: int
    budget_exhausted: bool

    @property
    def score_cp(self) -> float:
        return self.score / EVAL_SCALE

    @property
    def mate_in(self) -> int | None:
        return mate_in(self.score)

    @property
    def leaf_sign(self) -> int:
        return 1 if len(self.pv) % 2 == 0 else -1

    @property
    def best_move(self) -> int | None:
        return self.pv[0] if self.pv else None

    def pv_uci(self) -> list[str]:
        return [move_to_uci(m) for m in self.pv]

    def leaf_features(self) -> tuple[np.ndarray, np.ndarray]:
        """The PV leaf's features times :attr:`leaf_sign` (empty unless ``kind == KIND_EVAL``):
        the gradient of :attr:`score` with respect to the weights, in eval units."""
        if self.kind != KIND_EVAL:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        idx, val = _features(self.leaf)  # the leaf of a checked root: valid
        return idx, val * self.leaf_sign


def search(b: Board, depth: int, weights: Evaluator, *, budget: int = DEFAULT_BUDGET,
           history: Sequence[int] = (), tt_bits: int = 0) -> SearchResult:
    """Alpha-beta search of one board to ``depth`` plies plus quiescence.

    ``weights``: linear int32 weights or a :class:`search.evaluation.network.QuantizedNetwork`.
    ``history``: Zobrist keys of the game positions before ``b`` (oldest first), for
    repetition draws; ``tt_bits``: size of a move-ordering transposition table (0: none).
    Raises :class:`InvalidBoardError`, :class:`InvalidWeightsError` or ``ValueError``.
    """
    depth, budget = _check_depth_budget(depth, budget)
    tt_bits = _check_int(tt_bits, "tt_bits", 0, MAX_TT_BITS)
    b = check_board(b)
    w = check_evaluator(weights)
    try:
        keys = [operator.index(k) for k in history]
        hist = np.array(keys or [0], dtype=np.uint64)
    except (TypeError, OverflowError):
        raise ValueError("history must hold Zobrist keys: integers in [0, 2**64)") from None
    ws = Workspace(w)
    tt_keys = np.zeros(1 << tt_bits if tt_bits else 0, dtype=np.uint64)
    tt_moves = np.zeros(len(tt_keys), dtype=np.int32)
    score = int(search_kernel(ws.arrays, ws.state, b, depth, w, budget, hist, len(keys), tt_keys, tt_moves))
    pv = ws.pv
    leaf = b.copy()
    for m in pv:
        leaf = _push(leaf, m)  # a move of the kernel's PV: legal
    return SearchResult(score, pv, leaf, ws.leaf_kind, ws.nodes, ws.budget_exhausted)


@dataclass(frozen=True)
class BatchResult:
    """Searches of many boards: arrays indexed by position (see :func:`search_many`)."""

    scores: np.ndarray  # int64[P] eval units, side to move's view
    pv: np.ndarray  # int32[P, MAX_PLY]
    pv_len: np.ndarray  # int64[P]
    kinds: np.ndarray  # int8[P]
    leaves: np.ndarray  # uint64[P, BOARD_WORDS]
    nodes: np.ndarray  # int64[P]
    budget_exhausted: np.ndarray  # bool[P]


def search_many(boards: np.ndarray, depth: int, weights: Evaluator, *, budget: int = DEFAULT_BUDGET,
                n_threads: int | None = None) -> BatchResult:
    """Search every board of ``boards`` (uint64[P, BOARD_WORDS]) in parallel (``weights``:
    linear int32 weights or a network)."""
    depth, budget = _check_depth_budget(depth, budget)
    boards = check_boards(boards)
    w = check_evaluator(weights)
    with threads(n_threads):
        return BatchResult(*search_batch_kernel(boards, depth, w, budget))


@dataclass(frozen=True)
class Sweep:
    """Every legal move of every position searched (see :func:`sweep`).

    Rows of position ``p``: ``pos_ptr[p]:pos_ptr[p+1]``. ``scores`` are ``s(p.m)`` in eval
    units from the mover's view; for ``kinds == KIND_EVAL`` they equal
    ``signs * evaluate(leaves)`` (times PHASE_MAX)."""

    pos_ptr: np.ndarray  # int64[P + 1]
    moves: np.ndarray  # int32[M]
    scores: np.ndarray  # int64[M]
    kinds: np.ndarray  # int8[M]
    signs: np.ndarray  # int8[M]
    leaves: np.ndarray  # uint64[M, BOARD_WORDS], or [0, BOARD_WORDS] without leaves
    nodes: np.ndarray  # int64[P]


def sweep(boards: np.ndarray, depth: int, weights: Evaluator, *, budget: int = DEFAULT_BUDGET,
          leaves: bool = True, n_threads: int | None = None) -> Sweep:
    """For each position and each of its legal moves, search the child to ``depth - 1`` plies
    plus quiescence (``depth`` >= 1 counts from the position) and keep the PV leaves
    (``weights``: linear int32 weights or a network)."""
    depth, budget = _check_depth_budget(depth, budget)
    if depth < 1:
        raise ValueError(f"sweep depth counts from the position and must be >= 1, not {depth}")
    boards = check_boards(boards)
    w = check_evaluator(weights)
    with threads(n_threads):
        pos_ptr = move_pointers(boards)
        return Sweep(pos_ptr, *sweep_kernel(boards, pos_ptr, depth, w, budget, bool(leaves)))


def move_pointers(boards: np.ndarray) -> np.ndarray:
    """The rows of a sweep of checked ``boards``: int64[P + 1], the prefix sum of their legal
    move counts (position ``p``'s rows are ``pos_ptr[p]:pos_ptr[p + 1]``)."""
    pos_ptr = np.zeros(len(boards) + 1, dtype=np.int64)
    np.cumsum(count_moves_kernel(boards), out=pos_ptr[1:])
    return pos_ptr


def move_match(boards: np.ndarray, played: np.ndarray, weights: np.ndarray, depth: int, *,
               budget: int = DEFAULT_BUDGET, n_threads: int | None = None) -> np.ndarray:
    """Move-match fractions float64[I, P] of weight vectors ``weights`` (int32[I, N] or [N])
    on ``boards``: 1/k when the played move (packed int32[P]) is among the k moves the sweep at
    ``depth`` scores best, 0 otherwise."""
    depth, budget = _check_depth_budget(depth, budget)
    boards = check_boards(boards)
    w = check_weight_rows(weights)
    played = _int_vector(played, "played moves", len(boards), np.int32)
    with threads(n_threads):
        fractions: npt.NDArray[np.float64] = match_kernel(boards, played, w, depth, budget)
        return fractions


def move_credit(pos_ptr: np.ndarray, played_rows: np.ndarray, scores: np.ndarray, k: int = 1) -> np.ndarray:
    """Top-``k`` credit of each position's played move in a sweep (float64[P]): see
    :func:`search.tree.batch.played_credit`, the one definition of move-match (ties shared).

    ``pos_ptr`` int64[P+1] and ``scores`` int64[M] as a :class:`Sweep` has them (or float64[M],
    e.g. a move model's scores, compared as they are); ``played_rows`` int64[P], the global row of
    each position's played move (every position has at least one row)."""
    pos_ptr = np.ascontiguousarray(pos_ptr, dtype=np.int64)
    played_rows = np.ascontiguousarray(played_rows, dtype=np.int64)
    scores = np.ascontiguousarray(scores, dtype=np.float64 if np.asarray(scores).dtype.kind == "f" else np.int64)
    if pos_ptr.ndim != 1 or len(pos_ptr) < 1 or pos_ptr[0] != 0 or pos_ptr[-1] != len(scores) \
            or np.any(np.diff(pos_ptr) < 1):
        raise ValueError("pos_ptr must rise from 0 to len(scores) by at least 1 per position")
    if played_rows.shape != (len(pos_ptr) - 1,) or np.any(played_rows < pos_ptr[:-1]) \
            or np.any(played_rows >= pos_ptr[1:]):
        raise ValueError("played_rows[p] must be a row of position p")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, not {k!r}")
    credit: npt.NDArray[np.float64] = credit_kernel(pos_ptr, played_rows, scores, int(k))
    return credit


def move_indices(boards: np.ndarray, keys: np.ndarray, *, n_threads: int | None = None) -> np.ndarray:
    """For each board (uint64[P, BOARD_WORDS]), the index of its legal move whose UCI key
    (int32[P], :func:`search.core.convert.uci_key`) matches, in the order of a :func:`sweep`'s rows
    for that board; -1 where the move is not legal there. int64[P]."""
    boards = check_boards(boards)
    keys = _int_vector(keys, "keys", len(boards), np.int32)
    with threads(n_threads):
        rows: npt.NDArray[np.int64] = move_index_kernel(boards, keys)
        return rows


def signed_features(boards: np.ndarray, signs: np.ndarray, *,
                    n_threads: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR matrix (indptr int64[R+1], indices int16, values int16) of ``signs[r] * phi(boards[r])``
    for boards uint64[R, BOARD_WORDS] and signs int8[R] in {-1, 0, 1} (0: an empty row).
    With a sweep's leaves and signs, row r's dot product with the weights is the row's score."""
    boards = check_boards(boards)
    signs = _int_vector(signs, "signs", len(boards), np.int8)
    if len(signs) and (signs.min() < -1 or signs.max() > 1):
        raise ValueError("signs must be -1, 0 or 1")
    with threads(n_threads):
        csr: tuple[np.ndarray, np.ndarray, np.ndarray] = signed_features_kernel(boards, signs)
    if PLUGIN is not None:  # an engine author's terms follow the built-in ones (search.evaluation.terms_kernels)
        from search.evaluation.terms_kernels import with_plugin_features  # noqa: PLC0415 - only with a plug-in

        return with_plugin_features(boards, csr, signs)
    return csr
