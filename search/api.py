"""Public search API: validated wrappers over the alpha-beta and batch kernels.

Scores come back in centipawns (float, side to move's view) and as exact eval units
(int, centipawns x PHASE_MAX); mate scores are reported as ``mate_in`` plies instead.
Thread counts are applied only around the call (``numba.set_num_threads`` is restored after).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from search.alphabeta import INF, KIND_DRAW, KIND_EVAL, KIND_MATE, MATE, MATE_BOUND, MAX_PLY, new_workspace, search_kernel
from search.batch import (
    count_moves_kernel,
    match_kernel,
    move_index_kernel,
    search_batch_kernel,
    signed_features_kernel,
    sweep_kernel,
)
from search.convert import Board, move_to_uci, push
from search.evaluator import EVAL_SCALE, check_boards, check_weights, features

__all__ = [
    "INF", "KIND_DRAW", "KIND_EVAL", "KIND_MATE", "MATE", "DEFAULT_BUDGET",
    "SearchResult", "Sweep", "mate_in", "move_indices", "move_match", "search", "search_many",
    "signed_features", "sweep", "threads",
]

#: default node budget per search (a runaway guard: depth 1-2 searches use far fewer)
DEFAULT_BUDGET = 1_000_000


@contextlib.contextmanager
def threads(n: int | None) -> Iterator[None]:
    """Run numba parallel kernels with ``n`` threads inside the block (``None``: unchanged)."""
    if n is None:
        yield
        return
    if not 1 <= n <= numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"threads must be between 1 and {numba.config.NUMBA_NUM_THREADS}, not {n}")
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


def _check_depth_budget(depth: int, budget: int) -> None:
    if not 0 <= depth < MAX_PLY:
        raise ValueError(f"depth must be between 0 and {MAX_PLY - 1}, not {depth}")
    if budget < 1:
        raise ValueError(f"node budget must be positive, not {budget}")


@dataclass(frozen=True)
class SearchResult:
    """Outcome of one search.

    ``score`` is in eval units (centipawns x PHASE_MAX), side to move's view; ``pv`` the
    packed moves of the principal variation; ``leaf`` the board at its end; ``kind`` tells
    whether ``score`` is the leaf's static evaluation (``KIND_EVAL``, entering the score with
    sign ``leaf_sign``) or a rule's verdict (``KIND_MATE``, ``KIND_DRAW``).
    """

    score: int
    pv: tuple[int, ...]
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
        idx, val = features(self.leaf)
        return idx, val * self.leaf_sign


def search(b: Board, depth: int, weights: np.ndarray, *, budget: int = DEFAULT_BUDGET,
           history: Sequence[int] = (), tt_bits: int = 0) -> SearchResult:
    """Alpha-beta search of one board to ``depth`` plies plus quiescence.

    ``history``: Zobrist keys of the game positions before ``b`` (oldest first), for
    repetition draws; ``tt_bits``: size of a move-ordering transposition table (0: none).
    """
    _check_depth_budget(depth, budget)
    w = check_weights(weights)
    ws = new_workspace()
    hist = np.array(list(history) or [0], dtype=np.uint64)
    tt_keys = np.zeros(1 << tt_bits if tt_bits else 0, dtype=np.uint64)
    tt_moves = np.zeros(len(tt_keys), dtype=np.int32)
    score = int(search_kernel(ws, b, depth, w, budget, hist, len(history), tt_keys, tt_moves))
    ints, pv_table, stats = ws[3], ws[4], ws[7]
    pv = tuple(int(m) for m in pv_table[0, : ints[0, 8]])
    leaf = b.copy()
    for m in pv:
        leaf = push(leaf, m)
    return SearchResult(score, pv, leaf, int(ints[0, 9]), int(stats[0]), bool(stats[1]))


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


def search_many(boards: np.ndarray, depth: int, weights: np.ndarray, *, budget: int = DEFAULT_BUDGET,
                n_threads: int | None = None) -> BatchResult:
    """Search every board of ``boards`` (uint64[P, BOARD_WORDS]) in parallel."""
    _check_depth_budget(depth, budget)
    boards = check_boards(boards)
    w = check_weights(weights)
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


def sweep(boards: np.ndarray, depth: int, weights: np.ndarray, *, budget: int = DEFAULT_BUDGET,
          leaves: bool = True, n_threads: int | None = None) -> Sweep:
    """For each position and each of its legal moves, search the child to ``depth - 1`` plies
    plus quiescence (``depth`` >= 1 counts from the position) and keep the PV leaves."""
    if depth < 1:
        raise ValueError(f"sweep depth counts from the position and must be >= 1, not {depth}")
    _check_depth_budget(depth, budget)
    boards = check_boards(boards)
    w = check_weights(weights)
    with threads(n_threads):
        counts = count_moves_kernel(boards)
        pos_ptr = np.zeros(len(boards) + 1, dtype=np.int64)
        np.cumsum(counts, out=pos_ptr[1:])
        return Sweep(pos_ptr, *sweep_kernel(boards, pos_ptr, depth, w, budget, leaves))


def move_match(boards: np.ndarray, played: np.ndarray, weights: np.ndarray, depth: int, *,
               budget: int = DEFAULT_BUDGET, n_threads: int | None = None) -> np.ndarray:
    """Move-match fractions float64[I, P] of weight vectors ``weights`` (int32[I, N] or [N])
    on ``boards``: 1/k when the played move (packed int32[P]) is among the k moves the sweep at
    ``depth`` scores best, 0 otherwise."""
    _check_depth_budget(depth, budget)
    boards = check_boards(boards)
    weights = np.atleast_2d(np.asarray(weights))
    w = np.stack([check_weights(row) for row in weights]) if len(weights) else weights.astype(np.int32)
    played = np.ascontiguousarray(played, dtype=np.int32)
    if played.shape != (len(boards),):
        raise ValueError(f"played moves must have shape ({len(boards)},), not {played.shape}")
    with threads(n_threads):
        return match_kernel(boards, played, w, depth, budget)


def move_indices(boards: np.ndarray, keys: np.ndarray, *, n_threads: int | None = None) -> np.ndarray:
    """For each board (uint64[P, BOARD_WORDS]), the index of its legal move whose UCI key
    (int32[P], :func:`search.convert.uci_key`) matches, in the order of a :func:`sweep`'s rows
    for that board; -1 where the move is not legal there. int64[P]."""
    boards = check_boards(boards)
    keys = np.ascontiguousarray(keys, dtype=np.int32)
    if keys.shape != (len(boards),):
        raise ValueError(f"keys must have shape ({len(boards)},), not {keys.shape}")
    with threads(n_threads):
        return move_index_kernel(boards, keys)


def signed_features(boards: np.ndarray, signs: np.ndarray, *,
                    n_threads: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR matrix (indptr int64[R+1], indices int16, values int16) of ``signs[r] * phi(boards[r])``
    for boards uint64[R, BOARD_WORDS] and signs int8[R] in {-1, 0, 1} (0: an empty row).
    With a sweep's leaves and signs, row r's dot product with the weights is the row's score."""
    boards = check_boards(boards)
    signs = np.ascontiguousarray(signs, dtype=np.int8)
    if signs.shape != (len(boards),):
        raise ValueError(f"signs must have shape ({len(boards)},), not {signs.shape}")
    with threads(n_threads):
        return signed_features_kernel(boards, signs)
