"""The playing search's kernel: a selective negamax alpha-beta with quiescence, for play.

Recursive (numba caches a self-recursive function whose types it can infer from a base case;
the exact search of :mod:`search.tree.alphabeta` keeps its explicit stack). Each feature is
switched by an entry of the ``params`` array (``P_*``), so that ``bench/play_search.py`` and the
SPRTs of ``docs/search.md`` measure each against the search without it, and so that with every
pruning, reduction and extension off (:func:`default_params` with each of :data:`FEATURES` off) the search is plain fail-soft
alpha-beta with the exact search's quiescence and rules, and gives its score (a test):

* transposition table (:mod:`search.play.tables`): the table's move first, and with
  ``P_TT_CUT`` a cutoff at non-PV nodes from an entry at least as deep whose bound allows it;
* principal variation search (``P_PVS``): the first move with the full window, the others with a
  null window, re-searched with the full one when they beat alpha;
* check extension (``P_CHECK_EXT``): a side in check searches one ply deeper, within twice the
  iteration's depth from the root (Stockfish's bound: unbounded, a line of checks would keep its
  depth to the stack's end);
* mate distance pruning (``P_MDP``);
* at non-PV nodes not in check: reverse futility (``P_RFP``: static - margin x depth >= beta at
  depth <= 8 returns the static score), null move (``P_NULL``: depth >= 3, static >= beta, the
  side to move has a piece other than pawns and king (zugzwang guard), reduction 3 + depth / 3 +
  the static margin; not twice in a row);
* internal iterative reduction (``P_IIR``): a node of depth >= 4 without a table move searches
  one ply less;
* in the move loop, once a move has been searched and no mate is on the board: late-move pruning
  (``P_LMP``: quiet moves after (3 + depth^2) / (2 - improving) of them at depth <= 8), futility
  pruning (``P_FUTILITY``: quiet moves when static + 80 + 70 x depth centipawns <= alpha at
  depth <= 8; a move that gives check is spared), losing captures by SEE (``P_SEE_PRUNE``: below
  -100 x depth centipawns at depth <= 6);
* late-move reductions (``P_LMR``): quiet moves and losing captures after the first (two at PV
  nodes), at depth >= 3, by Ethereal's table, one ply more at non-PV and cut nodes, one less
  for improving, a move that gives check, the killers and the countermove, and by the move's
  history; re-searched at full depth when they beat alpha;
* move ordering: the table's move, winning and equal captures by MVV/LVA, the killers, the
  countermove, quiet moves by their history (``P_HISTORY``: history and countermove on), and
  losing captures last (``P_SEE_ORDER``); with ``P_CONT_HIST`` a quiet move's history adds its
  continuation history after the moves one and two plies back (Stockfish's ``continuationHistory``,
  Ethereal's counter-move and follow-up histories: a table by the earlier move's colour, piece
  and square and this move's), rewarded and punished with the butterfly history, and used by
  the late-move reductions too;
* quiescence: the exact search's moves (captures not losing by SEE, queen promotions; every
  evasion in check) with delta pruning (``P_DELTA``: a capture that cannot bring the score
  within 200 centipawns of alpha is skipped), and with ``P_QS_TT`` the table: a node's entry
  gives its static evaluation and, when its bound allows, its score (any depth: quiescence is
  depth 0), and each quiescence node stores its result at depth 0 (Ethereal's quiescence).

Scores are eval units (centipawns x ``P_SCALE``), side to move's view; a mate at ``ply`` scores
``-(MATE - ply)`` for the side mated; repetitions since the last irreversible move (in the path
or the game's history) and the fifty-move rule score 0 (:func:`search.tree.alphabeta.rule_verdict`).
With ``stats[S_ROOT_ONLY]`` = k > 0 the root searches only the k moves of ``root_only`` (UCI's
``searchmoves``; the root's table entry is then at most a lower bound). The search stops when
``stats[S_NODES]`` reaches ``stats[S_BUDGET]`` or ``stats[S_ABORT]`` is set (another thread); a
stopped search's values are meaningless (it returns 0 up the tree) and the caller keeps the root
record (``S_ROOT_*``): the best root move of the iteration that raised the root's alpha before the
stop, with its score and PV (``pv[ROOT_ROW]``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from search.core.board import (BOARD_WORDS, KING, NO_PIECE, PAWN, W_KEY, W_OCC, W_STM, gives_check, in_check,
                               make_move, make_null_move, move_captured, move_piece, move_promo)
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.evaluation.static_eval import eval_move, eval_null, eval_root, static_score
from search.play.tables import (BOUND_EXACT, BOUND_LOWER, BOUND_UPPER, HISTORY_MAX, NO_STATIC, history_update,
                                score_from_tt, score_to_tt, tt_prefetch, tt_read, tt_write)
from search.tree.alphabeta import INF, MATE, MATE_BOUND, MAX_PLY, rule_verdict, verdict_score
from search.tree.borrow import load_ref, stack_ref
from search.tree.quiescence import SEE_VALUE, quiescence_moves, see

#: the pv row that keeps the root record
ROOT_ROW = MAX_PLY + 1

# stats entries
S_NODES, S_BUDGET, S_ABORT, S_STOPPED, S_SELDEPTH, S_ROOT_DONE, S_ROOT_SCORE, S_ROOT_PVLEN = range(8)
S_NHIST, S_GEN, S_ROOT_FOUND, S_ROOT_FIRST_NODES, S_ROOT_DEPTH, S_ROOT_ONLY = 8, 9, 10, 11, 12, 13
N_STATS = 16

# params entries (0 off, 1 on, except P_SCALE: eval units per centipawn)
(P_TT_CUT, P_PVS, P_CHECK_EXT, P_MDP, P_RFP, P_NULL, P_IIR, P_LMP, P_FUTILITY, P_SEE_PRUNE, P_LMR, P_HISTORY,
 P_SEE_ORDER, P_DELTA, P_QS_TT, P_CONT_HIST, P_SCALE) = range(17)
N_PARAMS = 17
#: the features' names, in ``params`` order (``docs/search.md`` measures each)
FEATURES = ("tt_cut", "pvs", "check_ext", "mdp", "rfp", "null_move", "iir", "lmp", "futility", "see_prune",
            "lmr", "history", "see_order", "delta", "qs_tt", "cont_hist")

# move-ordering keys (higher first)
_ORDER_TT = np.int64(1) << np.int64(40)
_ORDER_GOOD = np.int64(1) << np.int64(36)
_ORDER_KILLER1 = np.int64(1) << np.int64(34)
_ORDER_KILLER2 = _ORDER_KILLER1 - 1
_ORDER_COUNTER = _ORDER_KILLER1 - 2
_ORDER_BAD = -(np.int64(1) << np.int64(30))
_VICTIM = np.array([1, 3, 3, 5, 9, 0, 0], dtype=np.int64)

# margins in centipawns (times P_SCALE in the kernel)
RFP_MARGIN = 75
FUTILITY_BASE, FUTILITY_PER_DEPTH = 80, 70
SEE_PRUNE_PER_DEPTH = 100
DELTA_MARGIN = 200
NULL_DIVISOR = 200
_ZERO = np.int64(0)
_ONE = np.int64(1)
#: rows (and columns) of the continuation history: a mover's colour, piece type and target square
CONT_ROWS = 2 * 6 * 64


class PlayState(NamedTuple):
    """The playing search's arrays, one bundle (numba passes it as one argument)."""

    boards: np.ndarray  #: uint64[MAX_PLY + 1, BOARD_WORDS], the board at each ply (the evaluator state reads it)
    moves: np.ndarray  #: int32[MAX_PLY + 1, MAX_MOVES], each ply's moves
    order: np.ndarray  #: int64[MAX_PLY + 1, MAX_MOVES], their ordering keys
    pv: np.ndarray  #: int32[MAX_PLY + 2, MAX_PLY + 2], the triangular PV (row ROOT_ROW: the root record)
    pvlen: np.ndarray  #: int64[MAX_PLY + 2]
    killers: np.ndarray  #: int32[MAX_PLY + 2, 2]
    history: np.ndarray  #: int64[2, 64, 64], quiet moves' history by colour, from, to
    counter: np.ndarray  #: int32[64, 64], the countermove of the previous move's from, to
    cont: np.ndarray  #: int16[CONT_ROWS, CONT_ROWS], continuation history (:func:`_cont_row`)
    played: np.ndarray  #: int32[MAX_PLY + 1], the move played at each ply (0: a null move)
    statics: np.ndarray  #: int64[MAX_PLY + 1], static evaluation at each ply (NO_STATIC in check)
    tt: np.ndarray  #: int64[2**k, 4], the transposition table (:mod:`search.play.tables`)
    stats: np.ndarray  #: int64[N_STATS]
    params: np.ndarray  #: int64[N_PARAMS]
    lmr: np.ndarray  #: int64[64, 256], :func:`search.play.tables.lmr_table`
    hist: np.ndarray  #: uint64[>= 1], keys of the game's positions before the root (stats[S_NHIST] of them)
    gain: np.ndarray  #: int64[40] scratch (SEE, evaluation)
    root_only: np.ndarray  #: int32[MAX_MOVES], the only root moves searched when stats[S_ROOT_ONLY] > 0


