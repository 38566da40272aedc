"""Iterative deepening over the playing search: the player of ``tuner uci``, ``tuner bench
match`` and ``tuner selfplay`` (``--search play``, the default).

:class:`PlaySearcher` has :class:`search.tree.iterative.Searcher`'s interface (``think``,
``clear``, ``abort``, ``rearm``, ``resize``, ``set_weights``, the clock plans) over
:func:`search.play.kernel.search_root`, with:

* aspiration windows from depth :data:`ASPIRATION_DEPTH`: a window of
  :data:`ASPIRATION_CP` centipawns around the last iteration's score, widened (doubled) on the
  side that failed until the score falls inside;
* a transposition table, history and countermoves kept between iterations and moves (the
  history halved between moves; :meth:`clear` for a new game);
* limits as the exact search's player: a node limit on the whole search, a :class:`TimePlan`
  (soft limit, hard deadline aborting the running iteration, the prediction of the next
  iteration's end, the best move's stability scaling the soft limit on a clock);
* an iteration cut by a limit keeps the best root move that raised the root's alpha before the
  cut (:attr:`Iteration.partial`, its score a lower bound); else the previous iteration's
  result stands. A search cut before its first iteration ended plays the best root move found,
  or the first legal move;
* ``root_moves``: the root searches only these moves (UCI's ``searchmoves``), the helpers too;
* ``multipv``: k lines at each depth (UCI's ``MultiPV``): the root as alone, then again without
  the moves of the lines before, one line at a time (Stockfish's ``pvIdx`` loop), the lines then
  ranked by score (the move played is the best-ranked); the helpers help the first search;
* ``mate_moves``: a mate in that many moves or fewer for the side to move ends the search
  (``go mate N``; the search deepens until it finds one or a limit ends it);
* ``seldepth``: the deepest ply the iteration reached, quiescence included;
* ``threads`` > 1: Lazy SMP. ``threads - 1`` helper threads search the same position at the
  same time, each with its own boards, history, killers and countermoves, all sharing the one
  transposition table (lockless: :mod:`search.play.tables`). Helper ``k`` deepens on its own
  from depth 1 + (k mod 2), full window, until the search ends; only the main thread's
  iterations are reported and played, and the helpers help through the table (cutoffs, moves
  and static evaluations the main thread finds there). The kernel releases the GIL, so the
  threads run on separate cores. More than one thread is not deterministic (as in every
  engine): which entry a thread finds depends on timing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from search.core.convert import Board, legal_moves
from search.core.types import Move
from search.core.validate import check_board
from search.evaluation.evaluation_api import EVAL_SCALE
from search.evaluation.static_eval import kernel_evaluator, new_eval_state
from search.evaluation.validate import check_evaluator
from search.play.kernel import (ROOT_ROW, S_ABORT, S_GEN, S_NODES, S_ROOT_FOUND, S_ROOT_ONLY, S_ROOT_PVLEN,
                                S_ROOT_SCORE, S_SELDEPTH, S_STOPPED, PlayState, age_history, clear_tables,
                                default_params, new_state, search_root)
from search.play.tables import lmr_table, new_table
from search.tree.alphabeta import INF
from search.tree.iterative import (MAX_DEPTH, NPS_GUESS, UNLIMITED, ClockPlanned, Iteration, MoveStability, TimePlan,
                                   _Deadline, may_start)
from search.tree.search_api import mate_in

#: the first depth searched with an aspiration window
ASPIRATION_DEPTH = 4
#: the aspiration window's half-width at first (centipawns)
ASPIRATION_CP = 20


class _StatsAbort:
    """Aborts the kernel running on ``stats`` (what a deadline aborts: not the searcher, whose
    :meth:`PlaySearcher.abort` also stops the iterations to come)."""

    __slots__ = ("stats",)

    def __init__(self, stats: np.ndarray) -> None:
        self.stats = stats

    def abort(self) -> None:
        self.stats[S_ABORT] = 1


class _Helper:
    """One Lazy SMP helper thread's state: a :class:`PlayState` on the main thread's table and
    its own evaluator state (``k``: its number, from 1)."""

    def __init__(self, main: PlayState, weights: object, k: int) -> None:
        self.k = k
        self.weights = weights
        self.state = new_state(main.params, main.tt, main.lmr)
        self.es = new_eval_state(weights, self.state.boards)
        self.stop = threading.Event()
        self.nodes = 0
        self.thread: threading.Thread | None = None

    def start(self, board: Board, hist: np.ndarray, nhist: int, generation: int, root_moves: np.ndarray) -> None:
        """Search ``board`` (``root_moves``: the root moves to search, all when empty) until
        :meth:`finish`."""
        self.stop.clear()
        self.nodes = 0
        st = self.state._replace(hist=hist)
        st.stats[S_GEN] = generation
        st.stats[S_ABORT] = 0
        _restrict_root(st, root_moves)
        age_history(st)
        self.thread = threading.Thread(target=self._run, args=(st, board, nhist), daemon=True,
                                       name=f"play-helper-{self.k}")
        self.thread.start()

    def _run(self, st: PlayState, board: Board, nhist: int) -> None:
        depth = 1 + self.k % 2
        while not self.stop.is_set() and depth <= MAX_DEPTH:
            search_root(st, self.es, kernel_evaluator(self.weights), board, depth, -int(INF), int(INF), UNLIMITED, np.int64(nhist))
            self.nodes += int(st.stats[S_NODES])
            depth += 1

    def finish(self) -> None:
        """Stop the helper and wait for it."""
        self.stop.set()
        self.state.stats[S_ABORT] = 1
        if self.thread is not None:
            self.thread.join()
            self.thread = None


class PlaySearcher(ClockPlanned):
    """The playing search for one player: weights, tables, features (``features``: names of
    :data:`search.play.kernel.FEATURES` mapped to ``False`` to switch one off, for the SPRTs that
    measure each); ``threads``: Lazy SMP with that many threads (module docstring). Not
    thread-safe except for :meth:`abort`."""

    def __init__(self, weights: object, *, tt_bits: int = 20, plan_by_ply: bool = True, adapt_time: bool = True,
                 aspiration: bool = True, features: dict[str, bool] | None = None, threads: int = 1) -> None:
        if threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        self.weights = check_evaluator(weights)
        self.plan_by_ply = plan_by_ply
        self.adapt_time = adapt_time
        self.aspiration = aspiration
        self.features = dict(features or {})
        self.params = default_params(EVAL_SCALE, **self.features)
        self.state: PlayState = new_state(self.params, new_table(tt_bits), lmr_table())
        self.es = new_eval_state(self.weights, self.state.boards)
        self.threads = threads
        self._helpers = [_Helper(self.state, self.weights, k) for k in range(1, threads)]
        self._aborted = threading.Event()
        self._generation = 0
        self.nps = NPS_GUESS
        self.searched_nodes = 0
        self.helper_nodes = 0
        self.searched_seconds = 0.0

    # the interface of search.tree.iterative.Searcher
    def set_weights(self, weights: object) -> None:
        self.weights = check_evaluator(weights)
        self.es = new_eval_state(self.weights, self.state.boards)
        self._helpers = [_Helper(self.state, self.weights, k) for k in range(1, self.threads)]
        self.clear()

    def resize(self, tt_bits: int) -> None:
        self.state = self.state._replace(tt=new_table(tt_bits))
        self._helpers = [_Helper(self.state, self.weights, k) for k in range(1, self.threads)]

    def clear(self) -> None:
        """Forget the table, history, countermoves and killers (a new game)."""
        clear_tables(self.state)
        for h in self._helpers:
            clear_tables(h.state)

    def abort(self) -> None:
        """Make :meth:`think` end now (from another thread)."""
        self._aborted.set()
        self.state.stats[S_ABORT] = 1

    def rearm(self) -> None:
        self._aborted.clear()

    def think(self, board: Board, history: Sequence[int] | np.ndarray, *, max_depth: int = MAX_DEPTH,
              node_limit: int | None = None, plan: TimePlan | None = None,
              on_iteration: Callable[[Iteration], None] | None = None,
              mate_moves: int | None = None, root_moves: Sequence[Move] | None = None,
              multipv: int = 1) -> Iteration | None:
        """Iterative deepening from depth 1 to ``max_depth`` on ``board`` (module docstring);
        ``history``: Zobrist keys of the game's positions before ``board``, oldest first;
        ``root_moves``: legal moves of ``board``, the only ones the root searches (UCI's
        ``searchmoves``; ``None`` or empty: all); ``multipv``: lines searched at each depth
        (UCI's ``MultiPV``: after the best line, the best of the root moves not yet in a line;
        at each depth the lines, ranked by score, go to ``on_iteration`` with their
        :attr:`Iteration.multipv`). Returns the last kept iteration of the best-ranked line
        (``None`` only for a position without legal moves)."""
        if multipv < 1:
            raise ValueError(f"multipv must be at least 1, not {multipv}")
        board = check_board(board)
        hist = np.zeros(max(1, len(history)), dtype=np.uint64)
        hist[: len(history)] = np.asarray(history, dtype=np.uint64)
        st = self.state._replace(hist=hist)
        legal = legal_moves(board)
        only = np.asarray(sorted({int(m) for m in root_moves or ()}), dtype=np.int32)
        foreign = np.setdiff1d(only, legal)
        if len(foreign):
            raise ValueError(f"root_moves: {len(foreign)} of them are not legal moves of the board")
        if len(only):
            legal = legal[np.isin(legal, only)]  # the fallbacks below play one of them
        _restrict_root(st, only)
        self._generation = (self._generation + 1) % 256
        st.stats[S_GEN] = self._generation
        st.stats[S_ABORT] = 1 if self._aborted.is_set() else 0
        age_history(st)
        start = time.perf_counter()
        deadline = _Deadline(_StatsAbort(st.stats), start + plan.hard) if plan is not None else None
        best: Iteration | None = None
        shown: list[Iteration] = []  # the last depth's lines, ranked (the MultiPV report)
        total = 0
        counts: list[int] = []
        stability = MoveStability()
        if len(legal) > 1:
            for h in self._helpers:
                h.start(board, hist, len(history), self._generation, only)
        try:
            for depth in range(1, max(1, min(max_depth, MAX_DEPTH)) + 1):
                scale = stability.scale if self.adapt_time else 1.0
                if best is not None and (self._aborted.is_set()
                                         or not may_start(plan, deadline, start, counts, self.nps, scale)):
                    break
                t0 = time.perf_counter()
                if multipv > 1:
                    _restrict_root(st, only)  # (the other lines left their own)
                score, nodes, stopped = self._iteration(st, board, depth, best, node_limit, total, len(history))
                seconds = time.perf_counter() - t0
                total += nodes
                if nodes >= 20_000 and seconds > 0 and not stopped:
                    self.nps = 0.25 * self.nps + 0.75 * nodes / seconds
                if stopped:
                    cut = self._cut_result(st, depth, nodes, total, start, best, legal)
                    if cut is not None and cut is not best:  # a new result (not the last iteration's again)
                        best = cut
                        if on_iteration is not None:  # with MultiPV, the last depth's other lines after it
                            others = [line for line in shown if line.pv[0] != cut.pv[0]][: multipv - 1]
                            for k, line in enumerate([cut, *others], 1):
                                on_iteration(replace(line, multipv=k))
                    break
                pv = tuple(int(m) for m in st.pv[0, : st.pvlen[0]])
                if not pv and len(legal):
                    pv = (int(legal[0]),)
                best = Iteration(depth, int(score), pv, nodes, total, time.perf_counter() - start,
                                 seldepth=int(st.stats[S_SELDEPTH]))
                report = [best]
                if multipv > 1 and len(legal) > 1:
                    more, more_nodes, stopped = self._more_lines(st, board, depth, best, shown[1:], multipv, legal,
                                                                 node_limit, total, len(history), start)
                    total += more_nodes
                    nodes += more_nodes
                    # ranked by score (a selective search may score a later line higher); when a
                    # limit cut a line, the last depth's lines of the other moves follow
                    done = sorted([best, *more], key=lambda line: -line.score)
                    seen = {line.pv[0] for line in done}
                    done += [line for line in shown if line.pv[0] not in seen][: multipv - len(done)]
                    report = [replace(line, multipv=k) for k, line in enumerate(done, 1)]
                    best, shown = report[0], report
                if best.pv:
                    stability.update(best.pv[0])
                if on_iteration is not None:
                    for line in report:
                        on_iteration(line)
                if stopped:
                    break  # a limit cut a later line: the best of this depth's finished lines stands
                counts.append(nodes)
                if len(legal) == 0 or (node_limit is not None and total >= node_limit):
                    break
                if plan is not None and len(legal) == 1:
                    break
                if mate_moves is not None and 0 < (best.mate_moves or 0) <= mate_moves:
                    break
                mate = mate_in(int(score))
                if mate is not None and abs(mate) < depth - 2 and mate_moves is None:
                    break  # a mate well inside the horizon: deeper will not change the move
        finally:
            if deadline is not None:
                deadline.cancel()
            for h in self._helpers:
                h.finish()
        #: the nodes of every thread (the iterations report the main thread's)
        self.helper_nodes = sum(h.nodes for h in self._helpers)
        self.searched_nodes = total + self.helper_nodes
        self.searched_seconds = time.perf_counter() - start
        return best

    def _iteration(self, st: PlayState, board: Board, depth: int, best: Iteration | None, node_limit: int | None,
                   total: int, nhist: int) -> tuple[int, int, bool]:
        """One iteration with aspiration windows: ``(score, nodes, stopped)``."""
        alpha, beta = -int(INF), int(INF)
        delta = ASPIRATION_CP * EVAL_SCALE
        if (self.aspiration and best is not None and not best.partial and depth >= ASPIRATION_DEPTH
                and mate_in(best.score) is None):
            alpha, beta = best.score - delta, best.score + delta
        nodes = 0
        while True:
            budget = UNLIMITED if node_limit is None else max(1, node_limit - total - nodes)
            score = int(search_root(st, self.es, kernel_evaluator(self.weights), board, depth, alpha, beta, budget, np.int64(nhist)))
            nodes += int(st.stats[S_NODES])
            if st.stats[S_STOPPED]:
                return score, nodes, True
            if score <= alpha and alpha > -INF:
                beta = (alpha + beta) // 2
                alpha = max(score - delta, -int(INF))
            elif score >= beta and beta < INF:
                beta = min(score + delta, int(INF))
            else:
                return score, nodes, False
            delta *= 2
            if delta > 1000 * EVAL_SCALE:
                alpha, beta = -int(INF), int(INF)

    def _more_lines(self, st: PlayState, board: Board, depth: int, first: Iteration, last: list[Iteration],
                    multipv: int, legal: np.ndarray, node_limit: int | None, total: int, nhist: int,
                    start: float) -> tuple[list[Iteration], int, bool]:
        """Lines 2 to ``multipv`` of iteration ``depth`` after its line 1 ``first``: each the
        root searched without the moves of the lines before it, in an aspiration window around
        the score of the last depth's line of the same rank (``last``). ``(lines, nodes,
        stopped)``; when a limit cuts a line, the search ends."""
        lines: list[Iteration] = []
        chosen = [first.pv[0]]
        nodes = 0
        for k in range(2, multipv + 1):
            rest = legal[~np.isin(legal, chosen)]
            if not len(rest):
                break
            _restrict_root(st, rest)
            before = last[k - 2] if len(last) >= k - 1 else None
            score, n, stopped = self._iteration(st, board, depth, before, node_limit, total + nodes, nhist)
            nodes += n
            if stopped:
                return lines, nodes, True
            pv = tuple(int(m) for m in st.pv[0, : st.pvlen[0]]) or (int(rest[0]),)
            line = Iteration(depth, int(score), pv, n, total + nodes, time.perf_counter() - start,
                             seldepth=int(st.stats[S_SELDEPTH]), multipv=k)
            lines.append(line)
            chosen.append(pv[0])
        return lines, nodes, False

    def _cut_result(self, st: PlayState, depth: int, nodes: int, total: int, start: float,
                    best: Iteration | None, legal: np.ndarray) -> Iteration | None:
        """What a cut iteration gives: its root record (a move that raised the root's alpha),
        else the previous iteration's result, else (no iteration ended) the first legal move."""
        seconds = time.perf_counter() - start
        if st.stats[S_ROOT_FOUND]:
            pv: tuple[Move, ...] = tuple(int(m) for m in st.pv[ROOT_ROW, : st.stats[S_ROOT_PVLEN]])
            if pv:
                return Iteration(depth, int(st.stats[S_ROOT_SCORE]), pv, nodes, total, seconds, partial=True,
                                 seldepth=int(st.stats[S_SELDEPTH]))
        if best is not None or len(legal) == 0:
            return best
        return Iteration(depth, 0, (int(legal[0]),), nodes, total, seconds, partial=True)


def _restrict_root(st: PlayState, moves: np.ndarray) -> None:
    """Make the root of searches on ``st`` search only ``moves`` (int32, legal; empty: all)."""
    st.root_only[: len(moves)] = moves
    st.stats[S_ROOT_ONLY] = len(moves)


__all__ = ["ASPIRATION_CP", "ASPIRATION_DEPTH", "PlaySearcher"]
