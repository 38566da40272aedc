"""A search that records its interior nodes, for learning from the search tree (TreeStrap).

Veness, Silver, Uther & Blair, "Bootstrapping from Game Tree Search" (NIPS 2009) update the
static evaluation of every interior node of a search towards the value the search found for
that node. This module is the search they need: the same negamax alpha-beta with quiescence
as :func:`search.tree.alphabeta.search_kernel` (same rules, same scores: its root score is that
kernel's, and the tests check it against plain minimax), built from the same node-entry,
move-ordering and back-up helpers of :mod:`search.tree.alphabeta` and its own loop, with

* an optional *full-width minimax* mode (``minimax=True``): every child of a full-width node
  (remaining depth >= 1) is searched with the window (-INF, INF), so no full-width node is cut
  off, and each quiescence search hanging from the tree's leaves is entered with a full window
  (alpha-beta inside it): the value of every node at remaining depth >= 0 is exact, its
  minimax value (TreeStrap(minimax)). Plain minimax inside quiescence would cost millions of
  nodes in tactical positions for the same values;
* move ordering by transposition-table move, MVV/LVA, two killers per ply and the *history
  heuristic* (a [2, 64, 64] table of quiet moves that caused cut-offs, weighted by depth^2,
  kept by the caller between searches as the table is), as Meep's search had them;
* a *record* of every interior node (a node whose moves were searched) at remaining depth
  ``>= rec_min_depth`` (``1``: the full-width part only; ``-MAX_PLY``: quiescence nodes too):
  its board, its static evaluation, the value the search returned for it, the *bound type* of
  that value, its ply below the root and its remaining depth, written into preallocated
  arrays by the kernel.

Bound types (fail-soft alpha-beta, Knuth & Moore 1975) of a node searched with window
(alpha, beta) that returned ``v``: ``BOUND_UPPER`` when ``v <= alpha`` (the node's minimax
value is ``<= v``), ``BOUND_LOWER`` when ``v >= beta`` (its value is ``>= v``), otherwise
``BOUND_EXACT``. The root, searched with (-INF, INF), is always exact, and in minimax mode
every node at remaining depth >= 0 is.

Scores are integers in eval units (centipawns x PHASE_MAX), each node's from the view of its
own side to move. Mate and draw verdicts keep the kernel's contract (see
:mod:`search.tree.alphabeta`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.tree.alphabeta import (
    _ALPHA,
    _BETA,
    _DEPTH,
    _KIND,
    _PVLEN,
    MAX_PLY,
    N_PLY_INTS,
    NO_STATIC,
    ORDER_HISTORY_CAP,
    STAT_BUDGET_HIT,
    STAT_MAX_PLY,
    STAT_NODES,
    WS_BOARDS,
    WS_INTS,
    WS_PV,
    WS_STATS,
    back_up,
    borrow_search_args,
    enter_node,
    finish_node,
    is_quiet,
    new_workspace_arrays,
    has_next_move,
    play_next,
    start_move_loop,
    start_search,
    store_killer,
)
from search.core.board import BOARD_WORDS, W_STM, move_from, move_to
from search.evaluation.static_eval import new_eval_state, static_score

BOUND_EXACT, BOUND_LOWER, BOUND_UPPER = 0, 1, 2
#: columns of the record's integer array
REC_STATIC, REC_VALUE, REC_BOUND, REC_PLY, REC_DEPTH = range(5)
REC_COLUMNS = 5
#: entries of the workspace's stats array: those of :mod:`search.tree.alphabeta`, and the record's overflow
T_NODES, T_BUDGET_HIT, T_MAX_PLY, T_REC_OVERFLOW = STAT_NODES, STAT_BUDGET_HIT, STAT_MAX_PLY, 3

# per-ply integers: those of :func:`search.tree.alphabeta.search_kernel`, then alpha on entry, the
# static evaluation and whether the node is recorded
_ALPHA0, _STATIC, _REC = range(N_PLY_INTS, N_PLY_INTS + 3)
_INTS = N_PLY_INTS + 3


@njit(cache=True)
def new_tree_workspace():  # type: ignore[no-untyped-def]
    """Per-search scratch for :func:`tree_kernel`: (boards, moves, order, ints, pv, killers,
    evs, stats) (positions ``WS_*`` of :mod:`search.tree.alphabeta`); ``pv[0, :ints[0, _PVLEN]]``
    is the root's principal variation after a search and ``ints[0, _KIND]`` the kind of its last node."""
    return new_workspace_arrays(_INTS)


@njit(cache=True, inline="always")
def _record(rec_boards, rec_ints, row, boards, ints, ply, value):  # type: ignore[no-untyped-def]
    """Write the completed node at ``ply`` (returned ``value``) into row ``row`` of the record."""
    for k in range(BOARD_WORDS):
        rec_boards[row, k] = boards[ply, k]
    rec_ints[row, REC_STATIC] = ints[ply, _STATIC]
    rec_ints[row, REC_VALUE] = value
    if value <= ints[ply, _ALPHA0]:
        rec_ints[row, REC_BOUND] = BOUND_UPPER
    elif value >= ints[ply, _BETA]:
        rec_ints[row, REC_BOUND] = BOUND_LOWER
    else:
        rec_ints[row, REC_BOUND] = BOUND_EXACT
    rec_ints[row, REC_PLY] = ply
    rec_ints[row, REC_DEPTH] = ints[ply, _DEPTH]


