"""The probability-limited search with the static prior (issue 43's mixed search), written on
python-chess and the minimax oracle only (tests only; nothing imported from ``search/``).

Its definition, from ``search/pls_kernels.py``'s docstring:

* **Budget**: a node's budget is in units of ``LOG_SCALE`` per natural-log unit of probability;
  a node with budget > 0 tries every legal move, a child's budget being the parent's plus the
  move's log-probability (rounded to a unit, never above 0); a node with budget <= 0 is a
  quiescence node (its children: budget - 1).
* **Who splits the probability**: at a full-width node whose budget is at least
  ``model_from`` (budget units), the move model (``model_lps``, given by the caller); below it,
  the static prior: a quiet move weighs 1, a capture or a promotion
  ``1 + 2 * (captured piece's value + promoted piece's value)`` with the values 1, 3, 3, 5, 9
  pawns (an en passant capture takes a pawn), and a move's probability is its weight over the
  node's total; or, when the caller gives ``leaf_lps`` (the pre-move model's log-probabilities,
  :func:`softmax_units` of its scores), those.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import chess

from tests.oracles.minimax import Oracle

#: budget units per natural-log unit (``search.pls_kernels.LOG_SCALE``)
LOG_SCALE = 1 << 20
#: the prior's pawn values of the captured or promoted piece
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
#: a capture's or promotion's weight per pawn of value, over the quiet move's 1
TACTICAL = 2.0


def prior_weight(board: chess.Board, move: chess.Move) -> float:
    """The static prior's weight of ``move`` on ``board``."""
    w = 1.0
    if board.is_en_passant(move):
        w += TACTICAL * VALUES[chess.PAWN]
    else:
        victim = board.piece_type_at(move.to_square)
        if victim is not None:
            w += TACTICAL * VALUES[victim]
    if move.promotion is not None:
        w += TACTICAL * VALUES[move.promotion]
    return w


def prior_log_probs(board: chess.Board) -> dict[str, int]:
    """The static prior's log-probabilities (budget units, <= 0) of ``board``'s legal moves, by UCI."""
    weights = {m.uci(): prior_weight(board, m) for m in board.legal_moves}
    log_total = math.log(sum(weights.values()))
    return {u: min(0, round((math.log(w) - log_total) * LOG_SCALE)) for u, w in weights.items()}


def softmax_units(scores: dict[str, float]) -> dict[str, int]:
    """Log-probabilities (budget units, <= 0) of the softmax of moves' scores (log-odds), by UCI."""
    top = max(scores.values())
    lse = top + math.log(sum(math.exp(s - top) for s in scores.values()))
    return {u: min(0, round((s - lse) * LOG_SCALE)) for u, s in scores.items()}


# many parameters: the search's inputs, then alpha-beta's recursion state
def mixed_value(oracle: Oracle, board: chess.Board, budget: int, model_from: int,
                model_lps: Callable[[chess.Board], dict[str, int]], ply: int = 0,
                alpha: int = -(1 << 40), beta: int = 1 << 40,
                leaf_lps: Callable[[chess.Board], dict[str, int]] | None = None) -> int:
    """The exact value (full-window alpha-beta of the minimax oracle, whose value does not depend
    on the move order) of ``board`` searched with ``budget`` (module docstring); ``leaf_lps``,
    when given, splits the probability below ``model_from`` instead of the static prior."""
    settled, best, moves = oracle._node(board, budget, ply)
    if settled or best >= beta:
        return best
    alpha = max(alpha, best)
    lps: dict[str, int] = {}
    if budget > 0:
        below = prior_log_probs if leaf_lps is None else leaf_lps
        lps = model_lps(board) if budget >= model_from else below(board)
    for move in moves:
        child = budget + lps[move.uci()] if budget > 0 else budget - 1
        board.push(move)
        v = -mixed_value(oracle, board, child, model_from, model_lps, ply + 1, -beta, -alpha, leaf_lps)
        board.pop()
        best = max(best, v)
        alpha = max(alpha, v)
        if alpha >= beta:
            break
    return best
