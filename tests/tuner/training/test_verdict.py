"""tuner.training.verdict: the paired interval, the data-size warning, and a run's verdict."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from search.evaluation.evaluators import load_evaluator
from tuner.training.tune_config import TuneConfig
from tuner.training.verdict import MIN_PER_WEIGHT, data_warning, paired, tuned_weights


def test_paired_difference_and_its_interval() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, size=400).astype(float)
    b = a.copy()
    b[:40] = 1.0 - b[:40]
    got = paired(a, b)
    d = b - a
    se = d.std(ddof=1) / math.sqrt(len(d))
    assert got.start == pytest.approx(a.mean()) and got.tuned == pytest.approx(b.mean())
    assert got.diff == pytest.approx(d.mean())
    assert got.low == pytest.approx(d.mean() - 1.96 * se) and got.high == pytest.approx(d.mean() + 1.96 * se)
    same = paired(a, a)
    assert same.diff == 0 and same.low == 0 and same.high == 0


def test_the_warning_counts_tuned_weights_and_the_signals_need() -> None:
    w0 = load_evaluator("material")
    common = TuneConfig(data="-", out="-", train=("material",))
    n = tuned_weights(common, w0)
    assert n == 10  # five piece values, middle and end game
    assert data_warning(common, w0, MIN_PER_WEIGHT["moves"] * n, "moves") is None
    text = data_warning(common, w0, MIN_PER_WEIGHT["moves"] * n - 1, "moves")
    assert text is not None and text.startswith("warning: ") and "10 tuned weights" in text
    assert data_warning(common, w0, 5000, "results") is not None  # 500 a weight: results need 1,000
    assert data_warning(common, w0, 10_000, "results") is None


def test_a_run_says_whether_it_paid_and_writes_its_verdict(sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "tuner", "tune", "--method", "texel", "--data", str(sample_set),
                        "--out", str(run), "--start", "classic", "--epochs", "1", "--verify", "2", "--quiet"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    verdict = json.loads((run / "verdict.json").read_text())
    mm = verdict["move_match"]
    assert mm["n"] > 100 and mm["ci95"][0] <= mm["diff"] <= mm["ci95"][1]
    assert verdict["paid"] in (True, False, None)
    assert verdict["verify"]["games"] == 2 and "sprt" in verdict["verify"]
    assert verdict["verify"]["wins"] + verdict["verify"]["draws"] + verdict["verify"]["losses"] == 2


def test_verify_takes_an_even_number_of_games(sample_set: Path, tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "tuner", "tune", "--method", "texel", "--data", str(sample_set),
                        "--out", str(tmp_path / "run"), "--verify", "3", "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "--verify takes an even number" in r.stderr and "Traceback" not in r.stderr
