"""``tuner uci`` at its limits (issue 12): every ``go`` ends in a ``bestmove``, a rejected
``position`` leaves no position (``bestmove 0000``), and out-of-range weights are refused; and
the limits a GUI sets are kept (issue 28): ``movetime`` used, ``nodes`` searched to the node."""

from __future__ import annotations

import io
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.engine
import numpy as np
import pytest
from tests.tuner.test_uci import MIDDLE_GAME, UCI_COMMAND, RawEngine, started_engine

from search.params.catalog import N_FEATURES
from search.params.weights import Weights, load_weights, save_weights
from search.core.convert import from_fen
from search.tree.iterative import MAX_DEPTH, UNLIMITED, ClockPlanned, TimePlan
from tuner.uci import (DEFAULT_TIME_PLAN, OPTIONS, GoLimits, UciEngine, _chess_position, _core_position, _game_ply,
                       _Position, parse_go)


@pytest.fixture(scope="module")
def engine() -> Iterator[RawEngine]:
    yield from started_engine(load=("play",))


def _go(engine: RawEngine, command: str) -> tuple[str, list[str]]:
    """Send ``command`` after a sync; return the ``bestmove`` line and every line before it
    since the last call (so also the answers to the commands sent before this one)."""
    engine.send("isready")
    _, earlier = engine.expect("readyok")
    engine.send(command)
    line, before = engine.expect("bestmove", timeout=30)
    return line, earlier + before


def _legal(line: str, board: chess.Board) -> bool:
    return chess.Move.from_uci(line.split()[1]) in board.legal_moves


@pytest.mark.parametrize(("command", "note"), [
    ("go depth 0", "depth 0 is out of range; using depth 1"),
    ("go depth -3", "depth -3 is out of range; using depth 1"),
    ("go movetime -5", "movetime -5 is out of range; using movetime 1"),
    ("go movetime 0", "movetime 0 is out of range; using movetime 1"),
    ("go nodes 0", "nodes 0 is out of range; using nodes 1"),
    ("go depth abc", "depth value 'abc' is not an integer; using depth 1"),
    ("go depth", "depth needs a value; using depth 1"),
    ("go nodes", "nodes needs a value; using nodes 1"),
    ("go wtime abc btime 1000", "wtime value 'abc' is not an integer; using wtime 0"),
    ("go depth 99999999999999999999999", f"using depth {MAX_DEPTH}"),
])
def test_go_with_an_invalid_limit_searches_the_nearest_valid_one(engine: RawEngine, command: str, note: str) -> None:
    """Issue 12: these got an info string and no bestmove, so a GUI waited for ever."""
    engine.send("position startpos moves e2e4")
    line, before = _go(engine, command + (" nodes 2000" if "99999" in command else ""))
    assert any(b.startswith("info string go: ") and note in b for b in before), before
    board = chess.Board()
    board.push_uci("e2e4")
    assert _legal(line, board)


def test_go_with_an_unknown_word_ignores_it(engine: RawEngine) -> None:
    engine.send("position startpos")
    line, before = _go(engine, "go frobnicate depth 2")
    assert "info string go: unknown parameter 'frobnicate' ignored" in before
    assert _legal(line, chess.Board())
    assert any(b.startswith("info depth 2 ") for b in before)


@pytest.mark.parametrize(("position", "go", "note"), [
    ("position startpos", "go frobnicate", "info string go: unknown parameter"),
    ("position fen nonsense", "go infinite", "info string position: invalid FEN"),
])
def test_a_search_without_limits_answers_after_stop(engine: RawEngine, position: str, go: str, note: str) -> None:
    # only unknown words: no limit, so the search runs until stop; a rejected position in
    # infinite mode: the last valid one is searched, and answered only after stop (UCI)
    engine.send("position startpos")
    engine.send(position)
    engine.send(go)
    engine.expect(note)
    engine.send("stop")
    line, _ = engine.expect("bestmove", timeout=10)
    assert _legal(line, chess.Board())
    engine.send("position startpos")


