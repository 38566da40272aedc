"""Probability-limited search (Giraffe, Lai 2015): the kernel, beside the depth-limited one.

The search of :mod:`search.tree.alphabeta`, step for step (:func:`~search.tree.alphabeta.enter_node`,
:func:`~search.tree.alphabeta.back_up`, :func:`~search.tree.alphabeta.finish_node`, the same quiescence,
rules, PV and PV leaf kinds, the same move-ordering transposition table), with the depth limit
replaced by a probability limit: a node is searched full width while the product of the move
model's probabilities of the moves on its path stays above the threshold; below it, the node is
a quiescence node, as the depth-limited search's nodes at depth 0.

The limit is kept in log-probabilities, as integers in *budget units* (:data:`LOG_SCALE` per
natural-log unit) in the per-ply ``depth`` slot of the workspace: the root's budget is
``floor(-ln(threshold) * LOG_SCALE) - SLACK``, a child's is its parent's plus
``round(ln(p(move)) * LOG_SCALE)`` (never positive), and a node with budget > 0 is searched full
width, one with budget <= 0 by quiescence (its children: budget - 1, as the depth-limited search).
``SLACK`` absorbs the rounding, so that with ``b`` moves everywhere and a uniform model, the
threshold ``b**-d`` gives exactly the depth-``d`` tree. A move's probability is the model's
softmax over the node's legal moves (:func:`search.pls.move_model_kernels.score_moves`); ``flat`` > 0
replaces it by ``flat`` budget units per move everywhere (``flat = ln(b) * LOG_SCALE`` rounded:
the constant-branching mock, under which the threshold ``b**-d`` is the depth-``d`` search on
any position).

The mixed search (issue 43): the model costs about three times a node of the depth-limited
search, so :func:`pls_kernel` evaluates it only at full-width nodes whose path probability is
above a setting (``model_units``, in budget units of the remaining budget: :func:`model_units`
from the node probability ``p_model``), near the root where each evaluation orders and splits a
large subtree; below it the probability is split by the cheap *pre-move model* (``lw``, the
move model's weights of the groups known before the move is made, :func:`premove_log_probs`) or,
``lw`` empty, by a static prior (:func:`prior_log_probs`: a quiet move weighs 1, a capture or
promotion ``1 + 2 * (victim value + promoted piece value)`` in pawns, the probabilities
proportional to the weights), and the moves are ordered as the depth-limited search orders them
(the table's move, MVV/LVA, killers). ``p_model`` 0 is the model everywhere (the search above,
node for node); 1 is the pre-move model or the prior everywhere.

The default search's kernels are not touched (they pay nothing); the Python API is
:mod:`search.pls.pls`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from search.tree.alphabeta import (KILLER_FIRST, KILLER_SECOND, MAX_PLY, ORDER_TT, WS_BOARDS, WS_INTS, WS_KILLERS,
                                   WS_MOVES, WS_ORDER, WS_PV, WS_STATS, _ALPHA, _BETA, _CUR, _DEPTH, _DONE, _I, _N,
                                   back_up, borrow_search_args, enter_node, finish_node, has_next_move, is_quiet,
                                   order_key, record_root, start_search, store_killer, tt_probe)
from search.core.board import NO_PIECE, make_move, move_captured, move_promo
from search.core.movegen import MAX_MOVES
from search.pls.move_catalog import N_GROUPS
from search.pls.move_model_kernels import S_GAIN, new_scratch, premove_scores, score_moves
from search.evaluation.static_eval import eval_move

#: budget units per natural-log unit of probability
LOG_SCALE = 1 << 20
#: budget units taken off the root's budget so that rounding never adds a ply (module docstring)
SLACK = 64
#: ``mode`` of :func:`pls_kernel`: full-width moves ordered by the model's probability (the table's
#: move first), or by the default search's order (table's move, MVV/LVA, killers)
PLS_ORDER_MODEL, PLS_ORDER_DEFAULT = 0, 1
#: ``model_units`` of :func:`pls_kernel` that uses the model at every full-width node
MODEL_EVERYWHERE = -(1 << 62)
#: the static prior's weight of a capture or promotion: 1 + PRIOR_TACTICAL x (the captured
#: piece's value + the promoted piece's, in pawns: 1, 3, 3, 5, 9); a quiet move weighs 1
PRIOR_TACTICAL = 2.0
#: pieces' values in pawns for the static prior, indexed by piece type (NO_PIECE: 0)
_PRIOR_VALUE = np.array([1.0, 3.0, 3.0, 5.0, 9.0, 0.0, 0.0])


def root_budget(threshold: float) -> int:
    """The root's budget (budget units) for probability ``threshold`` in (0, 1]."""
    return int(math.floor(-math.log(threshold) * LOG_SCALE)) - SLACK


