"""``tuner uci`` on an empty numba cache (issue 43): python-chess with its default timeouts gets
its first move within the move's time, and the quick search that plays it (:mod:`tuner.quickmove`)
plays legal, sensible moves.

The engine tests run the real subprocess with ``NUMBA_CACHE_DIR`` set to a fresh folder (numba
then reads and writes every cached kernel there, so nothing is found): one case in the default
run (its background compilation is cut short by ``quit``), the network and the probability-
limited search marked ``slow``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import chess
import chess.engine
import pytest

from tuner.quickmove import MATE, MATE_BOUND, QuickResult, evaluate, quick_move, uci_score

REPO = Path(__file__).resolve().parents[2]
#: the issue's target for the first 1-s move (python-chess itself waits 11 s)
FIRST_MOVE_BELOW = 2.0


def _first_move_on_empty_cache(tmp_path: Path, weights: str, options: dict[str, str]) -> None:
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "tuner", "uci", "--weights", weights],
                                                 env=env, cwd=str(REPO))
    try:
        if options:
            engine.configure(options)
        board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4")
        start = time.perf_counter()
        result = engine.play(board, chess.engine.Limit(time=1.0), info=chess.engine.INFO_ALL)
        took = time.perf_counter() - start
        assert took < FIRST_MOVE_BELOW, f"first move after {took:.2f} s"
        assert result.move == chess.Move.from_uci("h5f7")  # the mate in one, legal
        assert "quick python-chess search" in str(result.info.get("string", ""))
        start = time.perf_counter()
        engine.ping()  # isready while numba compiles in the engine's other thread
        assert time.perf_counter() - start < 1.0
        with engine.analysis(board) as analysis:  # go infinite waits for the kernels ...
            time.sleep(0.2)
            start = time.perf_counter()
        assert time.perf_counter() - start < 1.0  # ... and stop answers at once, with the quick move
        assert analysis.wait().move == chess.Move.from_uci("h5f7")
    finally:
        start = time.perf_counter()
        engine.quit()  # does not wait for the compilation
        assert time.perf_counter() - start < 2.0


def test_first_move_on_an_empty_cache_comes_in_time(tmp_path: Path) -> None:
    """The issue: 43 s to the first move, python-chess's TimeoutError at 11 s, and quit() failing."""
    _first_move_on_empty_cache(tmp_path, "gm", {})


@pytest.mark.slow
@pytest.mark.parametrize(("weights", "options"), [("gm-nn", {}), ("gm", {"Search": "pls"})], ids=["gm-nn", "pls"])
def test_first_move_on_an_empty_cache_for_every_search(tmp_path: Path, weights: str,
                                                        options: dict[str, str]) -> None:
    _first_move_on_empty_cache(tmp_path, weights, options)


def _in(seconds: float) -> float:
    return time.perf_counter() + seconds


def test_quick_move_is_legal_from_many_positions() -> None:
    board = chess.Board()
    for uci in ("e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6", "b1c3", "a7a6"):
        result = quick_move(board, _in(0.05))
        assert result is not None and result.move in board.legal_moves
        board.push_uci(uci)
    assert board.fen() == chess.Board("rnbqkb1r/1p2pppp/p2p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R w KQkq - 0 6").fen()


def test_quick_move_takes_a_hanging_queen() -> None:
    board = chess.Board("rnb1kbnr/pppp1ppp/8/3q4/8/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 3")  # Nc3 takes d5
    result = quick_move(board, _in(0.5))
    assert result is not None and result.move == chess.Move.from_uci("c3d5") and result.score > 500


def test_quick_move_does_not_leave_its_queen_hanging() -> None:
    board = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/3qP3/2N2N2/PPPP1PPP/R1BQKB1R b KQkq - 3 4")  # Nf3 attacks d4
    result = quick_move(board, _in(0.5))
    assert result is not None and result.move.from_square == chess.D4


def test_quick_move_mates_in_one() -> None:
    for fen, mate in (("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", "a1a8"),
                      ("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", "h5f7"),
                      ("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "d8h4")):
        result = quick_move(chess.Board(fen), _in(1.0))
        assert result is not None and result.move.uci() == mate and result.score == MATE - 1
        assert uci_score(result.score) == "mate 1"


def test_quick_move_keeps_its_deadline_and_stop() -> None:
    board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9")
    start = time.perf_counter()
    result = quick_move(board, _in(0.2))
    assert time.perf_counter() - start < 0.4 and result is not None and result.depth >= 1
    stop = threading.Event()
    stop.set()
    start = time.perf_counter()
    result = quick_move(board, _in(10.0), stop=stop)
    assert time.perf_counter() - start < 0.2 and result is not None and result.move in board.legal_moves


def test_quick_move_plays_the_last_result_it_reports() -> None:
    """A depth cut by the clock after its first move was searched in full may change the move:
    that result is reported too (``partial``, a lower bound), so that the move played is always
    the last one reported (the engine's bestmove once differed from its last info line's)."""
    fens = ("r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9", chess.STARTING_FEN,
            "r2q1rk1/pp1bbppp/2n1pn2/3p4/2PP4/P1N1PN2/1P2BPPP/R2QKB1R w KQ - 1 10")
    runs = 0
    for fen in fens:
        for seconds in (0.01, 0.02, 0.04, 0.08, 0.16):
            reported: list[QuickResult] = []
            result = quick_move(chess.Board(fen), _in(seconds), on_depth=reported.append)
            assert result is not None
            if reported:
                assert result == reported[-1] or (not result.partial and result.move == reported[-1].move)
                runs += 1
    assert runs >= 10


def test_quick_move_without_legal_moves_and_its_scores() -> None:
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert quick_move(mated, _in(0.1)) is None
    assert evaluate(chess.Board()) == 0
    assert evaluate(chess.Board("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")) > 800
    assert evaluate(chess.Board("4k3/8/8/8/8/8/8/3QK3 b - - 0 1")) < -800
    assert uci_score(-MATE + 2) == "mate -1" and uci_score(12) == "cp 12" and MATE_BOUND < MATE


@pytest.mark.slow
def test_warmup_search_step_compiles_what_every_engine_plays_with(tmp_path: Path) -> None:
    """The issue: after ``tuner warmup --steps search`` a ``gm-nn`` engine still compiled. Now
    the step leaves nothing to compile for any built-in evaluator kind or search: the first move
    of each comes from the numba search, and no command says that it compiles."""
    import subprocess

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "tuner", "warmup", "--steps", "search"], env=env, cwd=str(REPO),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    for weights, options in (("gm", {}), ("gm-nn", {}), ("network:8x8x8", {}), ("gm", {"Search": "pls"})):
        engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "tuner", "uci", "--weights", weights],
                                                     env=env, cwd=str(REPO), stderr=subprocess.PIPE)
        try:
            if options:
                engine.configure(options)
            result = engine.play(chess.Board(), chess.engine.Limit(time=0.5), info=chess.engine.INFO_ALL)
            assert result.move is not None and "quick" not in str(result.info.get("string", "")), weights
        finally:
            engine.quit()


def test_quick_move_ahead_does_not_repeat_the_game() -> None:
    """Found playing a game on an empty cache: the quick search shuffled a king to a fivefold
    repetition; a repeated position of the game now scores a draw."""
    board = chess.Board("6k1/8/8/8/8/8/5PPP/3Q2K1 w - - 0 1")
    for uci in ("g1h1", "g8h8", "h1g1", "h8g8") * 2:
        board.push_uci(uci)
    result = quick_move(board, _in(0.5))
    assert result is not None
    board.push(result.move)
    assert not board.is_repetition(2)
