"""``tuner uci``: a full self-play game through python-chess's ``chess.engine``, garbage input,
clock handling and ``stop``, all against the real subprocess."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import chess
import chess.engine
import pytest

from tuner.uci import GoLimits, parse_go

UCI_COMMAND = [sys.executable, "-m", "tuner", "uci", "--weights", "classic"]  # (the default is nnue)
MIDDLE_GAME = "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9"
PLY_CAP = 300  # a self-play game that has not ended by then is stopped (and the test says so)


class RawEngine:
    """The engine subprocess driven line by line, with a reader thread and timeouts."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(UCI_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def expect(self, prefix: str, timeout: float = 30.0) -> tuple[str, list[str]]:
        """Read until a line starting with ``prefix``; return it and the lines before it."""
        before: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {prefix!r} within {timeout} s; got {before}") from None
            if line.startswith(prefix):
                return line, before
            before.append(line)

    def close(self) -> int:
        self.send("quit")
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def started_engine(load: tuple[str, ...] = ()) -> Iterator[RawEngine]:
    """An engine process after the ``uci`` handshake, for a module's tests (starting Python and
    numba takes seconds); it must survive them all and exit cleanly on ``quit``. ``load``: the
    ``Search`` values whose kernels are loaded first, the last one left set. On a cold numba
    cache (a fresh clone, or any change under ``search/``, which drops the cache) they compile
    then, so that the tests' timeouts time searches, not compiling; the engine has searched the
    start position (``go depth 1``) once for each."""
    engine = RawEngine()
    engine.send("uci")
    engine.expect("uciok")
    for search in load:
        engine.send(f"setoption name Search value {search}")
        engine.send("position startpos")
        engine.send("go depth 1")  # (without a clock, a go waits for the kernels)
        engine.expect("bestmove", timeout=900)
    yield engine
    assert engine.proc.poll() is None, "the engine died during the tests"
    assert engine.close() == 0


@pytest.fixture(scope="module")
def shared_engine() -> Iterator[RawEngine]:
    yield from started_engine(load=("play",))


@pytest.fixture
def raw_engine(shared_engine: RawEngine) -> RawEngine:
    shared_engine.send("ucinewgame")
    shared_engine.send("isready")
    shared_engine.expect("readyok")
    return shared_engine


