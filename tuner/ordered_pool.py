"""Worker processes whose results come back in the order the work went out: the pool of
``tuner ingest`` and ``tuner merge``, so that what they write does not depend on ``--workers``.

:func:`ordered_map` runs ``fn`` on each item of a stream in a process pool (or in this process,
for one worker), keeps at most two jobs a worker in flight (memory stays flat however long the
stream) and yields each item with its result, in the stream's order. Workers are forked where the platform
can (they start at once, with the parent's modules and kernels loaded) and end with the parent
(:func:`die_with_parent`). A job's function must not touch polars or tqdm, whose threads may
live in a forked parent: it takes and returns plain Python objects.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from tuner.errors import TunerError

R = TypeVar("R")
T = TypeVar("T")

#: prctl(2) option: the signal a process gets when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1
#: Seconds between the parent checks of a worker where prctl is not available.
_PARENT_POLL = 0.5
#: jobs in flight per worker: one running, one waiting
IN_FLIGHT_PER_WORKER = 2


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when process ``parent`` dies.

    A parent killed by a signal (SIGKILL, the OOM killer) runs no clean-up, and the pool's
    workers would otherwise live on, orphaned. On Linux the kernel sends SIGKILL to the worker
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere a daemon thread checks ``os.getppid()`` every
    half second. Workers write nothing, so ending them abruptly loses nothing.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
        if armed:
            if os.getppid() != parent:  # the parent died before the signal was armed
                os._exit(1)
            return
    threading.Thread(target=_watch_parent, args=(parent,), name="watch-parent", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL)
    os._exit(1)


def ordered_map(fn: Callable[..., R], items: Iterable[T], workers: int, *, args: Callable[[T], tuple[Any, ...]],
                failure: str = "a worker process died") -> Iterator[tuple[T, R]]:
    """``(item, fn(*args(item)))`` for each of ``items``, in their order, ``fn`` computed by
    ``workers`` processes (``1``: here, one after the other). ``args`` runs here and makes the
    job's arguments (plain objects, pickled); ``fn`` must be a module-level function (it is
    pickled by name). The item stays here, so the caller gets it back with its result. A worker
    that dies raises a one-line :class:`TunerError` starting with ``failure``; an error raised
    by ``fn`` reaches the caller as it was raised."""
    if workers <= 1:
        for item in items:
            yield item, fn(*args(item))
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                             initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        pending: deque[tuple[T, Future[R]]] = deque()
        try:
            for item in items:
                pending.append((item, pool.submit(fn, *args(item))))
                if len(pending) > IN_FLIGHT_PER_WORKER * workers:
                    done, future = pending.popleft()
                    yield done, future.result()
            while pending:
                done, future = pending.popleft()
                yield done, future.result()
        except BrokenProcessPool as exc:
            raise TunerError(f"{failure} ({exc}); rerun with --workers 1 to see why") from None
        except BaseException:
            for _, future in pending:
                future.cancel()
            raise


__all__ = ["IN_FLIGHT_PER_WORKER", "die_with_parent", "ordered_map"]
