"""An engine author's own term as a movetuner plug-in: a rook behind its own passed pawn.

Load it with ``tuner --terms docs/examples/rook_behind_passer.py COMMAND ...`` (docs/own-terms.md
explains each part). Its features are ``mg.passers.rook_behind`` and ``eg.passers.rook_behind``.

The term, for each side: the number of its rooks that stand on the file of one of its own
passed pawns, behind that pawn (towards its own back rank), with no piece between them. A pawn
is passed when no enemy pawn stands ahead of it on its file or a neighbouring file. The net
count is White's minus Black's.
"""

from __future__ import annotations

import chess
import numpy as np
from numba import njit

from search.core.board import PAWN, ROOK, W_OCC

#: the plug-in's name, recorded in every weights file made with it
NAME = "rook_behind_passer"
#: the group of its terms (``--train passers``); features are named <stage>.passers.<term>
GROUP = "passers"
#: (term, labels, defaults): one feature, starting at 20 centipawns in both stages
TERMS = (("rook_behind", (), (20,)),)
#: the range a tuner keeps its weights in, centipawns
BOUNDS = (-200, 200)


@njit(cache=False)
def _has(bb, sq):  # type: ignore[no-untyped-def]
    return (bb >> np.uint64(sq)) & np.uint64(1) != 0


@njit(cache=False)
def _passed(b, c, sq):  # type: ignore[no-untyped-def]
    """Whether colour ``c``'s pawn on ``sq`` is passed: no enemy pawn ahead on its or a
    neighbouring file."""
    enemy_pawns = b[PAWN] & b[W_OCC + 1 - c]
    f = sq & 7
    r = sq >> 3
    for ff in range(max(f - 1, 0), min(f + 1, 7) + 1):
        for rr in range(8):
            ahead = rr > r if c == 0 else rr < r
            if ahead and _has(enemy_pawns, rr * 8 + ff):
                return False
    return True


@njit(cache=False)
def count(b, counts):  # type: ignore[no-untyped-def]
    """Add White's minus Black's number of rooks behind an own passed pawn to ``counts[0]``.

    ``b`` is the search's board array (uint64[16]: piece bitboards by type, then each colour's
    occupancy); ``counts`` int64[1], one entry per feature of TERMS."""
    occ = b[W_OCC] | b[W_OCC + 1]
    for c in range(2):
        own = b[W_OCC + c]
        step = 8 if c == 0 else -8
        sign = 1 if c == 0 else -1
        for sq in range(64):
            if not _has(b[ROOK] & own, sq):
                continue
            s = sq + step
            while 0 <= s < 64:  # the first piece in front of the rook, on its file
                if _has(occ, s):
                    if _has(b[PAWN] & own, s) and _passed(b, c, s):
                        counts[0] += sign
                    break
                s += step


def reference(board: chess.Board) -> list[int]:
    """The same net count from a python-chess board: the oracle the tests compare with."""
    net = 0
    for color, sign in ((chess.WHITE, 1), (chess.BLACK, -1)):
        forward = 1 if color == chess.WHITE else -1
        for rook in board.pieces(chess.ROOK, color):
            rank = chess.square_rank(rook) + forward
            while 0 <= rank <= 7:
                sq = chess.square(chess.square_file(rook), rank)
                piece = board.piece_at(sq)
                if piece is not None:
                    if piece == chess.Piece(chess.PAWN, color) and _is_passed(board, sq, color):
                        net += sign
                    break
                rank += forward
    return [net]


def _is_passed(board: chess.Board, sq: chess.Square, color: chess.Color) -> bool:
    file, rank = chess.square_file(sq), chess.square_rank(sq)
    for enemy in board.pieces(chess.PAWN, not color):
        ahead = chess.square_rank(enemy) > rank if color == chess.WHITE else chess.square_rank(enemy) < rank
        if ahead and abs(chess.square_file(enemy) - file) <= 1:
            return False
    return True
