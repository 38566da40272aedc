"""search.core.quiet against python-chess: check and capture/promotion flags on the shipped games."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from search.core.convert import from_chess, uci_key
from search.core.quiet import tactical_flags


def test_flags_equal_python_chess_on_every_position_of_the_shipped_games(real_games: list[list[chess.Move]]) -> None:
    boards, keys, check, tactical = [], [], [], []
    for game in real_games:
        board = chess.Board()
        for move in game:
            boards.append(from_chess(board))
            keys.append(uci_key(move.uci()))
            check.append(board.is_check())
            tactical.append(board.is_capture(move) or move.promotion is not None)
            board.push(move)
    got_check, got_tactical = tactical_flags(np.stack(boards), np.array(keys, dtype=np.int32))
    assert sum(check) > 100 and sum(tactical) > 500  # the games have both kinds
    assert got_check.tolist() == check
    assert got_tactical.tolist() == tactical


def test_en_passant_and_promotion_are_tactical_and_a_missing_move_is_not() -> None:
    ep = chess.Board("rnbqkbnr/ppp2ppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3")
    promo = chess.Board("8/1P2k3/8/8/8/8/8/4K3 w - - 0 1")
    quiet = chess.Board()
    boards = np.stack([from_chess(b) for b in (ep, promo, quiet, quiet)])
    keys = np.array([uci_key("e5d6"), uci_key("b7b8n"), uci_key("g1f3"), -1], dtype=np.int32)
    check, tactical = tactical_flags(boards, keys)
    assert tactical.tolist() == [True, True, False, False]
    assert not check.any()


def test_one_key_per_board_is_required() -> None:
    with pytest.raises(ValueError, match="one move key per board"):
        tactical_flags(np.stack([from_chess(chess.Board())]), np.zeros(2, dtype=np.int32))
