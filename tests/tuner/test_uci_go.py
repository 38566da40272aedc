"""``tuner uci``: every ``go`` gets exactly one ``bestmove`` (issue 45, item 3), whatever its
limits: a side to move without its clock, clock parameters without any time, ``mate N``, and
a ``go`` sent while a search runs. Each test drives the real subprocess and counts the
``bestmove`` lines up to a sentinel search, so that a lost or an extra answer fails."""

from __future__ import annotations

import time
from collections.abc import Iterator

import chess
import pytest
from tests.tuner.test_uci import RawEngine, started_engine

from tuner.uci import MISSING_CLOCK_MOVETIME_MS, GoLimits, parse_go, root_moves

#: White mates in two, and only with 1. Kc7 (checked with python-chess when the test was written)
MATE_IN_TWO = "k7/8/2K5/8/8/8/8/1R6 w - - 0 1"


@pytest.fixture(scope="module")
def engine() -> Iterator[RawEngine]:
    yield from started_engine(load=("exact", "play"))


def _answers(engine: RawEngine, count: int, timeout: float = 30.0) -> list[list[str]]:
    """The next ``count`` searches' output: for each, its lines up to and including its
    ``bestmove``; then a sentinel ``go depth 1`` must be the very next answer (no extra one)."""
    searches = []
    for _ in range(count):
        line, before = engine.expect("bestmove", timeout=timeout)
        searches.append([*before, line])
    engine.send("isready")
    engine.expect("readyok")
    engine.send("position startpos moves g1f3")
    engine.send("go depth 1")
    _, before = engine.expect("bestmove", timeout=timeout)
    assert not any(b.startswith("bestmove") for b in before), before
    return searches


def _board(moves: str = "", fen: str = chess.STARTING_FEN) -> chess.Board:
    board = chess.Board(fen)
    for m in moves.split():
        board.push_uci(m)
    return board


def _move(search: list[str]) -> chess.Move:
    return chess.Move.from_uci(search[-1].split()[1])


def test_a_side_to_move_without_its_clock_plays_on_the_other_sides(engine: RawEngine) -> None:
    """Issue 45: ``go wtime 1000 winc 0`` with Black to move waited for ``stop`` for ever."""
    engine.send("position startpos moves e2e4")
    engine.send("go wtime 1000 winc 0")
    (search,) = _answers(engine, 1, timeout=10)
    assert "info string go: no btime for Black to move; using wtime 1000 as its clock" in search
    assert _move(search) in _board("e2e4").legal_moves


def test_clock_parameters_without_any_time_search_the_default_movetime(engine: RawEngine) -> None:
    """Issue 45: ``go movestogo 5`` alone waited for ``stop`` for ever."""
    engine.send("position startpos moves d2d4")
    engine.send("go movestogo 5")
    (search,) = _answers(engine, 1, timeout=10)
    assert f"info string go: no wtime or btime; searching movetime {MISSING_CLOCK_MOVETIME_MS}" in search
    assert _move(search) in _board("d2d4").legal_moves


@pytest.mark.parametrize(("search", "deepest"), [("exact", 3), ("play", 16)])
def test_go_mate_finds_the_mate_and_answers(engine: RawEngine, search: str, deepest: int) -> None:
    """``go mate 2`` ends at the mate and plays its only first move: the exact search within 3
    plies, the playing search (which reduces the quiet 1. Kc7) within its 4 x 2 + 8."""
    engine.send(f"setoption name Search value {search}")
    engine.send(f"position fen {MATE_IN_TWO}")
    engine.send("go mate 2")
    (lines,) = _answers(engine, 1)
    engine.send("setoption name Search value play")
    depths = [int(line.split()[2]) for line in lines if line.startswith("info depth")]
    assert depths and max(depths) <= deepest, lines
    assert " score mate 2 " in [line for line in lines if line.startswith("info depth")][-1], lines
    assert lines[-1].split()[1] == "c6c7"