def new_state(params: np.ndarray, tt: np.ndarray, lmr: np.ndarray) -> PlayState:
    """A fresh :class:`PlayState` around a table, parameters and reduction table."""
    return PlayState(
        boards=np.zeros((MAX_PLY + 1, BOARD_WORDS), dtype=np.uint64),
        moves=np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int32),
        order=np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int64),
        pv=np.zeros((MAX_PLY + 2, MAX_PLY + 2), dtype=np.int32),
        pvlen=np.zeros(MAX_PLY + 2, dtype=np.int64),
        killers=np.zeros((MAX_PLY + 2, 2), dtype=np.int32),
        history=np.zeros((2, 64, 64), dtype=np.int64),
        counter=np.zeros((64, 64), dtype=np.int32),
        cont=np.zeros((CONT_ROWS, CONT_ROWS), dtype=np.int16),
        played=np.zeros(MAX_PLY + 1, dtype=np.int32),
        statics=np.zeros(MAX_PLY + 1, dtype=np.int64),
        tt=tt,
        stats=np.zeros(N_STATS, dtype=np.int64),
        params=params, lmr=lmr,
        hist=np.zeros(1, dtype=np.uint64),
        gain=np.zeros(40, dtype=np.int64),
        root_only=np.zeros(MAX_MOVES, dtype=np.int32),
    )


