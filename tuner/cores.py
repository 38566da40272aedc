"""How many cores this process may use, and the one rule that turns a user's request for numba
threads or worker processes into a count.

A request is an int (or None). A positive count is taken as given, up to a ceiling;
:data:`ALL_CORES` (0) or None means one thread or process per core this process may use
(:func:`available_cores`). The ceilings: numba threads up to :func:`thread_ceiling`
(``NUMBA_NUM_THREADS``, the search API's own check), worker processes up to :data:`MAX_WORKERS`.

The core count is the size of the process's CPU affinity set (``os.sched_getaffinity``), which a
container, a cgroup cpuset or ``taskset`` narrows; ``os.cpu_count()`` (every core of the
machine) is the fallback where the affinity call does not exist (macOS, Windows).

"Leave numba's current thread count as it is" is not a request but :data:`KEEP_NUMBA_THREADS`
(None), the default ``n_threads`` of the search API's functions (:func:`search.search_api.threads`).
"""

from __future__ import annotations

import os

#: a request for one numba thread or worker process per core this process may use
ALL_CORES = 0
#: the ``n_threads`` that leaves numba's current thread count unchanged (not a request for cores)
KEEP_NUMBA_THREADS = None
#: the most worker processes a command may start (far beyond any machine's cores; a count too
#: large for a process pool overflowed its semaphore, ``OverflowError``)
MAX_WORKERS = 1024


def available_cores() -> int:
    """The number of cores this process may run on (>= 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (not Linux)
        return max(1, os.cpu_count() or 1)


def thread_ceiling() -> int:
    """The most threads numba's parallel kernels may use in this process
    (:func:`search.search_api.thread_ceiling`: ``NUMBA_NUM_THREADS``)."""
    from search.tree.search_api import thread_ceiling as ceiling  # noqa: PLC0415 - numba only when threads are asked for

    return ceiling()


def check_threads(requested: int, what: str = "threads") -> int:
    """``requested`` if it is a valid request for numba threads (:data:`ALL_CORES` or 1 ..
    :func:`thread_ceiling`), else a one-line ``ValueError`` naming ``what`` (an option, say
    ``--threads``)."""
    ceiling = thread_ceiling()
    if not ALL_CORES <= requested <= ceiling:
        raise ValueError(f"{what} must be from 0 (all cores) to {ceiling}, not {requested}")
    return requested


def resolve_threads(requested: int | None) -> int:
    """The numba threads a request asks for (>= 1): itself when positive, else (None or
    :data:`ALL_CORES`) the cores this process may use up to :func:`thread_ceiling`. A request
    out of range raises ``ValueError`` (:func:`check_threads`)."""
    if not requested:
        return min(available_cores(), thread_ceiling())
    return check_threads(requested)


def check_workers(requested: int | None, what: str = "workers") -> int | None:
    """``requested`` if it is a valid request for worker processes (None, :data:`ALL_CORES` or
    1 .. :data:`MAX_WORKERS`), else a one-line ``ValueError`` naming ``what``."""
    if requested is not None and not ALL_CORES <= requested <= MAX_WORKERS:
        raise ValueError(f"{what} must be from 0 (one per core) to {MAX_WORKERS}, not {requested}")
    return requested


def resolve_workers(requested: int | None) -> int:
    """The worker processes a request asks for (>= 1): itself when positive, else (None or
    :data:`ALL_CORES`) one per core this process may use (:func:`available_cores`)."""
    return check_workers(requested) or available_cores()


__all__ = ["ALL_CORES", "KEEP_NUMBA_THREADS", "MAX_WORKERS", "available_cores", "check_threads", "check_workers",
           "resolve_threads", "resolve_workers", "thread_ceiling"]
