"""Plain minimax with the same quiescence as the alpha-beta kernel, for the tests only.

Recursive and not cached (numba cannot reload cached recursive functions), no pruning, no
move ordering: the value of a node is the best of its children (or of standing pat, in
quiescence). Rules shared with the kernel are imported, not rewritten: which moves
quiescence tries (search.quiescence) and what counts as a repetition.

Without pruning, quiescence trees grow exponentially with the number of captures on the
board: one real middle-game position (``r1bqkb1r/4nppp/p1np4/1p1Np3/2P1P3/N7/PP3PPP/R1BQKB1R
b KQkq - 0 9``) has 15.8 million distinct quiescence nodes below its depth-1 children and took
110 s unmemoised, 43 s memoised. Two oracles therefore exist:

* :func:`minimax`: plain minimax throughout, quiescence included (exact, exponential);
* :func:`minimax_qab`: plain minimax over the full-width plies, and at the horizon the
  quiescence value computed by a textbook recursive alpha-beta (fail-hard, no move ordering,
  full window). Alpha-beta with a full window returns the exact minimax value (Knuth & Moore,
  1975), so both oracles give the same values; the tests check that on the roots of the test
  positions (quiescence at depth 0) and use :func:`minimax_qab` for deeper searches.

In :func:`minimax` values are memoised. The
memo changes no value: it only holds nodes whose halfmove clock is 0 (just after a capture
or pawn move), whose value therefore depends on the position and the remaining depth alone —
no position before an irreversible move can recur below it, and the fifty-move count restarts
there. Mate scores are stored relative to the node (distance to mate), so a node reached at
another ply gets its own distance-adjusted score.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from search.alphabeta import INF, MATE, MATE_BOUND, MAX_PLY, _is_repetition
from search.board import BOARD_WORDS, W_HALFMOVE, W_KEY, in_check, make_move
from search.features import evaluate_kernel
from search.movegen import MAX_MOVES, generate_moves
from search.quiescence import quiescence_moves

_KEY = types.UniTuple(types.int64, 2)


@njit
def _to_memo(v, ply):  # type: ignore[no-untyped-def]
    if v > MATE_BOUND:
        return v + ply
    if v < -MATE_BOUND:
        return v - ply
    return v


@njit
def _from_memo(v, ply):  # type: ignore[no-untyped-def]
    if v > MATE_BOUND:
        return v - ply
    if v < -MATE_BOUND:
        return v + ply
    return v


@njit
def _minimax(boards, moves, ply, depth, w, scratch, hist, nhist, memo):  # type: ignore[no-untyped-def]
    b = boards[ply]
    if ply > 0 and (np.int64(b[W_HALFMOVE]) >= 100 or _is_repetition(boards, ply, hist, nhist)):
        if np.int64(b[W_HALFMOVE]) >= 100 and in_check(b) and generate_moves(b, moves[ply], 0, False) == 0:
            return -(MATE - ply)
        return np.int64(0)
    if ply >= MAX_PLY:
        return evaluate_kernel(b, w, scratch)
    memo_key = (np.int64(b[W_KEY]), np.int64(max(depth, 0)))
    memoise = ply > 0 and b[W_HALFMOVE] == 0
    if memoise and memo_key in memo:
        return _from_memo(memo[memo_key], ply)
    checked = in_check(b)
    if depth > 0:
        n = generate_moves(b, moves[ply], 0, False)
    else:
        n = quiescence_moves(b, moves[ply], checked, np.zeros(40, dtype=np.int64))
    if depth <= 0 and not checked:
        best = evaluate_kernel(b, w, scratch)
    else:
        if n == 0:
            return -(MATE - ply) if checked else np.int64(0)
        best = -INF
    for i in range(n):
        make_move(b, boards[ply + 1], moves[ply, i])
        v = -_minimax(boards, moves, ply + 1, depth - 1, w, scratch, hist, nhist, memo)
        if v > best:
            best = v
    if memoise:
        memo[memo_key] = _to_memo(best, ply)
    return best


@njit
def _qsearch_ab(boards, moves, ply, alpha, beta, w, scratch):  # type: ignore[no-untyped-def]
    """Textbook fail-hard alpha-beta quiescence; moves in generation order."""
    b = boards[ply]
    if ply >= MAX_PLY:
        return evaluate_kernel(b, w, scratch)
    checked = in_check(b)
    n = quiescence_moves(b, moves[ply], checked, np.zeros(40, dtype=np.int64))
    if not checked:
        stand = evaluate_kernel(b, w, scratch)
        if stand >= beta:
            return beta
        if stand > alpha:
            alpha = stand
    elif n == 0:
        return max(alpha, min(beta, -(MATE - ply)))
    for i in range(n):
        make_move(b, boards[ply + 1], moves[ply, i])
        v = -_qsearch_ab(boards, moves, ply + 1, -beta, -alpha, w, scratch)
        if v >= beta:
            return beta
        if v > alpha:
            alpha = v
    return alpha


@njit
def _minimax_qab(boards, moves, ply, depth, w, scratch, hist, nhist):  # type: ignore[no-untyped-def]
    b = boards[ply]
    if ply > 0 and (np.int64(b[W_HALFMOVE]) >= 100 or _is_repetition(boards, ply, hist, nhist)):
        if np.int64(b[W_HALFMOVE]) >= 100 and in_check(b) and generate_moves(b, moves[ply], 0, False) == 0:
            return -(MATE - ply)
        return np.int64(0)
    if depth <= 0:
        return _qsearch_ab(boards, moves, ply, -INF, INF, w, scratch)
    n = generate_moves(b, moves[ply], 0, False)
    if n == 0:
        return -(MATE - ply) if in_check(b) else np.int64(0)
    best = -INF
    for i in range(n):
        make_move(b, boards[ply + 1], moves[ply, i])
        v = -_minimax_qab(boards, moves, ply + 1, depth - 1, w, scratch, hist, nhist)
        if v > best:
            best = v
    return best


def _stacks(board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    boards = np.zeros((MAX_PLY + 2, BOARD_WORDS), dtype=np.uint64)
    moves = np.zeros((MAX_PLY + 2, MAX_MOVES), dtype=np.int32)
    boards[0] = board
    return boards, moves


def minimax_qab(board: np.ndarray, depth: int, w: np.ndarray) -> int:
    """Plain minimax to ``depth`` with textbook alpha-beta quiescence (eval units, side to move's view)."""
    boards, moves = _stacks(board)
    return int(_minimax_qab(boards, moves, 0, depth, w, np.zeros(2, dtype=np.int64), np.zeros(1, dtype=np.uint64), 0))


def minimax(board: np.ndarray, depth: int, w: np.ndarray) -> int:
    """Minimax value of ``board`` in eval units, side to move's view."""
    boards, moves = _stacks(board)
    memo = Dict.empty(key_type=_KEY, value_type=types.int64)
    return int(_minimax(boards, moves, 0, depth, w, np.zeros(2, dtype=np.int64),
                        np.zeros(1, dtype=np.uint64), 0, memo))
