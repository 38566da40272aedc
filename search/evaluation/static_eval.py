"""The evaluator seam: the one place where the search asks for a static score, and the hooks an
incremental evaluator needs. Every search kernel (:mod:`search.tree.alphabeta`,
:mod:`search.tree.bootstrap_tree`, the batch sweeps of :mod:`search.tree.batch`) calls only these.

An *evaluator argument* ``ev`` is the evaluator as a kernel receives it (one argument, whatever
the kind); its numba type says its kind, and numba compiles each kernel once per kind:

* the **linear** evaluator: ``int32[N_FEATURES]`` weights (:mod:`search.evaluation.feature_kernels`);
* the **network**: the tuple of :meth:`search.evaluation.network.QuantizedNetwork.kernel_args`
  (:mod:`search.evaluation.network_kernels`);
* the linear evaluator with an engine author's own **terms** (:mod:`search.params.terms`): the pair
  ``(w, tag)`` of the weights and the plug-in's :class:`search.evaluation.plugin_tag.PluginTag`,
  whose type names the plug-in's ``evaluate(b, w, scratch)``
  (:mod:`search.evaluation.terms_kernels`): a kernel compiled for a plug-in is cached as the
  others, under the plug-in's name and file digest.

Beside the search workspace, a kernel holds the *evaluator state* ``es`` of
:func:`new_eval_state`: ``None`` for the linear evaluator, so that its hooks receive no array
and compile to nothing (numba counts a reference to every array an inlined function receives,
an atomic operation per node) or, in a batch kernel (:func:`new_thread_eval_state`), its
tables ``(pawn_king, scores, psq_table, psq_stack)``
(:func:`search.evaluation.feature_kernels.new_pawn_king_table`, :func:`search.evaluation.eval_cache.new_eval_cache`,
and the material and piece-square sums per ply of :mod:`search.evaluation.material_pst`); for a network,
``(net, acc, hidden, boards)``: the network, its accumulator stack int16[STACK_PLIES, 2, H]
(one pair per ply), int32 scratch and the workspace's board stack. The hooks:

* :func:`eval_root`: a search starts at ``root`` (ply 0): refresh ``acc[0]`` (or the sums of
  ply 0);
* :func:`eval_move`: move ``m`` took the board at ``ply`` to the one at ``ply + 1``: update
  ``acc[ply + 1]`` from ``acc[ply]`` (or the sums; copy-make: going back to a ply needs
  nothing);
* :func:`eval_null`: a null move at ``ply`` (the playing search): ``acc[ply + 1]`` from ``acc[ply]``;
* :func:`static_score`: the static score of a board at ``ply`` in eval units, side to move's
  view;
* :func:`thread_evaluator`: a copy for one thread of a parallel kernel (the linear weights are
  copied, as shared arrays' reference counts are contended atomics; a network's arrays are
  read-only and shared).

Each function's Python body is the reference used when the JIT is disabled
(``NUMBA_DISABLE_JIT=1``); the ``@overload`` below it is what compiled kernels inline.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.extending import overload

from search.core.board import W_KEY
from search.evaluation.eval_cache import cached_score, new_eval_cache, store_score
from search.evaluation.feature_kernels import evaluate_kernel, evaluate_psq_kernel, new_pawn_king_table
from search.evaluation.material_pst import PSQ_EG, PSQ_MG, new_psq_stack, new_psq_table, psq_move, psq_root
from search.evaluation.network_kernels import (INFO_N_BUCKETS, NET_B1, NET_B2, NET_B3, NET_B4, NET_BUCKETS, NET_INFO,
                                    NET_LINEAR, NET_W1, NET_W2T, NET_W3T, NET_W4, STACK_PLIES, network_score,
                                    refresh_accumulators, score_rows, update_accumulators, update_rows)
from search.evaluation.plugin_tag import PluginTag, PluginTagType, tag_evaluator

#: positions in an engine author's evaluator argument ``(w, tag)``
TERMS_W, TERMS_TAG = 0, 1
#: positions in a network's evaluator state
ES_NET, ES_ACC, ES_HIDDEN, ES_BOARDS = range(4)
#: positions in the linear evaluator's state in a batch kernel
ES_PAWN_KING, ES_SCORES, ES_PSQ_TABLE, ES_PSQ_STACK = range(4)


def _is_terms(ev: Any) -> bool:
    """An engine author's terms: ``(w, tag)`` (:mod:`search.evaluation.plugin_tag`)."""
    return isinstance(ev, tuple) and len(ev) == 2 and isinstance(ev[TERMS_TAG], PluginTag)