@njit(cache=True, inline="always")
def _is_quiet(m):  # type: ignore[no-untyped-def]
    return move_captured(m) == NO_PIECE and move_promo(m) == 0


@njit(cache=True, inline="always")
def _stop(st):  # type: ignore[no-untyped-def]
    """Count a node; whether the search must stop (budget or abort)."""
    stats = st.stats
    if stats[S_STOPPED] != 0:
        return True
    if stats[S_NODES] >= stats[S_BUDGET] or stats[S_ABORT] != 0:
        stats[S_STOPPED] = 1
        return True
    stats[S_NODES] += 1
    return False


@njit(cache=True, inline="always")
def _back_up_pv(st, ply, m):  # type: ignore[no-untyped-def]
    """The PV of ``ply`` becomes ``m`` and the child's PV."""
    pv = st.pv
    n = st.pvlen[ply + 1]
    pv[ply, 0] = m
    for k in range(n):
        pv[ply, k + 1] = pv[ply + 1, k]
    st.pvlen[ply] = n + 1


@njit(cache=True, inline="always")
def _tactical_key(m):  # type: ignore[no-untyped-def]
    """MVV/LVA within the tactical moves (as the exact search orders them)."""
    cap = move_captured(m)
    promo = move_promo(m)
    return 64 * _VICTIM[cap] + 16 * _VICTIM[promo if promo else 6] - move_piece(m)


@njit(cache=True, inline="always")
def _non_pawn_material(b, colour):  # type: ignore[no-untyped-def]
    """Whether ``colour`` has a piece other than pawns and its king (the null move's guard)."""
    own = b[W_OCC + colour]
    return (own & ~(b[PAWN] | b[KING])) != np.uint64(0)


@njit(cache=True, inline="always")
def _cont_index(colour, m):  # type: ignore[no-untyped-def]
    """Row (or column) of move ``m`` by ``colour`` in the continuation history."""
    return (colour * 6 + move_piece(m)) * 64 + ((m >> 6) & 63)


@njit(cache=True, inline="always")
def _cont_row(st, ply, back, colour):  # type: ignore[no-untyped-def]
    """The continuation history's row of the move played ``back`` (1 or 2) plies before ``ply``,
    where ``colour`` is to move, or -1 when there is none (the root's past, a null move):
    Stockfish's continuation history at one and two plies (``search.cpp``)."""
    row = -1
    if ply >= back:
        m = st.played[ply - back]
        if m != 0:
            row = _cont_index(colour if back == 2 else 1 - colour, m)
    return row


@njit(cache=True)
def _cont_sum(cont, row1, row2, col):  # type: ignore[no-untyped-def]
    """Column ``col``'s continuation history in rows ``row1`` and ``row2`` (those >= 0). Kernels
    of the continuation history are called, not inlined (``docs/search.md`` measures why)."""
    h = np.int64(0)
    if row1 >= 0:
        h += cont[row1, col]
    if row2 >= 0:
        h += cont[row2, col]
    return h


