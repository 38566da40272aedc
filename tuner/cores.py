"""How many cores this process may use: the one rule behind every default count of worker
processes and numba threads.

The count is the size of the process's CPU affinity set (``os.sched_getaffinity``), which a
container, a cgroup cpuset or ``taskset`` narrows; ``os.cpu_count()`` (every core of the
machine) is the fallback where the affinity call does not exist (macOS, Windows).
"""

from __future__ import annotations

import os


def available_cores() -> int:
    """The number of cores this process may run on (>= 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (not Linux)
        return max(1, os.cpu_count() or 1)


def workers_or_cores(workers: int | None) -> int:
    """``workers`` when given (a positive count), else :func:`available_cores` (for ``None`` or
    ``0``, the settings' spelling of "one per core")."""
    return workers if workers else available_cores()


def numba_thread_ceiling() -> int:
    """The most threads numba's parallel kernels may use in this process: ``NUMBA_NUM_THREADS``
    (fixed at numba's import; by default numba's own count of the affinity set)."""
    import numba  # noqa: PLC0415 - keeps numba out of the imports of processes that need no kernel

    return int(getattr(numba.config, "NUMBA_NUM_THREADS"))


def threads_for(setting: int) -> int:
    """The numba threads a ``threads`` setting asks for: itself when positive, else (0) the cores
    this process may use (:func:`available_cores`) up to numba's ceiling."""
    return setting or min(available_cores(), numba_thread_ceiling())


__all__ = ["available_cores", "numba_thread_ceiling", "threads_for", "workers_or_cores"]