def _is_network(ev: Any) -> bool:
    return isinstance(ev, tuple) and not _is_terms(ev)


def _is_network_state(es: Any) -> bool:
    """A network's evaluator state ``(net, acc, hidden, boards)``, not the linear evaluator's
    tables (whose first item is an array, not the network's tuple)."""
    return isinstance(es, tuple) and isinstance(es[ES_NET], tuple)


def _terms_type(ev: types.Type) -> bool:
    parts: tuple[Any, ...] = getattr(ev, "types", ()) if isinstance(ev, types.BaseTuple) else ()
    return len(parts) == 2 and isinstance(parts[TERMS_TAG], PluginTagType)


def _network_type(ev: types.Type) -> bool:
    return isinstance(ev, types.BaseTuple) and not _terms_type(ev)


def _linear_type(ev: types.Type) -> bool:
    return isinstance(ev, types.Array) and ev.ndim == 1


def _no_state(es: types.Type) -> bool:
    return isinstance(es, (types.NoneType, types.Omitted)) or es is None


def _table_state(es: types.Type) -> bool:
    """A linear evaluator's tables in a batch kernel (:func:`new_thread_eval_state`)."""
    parts: tuple[Any, ...] = getattr(es, "types", ()) if isinstance(es, types.BaseTuple) else ()
    return len(parts) == 4 and all(isinstance(t, types.Array) for t in parts)


def new_eval_state(ev: Any, boards: np.ndarray) -> Any:
    """The evaluator state of a search workspace whose board stack is ``boards``
    (uint64[STACK_PLIES, BOARD_WORDS]): ``None`` for the linear evaluator; ``(ev, acc, hidden,
    boards)`` for a network."""
    if _is_network(ev):
        return (ev, np.zeros((STACK_PLIES, 2, ev[NET_B1].shape[0]), dtype=np.int16),
                np.zeros(ev[NET_B2].shape[0] + ev[NET_B3].shape[0], dtype=np.int32), boards)
    return None


def new_thread_eval_state(ev: Any, boards: np.ndarray) -> Any:
    """The evaluator state of one thread of a batch kernel, whose weights stay the same for
    the whole call: :func:`new_eval_state`, except that the linear evaluator gets a pawn-king
    table, a score cache and its material and piece-square values with a stack of their sums
    per ply (:func:`search.evaluation.feature_kernels.new_pawn_king_table`,
    :func:`search.evaluation.eval_cache.new_eval_cache`, :mod:`search.evaluation.material_pst`; valid for one weight
    vector only, so never in a workspace that outlives the call)."""
    if isinstance(ev, np.ndarray):
        return new_pawn_king_table(), new_eval_cache(), new_psq_table(ev), new_psq_stack()
    return new_eval_state(ev, boards)


def kernel_evaluator(ev: Any) -> Any:
    """The evaluator argument a recursive kernel takes beside its evaluator state ``es``:
    ``None`` for a network, whose state already holds it (:func:`static_score` reads the
    network from ``es``), else ``ev``. A recursive kernel passes every argument at every call,
    each array as its fields (the network: 11 arrays, about 80 words): the playing search
    passes it once."""
    return None if _is_network(ev) else ev


def eval_root(es: Any, root: np.ndarray) -> None:
    """A search starts at ``root``: set the accumulators of ply 0 (network), the material and
    piece-square sums of ply 0 (linear, in a batch kernel) or nothing (linear)."""
    if _is_network_state(es):
        refresh_accumulators(root, es[ES_NET], es[ES_ACC][0])
    elif es is not None:
        psq_root(es[ES_PSQ_TABLE], es[ES_PSQ_STACK], root)