#: positions in the tuple of :func:`new_pls_scratch`
PS_FEATURES, PS_SLOTS, PS_SCORES, PS_LOG_PROBS = range(4)


def model_units(threshold: float, p_model: float) -> int:
    """``model_units`` of :func:`pls_kernel` for a search to ``threshold``: a full-width node's
    budget from which the model splits its probability, i.e. the nodes whose path's
    log-probability (budget units, the sum of the rounded moves') is above ``ln(p_model)``;
    ``p_model`` 0: every node (:data:`MODEL_EVERYWHERE`), 1: none (the root's path has
    log-probability 0)."""
    if p_model <= 0.0:
        return MODEL_EVERYWHERE
    return root_budget(threshold) + int(math.floor(math.log(p_model) * LOG_SCALE)) + 1


@njit(cache=True)
def new_pls_scratch():  # type: ignore[no-untyped-def]
    """Per-thread scratch of the PLS kernel: the move model's scratch, slots and scores, and the
    moves' log-probabilities int64[MAX_PLY + 1, MAX_MOVES] (budget units, beside ``moves``);
    positions ``PS_*``."""
    return (new_scratch(), np.zeros((MAX_MOVES, N_GROUPS), dtype=np.int64), np.zeros(MAX_MOVES, dtype=np.float64),
            np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int64))


@njit(cache=True, inline="always")
def softmax_units(scores, n, out):  # type: ignore[no-untyped-def]
    """The softmax of ``scores[:n]`` (float64, log-odds) as log-probabilities into ``out[:n]``
    (int64, budget units, <= 0)."""
    mx = scores[0]
    for i in range(1, n):
        mx = max(mx, scores[i])
    total = 0.0
    for i in range(n):
        total += math.exp(scores[i] - mx)
    lse = mx + math.log(total)
    for i in range(n):
        out[i] = min(np.int64(0), np.int64(round((scores[i] - lse) * LOG_SCALE)))


@njit(cache=True, inline="always")
def log_probs(b, moves, n, mw, evw, ps, flat, out):  # type: ignore[no-untyped-def]
    """The log-probabilities of the ``n`` legal moves ``moves`` of ``b`` into ``out[:n]``
    (int64, budget units, <= 0): the model's softmax (weights ``mw``, evaluation weights
    ``evw``, scratch ``ps`` of :func:`new_pls_scratch`), or ``-flat`` each when ``flat`` > 0."""
    if flat > 0:
        for i in range(n):
            out[i] = -flat
        return
    scores = ps[PS_SCORES]
    score_moves(b, moves, n, mw, evw, ps[PS_FEATURES], ps[PS_SLOTS], scores)
    softmax_units(scores, n, out)


@njit(cache=True, inline="always")
def premove_log_probs(b, moves, n, lw, ps, out):  # type: ignore[no-untyped-def]
    """The pre-move model's log-probabilities (weights ``lw``; :func:`search.pls.move_model_kernels.premove_scores`)
    of the ``n`` legal moves ``moves`` of ``b`` into ``out[:n]`` (int64, budget units, <= 0)."""
    scores = ps[PS_SCORES]
    premove_scores(b, moves, n, lw, ps[PS_FEATURES][S_GAIN], ps[PS_SLOTS][0], scores)
    softmax_units(scores, n, out)


@njit(cache=True, inline="always")
def prior_log_probs(moves, n, weights, out):  # type: ignore[no-untyped-def]
    """The static prior's log-probabilities of the ``n`` moves ``moves`` into ``out[:n]`` (int64,
    budget units, <= 0; module docstring), ``weights`` float64[>= n] scratch."""
    total = 0.0
    for i in range(n):
        m = moves[i]
        cap = move_captured(m)
        promo = move_promo(m)
        w = 1.0
        if cap != NO_PIECE:
            w += PRIOR_TACTICAL * _PRIOR_VALUE[cap]
        if promo != 0:
            w += PRIOR_TACTICAL * _PRIOR_VALUE[promo]
        weights[i] = w
        total += w
    lt = math.log(total)
    for i in range(n):
        out[i] = min(np.int64(0), np.int64(round((math.log(weights[i]) - lt) * LOG_SCALE)))


