"""The core against python-chess on positions from real games: legal moves and Zobrist keys."""

from __future__ import annotations

import chess
import chess.polyglot
import numpy as np
import pytest

from search.core.board import W_KEY, compute_key
from search.core.convert import from_chess, legal_moves, move_from_chess, move_to_uci, push, to_chess, to_fen


def assert_legal_moves_equal(boards: list[chess.Board]) -> None:
    for board in boards:
        ours = [move_to_uci(int(m)) for m in legal_moves(from_chess(board))]
        theirs = {m.uci() for m in board.legal_moves}
        assert len(ours) == len(set(ours)), board.fen()
        assert set(ours) == theirs, board.fen()


def test_legal_move_sets_equal_python_chess(real_boards: list[chess.Board]) -> None:
    assert len(real_boards) == 3229
    assert_legal_moves_equal(real_boards)


@pytest.mark.gm
def test_legal_move_sets_equal_python_chess_on_gm_games(gm_boards: list[chess.Board]) -> None:
    assert len(gm_boards) == 12_000
    assert_legal_moves_equal(gm_boards)


def assert_zobrist_follows(games: list[list[chess.Move]]) -> int:
    checked = 0
    for moves in games:
        board = chess.Board()
        ours = from_chess(board)
        for move in moves:
            ours = push(ours, move_from_chess(ours, move))
            board.push(move)
            key = int(ours[W_KEY])
            assert key == chess.polyglot.zobrist_hash(board), board.fen()
            assert key == int(compute_key(ours)), board.fen()
            checked += 1
        assert to_fen(ours) == board.fen(en_passant="fen")
    return checked


def test_incremental_zobrist_equals_polyglot_after_every_move(real_games: list[list[chess.Move]]) -> None:
    assert assert_zobrist_follows(real_games) == 3229


@pytest.mark.gm
def test_incremental_zobrist_equals_polyglot_on_gm_games(gm_games: list[list[chess.Move]]) -> None:
    assert assert_zobrist_follows(gm_games) >= 12_000


def test_round_trip_through_python_chess(real_boards: list[chess.Board]) -> None:
    for board in real_boards[:2000]:
        ours = from_chess(board)
        back = to_chess(ours)
        assert back.fen(en_passant="fen") == board.fen(en_passant="fen")
        assert np.array_equal(from_chess(back), ours)
