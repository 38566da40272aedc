"""FEN parsing and writing: round trips on reachable positions and one-line errors."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search.core.convert import InvalidFenError, from_chess, from_fen, to_fen


def _random_reachable(seed: int, plies: int) -> chess.Board:
    rng = random.Random(seed)
    board = chess.Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    return board


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 160))
def test_fen_round_trips_on_random_reachable_positions(seed: int, plies: int) -> None:
    board = _random_reachable(seed, plies)
    fen = board.fen(en_passant="fen")
    ours = from_fen(fen)
    assert to_fen(ours) == fen
    assert np.array_equal(ours, from_chess(board))


@pytest.mark.parametrize(
    ("fen", "message"),
    [
        ("", "expected 4 to 6 fields"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "7 ranks"),
        ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "bad empty-square count"),
        ("rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "more than 8 squares"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", "unknown piece 'X'"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkz - 0 1", "castling field"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq z9 0 1", "en-passant square 'z9'"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "halfmove clock"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0", "fullmove number"),
        ("8/8/8/8/8/8/8/K7 w - - 0 1", "black has no king"),
        ("k7/8/8/8/8/8/8/KK6 w - - 0 1", "more than one king"),
        ("kP6/8/8/8/8/8/8/K7 w - - 0 1", "first or last rank"),
        ("k6R/8/8/8/8/8/8/K7 w - - 0 1", "side not to move is in check"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", "castling rights"),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", "en-passant square without"),
    ],
)
def test_bad_fen_raises_one_line_error(fen: str, message: str) -> None:
    with pytest.raises(InvalidFenError, match=message) as info:
        from_fen(fen)
    assert "\n" not in str(info.value)


def test_fen_with_four_fields_gets_default_counters() -> None:
    assert to_fen(from_fen("8/8/8/8/8/8/8/K6k w - -")) == "8/8/8/8/8/8/8/K6k w - - 0 1"
