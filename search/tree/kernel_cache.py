"""Whether a kernel is ready to run without compiling: the check behind the notes that say a
command waits for numba (``compiling ... (first run only)``).

numba keeps a compiled kernel in an index file (``<module>.<kernel>-<line>.py311.nbi``, next
to the source in ``__pycache__`` or under ``NUMBA_CACHE_DIR``) that holds the source's stamp (a
hash of its contents in numba 0.68); a missing index, or one of another stamp or numba
version, means the next call compiles (tens of seconds for the search). :mod:`search` deletes every index when any
kernel source changed, so one kernel's index tells for all the kernels it calls.
"""

from __future__ import annotations


def is_compiled(kernel: object) -> bool:
    """Whether calling ``kernel`` (an ``@njit(cache=True)`` dispatcher) compiles nothing.

    True when it already ran in this process, when numba's cache holds a version of it fresh
    for its source (any signature: the check reads the index, not the compiled code), or when
    the JIT is disabled (``NUMBA_DISABLE_JIT=1`` leaves a plain function). When numba's cache
    cannot be read (its internals changed), also True: no note rather than a wrong one.
    """
    if getattr(kernel, "signatures", None):
        return True
    cache = getattr(kernel, "_cache", None)
    if cache is None:
        return True
    try:
        return bool(cache._cache_file._load_index())
    except Exception:  # numba's private cache layout: if it moved, say nothing
        return True
