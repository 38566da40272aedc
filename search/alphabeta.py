"""Negamax alpha-beta to a fixed depth followed by quiescence, as one iterative kernel.

The search is written as a loop over an explicit stack (numba cannot reload a cached
recursive function, numba issue #6061). Its contract:

* ``depth`` plies of full-width alpha-beta (fail-soft), then quiescence: the side to move may
  stand pat on the static evaluation, or try the moves of
  :func:`search.quiescence.quiescence_moves` (captures not losing material by SEE, queen
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
  static evaluation (a leaf), so the search ends soon and its result keeps the contract.
* Optional transposition table used for move ordering only (values stay exact), killer moves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.board import (BOARD_WORDS, NO_PIECE, W_HALFMOVE, W_KEY, in_check, make_move, move_captured, move_piece,
                          move_promo)
from search.features import evaluate_kernel
from search.movegen import MAX_MOVES, generate_moves
from search.quiescence import quiescence_moves

MAX_PLY = 64
INF = np.int64(1) << np.int64(40)
MATE = np.int64(1) << np.int64(32)
#: scores beyond this magnitude are mate scores
MATE_BOUND = MATE - np.int64(1000)
KIND_EVAL, KIND_MATE, KIND_DRAW = 0, 1, 2

# ordering keys
_ORDER_TT = 1 << 30
_ORDER_TACTICAL = 1 << 24
_ORDER_KILLER1 = 1 << 20
_ORDER_KILLER2 = (1 << 20) - 1
_VICTIM_VALUE = np.array([1, 3, 3, 5, 9, 0, 0], dtype=np.int64)  # indexed by piece type, NO_PIECE = 0


@njit(cache=True)
def new_workspace():  # type: ignore[no-untyped-def]
    """Per-thread scratch for :func:`search_kernel` (allocate once, reuse for many searches).

    Returns (boards, moves, order, ints, pv, killers, evs, stats) (positions ``WS_*``); see
    the kernel for layout, and :class:`Workspace` for named access from Python.
    """
    boards = np.zeros((MAX_PLY + 1, BOARD_WORDS), dtype=np.uint64)
    moves = np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int32)
    order = np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int64)
    # per-ply integers: 0 nmoves, 1 index, 2 alpha, 3 beta, 4 best, 5 depth, 6 done, 7 current
    # move, 8 pv length, 9 leaf kind
    ints = np.zeros((MAX_PLY + 1, 10), dtype=np.int64)
    pv = np.zeros((MAX_PLY + 1, MAX_PLY + 1), dtype=np.int32)
    killers = np.zeros((MAX_PLY + 1, 2), dtype=np.int32)
    evs = np.zeros(40, dtype=np.int64)  # scratch: evaluation sums, SEE swap list
    stats = np.zeros(4, dtype=np.int64)  # nodes, budget exhausted, max ply reached, unused
    return boards, moves, order, ints, pv, killers, evs, stats


_N, _I, _ALPHA, _BETA, _BEST, _DEPTH, _DONE, _CUR, _PVLEN, _KIND = range(10)

#: positions of the arrays in the workspace tuple (kernels unpack it; Python code reads it
#: through :class:`Workspace`)
WS_BOARDS, WS_MOVES, WS_ORDER, WS_INTS, WS_PV, WS_KILLERS, WS_EVS, WS_STATS = range(8)
#: entries of the workspace's ``stats`` array
STAT_NODES, STAT_BUDGET_HIT, STAT_MAX_PLY = 0, 1, 2
#: node count that :meth:`Workspace.abort` writes: beyond any budget, so the kernel scores
#: every remaining node statically and returns within microseconds
ABORT_NODES = 1 << 60


class Workspace:
    """A search workspace with named access to the outcome of the last :func:`search_kernel`.

    :attr:`arrays` is the tuple of :func:`new_workspace`, to pass to the kernel; the properties
    read what the kernel left in it. Reuse one per thread for many searches.
    """

    __slots__ = ("arrays",)

    def __init__(self) -> None:
        self.arrays = new_workspace()

    @property
    def pv(self) -> tuple[int, ...]:
        """Packed moves of the principal variation from the root."""
        ints, pv = self.arrays[WS_INTS], self.arrays[WS_PV]
        return tuple(int(m) for m in pv[0, : ints[0, _PVLEN]])

    @property
    def leaf_kind(self) -> int:
        """``KIND_EVAL``, ``KIND_MATE`` or ``KIND_DRAW``: what the PV's last node's score is."""
        return int(self.arrays[WS_INTS][0, _KIND])

    @property
    def nodes(self) -> int:
        """Nodes visited (meaningless after :meth:`abort`: see :attr:`aborted`)."""
        return int(self.arrays[WS_STATS][STAT_NODES])

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
        """Whether :meth:`abort` cut the last search short."""
        return self.nodes >= ABORT_NODES

    def abort(self) -> None:
        """Make a search running on this workspace (in another thread) end now, by raising its
        node counter past any budget. The kernel resets the counter when a search starts, so
        call it again if a new search may have started since."""
        self.arrays[WS_STATS][STAT_NODES] = ABORT_NODES


@njit(cache=True)
def _is_repetition(boards, ply, hist, nhist) -> bool:  # type: ignore[no-untyped-def]
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


@njit(cache=True, nogil=True)
def search_kernel(ws, root, depth, w, budget, hist, nhist, tt_keys, tt_moves) -> int:  # type: ignore[no-untyped-def]
    """Search ``root`` (uint64[BOARD_WORDS]) to ``depth`` plies plus quiescence.

    Parameters
    ----------
    ws : workspace from :func:`new_workspace`
    w : int32[N_FEATURES] weights
    budget : node budget (> 0)
    hist : uint64[>= nhist] Zobrist keys of the game positions before the root, oldest first
    tt_keys, tt_moves : uint64[2**k], int32[2**k] transposition table for move ordering, or
        arrays of length 0 for none

    Returns the score in eval units, root side to move's view. The PV is ``pv[0, :ints[0, 8]]``
    and its last node's kind ``ints[0, 9]``; ``stats`` holds nodes, budget flag, max-ply flag.
    """
    boards, moves, order, ints, pv, killers, evs, stats = ws
    stats[0] = 0
    stats[1] = 0
    stats[2] = 0
    tt_mask = len(tt_keys) - 1
    for i in range(MAX_PLY + 1):
        killers[i, 0] = 0
        killers[i, 1] = 0
    for k in range(BOARD_WORDS):
        boards[0, k] = root[k]
    ints[0, _ALPHA] = -INF
    ints[0, _BETA] = INF
    ints[0, _DEPTH] = depth
    ply = 0
    entering = True
    value = np.int64(0)
    child = 0
    while True:
        if entering:
            entering = False
            # ---------------- enter the node at ``ply`` ----------------
            stats[0] += 1
            b = boards[ply]
            ints[ply, _PVLEN] = 0
            ints[ply, _KIND] = KIND_EVAL
            resolved = False
            if ply > 0 and (np.int64(b[W_HALFMOVE]) >= 100 or _is_repetition(boards, ply, hist, nhist)):
                # the fifty-move rule yields to checkmate on the same move
                if np.int64(b[W_HALFMOVE]) >= 100 and in_check(b) and generate_moves(b, moves[ply], 0, False) == 0:
                    value = -(MATE - ply)
                    ints[ply, _KIND] = KIND_MATE
                else:
                    value = np.int64(0)
                    ints[ply, _KIND] = KIND_DRAW
                resolved = True
            elif stats[0] > budget or ply >= MAX_PLY:
                if stats[0] > budget:
                    stats[1] = 1
                else:
                    stats[2] = 1
                value = evaluate_kernel(b, w, evs)
                resolved = True
            else:
                d = ints[ply, _DEPTH]
                checked = in_check(b)
                quiet = d <= 0 and not checked
                if quiet:
                    stand = evaluate_kernel(b, w, evs)
                    if stand >= ints[ply, _BETA]:
                        value = stand
                        resolved = True
                    else:
                        ints[ply, _BEST] = stand
                        if stand > ints[ply, _ALPHA]:
                            ints[ply, _ALPHA] = stand
                n = 0
                if not resolved:
                    if d > 0:
                        n = generate_moves(b, moves[ply], 0, False)
                    else:
                        n = quiescence_moves(b, moves[ply], checked, evs)
                    if n == 0 and not quiet:
                        value = -(MATE - ply) if checked else np.int64(0)
                        ints[ply, _KIND] = KIND_MATE if checked else KIND_DRAW
                        resolved = True
                    elif n == 0:
                        value = ints[ply, _BEST]  # quiescence with nothing to try: stand pat
                        resolved = True
                if not resolved:
                    if not quiet:
                        ints[ply, _BEST] = -INF
                    tt_move = 0
                    if tt_mask >= 0 and d > 0:
                        slot = np.int64(b[W_KEY] & np.uint64(tt_mask))
                        if tt_keys[slot] == b[W_KEY]:
                            tt_move = tt_moves[slot]
                    k1 = killers[ply, 0]
                    k2 = killers[ply, 1]
                    for i in range(n):
                        m = moves[ply, i]
                        if m == tt_move:
                            order[ply, i] = _ORDER_TT
                        else:
                            cap = move_captured(m)
                            promo = move_promo(m)
                            if cap != NO_PIECE or promo != 0:
                                order[ply, i] = (_ORDER_TACTICAL + 64 * _VICTIM_VALUE[cap]
                                                 + 16 * _VICTIM_VALUE[promo if promo else 6]
                                                 - move_piece(m))
                            elif m == k1:
                                order[ply, i] = _ORDER_KILLER1
                            elif m == k2:
                                order[ply, i] = _ORDER_KILLER2
                            else:
                                order[ply, i] = 0
                    ints[ply, _N] = n
                    ints[ply, _I] = 0
                    ints[ply, _DONE] = 0
                    continue  # into this node's move loop
            # resolved immediately: hand ``value`` to the parent
            if ply == 0:
                break
            child = ply
            ply -= 1
        else:
            # ---------------- move loop of the node at ``ply`` ----------------
            i = ints[ply, _I]
            n = ints[ply, _N]
            if ints[ply, _DONE] == 0 and i < n:
                # selection sort step: bring the best-ordered remaining move to position i
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
                m = moves[ply, i]
                ints[ply, _I] = i + 1
                ints[ply, _CUR] = m
                make_move(boards[ply], boards[ply + 1], m)
                ints[ply + 1, _ALPHA] = -ints[ply, _BETA]
                ints[ply + 1, _BETA] = -ints[ply, _ALPHA]
                ints[ply + 1, _DEPTH] = ints[ply, _DEPTH] - 1
                ply += 1
                entering = True
                continue
            # node complete
            value = ints[ply, _BEST]
            if tt_mask >= 0 and ints[ply, _PVLEN] > 0 and ints[ply, _DEPTH] > 0:
                slot = np.int64(boards[ply, W_KEY] & np.uint64(tt_mask))
                tt_keys[slot] = boards[ply, W_KEY]
                tt_moves[slot] = pv[ply, 0]
            if ply == 0:
                break
            child = ply
            ply -= 1
        # ---------------- the node at ``child`` returned ``value`` to ``ply`` ----------------
        v = -value
        if v > ints[ply, _BEST]:
            ints[ply, _BEST] = v
            m = ints[ply, _CUR]
            pv[ply, 0] = m
            cl = ints[child, _PVLEN]
            for k in range(cl):
                pv[ply, k + 1] = pv[child, k]
            ints[ply, _PVLEN] = cl + 1
            ints[ply, _KIND] = ints[child, _KIND]
            if v > ints[ply, _ALPHA]:
                ints[ply, _ALPHA] = v
                if v >= ints[ply, _BETA]:
                    ints[ply, _DONE] = 1
                    if (ints[ply, _DEPTH] > 0 and move_captured(m) == NO_PIECE and move_promo(m) == 0
                            and killers[ply, 0] != m):
                        killers[ply, 1] = killers[ply, 0]
                        killers[ply, 0] = m
    return value