@njit(cache=True)
def _add_cont_keys(cont, moves, order, n, row1, row2, colour, tt_move, k1, k2, cm):  # type: ignore[no-untyped-def]
    """Add to the ordering keys ``order[:n]`` of the quiet moves ``moves[:n]`` ordered by their
    history (not the table's move, the killers or the countermove) their continuation history."""
    for i in range(n):
        m = moves[i]
        if _is_quiet(m) and m != tt_move and m != k1 and m != k2 and m != cm:
            order[i] += _cont_sum(cont, row1, row2, _cont_index(colour, m))


@njit(cache=True)
def qsearch(ctx, ply, alpha, beta):  # type: ignore[no-untyped-def]
    """Quiescence at ``ply`` with window (alpha, beta), fail-soft (module docstring); ``ctx``:
    the stack reference to ``(st, es, ev)`` (:func:`search_root`)."""
    st, es, ev = load_ref(ctx)
    if _stop(st):
        return np.int64(0)
    stats = st.stats
    if ply > stats[S_SELDEPTH]:
        stats[S_SELDEPTH] = ply
    st.pvlen[ply] = 0
    boards = st.boards
    b = boards[ply]
    verdict = rule_verdict(boards, st.moves, ply, st.hist, stats[S_NHIST])
    if verdict >= 0:
        return verdict_score(verdict, ply)
    if ply >= MAX_PLY:
        return static_score(ev, es, ply, b, st.gain)
    use_tt = st.params[P_QS_TT] != 0
    key = b[W_KEY]
    tt_static = NO_STATIC
    if use_tt:
        found, _, _, tt_bound, tt_score, tt_static = tt_read(st.tt, key)
        if found:
            tt_score = score_from_tt(tt_score, ply)
            if ((tt_bound == BOUND_EXACT) or (tt_bound == BOUND_LOWER and tt_score >= beta)
                    or (tt_bound == BOUND_UPPER and tt_score <= alpha)):
                return tt_score
    checked = in_check(b)
    moves = st.moves
    order = st.order
    best = int(-INF)
    static = NO_STATIC
    alpha0 = alpha
    best_move = np.int32(0)
    if checked:
        n = generate_moves(b, moves[ply], ALL_MOVES)
        if n == 0:
            return -(MATE - ply)
    else:
        static = tt_static if tt_static != NO_STATIC else static_score(ev, es, ply, b, st.gain)
        if static >= beta:
            if use_tt:
                tt_write(st.tt, key, np.int32(0), _ZERO, BOUND_LOWER, score_to_tt(static, ply), static, stats[S_GEN])
            return static
        best = static
        if static > alpha:
            alpha = static
        n = quiescence_moves(b, moves[ply], False, st.gain)
        if n == 0:
            return best
    for i in range(n):
        m = moves[ply, i]
        order[ply, i] = _tactical_key(m) if not _is_quiet(m) else np.int64(-1000)
    delta = st.params[P_DELTA] != 0 and not checked
    margin = DELTA_MARGIN * st.params[P_SCALE]
    keys = order[ply]
    for i in range(n):
        bi = _best_index(keys, i, n)
        m = moves[ply, bi]
        moves[ply, bi] = moves[ply, i]
        order[ply, bi] = order[ply, i]
        if delta and move_promo(m) == 0:
            if static + SEE_VALUE[move_captured(m)] * st.params[P_SCALE] + margin <= alpha:
                continue
        make_move(b, boards[ply + 1], m)
        if use_tt:
            tt_prefetch(st.tt, boards[ply + 1, W_KEY])
        eval_move(es, ply, m)
        v = -qsearch(ctx, ply + 1, -beta, -alpha)
        if stats[S_STOPPED] != 0:
            return np.int64(0)
        if v > best:
            best = v
            _back_up_pv(st, ply, m)
            if v > alpha:
                alpha = v
                best_move = m
                if v >= beta:
                    break
    if use_tt and best > -INF:
        bound = BOUND_LOWER if best >= beta else BOUND_EXACT if best > alpha0 else BOUND_UPPER
        tt_write(st.tt, key, best_move, _ZERO, bound, score_to_tt(best, ply), static, stats[S_GEN])
    return best


