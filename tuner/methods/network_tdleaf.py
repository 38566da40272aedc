"""TD-Leaf(lambda) when the evaluator is a network: Giraffe's training (Lai 2015, section 4.2),
on the driver and the self-play or position sources of :mod:`tuner.methods.bootstrap`.

Baxter, Tridgell & Weaver (1998) as :class:`tuner.methods.tdleaf.TDLeafTrainer` states it:
over a game's searches t = 1..N, ``J_t = tanh(score_t / td_scale)`` in White's view (``score_t``
the search's value in centipawns, the quantized network's value at the PV leaf with the sign of
the root's mover; a mate or draw verdict gives +-1 or 0 and no gradient), ``d_t = J_{t+1} - J_t``
with the game's result (+1, 0, -1) in place of ``J_{N+1}``, and the update direction

    D = sum_t grad J_t sum_{j >= t} lambda^{j-t} d_j,        grad J_t = w_t s_t (1 - J_t^2) / td_scale * grad out(leaf_t)

(``w_t`` +1 when White moves at the root, else -1; ``s_t`` +1 when the leaf's side to move is
the root's, else -1; ``out`` the float network's part of the leaf's score, centipawns, its side
to move's view; :func:`objectives.network.network_gradient` back-propagates it). KnightCap's
sum with the weights held for the game: the network is updated once per game, by one Adam step
(``network_lr``, in the parameter units of :func:`tuner.methods.network_mmto.parameter_scales`,
clipped to the magnitudes whose integer form cannot overflow) along ``D``, then quantized for
the next game's searches. Giraffe updated after batches of positions with AdaDelta; one step
per game keeps the game's differences consistent with the weights that made them.

A hybrid network's linear part stays fixed (as with MMTO and Texel); the settings that concern
linear weights (``lr``, ``max_step``, ``fixed_pawn``, ``lambda_depth``) are not used, and the
learning searches are depth-limited (``search_depth`` plies + quiescence, repetition draws from
the game's keys, a move-ordering transposition table); ``nodes`` is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from objectives.network import input_table, network_gradient
from search.tree.alphabeta import KIND_EVAL, MATE_BOUND
from search.core.board import W_STM
from search.params.catalog import PHASE_MAX
from search.evaluation.network import QuantizedNetwork, quantize
from search.tree.search_api import SearchResult, search, threads
from tuner.errors import TunerError
from tuner.methods.bootstrap import Tally
from tuner.methods.network_mmto import parameter_scales
from tuner.methods.tdleaf_config import TDLeafBase, TDLeafConfig
from tuner.training.optim import Adam, Optimizer, floats_from_json, floats_to_json, optimizer_from_state
from tuner.training.run_context import RunContext
from tuner.training.training_data import TrainingData
from tuner.training.tune_config import TuneConfig

#: the move-ordering transposition table of each learning search (entries: 2 ** TT_BITS)
TT_BITS = 16


@dataclass(frozen=True)
class Searched:
    """One learning search: what the game loop reads (``pv``, ``score`` in eval units, ``nodes``,
    ``search_depth``) and what TD-Leaf learns from (``kind``, ``leaf``)."""

    pv: tuple[int, ...]
    score: int
    nodes: int
    search_depth: int
    kind: int
    leaf: np.ndarray


@dataclass
class GameTrace:
    """A game's searches so far, in White's view: ``j`` the values J_t, ``leaves`` the PV
    leaves (uint64[BOARD_WORDS] each) and ``slope`` d J_t / d out(leaf_t) (0 for a verdict)."""

    j: list[float] = field(default_factory=list)
    leaves: list[np.ndarray] = field(default_factory=list)
    slope: list[float] = field(default_factory=list)


def td_coefficients(j: np.ndarray, result: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """The differences ``d_t = J_{t+1} - J_t`` (``J_{N+1}`` = ``result``) and each search's weight
    in the update, ``c_t = sum_{j >= t} lambda^{j-t} d_j`` (float64[N] each), by the recursion
    ``c_t = d_t + lambda c_{t+1}``."""
    j = np.asarray(j, dtype=np.float64)
    d = np.diff(np.append(j, result))
    c = np.zeros_like(d)
    acc = 0.0
    for t in range(len(d) - 1, -1, -1):
        acc = d[t] + lam * acc
        c[t] = acc
    return d, c


def game_direction(trace: GameTrace, result: float, lam: float, net_float: Any,
                   buckets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(D, d)``: the game's update direction ``D`` (float64[net.size], the module docstring's
    sum, in :meth:`search.evaluation.network.FloatNetwork.vector` order) and its differences ``d``."""
    d, c = td_coefficients(np.array(trace.j), result, lam)
    coef = c * np.array(trace.slope, dtype=np.float64)
    table = input_table(np.array(trace.leaves, dtype=np.uint64), buckets)
    return network_gradient(net_float, table, coef), d