@pytest.mark.parametrize(("search", "last"), [("exact", 5), ("play", 20)])
def test_go_mate_without_a_mate_stops_at_its_depth(engine: RawEngine, search: str, last: int) -> None:
    """Issue 45: ``go mate 3`` was searched as a search without limits: no answer until stop.
    The exact search stops at 2 x 3 - 1 plies, the playing search at 4 x 3 + 8."""
    engine.send(f"setoption name Search value {search}")
    engine.send("position startpos")
    engine.send("go mate 3")
    (lines,) = _answers(engine, 1)
    engine.send("setoption name Search value play")
    depths = [int(line.split()[2]) for line in lines if line.startswith("info depth")]
    assert depths[-1] == last, lines
    assert _move(lines) in chess.Board().legal_moves


def test_go_while_searching_answers_the_running_search_first(engine: RawEngine) -> None:
    """Issue 45: ``go infinite``, ``go depth 1``, ``stop`` gave one bestmove for two gos. Now the
    second ``go`` stops the first (which answers), then searches and answers itself."""
    engine.send("position startpos moves e2e4 c7c5")
    engine.send("go infinite")
    engine.expect("info depth 3")  # the first search is well under way
    engine.send("go depth 1")
    engine.send("stop")
    first, second = _answers(engine, 2)
    board = _board("e2e4 c7c5")
    assert _move(first) in board.legal_moves and _move(second) in board.legal_moves
    assert not any(line.startswith(("info depth 1 ", "info depth 2 ")) for line in first), first
    assert [line.split()[2] for line in second if line.startswith("info depth")] == ["1"], second


def test_a_burst_of_gos_gets_one_answer_each_in_order(engine: RawEngine) -> None:
    """Issue 45: 200 ``go nodes 1`` in a row gave one bestmove."""
    engine.send("position startpos moves d2d4 g8f6")
    for _ in range(200):
        engine.send("go nodes 1")
    searches = _answers(engine, 200, timeout=60)
    board = _board("d2d4 g8f6")
    assert len(searches) == 200 and all(_move(s) in board.legal_moves for s in searches)


def test_a_timed_search_interrupted_by_go_answers_twice(engine: RawEngine) -> None:
    engine.send("position startpos moves e2e4 e7e5")
    engine.send("go movetime 5000")
    engine.expect("info depth 2")
    engine.send("go depth 2")
    first, second = _answers(engine, 2)
    assert not any(line.startswith(("info depth 1 ", "info depth 2 ")) for line in first), first
    board = _board("e2e4 e7e5")
    assert _move(first) in board.legal_moves and _move(second) in board.legal_moves
    assert [line.split()[2] for line in second if line.startswith("info depth")] == ["1", "2"], second


def test_go_mate_limits_the_depth() -> None:
    assert parse_go(["mate", "3"]) == (GoLimits(mate=3), [])
    assert GoLimits(mate=3).max_depth() == 5 and GoLimits(mate=3, depth=2).max_depth() == 2
    assert GoLimits(mate=3).play_max_depth() == 20 and GoLimits(mate=3, depth=2).play_max_depth() == 2
    assert GoLimits(mate=30).play_max_depth() == GoLimits().play_max_depth() == GoLimits().max_depth()
    limits, notes = parse_go(["mate", "0"])
    assert limits.mate == 1 and notes == ["go: mate 0 is out of range; using mate 1"]
    assert not GoLimits(mate=1).unbounded() and GoLimits().unbounded() and GoLimits(depth=3, infinite=True).unbounded()


def test_a_missing_clock_is_filled_only_when_nothing_else_limits() -> None:
    limits, note = GoLimits(wtime=1000).for_side(False)
    assert limits == GoLimits(wtime=1000, btime=1000) and note is not None and "using wtime 1000" in note
    limits, note = GoLimits(btime=700, binc=50).for_side(True)
    assert limits.wtime == 700 and limits.winc == 0 and note is not None
    limits, note = GoLimits(movestogo=5).for_side(True)
    assert limits == GoLimits(movestogo=5, movetime=MISSING_CLOCK_MOVETIME_MS) and note is not None
    for given in (GoLimits(movestogo=5, depth=4), GoLimits(wtime=100, btime=90), GoLimits(depth=3),
                  GoLimits(movetime=50, winc=10), GoLimits(infinite=True, winc=10)):
        assert given.for_side(True) == (given, None)
    plan = GoLimits(wtime=1000, btime=1000).plan(False, 30)
    assert plan is not None and 0 < plan.soft <= plan.hard <= (1000 - 30) / 3000


