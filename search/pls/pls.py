"""Probability-limited search (Giraffe, Lai 2015): the Python API over :mod:`search.pls.pls_kernels`.

:func:`pls_search` searches one board to a probability threshold and returns the default
search's :class:`search.tree.search_api.SearchResult` (score, PV, PV leaf and its kind, nodes);
:func:`pls_iterate` is iterative deepening by lowering the threshold: ``start``, then times
``factor`` per iteration, down to ``floor``, within a total node limit (each iteration's node
budget is what the earlier ones left), with one move-ordering transposition table kept across the iterations, and within a
time limit (``movetime``, or a :class:`search.iterative.TimePlan`) kept by the depth-limited
search's watchdog: at the deadline the running iteration is aborted
(:meth:`search.alphabeta.Workspace.abort`). A cut iteration (by the time or the node limit) is
kept as the depth-limited search keeps one (:mod:`search.tree.iterative`): once its first root move
(the table's, the previous iteration's best) was searched in full, the best of its root moves
searched in full is its result (:attr:`PlsIteration.partial`, the score a lower bound);
otherwise it is discarded, unless it is the first (``keep_partial=False``: discarded unless it
is the first, the behaviour before).

The move model is evaluated at the nodes whose path probability is above ``model_above``
(:class:`PlsSearcher`; 0, the default here: every node); below it a cheap pre-move model
(``leaf_model``, :func:`load_leaf_model`) or a static prior splits the probability
(:mod:`search.pls.pls_kernels`, the mixed search of issue 43).

:meth:`PlsSearcher.think` is :meth:`search.tree.iterative.Searcher.think` for the probability-limited
search (same arguments and :class:`search.tree.iterative.Iteration` results, ``depth`` counting the
iterations: iteration ``d`` searches to the threshold ``start * factor**(d - 1)``), so that
``tuner uci``, matches and EPD suites play with either.

:func:`pls_sweep` is :func:`search.tree.search_api.sweep` through the probability-limited search
(:mod:`search.pls.pls_sweep`): every legal move of every position searched as its subtree in the
position's probability-limited tree, the PV leaves kept, so that MMTO trains through it.
"""

from __future__ import annotations

import math
import operator
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from search.tree.alphabeta import Workspace
from search.core.convert import Board, _push, legal_moves
from search.tree.iterative import (MAX_DEPTH, NPS_GUESS, UNLIMITED, ClockPlanned, Iteration, TimePlan, _Deadline,
                                   may_start)
from search.pls.move_catalog import GROUP_NAMES, GROUP_OFFSETS, GROUP_SIZES, PREMOVE_GROUPS
from search.pls.move_model import MoveModel, evaluation_weights, load_move_model
from search.evaluation.network import QuantizedNetwork
from search.pls.pls_kernels import (LOG_SCALE, PLS_ORDER_DEFAULT, PLS_ORDER_MODEL, model_units, new_pls_scratch, pls_kernel,
                                root_budget)
from search.pls.pls_sweep import pls_sweep_kernel
from search.tree.search_api import (DEFAULT_BUDGET, MAX_BUDGET, MAX_TT_BITS, Evaluator, SearchResult, Sweep, _check_int,
                               move_pointers, threads)
from search.core.validate import check_board, check_boards
from search.evaluation.validate import check_evaluator