@njit(cache=True, inline="always")
def _order_moves(st, ply, n, b, tt_move, row1, row2):  # type: ignore[no-untyped-def]
    """Ordering keys of the ``n`` moves at ``ply`` (module docstring); ``row1``, ``row2``: the
    continuation history's rows (:func:`_cont_row`, -1: none)."""
    moves = st.moves
    order = st.order
    params = st.params
    use_history = params[P_HISTORY] != 0
    use_see = params[P_SEE_ORDER] != 0
    k1 = st.killers[ply, 0]
    k2 = st.killers[ply, 1]
    cm = np.int32(0)
    colour = np.int64(b[W_STM])
    if use_history and ply > 0:
        prev = st.played[ply - 1]
        if prev != 0:
            cm = st.counter[prev & 63, (prev >> 6) & 63]
    for i in range(n):
        m = moves[ply, i]
        if m == tt_move:
            key = _ORDER_TT
        elif not _is_quiet(m):
            key = _tactical_key(m)
            cap = move_captured(m)
            if (use_see and move_promo(m) == 0 and SEE_VALUE[cap] < SEE_VALUE[move_piece(m)]
                    and see(b, m, st.gain) < 0):
                key += _ORDER_BAD
            else:
                key += _ORDER_GOOD
        elif m == k1:
            key = _ORDER_KILLER1
        elif m == k2:
            key = _ORDER_KILLER2
        elif m == cm:
            key = _ORDER_COUNTER
        elif use_history:
            key = st.history[colour, m & 63, (m >> 6) & 63]
        else:
            key = np.int64(0)
        order[ply, i] = key
    if row1 >= 0 or row2 >= 0:
        _add_cont_keys(st.cont, moves[ply], order[ply], n, row1, row2, colour, tt_move, k1, k2, cm)


@njit(cache=True, inline="always")
def _best_index(keys, i, n):  # type: ignore[no-untyped-def]
    """The index of the first largest of ``keys[i:n]`` (int64[MAX_MOVES], ``0 <= i < n``). The
    best key so far is held in a register and the indices are unsigned, so that numba adds no
    negative-index wraparound to the loop (measured in ``docs/search.md``)."""
    u = np.uint64(i)
    bi = u
    best = keys[u]
    for j in range(u + np.uint64(1), np.uint64(n)):
        k = keys[j]
        if k > best:
            best = k
            bi = np.uint64(j)
    return np.int64(bi)


@njit(cache=True, inline="always")
def _pick(st, ply, i, n):  # type: ignore[no-untyped-def]
    """Bring the best-ordered of moves ``i:n`` at ``ply`` to ``i``; return it and its key."""
    moves = st.moves
    order = st.order
    bi = _best_index(order[ply], i, n)
    m = moves[ply, bi]
    o = order[ply, bi]
    moves[ply, bi] = moves[ply, i]
    order[ply, bi] = order[ply, i]
    moves[ply, i] = m
    order[ply, i] = o
    return m, o


@njit(cache=True, inline="always")
def _drop_quiets(st, ply, start, n):  # type: ignore[no-untyped-def]
    """Remove the quiet moves from moves ``start:n`` at ``ply`` (the others keep their order and
    keys); return the new count."""
    moves = st.moves
    order = st.order
    k = start
    for j in range(start, n):
        m = moves[ply, j]
        if not _is_quiet(m):
            moves[ply, k] = m
            order[ply, k] = order[ply, j]
            k += 1
    return k


@njit(cache=True, inline="always")
def _root_listed(st, m):  # type: ignore[no-untyped-def]
    """Whether root move ``m`` is one of the ``stats[S_ROOT_ONLY]`` moves of ``root_only``."""
    for k in range(st.stats[S_ROOT_ONLY]):
        if st.root_only[k] == m:
            return True
    return False


@njit(cache=True, inline="always")
def _record_root(st, v, m):  # type: ignore[no-untyped-def]
    """A root move ``m`` searched in full scored ``v`` that raised the root's alpha: keep it."""
    stats = st.stats
    stats[S_ROOT_FOUND] = 1
    stats[S_ROOT_SCORE] = v
    n = st.pvlen[0]
    stats[S_ROOT_PVLEN] = n
    for k in range(n):
        st.pv[ROOT_ROW, k] = st.pv[0, k]


