"""Shared test data: positions from real games (when ../shared/datasets/gm is present) or
from seeded random playouts, so that every oracle test runs on a clean clone too."""

from __future__ import annotations

import os
import random
from pathlib import Path

import chess
import chess.pgn
import pytest

REPO = Path(__file__).resolve().parents[1]
GM_DIR = Path(os.environ.get("MOVETUNER_GM_DIR", REPO.parent / "shared" / "datasets" / "gm"))


def gm_files() -> list[Path]:
    return sorted(GM_DIR.glob("*.pgn")) if GM_DIR.is_dir() else []


def load_games(max_plies: int, seed: int = 0) -> list[list[chess.Move]]:
    """Move lists of games whose plies add up to at least ``max_plies``: real games taken
    evenly from the GM files when present, else random playouts (seeded)."""
    games: list[list[chess.Move]] = []
    total = 0
    files = gm_files()
    if files:
        for path in files:
            with path.open(encoding="utf-8", errors="replace") as fh:
                while total < max_plies * (files.index(path) + 1) // len(files):
                    game = chess.pgn.read_game(fh)
                    if game is None:
                        break
                    if game.errors or game.board().fen() != chess.STARTING_FEN:
                        continue
                    moves = list(game.mainline_moves())
                    games.append(moves)
                    total += len(moves)
        if total >= max_plies:
            return games
    rng = random.Random(seed)
    while total < max_plies:
        board = chess.Board()
        moves = []
        while not board.is_game_over() and len(moves) < 200:
            move = rng.choice(list(board.legal_moves))
            board.push(move)
            moves.append(move)
        games.append(moves)
        total += len(moves)
    return games


def boards_from_games(games: list[list[chess.Move]], limit: int) -> list[chess.Board]:
    """Every position of the games (before each move), copied without history, up to ``limit``."""
    out: list[chess.Board] = []
    for moves in games:
        board = chess.Board()
        for move in moves:
            out.append(board.copy(stack=False))
            board.push(move)
            if len(out) >= limit:
                return out
    return out


@pytest.fixture(scope="session")
def real_games() -> list[list[chess.Move]]:
    return load_games(12_000)


@pytest.fixture(scope="session")
def real_boards(real_games: list[list[chess.Move]]) -> list[chess.Board]:
    return boards_from_games(real_games, 12_000)


def played_positions(games: list[list[chess.Move]], limit: int, min_ply: int = 16) -> tuple[list[chess.Board], list[chess.Move], list[int]]:
    """(boards, played moves, game index) of the games' positions from ``min_ply`` on that have
    more than one legal move, up to ``limit``: the rows a position set holds."""
    boards, moves, ids = [], [], []
    for g, game in enumerate(games):
        board = chess.Board()
        for ply, move in enumerate(game):
            if ply >= min_ply and board.legal_moves.count() > 1:
                boards.append(board.copy(stack=False))
                moves.append(move)
                ids.append(g)
                if len(boards) >= limit:
                    return boards, moves, ids
            board.push(move)
    return boards, moves, ids
