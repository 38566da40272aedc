"""Alpha-beta with the move model's order: the search of :mod:`search.tree.alphabeta`, step for step,
with the move model's scores ordering the moves of full-width nodes.

:func:`search.tree.alphabeta.search_kernel` is left as it is (the default path pays nothing); this
module's kernel is the same loop over the same steps (:func:`~search.tree.alphabeta.enter_node`,
:func:`~search.tree.alphabeta.play_next`, :func:`~search.tree.alphabeta.back_up`, ...) with one step
replaced: :func:`start_model_loop` gives the moves of a node with remaining depth > 0 their
ordering keys from the move model (:func:`search.pls.move_model_kernels.score_moves`), after the
transposition table's move. Quiescence nodes keep most-valuable-victim / least-valuable-attacker.
The value of a search does not depend on the order (alpha-beta with the window (-INF, INF) at
the root is exact, and the table only orders), so only the nodes visited differ.

Two orders (``mode``):

* :data:`ORDER_MODEL`: every move by the model's score (captures, killers and quiet moves alike);
* :data:`ORDER_QUIET`: captures and promotions by MVV/LVA, then the killers, as the default
  search does, then the quiet moves by the model's score instead of all at 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from search.tree.alphabeta import (KILLER_FIRST, KILLER_SECOND, ORDER_HISTORY_CAP, ORDER_TACTICAL, ORDER_TT,
                                   WS_BOARDS, WS_INTS, WS_KILLERS, WS_MOVES, WS_ORDER, WS_PV, WS_STATS, _DEPTH, _DONE,
                                   _I, _N, back_up, borrow_search_args, enter_node, finish_node, has_next_move,
                                   is_quiet, order_key, play_next, search_kernel, start_search, store_killer,
                                   tt_probe)
from search.tree.batch import new_thread_search
from search.pls.move_catalog import N_GROUPS
from search.pls.move_model_kernels import new_scratch, score_moves
from search.core.movegen import MAX_MOVES
from search.tree.work_queue import new_queue, take

ORDER_MODEL, ORDER_QUIET = 0, 1
#: ``mode`` of :func:`model_search_batch_kernel` for the default search's own order
ORDER_DEFAULT = -1
#: positions per parallel work item (one workspace each)
CHUNK = 16
#: ordering-key units per unit of model score (log-odds): keys keep about 1e-6 of resolution
_KEY_SCALE = 1 << 20


#: positions in the tuple of :func:`new_model_scratch`
MS_FEATURES, MS_SLOTS, MS_SCORES = range(3)


@njit(cache=True)
def new_model_scratch():  # type: ignore[no-untyped-def]
    """Per-thread scratch of the model's ordering: the features' scratch, slots and scores
    (positions ``MS_*``)."""
    return (new_scratch(), np.zeros((MAX_MOVES, N_GROUPS), dtype=np.int64), np.zeros(MAX_MOVES, dtype=np.float64))


@njit(cache=True, inline="always")
def start_model_loop(ws, ply, n, tt_keys, tt_moves, mw, evw, ms, mode):  # type: ignore[no-untyped-def]
    """:func:`search.tree.alphabeta.start_move_loop` with the move model's order at full-width nodes
    (module docstring); ``mw`` float64[N_MOVE_FEATURES] the model's weights, ``evw`` its
    evaluation weights, ``ms`` from :func:`new_model_scratch`."""
    boards = ws[WS_BOARDS]
    moves = ws[WS_MOVES]
    order = ws[WS_ORDER]
    ints = ws[WS_INTS]
    killers = ws[WS_KILLERS]
    if ints[ply, _DEPTH] > 0:
        tt_move = tt_probe(boards[ply], tt_keys, tt_moves)
        scores = ms[MS_SCORES]
        score_moves(boards[ply], moves[ply], n, mw, evw, ms[MS_FEATURES], ms[MS_SLOTS], scores)
        for i in range(n):
            m = moves[ply, i]
            key = order_key(m, tt_move, killers[ply, KILLER_FIRST], killers[ply, KILLER_SECOND])
            model_key = np.int64(scores[i] * _KEY_SCALE)
            model_key = min(max(model_key, -ORDER_HISTORY_CAP + 1), ORDER_HISTORY_CAP - 1)  # type: ignore[arg-type]
            if key == ORDER_TT:
                order[ply, i] = key
            elif mode == ORDER_MODEL:
                order[ply, i] = ORDER_TACTICAL + model_key
            elif key == 0:
                order[ply, i] = model_key
            else:
                order[ply, i] = key
    else:
        for i in range(n):
            order[ply, i] = order_key(moves[ply, i], 0, killers[ply, KILLER_FIRST], killers[ply, KILLER_SECOND])
    ints[ply, _N] = n
    ints[ply, _I] = 0
    ints[ply, _DONE] = 0


# many parameters: search_kernel's arguments and the move model's; a numba kernel takes arrays and scalars (no
# dataclass in nopython mode)
@njit(cache=True, nogil=True)
def model_search_kernel(ws, es, root, depth, ev, budget, hist, nhist, tt_keys, tt_moves, mw, evw, ms, mode):  # type: ignore[no-untyped-def]
    """:func:`search.tree.alphabeta.search_kernel` (same arguments, same contract and value) with the
    move model's order: ``mw``, ``evw``, ``ms`` as for :func:`start_model_loop`, ``mode``
    :data:`ORDER_MODEL` or :data:`ORDER_QUIET`."""
    ws, es, ev = borrow_search_args(ws, es, ev)
    ints = ws[WS_INTS]
    pv = ws[WS_PV]
    killers = ws[WS_KILLERS]
    start_search(ws, es, root, depth)
    ply, child, value, entering = 0, 0, np.int64(0), True
    while True:
        if entering:
            entering = False
            n, value, _ = enter_node(ws, es, ply, ev, budget, hist, nhist)
            if n > 0:
                start_model_loop(ws, ply, n, tt_keys, tt_moves, mw, evw, ms, mode)
                continue
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
        if cut != 0 and ints[ply, _DEPTH] > 0 and is_quiet(cut):
            store_killer(killers, ply, cut)
    return value


@njit(cache=True, parallel=True)
def model_search_batch_kernel(boards, depth, ev, budget, mw, evw, mode):  # type: ignore[no-untyped-def]
    """Search each of ``boards`` (uint64[P, BOARD_WORDS]) to ``depth`` + quiescence with the
    model's order (``mode`` :data:`ORDER_DEFAULT`: the default search's own order,
    :func:`search.tree.alphabeta.search_kernel` itself): scores int64[P] (eval units, side to move's view), nodes int64[P], budget_hit bool[P]."""
    p_count = boards.shape[0]
    scores = np.zeros(p_count, dtype=np.int64)
    nodes = np.zeros(p_count, dtype=np.int64)
    budget_hit = np.zeros(p_count, dtype=np.bool_)
    n_chunks = (p_count + CHUNK - 1) // CHUNK
    queue = new_queue()
    for _ in prange(n_chunks):
        c = take(queue)
        if c < n_chunks:
            evl, ws, es, hist, tt_keys, tt_moves = new_thread_search(ev)
            ms = new_model_scratch()
            while c < n_chunks:
                for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
                    if mode == ORDER_DEFAULT:
                        scores[p] = search_kernel(ws, es, boards[p], depth, evl, budget, hist, np.int64(0), tt_keys,
                                                  tt_moves)
                    else:
                        scores[p] = model_search_kernel(ws, es, boards[p], depth, evl, budget, hist, np.int64(0),
                                                        tt_keys, tt_moves, mw, evw, ms, mode)
                    nodes[p] = ws[WS_STATS][0]
                    budget_hit[p] = ws[WS_STATS][1] != 0
                c = take(queue)
    return scores, nodes, budget_hit
