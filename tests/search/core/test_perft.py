"""Perft against the published counts (Chess Programming Wiki, "Perft Results")."""

from __future__ import annotations

import chess
import pytest

from search.core.convert import from_fen
from search.core.perft import PERFT_SUITE
from search.core.perft import divide, perft

#: The six positions of the Chess Programming Wiki page "Perft Results" with the leaf counts
#: published there for depths 1..4, copied from the page (not from search/core/perft.py).
PERFT_POSITIONS: dict[str, tuple[str, list[int]]] = {
    "start": ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", [20, 400, 8902, 197281]),
    "kiwipete": ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                 [48, 2039, 97862, 4085603]),
    "position3": ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", [14, 191, 2812, 43238]),
    "position4": ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", [6, 264, 9467, 422333]),
    "position5": ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", [44, 1486, 62379, 2103487]),
    "position6": ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
                  [46, 2079, 89890, 3894594]),
}


@pytest.mark.parametrize("name", PERFT_POSITIONS)
def test_perft_matches_published_counts_to_depth_4(name: str) -> None:
    fen, counts = PERFT_POSITIONS[name]
    board = from_fen(fen)
    assert [perft(board, d) for d in range(0, 5)] == [1] + counts


def test_perft_of_position_3_matches_the_published_count_at_depth_5() -> None:
    # the smallest depth-5 count of the page (the others take seconds to minutes here)
    assert perft(from_fen(PERFT_POSITIONS["position3"][0]), 5) == 674624


@pytest.mark.parametrize("name", PERFT_POSITIONS)
def test_perft_without_bulk_counting_agrees(name: str) -> None:
    fen, counts = PERFT_POSITIONS[name]
    board = from_fen(fen)
    assert perft(board, 3, bulk=False) == counts[2]


def python_chess_divide(board: chess.Board, depth: int) -> dict[str, int]:
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
    assert divide(from_fen(fen), 3) == python_chess_divide(chess.Board(fen), 3)


def test_the_cli_suite_holds_the_published_positions_and_counts() -> None:
    # search/core/perft.py keeps its own copy for `tuner perft <name>` and the benchmark
    assert {name: (fen, counts[:4]) for name, (fen, counts) in PERFT_SUITE.items()} == PERFT_POSITIONS


def test_divide_sums_to_perft() -> None:
    fen = PERFT_POSITIONS["kiwipete"][0]
    board = from_fen(fen)
    counts = divide(board, 3)
    assert len(counts) == 48
    assert sum(counts.values()) == 97862
    assert counts == python_chess_divide(chess.Board(fen), 3)


def test_perft_rejects_negative_depth() -> None:
    with pytest.raises(ValueError, match="depth"):
        perft(from_fen(chess.STARTING_FEN), -1)
