"""``tuner.compiling``: one note when a command waits for numba, and iteration times that
leave compilation out (issue 28: the README's main command sat 77 s on a frozen bar with
nothing saying it compiled, and ``bench compare``'s tuning times included that compile)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import njit
from numba.core import event
from tests.tuner.training.test_driver import ToyConfig, ToyTrainer

import tuner.compiling as compiling
from tuner.cli import main
from tuner.compiling import COMPILING_NOTE, compile_notes, compile_seconds
from tuner.methods.registry import Method, register, unregister


def test_a_compilation_is_noted_once_and_timed() -> None:
    out = io.StringIO()
    before = compile_seconds()
    with compile_notes("tuner test", stream=out):
        assert njit(lambda x: x + 1)(1) == 2  # a new function: numba compiles it
        assert njit(lambda x: x + 2)(1) == 3
    assert out.getvalue() == f"tuner test: note: {COMPILING_NOTE}\n"
    assert compile_seconds() > before
    with compile_notes("tuner test", stream=out):
        pass
    assert out.getvalue().count("\n") == 1  # nothing compiled, nothing said


def test_a_plugin_run_says_that_it_compiles_only_when_it_does() -> None:
    """Issue 43: with a term plug-in every command said at its start that it compiled kernels,
    and again ``(first run only)`` at its first compilation; now one note, with the plug-in's
    text, at the first compilation only: ``export`` (which runs no kernel) says nothing."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    out = io.StringIO()
    with compile_notes("tuner test", "terms 'x' from F: compiling kernels for them", stream=out):
        assert njit(lambda x: x + 3)(1) == 4
    assert out.getvalue() == "tuner test: note: terms 'x' from F: compiling kernels for them\n"
    done = subprocess.run([sys.executable, "-m", "tuner", "--terms", "docs/examples/rook_behind_passer.py", "export",
                           "classic", "--format", "json"], capture_output=True, text=True, cwd=root, timeout=300)
    assert done.returncode == 0 and "compiling" not in done.stderr, done.stderr


class _Clock:
    """A clock that moves only when told (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


CLOCK = _Clock()


class CompilingToy(ToyTrainer):
    """The toy method, whose every step (``begin`` and ``step``, which calls it) "compiles" for
    100 s of the fake clock and works 2 s."""

    def _compile_and_work(self) -> None:
        with event.trigger_event("numba:compile", data={"dispatcher": None, "args": (), "return_type": None}):
            CLOCK.now += 100.0
        CLOCK.now += 2.0

    def begin(self) -> dict[str, Any]:
        self._compile_and_work()
        return super().begin()


@pytest.fixture()
def compiling_toy() -> Any:
    register(Method(name="ctoy", config=ToyConfig, trainer=CompilingToy, summary="a compiling toy",
                    iterations="rounds", unit="round", headline=("knight",)))
    yield
    unregister("ctoy")


def test_iteration_seconds_leave_compilation_out(compiling_toy: Any, sample_set: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(compiling, "_now", CLOCK)
    run = tmp_path / "run"
    assert main(["tune", "--method", "ctoy", "--data", str(sample_set), "--out", str(run), "--rounds", "2",
                 "--max-validation", "50", "--quiet"]) == 0
    seconds = [json.loads(line)["iteration_seconds"] for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert np.allclose(seconds, [2.0, 2.0, 2.0]), seconds  # the work, not the 100 s of compiling
    assert capsys.readouterr().err.count(COMPILING_NOTE) == 1


def test_a_long_compilation_ticks_and_names_its_kernel() -> None:
    """issue 58 item 15: a cold tune was silent for 107 s after the note; while numba compiles,
    a line every ``tick`` seconds says which kernel (its module: the stage) and for how long."""
    out = io.StringIO()

    def slow_to_compile(x):  # type: ignore[no-untyped-def]
        total = 0
        for i in range(x):
            total += (i * 7) % 5 + int(np.sqrt(float(i)))
        return total

    with compile_notes("tuner test", stream=out, tick=0.02):
        assert njit(slow_to_compile)(10) == sum((i * 7) % 5 + int(np.sqrt(float(i))) for i in range(10))
    lines = out.getvalue().splitlines()
    assert lines[0] == f"tuner test: note: {COMPILING_NOTE}"
    ticks = lines[1:]
    assert ticks and all(t.startswith("tuner test: note: still compiling kernels, ") for t in ticks), lines
    assert all(t.endswith(f"s so far (now {__name__}.{slow_to_compile.__qualname__})") for t in ticks), lines
    with compile_notes("tuner test", stream=out, tick=0.02):  # nothing compiles: no line
        import time
        time.sleep(0.1)
    assert out.getvalue().splitlines() == lines


def test_refused_compiles_raise_before_numba_compiles_and_count_nothing() -> None:
    """Issue 58 item 12: ``tuner uci`` loads its kernels with compilation refused, so that a cold
    cache sends the compilation to a child process (:mod:`tuner.compile_apart`) instead of
    holding this process's interpreter lock for a minute."""
    import threading

    from tuner.compiling import CompileRefused, compile_count, refuse_compiles

    def add_seven(x: int) -> int:
        return x + 7

    kernel = njit(add_seven)
    count = compile_count()
    with refuse_compiles(), pytest.raises(CompileRefused, match="add_seven"):
        kernel(1)
    assert kernel.signatures == [] and compile_count() == count
    seen: list[int] = []
    with refuse_compiles():  # another thread compiles as usual meanwhile
        thread = threading.Thread(target=lambda: seen.append(kernel(2)))
        thread.start()
        thread.join()
        assert kernel(3) == 10  # compiled now: a call compiles nothing more
    assert seen == [9] and compile_count() == count + 1
    assert njit(lambda x: x - 1)(1) == 0  # and outside the block compiling works
    assert compiling.compiling_now() is None