def eval_move(es: Any, ply: int, m: int) -> None:
    """Move ``m`` took the board at ``ply`` to the one at ``ply + 1``: set the accumulators of
    ``ply + 1`` from those of ``ply`` (network), the sums of ``ply + 1`` from those of ``ply``
    (linear, in a batch kernel) or nothing (linear)."""
    if _is_network_state(es):
        acc, boards = es[ES_ACC], es[ES_BOARDS]
        update_accumulators(acc[ply], acc[ply + 1], es[ES_NET], boards[ply], boards[ply + 1], m)
    elif es is not None:
        psq_move(es[ES_PSQ_TABLE], es[ES_PSQ_STACK], ply, m)


def eval_null(es: Any, ply: int) -> None:
    """A null move (the side to move passes, :func:`search.core.board.make_null_move`) took the
    board at ``ply`` to the one at ``ply + 1``: the accumulators of ``ply + 1`` are those of
    ``ply`` (each perspective is a colour's, so passing changes neither), or nothing (linear).
    The batch kernels' tables make no null move."""
    if _is_network_state(es):
        es[ES_ACC][ply + 1] = es[ES_ACC][ply]


def static_score(ev: Any, es: Any, ply: int, b: np.ndarray, scratch: np.ndarray) -> int:
    """Static score of board ``b`` at ``ply`` in eval units, side to move's view (``scratch``:
    int64[>= 2])."""
    if _is_network_state(es):
        return int(network_score(b, es[ES_ACC][ply], es[ES_NET], es[ES_HIDDEN], scratch))
    if _is_terms(ev):
        return int(ev[TERMS_TAG](b, ev[TERMS_W], scratch))
    if es is not None:
        return int(_table_score(ev, es, ply, b))
    return int(evaluate_kernel(b, ev, scratch))


def _table_score(ev: np.ndarray, es: Any, ply: int, b: np.ndarray) -> int:
    """:func:`static_score` with the linear evaluator's tables ``es`` (:func:`new_thread_eval_state`):
    the score cache's when it holds ``b``'s key, else computed with ply ``ply``'s material and
    piece-square sums and stored.

    The compiled form repeats these lines in its own body instead of calling a function: a call
    passed its arrays on the stack at every evaluation (slower than no cache:
    ``docs/scaling.md``), and numba's inlining of one trips numba's own scope check."""
    key = b[W_KEY]
    found, cached = cached_score(es[ES_SCORES], key)
    if found:
        return int(cached)
    stack = es[ES_PSQ_STACK]
    v = int(evaluate_psq_kernel(b, ev, es[ES_PAWN_KING], (stack[ply, PSQ_MG], stack[ply, PSQ_EG])))
    store_score(es[ES_SCORES], key, v)
    return v


def thread_evaluator(ev: Any) -> Any:
    """The evaluator argument one thread of a parallel kernel uses."""
    if _is_network(ev):
        return ev
    if _is_terms(ev):
        return (ev[TERMS_W].copy(), ev[TERMS_TAG])
    return ev.copy()


# The compiled forms: each picks its implementation by its arguments' types; the hooks are
# inlined into the search steps, so that the linear evaluator's compile to nothing.


@overload(new_eval_state)
def _new_eval_state(ev, boards):  # type: ignore[no-untyped-def]
    if _network_type(ev):
        def network_state(ev, boards):  # type: ignore[no-untyped-def]
            return (ev, np.zeros((STACK_PLIES, 2, ev[NET_B1].shape[0]), dtype=np.int16),
                    np.zeros(ev[NET_B2].shape[0] + ev[NET_B3].shape[0], dtype=np.int32), boards)
        return network_state
    if _linear_type(ev) or _terms_type(ev):
        return lambda ev, boards: None
    return None


