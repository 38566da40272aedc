"""Elo ratings of several players from a round robin of game pairs, with 95 % intervals.

Data: for every pair of players (i, j) that played, the mean score ``x_ijk`` of each game pair
``k = 1..n_ij`` (an opening played twice with colours swapped: 0, 0.25, 0.5, 0.75 or 1, from
i's view), as :mod:`tuner.arena.match` plays them. Per pair of players, ``G_ij = 2 n_ij`` games,
``s_ij`` the mean of ``x_ijk`` (the score ``tuner bench match`` reports) and ``v_ij`` the
variance of that mean under the pentanomial model, ``var_k(x_ijk) / n_ij`` (population
variance, as ``tuner bench match``'s interval uses).

Model: the logistic Elo curve, player i's expected score against j is
``E_ij = 1 / (1 + 10^((r_j - r_i) / 400))``, ratings ``r`` in Elo.

Estimate (maximum likelihood, draws as half points): ``r`` maximises
``l(r) = sum_{i<j} G_ij [s_ij ln E_ij + (1 - s_ij) ln(1 - E_ij)]`` with the anchor's rating
fixed (0 by default); this is the Bradley-Terry model (Bradley & Terry 1952; Zermelo 1929)
on points. At the optimum every player's expected points equal its actual points,
``sum_j G_ij (s_ij - E_ij) = 0``. ``l`` is concave, so Newton's method with step halving
finds it. With two players the estimate is ``tuner bench match``'s Elo, ``-400 log10(1/s - 1)``.

Existence: the maximum is finite only if the players cannot be split into two groups one of
which scored nothing against the other (Zermelo 1929; Ford 1957): in the directed graph with
an edge i -> j when i scored points against j, the players must be strongly connected. The
fit is therefore made within the anchor's strongly connected component; a player outside it
has rating ``+inf`` (its group scored every point against the anchor's) or ``-inf`` (the
reverse), reported as such, with no interval. (In a complete round robin the components are
totally ordered, so every outsider is above or below.)

Intervals (95 %, normal, 1.96 standard errors): the sandwich (Huber 1967; White 1982)
covariance ``A^-1 B A^-1`` of the estimating equations, which uses the pentanomial variance of
each pair rather than assuming independent games: with ``c = ln 10 / 400`` and ``d_ij = e_i
- e_j`` over the non-anchor players,

* ``A = sum c^2 G_ij E_ij (1 - E_ij) d_ij d_ij^T`` (the information, minus the Hessian of l),
* ``B = sum c^2 G_ij^2 v_ij d_ij d_ij^T`` (the variance of the gradient of l when each pair's
  score ``s_ij`` varies with its pentanomial variance ``v_ij``, pairs independent).

It equals the delta method applied to the estimator as a function of the pair scores
(``J diag(v) J^T``, ``J = dr/ds``), which ``tests/tuner/arena/test_ratings.py`` checks by finite
differences; with two players it is ``sqrt(v) / (c s (1 - s))``, the delta method on
``tuner bench match``'s score (whose interval instead converts the score interval's ends to
Elo, so it is not symmetric). Ratings are relative to the anchor: its interval is 0 wide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: the normal quantile of a two-sided 95 % interval, as ``tuner bench match`` uses it
Z95 = 1.96
#: d ln(E/(1-E)) / d(r_i - r_j), per Elo
C = math.log(10) / 400


@dataclass(frozen=True)
class PairScores:
    """Players ``i`` and ``j`` (indices) and the mean score of each of their game pairs from
    i's view (float64[n], values in [0, 1])."""

    i: int
    j: int
    pair_scores: np.ndarray

    @property
    def games(self) -> int:
        return 2 * len(self.pair_scores)

    @property
    def score(self) -> float:
        return float(np.mean(self.pair_scores))

    @property
    def variance(self) -> float:
        """Pentanomial variance of the mean score (population variance / pairs)."""
        n = len(self.pair_scores)
        return float(np.var(self.pair_scores)) / n


@dataclass(frozen=True)
class RatingFit:
    """Ratings in Elo (float64[m]; +-inf outside the anchor's component), their standard
    errors (float64[m]; 0 for the anchor, NaN for infinite ratings) and 95 % intervals."""

    elo: np.ndarray
    se: np.ndarray
    anchor: int
    iterations: int

    def interval(self, k: int) -> tuple[float, float] | None:
        if not math.isfinite(self.elo[k]):
            return None
        half = Z95 * float(self.se[k])
        return float(self.elo[k]) - half, float(self.elo[k]) + half


