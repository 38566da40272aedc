"""External UCI engines in ``tuner bench match`` (:mod:`tuner.arena.engines`).

No Stockfish needed: the external engine is a second ``tuner uci`` process. With the same
weights and the same table size (``Hash=1``, and the match's ``--hash 1``: 2**16 entries), it searches exactly as the
internal player does (same iterative deepening, history, cleared table at each new game), so
its games must be the internal games move for move, with the same scores and depths: the
strongest assertion there is, and it holds. Failures (no such command, exit mid-game, hang,
illegal move, rejected option) are played by small scripted UCI stand-ins and must end in a
one-line error, never a hang.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import chess
import pytest

from search.params.weights import load_weights
from tuner.cli import main as tuner_main
from tuner.arena.engines import EngineFailure, EngineSpec, engine_specs, parse_options
from tuner.arena.match import DEFAULT_OPENINGS, MatchConfig, load_openings, run_match
from tuner.arena.players import PlayPlayer

CLASSIC = load_weights("classic").values
MATERIAL = load_weights("material").values
TUNER_UCI = f"{sys.executable} -m tuner uci --weights classic"


def test_external_tuner_uci_plays_the_internal_games_move_for_move() -> None:
    openings = load_openings(DEFAULT_OPENINGS)
    external = engine_specs([TUNER_UCI], ["Hash=1"])[0]
    config = MatchConfig(games=4, depth=2, workers=1, seed=7, hash=1)  # the external's Hash
    # tuner uci plays the playing search by default: the internal side does too
    internal = run_match(PlayPlayer(CLASSIC), MATERIAL, openings, config)
    mixed = run_match(external, MATERIAL, openings, config)
    assert mixed == internal  # moves, (score, depth) per move, results, terminations, openings
    assert sum(len(g.moves) for pair in internal for g in pair) > 40
    # the external side as B, with a node limit (the same nodes are counted) and two workers
    config = MatchConfig(games=2, nodes=2000, workers=1, seed=3, hash=1)
    assert run_match(MATERIAL, external, openings, config) == run_match(MATERIAL, PlayPlayer(CLASSIC), openings, config)


def test_match_command_with_an_engine_reports_what_the_internal_match_reports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--games", "2", "--depth", "1", "--seed", "5", "--workers", "1", "--json", "--hash", "1"]
    assert tuner_main(["bench", "match", "material", "classic", *common, "--out", str(tmp_path / "a.pgn")]) == 0
    internal = json.loads(capsys.readouterr().out)
    assert tuner_main(["bench", "match", "material", "--engine", TUNER_UCI, "--engine-options", "Hash=1", *common,
                       "--out", str(tmp_path / "b.pgn")]) == 0
    external = json.loads(capsys.readouterr().out)
    assert external["b"] == f"{TUNER_UCI} (Hash=1)"
    for key in ("games", "wins", "draws", "losses", "score", "score_ci95", "elo", "elo_ci95", "pentanomial",
                "terminations"):
        assert external[key] == internal[key], key
    pgn = (tmp_path / "b.pgn").read_text()
    assert f'[Black "{TUNER_UCI} (Hash=1)"]' in pgn and '[White "material"]' in pgn


def test_engine_options_and_specs() -> None:
    assert parse_options("Skill Level=0") == (("Skill Level", "0"),)
    assert parse_options("UCI_LimitStrength=true, UCI_Elo=1500") == (("UCI_LimitStrength", "true"), ("UCI_Elo", "1500"))
    with pytest.raises(ValueError, match="expected Name=Value"):
        parse_options("Hash")
    with pytest.raises(ValueError, match="given twice"):
        parse_options("Hash=1,hash=2")
    one, two = engine_specs(["sf --x 'a b'", "other"], ["Threads=1"])
    assert one.command == ("sf", "--x", "a b") and one.options == two.options == (("Threads", "1"),)
    assert one.name == "sf --x 'a b' (Threads=1)" and two.name == "other (Threads=1)"
    with pytest.raises(ValueError, match="once per --engine"):
        engine_specs(["a", "b", "c"], ["X=1", "Y=2"])
    with pytest.raises(ValueError, match="without --engine"):
        engine_specs([], ["X=1"])
    with pytest.raises(ValueError, match="empty command"):
        engine_specs(["  "], None)


# ---------------------------------------------------------------- failures

FAKE_ENGINE = textwrap.dedent('''\
    """A scripted UCI stand-in: MODE decides how it misbehaves."""
    import sys
    import time

    import chess

    MODE = sys.argv[1]
    board = chess.Board()
    searches = 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            if MODE == "silent":
                continue
            print("id name fake", flush=True)
            print("uciok", flush=True)
        elif words[0] == "isready":
            print("readyok", flush=True)
        elif words[0] == "position":
            moves = words[words.index("moves") + 1:] if "moves" in words else []
            fen = "startpos" if words[1] == "startpos" else " ".join(words[2:words.index("moves") if moves else None])
            board = chess.Board() if fen == "startpos" else chess.Board(fen)
            for m in moves:
                board.push_uci(m)
        elif words[0] == "go":
            searches += 1
            if MODE == "crash" and searches == 3:
                sys.exit(3)
            if MODE == "hang":
                time.sleep(3600)
            if MODE == "illegal":
                print("bestmove a1a1", flush=True)
                continue
            move = sorted(board.legal_moves, key=lambda m: m.uci())[0]
            print("info depth 1 score cp 0", flush=True)
            print(f"bestmove {move.uci()}", flush=True)
        elif words[0] == "quit":
            break
''')


@pytest.fixture(scope="module")
def fake_engine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("engine") / "fake_uci.py"
    path.write_text(FAKE_ENGINE)
    return path


def fake(path: Path, mode: str) -> EngineSpec:
    return engine_specs([f"{sys.executable} {path} {mode}"], None)[0]


def one_opening() -> list:  # type: ignore[type-arg]
    return load_openings(DEFAULT_OPENINGS)[:1]


def test_a_well_behaved_stand_in_completes_its_games(fake_engine: Path) -> None:
    pairs = run_match(CLASSIC, fake(fake_engine, "ok"), one_opening(), MatchConfig(games=2, depth=1, workers=1))
    for game in pairs[0]:
        board = chess.Board(game.opening.fen)
        for uci in game.moves:
            board.push_uci(uci)
        assert game.result in ("1-0", "0-1", "1/2-1/2") and len(game.moves) > 4


@pytest.mark.parametrize(("mode", "message"), [
    ("crash", r"exited during the game \(game 1\.1, ply \d+, exit code 3\)"),
    ("hang", r"no move within 1\.5 s \(game 1\.1, ply 2\)"),
    ("illegal", r"a1a1"),
    ("silent", r"no 'uciok' within 1\.5 s of starting"),
])
def test_engine_failures_are_one_line_errors_not_hangs(fake_engine: Path, mode: str, message: str) -> None:
    config = MatchConfig(games=2, depth=1, workers=1, engine_timeout=1.5)
    with pytest.raises(EngineFailure, match=message) as info:
        run_match(CLASSIC, fake(fake_engine, mode), one_opening(), config)
    assert "\n" not in str(info.value) and "fake_uci.py" in str(info.value)


@pytest.mark.parametrize("mode", ["hang", "silent"])
def test_a_killed_engine_leaves_no_closed_loop_warning(fake_engine: Path, mode: str,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Issue 58 item 17: after an engine timed out (at its start or in a game), asyncio's
    child watcher logged "Loop ... that handles pid N is closed" on stderr once the killed
    process exited; that message is dropped (the process is reaped all the same)."""
    import time

    config = MatchConfig(games=2, depth=1, workers=1, engine_timeout=1.0)
    with caplog.at_level("WARNING"), pytest.raises(EngineFailure):
        run_match(CLASSIC, fake(fake_engine, mode), one_opening(), config)
    time.sleep(1.0)  # the killed process exits and the watcher thread reports it
    assert not [r for r in caplog.records if "that handles pid" in r.getMessage()]


