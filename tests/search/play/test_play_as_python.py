"""The compiled playing search against its own Python (``NUMBA_DISABLE_JIT=1``): the same nodes,
scores and PVs, with every feature on, on positions of the shipped games.

The other oracles of the playing search switch its features off (the minimax oracle) or check
what any good search must do (legal moves, mates); this one checks the compiled code itself. It
was written after a change meant to alter nothing (two small ``inline="always"`` helpers for the
table's bounds, commit cfcb515, reverted) changed the compiled tree but not the Python one:
numba had miscompiled the inlined code (``docs/search.md``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import chess
import pytest

from tests.conftest import REPO
from tests.search.play.searches_as_json import searches

DEPTH = 5


@pytest.mark.parametrize("weights", ["nnue", "classic"])
def test_the_compiled_search_is_its_python(weights: str, real_boards: list[chess.Board], tmp_path: Path) -> None:
    fens = [b.fen() for b in real_boards[400::1100]]
    compiled = searches(fens, weights, DEPTH)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
               PYTHONWARNINGS="ignore::RuntimeWarning")  # uint64 products wrap, as in the kernels
    proc = subprocess.run([sys.executable, "-m", "tests.search.play.searches_as_json"], cwd=REPO, env=env,
                          input=json.dumps({"fens": fens, "weights": weights, "depth": DEPTH}),
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    python = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sum(r["nodes"] for r in compiled) > 500 * len(fens)  # a real tree, not a trivial one
    for fen, got, want in zip(fens, compiled, python, strict=True):
        assert got == want, fen
