"""The match's SPRT stops exactly at its bounds: at the first game pair whose LLR crosses one
(or whose score lies outside both hypotheses, the module's added stop), not later and not
earlier, with the LLR of fishtest's formula.

The reference here is fishtest's ``LLR_logistic`` (official-stockfish/fishtest,
``server/fishtest/stats/LLRcalc.py``: ``regularize``, ``results_to_pdf``, ``secular``,
``MLE_expected``, ``LLR``; read at commit 0753fcc6) written again in plain Python from its
formula, on lists of ``(a_i, p_i)`` as fishtest keeps them: the pentanomial counts with empty
cells set to 1e-3, ``p_i = n_i / N`` at ``a_i = i / 4``; for each hypothesis' score ``s`` the
maximum-likelihood distribution with mean ``s`` is ``p_i / (1 + x (a_i - s))`` with ``x`` the root
of the secular equation ``sum p_i (a_i - s) / (1 + x (a_i - s)) = 0`` (found here by the Illinois
variant of regula falsi, not the module's bisection nor fishtest's scipy ``brentq``), and
``LLR = N sum p_i ln(p1_i / p0_i)``. Wald's bounds are ``ln(beta / (1 - alpha))`` and
``ln((1 - beta) / alpha)`` (fishtest's ``stat_util.SPRT`` without its overshoot correction,
which batched updates need and a test after every pair does not).

The SPRT counts game pairs (an opening with both colours: the pentanomial unit), so "the first
game where the LLR crosses" is the second game of the first pair whose counts cross.
"""

from __future__ import annotations

import math
import random

import pytest

from search.params.weights import load_weights
from tuner.arena.match import DEFAULT_OPENINGS, GameRecord, MatchConfig, Opening, _Prefix, load_openings, run_match
from tuner.arena.sprt import INCONCLUSIVE, Sprt, llr


def _secular_root(pdf: list[tuple[float, float]]) -> float:
    """x with sum p a / (1 + x a) = 0, on (-1 / max a, -1 / min a) less 1e-9 at each end (as fishtest)."""
    values = [a for a, _ in pdf]
    lo, hi = -1 / max(values) + 1e-9, -1 / min(values) - 1e-9

    def f(x: float) -> float:
        return sum(p * a / (1 + x * a) for a, p in pdf)

    f_lo, f_hi = f(lo), f(hi)
    side = 0
    for _ in range(500):
        x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        fx = f(x)
        if fx == 0 or hi - lo < 1e-15:
            return x
        if (fx > 0) == (f_lo > 0):
            lo, f_lo = x, fx
            if side == -1:
                f_hi /= 2
            side = -1
        else:
            hi, f_hi = x, fx
            if side == 1:
                f_lo /= 2
            side = 1
    return x


def fishtest_llr_logistic(elo0: float, elo1: float, results: list[int]) -> float:
    """fishtest's ``LLR_logistic(elo0, elo1, results)`` for 5 pentanomial counts (module docstring)."""
    counts = [float(r) if r else 1e-3 for r in results]
    total = sum(counts)
    pdf = [(i / 4, c / total) for i, c in enumerate(counts)]

    def mle(s: float) -> list[float]:
        x = _secular_root([(a - s, p) for a, p in pdf])
        return [p / (1 + x * (a - s)) for a, p in pdf]

    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    p0, p1 = mle(s0), mle(s1)
    return total * sum(p * (math.log(b) - math.log(a)) for (_, p), a, b in zip(pdf, p0, p1))


def test_the_reference_gives_fishtests_printed_values() -> None:
    # fishtest LLRcalc.LLR_logistic at commit b8eecff2, as tests/tuner/arena/test_sprt.py quotes them
    for counts, elo0, elo1, value in [([10789, 19328, 33806, 19402, 10543], -3, 1, 2.1310678117940807),
                                      ([0, 3, 10, 30, 57], 0, 10, 2.836762309195555),
                                      ([5, 0, 0, 0, 0], 0, 10, -0.14604150914516958)]:
        assert fishtest_llr_logistic(elo0, elo1, counts) == pytest.approx(value, abs=1e-6)