@njit(cache=True)
def negamax(ctx, ply, depth, alpha, beta, cut_node, null_ok):  # type: ignore[no-untyped-def]
    """The value of the node at ``ply`` searched ``depth`` plies with window (alpha, beta),
    fail-soft (module docstring). ``cut_node`` (0 or 1): expected to fail high (reduced more);
    ``null_ok`` (0 or 1): a null move may be tried (not right after one). Every argument but the
    first is an int64, at every call: numba compiles one version of a recursive function per
    argument types, and a second version loaded from the cache crashed the process. ``ctx``: the
    stack reference to ``(st, es, ev)`` (:func:`search_root`): one word a call where the bundles
    themselves were about 350 (:mod:`search.tree.borrow`)."""
    if depth <= 0:
        return qsearch(ctx, ply, alpha, beta)
    st, es, ev = load_ref(ctx)
    if _stop(st):
        return np.int64(0)
    stats = st.stats
    params = st.params
    scale = params[P_SCALE]
    if ply > stats[S_SELDEPTH]:
        stats[S_SELDEPTH] = ply
    boards = st.boards
    b = boards[ply]
    st.pvlen[ply] = 0
    root = ply == 0
    pv_node = beta - alpha > 1
    if not root:
        verdict = rule_verdict(boards, st.moves, ply, st.hist, stats[S_NHIST])
        if verdict >= 0:
            return verdict_score(verdict, ply)
        if ply >= MAX_PLY:
            return static_score(ev, es, ply, b, st.gain)
        if params[P_MDP] != 0:
            alpha = max(alpha, -(MATE - ply))
            beta = min(beta, MATE - ply - 1)
            if alpha >= beta:
                return alpha
    key = b[W_KEY]
    found, tt_move, tt_depth, tt_bound, tt_score, tt_static = tt_read(st.tt, key)
    if found:
        tt_score = score_from_tt(tt_score, ply)
    if found and not pv_node and params[P_TT_CUT] != 0 and tt_depth >= depth:
        if ((tt_bound == BOUND_EXACT) or (tt_bound == BOUND_LOWER and tt_score >= beta)
                or (tt_bound == BOUND_UPPER and tt_score <= alpha)):
            return tt_score
    checked = in_check(b)
    if checked and params[P_CHECK_EXT] != 0 and ply < 2 * stats[S_ROOT_DEPTH]:
        depth += 1
    colour = np.int64(b[W_STM])
    static = NO_STATIC
    improving = False
    if not checked:
        static = tt_static if found and tt_static != NO_STATIC else static_score(ev, es, ply, b, st.gain)
        st.statics[ply] = static
        if ply >= 2 and st.statics[ply - 2] != NO_STATIC:
            improving = static > st.statics[ply - 2]
    else:
        st.statics[ply] = NO_STATIC
    if not pv_node and not checked and abs(beta) < MATE_BOUND:
        if params[P_RFP] != 0 and depth <= 8 and static - RFP_MARGIN * scale * (depth - improving) >= beta:
            return static
        if (params[P_NULL] != 0 and null_ok != 0 and depth >= 3 and static >= beta
                and _non_pawn_material(b, colour)):
            r = 3 + depth // 3 + min((static - beta) // (NULL_DIVISOR * scale), 3)
            make_null_move(b, boards[ply + 1])
            tt_prefetch(st.tt, boards[ply + 1, W_KEY])
            eval_null(es, ply)
            st.played[ply] = 0
            v = -negamax(ctx, ply + 1, depth - 1 - r, -beta, -beta + 1, _ONE - cut_node, _ZERO)
            if stats[S_STOPPED] != 0:
                return np.int64(0)
            if v >= beta:
                return beta if v >= MATE_BOUND else v
    if params[P_IIR] != 0 and depth >= 4 and tt_move == 0 and not root:
        depth -= 1
    moves = st.moves
    n = generate_moves(b, moves[ply], ALL_MOVES)
    if n == 0:
        return -(MATE - ply) if checked else np.int64(0)
    row1 = -1
    row2 = -1
    if params[P_HISTORY] != 0 and params[P_CONT_HIST] != 0:
        row1 = _cont_row(st, ply, 1, colour)
        row2 = _cont_row(st, ply, 2, colour)
    _order_moves(st, ply, n, b, tt_move, row1, row2)
    alpha0 = alpha
    best = -INF
    best_move = np.int32(0)
    searched = 0
    quiets = 0
    prune_ok = not root and not checked
    futile = (params[P_FUTILITY] != 0 and depth <= 8
              and static + (FUTILITY_BASE + FUTILITY_PER_DEPTH * depth) * scale <= alpha)
    lmp_count = (3 + depth * depth) // (2 - improving)
    i = -1
    while i + 1 < n:
        i += 1
        m, key_o = _pick(st, ply, i, n)
        if root and stats[S_ROOT_ONLY] > 0 and not _root_listed(st, m):
            continue  # not among the root moves to search (searchmoves)
        quiet = _is_quiet(m)
        if prune_ok and searched > 0 and best > -MATE_BOUND:
            if quiet:
                if params[P_LMP] != 0 and depth <= 8 and quiets >= lmp_count:
                    n = _drop_quiets(st, ply, i + 1, n)  # late-move pruning: the tactical moves left alone
                    continue
            elif (params[P_SEE_PRUNE] != 0 and depth <= 6 and key_o < 0
                  and see(b, m, st.gain) < -SEE_PRUNE_PER_DEPTH * depth):
                continue
        checking = -1  # whether m gives check (0, 1), found only where futility or a reduction reads it
        if prune_ok and searched > 0 and best > -MATE_BOUND and quiet and futile:
            if not gives_check(b, m):
                continue
            checking = 1
        child = boards[ply + 1]
        make_move(b, child, m)
        tt_prefetch(st.tt, child[W_KEY])
        eval_move(es, ply, m)
        st.played[ply] = m
        new_depth = depth - 1
        if searched == 0 or params[P_PVS] == 0:
            v = -negamax(ctx, ply + 1, new_depth, -beta, -alpha, _ZERO, _ONE)
        else:
            r = 0
            if params[P_LMR] != 0 and depth >= 3 and searched >= 1 + pv_node and (quiet or key_o < 0):
                r = st.lmr[min(depth, 63), min(searched, 255)]
                r += (not pv_node) + cut_node
                if checking < 0:
                    checking = int(gives_check(b, m))
                r -= int(improving) + checking  # ints: numpy bools add as a logical or (the Python run)
                if key_o >= _ORDER_COUNTER:
                    r -= 1
                if quiet and params[P_HISTORY] != 0:
                    h = st.history[colour, m & 63, (m >> 6) & 63]
                    if row1 >= 0 or row2 >= 0:
                        h += _cont_sum(st.cont, row1, row2, _cont_index(colour, m))
                    r -= h // 6000
                r = min(max(r, 0), new_depth - 1)
            v = -negamax(ctx, ply + 1, new_depth - r, -alpha - 1, -alpha, _ONE, _ONE)
            if v > alpha and r > 0 and stats[S_STOPPED] == 0:
                v = -negamax(ctx, ply + 1, new_depth, -alpha - 1, -alpha, _ONE - cut_node, _ONE)
            if v > alpha and v < beta and stats[S_STOPPED] == 0:
                v = -negamax(ctx, ply + 1, new_depth, -beta, -alpha, _ZERO, _ONE)
        if stats[S_STOPPED] != 0:
            return np.int64(0)
        searched += 1
        if quiet:
            quiets += 1
        if root:
            stats[S_ROOT_DONE] += 1
            if stats[S_ROOT_DONE] == 1:
                stats[S_ROOT_FIRST_NODES] = stats[S_NODES]
        if v > best:
            best = v
            best_move = m
            if v > alpha:
                _back_up_pv(st, ply, m)
                if root:
                    _record_root(st, v, m)
                alpha = v
                if v >= beta:
                    if quiet:
                        _reward_quiet(st, ply, colour, m, depth, i, row1, row2)
                    break
            elif searched == 1:
                _back_up_pv(st, ply, m)  # fail low: keep the first move's line as a PV to report
    if best >= beta:
        bound = BOUND_LOWER
    elif best > alpha0:
        bound = BOUND_EXACT
    else:
        bound = BOUND_UPPER
    if root and stats[S_ROOT_ONLY] > 0:
        # some root moves were left out: the best of the others is only a lower bound on the
        # position's value, and a fail low bounds nothing
        if best <= alpha0:
            return best
        bound = BOUND_LOWER
    tt_write(st.tt, key, best_move if bound != BOUND_UPPER else np.int32(0), depth, bound,
             score_to_tt(best, ply), static, stats[S_GEN])
    return best