@pytest.mark.parametrize(("go", "partial", "kind"), [
    ("go nodes 300000", True, "exact"), ("go nodes 150000", False, "exact"), ("go movetime 300", None, "exact"),
    ("go wtime 3000 btime 3000", None, "exact"), ("go nodes 300000", None, "play"), ("go movetime 300", None, "play"),
    ("go wtime 3000 btime 3000", None, "play")])
def test_bestmove_is_the_first_move_of_the_last_reported_pv(engine: RawEngine, go: str, partial: bool | None,
                                                           kind: str) -> None:
    """Issue 43: a cut iteration now gives the move once its first root move was searched in
    full; it is reported (``score ... lowerbound``) before the bestmove that plays it. With an
    empty table the node limits are deterministic: at 300,000 nodes depth 6 is cut after some
    of its root moves (kept), at 150,000 before its first one ended (discarded: depth 5 plays,
    and a last ``info nodes`` line counts the 150,000)."""
    fen = "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9"
    engine.send(f"setoption name Search value {kind}")  # the exact search's node counts, pinned above
    engine.send("ucinewgame")
    engine.send(f"position fen {fen}")
    engine.send(go)
    (search,) = _answers(engine, 1)
    engine.send("setoption name Search value play")
    infos = [line.split() for line in search if line.startswith("info depth")]
    assert infos, search
    last = infos[-1]
    assert search[-1].split()[1] == last[last.index("pv") + 1]
    assert all("lowerbound" not in words for words in infos[:-1])  # only a last, cut iteration
    assert _move(search) in chess.Board(fen).legal_moves
    if partial is not None:
        assert ("lowerbound" in last) is partial and last[2] == ("6" if partial else "5"), search
        assert search[-2].startswith("info nodes 150000 ") if not partial else " nodes 300000 " in search[-2], search


def test_searchmoves_are_parsed_up_to_the_next_parameter() -> None:
    limits, notes = parse_go("searchmoves e2e4 d2d4 depth 5".split())
    assert limits.searchmoves == ("e2e4", "d2d4") and limits.depth == 5 and notes == []
    limits, notes = parse_go("depth 3 searchmoves infinite".split())
    assert limits.searchmoves == () and limits.infinite
    assert notes == ["go: searchmoves names no move; searching all moves"]


def test_root_moves_keep_the_legal_ones_in_order_once_each() -> None:
    legal = {"e2e4": 1, "d2d4": 2, "g1f3": 3}
    assert root_moves(["d2d4", "e2e4", "d2d4"], legal) == ([2, 1], [])
    assert root_moves(["e2e5", "g1f3"], legal) == ([3], ["go: searchmoves: 'e2e5' is not a legal move here; ignored"])
    assert root_moves(["x"], legal) == ([], ["go: searchmoves: 'x' is not a legal move here; ignored",
                                             "go: searchmoves names no legal move; searching all moves"])


