"""The numba chess core: board, move generation, evaluator features and search.

Kernels (``@njit(cache=True)``, arrays and scalars only) live in private modules; the public
functions here validate inputs (:mod:`search.validate`: :class:`InvalidBoardError`,
:class:`InvalidWeightsError`, both ``ValueError``) and convert from python-chess at the boundary
(:mod:`search.convert`: :class:`InvalidFenError`, :class:`IllegalMoveError`).

The error classes are importable from this package (``from search import InvalidBoardError``);
they are loaded on first access, so that importing a light module such as
:mod:`search.catalog` does not load numba.
"""

from __future__ import annotations

from typing import Any

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
