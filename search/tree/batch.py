"""Batched searches over many positions in parallel (``prange`` over chunks of positions).

Every kernel takes plain arrays and returns flat arrays. The search kernels' threads take chunks
of positions from a shared queue as they go (:mod:`search.tree.work_queue`), each thread with one
search workspace for all of its chunks. Results do not depend on the number of threads, nor on
which thread searched which chunk.

* :func:`search_batch_kernel`: one search per position (score, PV, PV-leaf kind and board).
* :func:`sweep_kernel`: for every legal move ``m`` of every position ``p``, the search value
  ``s(p.m)`` from the mover's view, its PV leaf and the sign with which the leaf's features
  enter ``s`` (MMTO needs all of them; the move-match of a genetic algorithm the best ones).
* :func:`match_kernel`: move-match of many weight vectors on many positions at once.

"Depth" is counted from the position whose moves are compared: a sweep at depth 1 searches
each child ``p.m`` with quiescence only (1 ply + quiescence), at depth 2 one more full ply.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from search.tree.alphabeta import (MAX_PLY, STAT_BUDGET_HIT, STAT_NODES, WS_BOARDS, WS_INTS, WS_PV, WS_STATS, _KIND,
                                   _PVLEN, new_workspace, search_kernel, search_window_kernel)
from search.core.board import BOARD_WORDS, W_KEY, make_move, move_uci_key
from search.evaluation.feature_kernels import features_kernel, new_feature_buffers
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.evaluation.static_eval import new_thread_eval_state, thread_evaluator
from search.tree.work_queue import new_queue, take

#: positions per parallel work item
CHUNK = 16


@njit(cache=True, inline="always")
def new_thread_search(ev):  # type: ignore[no-untyped-def]
    """What one thread of a batch search kernel sets up once for all its chunks: ``(evl, ws,
    es, hist, tt_keys, tt_moves)``, its copy of the evaluator argument ``ev``
    (:func:`search.evaluation.static_eval.thread_evaluator`), a search workspace, the evaluator state for
    ``evl`` (:func:`search.evaluation.static_eval.new_thread_eval_state`), a one-key game history
    (uint64[1]) and an empty move-ordering table.

    Inlined into the kernel, never compiled on its own: the kernel is cached once per evaluator
    kind, an engine author's terms under their tag (:mod:`search.evaluation.plugin_tag`)."""
    evl = thread_evaluator(ev)
    ws = new_workspace()
    es = new_thread_eval_state(evl, ws[WS_BOARDS])
    hist = np.zeros(1, dtype=np.uint64)
    tt_keys = np.zeros(0, dtype=np.uint64)
    tt_moves = np.zeros(0, dtype=np.int32)
    return evl, ws, es, hist, tt_keys, tt_moves


@njit(cache=True)
def new_sweep_scratch():  # type: ignore[no-untyped-def]
    """One thread's scratch for sweeping positions move by move: ``(buf, child, dummy, tmp)``,
    the root's moves int32[MAX_MOVES], the child board, a one-row stand-in for the leaf rows
    when leaves are not kept, and :func:`_replay`'s uint64[2, BOARD_WORDS]."""
    return (np.zeros(MAX_MOVES, dtype=np.int32), np.zeros(BOARD_WORDS, dtype=np.uint64),
            np.zeros((1, BOARD_WORDS), dtype=np.uint64), np.zeros((2, BOARD_WORDS), dtype=np.uint64))


@njit(cache=True)
def _replay(root, pv, n, out, tmp):  # type: ignore[no-untyped-def]
    """``out`` = ``root`` with the first ``n`` moves of ``pv`` played; ``tmp`` is
    uint64[2, BOARD_WORDS] scratch (no allocation: a sweep replays one PV per row, and the
    threads of a parallel kernel would contend for the allocator)."""
    for k in range(BOARD_WORDS):
        tmp[0, k] = root[k]
    cur = 0
    for i in range(n):
        make_move(tmp[cur], tmp[1 - cur], pv[i])
        cur = 1 - cur
    for k in range(BOARD_WORDS):
        out[k] = tmp[cur, k]


