"""The numba chess core: board, move generation, evaluator features and search.

What a user calls: :mod:`search.convert` (FEN, python-chess boards and UCI moves to and from
core boards), :mod:`search.evaluation_api` (features and static scores),
:mod:`search.search_api` (the alpha-beta search, batched searches and move-match sweeps),
:mod:`search.iterative` (iterative deepening with time management: the engine's player),
:mod:`search.perft` (move tree counts), :mod:`search.weights` (weight files). The other modules
hold the kernels (the evaluation's in :mod:`search.feature_kernels`).

Kernels (``@njit(cache=True)``, arrays and scalars only) live in private modules; the public
functions here validate inputs (:mod:`search.validate`: :class:`InvalidBoardError`,
:class:`InvalidWeightsError`, both ``ValueError``) and convert from python-chess at the boundary
(:mod:`search.convert`: :class:`InvalidFenError`, :class:`IllegalMoveError`).

The error classes are importable from this package (``from search import InvalidBoardError``);
they are loaded on first access, so that importing a light module such as
:mod:`search.catalog` does not load numba.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

#: the packages whose ``@njit(cache=True)`` kernels share compiled code
_KERNEL_DIRS = (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "objectives")


def _drop_stale_numba_cache() -> None:
    """Delete numba's cached kernels when any kernel source changed since they were compiled.

    numba keys a cached kernel on its own file only: a kernel that inlines or calls code of
    another file (every search kernel calls the evaluator; the catalogue's offsets are compile-
    time constants) would otherwise keep the old code after that file changes, e.g. after a
    ``git pull`` that adds features. The key is a hash of every source of ``search/`` and
    ``objectives/``, kept in ``search/__pycache__``; with ``NUMBA_CACHE_DIR`` set, that folder is
    the user's to manage and nothing is deleted."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    digest = hashlib.sha256()
    for d in _KERNEL_DIRS:
        for f in sorted(d.glob("*.py")):
            digest.update(f.name.encode() + b"\0" + f.read_bytes())
    key = digest.hexdigest()
    stamp = _KERNEL_DIRS[0] / "__pycache__" / "movetuner-kernel-sources.key"
    try:
        if stamp.read_text() == key:
            return
    except OSError:
        pass
    try:
        for d in _KERNEL_DIRS:
            for f in (d / "__pycache__").glob("*.nb[ic]"):
                f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(key)
    except OSError:  # a read-only install: numba then compiles in memory or in its own cache dir
        pass


_drop_stale_numba_cache()

_ERRORS = {
    "InvalidBoardError": "search.validate",
    "InvalidWeightsError": "search.validate",
    "InvalidFenError": "search.convert",
    "IllegalMoveError": "search.convert",
}

__all__ = sorted(_ERRORS)


def __getattr__(name: str) -> Any:
    if name in _ERRORS:
        import importlib

        return getattr(importlib.import_module(_ERRORS[name]), name)
    raise AttributeError(f"module 'search' has no attribute {name!r}")