# many parameters: search_kernel's arguments, the history table and the record's; a numba kernel takes arrays and
# scalars (no dataclass in nopython mode)
@njit(cache=True, nogil=True)
def tree_kernel(ws, es, root, depth, ev, budget, hist, nhist, tt_keys, tt_moves, history, minimax,  # type: ignore[no-untyped-def]
                rec_min_depth, rec_boards, rec_ints):
    """Search ``root`` to ``depth`` plies plus quiescence, recording interior nodes.

    Parameters as :func:`search.tree.alphabeta.search_kernel` (``es``: the evaluator state), and
    history : int64[2, 64, 64] history-heuristic scores (colour, from, to), updated in place
    minimax : bool, full-width minimax (no window, no cut-off above the quiescence searches)
        instead of alpha-beta
    rec_min_depth : record interior nodes whose remaining depth is at least this
    rec_boards : uint64[R, BOARD_WORDS], rec_ints : int64[R, REC_COLUMNS] the record (static
        value, returned value, bound type, ply, remaining depth per row); when R rows are
        full, recording stops and ``stats[T_REC_OVERFLOW]`` is set

    Returns (root score in eval units from the root side to move's view, rows recorded).
    Nodes are recorded when they complete, so children come before their parents and the
    root is the last row (when it is recorded).
    """
    ws, es, ev = borrow_search_args(ws, es, ev)
    boards, moves, order, ints, pv, killers, evs, stats = ws
    start_search(ws, es, root, depth)
    n_rec = 0
    cap = rec_boards.shape[0]
    ply, child, value, entering = 0, 0, np.int64(0), True  # the explicit stack's cursor
    while True:
        if entering:
            entering = False
            ints[ply, _ALPHA0] = ints[ply, _ALPHA]
            ints[ply, _REC] = 0
            n, value, static = enter_node(ws, es, ply, ev, budget, hist, nhist)
            if n > 0:
                d = ints[ply, _DEPTH]
                if d >= rec_min_depth and n_rec < cap:
                    ints[ply, _REC] = 1
                    ints[ply, _STATIC] = static if static != NO_STATIC else static_score(ev, es, ply, boards[ply],
                                                                                         evs)
                start_move_loop(ws, ply, n, tt_keys, tt_moves)
                side = np.int64(boards[ply, W_STM])
                for i in range(n):  # quiet moves other than the killers: by their history score
                    if order[ply, i] == 0:
                        m = moves[ply, i]
                        order[ply, i] = history[side, move_from(m), move_to(m)]
                continue
        elif has_next_move(ints, ply):
            play_next(ws, es, ply, minimax and ints[ply, _DEPTH] > 0)
            ply += 1
            entering = True
            continue
        else:
            value = finish_node(ws, ply, tt_keys, tt_moves)
            if ints[ply, _REC] == 1:
                if n_rec < cap:
                    _record(rec_boards, rec_ints, n_rec, boards, ints, ply, value)
                    n_rec += 1
                else:
                    stats[T_REC_OVERFLOW] = 1
        if ply == 0:
            break
        child = ply
        ply -= 1
        m = back_up(ints, pv, ply, child, -value)  # the move of a cut-off, else 0
        dd = ints[ply, _DEPTH]
        if m != 0 and dd > 0 and is_quiet(m):
            store_killer(killers, ply, m)
            side = np.int64(boards[ply, W_STM])
            h = history[side, move_from(m), move_to(m)] + dd * dd
            history[side, move_from(m), move_to(m)] = min(h, ORDER_HISTORY_CAP)
    return value, n_rec


# ---------------------------------------------------------------- Python API


class TreeRecord:
    """The interior nodes one :meth:`TreeSearcher.search` recorded, and its outcome.

    ``boards`` uint64[R, BOARD_WORDS]; ``static``, ``value`` int64[R] (eval units, each node's
    side to move's view); ``bound`` int8[R] (``BOUND_*``); ``ply`` int64[R] (plies below the
    root); ``depth`` int64[R] (remaining depth, <= 0 in quiescence). ``score`` is the root's
    value, ``pv`` the packed moves of the principal variation, ``kind`` its last node's kind
    (:data:`search.tree.alphabeta.KIND_EVAL`, ``KIND_MATE``, ``KIND_DRAW``), ``nodes`` the nodes
    visited by the kept iteration, ``overflow`` whether the record ran out of rows.
    """

    __slots__ = ("boards", "static", "value", "bound", "ply", "depth", "score", "pv", "kind", "nodes",
                 "overflow", "search_depth")

    def __init__(self, boards: np.ndarray, ints: np.ndarray, score: int, pv: tuple[int, ...], kind: int,
                 nodes: int, overflow: bool, search_depth: int) -> None:
        self.boards = boards
        self.static = ints[:, REC_STATIC].copy()
        self.value = ints[:, REC_VALUE].copy()
        self.bound = ints[:, REC_BOUND].astype(np.int8)
        self.ply = ints[:, REC_PLY].copy()
        self.depth = ints[:, REC_DEPTH].copy()
        self.score, self.pv, self.kind, self.nodes = score, pv, kind, nodes
        self.overflow, self.search_depth = overflow, search_depth

    def __len__(self) -> int:
        return len(self.value)