@njit(cache=True, inline="always")
def _reward_quiet(st, ply, colour, m, depth, i, row1, row2):  # type: ignore[no-untyped-def]
    """Quiet move ``m``, the ``i``-th tried at ``ply``, caused a cutoff at ``depth``: make it the
    first killer and the countermove of the previous move, raise its history (and its
    continuation history after the moves of rows ``row1``, ``row2``, where >= 0) and lower
    those of the quiet moves tried before it."""
    killers = st.killers
    if killers[ply, 0] != m:
        killers[ply, 1] = killers[ply, 0]
        killers[ply, 0] = m
    if st.params[P_HISTORY] == 0:
        return
    if ply > 0:
        prev = st.played[ply - 1]
        if prev != 0:
            st.counter[prev & 63, (prev >> 6) & 63] = m
    bonus = min(32 * depth * depth, HISTORY_MAX // 4)
    history_update(st.history, colour, m, bonus)
    moves = st.moves
    for j in range(i):
        q = moves[ply, j]
        if _is_quiet(q):
            history_update(st.history, colour, q, -bonus)
    if row1 >= 0 or row2 >= 0:
        _reward_cont(st.cont, moves[ply], i, row1, row2, colour, bonus)


@njit(cache=True)
def _reward_cont(cont, moves, i, row1, row2, colour, bonus):  # type: ignore[no-untyped-def]
    """The continuation history's share of :func:`_reward_quiet`: ``bonus`` with gravity
    (:func:`search.play.tables.history_update`) to ``moves[i]``'s column of rows ``row1``,
    ``row2`` (those >= 0), and ``-bonus`` to the quiet moves before it."""
    for j in range(i + 1):
        q = moves[j]
        if j < i and not _is_quiet(q):
            continue
        b = bonus if j == i else -bonus
        col = _cont_index(colour, q)
        if row1 >= 0:
            h = np.int64(cont[row1, col])
            cont[row1, col] = h + b - h * abs(b) // HISTORY_MAX
        if row2 >= 0:
            h = np.int64(cont[row2, col])
            cont[row2, col] = h + b - h * abs(b) // HISTORY_MAX


@njit(cache=True, nogil=True)
def search_root(st, es, ev, root, depth, alpha, beta, budget, nhist):  # type: ignore[no-untyped-def]
    """Search ``root`` (uint64[BOARD_WORDS]) to ``depth`` with the root window (alpha, beta)
    and a node ``budget``; ``nhist`` keys of ``st.hist`` are the game's history. Resets the
    node count and the root record (not the tables: they carry over between iterations and
    moves). Returns the score (fail-soft); the PV is ``st.pv[0, :st.pvlen[0]]``."""
    stats = st.stats
    stats[S_NODES] = 0
    stats[S_STOPPED] = 0
    stats[S_SELDEPTH] = 0
    stats[S_ROOT_DONE] = 0
    stats[S_ROOT_FOUND] = 0
    stats[S_ROOT_PVLEN] = 0
    stats[S_ROOT_FIRST_NODES] = 0
    stats[S_BUDGET] = budget
    stats[S_NHIST] = nhist
    stats[S_ROOT_DEPTH] = depth
    boards = st.boards
    for k in range(BOARD_WORDS):
        boards[0, k] = root[k]
    st.statics[0] = NO_STATIC
    eval_root(es, root)
    ctx = stack_ref((st, es, ev))
    return negamax(ctx, _ZERO, np.int64(depth), np.int64(alpha), np.int64(beta), _ZERO, _ZERO)


@njit(cache=True)
def clear_tables(st):  # type: ignore[no-untyped-def]
    """Forget the table, history, countermoves and killers (a new game)."""
    st.tt[:] = 0
    st.history[:] = 0
    st.counter[:] = 0
    st.cont[:] = 0
    st.killers[:] = 0


@njit(cache=True)
def age_history(st):  # type: ignore[no-untyped-def]
    """Between two moves: halve the history (recent results weigh more) and clear the killers."""
    for c in range(2):
        for f in range(64):
            for t in range(64):
                st.history[c, f, t] //= 2
    cont = st.cont
    for r in range(cont.shape[0]):
        for k in range(cont.shape[1]):
            cont[r, k] = cont[r, k] // 2
    st.killers[:] = 0


__all__ = ["FEATURES", "N_PARAMS", "PlayState", "ROOT_ROW", "age_history", "clear_tables",
           "default_params", "new_state", "search_root"]


def default_params(scale: int, **switches: bool) -> np.ndarray:
    """The params array with every feature on except those ``switches`` turn off (by
    :data:`FEATURES` name), and ``scale`` eval units per centipawn."""
    unknown = set(switches) - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown search features: {', '.join(sorted(unknown))} (known: {', '.join(FEATURES)})")
    p = np.zeros(N_PARAMS, dtype=np.int64)
    for i, name in enumerate(FEATURES):
        p[i] = int(switches.get(name, True))
    p[P_SCALE] = scale
    return p