#: the orders of :func:`pls_search`'s full-width nodes
PLS_ORDERS = {"model": PLS_ORDER_MODEL, "default": PLS_ORDER_DEFAULT}
#: the default threshold schedule of :func:`pls_iterate`: 1/32 (about depth 1 at 32 moves per
#: node), divided by 4 per iteration, down to 1e-12
START, FACTOR, FLOOR = 1 / 32, 0.25, 1e-12
#: the path probability above which :class:`PlsSearcher` evaluates the move model by default
#: (0: at every node, the search before issue 43); ``tuner uci``'s ``PlsModelAbove`` default is
#: :data:`MODEL_ABOVE_PLAY`
MODEL_ABOVE = 0.0
#: the default of play (``tuner uci``, matches): chosen by games at 100 ms a move
#: (docs/move-model.md, "The mixed search")
MODEL_ABOVE_PLAY = 1 / 64
#: what splits the probability below ``model_above`` in play (``tuner uci``'s ``PlsLeafModel``,
#: matches): the built-in pre-move model, chosen by games at 100 ms a move (docs/move-model.md,
#: "The mixed search"); :data:`STATIC_PRIOR` names the static prior
LEAF_MODEL_PLAY = "gm-premove"
STATIC_PRIOR = "prior"


def load_leaf_model(spec: str | Path) -> MoveModel | None:
    """The model below ``model_above`` that ``spec`` names: ``None`` for :data:`STATIC_PRIOR`, else
    a move model (:func:`search.pls.move_model.load_move_model`) with weights in the pre-move
    groups only (:data:`search.pls.move_catalog.PREMOVE_GROUPS`, the only ones the search reads
    there); a one-line ``ValueError`` otherwise."""
    if spec == STATIC_PRIOR:
        return None
    model = load_move_model(spec)
    for g, name in enumerate(GROUP_NAMES):
        block = model.weights[GROUP_OFFSETS[g]:GROUP_OFFSETS[g] + GROUP_SIZES[g]]
        if name not in PREMOVE_GROUPS and np.any(block != 0):
            raise ValueError(f"{spec}: not a pre-move model: it has weights in the group {name!r}, which the search "
                             f"does not compute near the leaves (train one with 'tuner moves train --groups "
                             f"premove'), or give {STATIC_PRIOR}")
    return model


