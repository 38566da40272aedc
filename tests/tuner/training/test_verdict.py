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


def _games(wins: int, draws: int, losses: int, decision: str) -> dict:  # type: ignore[type-arg]
    """A --verify result as verify_match gives it, from W/D/L (interval: the pentanomial one is not
    needed here, a normal one on the games stands in)."""
    from tuner.arena.match import elo_of

    n = wins + draws + losses
    score = (wins + 0.5 * draws) / n
    sd = math.sqrt((wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score ** 2) / n)
    lo, hi = max(0.0, score - 1.96 * sd / math.sqrt(n)), min(1.0, score + 1.96 * sd / math.sqrt(n))

    def finite(x: float) -> float | None:
        return round(x, 1) if math.isfinite(x) else None

    return {"games": n, "wins": wins, "draws": draws, "losses": losses, "score": score, "score_ci95": [lo, hi],
            "elo": finite(elo_of(score)), "elo_ci95": [finite(elo_of(lo)), finite(elo_of(hi))],
            "sprt": {"decision": decision}}


MOVE_MATCH_UP = {"move_match": {"diff": 0.029, "ci95": [0.0235, 0.0345]}, "texel_e": None, "paid": True}
MOVE_MATCH_DOWN = {"move_match": {"diff": -0.02, "ci95": [-0.03, -0.01]}, "texel_e": None, "paid": False}
MOVE_MATCH_FLAT = {"move_match": {"diff": 0.0, "ci95": [-0.01, 0.01]}, "texel_e": None, "paid": None}


@pytest.mark.parametrize(("validation", "games", "paid", "by", "words"), [
    # issue 58 item 14: move-match +2.90 [+2.35, +3.45] "paid", games -397 Elo: games decide, in words
    (MOVE_MATCH_UP, _games(3, 34, 163, "H0"), False, "games", "this run did not pay, by the games"),
    (MOVE_MATCH_UP, _games(150, 40, 10, "H1"), True, "games", "this run paid, by the games"),
    (MOVE_MATCH_DOWN, _games(150, 40, 10, "H1"), True, "games", "which outweigh the validation figures"),
    (MOVE_MATCH_UP, _games(5, 6, 9, "inconclusive"), None, None, "not shown to pay: the games decided nothing"),
    (MOVE_MATCH_DOWN, _games(5, 6, 9, "inconclusive"), False, "validation", "did not pay, by the validation"),
    (MOVE_MATCH_UP, None, True, "validation", "this run paid, by the validation figures"),
    (MOVE_MATCH_DOWN, None, False, "validation", "this run did not pay, by the validation figures"),
    (MOVE_MATCH_FLAT, None, None, None, "not shown to pay: the validation figures decided nothing"),
    # 4 games all lost: a zero-width score interval [0, 0] and an SPRT still undecided decide nothing
    (MOVE_MATCH_DOWN, _games(0, 0, 4, "inconclusive"), False, "validation", "the games decided nothing"),
    (MOVE_MATCH_UP, _games(0, 0, 4, "inconclusive"), None, None, "not shown to pay"),
    # the interval alone decides when it has a width (the SPRT not yet)
    (MOVE_MATCH_UP, _games(10, 40, 50, "inconclusive"), False, "games", "did not pay, by the games"),
])
def test_the_closing_verdict_weighs_games_over_move_match_and_says_it_in_words(validation, games, paid, by,  # type: ignore[no-untyped-def]
                                                                                words) -> None:
    from tuner.training.verdict import closing_verdict

    result = {**validation, **({"verify": games} if games else {})}
    got_paid, got_by, line = closing_verdict(result, "run/weights.json", "gm")
    assert (got_paid, got_by) == (paid, by) and words in line and line.startswith("verdict: ")
    assert "\n" not in line
    assert f"{100 * validation['move_match']['diff']:+.2f} points" in line  # each figure with its interval
    if games:
        assert f"{games['games']} games against the start, Elo " in line and f"SPRT {games['sprt']['decision']}" in line
        if games["losses"] == games["games"]:  # infinite ends by their score: all lost is -inf throughout
            assert "Elo -inf [-inf, -inf]" in line
    if paid is not True:  # how to measure further, against the run's own start
        assert "keep the start" in line or "tuner bench match run/weights.json gm --nodes 20000" in line
