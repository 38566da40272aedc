"""The move-probability model and the probability-limited search it drives: the model's features
(:mod:`~search.pls.move_catalog`, :mod:`~search.pls.move_model_kernels`), its API
(:mod:`~search.pls.move_model`), alpha-beta with model ordering
(:mod:`~search.pls.model_ordering`) and the probability-limited search (:mod:`~search.pls.pls`,
:mod:`~search.pls.pls_kernels`, :mod:`~search.pls.pls_sweep`). Imports from every other room.

Before the rooms, ``search.pls`` was the module now at :mod:`search.pls.pls`: its names are still
read from here (``from search.pls import PlsSearcher``), loaded on first access with a
:class:`search.MovedModuleWarning` naming the new path."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    import importlib
    import sys
    import warnings

    module = importlib.import_module("search.pls.pls")
    if name not in vars(module) or name == "pls":
        raise AttributeError(f"module 'search.pls' has no attribute {name!r}")
    search = sys.modules["search"]
    warnings.warn(search.moved_message(f"search.pls.{name}", f"search.pls.pls.{name}"), search.MovedModuleWarning,
                  stacklevel=2)
    return vars(module)[name]
