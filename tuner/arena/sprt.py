"""The sequential probability ratio test on game pairs, as fishtest runs it: a GSPRT on the
pentanomial frequencies with logistic Elo bounds, plus a stop for scores outside both hypotheses.

Data: the counts ``n_0..n_4`` of game pairs (an opening played twice with colours swapped) in
which the tested player scored 0, 0.5, 1, 1.5 and 2 points; the pair's score is ``a_k = k / 4``
(a mean over its two games, as :func:`tuner.arena.match.pair_scores` gives it).

Hypotheses, in logistic Elo: H0 ``elo = elo0`` against H1 ``elo = elo1``; an Elo difference
``e`` is the expected score ``s(e) = 1 / (1 + 10^(-e / 400))``.

Statistic (the generalized log-likelihood ratio; fishtest's ``LLRcalc.LLR_logistic``): zero
counts are replaced by ``1e-3`` (fishtest's ``regularize``), ``N = sum n_k`` and ``q_k = n_k /
N``; for each hypothesis, ``p(s)`` is the pentanomial distribution of largest likelihood among
those with mean score ``s``, which is ``p_k = q_k / (1 + x (a_k - s))`` with ``x`` the root of
``sum_k q_k (a_k - s) / (1 + x (a_k - s)) = 0`` on the interval where every denominator is
positive (the secular equation; fishtest's ``MLE_expected``, from Van den Bergh,
"support_MLE_multinomial", Proposition 1.1); then ``LLR = N sum_k q_k ln(p_k(s1) / p_k(s0))``.

Stopping (Wald): H0 is accepted once ``LLR <= ln(beta / (1 - alpha))``, H1 once ``LLR >=
ln((1 - beta) / alpha)``; ``alpha`` is the false-positive rate at elo0, ``beta`` the
false-negative rate at elo1.

Added stop, when the score lies outside both hypotheses (not in fishtest): the GSPRT's LLR is
the difference ``L0 - L1`` of the two likelihood-ratio statistics ``L_i = N sum_k q_k ln(q_k /
p_k(s_i))`` (each hypothesis' best fit against the data's own best fit, ``q``). When the
observed mean score is far below ``s0`` (or far above ``s1``), both fits are bad and nearly
equally bad, so the difference hardly moves: 30 pairs of which 29 were lost twice and one
scored 0.5 (``[29, 1, 0, 0, 0]``, 0/1/59 in games) give ``LLR = -0.43`` at elo 0 against 5.
fishtest computes this LLR when a test's bounds are logistic Elo, as here (``stat_util.update_SPRT``:
``LLR_logistic`` for ``elo_model`` "logistic", ``LLR_normalized`` for "normalized", each on the
pentanomial counts when there are some); its normalized form (``LLRcalc.LLR_normalized``, the
t-value MLE of Van den Bergh, "Normalized Elo practical", section 4.1, bounds in nElo) moves no
more there: -0.61 at nElo 0 against 5 (computed once with fishtest's formulas, scipy's brentq),
-0.11 by its section 4.2 approximation ``LLR_normalized_alt``, whose per-pair LLR ``ln((1 + (t -
t0)^2) / (1 + (t - t1)^2)) / 2`` tends to 0 as the t-value ``t`` leaves both bounds. So the test also stops once the likelihood-ratio interval of the
score, ``{s : L(s) < c}``, excludes both hypotheses: H0 when the mean is below ``s0`` and ``L0
>= ln((1 - alpha) / beta)`` (the width of Wald's lower bound), H1 when the mean is above ``s1``
and ``L1 >= ln((1 - beta) / alpha)``. ``L0 >= c`` says that no pentanomial distribution with
mean ``s0`` gives the data more than ``e^-c`` times the likelihood of the best fit (for
``[k, 0, 0, 0, 0]`` and ``s0 = 1/2``, ``L0 = k ln 2``: 5 pairs lost twice stop a 5 %/5 % test,
as their probability under any mean of 1/2 or more is at most ``2^-5``). The rule never
fires while the mean lies between ``s0`` and ``s1``, so at normal scores the test is Wald's.

Unlike fishtest, no overshoot correction is applied to the bounds
(fishtest's ``update_SPRT`` moves them by Siegmund's estimate of the overshoot of batched
updates; here the test is checked after every game pair).

Source: official-stockfish/fishtest, ``server/fishtest/stats/LLRcalc.py`` (``regularize``,
``results_to_pdf``, ``secular``, ``MLE_expected``, ``LLR``, ``LLR_logistic``) and
``stat_util.py`` (``SPRT``, ``update_SPRT``), read at commit b8eecff2 (``LLR_normalized``,
``MLE_t_value`` and ``update_SPRT``'s choice of the two at 0753fcc6 and 1054c5aa); the code here is written
anew (a bisection instead of scipy's brentq) and checked against an independent maximisation
of the likelihood in ``tests/tuner/arena/test_sprt.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: the score of a game pair in each pentanomial cell (0, 0.5, 1, 1.5, 2 points out of 2)
PAIR_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
#: what an empty cell counts as (fishtest's ``regularize``)
EMPTY_CELL = 1e-3

#: the decisions a test reports
H0, H1, INCONCLUSIVE = "H0", "H1", "inconclusive"


def logistic_score(elo: float) -> float:
    """The expected score (0..1) at a logistic Elo difference ``elo``."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def regularized(counts: Sequence[float] | np.ndarray) -> np.ndarray:
    """The pentanomial counts as float64[5] with every empty cell replaced by :data:`EMPTY_CELL`."""
    n = np.asarray(counts, dtype=np.float64)
    if n.shape != (5,) or np.any(n < 0) or not np.all(np.isfinite(n)):
        raise ValueError(f"pentanomial counts must be 5 finite numbers >= 0, not {list(counts)}")
    return np.where(n == 0, EMPTY_CELL, n)


