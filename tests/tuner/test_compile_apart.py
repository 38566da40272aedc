"""``tuner.compile_apart``: the engine's kernels compiled in a child process (issue 58 item 12:
compiling in the engine's own process held its interpreter lock, and the quick search's answers
to ``go movetime 100`` on a cold cache came up to 485 ms late), and ``tuner uci``'s warm-up
sending a cold cache's compilation there."""

from __future__ import annotations

import io
import pickle
import threading
import time
from pathlib import Path

import pytest

import tuner.uci as uci
from search.params.weights import load_weights
from tuner.compile_apart import KernelChild, load_engine_kernels, main
from tuner.compiling import CompileRefused, _REFUSING


def test_the_child_runs_the_kernels_of_a_pickled_player(tmp_path: Path) -> None:
    """The child's own code, run here: it reads the pickled player and runs its kernels."""
    weights = load_weights("classic").values
    path = tmp_path / "player.pickle"
    path.write_bytes(pickle.dumps(weights))
    assert main([str(path)]) == 0
    assert main([]) == 2


def test_a_failing_child_says_why_in_one_line() -> None:
    started = time.perf_counter()
    problem = KernelChild().compile("not a player")  # the child cannot search with it
    assert problem is not None and problem.startswith("the child compiling the kernels exited with status 1")
    assert "\n" not in problem and time.perf_counter() - started < 60


def test_a_child_over_its_time_is_stopped_and_none_starts_after_stop() -> None:
    child = KernelChild()
    problem = child.compile(load_weights("classic").values, timeout=0.05)
    assert problem == "the child compiling the kernels ran over 0 s and was stopped"
    # a child stopped for its time is not the engine quitting: the next warm-up starts one
    assert str(child.compile("not a player")).startswith("the child compiling the kernels exited with status 1")
    child.stop()
    assert child.compile(load_weights("classic").values) == "the engine is quitting"
    assert KernelChild().compile(lambda: 0) is not None and "could not start" in str(KernelChild().compile(lambda: 0))


def _cold_cache(monkeypatch: pytest.MonkeyPatch, problem: str | None) -> tuple[list[str], threading.Event]:
    """``tuner.uci``'s warm-up on a pretended cold cache: the first load refuses to compile,
    the child (held until the returned event) records what the engine said meanwhile."""
    calls: list[str] = []
    release = threading.Event()

    def load(player: object, *, on_boundary: object = None) -> None:
        refusing = getattr(_REFUSING, "on", False)
        calls.append("load refusing" if refusing else "load")
        if refusing and calls.count("load refusing") == 1:
            raise CompileRefused("search.play.kernel.search_root")
        load_engine_kernels(player, on_boundary=on_boundary)  # type: ignore[arg-type]

    def compile_in_child(self: KernelChild, player: object, **kw: object) -> str | None:
        calls.append("child")
        release.wait(30)
        return problem

    monkeypatch.setattr(uci, "load_engine_kernels", load)
    monkeypatch.setattr(KernelChild, "compile", compile_in_child)
    return calls, release


def test_a_cold_cache_compiles_in_the_child_while_go_gets_quick_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    calls, release = _cold_cache(monkeypatch, None)
    out = io.StringIO()
    engine = uci.UciEngine(load_weights("classic").values, out=out)
    engine.handle("position startpos moves e2e4 e7e5 d1h5 b8c6 f1c4 g8f6")
    deadline = time.perf_counter() + 10
    while "child" not in calls and time.perf_counter() < deadline:
        time.sleep(0.005)
    assert calls == ["load refusing", "child"] and engine._compiling()
    started = time.perf_counter()
    engine.handle("go movetime 200")
    while "bestmove" not in out.getvalue() and time.perf_counter() - started < 5:
        time.sleep(0.005)
    assert time.perf_counter() - started < 1.0
    assert f"info string {uci.QUICK_INFO}" in out.getvalue() and out.getvalue().endswith("bestmove h5f7\n")
    release.set()
    engine._warmup.join(600)  # (a cold cache compiles here: minutes on a loaded machine)
    assert calls == ["load refusing", "child", "load"] and not engine._compiling()
    assert engine._boundary.is_set() and "the child" not in out.getvalue()
    engine.handle("go depth 2")
    engine._worker.join(30)
    assert out.getvalue().splitlines()[-1] == "bestmove h5f7"


def test_a_failed_child_leaves_the_compilation_to_the_engine_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    calls, release = _cold_cache(monkeypatch, "the child compiling the kernels exited with status 1: MemoryError")
    release.set()
    out = io.StringIO()
    engine = uci.UciEngine(load_weights("classic").values, out=out)
    engine.handle("isready")
    engine._warmup.join(600)  # (a cold cache compiles here: minutes on a loaded machine)
    assert calls == ["load refusing", "child", "load"]
    assert ("info string the child compiling the kernels exited with status 1: MemoryError; compiling in the "
            "engine's process instead") in out.getvalue()


def test_quit_stops_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    stopped: list[bool] = []
    monkeypatch.setattr(KernelChild, "stop", lambda self: stopped.append(True))
    engine = uci.UciEngine(load_weights("classic").values, out=io.StringIO())
    assert engine.handle("quit") is False and stopped == [True]