@njit(cache=True, inline="always")
def start_pls_loop(ws, ply, n, tt_keys, tt_moves, mw, evw, ps, mode, flat, model_units, lw):  # type: ignore[no-untyped-def]
    """Give the ``n`` moves of the node at ``ply`` their log-probabilities (full-width nodes:
    budget units, into ``ps[PS_LOG_PROBS][ply]``; the model's from budget ``model_units`` up, else
    the pre-move model's (weights ``lw``) or, ``lw`` empty, the static prior's) and ordering
    keys, and start its move loop."""
    boards = ws[WS_BOARDS]
    moves = ws[WS_MOVES]
    order = ws[WS_ORDER]
    ints = ws[WS_INTS]
    killers = ws[WS_KILLERS]
    lps = ps[PS_LOG_PROBS]
    d = ints[ply, _DEPTH]
    if d > 0:
        tt_move = tt_probe(boards[ply], tt_keys, tt_moves)
        by_model = flat > 0 or d >= model_units
        if by_model:
            log_probs(boards[ply], moves[ply], n, mw, evw, ps, flat, lps[ply])
        elif len(lw) > 0:
            premove_log_probs(boards[ply], moves[ply], n, lw, ps, lps[ply])
        else:
            prior_log_probs(moves[ply], n, ps[PS_SCORES], lps[ply])
        for i in range(n):
            m = moves[ply, i]
            if mode == PLS_ORDER_DEFAULT or not by_model:
                order[ply, i] = order_key(m, tt_move, killers[ply, KILLER_FIRST], killers[ply, KILLER_SECOND])
            elif m == tt_move:
                order[ply, i] = ORDER_TT
            else:
                order[ply, i] = lps[ply, i]  # <= 0, above -INF: by probability, generation order on ties
    else:
        for i in range(n):
            order[ply, i] = order_key(moves[ply, i], 0, killers[ply, KILLER_FIRST], killers[ply, KILLER_SECOND])
            lps[ply, i] = 0
    ints[ply, _N] = n
    ints[ply, _I] = 0
    ints[ply, _DONE] = 0


@njit(cache=True, inline="always")
def pls_play_next(ws, es, ply, lps):  # type: ignore[no-untyped-def]
    """:func:`search.tree.alphabeta.play_next` (negated window) with the child's budget: the parent's
    plus the move's log-probability at a full-width node, the parent's - 1 in quiescence."""
    boards = ws[WS_BOARDS]
    moves = ws[WS_MOVES]
    order = ws[WS_ORDER]
    ints = ws[WS_INTS]
    i = ints[ply, _I]
    n = ints[ply, _N]
    bi = i  # selection sort step, the log-probabilities alongside
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
        lp = lps[ply, bi]
        lps[ply, bi] = lps[ply, i]
        lps[ply, i] = lp
    m = moves[ply, i]
    ints[ply, _I] = i + 1
    ints[ply, _CUR] = m
    make_move(boards[ply], boards[ply + 1], m)
    eval_move(es, ply, m)
    ints[ply + 1, _ALPHA] = -ints[ply, _BETA]
    ints[ply + 1, _BETA] = -ints[ply, _ALPHA]
    d = ints[ply, _DEPTH]
    ints[ply + 1, _DEPTH] = d + lps[ply, i] if d > 0 else d - 1


# many parameters: search_kernel's arguments, the move model's and the budget's; a numba kernel takes arrays and
# scalars (no dataclass in nopython mode)
@njit(cache=True, nogil=True)
def pls_kernel(ws, es, root, budget_units, ev, budget, hist, nhist, tt_keys, tt_moves, mw, evw, ps, mode, flat,  # type: ignore[no-untyped-def]
               model_units, lw):
    """Probability-limited search of ``root`` (uint64[BOARD_WORDS]) with the root's log-probability
    budget ``budget_units`` (:func:`root_budget`); the other arguments and the result (score in
    eval units, root side to move's view; PV, leaf kind and statistics in ``ws``) as for
    :func:`search.tree.alphabeta.search_kernel`; ``mw`` float64[N_MOVE_FEATURES] the move model's
    weights, ``evw`` its evaluation weights, ``ps`` from :func:`new_pls_scratch`, ``mode``
    :data:`PLS_ORDER_MODEL` or :data:`PLS_ORDER_DEFAULT`, ``flat`` 0 or the constant cost of a move
    (module docstring), ``model_units`` the budget from which a full-width node uses the model
    (:func:`model_units`; below it, the pre-move model of weights ``lw``
    float64[N_MOVE_FEATURES], or the static prior when ``lw`` is empty). The root's record
    (:func:`search.alphabeta.record_root`) is kept as the depth-limited search keeps it."""
    ws, es, ev = borrow_search_args(ws, es, ev)
    ints = ws[WS_INTS]
    pv = ws[WS_PV]
    killers = ws[WS_KILLERS]
    stats = ws[WS_STATS]
    lps = ps[PS_LOG_PROBS]
    start_search(ws, es, root, budget_units)
    ply, child, value, entering = 0, 0, np.int64(0), True
    while True:
        if entering:
            entering = False
            n, value, _ = enter_node(ws, es, ply, ev, budget, hist, nhist)
            if n > 0:
                start_pls_loop(ws, ply, n, tt_keys, tt_moves, mw, evw, ps, mode, flat, model_units, lw)
                continue
        elif has_next_move(ints, ply):
            pls_play_next(ws, es, ply, lps)
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
            store_killer(killers, ply, cut)
    return value
