"""The shipped match openings (``datasets/openings/openings.epd``), checked cheaply.

Enough distinct positions for 400-game matches (200 pairs), each legal with level material and
named, and the original 110 first in their original order (seeded matches measured before the
file grew depend on them). The depth-4 balance and the move lists are checked by
``bench/verify_openings.py``, not here.
"""

from __future__ import annotations

import hashlib

import chess

from tuner.arena.match import DEFAULT_OPENINGS, load_openings

#: pawn units, for the level-material check
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
#: SHA-256 of the original file's position lines (commit 1d2924f), in order, each ended by "\n"
#: (``git show 1d2924f:datasets/openings/openings.epd | grep -v '^#' | sha256sum``)
ORIGINAL_SHA256 = "b6de07e402b44b0b6d7b23fd1b5af49624ad3bfc028ab83719d7c458e96acedd"
ORIGINAL_COUNT = 110


def position_lines() -> list[str]:
    """The file's position lines as written (comments and blank lines left out)."""
    lines = DEFAULT_OPENINGS.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def key(fen: str) -> str:
    """Placement, side to move, castling, en passant: the position without move counters."""
    return " ".join(fen.split()[:4])


def material(board: chess.Board, color: chess.Color) -> int:
    return sum(VALUES[p.piece_type] for p in board.piece_map().values() if p.color == color)


def test_enough_distinct_openings_for_400_games() -> None:
    openings = load_openings(DEFAULT_OPENINGS)
    assert len(openings) >= 260
    assert len({key(o.fen) for o in openings}) == len(openings)


def test_every_opening_is_legal_level_and_named() -> None:
    openings = load_openings(DEFAULT_OPENINGS)
    lines = position_lines()
    assert len(lines) == len(openings)
    for line, opening in zip(lines, openings):
        board = chess.Board(opening.fen)
        assert board.is_valid() and not board.is_game_over(), line
        assert material(board, chess.WHITE) == material(board, chess.BLACK), line
        ops = chess.Board().set_epd(line)
        assert isinstance(ops.get("id"), str) and ops["id"].strip(), line
        assert opening.name == ops["id"]
    assert len({o.name for o in openings}) == len(openings)


def test_original_openings_come_first_unchanged() -> None:
    lines = position_lines()
    first = "".join(line + "\n" for line in lines[:ORIGINAL_COUNT]).encode("utf-8")
    assert hashlib.sha256(first).hexdigest() == ORIGINAL_SHA256
    openings = load_openings(DEFAULT_OPENINGS)
    assert openings[0].name == "Ruy Lopez, Morphy Defence"
    assert key(openings[0].fen) == "r1bqkb1r/1ppp1ppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQK2R w KQkq -"
    assert openings[ORIGINAL_COUNT - 1].name == "Nimzowitsch Defence"
    assert openings[ORIGINAL_COUNT].name != "Nimzowitsch Defence"
