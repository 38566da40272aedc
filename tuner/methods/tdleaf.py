"""TD-Leaf(lambda) (Baxter, Tridgell & Weaver 1998; the baseline in Meep's table; ``tuner tune
--method tdleaf``) over the sparse linear evaluator, and the method's registry entry.

Over a game's positions x_1..x_N, ``J_t = tanh(score_t / scale)`` of the search score (the PV
leaf's evaluation with the sign of its side), in White's view; ``d_t = J_{t+1} - J_t`` with
the game's result (+1, 0, -1) after the last; ``w += lr sum_t grad J_t sum_{j>=t}
lambda^{j-t} d_j``, applied online with an eligibility trace after each move
(:class:`TDLeafTrace`). Units, settings, sources and the cap: :mod:`tuner.methods.bootstrap`.
The registry entry picks the linear evaluator's trainer (:class:`TDLeafTrainer`, online, per
search) or a network's (:class:`tuner.methods.network_tdleaf.NetworkTDLeafTrainer`, one step per
game) by the start's evaluator kind.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from search.tree.alphabeta import KIND_EVAL, MATE_BOUND
from search.core.board import W_STM
from search.tree.bootstrap_tree import TreeRecord
from search.params.catalog import N_FEATURES, PHASE_MAX
from search.core.convert import push
from tuner.methods.bootstrap import Tally, weighted_sum
from tuner.methods.network_tdleaf import NetworkTDLeafTrainer
from tuner.methods.registry import Method, by_evaluator
from tuner.methods.tdleaf_config import TDLEAF, TDLeafBase, TDLeafConfig


class TDLeafTrace:
    """TD-Leaf(lambda) over one game, online (eligibility trace), in White's view.

    :meth:`observe` takes each search's ``J_t`` and ``grad J_t`` (float64[N]) in turn and
    returns the direction to add times lr for ``d_{t-1} = J_t - J_{t-1}`` (None at the first
    search); :meth:`finish` does the same with the game's result in place of ``J_{N+1}``.
    Summed over a game (weights fixed) the directions are ``sum_t grad J_t sum_{j>=t}
    lambda^{j-t} d_j``, KnightCap's update.
    """

    def __init__(self, n: int, lam: float) -> None:
        self.lam = lam
        self.trace = np.zeros(n, dtype=np.float64)
        self.last: float | None = None

    def observe(self, j: float, grad: np.ndarray) -> tuple[np.ndarray, float] | None:
        out = None
        if self.last is not None:
            d = j - self.last
            out = (d * self.trace, d)
        self.trace = self.lam * self.trace + grad
        self.last = j
        return out

    def finish(self, result: float) -> tuple[np.ndarray, float] | None:
        if self.last is None:
            return None
        d = result - self.last
        return d * self.trace, d


def leaf_j(rec: TreeRecord, root: np.ndarray, scale: float) -> tuple[float, np.ndarray]:
    """``J = tanh(score / scale)`` of a search (root side to move's view, score in cp) and its
    gradient ``(1 - J^2) / scale * sign * x(leaf)`` (float64[N]); a mate or draw verdict has
    ``J = +-1`` or 0 and no gradient."""
    if rec.kind != KIND_EVAL or abs(rec.score) > MATE_BOUND:
        j = 0.0 if rec.score == 0 else math.copysign(1.0, rec.score)
        return j, np.zeros(N_FEATURES, dtype=np.float64)
    leaf = root
    for m in rec.pv:
        leaf = push(leaf, m)
    sign = 1.0 if len(rec.pv) % 2 == 0 else -1.0
    j = math.tanh(rec.score / PHASE_MAX / scale)
    grad, _ = weighted_sum(leaf[None, :], np.array([(1.0 - j * j) / scale * sign]))
    return j, grad


class TDLeafTrainer(TDLeafBase):
    """TD-Leaf(lambda): each game's PV leaves towards the later searches' and the result, online
    with an eligibility trace (:class:`TDLeafTrace`); from a position set it walks whole games in
    order, their results as the final targets (:class:`tuner.methods.tdleaf_config.TDLeafBase`)."""

    def game_trace(self) -> Any:
        return TDLeafTrace(N_FEATURES, self.td.td_lambda)

    def learn(self, rec: TreeRecord, board: np.ndarray, trace: TDLeafTrace | None, tally: Tally) -> None:
        assert trace is not None  # TD-Leaf learns within games
        j, grad = leaf_j(rec, board, self.td.td_scale)
        white = 1.0 if int(board[W_STM]) == 0 else -1.0
        out = trace.observe(white * j, white * grad)
        if out is not None:
            self._td_step(out, tally)

    def end_game(self, trace: TDLeafTrace | None, white_result: float, tally: Tally) -> None:
        assert trace is not None
        out = trace.finish(white_result)
        if out is not None:
            self._td_step(out, tally)

    def _td_step(self, out: tuple[np.ndarray, float], tally: Tally) -> None:
        direction, d = out
        tally.td_abs += abs(d)
        tally.td_n += 1
        tally.used += 1
        if d != 0.0 and direction.any():
            tally.updated += 1
            self._apply(direction)

    def extra_metrics(self, tally: Tally) -> dict[str, Any]:
        return {"mean_abs_td": tally.td_abs / tally.td_n if tally.td_n else None}


METHOD = Method(
    name=TDLEAF, config=TDLeafConfig, trainer=by_evaluator(TDLeafTrainer, NetworkTDLeafTrainer),
    summary="TD-Leaf(lambda) (Baxter et al. 1998): PV leaves towards later searches' and the result",
    iterations="iterations", unit="iteration", panels=[("mean |d_t|", [("mean_abs_td", "mean |d|")])],
    headline=("mean_abs_td",), evaluators=("linear", "network"))

__all__ = ["METHOD", "TDLeafConfig", "TDLeafTrace", "TDLeafTrainer", "leaf_j"]
