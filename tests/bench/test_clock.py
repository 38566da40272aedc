"""``bench/clock.py --usage``: how each side of the time-management comparison ends its
searches, on the shipped sample's validation positions (no games)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "clock.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


def test_usage_counts_how_each_side_ends_its_searches(sample_set: Path) -> None:
    """At 30 ms a move the deadline cuts nearly every search (the plan fills the time): the
    discarding side keeps none of its cut iterations and discards most; the keeping side's cut
    iterations are either kept or discarded, never more than the positions."""
    done = _run("--usage", "6", "--data", str(sample_set), "--movetime", "30")
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stdout)
    assert line["bench"] == "clock-usage" and line["positions"] == 6
    assert line["plan"] == {"soft": 0.03, "hard": 0.03, "fill": True}
    a, b = line["a"], line["b"]
    assert b["kept_cut"] == 0 and b["discarded_cut"] >= 3
    assert 0 <= a["kept_cut"] + a["discarded_cut"] <= 6 and a["kept_cut"] + a["discarded_cut"] >= 3
    for side in (a, b):
        assert 0 < side["mean_seconds"] < 1.0 and side["mean_depth"] >= 1


def test_usage_without_a_position_set_is_a_one_line_error(tmp_path: Path) -> None:
    done = _run("--usage", "6", "--data", str(tmp_path / "missing"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == f"clock.py: error: {tmp_path / 'missing'}: no such position-set folder"


def test_usage_on_a_clock_plans_each_side_its_own_way(sample_set: Path) -> None:
    """On a clock each side plans its first move at the position's ply: the first side by the
    game's ply (:func:`search.tree.iterative.soft_by_ply`), the second a thirtieth of its time
    plus 3/4 of the increment; ``--per-thirty`` gives the first side the second's allocation."""
    import chess
    from search.tree.iterative import TimePlan
    from tuner.arena.match import TC_OVERHEAD
    from tuner.ingest.reader import read_split

    fens = read_split(str(sample_set), "validation", columns=["fen"]).sample(4, seed=0)["fen"].to_list()
    by_ply = sum(TimePlan.for_clock(2.0, 0.02, None, TC_OVERHEAD, ply=chess.Board(f).ply()).soft for f in fens) / 4
    thirty = TimePlan.for_clock(2.0, 0.02, None, TC_OVERHEAD).soft
    done = _run("--usage", "4", "--data", str(sample_set), "--tc", "2+0.02")
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stdout)
    assert "plan" not in line and line["positions"] == 4
    assert line["a"]["mean_soft"] == round(by_ply, 4) and line["b"]["mean_soft"] == round(thirty, 4)
    assert by_ply != thirty
    same = json.loads(_run("--usage", "4", "--data", str(sample_set), "--tc", "2+0.02", "--per-thirty").stdout)
    assert same["a"]["mean_soft"] == same["b"]["mean_soft"] == round(thirty, 4)
