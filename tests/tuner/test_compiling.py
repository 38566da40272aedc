"""``tuner.compiling``: one note when a command waits for numba (issue 28: the README's main
command sat 77 s on a frozen bar with nothing saying it compiled)."""

from __future__ import annotations

import io

from numba import njit

from tuner.compiling import COMPILING_NOTE, compile_notes, compile_seconds


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