def expected(diff: np.ndarray | float) -> np.ndarray | float:
    """Expected score at an Elo difference ``diff`` (the logistic curve, base 10, scale 400)."""
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(diff, dtype=np.float64) / 400.0))


def _component(players: int, pairs: Sequence[PairScores], anchor: int) -> tuple[np.ndarray, np.ndarray]:
    """(in the anchor's strongly connected component: bool[m], reaches the anchor: bool[m]) in
    the graph with an edge i -> j when i scored points against j."""
    reach = np.eye(players, dtype=bool)
    for p in pairs:
        s = p.score
        if s > 0:
            reach[p.i, p.j] = True
        if s < 1:
            reach[p.j, p.i] = True
    for k in range(players):  # transitive closure (Warshall)
        reach |= reach[:, [k]] & reach[[k], :]
    to_anchor = reach[:, anchor]
    return to_anchor & reach[anchor, :], to_anchor


# long: the whole maximum-likelihood fit in order (check the pairs, choose the rated players, iterate to
# convergence, then the sandwich intervals); split, its pieces would pass the same arrays back and forth
def fit_ratings(players: int, pairs: Sequence[PairScores], anchor: int = 0, anchor_elo: float = 0.0,
                *, tol: float = 1e-9, max_iter: int = 200) -> RatingFit:
    """Maximum-likelihood Elo ratings with sandwich 95 % intervals (module docstring).

    ``pairs``: one entry per pair of players that played (at least one game pair each); a
    player without games is unrated (NaN). Raises ``ValueError`` for a bad anchor or pair.
    """
    if not 0 <= anchor < players:
        raise ValueError(f"anchor {anchor} is not a player (0..{players - 1})")
    for p in pairs:
        if p.i == p.j or not (0 <= p.i < players and 0 <= p.j < players) or len(p.pair_scores) == 0:
            raise ValueError(f"bad pair ({p.i}, {p.j}) with {len(p.pair_scores)} game pairs")
        if np.any((p.pair_scores < 0) | (p.pair_scores > 1)):
            raise ValueError(f"pair ({p.i}, {p.j}): scores must lie in [0, 1]")
    elo = np.full(players, np.nan)
    se = np.full(players, np.nan)
    elo[anchor], se[anchor] = anchor_elo, 0.0
    played = np.zeros(players, dtype=bool)
    for p in pairs:
        played[[p.i, p.j]] = True
    inside, to_anchor = _component(players, pairs, anchor)
    for k in range(players):
        if played[k] and not inside[k]:
            elo[k] = math.inf if to_anchor[k] else -math.inf
    free = [k for k in range(players) if inside[k] and k != anchor]
    if not free:
        return RatingFit(elo, se, anchor, 0)
    col = {k: n for n, k in enumerate(free)}
    used = [p for p in pairs if inside[p.i] and inside[p.j]]
    r = np.zeros(players)  # relative to the anchor; only the component's entries are used

    def loglik(r: np.ndarray) -> float:
        total = 0.0
        for p in used:
            e = float(expected(r[p.i] - r[p.j]))
            s = p.score
            total += p.games * (s * math.log(e) if s > 0 else 0.0) + p.games * (
                (1 - s) * math.log(1 - e) if s < 1 else 0.0)
        return total

    def vec(p: PairScores) -> np.ndarray:
        d = np.zeros(len(free))
        if p.i in col:
            d[col[p.i]] += 1.0
        if p.j in col:
            d[col[p.j]] -= 1.0
        return d

    iterations = 0
    current = loglik(r)
    for iterations in range(1, max_iter + 1):
        grad = np.zeros(len(free))
        info = np.zeros((len(free), len(free)))
        for p in used:
            e = float(expected(r[p.i] - r[p.j]))
            d = vec(p)
            grad += C * p.games * (p.score - e) * d
            info += C * C * p.games * e * (1 - e) * np.outer(d, d)
        step = np.linalg.solve(info, grad)
        t = 1.0
        while True:
            trial = r.copy()
            trial[free] += t * step
            value = loglik(trial)
            if value >= current - 1e-12 or t < 1e-6:
                break
            t /= 2
        r, current = trial, value
        if float(np.max(np.abs(t * step))) < tol:
            break
    a = np.zeros((len(free), len(free)))
    b = np.zeros((len(free), len(free)))
    for p in used:
        e = float(expected(r[p.i] - r[p.j]))
        d = vec(p)
        a += C * C * p.games * e * (1 - e) * np.outer(d, d)
        b += C * C * p.games ** 2 * p.variance * np.outer(d, d)
    a_inv = np.linalg.inv(a)
    cov = a_inv @ b @ a_inv
    for k, n in col.items():
        elo[k] = anchor_elo + r[k]
        se[k] = math.sqrt(max(float(cov[n, n]), 0.0))
    return RatingFit(elo, se, anchor, iterations)