@overload(new_thread_eval_state)
def _new_thread_eval_state(ev, boards):  # type: ignore[no-untyped-def]
    if _linear_type(ev):
        return lambda ev, boards: (new_pawn_king_table(), new_eval_cache(), new_psq_table(ev), new_psq_stack())
    return lambda ev, boards: new_eval_state(ev, boards)


@overload(eval_root, inline="always")
def _eval_root(es, root):  # type: ignore[no-untyped-def]
    if _no_state(es):
        return lambda es, root: None
    if _table_state(es):
        return lambda es, root: psq_root(es[ES_PSQ_TABLE], es[ES_PSQ_STACK], root)

    def network_root(es, root):  # type: ignore[no-untyped-def]
        refresh_accumulators(root, es[ES_NET], es[ES_ACC][0])
    return network_root


@overload(eval_move, inline="always")
def _eval_move(es, ply, m):  # type: ignore[no-untyped-def]
    if _no_state(es):
        return lambda es, ply, m: None
    if _table_state(es):
        return lambda es, ply, m: psq_move(es[ES_PSQ_TABLE], es[ES_PSQ_STACK], ply, m)

    def network_move(es, ply, m):  # type: ignore[no-untyped-def]
        # the network's arrays one by one, not its tuple (search.evaluation.network_kernels.update_rows)
        acc = es[ES_ACC]
        boards = es[ES_BOARDS]
        net = es[ES_NET]
        update_rows(acc[ply], acc[ply + 1], net[NET_W1], net[NET_B1], net[NET_BUCKETS],
                    net[NET_INFO][INFO_N_BUCKETS], boards[ply], boards[ply + 1], m)
    return network_move


@overload(eval_null, inline="always")
def _eval_null(es, ply):  # type: ignore[no-untyped-def]
    if _no_state(es):
        return lambda es, ply: None
    if _table_state(es):
        return None

    def network_null(es, ply):  # type: ignore[no-untyped-def]
        acc = es[ES_ACC]
        for p in range(acc.shape[1]):
            for j in range(acc.shape[2]):
                acc[ply + 1, p, j] = acc[ply, p, j]
    return network_null


@overload(static_score, inline="always")
def _static_score(ev, es, ply, b, scratch):  # type: ignore[no-untyped-def]
    if _no_state(es) and _terms_type(ev):
        evaluate = tag_evaluator(ev.types[TERMS_TAG])
        return lambda ev, es, ply, b, scratch: evaluate(b, ev[TERMS_W], scratch)
    if _no_state(es):
        return lambda ev, es, ply, b, scratch: evaluate_kernel(b, ev, scratch)
    if _table_state(es):
        def table_static(ev, es, ply, b, scratch):  # type: ignore[no-untyped-def]
            # _table_score, in this body (see there why)
            key = b[W_KEY]
            found, cached = cached_score(es[ES_SCORES], key)
            if found:
                return cached
            stack = es[ES_PSQ_STACK]
            v = evaluate_psq_kernel(b, ev, es[ES_PAWN_KING], (stack[ply, PSQ_MG], stack[ply, PSQ_EG]))
            store_score(es[ES_SCORES], key, v)
            return v
        return table_static

    def network_static(ev, es, ply, b, scratch):  # type: ignore[no-untyped-def]
        # network_score with the arrays one by one (search.evaluation.network_kernels.update_rows); a call,
        # not lines here: numba's inlining trips its own scope check on a local of this body
        net = es[ES_NET]
        return score_rows(b, es[ES_ACC][ply], net[NET_W2T], net[NET_B2], net[NET_W3T], net[NET_B3], net[NET_W4],
                          net[NET_B4], es[ES_HIDDEN], net[NET_INFO], net[NET_LINEAR], scratch)
    return network_static


@overload(thread_evaluator)
def _thread_evaluator(ev):  # type: ignore[no-untyped-def]
    if _network_type(ev):
        return lambda ev: ev
    if _terms_type(ev):
        return lambda ev: (ev[TERMS_W].copy(), ev[TERMS_TAG])
    if _linear_type(ev):
        return lambda ev: ev.copy()
    return None
