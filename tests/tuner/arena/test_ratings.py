"""Round-robin Elo ratings (:mod:`tuner.arena.ratings`) against closed forms and their defining
equations: two players give ``bench match``'s Elo and the delta method's interval; exact
logistic scores give back their ratings; the fit solves the score equations; the sandwich
interval equals the delta method by finite differences of the fit; dominated groups are infinite."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tuner.arena.match import elo_of
from tuner.arena.ratings import C, PairScores, fit_ratings


def logistic(diff: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-diff / 400.0))


def test_two_players_give_the_match_elo_and_the_delta_method_interval() -> None:
    per_pair = np.array([1.0, 0.75, 0.5, 0.5, 0.25, 1.0, 0.75, 0.75])
    fit = fit_ratings(2, [PairScores(0, 1, per_pair)], anchor=1)
    s = per_pair.mean()
    assert fit.elo[1] == 0.0 and fit.se[1] == 0.0
    assert fit.elo[0] == pytest.approx(elo_of(s), abs=1e-7)
    sd_mean = math.sqrt(np.mean((per_pair - s) ** 2) / len(per_pair))  # pentanomial, as summarize()
    slope = 400 / math.log(10) / (s * (1 - s))  # dElo/ds
    assert fit.se[0] == pytest.approx(sd_mean * slope, rel=1e-9)
    low, high = fit.interval(0)  # type: ignore[misc]
    assert (low, high) == pytest.approx((fit.elo[0] - 1.96 * fit.se[0], fit.elo[0] + 1.96 * fit.se[0]))


def test_exact_logistic_scores_give_back_their_ratings_and_the_anchor_shifts_them() -> None:
    true = np.array([0.0, 120.0, -80.0, 35.0])
    pairs = []
    for i in range(4):
        for j in range(i + 1, 4):
            s = logistic(true[i] - true[j])
            pairs.append(PairScores(i, j, np.array([s - 0.05, s + 0.05, s])))
    fit = fit_ratings(4, pairs, anchor=0)
    assert fit.elo == pytest.approx(true, abs=1e-6)
    moved = fit_ratings(4, pairs, anchor=2, anchor_elo=1500.0)
    assert moved.elo == pytest.approx(true - true[2] + 1500.0, abs=1e-6)
    assert moved.se[2] == 0.0 and np.all(moved.se[[0, 1, 3]] > 0)


def test_the_fit_solves_the_score_equations_on_inconsistent_results() -> None:
    # a cycle: 0 beats 1, 1 beats 2, 2 beats 0 (no ratings fit exactly)
    pairs = [PairScores(0, 1, np.array([0.75, 1.0, 0.5])), PairScores(1, 2, np.array([0.75, 0.5, 1.0, 0.25])),
             PairScores(0, 2, np.array([0.25, 0.5]))]
    fit = fit_ratings(3, pairs, anchor=0)
    assert np.all(np.isfinite(fit.elo))
    for k in range(3):  # each player's expected points equal its points
        actual = expected = 0.0
        for p in pairs:
            if k in (p.i, p.j):
                sign = 1 if k == p.i else -1
                e = logistic(fit.elo[p.i] - fit.elo[p.j])
                actual += p.games * (p.score if sign > 0 else 1 - p.score)
                expected += p.games * (e if sign > 0 else 1 - e)
        assert actual == pytest.approx(expected, abs=1e-8)


def test_sandwich_interval_equals_the_delta_method_by_finite_differences() -> None:
    # scores inside (0, 1), so that they can be moved both ways
    pairs = [PairScores(0, 1, np.array([0.75, 0.75, 0.5, 0.5])), PairScores(1, 2, np.array([0.75, 0.5, 0.75, 0.25])),
             PairScores(0, 2, np.array([0.25, 0.5, 0.75])), PairScores(2, 3, np.array([0.5, 0.25, 0.75, 0.5, 0.75])),
             PairScores(1, 3, np.array([0.5, 0.75])), PairScores(0, 3, np.array([0.5, 0.25, 0.75]))]
    fit = fit_ratings(4, pairs, anchor=0)
    # J = d(ratings)/d(pair scores), by central differences of the fit; pair scores independent
    h = 1e-5
    jac = np.zeros((4, len(pairs)))
    for n, p in enumerate(pairs):
        up = [q if q is not p else PairScores(p.i, p.j, p.pair_scores + h) for q in pairs]
        down = [q if q is not p else PairScores(p.i, p.j, p.pair_scores - h) for q in pairs]
        jac[:, n] = (fit_ratings(4, up, anchor=0, tol=1e-12).elo - fit_ratings(4, down, anchor=0, tol=1e-12).elo) / (2 * h)
    variances = np.array([np.var(p.pair_scores) / len(p.pair_scores) for p in pairs])
    delta_se = np.sqrt(np.diag(jac @ np.diag(variances) @ jac.T))
    assert fit.se == pytest.approx(delta_se, rel=1e-5, abs=1e-9)
    assert C == pytest.approx(math.log(10) / 400)


def test_a_group_that_scored_every_point_is_infinite_and_the_rest_finite() -> None:
    # 0 and 1 play evenly; 2 lost every game to both; 3 won every game against everyone
    pairs = [PairScores(0, 1, np.array([0.5, 0.75, 0.25])), PairScores(0, 2, np.array([1.0, 1.0])),
             PairScores(1, 2, np.array([1.0])), PairScores(3, 0, np.array([1.0])), PairScores(3, 1, np.array([1.0])),
             PairScores(3, 2, np.array([1.0]))]
    fit = fit_ratings(4, pairs, anchor=0)
    assert fit.elo[2] == -math.inf and fit.elo[3] == math.inf
    assert fit.interval(2) is None and fit.interval(3) is None
    assert fit.elo[1] == pytest.approx(0.0, abs=1e-9) and fit.se[1] > 0
    # anchored inside the dominated group, the others are all above it
    low = fit_ratings(4, pairs, anchor=2)
    assert low.elo[2] == 0.0 and all(low.elo[k] == math.inf for k in (0, 1, 3))


def test_identical_pair_results_give_an_interval_of_zero_width() -> None:
    fit = fit_ratings(2, [PairScores(0, 1, np.array([0.5, 0.5, 0.5]))], anchor=0)
    assert fit.elo[1] == pytest.approx(0.0, abs=1e-12) and fit.interval(1) == pytest.approx((0.0, 0.0), abs=1e-12)


def test_unrated_players_and_bad_input() -> None:
    fit = fit_ratings(3, [PairScores(0, 1, np.array([0.75]))], anchor=0)
    assert math.isnan(fit.elo[2]) and math.isfinite(fit.elo[1])
    with pytest.raises(ValueError, match="anchor"):
        fit_ratings(2, [], anchor=2)
    with pytest.raises(ValueError, match="bad pair"):
        fit_ratings(2, [PairScores(0, 0, np.array([0.5]))])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fit_ratings(2, [PairScores(0, 1, np.array([1.5]))])


# ---------------------------------------------------------------- gauntlets (tuner bench ladder)


def test_gauntlet_against_one_opponent_is_the_match_elo_on_its_scale() -> None:
    from tuner.arena.match import elo_of  # noqa: PLC0415
    from tuner.arena.ratings import fit_gauntlet  # noqa: PLC0415

    scores = np.array([1.0, 0.5, 0.75, 0.25, 1.0, 0.5])
    fit = fit_gauntlet([1500.0], [scores])
    assert fit.elo == pytest.approx(1500.0 + elo_of(float(scores.mean())), abs=1e-6)
    s = float(scores.mean())
    se = math.sqrt(np.var(scores) / len(scores)) / (math.log(10) / 400 * s * (1 - s))  # delta method
    assert fit.se == pytest.approx(se, rel=1e-9)
    low, high = fit.interval() or (0.0, 0.0)
    assert low < fit.elo < high


def test_gauntlet_fit_balances_expected_and_actual_points_and_matches_the_delta_method() -> None:
    from tuner.arena.ratings import expected, fit_gauntlet  # noqa: PLC0415

    rng = np.random.default_rng(5)
    ratings = [1300.0, 1600.0, 1900.0, 2200.0]
    pair_scores = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=n, p=p)
                   for n, p in ((20, [0.05, 0.1, 0.3, 0.3, 0.25]), (30, [0.1, 0.2, 0.3, 0.2, 0.2]),
                                (25, [0.3, 0.3, 0.2, 0.1, 0.1]), (15, [0.6, 0.2, 0.1, 0.05, 0.05]))]
    fit = fit_gauntlet(ratings, pair_scores)
    games = np.array([2 * len(s) for s in pair_scores])
    points = sum(2 * float(np.sum(s)) for s in pair_scores)
    assert float(np.sum(games * np.asarray(expected(fit.elo - np.array(ratings))))) == pytest.approx(points, abs=1e-6)
    # the sandwich standard error is the delta method on the pair scores, by finite differences
    grads, variances = [], []
    for k, s in enumerate(pair_scores):
        h = 1e-6
        up = [x.copy() for x in pair_scores]
        inner = int(np.flatnonzero((s > 0) & (s < 1))[0])
        up[k][inner] += h * len(s)  # one pair's score moved by n h: the mean by h
        grads.append((fit_gauntlet(ratings, up).elo - fit.elo) / h)
        variances.append(float(np.var(s)) / len(s))
    assert fit.se == pytest.approx(math.sqrt(sum(g * g * v for g, v in zip(grads, variances))), rel=1e-4)


def test_gauntlet_with_every_point_or_none_is_infinite_and_bad_input_is_refused() -> None:
    from tuner.arena.ratings import fit_gauntlet  # noqa: PLC0415

    assert fit_gauntlet([1500.0, 1700.0], [np.ones(3), np.ones(2)]).elo == math.inf
    fit = fit_gauntlet([1500.0], [np.zeros(3)])
    assert fit.elo == -math.inf and fit.interval() is None
    with pytest.raises(ValueError, match="2 opponent ratings for 1"):
        fit_gauntlet([1.0, 2.0], [np.ones(2)])
    with pytest.raises(ValueError, match=r"scores must be one or more values in \[0, 1\]"):
        fit_gauntlet([1.0], [np.array([])])
