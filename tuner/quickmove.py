"""A move within milliseconds and without numba: what ``tuner uci`` plays while its kernels compile.

On an empty numba cache the engine's search needs tens of seconds of compiling before its first
move, longer than a GUI waits (python-chess: 10 s more than the move's time). Meanwhile the
engine answers a timed ``go`` with :func:`quick_move`: a plain-Python alpha-beta over
python-chess, iterative deepening from depth 1 until its deadline, with a capture and check-evasion
quiescence search (so that it takes a hanging piece, does not leave one, and sees a mate in one),
over material and piece-square tables (the Simplified Evaluation Function's, Michniewski 2000,
which the built-in ``classic`` weights also start from). Scores in centipawns, side to move's view.
It reaches depth 4 to 5 of the opening in a second (4 while numba compiles in another thread):
a legal, sensible move, not a strong one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import chess

Score = int
"""Centipawns, side to move's view; mates are ``±(MATE - plies)``."""

#: the score of a mate at the root (a mate in ``n`` plies scores ``MATE - n``)
MATE: Score = 100_000
#: scores beyond this (in absolute value) are mates
MATE_BOUND: Score = MATE - 1_000
#: centipawns of each piece type (``chess.PAWN`` .. ``chess.KING``; index 0 unused)
PIECE_VALUES = (0, 100, 320, 330, 500, 900, 0)
#: most plies of quiescence below the full-width search
MAX_QUIESCENCE = 8
#: nodes between two looks at the clock and at ``stop``
_CHECK_EVERY = 64

# Piece-square tables from White's side, rank 8 first (index ``square ^ 56`` for a White piece,
# ``square`` for a Black one).
_PAWN = (0, 0, 0, 0, 0, 0, 0, 0,
         50, 50, 50, 50, 50, 50, 50, 50,
         10, 10, 20, 30, 30, 20, 10, 10,
         5, 5, 10, 25, 25, 10, 5, 5,
         0, 0, 0, 20, 20, 0, 0, 0,
         5, -5, -10, 0, 0, -10, -5, 5,
         5, 10, 10, -20, -20, 10, 10, 5,
         0, 0, 0, 0, 0, 0, 0, 0)
_KNIGHT = (-50, -40, -30, -30, -30, -30, -40, -50,
           -40, -20, 0, 0, 0, 0, -20, -40,
           -30, 0, 10, 15, 15, 10, 0, -30,
           -30, 5, 15, 20, 20, 15, 5, -30,
           -30, 0, 15, 20, 20, 15, 0, -30,
           -30, 5, 10, 15, 15, 10, 5, -30,
           -40, -20, 0, 5, 5, 0, -20, -40,
           -50, -40, -30, -30, -30, -30, -40, -50)
_BISHOP = (-20, -10, -10, -10, -10, -10, -10, -20,
           -10, 0, 0, 0, 0, 0, 0, -10,
           -10, 0, 5, 10, 10, 5, 0, -10,
           -10, 5, 5, 10, 10, 5, 5, -10,
           -10, 0, 10, 10, 10, 10, 0, -10,
           -10, 10, 10, 10, 10, 10, 10, -10,
           -10, 5, 0, 0, 0, 0, 5, -10,
           -20, -10, -10, -10, -10, -10, -10, -20)
_ROOK = (0, 0, 0, 0, 0, 0, 0, 0,
         5, 10, 10, 10, 10, 10, 10, 5,
         -5, 0, 0, 0, 0, 0, 0, -5,
         -5, 0, 0, 0, 0, 0, 0, -5,
         -5, 0, 0, 0, 0, 0, 0, -5,
         -5, 0, 0, 0, 0, 0, 0, -5,
         -5, 0, 0, 0, 0, 0, 0, -5,
         0, 0, 0, 5, 5, 0, 0, 0)
_QUEEN = (-20, -10, -10, -5, -5, -10, -10, -20,
          -10, 0, 0, 0, 0, 0, 0, -10,
          -10, 0, 5, 5, 5, 5, 0, -10,
          -5, 0, 5, 5, 5, 5, 0, -5,
          0, 0, 5, 5, 5, 5, 0, -5,
          -10, 5, 5, 5, 5, 5, 0, -10,
          -10, 0, 5, 0, 0, 0, 0, -10,
          -20, -10, -10, -5, -5, -10, -10, -20)
