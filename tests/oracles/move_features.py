"""A slow, plain-Python extractor of the move model's features: the oracle for
``search/pls/move_model_kernels.py``.

Written from ``docs/move-model.md`` on python-chess: loops over squares and python-chess's own
``attackers``/``attacks``, no bitboard arithmetic, sharing no code with the kernels. The static
exchange value is the swap list of :func:`tests.oracles.minimax.see` (another oracle). Only the
catalogue (group names, category names, their order) is imported: the catalogue is data, and
features are looked up by name.

The static evaluation that the ``eval_change``, ``exchange`` and ``exchange_gap`` groups
measure is computed with the plain-Python feature extractor of
:mod:`tests.oracles.reference_features` and the built-in ``gm`` weights.

Usage::

    features = reference_move_features(chess.Board(fen))   # {uci: sorted feature indices}
"""

from __future__ import annotations

import functools

import chess
import numpy as np

from search.params.catalog import PHASE_MAX
from search.pls.move_catalog import (CAPTURE_EDGES, CHANGE_EDGES, EVALUATION, EXCHANGE_EDGES, GAP_EDGES, GROUPS,
                                 MOVE_FEATURE_INDEX)
from search.params.weights import load_weights
from tests.oracles.minimax import see
from tests.oracles.reference_features import remembered_features

NAMES = {chess.PAWN: "pawn", chess.KNIGHT: "knight", chess.BISHOP: "bishop", chess.ROOK: "rook",
         chess.QUEEN: "queen", chess.KING: "king"}
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900,
          chess.KING: 20000}
PHASE = {chess.PAWN: 0, chess.KNIGHT: 1, chess.BISHOP: 1, chess.ROOK: 2, chess.QUEEN: 4, chess.KING: 0}


def mover_square(square: chess.Square, color: chess.Color) -> str:
    """The square's name seen from ``color``'s side (rank mirrored for Black)."""
    return chess.square_name(square if color == chess.WHITE else chess.square_mirror(square))


def see_bucket(value: int) -> str:
    if value <= -500:
        return "le-500"
    if value <= -250:
        return "-499..-250"
    if value < 0:
        return "-249..-1"
    if value == 0:
        return "0"
    if value < 250:
        return "1..249"
    if value < 500:
        return "250..499"
    return "ge500"


@functools.cache
def _weights() -> np.ndarray:
    return load_weights(EVALUATION).values.astype(np.int64)


def evaluation_units(board: chess.Board) -> int:
    """The ``gm`` static evaluation in eval units (centipawns x PHASE_MAX), side to move's view."""
    idx, val = remembered_features(board)
    w = _weights()
    return int(sum(int(w[i]) * int(v) for i, v in zip(idx, val)))


def bucket(group: str, value: float, edges: tuple[int, ...]) -> str:
    """The feature of ``group`` whose bucket holds ``value`` (eval units): the k-th when exactly k
    edges (centipawns) lie below it."""
    k = sum(1 for e in edges if e * PHASE_MAX < value)
    return f"{group}.{dict(GROUPS)[group][k]}"


def best_capture(board: chess.Board) -> int:
    """The best SEE (centipawns, at least 0) of the side to move's captures (promoting only to a
    queen) and queen promotions."""
    best = 0
    for m in board.legal_moves:
        if m.promotion == chess.QUEEN or (m.promotion is None and board.is_capture(m)):
            best = max(best, see(board, m))
    return best


def cheapest(board: chess.Board, squares: chess.SquareSet) -> int:
    """The lowest piece type among the pieces on ``squares``."""
    return min(board.piece_type_at(s) or 99 for s in squares)


