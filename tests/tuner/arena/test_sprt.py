"""The SPRT's statistic (:mod:`tuner.arena.sprt`) against an independent computation, and its bounds.

The oracle maximises the pentanomial likelihood ``sum_k q_k ln p_k`` under the two constraints
``sum p_k = 1`` and ``sum p_k a_k = s`` directly: Newton's method with step halving in the
3-dimensional null space of the constraints (numpy only), from a feasible positive start. It
shares nothing with the module's secular-equation bisection but the definition (fishtest's
``LLR_logistic``: empty cells count 1e-3, ``LLR = N sum q ln(p1 / p0)``).

A second check: values printed by fishtest's own ``LLRcalc.LLR_logistic`` (commit b8eecff2,
scipy's brentq) for a few count vectors, run once by hand, quoted with its full digits.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tuner.arena.sprt import H0, H1, INCONCLUSIVE, Sprt, llr, logistic_score, parse_sprt

A = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


def constrained_mle(q: np.ndarray, s: float) -> np.ndarray:
    """argmax of sum q ln p subject to sum p = 1, sum p A = s, p > 0 (Newton in the null space)."""
    constraints = np.vstack([np.ones(5), A])
    _, _, vt = np.linalg.svd(constraints)
    z = vt[2:].T  # 5 x 3, orthonormal, constraints @ z == 0
    corner = np.zeros(5)
    corner[4 if s >= 0.5 else 0] = 1.0
    t = abs(s - 0.5) / 0.5  # mix the uniform distribution (mean 0.5) with a corner: mean s
    p = (1 - t) * np.full(5, 0.2) + t * corner

    def value(p: np.ndarray) -> float:
        return float(np.sum(q * np.log(p)))

    for _ in range(200):
        g = z.T @ (q / p)
        h = -(z.T * (q / p**2)) @ z
        step = z @ np.linalg.solve(h, -g)
        lam = 1.0
        while np.any(p + lam * step <= 0) or value(p + lam * step) < value(p) - 1e-15:
            lam /= 2
            if lam < 1e-30:
                break
        p = p + lam * step
        if np.max(np.abs(lam * step)) < 1e-16:
            break
    assert abs(p.sum() - 1) < 1e-12 and abs(p @ A - s) < 1e-12
    return p


def oracle_llr(counts: list[int], elo0: float, elo1: float) -> float:
    n = np.array(counts, dtype=np.float64)
    n[n == 0] = 1e-3
    q = n / n.sum()
    p0, p1 = (constrained_mle(q, 1 / (1 + 10 ** (-e / 400))) for e in (elo0, elo1))
    return float(n.sum() * np.sum(q * np.log(p1 / p0)))


def test_llr_agrees_with_a_direct_maximisation_of_the_likelihood() -> None:
    rng = np.random.default_rng(28)
    cases: list[tuple[list[int], float, float]] = [
        ([10789, 19328, 33806, 19402, 10543], -3, 1), ([0, 0, 0, 1, 19], 0, 10), ([5, 0, 0, 0, 0], 0, 10),
        ([0, 0, 0, 0, 0], 0, 10), ([0, 3, 10, 30, 57], 0, 10), ([3, 0, 7, 0, 2], -20, 40),
    ]
    for _ in range(40):
        counts = [int(c) for c in rng.integers(0, 60, 5) * (rng.random(5) < 0.8)]
        elo0 = float(rng.uniform(-50, 50))
        cases.append((counts, elo0, elo0 + float(rng.uniform(1, 60))))
    for counts, elo0, elo1 in cases:
        assert llr(counts, elo0, elo1) == pytest.approx(oracle_llr(counts, elo0, elo1), abs=1e-6), (counts, elo0, elo1)


def test_llr_matches_values_printed_by_fishtest() -> None:
    # fishtest LLRcalc.LLR_logistic(elo0, elo1, counts), commit b8eecff2 (its stat_util self-test's counts first)
    printed = [([10789, 19328, 33806, 19402, 10543], -3, 1, 2.1310678117940807),
               ([0, 3, 10, 30, 57], 0, 10, 2.836762309195555),
               ([5, 0, 0, 0, 0], 0, 10, -0.14604150914516958),
               ([100, 200, 300, 250, 150], 0, 5, 2.694125272029023)]
    for counts, elo0, elo1, value in printed:
        assert llr(counts, elo0, elo1) == pytest.approx(value, abs=1e-6)


def test_bounds_and_decisions() -> None:
    test = Sprt(0, 10, 0.05, 0.05)
    assert test.lower == pytest.approx(math.log(0.05 / 0.95)) and test.upper == pytest.approx(math.log(0.95 / 0.05))
    assert test.check([0, 0, 0, 0, 0]).decision == INCONCLUSIVE
    won = test.check([0, 3, 10, 30, 80])
    assert won.decision == H1 and won.llr >= won.upper and won.pairs == 123
    lost = test.check([80, 30, 10, 3, 0])
    assert lost.decision == H0 and lost.llr <= lost.lower
    line = won.describe()
    assert f"LLR {won.llr:.3f}" in line and f"{won.lower:.3f} .. {won.upper:.3f}" in line and "H1 accepted" in line
    assert won.to_json()["decision"] == "H1" and won.to_json()["upper"] == round(won.upper, 4)
    # the statistic grows with the evidence: the same frequencies twice over, twice the LLR
    assert llr([2, 6, 20, 60, 160], 0, 10) == pytest.approx(2 * llr([1, 3, 10, 30, 80], 0, 10), rel=1e-9)
    assert logistic_score(0) == 0.5 and logistic_score(400) == pytest.approx(10 / 11)


def test_bad_tests_are_refused_in_one_line() -> None:
    for values, message in [((10, 0, 0.05, 0.05), "elo0 must be below elo1"),
                            ((0, 10, 0.6, 0.5), "alpha and beta"), ((0, 10, 0, 0.05), "alpha and beta"),
                            ((0, math.nan, 0.05, 0.05), "finite"), ((0, 10, 0.05), "4 numbers")]:
        with pytest.raises(ValueError, match=message):
            parse_sprt(values)
    assert parse_sprt(None) is None
    assert parse_sprt((0, 10, 0.05, 0.05)) == Sprt(0.0, 10.0, 0.05, 0.05)


def oracle_ratio(counts: list[int], elo: float) -> tuple[float, float]:
    """(mean, L) by the direct maximisation: N sum q ln(q / p(s)) with p(s) the best fit of mean s."""
    n = np.array(counts, dtype=np.float64)
    n[n == 0] = 1e-3
    q = n / n.sum()
    p = constrained_mle(q, 1 / (1 + 10 ** (-elo / 400)))
    return float(q @ A), float(n.sum() * np.sum(q * np.log(q / p)))


def test_a_score_far_below_both_hypotheses_accepts_h0_by_its_interval() -> None:
    """issue 58 item 13: 0/1/59 (pentanomial [29, 1, 0, 0, 0]) at elo 0 against 5 left the LLR at
    -0.43 (fishtest's LLR_logistic; fishtest's normalized LLR is no better, see the module), an
    inconclusive test; the likelihood interval of the score excludes both hypotheses, so H0."""
    test = Sprt(0, 5, 0.05, 0.05)
    result = test.check([29, 1, 0, 0, 0])
    assert result.llr == pytest.approx(oracle_llr([29, 1, 0, 0, 0], 0, 5), abs=1e-6)
    assert test.lower < result.llr < -0.4  # Wald's bound alone would go on
    assert result.decision == H0 and result.stop == "interval"
    assert "likelihood interval lies below elo0" in result.describe() and result.to_json()["stop"] == "interval"
    # pairs lost twice: L0 = k ln 2 (the best mean-1/2 fit puts half the mass on LL, half on WW, up
    # to the 1e-3 regularization); 4 such pairs (2.77) stay under ln(0.95 / 0.05) = 2.94, 5 stop
    for k in range(1, 8):
        mean, l0 = oracle_ratio([k, 0, 0, 0, 0], 0)
        assert l0 == pytest.approx(k * math.log(2), rel=2e-2)
        assert (test.check([k, 0, 0, 0, 0]).decision == H0) == (l0 >= math.log(0.95 / 0.05)) == (k >= 5)
    # the mirror image: a score far above both accepts H1 the same way
    won = test.check([0, 0, 0, 1, 29])
    assert won.decision == H1 and won.stop == "interval" and won.llr < won.upper


def test_normal_scores_keep_walds_decisions() -> None:
    """At scores between the hypotheses the added stop never fires, and near them Wald's LLR
    decides as fishtest does: its self-test's counts (LLR 2.131 at -3 against 1, fishtest's
    stat_util.py __main__) stay inconclusive, a 123-pair +10 Elo-ish set crosses by its LLR."""
    big = Sprt(-3, 1, 0.05, 0.05).check([10789, 19328, 33806, 19402, 10543])
    assert big.llr == pytest.approx(2.1310678117940807, abs=1e-6) and big.decision == INCONCLUSIVE and big.stop is None
    rng = np.random.default_rng(58)
    test = Sprt(0, 10, 0.05, 0.05)
    s0, s1 = logistic_score(0), logistic_score(10)
    for _ in range(60):
        counts = [int(c) for c in rng.integers(0, 400, 5)]
        result = test.check(counts)
        mean, l0 = oracle_ratio(counts, 0)
        _, l1 = oracle_ratio(counts, 10)
        assert result.mean == pytest.approx(mean, abs=1e-12)
        assert l0 - l1 == pytest.approx(result.llr, abs=1e-6)  # the LLR is the difference of the two
        if s0 <= mean <= s1 or result.stop != "interval":
            wald = H1 if result.llr >= test.upper else H0 if result.llr <= test.lower else INCONCLUSIVE
            assert result.decision == wald
        else:
            assert (mean < s0 and l0 >= -test.lower) or (mean > s1 and l1 >= test.upper)
    assert test.check([100, 200, 300, 250, 150]).stop == "llr"
