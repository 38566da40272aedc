"""``tuner warmup``: every step runs the commands' code on small inputs (issue 28: on a fresh
install the first ``tuner uci`` needed 44 s before ``readyok``, past python-chess's 10 s)."""

from __future__ import annotations

import pytest

from tuner.cli import main
from tuner.warmup import STEPS


def test_warmup_runs_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[1].strip() for line in out] == list(STEPS), out
    assert all(" ready in " in line and " s of it compiling)" in line for line in out), out


def test_warmup_refuses_an_unknown_step_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup", "--steps", "search,nosuch"]) == 2
    assert capsys.readouterr().err == "tuner warmup: error: unknown warm-up step 'nosuch' (steps: search, ingest, tune)\n"


@pytest.mark.parametrize("steps", ["", ",", " , "])
def test_warmup_refuses_an_empty_step_list_in_one_line(capsys: pytest.CaptureFixture[str], steps: str) -> None:
    """issue 58 item 17: ``--steps ''`` exited 0 having done nothing."""
    assert main(["warmup", "--steps", steps]) == 2
    captured = capsys.readouterr()
    assert captured.err == "tuner warmup: error: no warm-up step given (steps: search, ingest, tune)\n"
    assert captured.out == ""