def check_model_above(p: float) -> float:
    """``p`` as :class:`PlsSearcher`'s ``model_above``: a probability in [0, 1] (``ValueError``
    otherwise)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"model_above must be a probability in [0, 1], not {p!r}")
    return float(p)


def _check_threshold(threshold: float, what: str = "threshold") -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 < threshold <= 1.0:
        raise ValueError(f"{what} must be a probability in (0, 1], not {threshold!r}")
    return float(threshold)


def _flat_units(flat: float) -> int:
    """The constant-branching mock's cost of a move in budget units (``flat`` >= 1 moves per
    node), or 0 (the model's probabilities) for ``flat`` 0."""
    if isinstance(flat, bool) or not isinstance(flat, (int, float)) or not (flat >= 1 or flat == 0):
        raise ValueError(f"flat must be a branching factor >= 1 or 0, not {flat!r}")
    return int(round(math.log(flat) * LOG_SCALE)) if flat >= 1 else 0


def _order(order: str) -> int:
    if order not in PLS_ORDERS:
        raise ValueError(f"order must be one of {', '.join(PLS_ORDERS)}, not {order!r}")
    return PLS_ORDERS[order]


def _history(history: Sequence[int]) -> tuple[np.ndarray, int]:
    try:
        keys = [operator.index(k) for k in history]
        return np.array(keys or [0], dtype=np.uint64), len(keys)
    except (TypeError, OverflowError):
        raise ValueError("history must hold Zobrist keys: integers in [0, 2**64)") from None


@dataclass(frozen=True)
class PlsIteration:
    """One kept iteration of :func:`pls_iterate`: its threshold, result and the nodes so far."""

    threshold: float
    result: SearchResult
    total_nodes: int
    #: cut short by a limit or an abort, its result the best of the root moves searched in full
    #: (score a lower bound; ``result.kind`` -1: not recorded)
    partial: bool = False


class PlsSearcher(ClockPlanned):
    """One player's probability-limited search: evaluator, move model, workspace, scratch and a
    move-ordering table (``tt_bits`` log2 entries, 0: none) kept between searches.

    ``model_above``: the model splits the probability at full-width nodes whose path probability
    is above it (0: everywhere; 1: nowhere), below it ``leaf_model`` (a pre-move model, whose
    weights outside :data:`search.pls.move_catalog.PREMOVE_GROUPS` are not read) or, ``None``,
    the static prior (module docstring);
    ``keep_partial``: keep a cut iteration whose first root move was searched in full;
    ``plan_by_ply``: on a clock, allot moves by the game's ply (:class:`ClockPlanned`)."""

    def __init__(self, weights: Evaluator, model: MoveModel, *, tt_bits: int = 0, order: str = "model",
                 flat: float = 0.0, start: float = START, model_above: float = MODEL_ABOVE,
                 keep_partial: bool = True, leaf_model: MoveModel | None = None, plan_by_ply: bool = True) -> None:
        self.weights = check_evaluator(weights)
        self.model = model
        #: the threshold of :meth:`think`'s first iteration
        self.start = _check_threshold(start, "start")
        #: the path probability above which the model splits a node's probability
        self.model_above = check_model_above(model_above)
        self.keep_partial = bool(keep_partial)
        self.plan_by_ply = bool(plan_by_ply)
        #: the pre-move model below ``model_above`` (``None``: the static prior)
        self.leaf_model = leaf_model
        self._lw = (np.empty(0, dtype=np.float64) if leaf_model is None
                    else np.ascontiguousarray(leaf_model.weights, dtype=np.float64))
        self.evw = evaluation_weights()
        self.mode = _order(order)
        #: the constant-branching mock (budget units per move) or 0: the model's probabilities
        self.flat = _flat_units(flat)
        tt_bits = _check_int(tt_bits, "tt_bits", 0, MAX_TT_BITS)
        self.tt_keys = np.zeros(1 << tt_bits if tt_bits else 0, dtype=np.uint64)
        self.tt_moves = np.zeros(len(self.tt_keys), dtype=np.int32)
        self.ws = Workspace(self.weights)
        self.ps = new_pls_scratch()
        self._aborted = threading.Event()
        #: running speed estimate (nodes per second), as :class:`search.tree.iterative.Searcher`'s
        self.nps = NPS_GUESS
        #: the last search's nodes and seconds (a discarded iteration's included), whether it
        #: discarded an iteration cut by a limit or an abort, and whether its deadline passed
        self.searched_nodes = 0
        self.searched_seconds = 0.0
        self.cut = False
        self.timed_out = False

    def abort(self) -> None:
        """Make :meth:`think` (or :func:`pls_iterate`) end now, from another thread: the running
        iteration stops and is discarded, and none starts until :meth:`rearm`."""
        self._aborted.set()
        self.ws.abort()

    def rearm(self) -> None:
        """Clear an :meth:`abort` (call before starting a new search)."""
        self._aborted.clear()

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
                               self.flat, model_units(threshold, self.model_above), self._lw))
        pv = self.ws.pv
        leaf = b.copy()
        for m in pv:
            leaf = _push(leaf, m)
        return SearchResult(score, pv, leaf, self.ws.leaf_kind, self.ws.nodes, self.ws.budget_exhausted)

    def iterations(self, board: Board, *, node_limit: int | None = None, plan: TimePlan | None = None,
                   start: float = START, factor: float = FACTOR, floor: float = FLOOR,
                   max_iterations: int = MAX_DEPTH, history: Sequence[int] = ()) -> Iterator[PlsIteration]:
        """The kept iterations of iterative deepening by lowering the threshold (module
        docstring), as they end; ``node_limit`` bounds the total nodes (``None``: no bound),
        ``plan`` the time. Afterwards :attr:`searched_nodes`, :attr:`searched_seconds`,
        :attr:`cut` and :attr:`timed_out` describe the search."""
        start = _check_threshold(start, "start")
        floor = _check_threshold(floor, "floor")
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0.0 < factor < 1.0:
            raise ValueError(f"factor must be in (0, 1), not {factor!r}")
        # UNLIMITED (2**50) at most: an abort raises the node counter past it (not past MAX_BUDGET)
        limit = UNLIMITED if node_limit is None else min(_check_int(node_limit, "node_limit", 1, MAX_BUDGET), UNLIMITED)
        max_iterations = _check_int(max_iterations, "max_iterations", 1, MAX_DEPTH)
        board = check_board(board)
        n_legal = len(legal_moves(board))
        t0 = time.perf_counter()
        deadline = _Deadline(self.ws, t0 + plan.hard) if plan is not None else None
        self.cut = self.timed_out = False
        total, threshold = 0, start
        counts: list[int] = []  # nodes of each kept iteration
        try:
            while True:
                if counts and (self._aborted.is_set() or not may_start(plan, deadline, t0, counts, self.nps)):
                    break
                t1 = time.perf_counter()
                result = self.search(board, threshold, budget=max(1, limit - total), history=history)
                seconds = time.perf_counter() - t1
                total += result.nodes
                if result.nodes >= 20_000 and seconds > 0 and not result.budget_exhausted:
                    self.nps = 0.25 * self.nps + 0.75 * result.nodes / seconds
                self.cut = result.budget_exhausted
                partial = self._partial(board, result.nodes) if self.cut else None
                if self.cut and counts and partial is None:
                    break  # discarded
                counts.append(result.nodes)
                if partial is not None:
                    yield PlsIteration(threshold, partial, total, partial=True)
                else:
                    yield PlsIteration(threshold, result, total)
                if (self.cut or total >= limit or len(counts) >= max_iterations or threshold * factor < floor
                        or not result.pv or (plan is not None and n_legal == 1)):
                    break
                threshold *= factor
        finally:
            if deadline is not None:
                deadline.cancel()
                self.timed_out = deadline.passed()
            self.searched_nodes = total
            self.searched_seconds = time.perf_counter() - t0

    def _partial(self, board: Board, nodes: int) -> SearchResult | None:
        """A cut iteration's result from the kernel's root record (the best of the root moves
        searched in full), or ``None`` to discard it (none, or not :attr:`keep_partial`)."""
        if not self.keep_partial or self.ws.root_moves_done == 0:
            return None
        score, pv = self.ws.root_record
        if not pv:
            return None
        leaf = board.copy()
        for m in pv:
            leaf = _push(leaf, m)
        return SearchResult(score, pv, leaf, -1, nodes, True)

    def think(self, board: Board, history: Sequence[int] | np.ndarray, *, max_depth: int = MAX_DEPTH,
              node_limit: int | None = None, plan: TimePlan | None = None,
              on_iteration: Callable[[Iteration], None] | None = None, start: float | None = None,
              factor: float = FACTOR) -> Iteration | None:
        """:meth:`search.tree.iterative.Searcher.think` by lowering the threshold: ``max_depth``
        iterations at most (iteration ``d``: threshold ``start * factor**(d - 1)``, ``start``
        by default :attr:`start`); the last kept iteration (``None`` only for a position
        without legal moves)."""
        t0 = time.perf_counter()
        best: Iteration | None = None
        keys = [int(k) for k in history]
        first = self.start if start is None else start
        for depth, it in enumerate(self.iterations(board, node_limit=node_limit, plan=plan, start=first,
                                                   factor=factor, max_iterations=max(1, min(max_depth, MAX_DEPTH)),
                                                   history=keys), start=1):
            r = it.result
            if not r.pv:
                continue  # no legal move (mate or stalemate): nothing to play
            best = Iteration(depth, r.score, r.pv, r.nodes, it.total_nodes, time.perf_counter() - t0, it.partial)
            if on_iteration is not None:
                on_iteration(best)
        return best


