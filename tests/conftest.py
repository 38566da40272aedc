"""Shared test data: positions from real games.

Every test that needs real positions takes them from the games the repository ships
(``datasets/sample/famous-games.pgn``: 52 published master games, 3,229 plies), so the suite
behaves the same on a fresh clone as in CI. Tests that need the large grandmaster collection
(``../shared/datasets/gm``, or ``MOVETUNER_GM_DIR``) are marked ``gm``: they are skipped with a
reason when it is absent, and fail instead when ``MOVETUNER_REQUIRE_GM=1`` (CI sets it), so
they cannot pass silently by not running. Every test not marked ``gm`` runs with the GM folder
hidden (``MOVETUNER_GM_DIR`` pointed at nothing), so a run with the folder present also proves
that those tests do not depend on it.
"""

from __future__ import annotations

import os
from pathlib import Path

import chess
import chess.pgn
import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE_PGN = REPO / "datasets" / "sample" / "famous-games.pgn"
_GM_DIR = Path(os.environ.get("MOVETUNER_GM_DIR", REPO.parent / "shared" / "datasets" / "gm"))
_HIDDEN = str(REPO / "tests" / "no-gm-here")


def gm_files() -> list[Path]:
    """The GM PGN files, or [] when the collection is absent (or hidden from this test)."""
    gm_dir = Path(os.environ.get("MOVETUNER_GM_DIR", _GM_DIR))
    return sorted(gm_dir.glob("*.pgn")) if gm_dir.is_dir() else []


@pytest.fixture(autouse=True)
def _gm_folder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the GM folder from unmarked tests; skip (or fail, in CI) marked ones without it."""
    if request.node.get_closest_marker("gm") is None:
        monkeypatch.setenv("MOVETUNER_GM_DIR", _HIDDEN)
        return
    _require_gm()


def _require_gm() -> None:
    if not gm_files():
        if os.environ.get("MOVETUNER_REQUIRE_GM") == "1":
            pytest.fail(f"MOVETUNER_REQUIRE_GM=1 but no *.pgn in {_GM_DIR}")
        pytest.skip(f"the grandmaster games are absent ({_GM_DIR}); set MOVETUNER_GM_DIR")


def without_compile_note(err: str) -> str:
    """A command's standard error without the note it prints when numba compiles (a cold
    cache: which test meets a kernel first depends on the order the test processes take)."""
    from tuner.compiling import COMPILING_NOTE  # noqa: PLC0415
    return "\n".join(line for line in err.splitlines() if not line.endswith(f"note: {COMPILING_NOTE}"))


def read_games(path: Path, max_plies: int) -> list[list[chess.Move]]:
    """Move lists of the standard-start games of ``path``, in file order, until their plies
    add up to at least ``max_plies`` (or the file ends)."""
    games: list[list[chess.Move]] = []
    total = 0
    with path.open(encoding="utf-8", errors="replace") as fh:
        while total < max_plies:
            game = chess.pgn.read_game(fh)
            if game is None:
                break
            if game.errors or game.board().fen() != chess.STARTING_FEN:
                continue
            moves = list(game.mainline_moves())
            games.append(moves)
            total += len(moves)
    return games


def load_gm_games(max_plies: int) -> list[list[chess.Move]]:
    """Real grandmaster games, taken evenly from the GM files (only in tests marked ``gm``)."""
    _require_gm()
    files = gm_files()
    games: list[list[chess.Move]] = []
    for path in files:
        games += read_games(path, max_plies // len(files) + 1)
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
    """The shipped sample games (52 games, 3,229 plies)."""
    games = read_games(SAMPLE_PGN, 10**9)
    assert len(games) == 52 and sum(map(len, games)) == 3229
    return games


@pytest.fixture(scope="session")
def real_boards(real_games: list[list[chess.Move]]) -> list[chess.Board]:
    """Every position of the shipped games (3,229)."""
    return boards_from_games(real_games, 10**9)


@pytest.fixture(scope="session")
def gm_games() -> list[list[chess.Move]]:
    """About 12,000 plies of grandmaster games; use only in tests marked ``gm``."""
    return load_gm_games(12_000)


@pytest.fixture(scope="session")
def gm_boards(gm_games: list[list[chess.Move]]) -> list[chess.Board]:
    return boards_from_games(gm_games, 12_000)


@pytest.fixture(scope="session")
def sample_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped sample built into a position set (``tuner ingest --sample``); read-only."""
    from tuner.cli import main  # noqa: PLC0415

    out = tmp_path_factory.mktemp("sample") / "set"
    assert main(["ingest", "--sample", "--out", str(out), "--no-progress"]) == 0
    return out


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
