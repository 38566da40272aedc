"""The network evaluator's kernels (call them through :mod:`search.evaluation.network`): sparse
piece-square inputs, the accumulator (refreshed from a board, or updated from the parent's
on a move, as in NNUE), and the integer forward pass.

The exact arithmetic is specified in ``docs/network.md``; the C reference forward pass of
:mod:`tuner.export.formats` and the plain-numpy oracle of the tests implement the same. In short, with
``stm`` the side to move and ``acc[c]`` perspective ``c``'s accumulator (int16[H])::

    x   = clamp(acc[stm], 0, QA) ++ clamp(acc[1 - stm], 0, QA)            int32[2H]
    z2  = b2 + x @ W2T                      h2 = min(max(z2, 0) // QB, QA)  int32[H2]
    z3  = b3 + h2 @ W3T                     h3 = min(max(z3, 0) // QB, QA)  int32[H3]
    out = b4[o] + h3 @ W4[o]                                                int64
    net = floor(out * PHASE_MAX / (QA * QO))                                eval units

or, in the direct form (no hidden layers, ``H2 = H3 = 0``), a squared clipped ReLU::

    out = b4[o] QA + sum_j x_j^2 W4[o, j]       net = floor(out * PHASE_MAX / (QA^2 QO))

where ``o`` is the output bucket (:func:`output_bucket`): the output layer has one row per
bucket of the number of pieces on the board (``W4``: int32[O, K], ``b4``: int64[O]; O = 1 for a
network without output buckets).

plus, when the network carries one, the linear evaluator's ``w . phi`` (eval units, side to
move's view). Every division is of a non-negative number except the last, a floor division.

A network travels through the kernels as the tuple :data:`NET_*` (see
:meth:`search.evaluation.network.QuantizedNetwork.kernel_args`), read-only; the per-thread state is an
accumulator stack ``int16[MAX_PLY + 1, 2, H]`` (:func:`new_accumulators`), one row pair per ply.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.bits import ZERO, lsb, popcount
from search.core.board import FLAG_CASTLE, FLAG_EP, KING, NO_PIECE, PAWN, ROOK, W_OCC, W_STM, decode_move
from search.params.catalog import PHASE_MAX
from search.evaluation.feature_kernels import evaluate_kernel

#: activation scale: an accumulator entry or hidden activation of QA means 1.0
QA = 255
#: weight scale of the hidden layers (W2, W3): an integer weight of QB means 1.0
QB = 64
#: weight scale of the output layer (W4): an integer weight of QO means one centipawn per unit
QO = 64
#: inputs per king bucket: (own/their colour) x 6 piece types x 64 squares
PSQ_INPUTS = 768
#: plies of accumulator rows a search needs (``search.tree.alphabeta.MAX_PLY`` + 1)
STACK_PLIES = 65

# positions of the arrays in a network's kernel tuple
NET_W1, NET_B1, NET_W2T, NET_B2, NET_W3T, NET_B3, NET_W4, NET_B4, NET_BUCKETS, NET_LINEAR, NET_INFO = range(11)
#: entries of the ``info`` array: whether the linear part is used, number of king buckets
INFO_HAS_LINEAR, INFO_N_BUCKETS = 0, 1


@njit(cache=True, inline="always")
def output_bucket(pieces, n_outputs):  # type: ignore[no-untyped-def]
    """The output bucket of a board with ``pieces`` pieces (kings included) for a network of
    ``n_outputs`` buckets: ``(pieces - 2) * n_outputs // 32``, within ``[0, n_outputs - 1]``
    (8 buckets: 2-5 pieces in bucket 0, 6-9 in 1, ..., 30-32 in 7)."""
    o = (pieces - 2) * n_outputs // 32
    return min(max(o, 0), n_outputs - 1)


@njit(cache=True, inline="always")
def board_output_bucket(b, n_outputs):  # type: ignore[no-untyped-def]
    """:func:`output_bucket` of board ``b``."""
    if n_outputs == 1:
        return 0
    return output_bucket(popcount(b[W_OCC] | b[W_OCC + 1]), n_outputs)


@njit(cache=True, inline="always")
def input_index(persp, colour, ptype, sq, bucket):  # type: ignore[no-untyped-def]
    """Input of a piece (``colour``, ``ptype`` 0..5 on ``sq``) seen from perspective ``persp``
    with its king in ``bucket``: squares are flipped vertically for Black's perspective, and
    colours are "own" (0) or "their" (1)."""
    rel = 0 if colour == persp else 1
    s = sq if persp == 0 else sq ^ 56
    return ((bucket * 2 + rel) * 6 + ptype) * 64 + s


@njit(cache=True, inline="always")
def king_bucket(b, persp, buckets):  # type: ignore[no-untyped-def]
    """King bucket of perspective ``persp``: ``buckets[s]`` of its own king's square ``s``
    (flipped vertically for Black)."""
    ks = lsb(b[KING] & b[W_OCC + persp])
    return buckets[ks if persp == 0 else ks ^ 56]


@njit(cache=True)
def active_inputs(b, persp, buckets, out):  # type: ignore[no-untyped-def]
    """Write perspective ``persp``'s active inputs of ``b`` into ``out`` (int32[>= 32]); return
    their number (one per piece, in colour, type, square order)."""
    bucket = king_bucket(b, persp, buckets)
    n = 0
    for colour in range(2):
        occ = b[W_OCC + colour]
        for pt in range(6):
            bb = b[pt] & occ
            while bb != ZERO:
                sq = lsb(bb)
                bb &= bb - np.uint64(1)
                out[n] = input_index(persp, colour, pt, sq, bucket)
                n += 1
    return n


@njit(cache=True)
def refresh_rows(b, w1, b1, buckets, persp, out):  # type: ignore[no-untyped-def]
    """Write perspective ``persp``'s accumulator of board ``b`` into ``out[persp]`` (``out``:
    int16[2, H]): ``b1`` plus the ``w1`` rows of every piece's input."""
    rows = np.empty(32, dtype=np.int32)
    n = active_inputs(b, persp, buckets, rows)
    for j in range(b1.shape[0]):
        out[persp, j] = b1[j]
    for i in range(n):
        r = rows[i]
        for j in range(b1.shape[0]):
            out[persp, j] += w1[r, j]