class NetworkTDLeafTrainer(TDLeafBase):
    """TD-Leaf(lambda) of a network, one Adam step per game (module docstring); the game loop,
    the sources (whole games from a position set), the time limit and the metrics are those of
    :class:`tuner.methods.tdleaf_config.TDLeafBase`."""

    def __init__(self, common: TuneConfig, cfg: TDLeafConfig, data: TrainingData, w0: QuantizedNetwork,
                 ctx: RunContext) -> None:
        if cfg.nodes:
            raise TunerError("tdleaf: --nodes is not available with a network; limit the searches by --search-depth")
        super().__init__(common, cfg, data, w0, ctx)

    # -- the evaluator
    def _setup(self, w0: Any) -> None:
        assert isinstance(w0, QuantizedNetwork)
        self.float = w0.dequantize()
        self.q = quantize(self.float, dict(w0.metadata))
        self.scale = parameter_scales(w0.shape)
        self.limit = self.float.limits_vector() / self.scale
        self.u = self.float.vector() / self.scale
        assert isinstance(self.cfg, TDLeafConfig)
        self.opt: Optimizer = Adam(self.float.size, lr=self.cfg.network_lr)
        self.buckets = w0.shape.bucket_table

    def _new_game(self) -> None:
        pass  # each search has its own table

    def _weight_change(self, before: Any) -> float:
        """The summed absolute change of the float parameters, in parameter units."""
        return float(np.abs((self.q.dequantize().vector() - before.dequantize().vector()) / self.scale).sum())

    def _search(self, board: np.ndarray, keys: list[int] | None) -> Searched:
        r: SearchResult = search(board, self.cfg.search_depth, self.q, budget=self.common.budget,
                                 history=keys or (), tt_bits=TT_BITS)
        return Searched(tuple(int(m) for m in r.pv), int(r.score), int(r.nodes), self.cfg.search_depth,
                        int(r.kind), r.leaf)

    # -- TD-Leaf
    def game_trace(self) -> Any:
        return GameTrace()

    def learn(self, rec: Any, board: np.ndarray, trace: Any, tally: Tally) -> None:
        assert isinstance(rec, Searched) and isinstance(trace, GameTrace)
        white = 1.0 if int(board[W_STM]) == 0 else -1.0
        if rec.kind != KIND_EVAL or abs(rec.score) > MATE_BOUND:
            j, slope = (0.0 if rec.score == 0 else math.copysign(1.0, rec.score)), 0.0
        else:
            j = math.tanh(rec.score / PHASE_MAX / self.td.td_scale)
            sign = 1.0 if len(rec.pv) % 2 == 0 else -1.0
            slope = white * sign * (1.0 - j * j) / self.td.td_scale
        trace.j.append(white * j)
        trace.leaves.append(rec.leaf)
        trace.slope.append(slope)

    def end_game(self, trace: Any, white_result: float, tally: Tally) -> None:
        assert isinstance(trace, GameTrace)
        if not trace.j:
            return
        with threads(self.ctx.threads):
            direction, d = game_direction(trace, white_result, self.td.td_lambda, self.float, self.buckets)
        tally.td_abs += float(np.abs(d).sum())
        tally.td_n += len(d)
        tally.used += len(d)
        if not direction.any():
            return
        if not np.all(np.isfinite(direction)):
            raise FloatingPointError("TD-Leaf's update became NaN or infinite; lower --network-lr")
        tally.updated += 1
        # ascent along D: Adam minimizes, so it is given -D (in parameter units, theta = u * scale)
        self.u = np.clip(self.opt.step(self.u, -direction * self.scale), -self.limit, self.limit)
        self.float = self.float.with_vector(self.u * self.scale)
        self.q = quantize(self.float, dict(self.q.metadata))

    def rms_error(self, tally: Tally) -> float | None:
        return None

    def extra_metrics(self, tally: Tally) -> dict[str, Any]:
        return {"mean_abs_td": tally.td_abs / tally.td_n if tally.td_n else None, "games_updated": tally.updated}

    # -- the Trainer protocol
    def restore(self, state: dict[str, Any]) -> None:
        self.u = floats_from_json(state["master"], self.float.size, "master")
        self.float = self.float.with_vector(self.u * self.scale)
        self.q = quantize(self.float, dict(self.q.metadata))
        self.opt = optimizer_from_state(state["optimizer"])
        self.elapsed = float(state["elapsed"])

    def weights(self) -> QuantizedNetwork:
        return self.q

    def state(self) -> dict[str, Any]:
        return {"master": floats_to_json(self.u), "optimizer": self.opt.state_dict(), "elapsed": self.elapsed}


__all__ = ["GameTrace", "NetworkTDLeafTrainer", "Searched", "game_direction", "td_coefficients"]
