"""Iterative deepening: the player that UCI, matches and EPD suites share.

:class:`Searcher` plays one side: it owns the weights, a search workspace and a move-ordering
transposition table kept between iterations and moves (:meth:`Searcher.clear` for a new game),
and runs iterative deepening over :func:`search.tree.alphabeta.search_kernel` with the game's history
keys so that repetitions score as draws. Limits:

* a node limit bounds the total: each iteration's node budget is what the earlier ones left,
  so a search stopped by it counts exactly the limit (the kernel counts no node past its
  budget);
* time is managed through a :class:`TimePlan`: a *soft* limit after which no iteration starts
  (nor, unless the plan says ``fill``, one predicted to end after the hard limit: last
  iteration's nodes x the measured growth factor / the measured speed; with
  ``Searcher(predict_first_move=True)``, a search that keeps a cut iteration predicts only the
  next iteration's first root move, as large a share of it as in the last completed ones,
  since once that move is done the iteration gives the move; ``bench/README.md`` has why it is
  not the default), and a *hard* limit,
  a deadline at which a watchdog thread aborts the running iteration; on a clock (a plan
  without ``fill``) the soft limit is scaled by the best move's stability
  (:class:`MoveStability`: more time while the best move changes between iterations, less
  once it has held for several), never past the hard limit;
* the kernel cannot be interrupted by design, so an abort (the deadline's, or
  :meth:`Searcher.abort` from another thread) goes through its node counter
  (:meth:`search.tree.alphabeta.Workspace.abort` raises it past the budget; the kernel then scores
  every remaining node statically and returns within microseconds).

An iteration cut short by a limit or an abort keeps what it finished: the kernel records the
best of the root moves it searched in full (:attr:`search.tree.alphabeta.Workspace.root_record`),
and once the first of them, the previous iteration's best move (the table orders it first),
has been searched in full, that record is the iteration's result (:attr:`Iteration.partial`,
its score a lower bound at that depth). A cut iteration that had not finished its first root
move is discarded: its nodes count, its move is not played (the previous iteration's is); the
kernel's own result of a cut iteration keeps the search's contract but some of its root moves
were scored by static evaluation, so it is not the best move at that depth. The first
iteration is kept even then, so that a search always has a move. ``Searcher(keep_partial=False)``
discards every cut iteration but the first (a baseline for ``bench/clock.py``, which measures
what keeping them is worth).

The UCI protocol over it is :mod:`tuner.uci`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from search.tree.alphabeta import MAX_PLY, WS_BOARDS, Workspace, search_kernel
from search.tree.search_api import mate_in
from search.core.convert import Board, legal_moves
from search.evaluation.evaluation_api import EVAL_SCALE
from search.core.types import Move, Score
from search.evaluation.static_eval import new_eval_state
from search.core.validate import check_board
from search.evaluation.validate import check_evaluator

#: deepest iteration (the kernel's stack holds MAX_PLY plies including quiescence)
MAX_DEPTH = MAX_PLY - 4
#: nodes per second assumed before any iteration has been measured
NPS_GUESS = 200_000.0
#: a node budget that never binds
UNLIMITED = 1 << 50
#: bytes per transposition-table entry (uint64 key + int32 move)
_TT_ENTRY_BYTES = 12


def tt_bits_for(mb: int) -> int:
    """Log2 of the number of table entries that fit in ``mb`` MiB."""
    entries = max(1, mb * (1 << 20) // _TT_ENTRY_BYTES)
    return entries.bit_length() - 1


@dataclass(frozen=True)
class Iteration:
    """One completed iteration: ``score`` in eval units (centipawns x PHASE_MAX, side to
    move's view), the packed PV, this iteration's nodes and the search's totals so far."""

    depth: int
    score: Score
    pv: tuple[Move, ...]
    nodes: int
    total_nodes: int
    seconds: float
    #: cut short by a limit or an abort: the best of the root moves searched in full, its
    #: score a lower bound of the iteration's
    partial: bool = False
    #: the deepest ply the iteration reached, quiescence included (0: not measured, as by the
    #: exact search's kernel)
    seldepth: int = 0
    #: the line's rank when several are searched (UCI's ``MultiPV``: the best root move is line
    #: 1, the best of the others line 2, ...)
    multipv: int = 1

    @property
    def mate_moves(self) -> int | None:
        """Moves to mate as UCI reports them (negative: the side to move is mated)."""
        plies = mate_in(self.score)
        if plies is None:
            return None
        return (plies + 1) // 2 if plies > 0 else -((-plies + 1) // 2)

    @property
    def score_cp(self) -> int:
        return int(round(self.score / EVAL_SCALE))

    def uci_score(self) -> str:
        """``cp N`` or ``mate N``, with ``lowerbound`` for a :attr:`partial` iteration."""
        mate = self.mate_moves
        text = f"mate {mate}" if mate is not None else f"cp {self.score_cp}"
        return text + " lowerbound" if self.partial else text


@dataclass(frozen=True)
class TimePlan:
    """Seconds from the start of a search.

    soft
        No iteration starts after it.
    hard
        The deadline: the running iteration is aborted then (kept or discarded as any cut
        iteration, module docstring).
    fill
        Deepen until ``hard`` whatever the prediction (``go movetime``: the time was given to be
        used). Otherwise no iteration starts that is predicted to end after ``hard`` (or its
        first root move: :func:`may_start`).
    """

    soft: float
    hard: float
    fill: bool = False

    @classmethod
    def fixed(cls, seconds: float) -> TimePlan:
        """Search for ``seconds`` (``go movetime``): deepen until then, then stop."""
        return cls(seconds, seconds, fill=True)

    @classmethod
    def for_clock(cls, left: float, increment: float = 0.0, moves_to_go: int | None = None,
                  overhead: float = 0.0, ply: int | None = None) -> TimePlan:
        """A move's plan on a clock (seconds; ``tuner uci``'s ``wtime``/``btime``, the match's
        ``--tc``).

        With the game's ``ply`` (0 before White's first move) and no ``moves_to_go``, the *soft*
        limit follows the game's course (:func:`soft_by_ply`: less than a thirtieth of the time
        at the first moves, more through the middlegame, then the increment's worth), the
        allocation of a :class:`Searcher` with :attr:`~Searcher.plan_by_ply` (the engine's).
        Otherwise, the allocation before issue 43: of the time ``left`` less the ``overhead`` (at
        least a millisecond), its share per move (``moves_to_go``, 30 when not given, at most 50)
        plus 3/4 of the ``increment``. Either way the *hard* limit is 3 x soft, at most a third
        of the time left (four fifths on the last move before the time control)."""
        left_s = max(left - overhead, 0.001)
        togo = min(max(moves_to_go or 30, 1), 50)
        if ply is not None and moves_to_go is None:
            soft = soft_by_ply(left, increment, ply, overhead)
        else:
            soft = left_s / togo + 0.75 * increment
        hard = min(3 * soft, left_s / 3 if togo > 1 else left_s * 0.8)
        return cls(min(soft, hard), hard)


#: the moves ahead that :func:`soft_by_ply` plans for (Stockfish's horizon)
CLOCK_HORIZON = 50


def soft_by_ply(left: float, increment: float, ply: int, overhead: float = 0.0) -> float:
    """The soft limit (seconds) of a move at game ply ``ply`` with ``left`` seconds on the clock
    and ``increment`` seconds a move, without moves to go: Stockfish 16's optimum time
    (``src/timeman.cpp``, ``TimeManagement::init``, the branch without ``movestogo``). Of the
    time there is for the next 50 moves, T = left + 49 increments - 52 overheads (at least a
    millisecond), the share

        min(0.0122 + (ply + 2.95) ** 0.462 * c, 0.213 * left / T),
        c = min(0.00308 + 0.000319 * log10(left), 0.00506),

    which grows with the ply (on a 10+0.1 clock from 2.2 % of T at ply 8 to 3.2 % at ply 40)
    until the cap, about a fifth of the time left, binds as the clock runs down. Stockfish
    multiplies it by factors of its own search (a falling score, best-move changes); here the
    soft limit is scaled by :class:`MoveStability` instead. Below a second left, with an
    increment under a second, the horizon shrinks to 50 x ``left`` moves as Stockfish's does (at
    least one here)."""
    horizon = CLOCK_HORIZON
    if left < 1.0 and increment < 1.0:
        horizon = max(1, int(round(left * 1000) * CLOCK_HORIZON / 1000))  # whole milliseconds, as Stockfish
    total = max(left + increment * (horizon - 1) - overhead * (2 + horizon), 0.001)
    c = min(0.00308 + 0.000319 * math.log10(max(left, 0.001)), 0.00506)
    share = min(0.0122 + math.pow(max(ply, 0) + 2.95, 0.462) * c, 0.213 * max(left, 0.0) / total)
    return max(share * total, 0.0005)


#: completed iterations in a row with the same best move after which the move counts as stable
STABLE_ITERATIONS = 3
#: the soft limit's scale once the best move is stable
STABLE_SCALE = 0.7
#: the soft limit's largest scale (the hard limit bounds it anyway)
MAX_SOFT_SCALE = 2.5
#: the least share of an iteration's nodes its first root move is taken to need (with
#: :attr:`Searcher.predict_first_move`, that share of the next one is predicted, :func:`may_start`)
MIN_FIRST_SHARE = 0.25
#: completed iterations smaller than this (nodes) say nothing of the first move's share
FIRST_SHARE_MIN_NODES = 2_000


class MoveStability:
    """How settled the best move of a search is, as a scale of the soft time limit.

    After each completed iteration :meth:`update` takes its best move. ``changes`` is a decaying
    count of best-move changes (halved at each iteration, plus one when the move changed: a
    change in the last iteration counts 1, two iterations back 1/2, ...), as Stockfish's
    ``totBestMoveChanges`` (its ``search.cpp``, the time check after each iteration; its
    factor there is about ``1 + 2 x changes``, the coefficient 1.7 to 2.1 across versions,
    beside other factors this search lacks). :attr:`scale` is ``1 + changes``, at most
    :data:`MAX_SOFT_SCALE`, and :data:`STABLE_SCALE` instead once the move has held for
    :data:`STABLE_ITERATIONS` iterations in a row (the changes long decayed): a search whose
    move keeps changing thinks up to twice and a half its share, one whose move has settled
    stops at seven tenths of it.
    """

    def __init__(self) -> None:
        self.move: Move | None = None
        #: decaying count of best-move changes (see the class docstring)
        self.changes = 0.0
        #: completed iterations since the best move last changed (0: it changed in the last one)
        self.held = 0

    def update(self, move: Move) -> None:
        changed = self.move is not None and move != self.move
        self.changes = self.changes / 2 + (1.0 if changed else 0.0)
        self.held = 0 if changed or self.move is None else self.held + 1
        self.move = move

    @property
    def scale(self) -> float:
        if self.held >= STABLE_ITERATIONS:
            return STABLE_SCALE
        return min(1.0 + self.changes, MAX_SOFT_SCALE)


class Abortable(Protocol):
    """What a deadline aborts: a search workspace (:class:`search.tree.alphabeta.Workspace`) or
    the playing search's handle (:mod:`search.play.searcher`)."""

    def abort(self) -> None: ...


class _Deadline:
    """A watchdog thread that aborts the search on ``ws`` at ``when`` (``time.perf_counter``
    seconds), and again every millisecond until :meth:`cancel` (an abort written just before an
    iteration starts is reset by it)."""

    def __init__(self, ws: Abortable, when: float) -> None:
        self.when = when
        self.expired = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ws, when), name="search-deadline", daemon=True)
        self._thread.start()

    def _run(self, ws: Abortable, when: float) -> None:
        if self._done.wait(max(0.0, when - time.perf_counter())):
            return
        self.expired.set()
        while not self._done.is_set():
            ws.abort()
            self._done.wait(0.001)

    def cancel(self) -> None:
        self._done.set()
        self._thread.join()

    def passed(self) -> bool:
        """Whether the deadline has passed: by the watchdog, or by the clock when the watchdog
        thread has not had its turn yet (a busy machine) while the search saw the time was up
        and stopped (:func:`may_start`)."""
        return self.expired.is_set() or time.perf_counter() >= self.when