@njit(cache=True)
def refresh_one(b, net, persp, out):  # type: ignore[no-untyped-def]
    """:func:`refresh_rows` with the arrays of the network's kernel tuple ``net``."""
    refresh_rows(b, net[NET_W1], net[NET_B1], net[NET_BUCKETS], persp, out)


@njit(cache=True)
def refresh_accumulators(b, net, out):  # type: ignore[no-untyped-def]
    """Both perspectives' accumulators of board ``b`` into ``out`` (int16[2, H])."""
    refresh_one(b, net, np.int64(0), out)  # typed: a literal perspective would compile refresh_one twice more
    refresh_one(b, net, np.int64(1), out)


@njit(cache=True)
def update_rows(parent, child, w1, b1, buckets, n_buckets, src, dst, m):  # type: ignore[no-untyped-def]
    """Write ``child`` (int16[2, H]), the accumulators of board ``dst`` = ``src`` with move
    ``m`` played, from ``parent``, those of ``src``: per perspective, the parent's row minus the
    ``w1`` rows of the inputs the move removes plus those it adds (at most two removed and two
    added: the moving piece, a captured piece, a castling rook). A king move that changes its
    own perspective's bucket (of ``n_buckets`` > 1) refreshes that row from ``dst`` instead.

    The search calls this with the network's arrays one by one, not its kernel tuple: a call
    that receives the tuple counts a reference to each of its eleven arrays (atomic operations)
    and cost about 200 ns a move more."""
    h = w1.shape[1]
    us = np.int64(src[W_STM])
    them = 1 - us
    frm, to, promo, flag, pt, cap = decode_move(m)
    newpt = pt if promo == 0 else promo
    capsq = -1
    if flag == FLAG_EP:
        capsq = to - 8 if us == 0 else to + 8
    elif cap != NO_PIECE:
        capsq = to
    rf = -1
    rt = -1
    if flag == FLAG_CASTLE:
        if to == frm + 2:
            rf, rt = frm + 3, frm + 1
        else:
            rf, rt = frm - 4, frm - 1
    for persp in range(2):
        if pt == KING and persp == us and n_buckets > 1:
            if king_bucket(src, persp, buckets) != king_bucket(dst, persp, buckets):
                refresh_rows(dst, w1, b1, buckets, persp, child)
                continue
        bucket = king_bucket(dst, persp, buckets)
        r_sub1 = input_index(persp, us, pt, frm, bucket)
        r_add1 = input_index(persp, us, newpt, to, bucket)
        if capsq >= 0:
            r_sub2 = input_index(persp, them, cap if flag != FLAG_EP else PAWN, capsq, bucket)
            for j in range(h):
                child[persp, j] = parent[persp, j] - w1[r_sub1, j] + w1[r_add1, j] - w1[r_sub2, j]
        elif rf >= 0:
            r_sub2 = input_index(persp, us, ROOK, rf, bucket)
            r_add2 = input_index(persp, us, ROOK, rt, bucket)
            for j in range(h):
                child[persp, j] = parent[persp, j] - w1[r_sub1, j] + w1[r_add1, j] - w1[r_sub2, j] + w1[r_add2, j]
        else:
            for j in range(h):
                child[persp, j] = parent[persp, j] - w1[r_sub1, j] + w1[r_add1, j]


