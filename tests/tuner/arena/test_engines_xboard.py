"""XBoard engines in the arena (:mod:`tuner.arena.engines`, ``protocol="xboard"``), played by
the tiny Python test engine ``xboard_engine.py`` beside this file (the first or last legal
move; scripted failures): its options, depth and clock limits, clean shutdown, and a broken or
slow engine losing its game, not the match, under ``forfeit``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import chess
import pytest

from search.params.weights import load_weights
from tuner.cli import main as tuner_main
from tuner.arena.engines import EngineFailure, EngineSpec, engine_specs
from tuner.arena.match import DEFAULT_OPENINGS, GameRecord, MatchConfig, Opening, load_openings, run_match

MATERIAL = load_weights("material").values
ENGINE = Path(__file__).resolve().parent / "xboard_engine.py"


def xboard(mode: str = "ok", log: Path | None = None, options: str | None = None) -> EngineSpec:
    command = f"{sys.executable} {ENGINE} {mode}" + (f" {log}" if log else "")
    return engine_specs([command], [options] if options else None, ["xboard"])[0]


def openings(n: int = 1) -> list[Opening]:
    return load_openings(DEFAULT_OPENINGS)[:n]


def engine_moves(game: GameRecord, side: str) -> list[tuple[chess.Board, str]]:
    """(board before, move) of each move ``side`` ("A" or "B") played in ``game``."""
    board = chess.Board(game.opening.fen)
    out = []
    engine_white = game.white == side
    for uci in game.moves:
        if board.turn == (chess.WHITE if engine_white else chess.BLACK):
            out.append((board.copy(), uci))
        board.push_uci(uci)
    return out


@pytest.mark.parametrize("pick", ["first", "last"])
def test_xboard_engine_plays_its_moves_with_its_option(tmp_path: Path, pick: str) -> None:
    log = tmp_path / "log.txt"
    spec = xboard(log=log, options=f"Pick={pick}")
    pairs = run_match(MATERIAL, spec, openings(), MatchConfig(games=2, depth=1, workers=1, max_plies=30))
    for game in pairs[0]:
        moves = engine_moves(game, "B")
        assert len(moves) >= 5
        for board, uci in moves:
            legal = sorted(m.uci() for m in board.legal_moves)
            assert uci == (legal[0] if pick == "first" else legal[-1])
    sent = log.read_text().splitlines()
    assert f"option Pick={pick}" in sent and "sd 1" in sent
    assert sent.count("new") == 2  # a new game each game, one process for the pair
    assert sent[-1] == "quit"  # clean shutdown


def test_xboard_engine_on_a_clock_gets_level_time_and_otim(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    pairs = run_match(xboard(log=log), MATERIAL, openings(), MatchConfig(games=2, tc="5+0.1", workers=1, max_plies=12))
    assert all(len(g.moves) == 12 for g in pairs[0])
    sent = log.read_text().splitlines()
    assert "level 0 0:05 0.1" in sent
    assert any(x.startswith("time ") for x in sent) and any(x.startswith("otim ") for x in sent)


@pytest.mark.parametrize(("mode", "kind"), [("crash", "exited"), ("hang", "no move in time"),
                                           ("illegal", "engine error")])
def test_a_broken_or_slow_engine_loses_its_game_not_the_match(mode: str, kind: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    config = MatchConfig(games=4, depth=1, workers=1, engine_timeout=1.0, forfeit=True)
    pairs = run_match(MATERIAL, xboard(mode), openings(2), config)
    games = [g for pair in pairs for g in pair]
    assert len(games) == 4
    assert all(g.termination == f"forfeit: {kind}" and g.points_a == 1.0 for g in games)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("forfeit: game ") and "xboard_engine.py" in line for line in err)


def test_an_engine_that_cannot_start_forfeits_and_without_forfeit_stops_the_match(tmp_path: Path) -> None:
    missing = engine_specs([str(tmp_path / "no-such-engine")], None, ["xboard"])[0]
    pairs = run_match(MATERIAL, missing, openings(), MatchConfig(games=2, depth=1, workers=1, forfeit=True))
    assert [g.termination for g in pairs[0]] == ["forfeit: cannot start"] * 2
    assert [g.moves for g in pairs[0]] == [(), ()]
    with pytest.raises(EngineFailure, match="exited during the game"):
        run_match(MATERIAL, xboard("crash"), openings(), MatchConfig(games=2, depth=1, workers=1))


def test_match_command_with_an_xboard_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tuner_main(["bench", "match", "material", "--engine", f"{sys.executable} {ENGINE} ok",
                       "--engine-protocol", "xboard", "--games", "2", "--depth", "1", "--workers", "1",
                       "--max-plies", "20", "--json", "--out", str(tmp_path / "g.pgn")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["games"] == 2 and doc["b"].endswith("xboard_engine.py ok")
    with pytest.raises(ValueError, match="--engine-protocol 'cecp'"):
        engine_specs(["x"], None, ["cecp"])
    with pytest.raises(ValueError, match="--engine-protocol given 2 times for 1 engines"):
        engine_specs(["x"], None, ["uci", "xboard"])
