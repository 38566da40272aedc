"""``gives_check`` (a move's check found without playing it) against python-chess and against
``in_check`` after the move, for every legal move of the shipped games' positions and of
positions made for the special moves (castling, en passant, promotions, discovered checks)."""

from __future__ import annotations

import chess
import numpy as np

from search.core.board import BOARD_WORDS, gives_check, in_check, make_move
from search.core.convert import from_chess, legal_moves, move_to_chess

SPECIAL = [
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",  # castling either way
    "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
    "5k2/8/8/8/8/8/8/4K2R w K - 0 1",  # O-O: the rook checks from f1
    "3k4/8/8/8/8/8/8/R3K3 w Q - 0 1",  # O-O-O: the rook checks from d1
    "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",  # en passant
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1",  # en passant along a rank (illegal: pins the king)
    "8/8/8/1k6/3pP3/8/8/4K2B b - e3 0 1",
    "4k3/8/8/8/8/8/8/4K2B w - - 0 1",
    "8/2k5/8/3pP3/8/8/8/4K3 w - d6 0 1",  # en passant: the capturing pawn checks
    "8/8/8/k2pP2R/8/8/8/4K3 w - d6 0 1",  # en passant: both pawns leave the rook's line
    "4k3/8/8/8/3Pp3/8/2K5/8 b - d3 0 1",
    "8/2P1k3/8/8/8/8/8/4K3 w - - 0 1",  # promotions: a queen or knight checks
    "3r4/2P1k3/8/8/8/8/8/4K3 w - - 0 1",  # a capture that promotes
    "4k3/8/4N3/8/8/8/8/4R1K1 w - - 0 1",  # a knight uncovers the rook
    "7k/8/8/8/3N4/8/1B6/K7 w - - 0 1",  # a knight uncovers the bishop
    "4k3/8/8/8/1b6/8/3P4/4K3 w - - 0 1",
    "8/8/8/8/k2P3R/8/8/4K3 w - - 0 1",  # a pawn push uncovers the rook
]


#: moves that must check, one of each kind
MUST_CHECK = [
    ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1"), ("3k4/8/8/8/8/8/8/R3K3 w Q - 0 1", "e1c1"),
    ("8/2k5/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6"), ("8/8/8/k2pP2R/8/8/8/4K3 w - d6 0 1", "e5d6"),
    ("4k3/8/8/8/3Pp3/8/2K5/8 b - d3 0 1", "e4d3"), ("8/2P1k3/8/8/8/8/8/4K3 w - - 0 1", "c7c8n"),
    ("7k/8/8/8/3N4/8/1B6/K7 w - - 0 1", "d4b5"), ("8/8/8/8/k2P3R/8/8/4K3 w - - 0 1", "d4d5"),
]


def _check_all(board: chess.Board) -> int:
    b = from_chess(board)
    child = np.zeros(BOARD_WORDS, dtype=np.uint64)
    for m in legal_moves(b):
        want = board.gives_check(move_to_chess(m))
        assert gives_check(b, m) == want, (board.fen(), move_to_chess(m).uci())
        make_move(b, child, m)
        assert in_check(child) == want, (board.fen(), move_to_chess(m).uci())
    return int(board.legal_moves.count())


def test_gives_check_equals_python_chess_on_the_shipped_games(real_boards: list[chess.Board]) -> None:
    checks = moves = 0
    for board in real_boards[::3]:
        moves += _check_all(board)
        checks += sum(board.gives_check(m) for m in board.legal_moves)
    assert moves > 20_000 and checks > 500  # many moves, checks among them


def test_gives_check_on_castling_en_passant_promotions_and_discovered_checks() -> None:
    checks = 0
    for fen in SPECIAL:
        board = chess.Board(fen)
        _check_all(board)
        checks += sum(board.gives_check(m) for m in board.legal_moves)
    assert checks >= 14
    for fen, uci in MUST_CHECK:
        board = chess.Board(fen)
        assert board.gives_check(chess.Move.from_uci(uci))
        b = from_chess(board)
        assert [gives_check(b, m) for m in legal_moves(b) if move_to_chess(m).uci() == uci] == [True], (fen, uci)
