"""Negamax alpha-beta to a fixed depth followed by quiescence, as one iterative kernel.

The search is written as a loop over an explicit stack (numba cannot reload a cached
recursive function, numba issue #6061). Its contract:

* ``depth`` plies of full-width alpha-beta (fail-soft), then quiescence: the side to move may
  stand pat on the static evaluation, or try the moves of
  :func:`search.tree.quiescence.quiescence_moves` (captures not losing material by SEE, queen
  promotions), ordered most-valuable-victim / least-valuable-attacker; a side in check may
  not stand pat and tries every evasion.
* Checkmate scores ``-(MATE - ply)`` for the side mated (so shorter mates score higher);
  stalemate, the fifty-move rule (halfmove clock >= 100) and any repetition of a position
  since the last irreversible move (in the search path or the game history given) score 0.
  Quiescence nodes do not look for stalemate (standard practice).
* Scores are integers in eval units (centipawns x PHASE_MAX), from the side to move's view.
* The principal variation is returned with the *kind* of its last node: ``KIND_EVAL`` when
  the score is that node's static evaluation (the PV leaf), ``KIND_MATE`` or ``KIND_DRAW``
  when it is a rule's verdict. For ``KIND_EVAL`` the score equals
  ``(-1) ** len(pv) * evaluate(leaf)``: the leaf's features enter the root score with that sign.
* A node budget: once ``budget`` nodes have been visited, every further node is scored by its
  static evaluation (a leaf), so the search ends soon and its result keeps the contract. Those
  nodes are not searched and not counted: a search cut by its budget counts exactly ``budget``
  nodes (as ``go nodes`` asks of an engine).
* The root's record (:func:`record_root`, :attr:`Workspace.root_record`): after each root move
  whose subtree was searched before any node ran past the budget, the best score and PV among
  those moves, so that a caller can play the best of a cut search's fully searched root moves
  (its first is the table's move, the previous iteration's best). Recording changes no score,
  node count or PV.
* Optional transposition table used for move ordering only (values stay exact), killer moves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.board import (BOARD_WORDS, NO_PIECE, W_HALFMOVE, W_KEY, in_check, make_move, move_captured, move_piece,
                          move_promo)
from search.tree.borrow import borrowed
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.tree.quiescence import quiescence_moves
from search.evaluation.static_eval import eval_move, eval_root, new_eval_state, static_score

MAX_PLY = 64
INF = np.int64(1) << np.int64(40)
MATE = np.int64(1) << np.int64(32)
#: scores beyond this magnitude are mate scores
MATE_BOUND = MATE - np.int64(1000)
KIND_EVAL, KIND_MATE, KIND_DRAW = 0, 1, 2

# move-ordering keys (higher first): TT move, captures and promotions by MVV/LVA, two killers,
# then quiet moves at 0 (or, in :mod:`search.tree.bootstrap_tree`, their history score, kept below
# ``ORDER_HISTORY_CAP``)
ORDER_TT = 1 << 40
ORDER_TACTICAL = 1 << 36
ORDER_KILLER1 = 1 << 34
ORDER_KILLER2 = (1 << 34) - 1
ORDER_HISTORY_CAP = 1 << 33
_VICTIM_VALUE = np.array([1, 3, 3, 5, 9, 0, 0], dtype=np.int64)  # indexed by piece type, NO_PIECE = 0


@njit(cache=True)
def new_workspace_arrays(n_ints):  # type: ignore[no-untyped-def]
    """The arrays of a search workspace with ``n_ints`` integers per ply (see :func:`new_workspace`)."""
    boards = np.zeros((MAX_PLY + 1, BOARD_WORDS), dtype=np.uint64)
    moves = np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int32)
    order = np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int64)
    ints = np.zeros((MAX_PLY + 1, n_ints), dtype=np.int64)
    pv = np.zeros((MAX_PLY + 1, MAX_PLY + 1), dtype=np.int32)
    killers = np.zeros((MAX_PLY + 1, 2), dtype=np.int32)
    evs = np.zeros(40, dtype=np.int64)  # scratch: evaluation sums, SEE swap list
    stats = np.zeros(8, dtype=np.int64)  # nodes, budget exhausted, max ply reached, (caller's), the root's record
    return boards, moves, order, ints, pv, killers, evs, stats


@njit(cache=True)
def new_workspace():  # type: ignore[no-untyped-def]
    """Per-thread scratch for :func:`search_kernel` (allocate once, reuse for many searches).

    Returns (boards, moves, order, ints, pv, killers, evs, stats) (positions ``WS_*``); see
    the kernel for layout, and :class:`Workspace` for named access from Python. The
    evaluator's own state goes beside it (:func:`search.evaluation.static_eval.new_eval_state`).
    """
    # per-ply integers: 0 nmoves, 1 index, 2 alpha, 3 beta, 4 best, 5 depth, 6 done, 7 current
    # move, 8 pv length, 9 leaf kind
    return new_workspace_arrays(N_PLY_INTS)


#: the per-ply integers of a workspace's ``ints`` array (the recording search adds its own after these)
_N, _I, _ALPHA, _BETA, _BEST, _DEPTH, _DONE, _CUR, _PVLEN, _KIND = range(10)
N_PLY_INTS = 10

#: positions of the arrays in the workspace tuple (the search steps take the arrays they use by
#: these constant indices: numba counts a reference, an atomic operation, to every array an
#: inlined step receives or unpacks, at every node; Python code reads the workspace through
#: :class:`Workspace`)
WS_BOARDS, WS_MOVES, WS_ORDER, WS_INTS, WS_PV, WS_KILLERS, WS_EVS, WS_STATS = range(8)
#: columns of the workspace's ``killers`` array (:func:`store_killer`)
KILLER_FIRST, KILLER_SECOND = 0, 1
#: entries of the workspace's ``stats`` array (3 is a caller's own); the last four are the root's
#: record (:func:`record_root`): root moves searched in full, the best score and PV length among
#: them, and the node count when the first of them was done
STAT_NODES, STAT_BUDGET_HIT, STAT_MAX_PLY = 0, 1, 2
STAT_ROOT_DONE, STAT_ROOT_SCORE, STAT_ROOT_PVLEN, STAT_ROOT_FIRST_NODES = 4, 5, 6, 7
#: the row of the workspace's ``pv`` array that holds the root's recorded PV (no node backs up
#: into it: a node at ``MAX_PLY`` is settled at once)
ROOT_PV_ROW = MAX_PLY
#: what :meth:`Workspace.abort` adds to the node count: beyond any budget, so the kernel scores
#: every remaining node statically (uncounted) and returns within microseconds
ABORT_NODES = 1 << 60


class Workspace:
    """A search workspace with named access to the outcome of the last :func:`search_kernel`.

    :attr:`arrays` is the tuple of :func:`new_workspace` and :attr:`state` the evaluator state
    for evaluator argument ``ev`` (:func:`search.evaluation.static_eval.new_eval_state`), to pass to the
    kernel with that evaluator; the properties read what the kernel left in it. Reuse one per
    thread for many searches.
    """

    __slots__ = ("arrays", "state")

    def __init__(self, ev: object) -> None:
        self.arrays = new_workspace()
        self.state = new_eval_state(ev, self.arrays[WS_BOARDS])

    @property
    def pv(self) -> tuple[int, ...]:
        """Packed moves of the principal variation from the root."""
        ints, pv = self.arrays[WS_INTS], self.arrays[WS_PV]
        return tuple(int(m) for m in pv[0, : ints[0, _PVLEN]])

    @property
    def root_moves_done(self) -> int:
        """Root moves whose subtrees were searched in full, before any node ran past the
        budget (all of them for an uncut search)."""
        return int(self.arrays[WS_STATS][STAT_ROOT_DONE])

    @property
    def first_root_nodes(self) -> int:
        """Nodes counted when the first root move's subtree had been searched in full (0 when
        none was): how much of a search its first move took."""
        return int(self.arrays[WS_STATS][STAT_ROOT_FIRST_NODES]) if self.root_moves_done else 0

    @property
    def root_record(self) -> tuple[int, tuple[int, ...]]:
        """The best score and its PV among the :attr:`root_moves_done` root moves searched in
        full: what a search cut by its budget (or an abort) had found before the cut. Only
        meaningful when :attr:`root_moves_done` > 0; for an uncut search it is the result."""
        stats, pv = self.arrays[WS_STATS], self.arrays[WS_PV]
        return int(stats[STAT_ROOT_SCORE]), tuple(int(m) for m in pv[ROOT_PV_ROW, : stats[STAT_ROOT_PVLEN]])

    @property
    def leaf_kind(self) -> int:
        """``KIND_EVAL``, ``KIND_MATE`` or ``KIND_DRAW``: what the PV's last node's score is."""
        return int(self.arrays[WS_INTS][0, _KIND])

    @property
    def nodes(self) -> int:
        """Nodes searched (at most the budget; after :meth:`abort`, those searched before it,
        give or take the few the kernel counted while the abort was written)."""
        return int(self.arrays[WS_STATS][STAT_NODES]) % ABORT_NODES

    @property
    def budget_exhausted(self) -> bool:
        """Whether the node budget ran out (some nodes were scored statically)."""
        return bool(self.arrays[WS_STATS][STAT_BUDGET_HIT])

    @property
    def max_ply_reached(self) -> bool:
        """Whether some line reached ``MAX_PLY`` and was scored statically there."""
        return bool(self.arrays[WS_STATS][STAT_MAX_PLY])

    @property
    def aborted(self) -> bool:
        """Whether :meth:`abort` was called since the last search started (it cut that search
        short if :attr:`budget_exhausted` is set too)."""
        return int(self.arrays[WS_STATS][STAT_NODES]) >= ABORT_NODES

    def abort(self) -> None:
        """Make a search running on this workspace (in another thread) end now, by raising its
        node counter past any budget (keeping the count below it, see :attr:`nodes`). The
        kernel resets the counter when a search starts, and an increment racing with this
        write may undo it: call it again until the search has returned."""
        stats = self.arrays[WS_STATS]
        count = int(stats[STAT_NODES])
        if count < ABORT_NODES:
            stats[STAT_NODES] = ABORT_NODES + count


@njit(cache=True)
def _is_repetition(boards, ply, hist, nhist):  # type: ignore[no-untyped-def]
    """Whether the position at ``ply`` occurred before since the last irreversible move."""
    key = boards[ply, W_KEY]
    hm = np.int64(boards[ply, W_HALFMOVE])
    back = 2
    while back <= hm:
        j = ply - back
        if j >= 0:
            if boards[j, W_KEY] == key:
                return True
        else:
            h = nhist + j
            if h < 0:
                break
            if hist[h] == key:
                return True
        back += 2
    return False


@njit(cache=True, inline="always")
def rule_verdict(boards, moves, ply, hist, nhist):  # type: ignore[no-untyped-def]
    """What the game rules say of the node at ``ply`` before any search: ``KIND_DRAW`` by the
    fifty-move rule (halfmove clock >= 100) or a repetition, ``KIND_MATE`` when the fifty-move
    rule meets a checkmate (the mate stands), ``-1`` when no rule ends the node (and at the root).
    ``moves[ply]`` is scratch."""
    if ply == 0:
        return -1
    b = boards[ply]
    fifty = np.int64(b[W_HALFMOVE]) >= 100
    if not (fifty or _is_repetition(boards, ply, hist, nhist)):
        return -1
    if fifty and in_check(b) and generate_moves(b, moves[ply], ALL_MOVES) == 0:
        return KIND_MATE
    return KIND_DRAW


@njit(cache=True, inline="always")
def verdict_score(kind, ply):  # type: ignore[no-untyped-def]
    """Score (eval units, side to move's view) of a rule's verdict at ``ply``: the side to move
    mated scores ``-(MATE - ply)`` (shorter mates score higher), a draw 0."""
    return -(MATE - ply) if kind == KIND_MATE else np.int64(0)


@njit(cache=True, inline="always")
def over_limits(stats, past_budget, ply):  # type: ignore[no-untyped-def]
    """Whether the node at ``ply`` must be scored statically: entered ``past_budget`` (sets
    ``stats[STAT_BUDGET_HIT]``) or ``MAX_PLY`` reached (sets ``stats[STAT_MAX_PLY]``)."""
    if past_budget:
        stats[STAT_BUDGET_HIT] = 1
        return True
    if ply >= MAX_PLY:
        stats[STAT_MAX_PLY] = 1
        return True
    return False


@njit(cache=True, inline="always")
def node_moves(b, moves, ply, depth, checked, evs):  # type: ignore[no-untyped-def]
    """Write the moves the node at ``ply`` tries into ``moves[ply]``; return their number: every
    legal move at remaining ``depth`` > 0, else those of quiescence."""
    if depth > 0:
        return generate_moves(b, moves[ply], ALL_MOVES)
    return quiescence_moves(b, moves[ply], checked, evs)


@njit(cache=True, inline="always")
def tt_probe(b, tt_keys, tt_moves):  # type: ignore[no-untyped-def]
    """The move-ordering table's move for board ``b`` (0 when none or no table)."""
    if len(tt_keys) == 0:
        return 0
    slot = np.int64(b[W_KEY] & np.uint64(len(tt_keys) - 1))
    return tt_moves[slot] if tt_keys[slot] == b[W_KEY] else 0


@njit(cache=True, inline="always")
def tt_store(b, tt_keys, tt_moves, m):  # type: ignore[no-untyped-def]
    """Remember ``m`` as board ``b``'s best move in the move-ordering table (if there is one)."""
    if len(tt_keys) > 0:
        slot = np.int64(b[W_KEY] & np.uint64(len(tt_keys) - 1))
        tt_keys[slot] = b[W_KEY]
        tt_moves[slot] = m


@njit(cache=True, inline="always")
def order_key(m, tt_move, k1, k2):  # type: ignore[no-untyped-def]
    """Ordering key of move ``m``: ``ORDER_TT`` for the table's move, captures and promotions
    by most valuable victim / least valuable attacker above the killers ``k1``, ``k2``, and 0
    for any other quiet move."""
    if m == tt_move:
        return ORDER_TT
    cap = move_captured(m)
    promo = move_promo(m)
    if cap != NO_PIECE or promo != 0:
        return (ORDER_TACTICAL + 64 * _VICTIM_VALUE[cap] + 16 * _VICTIM_VALUE[promo if promo else 6]
                - move_piece(m))
    if m == k1:
        return ORDER_KILLER1
    if m == k2:
        return ORDER_KILLER2
    return 0


@njit(cache=True, inline="always")
def next_move(moves, order, ply, i, n):  # type: ignore[no-untyped-def]
    """One selection-sort step: bring the best-ordered of ``moves[ply, i:n]`` to position ``i``
    (``order`` alongside) and return it."""
    bi = i
    for j in range(i + 1, n):
        if order[ply, j] > order[ply, bi]:
            bi = j
    if bi != i:
        m = moves[ply, bi]
        moves[ply, bi] = moves[ply, i]
        moves[ply, i] = m
        o = order[ply, bi]
        order[ply, bi] = order[ply, i]
        order[ply, i] = o
    return moves[ply, i]


@njit(cache=True, inline="always")
def back_up(ints, pv, ply, child, v):  # type: ignore[no-untyped-def]
    """The child at ``child`` returned ``-v`` to the node at ``ply``: when ``v`` improves the
    node's best, take it, with the principal variation (the move played, then the child's) and
    its last node's kind, and raise alpha. On a cut-off (``v >= beta``) end the node's move
    loop and return the move that caused it; otherwise return 0."""
    if v <= ints[ply, _BEST]:
        return 0
    ints[ply, _BEST] = v
    m = ints[ply, _CUR]
    pv[ply, 0] = m
    cl = ints[child, _PVLEN]
    for k in range(cl):
        pv[ply, k + 1] = pv[child, k]
    ints[ply, _PVLEN] = cl + 1
    ints[ply, _KIND] = ints[child, _KIND]
    if v <= ints[ply, _ALPHA]:
        return 0
    ints[ply, _ALPHA] = v
    if v < ints[ply, _BETA]:
        return 0
    ints[ply, _DONE] = 1
    return m


@njit(cache=True, inline="always")
def record_root(ints, pv, stats):  # type: ignore[no-untyped-def]
    """A root move's subtree has been backed up into the root: while no node has run past the
    budget (so that subtree was searched in full), count it and copy the root's best score and
    PV so far into ``stats`` and ``pv[ROOT_PV_ROW]`` (and, for the first, the node count). A
    search cut later keeps there the best of the root moves searched in full; the search itself
    reads none of it."""
    if stats[STAT_BUDGET_HIT] == 0:
        stats[STAT_ROOT_DONE] += 1
        if stats[STAT_ROOT_DONE] == 1:
            stats[STAT_ROOT_FIRST_NODES] = stats[STAT_NODES]
        stats[STAT_ROOT_SCORE] = ints[0, _BEST]
        n = ints[0, _PVLEN]
        stats[STAT_ROOT_PVLEN] = n
        for k in range(n):
            pv[ROOT_PV_ROW, k] = pv[0, k]


@njit(cache=True, inline="always")
def store_killer(killers, ply, m):  # type: ignore[no-untyped-def]
    """Make quiet move ``m`` the first killer of ``ply`` (the old first becomes the second)."""
    if killers[ply, KILLER_FIRST] != m:
        killers[ply, KILLER_SECOND] = killers[ply, KILLER_FIRST]
        killers[ply, KILLER_FIRST] = m


@njit(cache=True, inline="always")
def is_quiet(m):  # type: ignore[no-untyped-def]
    """Whether ``m`` neither captures nor promotes."""
    return move_captured(m) == NO_PIECE and move_promo(m) == 0


#: the static evaluation returned by :func:`enter_node` when it did not compute one
NO_STATIC = int(INF) + 1


@njit(cache=True, inline="always")
def borrow_search_args(ws, es, ev):  # type: ignore[no-untyped-def]
    """The workspace, evaluator state and (linear) weights of a search kernel as borrowed views
    (:mod:`search.tree.borrow`): a kernel's first step, so that its loop counts no references (an
    atomic operation each, dozens per node). They live as long as the kernel's arguments."""
    return borrowed(ws), borrowed(es), borrowed(ev)


@njit(cache=True, inline="always")
def start_search(ws, es, root, depth):  # type: ignore[no-untyped-def]
    """Reset a workspace (statistics, killers) and set the root: ``root`` at ply 0, searched
    to ``depth`` with the window (-INF, INF), and the evaluator state ``es`` at the root."""
    boards = ws[WS_BOARDS]
    ints = ws[WS_INTS]
    killers = ws[WS_KILLERS]
    stats = ws[WS_STATS]
    for k in range(len(stats)):
        stats[k] = 0
    for i in range(MAX_PLY + 1):
        killers[i, KILLER_FIRST] = 0
        killers[i, KILLER_SECOND] = 0
    for k in range(BOARD_WORDS):
        boards[0, k] = root[k]
    ints[0, _ALPHA] = -INF
    ints[0, _BETA] = INF
    ints[0, _DEPTH] = depth
    eval_root(es, root)


@njit(cache=True, inline="always")
def enter_node(ws, es, ply, ev, budget, hist, nhist):  # type: ignore[no-untyped-def]
    """Enter the node at ``ply`` (its window and remaining depth set by the parent): count it,
    then settle it at once when a rule ends it (:func:`rule_verdict`), the limits are reached
    (:func:`over_limits`: static evaluation), quiescence stands pat at or above beta, or it
    has no move to try (checkmate, stalemate, or quiescence standing pat). Otherwise write its
    moves into ``moves[ply]`` and set its best to stand pat (quiescence) or -INF.

    Returns ``(n, value, static)``: ``n`` > 0 moves to search, or 0 when settled with score
    ``value``; ``static`` is the static evaluation when computed, else :data:`NO_STATIC`.
    """
    boards = ws[WS_BOARDS]
    moves = ws[WS_MOVES]
    ints = ws[WS_INTS]
    evs = ws[WS_EVS]
    stats = ws[WS_STATS]
    past_budget = stats[STAT_NODES] >= budget  # not searched, nor counted: the count stays <= budget
    if not past_budget:
        stats[STAT_NODES] += 1
    b = boards[ply]
    ints[ply, _PVLEN] = 0
    ints[ply, _KIND] = KIND_EVAL
    verdict = rule_verdict(boards, moves, ply, hist, nhist)
    if verdict >= 0:
        ints[ply, _KIND] = verdict
        return 0, verdict_score(verdict, ply), NO_STATIC
    if over_limits(stats, past_budget, ply):
        return 0, static_score(ev, es, ply, b, evs), NO_STATIC
    d = ints[ply, _DEPTH]
    checked = in_check(b)
    quiet = d <= 0 and not checked
    static = NO_STATIC
    if quiet:
        static = static_score(ev, es, ply, b, evs)
        if static >= ints[ply, _BETA]:
            return 0, static, static
        ints[ply, _BEST] = static
        if static > ints[ply, _ALPHA]:
            ints[ply, _ALPHA] = static
    n = node_moves(b, moves, ply, d, checked, evs)
    if n == 0:
        if quiet:
            return 0, ints[ply, _BEST], static  # quiescence with nothing to try: stand pat
        verdict = KIND_MATE if checked else KIND_DRAW
        ints[ply, _KIND] = verdict
        return 0, verdict_score(verdict, ply), static
    if not quiet:
        ints[ply, _BEST] = -INF
    return n, np.int64(0), static


@njit(cache=True, inline="always")
def start_move_loop(ws, ply, n, tt_keys, tt_moves):  # type: ignore[no-untyped-def]
    """Give the ``n`` moves of the node at ``ply`` their :func:`order_key` (the table's move
    probed at full-width nodes only) and start its move loop."""
    boards = ws[WS_BOARDS]
    moves = ws[WS_MOVES]
    order = ws[WS_ORDER]
    ints = ws[WS_INTS]
    killers = ws[WS_KILLERS]
    tt_move = tt_probe(boards[ply], tt_keys, tt_moves) if ints[ply, _DEPTH] > 0 else 0
    for i in range(n):
        order[ply, i] = order_key(moves[ply, i], tt_move, killers[ply, KILLER_FIRST], killers[ply, KILLER_SECOND])
    ints[ply, _N] = n
    ints[ply, _I] = 0
    ints[ply, _DONE] = 0


@njit(cache=True, inline="always")
def has_next_move(ints, ply):  # type: ignore[no-untyped-def]
    """Whether the node at ``ply`` has a move left to search (no cut-off yet)."""
    return ints[ply, _DONE] == 0 and ints[ply, _I] < ints[ply, _N]


@njit(cache=True, inline="always")
def play_next(ws, es, ply, full_window):  # type: ignore[no-untyped-def]
    """Play the node at ``ply``'s next move (best-ordered first) into ``ply + 1`` (and tell the
    evaluator, :func:`search.evaluation.static_eval.eval_move`), with the negated window, or (-INF, INF)
    when ``full_window``, and one ply less to go."""
    boards = ws[WS_BOARDS]
    moves = ws[WS_MOVES]
    order = ws[WS_ORDER]
    ints = ws[WS_INTS]
    i = ints[ply, _I]
    m = next_move(moves, order, ply, i, ints[ply, _N])
    ints[ply, _I] = i + 1
    ints[ply, _CUR] = m
    make_move(boards[ply], boards[ply + 1], m)
    eval_move(es, ply, m)
    if full_window:
        ints[ply + 1, _ALPHA] = -INF
        ints[ply + 1, _BETA] = INF
    else:
        ints[ply + 1, _ALPHA] = -ints[ply, _BETA]
        ints[ply + 1, _BETA] = -ints[ply, _ALPHA]
    ints[ply + 1, _DEPTH] = ints[ply, _DEPTH] - 1


@njit(cache=True, inline="always")
def finish_node(ws, ply, tt_keys, tt_moves):  # type: ignore[no-untyped-def]
    """The node at ``ply`` has searched its moves: store its best move in the move-ordering
    table (full-width nodes) and return its value."""
    boards = ws[WS_BOARDS]
    ints = ws[WS_INTS]
    pv = ws[WS_PV]
    if ints[ply, _PVLEN] > 0 and ints[ply, _DEPTH] > 0:
        tt_store(boards[ply], tt_keys, tt_moves, pv[ply, 0])
    return ints[ply, _BEST]


@njit(cache=True, nogil=True)
def search_kernel(ws, es, root, depth, ev, budget, hist, nhist, tt_keys, tt_moves):  # type: ignore[no-untyped-def]
    """Search ``root`` (uint64[BOARD_WORDS]) to ``depth`` plies plus quiescence.

    Parameters
    ----------
    ws : workspace from :func:`new_workspace`
    es : the evaluator state for ``ev``, from :func:`search.evaluation.static_eval.new_eval_state`
    ev : the evaluator argument (:mod:`search.evaluation.static_eval`): int32[N_FEATURES] linear weights,
        or a network's kernel tuple
    budget : node budget (> 0)
    hist : uint64[>= nhist] Zobrist keys of the game positions before the root, oldest first
    nhist : int64 (kernels pass ``np.int64(k)``: a literal would compile the search once more)
    tt_keys, tt_moves : uint64[2**k], int32[2**k] transposition table for move ordering, or
        arrays of length 0 for none

    The steps (:func:`start_search`, :func:`enter_node`, :func:`start_move_loop`, :func:`play_next`,
    :func:`finish_node`, :func:`back_up`) are helpers that
    :func:`search.tree.bootstrap_tree.tree_kernel`, the recording search, calls too.

    Returns the score in eval units, root side to move's view. The PV is ``pv[0, :ints[0, _PVLEN]]``
    and its last node's kind ``ints[0, _KIND]``; ``stats`` holds nodes, budget flag, max-ply flag
    and the root's record (``STAT_ROOT_*``, its PV in ``pv[ROOT_PV_ROW]``).
    """
    ws, es, ev = borrow_search_args(ws, es, ev)
    start_search(ws, es, root, depth)
    return search_loop(ws, es, ev, budget, hist, nhist, tt_keys, tt_moves)


# many parameters: search_kernel's arguments and the root window; a numba kernel takes arrays and scalars (no
# dataclass in nopython mode)
@njit(cache=True, nogil=True)
def search_window_kernel(ws, es, root, depth, ev, budget, hist, nhist, tt_keys, tt_moves, alpha, beta):  # type: ignore[no-untyped-def]
    """:func:`search_kernel` with the root window ``(alpha, beta)`` instead of (-INF, INF):
    fail-soft, so a returned ``v <= alpha`` says the true score is at most ``v``, ``v >= beta``
    that it is at least ``v``, and anything between is the exact score. The PV is meaningful
    only for an exact score."""
    ws, es, ev = borrow_search_args(ws, es, ev)
    start_search(ws, es, root, depth)
    ints = ws[WS_INTS]
    ints[0, _ALPHA] = alpha
    ints[0, _BETA] = beta
    return search_loop(ws, es, ev, budget, hist, nhist, tt_keys, tt_moves)


@njit(cache=True, inline="always")
def search_loop(ws, es, ev, budget, hist, nhist, tt_keys, tt_moves):  # type: ignore[no-untyped-def]
    """The explicit-stack loop of :func:`search_kernel` from a root set by :func:`start_search`."""
    ints = ws[WS_INTS]
    pv = ws[WS_PV]
    killers = ws[WS_KILLERS]
    stats = ws[WS_STATS]
    ply, child, value, entering = 0, 0, np.int64(0), True  # the explicit stack's cursor
    while True:
        if entering:
            entering = False
            n, value, _ = enter_node(ws, es, ply, ev, budget, hist, nhist)
            if n > 0:
                start_move_loop(ws, ply, n, tt_keys, tt_moves)
                continue  # into this node's move loop
            # settled at once: hand ``value`` to the parent
        elif has_next_move(ints, ply):
            play_next(ws, es, ply, False)
            ply += 1
            entering = True
            continue
        else:
            value = finish_node(ws, ply, tt_keys, tt_moves)
        if ply == 0:
            break
        child = ply
        ply -= 1
        cut = back_up(ints, pv, ply, child, -value)
        if ply == 0:
            record_root(ints, pv, stats)
        if cut != 0 and ints[ply, _DEPTH] > 0 and is_quiet(cut):
            store_killer(killers, ply, cut)  # a quiet move that refuted the opponent's last
    return value