@njit(cache=True, parallel=True)
def search_batch_kernel(boards, depth, ev, budget):  # type: ignore[no-untyped-def]
    """Search each of ``boards`` (uint64[P, BOARD_WORDS]) to ``depth`` + quiescence with the
    evaluator argument ``ev`` (:mod:`search.evaluation.static_eval`).

    Returns scores int64[P] (eval units, side to move's view), pv int32[P, MAX_PLY],
    pv_len int64[P], kinds int8[P], leaves uint64[P, BOARD_WORDS], nodes int64[P],
    budget_hit bool[P].
    """
    p_count = boards.shape[0]
    scores = np.zeros(p_count, dtype=np.int64)
    pvs = np.zeros((p_count, MAX_PLY), dtype=np.int32)
    pv_len = np.zeros(p_count, dtype=np.int64)
    kinds = np.zeros(p_count, dtype=np.int8)
    leaves = np.zeros((p_count, BOARD_WORDS), dtype=np.uint64)
    nodes = np.zeros(p_count, dtype=np.int64)
    budget_hit = np.zeros(p_count, dtype=np.bool_)
    n_chunks = (p_count + CHUNK - 1) // CHUNK
    queue = new_queue()
    for _ in prange(n_chunks):
        c = take(queue)
        if c < n_chunks:
            evl, ws, es, hist, tt_keys, tt_moves = new_thread_search(ev)
            tmp = np.zeros((2, BOARD_WORDS), dtype=np.uint64)
            while c < n_chunks:
                for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
                    scores[p] = search_kernel(ws, es, boards[p], depth, evl, budget, hist, np.int64(0), tt_keys,
                                              tt_moves)
                    ints = ws[WS_INTS]
                    n = ints[0, _PVLEN]
                    pv_len[p] = n
                    kinds[p] = ints[0, _KIND]
                    for k in range(n):
                        pvs[p, k] = ws[WS_PV][0, k]
                    _replay(boards[p], pvs[p], n, leaves[p], tmp)
                    nodes[p] = ws[WS_STATS][STAT_NODES]
                    budget_hit[p] = ws[WS_STATS][STAT_BUDGET_HIT] != 0
                c = take(queue)
    return scores, pvs, pv_len, kinds, leaves, nodes, budget_hit