_KING = (-30, -40, -40, -50, -50, -40, -40, -30,
         -30, -40, -40, -50, -50, -40, -40, -30,
         -30, -40, -40, -50, -50, -40, -40, -30,
         -30, -40, -40, -50, -50, -40, -40, -30,
         -20, -30, -30, -40, -40, -30, -30, -20,
         -10, -20, -20, -20, -20, -20, -20, -10,
         20, 20, 0, 0, 0, 0, 20, 20,
         20, 30, 10, 0, 0, 10, 30, 20)
#: ``_SQUARE_VALUE[colour][piece type][square]``: the piece's value plus its table entry
_SQUARE_VALUE: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    ((),) + tuple(
        tuple(PIECE_VALUES[pt] + table[sq ^ 56 if colour == chess.WHITE else sq] for sq in range(64))
        for pt, table in zip(range(1, 7), (_PAWN, _KNIGHT, _BISHOP, _ROOK, _QUEEN, _KING))
    )
    for colour in (chess.BLACK, chess.WHITE)
)


def evaluate(board: chess.Board) -> Score:
    """Material plus piece-square tables, centipawns, side to move's view."""
    total = 0
    for colour, sign in ((chess.WHITE, 1), (chess.BLACK, -1)):
        values = _SQUARE_VALUE[colour]
        mine = board.occupied_co[colour]
        for pt in range(1, 7):
            table = values[pt]
            for sq in chess.scan_forward(board.pieces_mask(pt, colour) & mine):
                total += sign * table[sq]
    return total if board.turn == chess.WHITE else -total


@dataclass(frozen=True)
class QuickResult:
    """What :func:`quick_move` found: the move, its score (centipawns, side to move's view,
    mates beyond :data:`MATE_BOUND`), the deepest completed depth (0: none completed, the move
    is the first in capture order), the nodes searched and the principal variation."""

    move: chess.Move
    score: Score
    depth: int
    nodes: int
    pv: tuple[chess.Move, ...]
    #: a depth cut short by the clock whose first move was searched in full: the best of the
    #: moves searched in full at ``depth``, its score a lower bound
    partial: bool = False


class _OutOfTime(Exception):
    """The deadline passed or ``stop`` was set: unwind the search."""


def _ordered(board: chess.Board, moves: list[chess.Move], first: chess.Move | None = None) -> list[chess.Move]:
    """``moves`` best-first: ``first``, then captures and promotions by most valuable victim,
    least valuable attacker, then the rest as generated."""
    def key(m: chess.Move) -> int:
        if m == first:
            return -100_000
        score = 0
        victim = board.piece_type_at(m.to_square)
        if victim is not None:
            attacker = board.piece_type_at(m.from_square) or chess.PAWN
            score -= 10 * PIECE_VALUES[victim] - PIECE_VALUES[attacker] + 10_000
        elif board.is_en_passant(m):
            score -= 10_000 + 900
        if m.promotion:
            score -= PIECE_VALUES[m.promotion] + 5_000
        return score
    return sorted(moves, key=key)


