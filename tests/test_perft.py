"""Perft against the published counts (Chess Programming Wiki, "Perft Results")."""

from __future__ import annotations

import chess
import pytest

from search.convert import from_fen
from search.perft import PERFT_SUITE
from search.rules import divide, perft

PERFT_POSITIONS = PERFT_SUITE


@pytest.mark.parametrize("name", PERFT_POSITIONS)
def test_perft_matches_published_counts_to_depth_4(name: str) -> None:
    fen, counts = PERFT_POSITIONS[name]
    board = from_fen(fen)
    assert [perft(board, d) for d in range(0, 5)] == [1] + counts[:4]


@pytest.mark.parametrize("name", PERFT_POSITIONS)
def test_perft_without_bulk_counting_agrees(name: str) -> None:
    fen, counts = PERFT_POSITIONS[name]
    board = from_fen(fen)
    assert perft(board, 3, bulk=False) == counts[2]


def _python_chess_divide(board: chess.Board, depth: int) -> dict[str, int]:
    def count(b: chess.Board, d: int) -> int:
        if d == 0:
            return 1
        total = 0
        for move in b.legal_moves:
            b.push(move)
            total += count(b, d - 1)
            b.pop()
        return total

    out = {}
    for move in board.legal_moves:
        board.push(move)
        out[move.uci()] = count(board, depth - 1)
        board.pop()
    return out


# positions that stress one rule each; every one is checked by divide against python-chess
EDGE_CASES = {
    # en passant would expose the king along the rank (the pinned-pawn case)
    "ep_horizontal_pin": "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1",
    # en passant captures the checking pawn
    "ep_removes_checker": "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",
    # en passant pawn pinned on a diagonal
    "ep_diagonal_pin": "B7/8/8/8/3Pp3/8/8/4K2k b - d3 0 1",
    # castling through an attacked square and out of check
    "castle_through_check": "r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1",
    "castle_in_check": "r3k2r/8/8/8/4r3/8/8/R3K2R w KQkq - 0 1",
    # double check: only king moves
    "double_check": "4r1k1/8/8/8/8/3n4/8/4K3 w - - 0 1",
    # promotions to all four pieces, with and without capture
    "promotions": "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1",
    # a pinned piece that may move along the pin
    "pinned_slider": "4k3/4r3/8/8/8/8/4R3/4K3 w - - 0 1",
}


@pytest.mark.parametrize("name", EDGE_CASES)
def test_divide_matches_python_chess_on_edge_cases(name: str) -> None:
    fen = EDGE_CASES[name]
    assert divide(from_fen(fen), 3) == _python_chess_divide(chess.Board(fen), 3)


def test_divide_sums_to_perft() -> None:
    fen = PERFT_POSITIONS["kiwipete"][0]
    board = from_fen(fen)
    counts = divide(board, 3)
    assert len(counts) == 48
    assert sum(counts.values()) == 97862
    assert counts == _python_chess_divide(chess.Board(fen), 3)


def test_perft_rejects_negative_depth() -> None:
    with pytest.raises(ValueError, match="depth"):
        perft(from_fen(chess.STARTING_FEN), -1)
