"""tuner.errors.one_line: one line that cannot forge another, and huge inputs cut (issue 58 item 17)."""

from __future__ import annotations

import subprocess
import sys
from tuner.errors import MAX_LINE, MAX_RUN, one_line


def test_short_lines_pass_unchanged_and_control_characters_are_escaped() -> None:
    assert one_line("tuner: error: x.epd:3: bad FEN 'abc'") == "tuner: error: x.epd:3: bad FEN 'abc'"
    assert one_line("a\nb\x1bc\u2028é") == "a\\nb\\x1bc\\u2028é"
    path = "/tmp/" + "d" * (MAX_RUN - 6)  # with its colon, a run of exactly MAX_RUN characters: whole
    assert one_line(f"{path}: no such file") == f"{path}: no such file"


def test_a_huge_run_keeps_its_ends_around_an_ellipsis_with_its_length() -> None:
    fen = "r" * 600_000 + "/8/8/8/8/8/8/8 w - - 0 1"
    line = one_line(f"game.pgn:12: invalid FEN {fen!r}: expected 8 ranks")
    assert len(line) < 400 and line.startswith("game.pgn:12: invalid FEN 'rrrr") and line.endswith(": expected 8 ranks")
    run = f"'{fen.split(' ')[0]}"
    assert f"…[{len(run):,} characters]…" in line and "8/8/8/8/8/8/8 w - - 0 1'" in line


def test_a_long_line_of_short_words_is_cut_to_its_two_ends() -> None:
    text = "start " + "word " * 1000 + "end"
    line = one_line(text)
    assert len(line) <= MAX_LINE + 40 and line.startswith("start word") and line.endswith("word end")
    assert f"…[{len(text):,} characters]…" in line


def test_the_escapes_apply_after_the_cut() -> None:
    line = one_line("x" * 1000 + "\n" + "y" * 1000)
    assert "\n" not in line and "\\n" in line and len(line) < 2 * MAX_RUN + 60


def test_a_cli_error_on_a_huge_fen_is_one_short_line() -> None:
    """A huge FEN was echoed whole in the error line (the probe's was 1 MB)."""
    proc = subprocess.run([sys.executable, "-m", "tuner", "eval", "k" * 100_000], capture_output=True, text=True)
    err = proc.stderr.strip()
    assert proc.returncode == 2 and err.count("\n") == 0 and len(err) < 500 and "invalid FEN" in err
    assert "characters]…" in err