class ClockPlanned:
    """A player that plans its moves on a clock: :attr:`plan_by_ply` says how (shared by
    :class:`Searcher` and :class:`search.pls.pls.PlsSearcher`)."""

    #: whether a clock's moves are allotted by the game's ply (:func:`soft_by_ply`);
    #: ``False``: a thirtieth of the time left (the engine before issue 43)
    plan_by_ply: bool = True

    def clock_plan(self, left: float, increment: float, ply: int, moves_to_go: int | None = None,
                   overhead: float = 0.0) -> TimePlan:
        """This player's plan of a move at game ply ``ply`` (0 before White's first move) with
        ``left`` seconds on its clock and ``increment`` seconds a move: :meth:`TimePlan.for_clock`,
        by the ply when :attr:`plan_by_ply`."""
        return TimePlan.for_clock(left, increment, moves_to_go, overhead, ply if self.plan_by_ply else None)


class Searcher(ClockPlanned):
    """Iterative deepening for one player: weights, workspace and transposition table.

    Not thread-safe except for :meth:`abort`, which may be called from another thread while
    :meth:`think` runs.
    """

    def __init__(self, weights: object, *, tt_bits: int = 20, keep_partial: bool = True,
                 adapt_time: bool = True, predict_first_move: bool = False, plan_by_ply: bool = True) -> None:
        self.weights = check_evaluator(weights)
        #: whether a cut iteration whose first root move was searched in full gives the move
        #: (module docstring); ``False``: discard it
        self.keep_partial = keep_partial
        #: whether a clock's soft limit follows the best move's stability (:class:`MoveStability`);
        #: ``False``: the plan's soft limit as it stands (the engine before issue 43)
        self.adapt_time = adapt_time
        #: whether, keeping cut iterations, a clock's prediction covers only the next iteration's
        #: first root move (module docstring; ``bench/clock.py --first-move-gate``)
        self.predict_first_move = predict_first_move
        self.plan_by_ply = plan_by_ply
        self.ws = Workspace(self.weights)
        self.tt_keys = np.zeros(1 << tt_bits, dtype=np.uint64)
        self.tt_moves = np.zeros(1 << tt_bits, dtype=np.int32)
        self._aborted = threading.Event()
        #: running speed estimate (nodes per second) from iterations of at least 20,000 nodes
        self.nps = NPS_GUESS
        #: the last :meth:`think`'s nodes and seconds, a discarded iteration's included
        self.searched_nodes = 0
        self.searched_seconds = 0.0

    def set_weights(self, weights: object) -> None:
        """Search with ``weights`` (linear int32 weights or a network) from now on."""
        self.weights = check_evaluator(weights)
        self.ws.state = new_eval_state(self.weights, self.ws.arrays[WS_BOARDS])
        self.clear()

    def resize(self, tt_bits: int) -> None:
        self.tt_keys = np.zeros(1 << tt_bits, dtype=np.uint64)
        self.tt_moves = np.zeros(1 << tt_bits, dtype=np.int32)

    def clear(self) -> None:
        """Forget the transposition table (a new game)."""
        self.tt_keys[:] = 0
        self.tt_moves[:] = 0

    def abort(self) -> None:
        """Make :meth:`think` end now (from another thread): its running iteration stops (kept
        or discarded as any cut iteration), and no further iteration starts until :meth:`rearm`."""
        self._aborted.set()
        self.ws.abort()

    def rearm(self) -> None:
        """Clear an :meth:`abort` (call before starting a new search)."""
        self._aborted.clear()

    def think(self, board: Board, history: Sequence[int] | np.ndarray, *, max_depth: int = MAX_DEPTH,
              node_limit: int | None = None, plan: TimePlan | None = None,
              on_iteration: Callable[[Iteration], None] | None = None) -> Iteration | None:
        """Iterative deepening from depth 1 to ``max_depth`` on ``board``.

        ``history``: Zobrist keys of the game positions before ``board``, oldest first.
        ``node_limit`` bounds the total nodes, ``plan`` the time; an iteration cut short by
        either (or by :meth:`abort`) is kept as a :attr:`Iteration.partial` one when its first
        root move was searched in full (and :attr:`keep_partial`), else discarded, except the
        first, so the result always holds a move when one exists. Returns the last kept
        iteration (``None`` only when aborted before the first one ended); :attr:`searched_nodes` and
        :attr:`searched_seconds` then hold the whole search's nodes and seconds, a discarded
        iteration's included. Raises :class:`~search.core.validate.InvalidBoardError` for an
        invalid board.
        """
        board = check_board(board)
        hist = np.zeros(max(1, len(history)), dtype=np.uint64)
        hist[: len(history)] = np.asarray(history, dtype=np.uint64)
        n_legal = len(legal_moves(board))
        start = time.perf_counter()
        deadline = _Deadline(self.ws, start + plan.hard) if plan is not None else None
        best: Iteration | None = None
        total = 0
        counts: list[int] = []  # nodes of each kept iteration
        stability = MoveStability()
        # with predict_first_move: the first root move's share of each completed iteration's nodes
        first_share = self.keep_partial and self.predict_first_move
        shares: list[float] = []
        try:
            for depth in range(1, max(1, min(max_depth, MAX_DEPTH)) + 1):
                scale = stability.scale if self.adapt_time else 1.0
                share = max(shares[-2:]) if shares else 1.0
                if best is not None and (self._aborted.is_set()
                                         or not may_start(plan, deadline, start, counts, self.nps, scale, share)):
                    break
                budget = UNLIMITED if node_limit is None else max(1, node_limit - total)
                t0 = time.perf_counter()
                score = int(search_kernel(self.ws.arrays, self.ws.state, board, depth, self.weights, budget, hist,
                                          len(history), self.tt_keys, self.tt_moves))
                seconds = time.perf_counter() - t0
                nodes = self.ws.nodes
                cut = self.ws.budget_exhausted  # by the budget, the deadline or abort()
                total += nodes
                if nodes >= 20_000 and seconds > 0 and not cut:
                    self.nps = 0.25 * self.nps + 0.75 * nodes / seconds
                partial = self._partial(depth, nodes, total, start) if cut else None
                if cut and best is not None and partial is None:
                    break  # discarded
                if partial is not None:
                    best = partial
                else:
                    pv = self.ws.pv
                    if not pv and n_legal:  # cannot happen for a completed root; keep bestmove legal anyway
                        pv = (int(legal_moves(board)[0]),)
                    best = Iteration(depth, score, pv, nodes, total, time.perf_counter() - start)
                    if pv:
                        stability.update(pv[0])
                    if first_share and depth >= 2 and nodes >= FIRST_SHARE_MIN_NODES:
                        shares.append(min(max(self.ws.first_root_nodes / nodes, MIN_FIRST_SHARE), 1.0))
                if on_iteration is not None:
                    on_iteration(best)
                counts.append(nodes)
                if cut or n_legal == 0 or (node_limit is not None and total >= node_limit):
                    break
                if plan is not None and n_legal == 1:
                    break  # the only move: no need to think
                mate = mate_in(score)
                if mate is not None and abs(mate) <= depth:
                    break  # a forced mate within the full-width depth: deeper cannot improve it
        finally:
            if deadline is not None:
                deadline.cancel()
        self.searched_nodes = total
        self.searched_seconds = time.perf_counter() - start
        return best

    def _partial(self, depth: int, nodes: int, total: int, start: float) -> Iteration | None:
        """The cut iteration's result from the kernel's root record, or ``None`` when it is to
        be discarded (no root move searched in full, or not :attr:`keep_partial`)."""
        if not self.keep_partial or self.ws.root_moves_done == 0:
            return None
        score, pv = self.ws.root_record
        if not pv:
            return None
        return Iteration(depth, score, pv, nodes, total, time.perf_counter() - start, partial=True)