def pls_search(board: Board, threshold: float, weights: Evaluator, model: MoveModel, *, budget: int = DEFAULT_BUDGET,
               history: Sequence[int] = (), tt_bits: int = 0, order: str = "model",
               model_above: float = MODEL_ABOVE) -> SearchResult:
    """Probability-limited search of one board (a fresh :class:`PlsSearcher`); ``order``
    ``"model"`` (the table's move, then by probability) or ``"default"`` (the depth-limited
    search's order); ``model_above`` as for :class:`PlsSearcher`. Raises ``ValueError`` (or the validators' errors) for bad arguments."""
    return PlsSearcher(weights, model, tt_bits=tt_bits, order=order, model_above=model_above).search(board, threshold, budget=budget,
                                                                             history=history)


# many parameters: the keyword-only limits and options of the public API, each in the docstring
def pls_iterate(board: Board, weights: Evaluator, model: MoveModel, *, node_limit: int | None = None,
                movetime: float | None = None, start: float = START, factor: float = FACTOR, floor: float = FLOOR,
                history: Sequence[int] = (), tt_bits: int = 16, searcher: PlsSearcher | None = None,
                model_above: float = MODEL_ABOVE) -> list[PlsIteration]:
    """Iterative deepening by lowering the threshold (module docstring) within ``node_limit``
    nodes and/or ``movetime`` seconds (give at least one; at the deadline the running iteration
    is aborted and kept or discarded as the module docstring says); ``model_above`` as for
    :class:`PlsSearcher` (a given ``searcher``'s own is used); the kept iterations, the last one
    the answer. Deterministic without ``movetime``: the same arguments give the same iterations."""
    if node_limit is None and movetime is None:
        raise ValueError("give node_limit or movetime")
    if movetime is not None and (isinstance(movetime, bool) or not isinstance(movetime, (int, float))
                                 or not 0 < movetime < 1e7):
        raise ValueError(f"movetime must be a positive number of seconds, not {movetime!r}")
    s = searcher if searcher is not None else PlsSearcher(weights, model, tt_bits=tt_bits, model_above=model_above)
    plan = None if movetime is None else TimePlan.fixed(float(movetime))
    return list(s.iterations(board, node_limit=node_limit, plan=plan, start=start, factor=factor, floor=floor,
                             history=history))


