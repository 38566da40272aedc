"""tuner.config.read_toml: the one TOML reader; every error one line naming the file (and,
for a syntax error, the line and column)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.config import read_toml
from tuner.errors import TunerError


def test_reads_a_table(tmp_path: Path) -> None:
    f = tmp_path / "a.toml"
    f.write_text('x = 1\n[t]\ny = "z"\n')
    assert read_toml(f) == {"x": 1, "t": {"y": "z"}}


@pytest.mark.parametrize(("text", "expected"), [
    (b"a = 1\nb = \n", "bad.toml: not valid TOML at line 2, column 5: Invalid value"),
    (b"a = [1,\n", "bad.toml: not valid TOML at its end: "),
    (b"\xff\xfe", "bad.toml: not valid TOML: not UTF-8 text"),
])
def test_bad_file_is_one_line_naming_file_and_place(tmp_path: Path, text: bytes, expected: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_bytes(text)
    with pytest.raises(TunerError) as info:
        read_toml(f)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / expected))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TunerError, match="nope.toml: no such file"):
        read_toml(tmp_path / "nope.toml")