class _Search:
    """One :func:`quick_move` call's state: the clock, the node count and the ``stop`` flag."""

    def __init__(self, board: chess.Board, deadline: float, stop: threading.Event | None) -> None:
        self.board = board
        self.deadline = deadline
        self.stop = stop
        self.nodes = 0

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes % _CHECK_EVERY == 0 and (time.perf_counter() >= self.deadline
                                               or (self.stop is not None and self.stop.is_set())):
            raise _OutOfTime

    def quiesce(self, alpha: Score, beta: Score, ply: int, qply: int) -> Score:
        """Captures (and queen promotions) until quiet; every evasion when in check."""
        self._tick()
        board = self.board
        in_check = board.is_check()
        if in_check:
            moves = list(board.legal_moves)
            if not moves:
                return -MATE + ply
            if qply >= MAX_QUIESCENCE:
                return evaluate(board)
        else:
            stand = evaluate(board)
            if stand >= beta or qply >= MAX_QUIESCENCE:
                return stand
            alpha = max(alpha, stand)
            moves = list(board.generate_legal_captures())
            seventh = chess.BB_RANK_7 if board.turn == chess.WHITE else chess.BB_RANK_2
            moves += [m for m in board.generate_legal_moves(board.pawns & seventh, ~board.occupied)
                      if m.promotion == chess.QUEEN]
        for m in _ordered(board, moves):
            board.push(m)
            score = -self.quiesce(-beta, -alpha, ply + 1, qply + 1)
            board.pop()
            if score >= beta:
                return score
            alpha = max(alpha, score)
        return alpha

    def alphabeta(self, depth: int, alpha: Score, beta: Score, ply: int) -> tuple[Score, tuple[chess.Move, ...]]:
        """Negamax alpha-beta (fail-hard within the window), with its principal variation; a
        position above the leaves that repeats one of the game or of the line is a draw."""
        if depth <= 0:
            return self.quiesce(alpha, beta, ply, 0), ()
        if self.board.is_repetition(2):  # (not at the leaves: it walks back the game's moves)
            return 0, ()
        self._tick()
        board = self.board
        moves = list(board.legal_moves)
        if not moves:
            return (-MATE + ply if board.is_check() else 0), ()
        if board.halfmove_clock >= 100 or board.is_insufficient_material():
            return 0, ()
        best_pv: tuple[chess.Move, ...] = ()
        for m in _ordered(board, moves):
            board.push(m)
            score, pv = self.alphabeta(depth - 1, -beta, -alpha, ply + 1)
            board.pop()
            score = -score
            if score >= beta:
                return beta, (m, *pv)
            if score > alpha or not best_pv:
                alpha = max(alpha, score)
                best_pv = (m, *pv)
        return alpha, best_pv


def quick_move(board: chess.Board, deadline: float, *, stop: threading.Event | None = None,
               max_depth: int = 64, on_depth: Callable[[QuickResult], None] | None = None,
               root_moves: Sequence[chess.Move] = ()) -> QuickResult | None:
    """The best move of ``board`` by iterative deepening until ``deadline`` (a
    ``time.perf_counter()`` reading), ``stop`` or ``max_depth``; ``None`` when ``board`` has no
    legal move. ``root_moves``: the legal moves to choose among (UCI's ``searchmoves``; empty:
    all).

    A depth cut short still gives its best move when it has searched the previous depth's best
    move (searched first) in full (a :attr:`QuickResult.partial` result, passed to ``on_depth``
    too, so that the move played is the last one reported); otherwise the previous depth's move
    stands. ``on_depth`` is called after each completed depth. ``board`` is left as it
    was (the search pushes and pops on a copy, which keeps ``board``'s moves, so that a move
    that repeats a position of the game scores a draw).
    """
    work = board.copy()  # with the moves played: repetitions count as draws
    root = [m for m in work.legal_moves if not root_moves or m in root_moves]
    if not root:
        return None
    search = _Search(work, deadline, stop)
    ordered = _ordered(work, root)
    best = QuickResult(ordered[0], 0, 0, 0, (ordered[0],))
    for depth in range(1, max_depth + 1):
        alpha, beta = -MATE - 1, MATE + 1
        done: tuple[chess.Move, ...] = ()
        try:
            for m in _ordered(work, root, best.pv[0] if best.depth else None):
                work.push(m)
                score, pv = search.alphabeta(depth - 1, -beta, -alpha, 1)
                work.pop()
                score = -score
                if score > alpha or not done:
                    alpha, done = score, (m, *pv)
        except _OutOfTime:
            if done and best.depth:  # reported like a completed depth, so that the move played is the last one shown
                cut = QuickResult(done[0], alpha, depth, search.nodes, done, partial=True)
                if on_depth is not None:
                    on_depth(cut)
                return cut
            return QuickResult(best.move, best.score, best.depth, search.nodes, best.pv)
        best = QuickResult(done[0], alpha, depth, search.nodes, done)
        if on_depth is not None:
            on_depth(best)
        if abs(alpha) > MATE_BOUND and MATE - abs(alpha) <= depth:  # a mate found within reach
            break
    return best


def uci_score(score: Score) -> str:
    """``cp N`` or ``mate N`` (moves, negative when the side to move is mated)."""
    if score > MATE_BOUND:
        return f"mate {(MATE - score + 1) // 2}"
    if score < -MATE_BOUND:
        return f"mate -{(MATE + score) // 2}"
    return f"cp {score}"


__all__ = ["MATE", "MATE_BOUND", "PIECE_VALUES", "QuickResult", "Score", "evaluate", "quick_move", "uci_score"]