@pytest.mark.parametrize(("fen", "problem"), [
    ("8/8/8/8/8/8/8/8 w - - 0 1", "white has no king"),
    ("4k3/8/8/8/8/8/8/8 w - - 0 1", "white has no king"),
    ("4k3/8/8/8/8/8/8/4K2P w - - 0 1", "a pawn stands on the first or last rank"),
    ("k6R/8/8/8/8/8/8/K7 w - - 0 1", "the side not to move is in check"),
])
def test_both_position_paths_name_an_impossible_position_alike(fen: str, problem: str) -> None:
    """Before the kernels load, a position is checked by python-chess's board (``_chess_position``),
    after by the search's (``_core_position``): the info string a refused FEN gets must not depend
    on which (it once gave python-chess's status repr, ``<Status.NO_WHITE_KING|...>``, first)."""
    with pytest.raises(ValueError) as before:
        _chess_position(fen, [])
    with pytest.raises(ValueError) as after:
        _core_position(fen, [])
    assert str(before.value) == str(after.value) == f"impossible position in FEN {fen!r}: {problem}"


@pytest.mark.parametrize(("position", "reason", "kept"), [
    ("position fen not a fen", "invalid FEN", "d2d4"),
    ("position fen 8/8/8/8/8/8/8/8 w - - 0 1", "no", "d2d4"),  # no kings
    ("position startpos moves e2e4 e7e5 e1e3", "illegal move 'e1e3'", "e2e4 e7e5"),
    ("position startpos moves e2e5", "illegal move 'e2e5'", ""),
    ("position startpos moves e2e4 moves e7e5", "illegal move 'moves'", "e2e4"),
    ("position fen k6R/8/8/8/8/8/8/K7 w - - 0 1", "side not to move is in check", "d2d4"),
    ("position", "expected 'position startpos|fen", "d2d4"),
    ("position startpos e2e4", "unexpected 'e2e4' after startpos", "d2d4"),
])
def test_a_rejected_position_plays_on_from_the_last_valid_one(engine: RawEngine, position: str, reason: str,
                                                              kept: str) -> None:
    """Issue 58: a bad position line keeps a position to play from, never bestmove 0000 while
    legal moves exist: the legal prefix of its moves from a valid FEN, else the last valid
    position; the info string says which."""
    engine.send("position startpos moves d2d4")
    engine.send(position)
    line, before = _go(engine, "go depth 2")
    said = [b for b in before if b.startswith("info string position: ")]
    assert len(said) == 1 and reason in said[0], before
    assert ("keeping the last valid position" in said[0]) == (kept == "d2d4"), said
    assert not any("no valid position" in b for b in before), before
    board = chess.Board()
    for uci in kept.split():
        board.push_uci(uci)
    assert _legal(line, board), (line, board.fen())
    line, _ = _go(engine, "go depth 2")  # the same position again
    assert _legal(line, board)


@pytest.mark.parametrize(("position", "reason", "said", "fen"), [
    ("position fen 8/8/8/8/8/8/8/K6k w - - 99999999999999999999999 1", "halfmove clock", "read as",
     "8/8/8/8/8/8/8/K6k w - - 2147483647 1"),
    ("position fen 8/8/8/8/8/8/8/K6k w - - 0 99999999999999999999999", "fullmove number", "read as",
     "8/8/8/8/8/8/8/K6k w - - 0 2147483647"),
    ("position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1h1", "illegal move 'e1h1'", "moves e1g1",
     "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1"),
    ("position fen 4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1", "beyond the starting set", "quick python-chess search",
     "4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1"),
    ("position fen qqqqkqqq/qqqqqqqq/8/8/8/8/QQQQQQQQ/QQQQKQQQ b - - 0 1", "beyond the starting set",
     "quick python-chess search", "qqqqkqqq/qqqqqqqq/8/8/8/8/QQQQQQQQ/QQQQKQQQ b - - 0 1"),
])
@pytest.mark.parametrize("before", ["position startpos moves d2d4", None], ids=["after-a-position", "first"])
def test_a_position_python_chess_reads_but_the_search_refuses_is_played_as_python_chess_reads_it(
        engine: RawEngine, position: str, reason: str, said: str, fen: str, before: str | None) -> None:
    """Probe finding (issue 58 re-run): counters past the search's range, castling written as the
    king taking its rook and more pieces than promotions explain were refused by the search though
    python-chess reads them: the engine answered bestmove 0000 with legal moves (first position),
    or a move of the previous position. Now the search plays the FEN with its counters cut to
    its range and the moves as python-chess reads them, or else the quick python-chess search
    answers on python-chess's board."""
    fresh = started_engine() if before is None else None  # no position at all before the bad one
    raw = next(fresh) if fresh is not None else engine
    try:
        if before is not None:
            raw.send(before)
        raw.send(position)
        for go in ("go depth 2", "go nodes 500", "go movetime 50"):
            line, lines = _go(raw, go)
            assert line != "bestmove 0000" and _legal(line, chess.Board(fen)), (line, lines)
            if go == "go depth 2":
                told = [b for b in lines if b.startswith("info string position: ")]
                assert len(told) == 1 and reason in told[0] and said in told[0], lines
    finally:
        if fresh is not None:
            next(fresh, None)