@njit(cache=True, parallel=True)
def count_moves_kernel(boards):  # type: ignore[no-untyped-def]
    """Number of legal moves of each board, int64[P]."""
    p_count = boards.shape[0]
    out = np.zeros(p_count, dtype=np.int64)
    for c in prange((p_count + CHUNK - 1) // CHUNK):
        buf = np.zeros(MAX_MOVES, dtype=np.int32)
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            out[p] = generate_moves(boards[p], buf, ALL_MOVES)
    return out


# many parameters: one position's search arguments, its output rows and the thread's scratch; a numba kernel takes
# arrays and scalars (no dataclass in nopython mode)
@njit(cache=True)
def _sweep_position(  # type: ignore[no-untyped-def]
        ws, es, board, depth, ev, budget, moves_out, scores_out, kinds_out, signs_out, leaves_out, want_leaves, buf,
        child, hist, tt_keys, tt_moves, tmp):
    """Search every legal move of ``board``; write one row per move; return (moves, nodes).
    ``tt_keys``, ``tt_moves``: the (empty) move-ordering table; ``tmp``: :func:`_replay`'s scratch."""
    n = generate_moves(board, buf, ALL_MOVES)
    hist[0] = board[W_KEY]
    nodes = 0
    for i in range(n):
        m = buf[i]
        make_move(board, child, m)
        v = search_kernel(ws, es, child, depth - 1, ev, budget, hist, np.int64(1), tt_keys, tt_moves)
        ints = ws[WS_INTS]
        pvl = ints[0, _PVLEN]
        moves_out[i] = m
        scores_out[i] = -v
        kinds_out[i] = ints[0, _KIND]
        # the child's score is (-1)**pvl * eval(leaf); the mover's is its negation
        signs_out[i] = -1 if pvl % 2 == 0 else 1
        if want_leaves:
            _replay(child, ws[WS_PV][0], pvl, leaves_out[i], tmp)
        nodes += ws[WS_STATS][STAT_NODES]
    return n, nodes


@njit(cache=True)
def sweep_outputs(p_count, m_count, want_leaves):  # type: ignore[no-untyped-def]
    """A sweep's zeroed outputs for ``p_count`` positions and ``m_count`` rows: moves int32[M],
    scores int64[M], kinds int8[M], signs int8[M], leaves uint64[M or 0, BOARD_WORDS] (rows only
    when ``want_leaves``), nodes int64[P]."""
    moves = np.zeros(m_count, dtype=np.int32)
    scores = np.zeros(m_count, dtype=np.int64)
    kinds = np.zeros(m_count, dtype=np.int8)
    signs = np.zeros(m_count, dtype=np.int8)
    leaves = np.zeros((m_count if want_leaves else 0, BOARD_WORDS), dtype=np.uint64)
    nodes = np.zeros(p_count, dtype=np.int64)
    return moves, scores, kinds, signs, leaves, nodes


@njit(cache=True, parallel=True)
def sweep_kernel(boards, pos_ptr, depth, ev, budget, want_leaves):  # type: ignore[no-untyped-def]
    """Search every legal move of every board with the evaluator argument ``ev``.

    ``pos_ptr`` (int64[P + 1]) is the prefix sum of the legal move counts
    (:func:`count_moves_kernel`); the rows of position ``p`` are ``pos_ptr[p]:pos_ptr[p+1]``.
    Returns moves int32[M], scores int64[M] (eval units, mover's view), kinds int8[M],
    signs int8[M], leaves uint64[M or 0, BOARD_WORDS], nodes int64[P].
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
            buf, child, dummy, tmp = new_sweep_scratch()
            while c < n_chunks:
                for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
                    a, z = pos_ptr[p], pos_ptr[p + 1]
                    leaf_rows = leaves[a:z] if want_leaves else dummy
                    _, nodes[p] = _sweep_position(ws, es, boards[p], depth, evl, budget, moves[a:z], scores[a:z],
                                                  kinds[a:z], signs[a:z], leaf_rows, want_leaves, buf, child, hist,
                                                  tt_keys, tt_moves, tmp)
                c = take(queue)
    return moves, scores, kinds, signs, leaves, nodes


@njit(cache=True)
def played_credit(scores, played, k):  # type: ignore[no-untyped-def]
    """Top-``k`` credit of row ``played`` among one position's ``scores`` (int64[n], mover's
    view): with ``higher`` the rows scored strictly better and ``equal`` the rows scored the
    same (itself included), ``clip((k - higher) / equal, 0, 1)``, the chance that the played
    move is among the first ``k`` when ties are broken at random. For ``k = 1`` that is 1/m when
    it is one of m equally best moves, else 0: the move-match of the GA's fitness and of every
    move-match figure (the one definition; ``played < 0``: 0)."""
    if played < 0:
        return 0.0
    sp = scores[played]
    higher = 0
    equal = 0
    for i in range(len(scores)):
        if scores[i] > sp:
            higher += 1
        elif scores[i] == sp:
            equal += 1
    c = (k - higher) / equal
    return min(max(c, 0.0), 1.0)


@njit(cache=True, parallel=True)
def credit_kernel(pos_ptr, played_rows, scores, k):  # type: ignore[no-untyped-def]
    """:func:`played_credit` of every position of a sweep (float64[P]); ``played_rows`` are
    global row numbers (int64[P])."""
    p_count = pos_ptr.shape[0] - 1
    out = np.zeros(p_count, dtype=np.float64)
    for p in prange(p_count):
        a = pos_ptr[p]
        out[p] = played_credit(scores[a:pos_ptr[p + 1]], played_rows[p] - a, k)
    return out


@njit(cache=True)
def _match_position(ws, es, board, depth, w, budget, played_key, buf, child, hist):  # type: ignore[no-untyped-def]
    """:func:`played_credit` with ``k = 1`` of the legal move of ``board`` whose
    :func:`move_uci_key` is ``played_key`` in a sweep at ``depth``, found with fewer nodes: the
    played move is searched with the full window (its score ``sd``), every other move with the
    window (sd - 1, sd + 1) around it, which tells better, equal and worse apart exactly
    (fail-soft bounds, :func:`search.tree.alphabeta.search_window_kernel`); the first better move
    ends the position (credit 0). The same credit as a full sweep's (each child search is
    independent, its budget counted per search) unless a search runs out of node budget.
    ``es``: the evaluator state for ``w`` (:func:`search.evaluation.static_eval.new_thread_eval_state`)."""
    n = generate_moves(board, buf, ALL_MOVES)
    hist[0] = board[W_KEY]
    tt_keys = np.zeros(0, dtype=np.uint64)
    tt_moves = np.zeros(0, dtype=np.int32)
    row = -1
    for i in range(n):
        if move_uci_key(buf[i]) == played_key:
            row = i
    if row < 0:
        return 0.0
    make_move(board, child, buf[row])
    sd = -search_kernel(ws, es, child, depth - 1, w, budget, hist, np.int64(1), tt_keys, tt_moves)
    equal = 1
    for i in range(n):
        if i == row:
            continue
        make_move(board, child, buf[i])
        # the child's view: the mover's score s = -v is above sd iff v < -sd
        v = search_window_kernel(ws, es, child, depth - 1, w, budget, hist, np.int64(1), tt_keys, tt_moves, -sd - 1, -sd + 1)
        if v <= -sd - 1:
            return 0.0
        if v < -sd + 1:
            equal += 1
    return 1.0 / equal


@njit(cache=True, parallel=True)
def match_kernel(boards, played, weights, depth, budget):  # type: ignore[no-untyped-def]
    """Move-match of each weight vector (rows of ``weights``, int32[I, N_FEATURES]) on each
    position: float64[I, P], 1/k when the played move (packed, int32[P]) is among the k
    best moves of the sweep at ``depth``, else 0 (:func:`_match_position`). The threads share
    the (individual, chunk) pairs as they go (:mod:`search.tree.work_queue`)."""
    p_count = boards.shape[0]
    i_count = weights.shape[0]
    out = np.zeros((i_count, p_count), dtype=np.float64)
    n_chunks = (p_count + CHUNK - 1) // CHUNK
    n_jobs = i_count * n_chunks
    queue = new_queue()
    for _ in prange(n_jobs):
        job = take(queue)
        if job < n_jobs:
            ws = new_workspace()
            buf = np.zeros(MAX_MOVES, dtype=np.int32)
            child = np.zeros(BOARD_WORDS, dtype=np.uint64)
            hist = np.zeros(1, dtype=np.uint64)
            ind = job // n_chunks
            w = weights[ind].copy()  # thread-private (see sweep_kernel)
            es = new_thread_eval_state(w, ws[WS_BOARDS])  # caches for one weight vector
            while job < n_jobs:
                if job // n_chunks != ind:  # jobs run individual by individual: rarely a new one
                    ind = job // n_chunks
                    w = weights[ind].copy()
                    es = new_thread_eval_state(w, ws[WS_BOARDS])
                c = job % n_chunks
                for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
                    out[ind, p] = _match_position(ws, es, boards[p], depth, w, budget, move_uci_key(played[p]), buf,
                                                  child, hist)
                job = take(queue)
    return out


@njit(cache=True, parallel=True)
def full_match_kernel(boards, played, weights, depth, budget):  # type: ignore[no-untyped-def]
    """:func:`match_kernel` from full sweeps (every move searched with the full window): the
    reference its tests compare with."""
    p_count = boards.shape[0]
    i_count = weights.shape[0]
    out = np.zeros((i_count, p_count), dtype=np.float64)
    n_chunks = (p_count + CHUNK - 1) // CHUNK
    for job in prange(i_count * n_chunks):
        ind = job // n_chunks
        c = job % n_chunks
        w = weights[ind].copy()  # thread-private (see sweep_kernel)
        ws = new_workspace()
        buf = np.zeros(MAX_MOVES, dtype=np.int32)
        child = np.zeros(BOARD_WORDS, dtype=np.uint64)
        hist = np.zeros(1, dtype=np.uint64)
        moves = np.zeros(MAX_MOVES, dtype=np.int32)
        scores = np.zeros(MAX_MOVES, dtype=np.int64)
        kinds = np.zeros(MAX_MOVES, dtype=np.int8)
        signs = np.zeros(MAX_MOVES, dtype=np.int8)
        dummy = np.zeros((1, BOARD_WORDS), dtype=np.uint64)
        tt_keys = np.zeros(0, dtype=np.uint64)
        tt_moves = np.zeros(0, dtype=np.int32)
        tmp = np.zeros((2, BOARD_WORDS), dtype=np.uint64)
        es = new_thread_eval_state(w, ws[WS_BOARDS])
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            n, _ = _sweep_position(ws, es, boards[p], depth, w, budget, moves, scores, kinds, signs, dummy,
                                   False, buf, child, hist, tt_keys, tt_moves, tmp)
            row = -1
            for i in range(n):
                if move_uci_key(moves[i]) == move_uci_key(played[p]):
                    row = i
            out[ind, p] = played_credit(scores[:n], row, 1)
    return out


@njit(cache=True, parallel=True)
def signed_features_kernel(boards, signs):  # type: ignore[no-untyped-def]
    """CSR matrix of ``signs[r] * phi(boards[r])`` for uint64[R, BOARD_WORDS] boards and int8[R]
    signs (a row whose sign is 0 is left empty).

    Two parallel passes over chunks of rows (count, then fill after a prefix sum), so the
    result does not depend on the number of threads. Returns ``(indptr int64[R + 1],
    indices int16[nnz], values int16[nnz])``: indices are below N_FEATURES (< 2**15) and values
    are net counts times the phase (a net count is at most 128, the attack or defence pairs
    of one side's 16 pieces, so |value| <= 128 * PHASE_MAX), so 16 bits hold both.
    """
    r_count = boards.shape[0]
    counts = np.zeros(r_count, dtype=np.int64)
    n_chunks = (r_count + 4 * CHUNK - 1) // (4 * CHUNK)
    for c in prange(n_chunks):
        st, idx, val = new_feature_buffers()
        for r in range(c * 4 * CHUNK, min((c + 1) * 4 * CHUNK, r_count)):
            if signs[r] != 0:
                counts[r] = features_kernel(boards[r], st, idx, val)
    indptr = np.zeros(r_count + 1, dtype=np.int64)
    for r in range(r_count):
        indptr[r + 1] = indptr[r] + counts[r]
    indices = np.zeros(indptr[r_count], dtype=np.int16)
    values = np.zeros(indptr[r_count], dtype=np.int16)
    for c in prange(n_chunks):
        st, idx, val = new_feature_buffers()
        for r in range(c * 4 * CHUNK, min((c + 1) * 4 * CHUNK, r_count)):
            if signs[r] != 0:
                k = features_kernel(boards[r], st, idx, val)
                a = indptr[r]
                s = np.int32(signs[r])
                for j in range(k):
                    indices[a + j] = idx[j]
                    values[a + j] = val[j] * s
    return indptr, indices, values


@njit(cache=True, parallel=True)
def move_index_kernel(boards, keys):  # type: ignore[no-untyped-def]
    """For each board, the index (in :func:`generate_moves` order, the order of a sweep's rows)
    of its legal move whose from/to/promotion equal ``keys[p]`` (int32, see
    :func:`search.core.board.move_uci_key`), or -1 when no legal move matches. int64[P]."""
    p_count = boards.shape[0]
    out = np.full(p_count, -1, dtype=np.int64)
    for c in prange((p_count + CHUNK - 1) // CHUNK):
        buf = np.zeros(MAX_MOVES, dtype=np.int32)
        for p in range(c * CHUNK, min((c + 1) * CHUNK, p_count)):
            n = generate_moves(boards[p], buf, ALL_MOVES)
            for i in range(n):
                if move_uci_key(buf[i]) == keys[p]:
                    out[p] = i
                    break
    return out