@dataclass(frozen=True)
class GauntletFit:
    """A player's rating from a gauntlet against opponents of fixed (published) ratings: ``elo``
    (``+-inf`` when it scored every point, or none), its standard error ``se`` (NaN when
    infinite) and ``iterations`` of Newton's method."""

    elo: float
    se: float
    iterations: int

    def interval(self) -> tuple[float, float] | None:
        """The 95 % interval (normal, :data:`Z95` standard errors); ``None`` when infinite."""
        if not math.isfinite(self.elo):
            return None
        return self.elo - Z95 * self.se, self.elo + Z95 * self.se


def fit_gauntlet(opponent_elos: Sequence[float], pair_scores: Sequence[np.ndarray], *, tol: float = 1e-9,
                 max_iter: int = 200) -> GauntletFit:
    """Maximum-likelihood rating of one player from its game pairs against opponents whose
    ratings are fixed (``tuner bench ladder``: the published ratings): the model and estimate
    of :func:`fit_ratings` with every opponent an anchor, so one free rating ``r`` maximising
    ``sum_k G_k [s_k ln E(r - R_k) + (1 - s_k) ln(1 - E(r - R_k))]``; at the optimum the
    player's expected points equal its points, ``sum_k G_k (s_k - E_k) = 0``. Interval: the
    sandwich of the module docstring in one dimension, ``se = sqrt(B) / A`` with ``A = sum c^2
    G_k E_k (1 - E_k)`` and ``B = sum c^2 G_k^2 v_k`` (``v_k`` the pentanomial variance of the
    mean pair score against opponent k); with one opponent, ``R + (-400 log10(1/s - 1))``.

    ``pair_scores[k]``: the player's mean score of each game pair against opponent k (float64,
    values 0..1, at least one pair). ``ValueError`` for mismatched lengths or bad scores."""
    if len(opponent_elos) != len(pair_scores) or not opponent_elos:
        raise ValueError(f"{len(opponent_elos)} opponent ratings for {len(pair_scores)} opponents' scores")
    ratings = np.asarray(opponent_elos, dtype=np.float64)
    if not np.all(np.isfinite(ratings)):
        raise ValueError("opponent ratings must be finite")
    pairs = [PairScores(0, k + 1, np.asarray(s, dtype=np.float64)) for k, s in enumerate(pair_scores)]
    for p in pairs:
        if len(p.pair_scores) == 0 or np.any((p.pair_scores < 0) | (p.pair_scores > 1)):
            raise ValueError(f"opponent {p.j - 1}: scores must be one or more values in [0, 1]")
    points = sum(p.games * p.score for p in pairs)
    games = sum(p.games for p in pairs)
    if points <= 0 or points >= games:
        return GauntletFit(-math.inf if points <= 0 else math.inf, math.nan, 0)
    games_k = np.array([p.games for p in pairs], dtype=np.float64)
    scores_k = np.array([p.score for p in pairs])
    r = float(np.average(ratings, weights=games_k))
    iterations = 0
    for iterations in range(1, max_iter + 1):  # concave in r: Newton converges; steps capped for safety
        e = np.asarray(expected(r - ratings))
        grad = C * float(np.sum(games_k * (scores_k - e)))
        info = C * C * float(np.sum(games_k * e * (1 - e)))
        step = max(-400.0, min(400.0, grad / info))
        r += step
        if abs(step) < tol:
            break
    e = np.asarray(expected(r - ratings))
    a = C * C * float(np.sum(games_k * e * (1 - e)))
    b = C * C * float(sum(p.games ** 2 * p.variance for p in pairs))
    return GauntletFit(r, math.sqrt(b) / a, iterations)