class TreeSearcher:
    """Iterative deepening with :func:`tree_kernel` for one learner: a workspace, a move-ordering
    transposition table and a history table kept between searches (clear them with
    :meth:`clear` at the start of a game), and the record arrays.

    ``max_records``: rows of the record (a search that fills them stops recording and says
    so in :attr:`TreeRecord.overflow`).
    """

    def __init__(self, *, tt_bits: int = 16, max_records: int = 1 << 16) -> None:
        if not 0 <= tt_bits <= 30:
            raise ValueError(f"tt_bits must be between 0 and 30, not {tt_bits}")
        if max_records < 1:
            raise ValueError(f"max_records must be positive, not {max_records}")
        self.ws = new_tree_workspace()
        self._state: object = None
        self._state_for: object = None
        self.tt_keys = np.zeros(1 << tt_bits if tt_bits else 0, dtype=np.uint64)
        self.tt_moves = np.zeros(len(self.tt_keys), dtype=np.int32)
        self.history = np.zeros((2, 64, 64), dtype=np.int64)
        self.rec_boards = np.zeros((max_records, BOARD_WORDS), dtype=np.uint64)
        self.rec_ints = np.zeros((max_records, REC_COLUMNS), dtype=np.int64)

    def clear(self) -> None:
        """Forget the transposition and history tables (a new game)."""
        self.tt_keys[:] = 0
        self.tt_moves[:] = 0
        self.history[:] = 0

    def _eval_state(self, ev: object) -> object:
        """The evaluator state for evaluator argument ``ev`` (made anew when ``ev`` changes)."""
        if self._state_for is not ev:
            self._state, self._state_for = new_eval_state(ev, self.ws[WS_BOARDS]), ev
        return self._state

    def search(self, board: np.ndarray, weights: object, *, depth: int, nodes: int = 0,
               history_keys: np.ndarray | None = None, minimax: bool = False, quiescence: bool = True,
               budget: int = 1 << 40, iterative: bool = True) -> TreeRecord:
        """Search ``board`` (uint64[BOARD_WORDS], valid) with evaluator argument ``weights``
        (int32 linear weights or a network's kernel tuple, :mod:`search.evaluation.static_eval`) to ``depth``
        plies (iterative deepening from 1 when ``iterative``, filling the tables) and return
        the last iteration's record. With ``nodes`` > 0 the iterations stop when the next one
        would exceed that many nodes in total; the last complete iteration is kept (the first
        is always kept). ``quiescence``: record quiescence nodes too (else only remaining depth
        >= 1; with ``minimax``, only those at remaining depth 0, whose values are exact).
        ``history_keys``: Zobrist keys of the game's earlier positions, oldest first.
        """
        if depth < 1 or depth > MAX_PLY - 4:
            raise ValueError(f"depth must be between 1 and {MAX_PLY - 4}, not {depth}")
        hist = np.zeros(1, dtype=np.uint64) if history_keys is None or len(history_keys) == 0 else \
            np.ascontiguousarray(history_keys, dtype=np.uint64)
        nhist = 0 if history_keys is None else len(history_keys)
        rec_min = (0 if minimax else -MAX_PLY) if quiescence else 1
        ws = self.ws
        es = self._eval_state(weights)
        best: TreeRecord | None = None
        total = 0
        for d in range(1 if iterative else depth, depth + 1):
            limit = budget if nodes <= 0 else max(1, min(budget, nodes - total))
            score, n = tree_kernel(ws, es, board, d, weights, limit, hist, nhist, self.tt_keys, self.tt_moves,
                                   self.history, minimax, rec_min, self.rec_boards, self.rec_ints)
            stats = ws[WS_STATS]
            used = int(stats[T_NODES])
            total += used
            if best is not None and stats[T_BUDGET_HIT] and nodes > 0:
                break  # an iteration cut short by the node limit: keep the previous one
            ints, pvs = ws[WS_INTS], ws[WS_PV]
            pv = tuple(int(m) for m in pvs[0, : ints[0, _PVLEN]])
            best = TreeRecord(self.rec_boards[:n].copy(), self.rec_ints[:n], int(score), pv, int(ints[0, _KIND]),
                              used, bool(stats[T_REC_OVERFLOW]), d)
            if nodes > 0 and total >= nodes:
                break
        assert best is not None
        return best


__all__ = ["BOUND_EXACT", "BOUND_LOWER", "BOUND_UPPER", "TreeRecord", "TreeSearcher", "new_tree_workspace",
           "tree_kernel"]