def test_engine_failures_from_worker_processes_reach_the_caller(fake_engine: Path) -> None:
    openings = load_openings(DEFAULT_OPENINGS)[:2]
    config = MatchConfig(games=4, depth=1, workers=2, engine_timeout=5.0)
    with pytest.raises(EngineFailure, match="exited during the game"):
        run_match(fake(fake_engine, "crash"), MATERIAL, openings, config)


def test_match_command_engine_errors_are_one_line(fake_engine: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base = ["bench", "match", "classic", "--games", "2", "--depth", "1", "--workers", "1", "--out", str(tmp_path / "g.pgn")]
    assert tuner_main([*base, "--engine", str(tmp_path / "no-such-engine")]) == 2
    assert tuner_main([*base, "--engine", f"{sys.executable} {fake_engine} ok", "--engine-options", "Hash=1"]) == 2
    assert tuner_main([*base, "--engine", f"{sys.executable} {fake_engine} crash"]) == 2
    assert tuner_main(["bench", "match", "classic", "material", "--engine", "x", "--games", "2", "--depth", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("tuner bench: error: ") for line in err)
    assert "cannot start" in err[0] and "No such file" in err[0]
    assert "does not support option Hash" in err[1]
    assert "exited during the game" in err[2]
    assert "two players" in err[3]
    assert not (tmp_path / "g.pgn").exists()


def test_movetime_limits_both_sides() -> None:
    config = MatchConfig(games=2, movetime=20, workers=1, max_plies=6)
    pairs = run_match(CLASSIC, MATERIAL, one_opening(), config)
    assert all(len(g.moves) <= 6 and g.scores for g in pairs[0])
    with pytest.raises(ValueError, match="exactly one of --depth, --nodes and --movetime"):
        MatchConfig(games=2, depth=1, movetime=20).validate()