def test_go_searchmoves_plays_and_reports_only_those_moves(engine: RawEngine) -> None:
    """UCI's ``searchmoves`` (it used to be noted and ignored: the engine answered any move):
    the playing search's lines and ``bestmove`` keep to the legal moves named, a word that is
    not one is noted; with none legal, or with the exact search, every move is searched."""
    allowed = {chess.Move.from_uci(m) for m in ("a7a6", "h7h6")}
    engine.send("position startpos moves e2e4")
    engine.send("go depth 8 searchmoves a7a6 e2e4 h7h6")
    (search,) = _answers(engine, 1, timeout=120)  # (the kernels may still be compiling)
    assert "info string go: searchmoves: 'e2e4' is not a legal move here; ignored" in search
    pvs = [line.split(" pv ")[1].split()[0] for line in search if line.startswith("info depth")]
    assert len(pvs) >= 8 and {chess.Move.from_uci(m) for m in pvs} <= allowed
    assert _move(search) in allowed
    engine.send("go depth 2 searchmoves zz")
    (search,) = _answers(engine, 1)
    assert "info string go: searchmoves names no legal move; searching all moves" in search
    assert _move(search) in _board("e2e4").legal_moves
    engine.send("setoption name Search value exact")
    engine.send("go depth 2 searchmoves a7a6")
    (search,) = _answers(engine, 1)
    assert any("only the play search keeps to searchmoves" in line for line in search)
    engine.send("setoption name Search value play")


def test_go_ponder_is_parsed_as_a_search_without_an_end() -> None:
    limits, notes = parse_go("ponder wtime 1000 btime 1000".split())
    assert limits.ponder and limits.unbounded() and limits.wtime == 1000 and notes == []
    assert limits.for_side(True) == (limits, None)


def test_go_ponder_waits_for_ponderhit_then_keeps_to_the_clock(engine: RawEngine) -> None:
    """``go ponder`` (it used to be searched as a plain go, whose bestmove came while the GUI
    still counted the engine as pondering): no answer while pondering, however long; after
    ``ponderhit`` one ``bestmove`` within the clock's share, counted from the ponderhit; ``stop``
    while pondering answers at once; a ``ponderhit`` without pondering is noted."""
    engine.send("setoption name Ponder value true")
    engine.send("setoption name Ponder value maybe")
    engine.send("position startpos moves e2e4 e7e5")
    engine.send("go ponder wtime 2000 btime 2000")
    time.sleep(1.0)  # a 2-second clock gives a move far less than this
    engine.send("isready")
    _, before = engine.expect("readyok", timeout=30)
    assert "info string setoption Ponder: 'maybe' is not true or false; keeping true" in before
    assert not any(line.startswith("bestmove") for line in before), before
    hit = time.monotonic()
    engine.send("ponderhit")
    (search,) = _answers(engine, 1, timeout=10)
    assert time.monotonic() - hit < 1.0  # a 2 s clock's move, not a pondering search's
    assert _move(search) in _board("e2e4 e7e5").legal_moves
    engine.send("position startpos moves e2e4 e7e5")  # (the sentinel search of _answers moved it)
    engine.send("go ponder wtime 2000 btime 2000")
    time.sleep(0.3)
    engine.send("stop")
    (search,) = _answers(engine, 1, timeout=10)
    assert _move(search) in _board("e2e4 e7e5").legal_moves
    engine.send("ponderhit")
    engine.send("isready")
    _, before = engine.expect("readyok", timeout=10)
    assert "info string ponderhit: no search is pondering; ignored" in before


def test_multipv_reports_ranked_lines_of_distinct_moves(engine: RawEngine) -> None:
    """The ``MultiPV`` option: each depth's ``info`` lines carry ``multipv 1..k`` with k distinct
    first moves, and ``bestmove`` is line 1's; the exact search says it gives one line."""
    engine.send("setoption name MultiPV value 3")
    engine.send("position startpos moves e2e4 e7e5")
    engine.send("go depth 7")
    (search,) = _answers(engine, 1, timeout=120)
    infos = [line.split() for line in search if line.startswith("info depth 7 ")]
    assert [words[words.index("multipv") + 1] for words in infos] == ["1", "2", "3"], search
    firsts = [words[words.index("pv") + 1] for words in infos]
    assert len(set(firsts)) == 3 and _move(search) == chess.Move.from_uci(firsts[0])
    engine.send("setoption name Search value exact")
    engine.send("go depth 2")
    (search,) = _answers(engine, 1)
    assert any("MultiPV 3: the exact search gives one line" in line for line in search)
    engine.send("setoption name Search value play")
    engine.send("setoption name MultiPV value 1")