def mle_with_mean(freqs: np.ndarray, s: float) -> np.ndarray:
    """The distribution over :data:`PAIR_SCORES` of largest likelihood for the observed
    frequencies ``freqs`` (float64[5], positive, summing to 1) among those with mean ``s`` (0 < s
    < 1): ``freqs / (1 + x (PAIR_SCORES - s))`` with ``x`` the root of the secular equation
    (module docstring), found by bisection to the last bit."""
    d = PAIR_SCORES - s
    # 1 + x d > 0 for every cell  <=>  -1/max(d) < x < -1/min(d); the left side of the
    # equation falls from +inf to -inf on that interval
    lo, hi = -1.0 / d.max(), -1.0 / d.min()

    def f(x: float) -> float:
        return float(np.sum(freqs * d / (1.0 + x * d)))

    while True:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    x = lo if abs(f(lo)) <= abs(f(hi)) else hi
    p: np.ndarray = freqs / (1.0 + x * d)
    out: np.ndarray = p / p.sum()
    return out


def llr(counts: Sequence[float] | np.ndarray, elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for the
    pentanomial ``counts`` (module docstring; fishtest's ``LLR_logistic``)."""
    n = regularized(counts)
    total = float(n.sum())
    q = n / total
    p0 = mle_with_mean(q, logistic_score(elo0))
    p1 = mle_with_mean(q, logistic_score(elo1))
    return total * float(np.sum(q * (np.log(p1) - np.log(p0))))


def likelihood_ratios(counts: Sequence[float] | np.ndarray, elo0: float, elo1: float) -> tuple[float, float, float]:
    """``(mean, L0, L1)`` for the pentanomial ``counts``: the mean pair score of the regularized
    counts and the likelihood-ratio statistics of each hypothesis against the data's best fit,
    ``L_i = N sum_k q_k ln(q_k / p_k(s_i))`` (module docstring; ``llr == L0 - L1``)."""
    n = regularized(counts)
    total = float(n.sum())
    q = n / total
    p0 = mle_with_mean(q, logistic_score(elo0))
    p1 = mle_with_mean(q, logistic_score(elo1))
    return (float(q @ PAIR_SCORES), total * float(np.sum(q * (np.log(q) - np.log(p0)))),
            total * float(np.sum(q * (np.log(q) - np.log(p1)))))


#: how a test stopped: its LLR crossed a bound, or the score's interval excluded both hypotheses
BY_LLR, BY_INTERVAL = "llr", "interval"


@dataclass(frozen=True)
class SprtResult:
    """Where a test stands: ``llr`` between the bounds ``lower`` and ``upper`` (natural log
    units), after ``pairs`` game pairs; ``decision`` is ``H0``, ``H1`` or ``inconclusive``;
    ``stop`` says why it is decided (:data:`BY_LLR`, :data:`BY_INTERVAL`, None while
    inconclusive); ``mean`` is the mean pair score (0..1) of the regularized counts."""

    test: Sprt
    llr: float
    lower: float
    upper: float
    decision: str
    pairs: int
    stop: str | None = None
    mean: float = 0.5

    def to_json(self) -> dict[str, object]:
        t = self.test
        return {"elo0": t.elo0, "elo1": t.elo1, "alpha": t.alpha, "beta": t.beta, "llr": round(self.llr, 4),
                "lower": round(self.lower, 4), "upper": round(self.upper, 4), "decision": self.decision,
                "stop": self.stop, "pairs": self.pairs}

    def describe(self) -> str:
        """One line: the hypotheses, the LLR against its bounds and the decision."""
        t = self.test
        verdict = {H0: f"H0 accepted (elo0 = {t.elo0:g} favoured over elo1 = {t.elo1:g})",
                   H1: f"H1 accepted (elo1 = {t.elo1:g} favoured over elo0 = {t.elo0:g})",
                   INCONCLUSIVE: "inconclusive (no bound crossed)"}[self.decision]
        if self.stop == BY_INTERVAL:
            side = "below elo0" if self.decision == H0 else "above elo1"
            verdict += (f", stopped as the score's likelihood interval lies {side} (score "
                        f"{100 * self.mean:.1f} %), though the LLR crossed no bound")
        return (f"SPRT elo0 {t.elo0:g} elo1 {t.elo1:g} alpha {t.alpha:g} beta {t.beta:g}: LLR {self.llr:.3f} "
                f"(bounds {self.lower:.3f} .. {self.upper:.3f}) after {self.pairs} game pairs: {verdict}")


@dataclass(frozen=True)
class Sprt:
    """A test of H0 ``elo = elo0`` against H1 ``elo = elo1`` (logistic Elo, elo0 < elo1) with
    false-positive rate ``alpha`` and false-negative rate ``beta`` (both in (0, 1), summing
    below 1)."""

    elo0: float
    elo1: float
    alpha: float
    beta: float

    def validate(self) -> None:
        values = (self.elo0, self.elo1, self.alpha, self.beta)
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"--sprt: every value must be a finite number, not {' '.join(map(str, values))}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"--sprt: elo0 must be below elo1, not {self.elo0:g} and {self.elo1:g}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise ValueError(f"--sprt: alpha and beta must lie in (0, 1) with alpha + beta < 1, "
                             f"not {self.alpha:g} and {self.beta:g}")
        if max(abs(self.elo0), abs(self.elo1)) >= 2000:
            raise ValueError("--sprt: elo0 and elo1 must lie within (-2000, 2000)")

    @property
    def lower(self) -> float:
        """ln(beta / (1 - alpha)): at or below it, H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """ln((1 - beta) / alpha): at or above it, H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)

    def check(self, pentanomial: Sequence[int] | np.ndarray) -> SprtResult:
        """The test after the game pairs counted in ``pentanomial`` (pairs scoring 0, 0.5, 1,
        1.5, 2 points, from the tested player's view)."""
        value = llr(pentanomial, self.elo0, self.elo1)
        mean, l0, l1 = likelihood_ratios(pentanomial, self.elo0, self.elo1)
        decision, stop = (H1, BY_LLR) if value >= self.upper else (H0, BY_LLR) if value <= self.lower else \
            (INCONCLUSIVE, None)
        if decision == INCONCLUSIVE:
            if mean < logistic_score(self.elo0) and l0 >= -self.lower:
                decision, stop = H0, BY_INTERVAL
            elif mean > logistic_score(self.elo1) and l1 >= self.upper:
                decision, stop = H1, BY_INTERVAL
        return SprtResult(self, value, self.lower, self.upper, decision, int(sum(pentanomial)), stop, mean)


def parse_sprt(values: Sequence[float] | None) -> Sprt | None:
    """``--sprt ELO0 ELO1 ALPHA BETA`` as a checked :class:`Sprt` (None when not given);
    ``ValueError`` with a one-line message when the values are not a valid test."""
    if values is None:
        return None
    if len(values) != 4:
        raise ValueError(f"--sprt takes 4 numbers (ELO0 ELO1 ALPHA BETA), not {len(values)}")
    test = Sprt(*(float(v) for v in values))
    test.validate()
    return test


__all__ = ["BY_INTERVAL", "BY_LLR", "EMPTY_CELL", "H0", "H1", "INCONCLUSIVE", "PAIR_SCORES", "Sprt", "SprtResult",
           "likelihood_ratios", "llr", "logistic_score", "mle_with_mean", "parse_sprt", "regularized"]
