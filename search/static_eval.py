"""The evaluator seam: the one place where the search asks for a static score, and the hooks an
incremental evaluator needs. Every search kernel (:mod:`search.alphabeta`,
:mod:`search.bootstrap_tree`, the batch sweeps of :mod:`search.batch`) calls only these.

An *evaluator argument* ``ev`` is what a kernel receives where the linear evaluator's weights
used to go; its numba type says its kind, and numba compiles each kernel once per kind, so
the linear path pays nothing for the network's hooks (they compile to nothing):

* the **linear** evaluator: ``int32[N_FEATURES]`` weights (:mod:`search.feature_kernels`);
* the **network**: the tuple of :meth:`search.network.QuantizedNetwork.kernel_args`
  (:mod:`search.network_kernels`).

The per-thread evaluator state, ``acc`` (int16[STACK_PLIES, 2, H], one accumulator pair per
ply) and ``hidden`` (int32 scratch), comes from :func:`new_eval_state` and lives in the search
workspace; for the linear evaluator both are empty. The hooks:

* :func:`eval_root`: a search starts at ``root`` (ply 0): refresh ``acc[0]``;
* :func:`eval_move`: move ``m`` took ``src`` (ply ``ply``) to ``dst`` (ply ``ply + 1``): update
  ``acc[ply + 1]`` from ``acc[ply]`` (copy-make: going back to a ply needs nothing);
* :func:`static_score`: the static score of the board at ``ply`` in eval units, side to move's
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

from search.feature_kernels import evaluate_kernel
from search.network_kernels import (NET_B1, NET_B2, NET_B3, STACK_PLIES, network_score, refresh_accumulators,
                                    update_accumulators)


def _is_network(ev: Any) -> bool:
    return isinstance(ev, tuple)


def _network_type(ev: types.Type) -> bool:
    return isinstance(ev, types.BaseTuple)


def _linear_type(ev: types.Type) -> bool:
    return isinstance(ev, types.Array) and ev.ndim == 1


def workspace_kind(ev: Any) -> tuple[int, ...]:
    """What a workspace made for ``ev`` fits: ``(0,)`` for the linear evaluator, ``(1, H, H2 +
    H3)`` for a network (a workspace serves any evaluator argument of the same kind)."""
    if _is_network(ev):
        return 1, int(ev[NET_B1].shape[0]), int(ev[NET_B2].shape[0] + ev[NET_B3].shape[0])
    return (0,)


def new_eval_state(ev: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-thread state ``(acc, hidden)``: int16[STACK_PLIES, 2, H] and int32[H2 + H3] for a
    network; empty arrays of the same types for the linear evaluator."""
    if _is_network(ev):
        return (np.zeros((STACK_PLIES, 2, ev[NET_B1].shape[0]), dtype=np.int16),
                np.zeros(ev[NET_B2].shape[0] + ev[NET_B3].shape[0], dtype=np.int32))
    return np.zeros((0, 2, 0), dtype=np.int16), np.zeros(0, dtype=np.int32)


def eval_root(ev: Any, acc: np.ndarray, root: np.ndarray) -> None:
    """A search starts at ``root``: set ``acc[0]`` (network) or nothing (linear)."""
    if _is_network(ev):
        refresh_accumulators(root, ev, acc[0])


def eval_move(ev: Any, acc: np.ndarray, ply: int, src: np.ndarray, dst: np.ndarray, m: int) -> None:
    """Move ``m`` took ``src`` at ``ply`` to ``dst``: set ``acc[ply + 1]`` (network) or nothing."""
    if _is_network(ev):
        update_accumulators(acc[ply], acc[ply + 1], ev, src, dst, m)


def static_score(ev: Any, acc: np.ndarray, hidden: np.ndarray, ply: int, b: np.ndarray,
                 scratch: np.ndarray) -> int:
    """Static score of board ``b`` at ``ply`` in eval units, side to move's view (``scratch``:
    int64[>= 2])."""
    if _is_network(ev):
        return int(network_score(b, acc[ply], ev, hidden, scratch))
    return int(evaluate_kernel(b, ev, scratch))


def thread_evaluator(ev: Any) -> Any:
    """The evaluator argument one thread of a parallel kernel uses."""
    if _is_network(ev):
        return ev
    return ev.copy()


@overload(new_eval_state)
def _new_eval_state(ev):  # type: ignore[no-untyped-def]
    if _network_type(ev):
        def network_state(ev):  # type: ignore[no-untyped-def]
            return (np.zeros((STACK_PLIES, 2, ev[NET_B1].shape[0]), dtype=np.int16),
                    np.zeros(ev[NET_B2].shape[0] + ev[NET_B3].shape[0], dtype=np.int32))
        return network_state
    if _linear_type(ev):
        def linear_state(ev):  # type: ignore[no-untyped-def]
            return np.zeros((0, 2, 0), dtype=np.int16), np.zeros(0, dtype=np.int32)
        return linear_state
    return None


@overload(eval_root)
def _eval_root(ev, acc, root):  # type: ignore[no-untyped-def]
    if _network_type(ev):
        def network_root(ev, acc, root):  # type: ignore[no-untyped-def]
            refresh_accumulators(root, ev, acc[0])
        return network_root
    if _linear_type(ev):
        def linear_root(ev, acc, root):  # type: ignore[no-untyped-def]
            pass
        return linear_root
    return None


@overload(eval_move)
def _eval_move(ev, acc, ply, src, dst, m):  # type: ignore[no-untyped-def]
    if _network_type(ev):
        def network_move(ev, acc, ply, src, dst, m):  # type: ignore[no-untyped-def]
            update_accumulators(acc[ply], acc[ply + 1], ev, src, dst, m)
        return network_move
    if _linear_type(ev):
        def linear_move(ev, acc, ply, src, dst, m):  # type: ignore[no-untyped-def]
            pass
        return linear_move
    return None


@overload(static_score)
def _static_score(ev, acc, hidden, ply, b, scratch):  # type: ignore[no-untyped-def]
    if _network_type(ev):
        def network_static(ev, acc, hidden, ply, b, scratch):  # type: ignore[no-untyped-def]
            return network_score(b, acc[ply], ev, hidden, scratch)
        return network_static
    if _linear_type(ev):
        def linear_static(ev, acc, hidden, ply, b, scratch):  # type: ignore[no-untyped-def]
            return evaluate_kernel(b, ev, scratch)
        return linear_static
    return None


@overload(thread_evaluator)
def _thread_evaluator(ev):  # type: ignore[no-untyped-def]
    if _network_type(ev):
        return lambda ev: ev
    if _linear_type(ev):
        return lambda ev: ev.copy()
    return None