@pytest.mark.parametrize("fen", [
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemate
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # checkmate
])
def test_position_without_legal_moves_answers_the_null_move(engine: RawEngine, fen: str) -> None:
    engine.send(f"position fen {fen}")
    line, before = _go(engine, "go depth 3")
    assert line == "bestmove 0000"
    assert not any(b.startswith("info string") for b in before), before


def test_weights_of_int32_max_are_refused(engine: RawEngine, tmp_path: Path) -> None:
    """Issue 12: such weights were accepted and produced ``score mate 23622320116``."""
    path = tmp_path / "huge.json"
    save_weights(path, Weights(np.full(N_FEATURES, 2**31 - 1, dtype=np.int32)))
    engine.send(f"setoption name Weights value {path}")
    engine.send("position startpos")
    line, before = _go(engine, "go depth 2")
    assert any("setoption Weights" in b and "mate band" in b and "keeping classic" in b for b in before), before
    scores = [b.split(" score ")[1].split()[:2] for b in before if b.startswith("info depth")]
    assert scores and all(kind == "cp" and abs(int(value)) < 1000 for kind, value in scores), scores
    assert _legal(line, chess.Board())


def test_engine_started_with_int32_max_weights_exits_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    save_weights(path, Weights(np.full(N_FEATURES, 2**31 - 1, dtype=np.int32)))
    proc = subprocess.run([*UCI_COMMAND, "--weights", str(path)], input="uci\nquit\n", capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc
    assert proc.stderr.count("\n") == 1 and "mate band" in proc.stderr, proc.stderr


def test_parse_go_clamps_and_never_raises() -> None:
    assert parse_go("depth 0 nodes -4 movetime -5".split())[0] == GoLimits(depth=1, nodes=1, movetime=1)
    assert parse_go(["nodes", str(10**30)])[0].nodes == UNLIMITED
    assert parse_go(["winc", "-3", "binc", "x"])[0] == GoLimits(winc=0, binc=0)
    limits, notes = parse_go(["movestogo", "x", "depth", "3"])
    assert limits == GoLimits(depth=3) and notes == ["go: movestogo value 'x' is not an integer; ignored"]
    limits, notes = parse_go(["depth", "infinite"])  # a missing value does not swallow the next word
    assert limits == GoLimits(depth=1, infinite=True) and len(notes) == 1
    limits, notes = parse_go(["mate", "3", "depth", "2"])
    assert limits == GoLimits(depth=2, mate=3) and notes == []
    assert parse_go(["btime", "-20"])[0].btime == -20  # an overrun clock stays negative


def test_python_chess_limits_are_kept() -> None:
    """Issue 28: through python-chess ``Limit(time=1.0)`` used 0.22 s (no iteration started
    that was predicted not to fit) and ``Limit(nodes=200000)`` searched 46,757 nodes. Bounds
    wide enough for a loaded 2-core machine; bench/uci.py measures the figures."""
    board = chess.Board(MIDDLE_GAME)
    with chess.engine.SimpleEngine.popen_uci(UCI_COMMAND, timeout=300) as engine:
        engine.play(board, chess.engine.Limit(depth=1))  # the kernel loaded, ucinewgame answered
        start = time.perf_counter()
        result = engine.play(board, chess.engine.Limit(time=1.0), info=chess.engine.INFO_ALL)
        used = time.perf_counter() - start
        assert result.move in board.legal_moves
        assert 0.7 <= used <= 1.15, used
        result = engine.play(board, chess.engine.Limit(nodes=200_000), info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves
        assert 190_000 <= result.info["nodes"] <= 200_000, result.info


def test_a_clock_plan_follows_the_games_ply() -> None:
    """On a clock without movestogo the move's share follows the game's ply (Stockfish's curve);
    with movestogo, or without a ply, it is the time left over the moves to go (30)."""
    limits = GoLimits(wtime=10000, btime=8000, winc=100, binc=50)
    assert limits.plan(True, 5, 8) == TimePlan.for_clock(10.0, 0.1, None, 0.005, ply=8)
    assert limits.plan(False, 5, 9) == TimePlan.for_clock(8.0, 0.05, None, 0.005, ply=9)
    assert limits.plan(True, 5) == TimePlan.for_clock(10.0, 0.1, None, 0.005)
    with_togo = GoLimits(wtime=10000, btime=10000, movestogo=20)
    assert with_togo.plan(True, 5, 8) == TimePlan.for_clock(10.0, 0.0, 20, 0.005)
    plan = limits.plan(True, 5, 8)
    assert plan is not None and plan.soft < 9.995 / 30 + 0.075  # less than before at the first moves


def test_the_time_plan_option_chooses_the_clocks_allocation() -> None:
    """``setoption name TimePlan``: ``ply`` plans a clock by the position's ply, ``thirty`` by a
    thirtieth of the time left; another value is answered in an info string and not taken; a
    ``movetime`` or ``movestogo`` plan is the same either way."""
    out = io.StringIO()
    engine = UciEngine(load_weights("classic").values, out=out)
    assert engine.time_plan == DEFAULT_TIME_PLAN == ("ply" if ClockPlanned.plan_by_ply else "thirty")
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"  # ply 4
    position = _Position(None, [], chess.Board(fen), None)
    clock = GoLimits(wtime=10000, btime=10000, winc=100, binc=100)
    engine.handle("setoption name TimePlan value ply")
    assert engine.plan(position, clock, True) == TimePlan.for_clock(10.0, 0.1, None, 0.03, ply=4)
    engine.handle("setoption name TimePlan value Thirty")
    assert engine.time_plan == "thirty"
    assert engine.plan(position, clock, True) == TimePlan.for_clock(10.0, 0.1, None, 0.03)
    assert engine.plan(position, clock, True) != TimePlan.for_clock(10.0, 0.1, None, 0.03, ply=4)
    engine.handle("setoption name TimePlan value sixty")
    assert "setoption TimePlan: 'sixty' is not one of ply, thirty; keeping thirty" in out.getvalue().splitlines()[-1]
    assert engine.time_plan == "thirty"
    for limits in (GoLimits(movetime=500), GoLimits(wtime=10000, btime=10000, movestogo=20)):
        by_thirty = engine.plan(position, limits, True)
        engine.handle("setoption name TimePlan value ply")
        assert engine.plan(position, limits, True) == by_thirty
        engine.handle("setoption name TimePlan value thirty")
    assert engine.plan(position, GoLimits(infinite=True), True) is None
    declared = next(option for option in OPTIONS if option.name == "TimePlan").declaration("")
    assert declared == f"option name TimePlan type combo default {DEFAULT_TIME_PLAN} var ply var thirty"


def test_the_games_ply_is_read_from_each_form_of_a_position() -> None:
    """``go`` plans by the ply of the position searched: python-chess's board, the search's
    board, or a FEN and moves still waiting for the kernels."""
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"  # ply 4
    board = chess.Board(fen)
    assert _game_ply(_Position(None, [], board, None)) == 4
    assert _game_ply(_Position(from_fen(fen), [], None, None)) == 4
    black = board.copy()
    black.push_uci("f1b5")
    assert _game_ply(_Position(from_fen(black.fen()), [], None, None)) == 5
    assert _game_ply(_Position(None, [], None, (fen, ["f1b5", "a7a6"]))) == 6
    assert _game_ply(_Position(None, [], None, ("8/8/8/8/8/8/8/K1k5 b - -", []))) == 1  # no counters: move 1
    assert _game_ply(_Position(None, [], None, ("8/8/8/8/8/8/8/K1k5 w - - 0 x", []))) is None
    assert _game_ply(_Position(None, [], None, None)) is None


def test_movetime_plan_keeps_a_margin_of_at_most_a_tenth() -> None:
    plan = GoLimits(movetime=1000).plan(True, 30)
    assert plan is not None and plan.fill and plan.soft == plan.hard == 0.97
    plan = GoLimits(movetime=100).plan(True, 30)
    assert plan is not None and plan.hard == 0.09  # the overhead would have eaten 30 % of it
    plan = GoLimits(movetime=1, wtime=5000).plan(True, 30)  # movetime wins over the clock
    assert plan is not None and plan.hard == 0.001
