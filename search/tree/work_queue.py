"""A shared counter that hands out work items to the threads of a parallel kernel, so that they
share the work as they go (dynamic scheduling) instead of each taking a fixed block of it.

numba splits a ``prange`` loop into one contiguous block of iterations per thread. Positions
cost very different numbers of nodes, and neighbouring positions (plies of one game) cost alike,
so one thread's block can hold much more work than another's, and that thread alone works at
the end (measured: ``docs/scaling.md``, "Small slider tables, shared chunks and a score cache").
Instead, each iteration of the ``prange`` loop takes items from a :func:`new_queue` until none
is left; whichever thread runs the first iteration of its block thus works to the end, and the
iterations after it find the queue empty::

    queue = new_queue()
    for _ in prange(n_items):
        c = take(queue)
        if c < n_items:
            ...  # the thread's own workspace, made once
            while c < n_items:
                ...  # item c
                c = take(queue)

(Looping over ``numba.get_num_threads()`` instead would make the kernel uncachable: numba
reads the thread count through a pointer fixed at run time.)

Which thread gets which item varies from run to run; a kernel's results must not depend on it
(each position searched on its own, caches that only save work).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import config, njit, types
from numba.extending import intrinsic, overload


@njit(cache=True)
def new_queue():  # type: ignore[no-untyped-def]
    """A queue of work items 0, 1, 2, ...: int64[1], the next item to hand out."""
    return np.zeros(1, dtype=np.int64)


@intrinsic
def _fetch_add(typingctx, counter):  # type: ignore[no-untyped-def]
    """Atomically add 1 to ``counter[0]`` (int64[1]); the value before."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ary = context.make_array(signature.args[0])(context, builder, value=args[0])
        one = context.get_constant(types.int64, 1)
        return builder.atomic_rmw("add", ary.data, one, "monotonic")

    return types.int64(counter), codegen


def take(queue: npt.NDArray[np.int64]) -> int:
    """The next work item of ``queue`` (:func:`new_queue`), each handed out once across all
    threads (an atomic fetch-and-add in compiled code). Items past the last one are handed out
    too: the caller stops at its number of items."""
    item = int(queue[0])
    queue[0] += 1
    return item


if not getattr(config, "DISABLE_JIT"):  # with the JIT off, prange runs serially and take() is Python

    @overload(take, inline="always")
    def _take(queue):  # type: ignore[no-untyped-def]
        return lambda queue: _fetch_add(queue)  # type: ignore[call-arg]
