"""The sweep of :mod:`search.tree.batch` through the probability-limited search (Giraffe, Lai 2015).

For every legal move ``m`` of every position ``p``, the child ``p.m`` is searched by
:func:`search.pls.pls_kernels.pls_kernel` as the subtree of ``m`` in the probability-limited tree of
``p``: the child's budget is the position's (:func:`search.pls.pls_kernels.root_budget` of the
threshold) plus ``m``'s log-probability under the move model (budget units); a child whose
budget is <= 0 is searched by quiescence only (as every child of a depth-1 sweep). Each row
holds what :func:`search.tree.batch.sweep_kernel`'s holds: the move, ``s(p.m)`` from the mover's
view, the PV leaf's kind, the sign with which the leaf's features enter ``s``, and the leaf.
So with the constant-branching mock (every move ``b`` moves' worth, ``flat``) or a uniform model
where every node has ``b`` moves, the threshold ``b**-d`` is the depth-``d`` sweep (a depth
counted from ``p``); a threshold of 1 is the depth-1 sweep (every child by quiescence).

Linear evaluators only (int32 weights, with a term plug-in's tuple): the Python API
(:func:`search.pls.pls.pls_sweep`) refuses a network. Each child search is independent (no
transposition table, killers reset), so results do not depend on the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from search.tree.alphabeta import WS_INTS, WS_PV, WS_STATS, _KIND, _PVLEN
from search.tree.batch import CHUNK, _replay, new_sweep_scratch, new_thread_search, sweep_outputs
from search.core.board import W_KEY, make_move
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.pls.pls_kernels import MODEL_EVERYWHERE, log_probs, new_pls_scratch, pls_kernel
from search.tree.work_queue import new_queue, take


# many parameters: one position's search arguments, its output rows and the thread's scratch; a numba kernel takes
# arrays and scalars (no dataclass in nopython mode)
@njit(cache=True)
def _pls_sweep_position(ws, es, board, units, ev, budget, mw, evw, ps, mode, flat, root_lps,  # type: ignore[no-untyped-def]
                        moves_out, scores_out, kinds_out, signs_out, leaves_out, want_leaves, buf, child, hist,
                        tt_keys, tt_moves, tmp):
    """Search every legal move of ``board`` with the budget ``units`` at ``board``; one row
    per move (module docstring); returns the nodes searched."""
    n = generate_moves(board, buf, ALL_MOVES)
    log_probs(board, buf, n, mw, evw, ps, flat, root_lps)
    hist[0] = board[W_KEY]
    nodes = 0
    no_leaf_model = np.empty(0, dtype=np.float64)  # the model everywhere: the pre-move model is not read
    for i in range(n):
        m = buf[i]
        make_move(board, child, m)
        v = pls_kernel(ws, es, child, units + root_lps[i], ev, budget, hist, np.int64(1), tt_keys, tt_moves, mw, evw, ps, mode,
                       flat, MODEL_EVERYWHERE, no_leaf_model)
        ints = ws[WS_INTS]
        pvl = ints[0, _PVLEN]
        moves_out[i] = m
        scores_out[i] = -v
        kinds_out[i] = ints[0, _KIND]
        # the child's score is (-1)**pvl * eval(leaf); the mover's is its negation
        signs_out[i] = -1 if pvl % 2 == 0 else 1
        if want_leaves:
            _replay(child, ws[WS_PV][0], pvl, leaves_out[i], tmp)
        nodes += ws[WS_STATS][0]
    return nodes


@njit(cache=True, parallel=True)
def pls_sweep_kernel(boards, pos_ptr, units, ev, budget, mw, evw, mode, flat, want_leaves):  # type: ignore[no-untyped-def]
    """:func:`search.tree.batch.sweep_kernel` through the probability-limited search.

    ``boards`` uint64[P, BOARD_WORDS]; ``pos_ptr`` int64[P + 1] the prefix sum of their legal
    move counts; ``units`` the positions' budget (budget units, :func:`root_budget`); ``ev``
    linear weights; ``budget`` nodes per child search; ``mw`` float64[N_MOVE_FEATURES] the move
    model, ``evw`` its evaluation weights; ``mode`` and ``flat`` as for :func:`pls_kernel`.
    Returns moves int32[M], scores int64[M] (eval units, mover's view), kinds int8[M], signs
    int8[M], leaves uint64[M or 0, BOARD_WORDS], nodes int64[P].
    """
    p_count = boards.shape[0]
    m_count = pos_ptr[p_count]
    moves, scores, kinds, signs, leaves, nodes = sweep_outputs(p_count, m_count, want_leaves)
    n_chunks = (p_count + CHUNK - 1) // CHUNK
    queue = new_queue()
    for _ in prange(n_chunks):
        c = take(queue)
        if c < n_chunks:
            evl, ws, es, hist, tt_keys, tt_moves = new_thread_search(ev)
            ps = new_pls_scratch()
            root_lps = np.zeros(MAX_MOVES, dtype=np.int64)
            buf, child, dummy, tmp = new_sweep_scratch()
            while c < n_chunks:
                for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
                    a, z = pos_ptr[p], pos_ptr[p + 1]
                    leaf_rows = leaves[a:z] if want_leaves else dummy
                    nodes[p] = _pls_sweep_position(ws, es, boards[p], units, evl, budget, mw, evw, ps, mode, flat,
                                                   root_lps, moves[a:z], scores[a:z], kinds[a:z], signs[a:z],
                                                   leaf_rows, want_leaves, buf, child, hist, tt_keys, tt_moves, tmp)
                c = take(queue)
    return moves, scores, kinds, signs, leaves, nodes