def may_start(plan: TimePlan | None, deadline: _Deadline | None, start: float, counts: list[int], nps: float,
              soft_scale: float = 1.0, share: float = 1.0) -> bool:
    """Whether ``plan`` lets the next iteration of a search started at ``start``
    (``time.perf_counter`` seconds) start, after the kept iterations of ``counts`` nodes each
    (at least one) at ``nps`` nodes per second; shared by :mod:`search.pls.pls`. Unless the plan
    says ``fill``, its soft limit is scaled by ``soft_scale`` (:attr:`MoveStability.scale`), at
    most to the hard limit, and the part of the iteration that must be predicted to end by the
    hard limit is ``share`` of it: all of it, or the first root move's share for a search that
    keeps a cut iteration once that move is done (:attr:`Searcher.predict_first_move`)."""
    if plan is None or deadline is None:
        return True
    elapsed = time.perf_counter() - start
    soft = plan.soft if plan.fill else min(plan.soft * soft_scale, plan.hard)
    if deadline.expired.is_set() or elapsed >= soft:
        return False
    if plan.fill:
        return True
    # predict the next iteration from the larger of the last two growth factors (odd and
    # even depths grow differently)
    ratios = [b / max(a, 1) for a, b in zip(counts[:-1][-2:], counts[1:][-2:])]
    branching = min(max([2.0, *ratios]), 12.0)
    return elapsed + share * counts[-1] * branching / nps <= plan.hard