def move_feature_names(board: chess.Board, move: chess.Move, parent_eval: int) -> tuple[list[str], int]:
    """The names of the active features of ``move`` (legal in ``board``), per docs/move-model.md,
    all but ``exchange_gap``, and the move's exchange value (eval units); ``parent_eval``:
    :func:`evaluation_units` of ``board``."""
    us = board.turn
    them = not us
    piece = board.piece_type_at(move.from_square)
    assert piece is not None
    name = NAMES[piece]
    out = [f"piece_to.{name}.{mover_square(move.to_square, us)}",
           f"piece_from.{name}.{mover_square(move.from_square, us)}"]
    if board.is_en_passant(move):
        victim: int | None = chess.PAWN
    else:
        victim = board.piece_type_at(move.to_square)
    if victim is not None:
        out.append(f"capture.{name}.{NAMES[victim]}")
    if move.promotion:
        out.append(f"promotion.{NAMES[move.promotion]}")
    kind = "capture" if victim is not None else "quiet"
    out.append(f"see.{kind}.{see_bucket(see(board, move))}")

    # the destination, with the mover (and a pawn taken en passant) lifted off the board
    lifted = board.copy(stack=False)
    lifted.remove_piece_at(move.from_square)
    if board.is_en_passant(move):
        lifted.remove_piece_at(chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square)))
    attackers = lifted.attackers(them, move.to_square)
    if attackers:
        out.append(f"to_attacked.{name}.by_{NAMES[cheapest(lifted, attackers)]}")
    defenders = len(lifted.attackers(us, move.to_square))
    if defenders:
        out.append(f"to_defended.{name}.{'1' if defenders == 1 else '2+'}")

    # the origin, on the board as it is
    attackers = board.attackers(them, move.from_square)
    if attackers:
        least = cheapest(board, attackers)
        out.append(f"from_attacked.{name}.by_{NAMES[least]}")
        if not board.attackers(us, move.from_square) or VALUES[least] < VALUES[piece]:
            out.append(f"from_hanging.{name}")
    if board.is_castling(move):
        out.append("castle.king_side" if board.is_kingside_castling(move) else "castle.queen_side")
    phase = min(24, sum(PHASE[p.piece_type] for p in board.piece_map().values()))
    if phase <= 8:
        out.append(f"endgame_to.{name}.{mover_square(move.to_square, us)}")

    after = board.copy(stack=False)
    after.push(move)
    landed = move.promotion or piece
    if after.is_check():
        checkers = after.checkers()
        out.append(f"check.{NAMES[landed]}" if move.to_square in checkers else "check.other")
    threats = 0
    for target in after.attacks(move.to_square):
        p = after.piece_at(target)
        if p is None or p.color != them or p.piece_type not in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
            continue
        if VALUES[p.piece_type] > VALUES[landed] or not after.attackers(them, target):
            threats += 1
    if threats:
        out.append(f"threats.{NAMES[landed]}.{'1' if threats == 1 else '2+'}")
    if piece == chess.PAWN and not move.promotion:
        file = chess.square_file(move.to_square)
        rank = chess.square_rank(move.to_square)
        blocked = False
        for sq in chess.SQUARES:
            p = after.piece_at(sq)
            if p is None or p.piece_type != chess.PAWN or p.color != them:
                continue
            ahead = chess.square_rank(sq) > rank if us == chess.WHITE else chess.square_rank(sq) < rank
            if abs(chess.square_file(sq) - file) <= 1 and ahead:
                blocked = True
        if not blocked:
            relative = rank if us == chess.WHITE else 7 - rank
            out.append(f"passed.rank{relative + 1}")
    change = -evaluation_units(after) - parent_eval
    out.append(bucket("eval_change", change, CHANGE_EDGES))
    reply = best_capture(after) * PHASE_MAX
    out.append(bucket("reply_capture", reply, CAPTURE_EDGES))
    if not after.is_check():
        passed_turn = after.copy(stack=False)
        passed_turn.push(chess.Move.null())
        out.append(bucket("own_threat", best_capture(passed_turn) * PHASE_MAX, CAPTURE_EDGES))
    out.append(bucket("exchange", change - reply, EXCHANGE_EDGES))
    return out, change - reply


def reference_move_features(board: chess.Board) -> dict[str, list[int]]:
    """Every legal move's UCI text -> the sorted indices of its active features."""
    parent = evaluation_units(board)
    found = {move.uci(): move_feature_names(board, move, parent) for move in board.legal_moves}
    best = max((value for _, value in found.values()), default=0)
    return {uci: sorted([MOVE_FEATURE_INDEX[n] for n in names]
                        + [MOVE_FEATURE_INDEX[bucket("exchange_gap", best - value, GAP_EDGES)]])
            for uci, (names, value) in found.items()}
