"""A plain-numpy reference of the network evaluator (docs/network.md), written from the
specification and sharing nothing with ``search/`` but the parameter arrays: its inputs come
from python-chess boards, its arithmetic is numpy's on int64 (quantized) or float64 (float).

It is the oracle of ``search.evaluation.network_kernels`` (accumulators, incremental updates, the integer
forward pass) and of the float network that training differentiates."""

from __future__ import annotations

import chess
import numpy as np

QA, QB, QO = 255, 64, 64
PHASE_MAX = 24
#: python-chess piece type (1..6) -> the spec's type index (pawn 0 .. king 5)
TYPE_INDEX = {chess.PAWN: 0, chess.KNIGHT: 1, chess.BISHOP: 2, chess.ROOK: 3, chess.QUEEN: 4, chess.KING: 5}


def inputs(board: chess.Board, persp: chess.Color, bucket_table: np.ndarray) -> list[int]:
    """Active input indices of ``board`` seen from ``persp`` (chess.WHITE or chess.BLACK)."""
    king = board.king(persp)
    assert king is not None
    own_king = king if persp == chess.WHITE else chess.square_mirror(king)
    bucket = int(bucket_table[own_king])
    out = []
    for sq, piece in board.piece_map().items():
        rel = 0 if piece.color == persp else 1
        s = sq if persp == chess.WHITE else chess.square_mirror(sq)
        out.append(((bucket * 2 + rel) * 6 + TYPE_INDEX[piece.piece_type]) * 64 + s)
    return sorted(out)


def accumulators(board: chess.Board, params: dict[str, np.ndarray], bucket_table: np.ndarray) -> np.ndarray:
    """int64[2, H]: row 0 White's perspective, row 1 Black's (integer parameters)."""
    w1, b1 = params["w1"].astype(np.int64), params["b1"].astype(np.int64)
    return np.stack([b1 + w1[inputs(board, persp, bucket_table)].sum(axis=0)
                     for persp in (chess.WHITE, chess.BLACK)])


def output_row(board: chess.Board, params: dict[str, np.ndarray]) -> int:
    """The output bucket (the row of W4 and b4) of ``board``: the spec's ranges of the number of
    pieces, kings included: (pieces - 2) * O // 32 for O output buckets."""
    n_outputs = len(params["b4"])
    return min(max((len(board.piece_map()) - 2) * n_outputs // 32, 0), n_outputs - 1)


def quantized_score(board: chess.Board, params: dict[str, np.ndarray], bucket_table: np.ndarray) -> int:
    """The network part in eval units (side to move's view), integer arithmetic of the spec."""
    acc = accumulators(board, params, bucket_table)
    o = output_row(board, params)
    stm = 0 if board.turn == chess.WHITE else 1
    x = np.concatenate([np.clip(acc[stm], 0, QA), np.clip(acc[1 - stm], 0, QA)])
    if params["b2"].size == 0:  # the direct form: squared clipped ReLU, no hidden layers
        out = int(params["b4"][o]) * QA + int((x * x) @ params["w4"][o].astype(np.int64))
        return (out * PHASE_MAX) // (QA * QA * QO)
    z2 = params["b2"].astype(np.int64) + x @ params["w2"].astype(np.int64)
    h2 = np.minimum(np.maximum(z2, 0) // QB, QA)
    z3 = params["b3"].astype(np.int64) + h2 @ params["w3"].astype(np.int64)
    h3 = np.minimum(np.maximum(z3, 0) // QB, QA)
    out = int(params["b4"][o]) + int(h3 @ params["w4"][o].astype(np.int64))
    return (out * PHASE_MAX) // (QA * QO)


def float_score(board: chess.Board, params: dict[str, np.ndarray], bucket_table: np.ndarray) -> float:
    """The network part in centipawns (side to move's view), float64 arithmetic of the spec."""
    persps = (chess.WHITE, chess.BLACK)
    acc = np.stack([params["b1"] + params["w1"][inputs(board, p, bucket_table)].sum(axis=0) for p in persps])
    stm = 0 if board.turn == chess.WHITE else 1
    x = np.concatenate([np.clip(acc[stm], 0, 1), np.clip(acc[1 - stm], 0, 1)])
    o = output_row(board, params)
    if params["b2"].size == 0:  # the direct form
        return float(params["b4"][o] + (x * x) @ params["w4"][o])
    h2 = np.clip(params["b2"] + x @ params["w2"], 0, 1)
    h3 = np.clip(params["b3"] + h2 @ params["w3"], 0, 1)
    return float(params["b4"][o] + h3 @ params["w4"][o])
