"""The command line: version, help, perft, and one-line errors."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from tuner.cli import main


def test_version(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exc:  # argparse's version action exits
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"movetuner {importlib.metadata.version('movetuner')}\n"


def test_perft_command_prints_node_count(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["perft", "startpos", "3"]) == 0
    assert "nodes 8902" in capsys.readouterr().out


def test_perft_divide_lists_root_moves(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["perft", "startpos", "2", "--divide"]) == 0
    out = capsys.readouterr().out
    assert "e2e4: 20" in out and "nodes 400" in out


def test_bad_fen_is_one_line_error_without_traceback() -> None:
    proc = subprocess.run([sys.executable, "-m", "tuner", "perft", "8/8/8 w - - 0 1", "2"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "invalid FEN" in proc.stderr and "Traceback" not in proc.stderr
