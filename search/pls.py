"""Probability-limited search (Giraffe, Lai 2015): the Python API over :mod:`search.pls_kernels`.

:func:`pls_search` searches one board to a probability threshold and returns the default
search's :class:`search.search_api.SearchResult` (score, PV, PV leaf and its kind, nodes);
:func:`pls_iterate` is iterative deepening by lowering the threshold: ``start``, then times
``factor`` per iteration, down to ``floor``, within a total node limit (each iteration's node
budget is what the earlier ones left; an iteration cut by it is discarded unless it is the
first), with one move-ordering transposition table kept across the iterations.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from search.alphabeta import Workspace
from search.convert import Board, _push
from search.move_model import MoveModel, evaluation_weights
from search.pls_kernels import LOG_SCALE, PLS_ORDER_DEFAULT, PLS_ORDER_MODEL, new_pls_scratch, pls_kernel, root_budget
from search.search_api import DEFAULT_BUDGET, MAX_BUDGET, MAX_TT_BITS, Evaluator, SearchResult, _check_int
from search.validate import check_board, check_evaluator

#: the orders of :func:`pls_search`'s full-width nodes
PLS_ORDERS = {"model": PLS_ORDER_MODEL, "default": PLS_ORDER_DEFAULT}
#: the default threshold schedule of :func:`pls_iterate`: 1/32 (about depth 1 at 32 moves per
#: node), divided by 4 per iteration, down to 1e-12
START, FACTOR, FLOOR = 1 / 32, 0.25, 1e-12


def _check_threshold(threshold: float, what: str = "threshold") -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 < threshold <= 1.0:
        raise ValueError(f"{what} must be a probability in (0, 1], not {threshold!r}")
    return float(threshold)


def _history(history: Sequence[int]) -> tuple[np.ndarray, int]:
    try:
        keys = [operator.index(k) for k in history]
        return np.array(keys or [0], dtype=np.uint64), len(keys)
    except (TypeError, OverflowError):
        raise ValueError("history must hold Zobrist keys: integers in [0, 2**64)") from None


class PlsSearcher:
    """One player's probability-limited search: evaluator, move model, workspace, scratch and a
    move-ordering table (``tt_bits`` log2 entries, 0: none) kept between searches."""

    def __init__(self, weights: Evaluator, model: MoveModel, *, tt_bits: int = 0, order: str = "model",
                 flat: float = 0.0) -> None:
        if order not in PLS_ORDERS:
            raise ValueError(f"order must be one of {', '.join(PLS_ORDERS)}, not {order!r}")
        if not (isinstance(flat, (int, float)) and flat >= 0):
            raise ValueError(f"flat must be a branching factor >= 1 or 0, not {flat!r}")
        self.weights = check_evaluator(weights)
        self.model = model
        self.evw = evaluation_weights()
        self.mode = PLS_ORDERS[order]
        #: the constant-branching mock (budget units per move) or 0: the model's probabilities
        self.flat = int(round(math.log(flat) * LOG_SCALE)) if flat >= 1 else 0
        tt_bits = _check_int(tt_bits, "tt_bits", 0, MAX_TT_BITS)
        self.tt_keys = np.zeros(1 << tt_bits if tt_bits else 0, dtype=np.uint64)
        self.tt_moves = np.zeros(len(self.tt_keys), dtype=np.int32)
        self.ws = Workspace(self.weights)
        self.ps = new_pls_scratch()

    def clear(self) -> None:
        """Forget the transposition table (a new game)."""
        self.tt_keys[:] = 0
        self.tt_moves[:] = 0

    def search(self, board: Board, threshold: float, *, budget: int = DEFAULT_BUDGET,
               history: Sequence[int] = ()) -> SearchResult:
        """Search ``board`` while the path's probability stays above ``threshold`` (0, 1];
        ``budget`` nodes at most; ``history`` the Zobrist keys of the game before ``board``."""
        threshold = _check_threshold(threshold)
        budget = _check_int(budget, "node budget", 1, MAX_BUDGET)
        b = check_board(board)
        hist, nhist = _history(history)
        score = int(pls_kernel(self.ws.arrays, self.ws.state, b, root_budget(threshold), self.weights, budget, hist,
                               nhist, self.tt_keys, self.tt_moves, self.model.weights, self.evw, self.ps, self.mode,
                               self.flat))
        pv = self.ws.pv
        leaf = b.copy()
        for m in pv:
            leaf = _push(leaf, m)
        return SearchResult(score, pv, leaf, self.ws.leaf_kind, self.ws.nodes, self.ws.budget_exhausted)


def pls_search(board: Board, threshold: float, weights: Evaluator, model: MoveModel, *, budget: int = DEFAULT_BUDGET,
               history: Sequence[int] = (), tt_bits: int = 0, order: str = "model") -> SearchResult:
    """Probability-limited search of one board (a fresh :class:`PlsSearcher`); ``order``
    ``"model"`` (the table's move, then by probability) or ``"default"`` (the depth-limited
    search's order). Raises ``ValueError`` (or the validators' errors) for bad arguments."""
    return PlsSearcher(weights, model, tt_bits=tt_bits, order=order).search(board, threshold, budget=budget,
                                                                             history=history)


@dataclass(frozen=True)
class PlsIteration:
    """One kept iteration of :func:`pls_iterate`: its threshold, result and the nodes so far."""

    threshold: float
    result: SearchResult
    total_nodes: int


def pls_iterate(board: Board, weights: Evaluator, model: MoveModel, *, node_limit: int, start: float = START,
                factor: float = FACTOR, floor: float = FLOOR, history: Sequence[int] = (), tt_bits: int = 16,
                searcher: PlsSearcher | None = None) -> list[PlsIteration]:
    """Iterative deepening by lowering the threshold (module docstring); the kept iterations,
    the last one the answer. Deterministic: the same arguments give the same iterations."""
    start = _check_threshold(start, "start")
    floor = _check_threshold(floor, "floor")
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0.0 < factor < 1.0:
        raise ValueError(f"factor must be in (0, 1), not {factor!r}")
    node_limit = _check_int(node_limit, "node_limit", 1, MAX_BUDGET)
    s = searcher if searcher is not None else PlsSearcher(weights, model, tt_bits=tt_bits)
    out: list[PlsIteration] = []
    total = 0
    threshold = start
    while True:
        result = s.search(board, threshold, budget=max(1, node_limit - total), history=history)
        total += result.nodes
        if result.budget_exhausted and out:
            break
        out.append(PlsIteration(threshold, result, total))
        if result.budget_exhausted or total >= node_limit or threshold * factor < floor or not result.pv:
            break
        threshold *= factor
    return out


__all__ = ["FACTOR", "FLOOR", "PLS_ORDERS", "PlsIteration", "PlsSearcher", "START", "pls_iterate", "pls_search"]