@njit(cache=True)
def update_accumulators(parent, child, net, src, dst, m):  # type: ignore[no-untyped-def]
    """:func:`update_rows` with the arrays of the network's kernel tuple ``net``."""
    update_rows(parent, child, net[NET_W1], net[NET_B1], net[NET_BUCKETS], net[NET_INFO][INFO_N_BUCKETS],
                src, dst, m)


@njit(cache=True)
def forward_rows(acc, stm, o, w2t, b2, w3t, b3, w4, b4, hidden):  # type: ignore[no-untyped-def]
    """The network's part of the score (eval units, side to move ``stm``'s view) from the
    accumulators ``acc`` (int16[2, H]), output bucket ``o`` (:func:`board_output_bucket`) and the
    arrays of the layers after the first (``w4``: int32[O, K], ``b4``: int64[O]); ``hidden`` is
    int32 scratch of at least H2 + H3. Called with the arrays one by one for the reason
    :func:`update_rows` gives."""
    h = acc.shape[1]
    h2 = b2.shape[0]
    h3 = b3.shape[0]
    if h2 == 0:
        return forward_direct(acc, stm, o, w4, b4)
    z2 = hidden[:h2]
    z3 = hidden[h2:h2 + h3]
    for k in range(h2):
        z2[k] = b2[k]
    for half in range(2):
        persp = stm if half == 0 else 1 - stm
        base = half * h
        for j in range(h):
            if acc[persp, j] > 0:
                a1 = min(np.int32(acc[persp, j]), QA)
                for k in range(h2):
                    z2[k] += a1 * w2t[base + j, k]
    for k in range(h3):
        z3[k] = b3[k]
    for j in range(h2):
        if z2[j] > 0:
            a2 = min(z2[j] // QB, QA)
            for k in range(h3):
                z3[k] += a2 * w3t[j, k]
    out = np.int64(b4[o])
    for j in range(h3):
        if z3[j] > 0:
            a3 = min(z3[j] // QB, QA)
            out += np.int64(a3) * np.int64(w4[o, j])
    return (out * PHASE_MAX) // (QA * QO)


@njit(cache=True)
def forward_direct(acc, stm, o, w4, b4):  # type: ignore[no-untyped-def]
    """The direct form's part of the score (no hidden layers; eval units, side to move ``stm``'s
    view) with output bucket ``o``: ``out = b4[o] QA + sum_j x_j^2 W4[o, j]`` over ``x`` = the
    clamped accumulators (side to move first), ``floor(out * PHASE_MAX / (QA^2 QO))``. The loops
    run over one-dimensional rows (``acc[stm]``, ``w4[o, :h]``), whose unit strides numba
    vectorizes (measured in ``docs/search.md``)."""
    h = acc.shape[1]
    s = np.int64(0)
    x = acc[stm]
    w = w4[o, :h]
    for j in range(h):
        a = np.int64(min(max(x[j], 0), QA))
        s += a * a * np.int64(w[j])
    x = acc[1 - stm]
    w = w4[o, h:]
    for j in range(h):
        a = np.int64(min(max(x[j], 0), QA))
        s += a * a * np.int64(w[j])
    return ((np.int64(b4[o]) * QA + s) * PHASE_MAX) // (QA * QA * QO)


@njit(cache=True)
def forward(b, acc, net, hidden):  # type: ignore[no-untyped-def]
    """:func:`forward_rows` of board ``b`` (its side to move and output bucket) with the arrays
    of the network's kernel tuple ``net``."""
    w4 = net[NET_W4]
    return forward_rows(acc, np.int64(b[W_STM]), board_output_bucket(b, w4.shape[0]), net[NET_W2T], net[NET_B2],
                        net[NET_W3T], net[NET_B3], w4, net[NET_B4], hidden)


# many parameters: hot (every node), the network's arrays one by one, not its tuple (update_rows says why)
@njit(cache=True)
def score_rows(b, acc, w2t, b2, w3t, b3, w4, b4, hidden, info, linear, scratch):  # type: ignore[no-untyped-def]
    """:func:`network_score` with the network's arrays one by one (:func:`update_rows` says why):
    the network's part from the accumulators ``acc`` plus, when ``info`` says the network has
    one, the linear part with weights ``linear`` (eval units, side to move's view)."""
    v = forward_rows(acc, np.int64(b[W_STM]), board_output_bucket(b, w4.shape[0]), w2t, b2, w3t, b3, w4, b4, hidden)
    if info[INFO_HAS_LINEAR] != 0:
        v += evaluate_kernel(b, linear, scratch)
    return v


@njit(cache=True)
def network_score(b, acc, net, hidden, scratch):  # type: ignore[no-untyped-def]
    """The whole score of board ``b`` with accumulators ``acc`` (int16[2, H]): the network's
    part plus the linear part (eval units, side to move's view)."""
    return score_rows(b, acc, net[NET_W2T], net[NET_B2], net[NET_W3T], net[NET_B3], net[NET_W4], net[NET_B4],
                      hidden, net[NET_INFO], net[NET_LINEAR], scratch)


@njit(cache=True)
def new_accumulators(net):  # type: ignore[no-untyped-def]
    """A per-thread accumulator stack int16[STACK_PLIES, 2, H] and int32 hidden scratch."""
    h = net[NET_B1].shape[0]
    return (np.zeros((STACK_PLIES, 2, h), dtype=np.int16),
            np.zeros(net[NET_B2].shape[0] + net[NET_B3].shape[0], dtype=np.int32))


@njit(cache=True)
def network_evaluate_batch_kernel(boards, net):  # type: ignore[no-untyped-def]
    """Scores in eval units (side to move's view) of ``boards`` (uint64[n, BOARD_WORDS]) from
    fresh accumulators: int64[n]."""
    n = boards.shape[0]
    stack, hidden = new_accumulators(net)
    scratch = np.zeros(2, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for p in range(n):
        refresh_accumulators(boards[p], net, stack[0])
        out[p] = network_score(boards[p], stack[0], net, hidden, scratch)
    return out


@njit(cache=True)
def network_parts_batch_kernel(boards, net):  # type: ignore[no-untyped-def]
    """The network's part alone (no linear part) of each board's score, int64[n] eval units."""
    n = boards.shape[0]
    stack, hidden = new_accumulators(net)
    out = np.zeros(n, dtype=np.int64)
    for p in range(n):
        refresh_accumulators(boards[p], net, stack[0])
        out[p] = forward(boards[p], stack[0], net, hidden)
    return out


@njit(cache=True)
def accumulators_batch_kernel(boards, net):  # type: ignore[no-untyped-def]
    """Fresh accumulators of ``boards``: int16[n, 2, H]."""
    n = boards.shape[0]
    out = np.zeros((n, 2, net[NET_B1].shape[0]), dtype=np.int16)
    for p in range(n):
        refresh_accumulators(boards[p], net, out[p])
    return out