def outside_both(counts: list[int], test: Sprt) -> bool:
    """The module's added stop written again: the mean pair score below s0 with ``N sum q ln(q /
    p0) >= ln((1 - alpha) / beta)``, or above s1 with ``N sum q ln(q / p1) >= ln((1 - beta) /
    alpha)`` (p_i the fits of the reference above)."""
    regular = [float(r) if r else 1e-3 for r in counts]
    total = sum(regular)
    pdf = [(i / 4, c / total) for i, c in enumerate(regular)]
    mean = sum(a * p for a, p in pdf)
    for elo, side, bound in ((test.elo0, -1, -test.lower), (test.elo1, 1, test.upper)):
        s = 1 / (1 + 10 ** (-elo / 400))
        if (mean - s) * side > 0:
            x = _secular_root([(a - s, p) for a, p in pdf])
            ratio = total * sum(p * math.log(1 + x * (a - s)) for a, p in pdf)  # ln(q / p(s)) = ln(1 + x (a - s))
            return ratio >= bound
    return False


def first_crossing(series: list[int], test: Sprt) -> int | None:
    """1 + the index of the first pair (pentanomial cell per pair) after which fishtest's LLR is
    at or beyond a bound, or the score lies outside both hypotheses (:func:`outside_both`); None
    if none."""
    counts = [0] * 5
    for k, cell in enumerate(series):
        counts[cell] += 1
        value = fishtest_llr_logistic(test.elo0, test.elo1, counts)
        if not test.lower < value < test.upper or outside_both(counts, test):
            return k + 1
    return None


def fake_pair(index: int, cell: int) -> tuple[GameRecord, GameRecord]:
    """Two games of opening ``index`` in which A scores ``cell / 2`` points."""
    first, second = {0: ("0-1", "1-0"), 1: ("0-1", "1/2-1/2"), 2: ("1-0", "1-0"), 3: ("1-0", "1/2-1/2"),
                     4: ("1-0", "0-1")}[cell]
    opening = Opening(f"o{index}", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    return (GameRecord(f"{index + 1}.1", opening, "A", (), (), first, "t"),
            GameRecord(f"{index + 1}.2", opening, "B", (), (), second, "t"))


@pytest.mark.parametrize(("test", "bias"), [(Sprt(0, 10, 0.05, 0.05), 0.62), (Sprt(0, 10, 0.05, 0.05), 0.40),
                                            (Sprt(-5, 5, 0.1, 0.2), 0.55), (Sprt(0, 50, 0.05, 0.05), 0.5)])
def test_the_test_stops_at_the_first_pair_that_crosses_in_any_finishing_order(test: Sprt, bias: float) -> None:
    """A decisive series of pair results arriving in a random order (as from worker processes):
    the pairs kept are exactly those up to fishtest's first crossing, and the project's LLR equals
    fishtest's after every pair."""
    rng = random.Random(int(1000 * bias) + int(test.elo1))
    series = [min(4, max(0, round(rng.gauss(4 * bias, 1.2)))) for _ in range(3000)]
    expected = first_crossing(series, test)
    assert expected is not None and expected > 1  # a decisive series, not decided by its first pair
    counts = [0] * 5
    for k, cell in enumerate(series[:expected]):
        counts[cell] += 1
        assert llr(counts, test.elo0, test.elo1) == pytest.approx(fishtest_llr_logistic(test.elo0, test.elo1, counts),
                                                                   abs=1e-6)
        assert (test.check(counts).decision == INCONCLUSIVE) == (k + 1 < expected)
    seen: list[int] = []
    prefix = _Prefix(len(series), test, on_pair=lambda index, pair: seen.append(index))
    order = list(range(len(series)))
    rng.shuffle(order)
    stop_calls = [prefix.add(i, fake_pair(i, series[i])) for i in order]
    kept = prefix.played()
    assert len(kept) == expected and seen == list(range(expected))
    assert [p[0].round for p in kept] == [f"{i + 1}.1" for i in range(expected)]
    # add() says "stop" from the first arrival that completes the crossing prefix on, never before
    first_stop = stop_calls.index(True)
    assert all(stop_calls[first_stop:])
    assert set(range(expected)) <= set(order[:first_stop + 1])  # the crossing prefix is complete then,
    assert set(range(expected)) - set(order[:first_stop])  # and one of its pairs was missing just before


def test_a_real_match_stops_at_the_first_crossing_with_one_and_two_workers() -> None:
    classic, material = load_weights("classic").values, load_weights("material").values
    test = Sprt(0, 150, 0.05, 0.05)
    config = {"games": 60, "depth": 1, "adjudicate_cp": 400, "adjudicate_moves": 1, "seed": 9, "max_plies": 120}
    openings = load_openings(DEFAULT_OPENINGS)
    for workers in (1, 2):
        pairs = run_match(classic, material, openings, MatchConfig(workers=workers, **config), sprt=test)  # type: ignore[arg-type]
        series = [round(2 * (a.points_a + b.points_a)) for a, b in pairs]
        assert len(pairs) < 30 and first_crossing(series, test) == len(pairs)
