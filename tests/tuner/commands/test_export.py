"""``tuner export``: one line saying what it wrote (issue 58 item 15: it printed nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.cli import main


@pytest.mark.parametrize(("weights", "fmt", "what"), [
    ("classic", "rust", "a Rust module"), ("classic", "text", "the text view"),
    ("classic", "json", "the evaluator's JSON weights"), ("classic", "c-packed", "a C header of packed S(mg, eg) pairs"),
    ("gm-nn", "c", "the network's C header (parameters and forward pass)"),
    ("gm-nn", "mtnn", "the network file (.mtnn)"),
])
def test_export_to_a_file_prints_one_line_saying_what_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 weights: str, fmt: str, what: str) -> None:
    out = tmp_path / f"w.{fmt}"
    assert main(["export", weights, "--format", fmt, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"export: wrote {what} of {weights} to {out} ({out.stat().st_size:,} bytes)\n"
    assert out.stat().st_size > 0


def test_export_to_standard_output_prints_the_export_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "classic", "--format", "rust"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("//! movetuner evaluation weights") and "export: wrote" not in out
