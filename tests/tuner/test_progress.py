"""``tuner.progress``: a tqdm bar on a terminal, plain lines elsewhere (issue 28: ``tuner tune``
wrote tqdm bars with ``\\r`` and ``ESC [A`` into logs)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from tqdm import tqdm

import tuner.progress as progress
from tuner.cli import main
from tuner.progress import PlainProgress, progress_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_terminal_gets_tqdm_and_a_log_plain_lines() -> None:
    assert isinstance(progress_bar(range(3), file=_Terminal()), tqdm)
    assert isinstance(progress_bar(range(3), file=io.StringIO()), PlainProgress)
    assert isinstance(progress_bar(range(3), file=io.StringIO(), disable=True), tqdm)  # off: tqdm's no-op
    assert isinstance(progress_bar(range(3), file=io.StringIO(), disable=None), tqdm)  # terminal only: off


def test_plain_lines_every_tenth_after_five_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    out = io.StringIO()
    seen = []
    for i in progress_bar(range(100), desc="search", unit="pos", file=out):
        seen.append(i)
        clock.now += 1.0  # a position a second: a tenth every 10 s
    assert seen == list(range(100))
    lines = out.getvalue().splitlines()
    assert lines[0] == "search: 10/100 pos (10 %), 10 s"
    # the last tenth's line is also where it ended: close() does not write it twice (issue 58 item 15)
    assert lines[-2:] == ["search: 90/100 pos (90 %), 90 s", "search: 100/100 pos (100 %), 100 s"]
    assert len(lines) == 10 and "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_a_quick_loop_writes_nothing_and_a_slow_one_at_least_every_30_s(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    out = io.StringIO()
    with progress_bar(total=1000, desc="quick", file=out) as bar:
        bar.update(1000)
    assert out.getvalue() == ""
    bar = progress_bar(desc="unknown total", unit="game", file=out)
    for _ in range(4):
        clock.now += 31.0
        bar.update(1)
    bar.set_postfix({"val": "0.31"})
    bar.close()
    assert out.getvalue().splitlines() == ["unknown total: 1 game, 31 s", "unknown total: 2 game, 62 s",
                                           "unknown total: 3 game, 93 s", "unknown total: 4 game, 124 s",
                                           "unknown total: 4 game, 124 s, val=0.31"]


def test_tune_writes_no_terminal_escapes_into_a_log(sample_set: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "--method", "mmto", "--data", str(sample_set), "--out", str(tmp_path / "run"),
                 "--iterations", "1", "--max-train", "300", "--max-validation", "100"]) == 0
    err = capsys.readouterr().err
    assert "mmto: iteration 1:" in err
    assert "\r" not in err and "\x1b" not in err, err


def test_tick_writes_a_line_after_log_seconds_without_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 58 item 15: self-play was silent in a log for 60 s at a time (games finish seldom);
    its wait loop ticks a bar made with log_seconds=10, a line every 10 s whatever the games."""
    from tuner.selfplay.run import PROGRESS_LOG_SECONDS

    assert PROGRESS_LOG_SECONDS == 10.0
    clock = _Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    out = io.StringIO()
    bar = progress_bar(total=40, desc="selfplay", unit="game", file=out, log_seconds=PROGRESS_LOG_SECONDS)
    assert isinstance(bar, PlainProgress)
    for _ in range(100):  # the loop wakes every 0.25 s; no game finishes for 25 s
        clock.now += 0.25
        bar.tick()
    assert out.getvalue().splitlines() == ["selfplay: 0/40 game (0 %), 10 s", "selfplay: 0/40 game (0 %), 20 s"]
    bar.update(1)
    bar.set_postfix({"W/D/L": "1/0/0"})
    for _ in range(40):
        clock.now += 0.25
        bar.tick()
    bar.close()
    assert out.getvalue().splitlines()[2:] == ["selfplay: 1/40 game (2 %), 30 s, W/D/L=1/0/0"]
    # a terminal keeps tqdm's bar (tick is PlainProgress's only)
    assert isinstance(progress_bar(total=4, file=_Terminal(), log_seconds=10), tqdm)


def test_every_bar_goes_through_progress_bar() -> None:
    """issue 58 item 15: network Texel's "update" bar (and the move model's) called tqdm directly
    and wrote its \\r frames into a log file; a bar made anywhere but tuner/progress.py is one."""
    import re

    root = Path(progress.__file__).resolve().parent  # the tuner package
    direct = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py")) if path.name != "progress.py"
              for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if re.search(r"\btqdm\(", line)]
    assert direct == []