def pls_sweep(boards: np.ndarray, threshold: float, weights: Evaluator, model: MoveModel, *,
              budget: int = DEFAULT_BUDGET, leaves: bool = True, n_threads: int | None = None, order: str = "model",
              flat: float = 0.0) -> Sweep:
    """For each position (uint64[P, BOARD_WORDS]) and each of its legal moves, search the child
    as the move's subtree of the position's probability-limited tree to ``threshold`` in (0, 1]
    (:mod:`search.pls.pls_sweep`; ``budget`` nodes per child search), keeping the PV leaves: a
    :class:`search.tree.search_api.Sweep`, rows as :func:`search.tree.search_api.sweep`'s. ``weights``
    linear (a network: one-line ``ValueError``); ``order`` and ``flat`` as for
    :class:`PlsSearcher`."""
    threshold = _check_threshold(threshold)
    budget = _check_int(budget, "node budget", 1, MAX_BUDGET)
    if isinstance(weights, QuantizedNetwork):
        raise ValueError("the probability-limited sweep takes linear weights, not a network")
    mode, flat_units = _order(order), _flat_units(flat)
    boards = check_boards(boards)
    w = check_evaluator(weights)
    with threads(n_threads):
        pos_ptr = move_pointers(boards)
        return Sweep(pos_ptr, *pls_sweep_kernel(boards, pos_ptr, root_budget(threshold), w, budget, model.weights,
                                                evaluation_weights(), mode, flat_units, bool(leaves)))


__all__ = ["FACTOR", "FLOOR", "LEAF_MODEL_PLAY", "MODEL_ABOVE", "MODEL_ABOVE_PLAY", "PLS_ORDERS", "STATIC_PRIOR",
           "load_leaf_model", "PlsIteration", "PlsSearcher", "START", "pls_iterate", "pls_search",
           "pls_sweep"]
