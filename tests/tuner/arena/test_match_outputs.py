"""What ``tuner bench match`` reads and writes besides its summary: a PGN openings file, the
``--pgn`` file written game pair by game pair (kept when the match is stopped, never an
existing file without ``--overwrite``, the default name never replacing an earlier match), and
the running lines in a log."""

from __future__ import annotations

import chess
import chess.pgn
import pytest

from search.params.weights import load_weights
from tuner.arena.match import (
    MatchConfig,
    OpeningsFileError,
    PgnWriter,
    load_openings,
    run_match,
    running_line,
)
from tuner.arena.sprt import Sprt
from tuner.cli import main as tuner_main
from tuner.progress import LOG_SECONDS, RunningLog, log_seconds

CLASSIC = load_weights("classic").values
MATERIAL = load_weights("material").values

TWO_GAMES = """\
[Event "a"]
[Opening "Italian Game"]

1. e4 e5 2. Nf3 Nc6 3. Bc4 *

[Event "b"]
[FEN "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1"]
[SetUp "1"]

1... d5 2. c4 1-0
"""


def read_games(path: object) -> list[chess.pgn.Game]:
    games = []
    with open(str(path), encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            games.append(game)
    return games


def test_a_pgn_openings_file_gives_each_games_last_position(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "book.pgn"
    path.write_text(TWO_GAMES)
    italian, queens = load_openings(path)
    assert italian.name == "Italian Game"
    assert italian.fen == "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"
    assert queens.name == "book.pgn:6"  # no Opening tag: the file and the line the game starts on
    assert queens.fen == "rnbqkbnr/ppp1pppp/8/3p4/2PP4/8/PP2PPPP/RNBQKBNR b KQkq - 0 2"
    # a file that starts with a tag is PGN whatever its name
    other = tmp_path / "book.txt"
    other.write_text(TWO_GAMES)
    assert [o.fen for o in load_openings(other)] == [italian.fen, queens.fen]


@pytest.mark.parametrize(("text", "message"), [
    (TWO_GAMES + '\n[Event "c"]\n\n1. e4 Ke7 *\n', r"book\.pgn: line 12: game 3 cannot be read \(illegal san: 'Ke7'"),
    ('[Event "x"]\n[FEN "8/8/8/4k3/8/8/4K3/8 w - - 0 1"]\n[SetUp "1"]\n\n*\n',
     r"book\.pgn: line 1: the game is already over"),
    ('[Event "x"]\n[Variant "Atomic"]\n\n1. e4 *\n', r"book\.pgn: line 1: game 1 is not standard chess"),
    ('[Event "x"]\n[FEN "8/8/8/8/8/8/8/8 w - - 0 1"]\n[SetUp "1"]\n\n*\n', r"book\.pgn: line 1: impossible position"),
    ('\n\n[Event "x"]\n[FEN "not a fen"]\n[SetUp "1"]\n\n*\n', r"book\.pgn: line 3: game 1 cannot be read"),
    ("", r"book\.pgn: no positions"),
])
def test_a_bad_pgn_game_is_refused_in_one_line_naming_file_and_line(tmp_path, text: str, message: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "book.pgn"
    path.write_text(text)
    with pytest.raises(OpeningsFileError, match=message) as caught:
        load_openings(path)
    assert "\n" not in str(caught.value)


def test_a_match_plays_each_pgn_opening_with_both_colours(tmp_path) -> None:  # type: ignore[no-untyped-def]
    book = tmp_path / "book.pgn"
    book.write_text(TWO_GAMES)
    out = tmp_path / "games.pgn"
    assert tuner_main(["bench", "match", "classic", "material", "--games", "4", "--depth", "1", "--workers", "1",
                       "--openings", str(book), "--pgn", str(out), "--max-plies", "20"]) == 0
    games = read_games(out)
    assert len(games) == 4
    starts = {g.headers["FEN"] for g in games}
    assert starts == {o.fen for o in load_openings(book)}
    for first, second in zip(games[0::2], games[1::2]):
        assert first.headers["FEN"] == second.headers["FEN"] and first.headers["SetUp"] == "1"
        assert first.headers["White"] == second.headers["Black"]
        assert first.headers["TimeControl"] == "-" and "depth 1" in first.headers["Event"]
    # the bad file: one line on stderr, exit code 2
    book.write_text('[Event "x"]\n\n1. e4 Ke7 *\n')
    assert tuner_main(["bench", "match", "classic", "material", "--games", "2", "--depth", "1",
                       "--openings", str(book), "--pgn", str(tmp_path / "other.pgn")]) == 2


def test_the_pgn_is_never_replaced_without_overwrite(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    fast = ["--games", "2", "--depth", "1", "--workers", "1", "--max-plies", "10"]
    out = tmp_path / "mine.pgn"
    out.write_text("keep me\n")
    assert tuner_main(["bench", "match", "classic", "material", *fast, "--pgn", str(out)]) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err and out.read_text() == "keep me\n"
    assert tuner_main(["bench", "match", "classic", "material", *fast, "--pgn", str(out), "--overwrite"]) == 0
    assert len(read_games(out)) == 2
    # the default name: a rerun writes beside the first match's games, never over them
    for _ in range(2):
        assert tuner_main(["bench", "match", "classic", "material", *fast]) == 0
    printed = capsys.readouterr().out
    assert "PGN written to results/match-classic-vs-material.pgn" in printed
    assert "PGN written to results/match-classic-vs-material-2.pgn" in printed
    assert len(read_games(tmp_path / "results" / "match-classic-vs-material.pgn")) == 2
    assert len(read_games(tmp_path / "results" / "match-classic-vs-material-2.pgn")) == 2


def test_the_tc_is_the_pgn_time_control(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "tc.pgn"
    assert tuner_main(["bench", "match", "classic", "material", "--games", "2", "--tc", "1+0.01", "--workers", "1",
                       "--max-plies", "6", "--pgn", str(out)]) == 0
    assert {g.headers["TimeControl"] for g in read_games(out)} == {"1+0.01"}


def test_a_stopped_match_keeps_its_finished_games(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Game pairs reach the file as they finish, in opening order: stopped after two pairs (an
    interrupt, as Ctrl-C or a kill between pairs), the file holds those four games, whole."""
    out = tmp_path / "stopped.pgn"
    seen: list[int] = []

    def stop_after_two(games: int) -> None:
        seen.append(games)
        if len(seen) == 2:
            raise KeyboardInterrupt

    config = MatchConfig(games=10, depth=1, workers=1, max_plies=20)
    with PgnWriter(out, {"A": "classic", "B": "material"}, "t") as pgn:
        with pytest.raises(KeyboardInterrupt):
            run_match(CLASSIC, MATERIAL, load_openings_default(), config, progress=stop_after_two,
                      on_pair=pgn.add_pair)
    games = read_games(out)
    assert len(games) == 4 and [g.headers["Round"] for g in games] == ["1.1", "1.2", "2.1", "2.2"]
    assert all(not g.errors and g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)
    # the whole match writes what it returns, in the same order
    full = tmp_path / "full.pgn"
    with PgnWriter(full, {"A": "classic", "B": "material"}, "t") as pgn:
        pairs = run_match(CLASSIC, MATERIAL, load_openings_default(), config, on_pair=pgn.add_pair)
    assert [g.headers["Round"] for g in read_games(full)] == [g.round for pair in pairs for g in pair]
    # the file is made with the first pair: never over an existing one without overwrite
    before = full.read_text()
    with PgnWriter(full, {"A": "a", "B": "b"}, "t") as again, pytest.raises(FileExistsError):
        again.add_pair(0, pairs[0])
    assert full.read_text() == before
    with PgnWriter(tmp_path / "none.pgn", {"A": "a", "B": "b"}, "t"):
        pass  # no pair: no file
    assert not (tmp_path / "none.pgn").exists()


def load_openings_default() -> list:  # type: ignore[type-arg]
    from tuner.arena.match import DEFAULT_OPENINGS

    return load_openings(DEFAULT_OPENINGS)


def test_running_lines_give_games_wdl_elo_and_the_llr(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    pairs = run_match(CLASSIC, MATERIAL, load_openings_default(), MatchConfig(games=4, depth=1, workers=1,
                                                                              max_plies=20))
    test = Sprt(0, 10, 0.05, 0.05)
    line = running_line("match", pairs, 10, test, 12.3)
    result = test.check([0, 0, 0, 0, 0])
    assert line.startswith("match: 4/10 games, 12 s, W/D/L ") and ", Elo " in line and ", LLR " in line
    assert f"({result.lower:.2f}, {result.upper:.2f})" in line
    assert running_line("match", [], 10, None, 0.0) == "match: 0/10 games, 0 s"
    # the interval: 30 s unless MOVETUNER_LOG_SECONDS says otherwise
    monkeypatch.delenv("MOVETUNER_LOG_SECONDS", raising=False)
    assert log_seconds() == LOG_SECONDS == 30.0
    monkeypatch.setenv("MOVETUNER_LOG_SECONDS", "nonsense")
    assert log_seconds() == 30.0
    monkeypatch.setenv("MOVETUNER_LOG_SECONDS", "0.01")
    assert log_seconds() == 0.01
    written: list[str] = []
    import time

    with RunningLog(lambda: "figures", write=written.append):
        time.sleep(0.1)
    assert written and set(written) == {"figures"}
    # in the command: lines on stderr while the games run (standard error is not a terminal here)
    assert tuner_main(["bench", "match", "classic", "material", "--games", "4", "--depth", "2", "--workers", "1",
                       "--sprt", "0", "10", "0.05", "0.05", "--pgn", str(tmp_path / "g.pgn")]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("match: ")]
    assert lines and all("/4 games" in x for x in lines)


def test_a_killed_match_leaves_whole_games(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """SIGKILL in the middle of a match: the PGN holds the game pairs finished before, each whole."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "killed.pgn"
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "bench", "match", "classic", "material", "--games", "200",
                             "--depth", "2", "--workers", "1", "--pgn", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_text(encoding="utf-8").count("[Event ") >= 4:
                break
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    games = read_games(out)
    assert 4 <= len(games) < 200 and len(games) % 2 == 0
    assert all(not g.errors and g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)
    assert [g.headers["Round"] for g in games[:4]] == ["1.1", "1.2", "2.1", "2.2"]
