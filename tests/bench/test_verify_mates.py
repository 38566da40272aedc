"""The shipped mate suite (``datasets/epd/mates.epd``) and its checker ``bench/verify_mates.py``:
every line reads, is legal and names a source it really comes from; the mates in one and two
are verified in full by the checker's python-chess solver (about a second); the mates in three
and four (a few minutes) are marked ``slow``."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import chess
import chess.pgn
import pytest

from tuner.arena.epd import parse_epd

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "verify_mates.py"
SUITE = REPO / "datasets" / "epd" / "mates.epd"
LINES_PGN = REPO / "datasets" / "epd" / "mates-lines.pgn"
SAMPLE_PGN = REPO / "datasets" / "sample" / "famous-games.pgn"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_mates", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["verify_mates"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


vm = _load()
POSITIONS = vm.read_suite(SUITE)


def _games(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    return games


def _positions_of(game: chess.pgn.Game) -> set[str]:
    """The EPD piece/side/castling/en passant fields of every position of ``game``."""
    board = game.board()
    seen = {board.epd()}
    for move in game.mainline_moves():
        board.push(move)
        seen.add(board.epd())
    return seen


def test_every_line_reads_and_is_legal() -> None:
    assert len(POSITIONS) >= 40
    for p in POSITIONS:
        assert p.problem is None, f"{p.id}: {p.problem}"
        assert p.board.is_valid() and not p.board.is_game_over(), p.id
        assert p.bm and all(m in p.board.legal_moves for m in p.bm), p.id
        assert len(set(p.bm)) == len(p.bm), p.id
    ids = [p.id for p in POSITIONS]
    assert ids == [f"mates.{i:02d}" for i in range(1, len(ids) + 1)]


def test_at_least_eight_mates_of_each_length() -> None:
    counts = Counter(p.dm for p in POSITIONS)
    assert set(counts) == {1, 2, 3, 4}
    assert min(counts.values()) >= 8


def test_the_engines_reader_takes_every_line() -> None:
    positions, problems = parse_epd(SUITE)
    assert problems == [] and len(positions) == len(POSITIONS)
    assert [set(p.bm) for p in positions] == [{m.uci() for m in q.bm} for q in POSITIONS]


def test_every_position_occurs_in_the_game_its_source_names() -> None:
    sample = _games(SAMPLE_PGN)
    lines = _games(LINES_PGN)
    for p in POSITIONS:
        found = re.search(r"famous-games\.pgn game (\d+)$", p.source)
        if found:
            games = [sample[int(found.group(1)) - 1]]
        else:
            assert p.source.endswith(", mates-lines.pgn"), p.id
            games = lines
        assert any(p.board.epd() in _positions_of(g) for g in games), p.id


def test_the_lines_of_mates_lines_pgn_are_legal_and_end_in_mate() -> None:
    games = _games(LINES_PGN)
    assert games
    for game in games:
        assert game.errors == []
        assert game.end().board().is_checkmate()


@pytest.mark.parametrize("dm", [1, 2])
def test_the_short_mates_are_verified(dm: int) -> None:
    """Mate in exactly ``dm`` and ``bm`` every move that gives it, by the plain solver."""
    short = [p for p in POSITIONS if p.dm == dm]
    assert len(short) >= 8
    for p in short:
        assert vm.check(p) is None, p.id


@pytest.mark.slow
@pytest.mark.parametrize("dm", [3, 4])
def test_the_long_mates_are_verified(dm: int) -> None:
    for p in [p for p in POSITIONS if p.dm == dm]:
        assert vm.check(p) is None, p.id


def test_the_checker_finds_a_shorter_mate_a_missing_move_and_no_mate() -> None:
    one = next(p for p in POSITIONS if p.dm == 1 and len(p.bm) == 2)
    text = f"{one.board.epd()} bm {one.board.san(one.bm[0])}; dm 1; id \"x\"; c0 \"source: test\";"
    assert "bm says" in vm.check(vm.read_line(text))
    two = next(p for p in POSITIONS if p.dm == 2)
    bm = one.board.san(one.bm[0])
    assert vm.check(vm.read_line(text.replace("dm 1", "dm 2"))) == "there is a mate in 1"
    assert vm.check(vm.read_line(f"{two.board.epd()} bm {two.board.san(two.bm[0])}; dm 1; "
                                 "c0 \"source: test\";")) == "no mate in 1"
    assert vm.read_line(f"{one.board.epd()} bm {bm}; dm 5; c0 \"source: test\";").problem is not None
    assert vm.read_line(f"{one.board.epd()} bm {bm}; dm 1;").problem == "no c0 \"source: ...\""


def test_the_script_prints_one_json_line_of_figures() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--max-dm", "1"], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stdout)
    assert line["all_ok"] is True and line["failures"] == []
    assert line["by_dm"]["1"] == line["verified_by_dm"]["1"] == line["checked"] == line["verified"]
    assert line["verified_by_dm"]["4"] == 0 and line["positions"] == len(POSITIONS)


def test_a_scan_of_mates_lines_pgn_finds_exactly_its_positions_in_the_suite() -> None:
    """``--scan`` (how the game positions were found) on the traditional lines, mates in up to
    2: the suite's positions from that file, with the same ``dm`` and ``bm``."""
    found = vm.scan(LINES_PGN, 2)["found"]
    assert {(f["epd"], f["dm"], tuple(f["bm"])) for f in found} == {
        (p.board.epd(), p.dm, tuple(sorted(p.board.san(m) for m in p.bm)))
        for p in POSITIONS if p.source.endswith("mates-lines.pgn")}