def test_full_self_play_game_through_chess_engine() -> None:
    import chess.polyglot

    from search.tree.search_api import mate_in, search
    from search.core.convert import from_chess
    from search.evaluation.evaluation_api import EVAL_SCALE
    from search.params.weights import load_weights

    classic = load_weights("classic").values
    board = chess.Board()
    compared = 0
    with chess.engine.SimpleEngine.popen_uci(UCI_COMMAND, timeout=60) as engine:
        assert engine.id["name"].startswith("movetuner")
        assert "Weights" in engine.options and "Hash" in engine.options
        engine.configure({"Hash": 4, "Search": "exact"})  # its scores are the exact search's (an oracle)
        while not board.is_game_over(claim_draw=True) and board.ply() < PLY_CAP:
            # alternate fixed-depth and node-limited searches
            by_depth = board.ply() % 2 == 0
            limit = chess.engine.Limit(depth=2) if by_depth else chess.engine.Limit(nodes=3000)
            result = engine.play(board, limit, info=chess.engine.INFO_ALL)
            assert result.move is not None and result.move in board.legal_moves, (board.fen(), result.move)
            info = result.info
            assert info["depth"] >= 1 and info["nodes"] >= 1 and "score" in info
            pv_board = board.copy()
            for move in info["pv"]:  # the reported principal variation is a legal line
                assert move in pv_board.legal_moves
                pv_board.push(move)
            if by_depth:
                # the reported score is the search's at the reported depth, with the game as
                # history, from the side to move's view (the engine's hash orders moves only)
                history = []
                replay = chess.Board()
                for move in board.move_stack:
                    history.append(chess.polyglot.zobrist_hash(replay))
                    replay.push(move)
                units = search(from_chess(board), info["depth"], classic, history=history).score
                plies = mate_in(units)
                if plies is None:
                    expected: chess.engine.Score = chess.engine.Cp(int(round(units / EVAL_SCALE)))
                else:
                    expected = chess.engine.Mate((plies + 1) // 2 if plies > 0 else -((-plies + 1) // 2))
                assert info["score"].relative == expected, board.fen()
                compared += 1
            board.push(result.move)
    assert board.ply() > 20 and compared == (board.ply() + 1) // 2


def test_garbage_lines_answer_info_string_and_engine_still_plays(raw_engine: RawEngine) -> None:
    garbage = [  # (malformed go commands now search with clamped limits: tests/tuner/test_uci_limits.py)
        "hello world",
        "position",
        "position fen not a fen at all",
        "position startpos moves e2e5",
        "position startpos moves e2e4 zz",
        "setoption name Weights value /no/such/weights.json",
        "setoption name Hash value lots",
        "setoption name Nonsense value 3",
        "setoption",
        "\x00\x01 binary \u2603",
    ]
    for line in garbage:
        raw_engine.send(line)
    raw_engine.send("isready")
    _, before = raw_engine.expect("readyok")
    infos = [line for line in before if line.startswith("info string")]
    assert len(infos) == len(garbage), before
    assert any("/no/such/weights.json" in line and "keeping classic" in line for line in infos)
    assert not any(line.startswith("bestmove") for line in before)
    moves = ["e2e4", "e7e5", "g1f3", "b8c6"]
    raw_engine.send("position startpos moves " + " ".join(moves))
    raw_engine.send("go depth 3")
    line, before = raw_engine.expect("bestmove")
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    assert chess.Move.from_uci(line.split()[1]) in board.legal_moves
    assert any(b.startswith("info depth 3 ") and " pv " in b for b in before)
    assert raw_engine.proc.poll() is None


def test_clock_10s_plus_0_1s_answers_in_time(raw_engine: RawEngine) -> None:
    fen = MIDDLE_GAME
    raw_engine.send(f"position fen {fen}")
    start = time.monotonic()
    raw_engine.send("go wtime 10000 btime 10000 winc 100 binc 100")
    line, before = raw_engine.expect("bestmove", timeout=10)
    elapsed = time.monotonic() - start
    assert chess.Move.from_uci(line.split()[1]) in chess.Board(fen).legal_moves
    assert elapsed < 1.5, elapsed  # the plan's hard limit is 1.2 s at this clock
    assert any(b.startswith("info depth") for b in before)


def test_short_clock_game_never_flags(raw_engine: RawEngine) -> None:
    """Twelve plies at 1 s + 0.1 s per side, clocks run on wall time as a GUI would."""
    board = chess.Board()
    clock = {chess.WHITE: 1000.0, chess.BLACK: 1000.0}
    for _ in range(12):
        raw_engine.send("position startpos moves " + " ".join(m.uci() for m in board.move_stack))
        start = time.monotonic()
        raw_engine.send(f"go wtime {int(clock[chess.WHITE])} btime {int(clock[chess.BLACK])} winc 100 binc 100")
        line, _ = raw_engine.expect("bestmove", timeout=5)
        clock[board.turn] -= 1000 * (time.monotonic() - start)
        assert clock[board.turn] > 0, f"lost on time at ply {board.ply()}"
        clock[board.turn] += 100
        move = chess.Move.from_uci(line.split()[1])
        assert move in board.legal_moves
        board.push(move)


def test_stop_ends_infinite_search(raw_engine: RawEngine) -> None:
    """``go infinite`` answers only at ``stop``, with a legal move. (How soon after ``stop`` is a
    matter of the machine's load, not asserted here: an infinite search that ignored ``stop``
    would miss the 5-s wait by the whole of it.)"""
    raw_engine.send("position startpos moves d2d4 d7d5 c2c4")
    raw_engine.send("go infinite")
    time.sleep(0.5)
    raw_engine.send("isready")
    _, before = raw_engine.expect("readyok", timeout=5)
    assert not any(b.startswith("bestmove") for b in before)  # still searching
    raw_engine.send("stop")
    line, before = raw_engine.expect("bestmove", timeout=5)
    assert not any(b.startswith("bestmove") for b in before)
    board = chess.Board()
    for m in ("d2d4", "d7d5", "c2c4"):
        board.push_uci(m)
    assert chess.Move.from_uci(line.split()[1]) in board.legal_moves


def test_a_position_or_option_sent_while_searching_stops_the_search_and_is_not_lost(raw_engine: RawEngine) -> None:
    """``position`` (or ``setoption``, ``ucinewgame``) during a search stops it first, as ``go``
    does: the search answers a move legal where it searched, and the next ``go`` searches the new
    position. (It used to be ignored with an ``info string``, and the next ``go`` searched the old
    position: Black's move after 1. e4 as White's answer to 1. d4 d5.)"""
    after_e4 = chess.Board()
    after_e4.push_uci("e2e4")
    after_d4_d5 = chess.Board()
    for m in ("d2d4", "d7d5"):
        after_d4_d5.push_uci(m)
    raw_engine.send("position startpos moves e2e4")
    # each command during a go infinite, and the position the stopped search had to answer in
    cases = [("position startpos moves d2d4 d7d5", after_e4), ("setoption name Hash value 8", after_d4_d5),
             ("ucinewgame", after_d4_d5)]
    for command, searched in cases:
        raw_engine.send("go infinite")
        time.sleep(0.3)
        raw_engine.send(command)
        line, before = raw_engine.expect("bestmove", timeout=10)
        assert f"info string {command.split()[0]} while searching: the search stops first" in before
        assert chess.Move.from_uci(line.split()[1]) in searched.legal_moves
    raw_engine.send("go depth 3")
    line, before = raw_engine.expect("bestmove", timeout=30)
    assert not any("while searching" in b for b in before)
    assert chess.Move.from_uci(line.split()[1]) in after_d4_d5.legal_moves
    raw_engine.send("setoption name Hash value 16")
    raw_engine.send("isready")
    _, before = raw_engine.expect("readyok")
    assert not any("while searching" in b for b in before)


def test_mated_side_answers_null_move(raw_engine: RawEngine) -> None:
    raw_engine.send("position startpos moves f2f3 e7e5 g2g4 d8h4")  # fool's mate: White is mated
    raw_engine.send("go depth 2")
    line, _ = raw_engine.expect("bestmove")
    assert line == "bestmove 0000"


def test_parse_go() -> None:
    limits, notes = parse_go("wtime 1000 btime -20 winc 10 binc 0 movestogo 5".split())
    assert limits == GoLimits(wtime=1000, btime=-20, winc=10, binc=0, movestogo=5)
    assert notes == []
    limits, notes = parse_go(["ponder", "depth", "4"])
    assert limits.depth == 4 and limits.ponder and notes == []
    for bad in (["depth"], ["depth", "x"], ["nodes", "0"], ["frobnicate"]):  # clamped or ignored, with a note
        limits, notes = parse_go(bad)
        assert len(notes) == 1 and limits.depth in (None, 1) and limits.nodes in (None, 1)
    plan = GoLimits(wtime=10000, btime=10000, winc=100, binc=100).plan(True, 30)
    assert plan is not None and 0 < plan.soft <= plan.hard <= (10000 - 30) / 3000
    tiny = GoLimits(wtime=50, btime=50, winc=0, binc=0).plan(False, 30)
    assert tiny is not None and tiny.hard < 0.05


def test_while_kernels_compile_the_handshake_and_a_timed_go_do_not_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28 made ``isready`` wait for the kernels (44 s on an empty cache), longer than
    python-chess waits; issue 43: ``isready`` answers at once, a timed ``go`` is answered by the
    quick search within its time, saying so, and a ``go depth`` waits for the kernels, saying
    that they compile (the warm-up is held here by an event instead of numba)."""
    import io

    import tuner.uci as uci
    from search.params.weights import load_weights

    release = threading.Event()
    monkeypatch.setattr(uci.UciEngine, "_warm_up", lambda self, after=None, boundary=False: release.wait(30))
    monkeypatch.setattr(uci.UciEngine, "_compiling", lambda self: True)
    out = io.StringIO()
    engine = uci.UciEngine(load_weights("classic").values, out=out)
    engine.handle("uci")
    assert out.getvalue().endswith("uciok\n")
    engine.handle("isready")
    assert out.getvalue().endswith("readyok\n")
    engine.handle("position startpos moves e2e4 e7e5 d1h5 b8c6 f1c4 g8f6")  # python-chess reads it
    started = time.perf_counter()
    engine.handle("go movetime 300")
    while "bestmove" not in out.getvalue() and time.perf_counter() - started < 5:
        time.sleep(0.01)
    assert time.perf_counter() - started < 1.0
    text = out.getvalue()
    assert f"info string {uci.QUICK_INFO}" in text and text.endswith("bestmove h5f7\n")  # the mate
    engine.handle("go depth 2")
    time.sleep(0.2)
    assert out.getvalue().endswith(f"info string {uci.COMPILING_INFO}\n")
    release.set()
    engine._worker.join(600)  # (the warm-up is held, not run: a cold cache compiles here)
    assert out.getvalue().count("bestmove") == 2 and "bestmove h5f7" in out.getvalue().splitlines()[-1]
    assert out.getvalue().count(uci.QUICK_INFO) == 1


def test_a_position_never_waits_for_kernels_that_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 58 item 12: ``position`` waited for the kernels that convert it while they loaded
    from the cache, so the ``go`` after it was read (and its clock started) up to 470 ms late on
    a warm cache; now python-chess reads the position until they are loaded, and the timed ``go``
    is answered by the quick search within its time, saying that the kernels load."""
    import io

    import tuner.uci as uci
    from search.params.weights import load_weights

    release = threading.Event()
    monkeypatch.setattr(uci.UciEngine, "_warm_up", lambda self, after=None, boundary=False: release.wait(30))
    monkeypatch.setattr(uci.UciEngine, "_compiling", lambda self: False)  # loading from the cache
    out = io.StringIO()
    engine = uci.UciEngine(load_weights("classic").values, out=out)
    try:
        started = time.perf_counter()
        engine.handle("position startpos moves e2e4 e7e5 d1h5 b8c6 f1c4 g8f6")
        assert time.perf_counter() - started < 0.2 and engine.board is None and engine.chess_board is not None
        engine.handle("go movetime 200")
        while "bestmove" not in out.getvalue() and time.perf_counter() - started < 5:
            time.sleep(0.005)
        assert time.perf_counter() - started < 1.0
        text = out.getvalue()
        assert f"info string {uci.QUICK_LOADING_INFO}" in text and uci.QUICK_INFO not in text
        assert text.endswith("bestmove h5f7\n")
    finally:
        release.set()


def test_isready_waits_for_kernels_that_load_from_the_cache_but_not_for_a_compile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Wave five, found in a match against Stockfish at 100 ms a move: ``readyok`` came at once
    while the kernels loaded from the cache (about 0.7 s), so the runner's first ``go`` of each
    engine process was answered by the quick search (depth 1, a lost rook in one game). Now
    ``isready`` waits for a load (up to ``_READY_LOAD_WAIT``), never for a compile."""
    import io

    import tuner.uci as uci
    from search.params.weights import load_weights

    release = threading.Event()
    monkeypatch.setattr(uci.UciEngine, "_warm_up", lambda self, after=None, boundary=False: release.wait(30))
    compiling = [False]
    monkeypatch.setattr(uci.UciEngine, "_compiling", lambda self: compiling[0])
    out = io.StringIO()
    engine = uci.UciEngine(load_weights("classic").values, out=out)
    engine.handle("uci")
    threading.Timer(0.3, release.set).start()
    started = time.perf_counter()
    engine.handle("isready")  # loading: answered once the load ends
    assert 0.25 < time.perf_counter() - started < 3 and out.getvalue().endswith("readyok\n")
    assert not engine.kernels_loading()

    held = threading.Event()  # a second engine whose load never ends: readyok after the cap
    monkeypatch.setattr(uci.UciEngine, "_warm_up", lambda self, after=None, boundary=False: held.wait(30))
    monkeypatch.setattr(uci, "_READY_LOAD_WAIT", 0.2)
    out = io.StringIO()
    engine = uci.UciEngine(load_weights("classic").values, out=out)
    try:
        engine.handle("uci")
        started = time.perf_counter()
        engine.handle("isready")
        assert 0.15 < time.perf_counter() - started < 2 and out.getvalue().endswith("readyok\n")
        compiling[0] = True  # compiling: at once
        monkeypatch.setattr(uci, "_READY_LOAD_WAIT", 20.0)
        started = time.perf_counter()
        engine.handle("isready")
        assert time.perf_counter() - started < 0.15 and out.getvalue().endswith("readyok\nreadyok\n")
        assert engine.kernels_loading()
    finally:
        held.set()


@pytest.mark.parametrize(("fen", "expected"), [
    ("8/8/8/8/8/8/8/K6k w - - 0 99999999999999999999", "read as"),
    ("qqqqkqqq/qqqqqqqq/8/8/8/8/QQQQQQQQ/QQQQKQQQ w - - 0 1", "quick python-chess search"),
])
def test_a_position_read_while_kernels_load_that_the_search_refuses_still_gets_a_legal_move(
        monkeypatch: pytest.MonkeyPatch, fen: str, expected: str) -> None:
    """Probe finding (issue 58 re-run): a position python-chess read while the kernels loaded,
    which the search's rules then refused at the go, was answered bestmove 0000 (legal moves
    there); now as when the search reads it at once (counters cut, or the quick search)."""
    import io

    import tuner.uci as uci
    from search.params.weights import load_weights

    release = threading.Event()
    original = uci.UciEngine._warm_up

    def held(self: uci.UciEngine, after: threading.Thread | None = None, *, boundary: bool = False) -> None:
        release.wait(30)
        original(self, after, boundary=boundary)

    monkeypatch.setattr(uci.UciEngine, "_warm_up", held)
    out = io.StringIO()
    engine = uci.UciEngine(load_weights("classic").values, out=out)
    try:
        engine.handle(f"position fen {fen}")
        assert engine.board is None and engine._pending is not None  # read by python-chess
    finally:
        release.set()
    engine._warmup.join(60)
    while engine.kernels_loading():
        engine._warmup.join(1)
    engine.handle("go nodes 300")
    started = time.perf_counter()
    while "bestmove" not in out.getvalue() and time.perf_counter() - started < 30:
        time.sleep(0.01)
    text = out.getvalue()
    move = text.split("bestmove ")[-1].split()[0]
    assert chess.Move.from_uci(move) in chess.Board(fen).legal_moves, text
    assert expected in text and "null move" not in text, text


def test_the_collector_is_paused_while_kernels_load_then_frozen() -> None:
    """Issue 58 item 12: full collections over the objects numba makes while it compiles
    stopped every thread for 95-250 ms (the quick search's late moves); the warm-up runs with
    the collector off and freezes what it made."""
    import gc

    from tuner.uci import _collector_paused

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with _collector_paused():
            assert not gc.isenabled()
            made = [[k] for k in range(1000)]
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(made)
    finally:
        gc.unfreeze()
    with pytest.raises(RuntimeError), _collector_paused():
        raise RuntimeError("a failed warm-up")
    assert gc.isenabled()
    gc.unfreeze()


def test_isready_with_the_kernels_loaded_says_nothing_more() -> None:
    import io

    from search.core.convert import from_fen
    from search.tree.iterative import Searcher
    from search.params.weights import load_weights
    from tuner.uci import UciEngine

    weights = load_weights("classic").values
    Searcher(weights, tt_bits=4).think(from_fen(chess.STARTING_FEN), [], max_depth=1)  # compiled or loaded
    out = io.StringIO()
    engine = UciEngine(weights, out=out)
    engine.handle("isready")
    assert out.getvalue() == "readyok\n"


def test_the_clear_hash_button_empties_the_table_and_is_declared_as_a_button() -> None:
    import io

    import numpy as np

    from search.params.weights import load_weights
    from search.play.searcher import PlaySearcher
    from tuner.uci import UciEngine

    out = io.StringIO()
    engine = UciEngine(load_weights("classic").values, out=out)
    engine.handle("uci")
    assert "option name Clear Hash type button" in out.getvalue().splitlines()
    engine.handle("position startpos moves e2e4")
    engine.handle("go depth 6")
    deadline = time.monotonic() + 120  # (a depth limit waits for the kernels)
    while "bestmove" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    searcher = engine.searcher
    assert isinstance(searcher, PlaySearcher) and np.count_nonzero(searcher.state.tt) > 0
    assert np.count_nonzero(searcher.state.history) > 0
    engine.handle("setoption name Clear Hash")
    assert np.count_nonzero(searcher.state.tt) == 0 and np.count_nonzero(searcher.state.history) == 0
    assert "info string setoption" not in out.getvalue()  # nothing refused
    engine.handle("quit")
