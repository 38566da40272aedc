"""The numba chess core: board, move generation, evaluators and searches, in five rooms.

Each room imports only from the rooms before it in this list (``tests/test_import_graph.py``):

* :mod:`search.core`: the rules of chess on bitboard arrays: board, move generation, attacks,
  perft, FEN and python-chess conversion, the board check at the kernels' boundary;
* :mod:`search.params`: the evaluation's parameters: the feature catalogue (every term declared
  once, an engine author's plug-in terms included) and the weights files;
* :mod:`search.evaluation`: the evaluators behind one seam: the linear terms, the network, the
  static score the searches call, the weights and evaluator checks;
* :mod:`search.tree`: the searches: alpha-beta with quiescence, batched searches and move-match
  sweeps, iterative deepening, the bootstrap trees;
* :mod:`search.pls`: the move-probability model and the probability-limited search it drives.

What a user calls: :mod:`search.core.convert` (FEN, python-chess boards and UCI moves to and
from core boards), :mod:`search.core.perft` (move tree counts), :mod:`search.params.weights`
(weight files), :mod:`search.evaluation.evaluation_api` (features and static scores),
:mod:`search.evaluation.evaluators` (a weights or network file as an evaluator),
:mod:`search.tree.search_api` (the alpha-beta search, batched searches and move-match sweeps),
:mod:`search.tree.iterative` (iterative deepening with time management: the engine's player),
:mod:`search.pls.move_model` and :mod:`search.pls.pls` (the move model and its search). The
other modules hold the kernels (the evaluation's in :mod:`search.evaluation.feature_kernels`).

Kernels (``@njit(cache=True)``, arrays and scalars only) live in private modules; the public
functions validate inputs (:mod:`search.core.validate`: :class:`InvalidBoardError`;
:mod:`search.evaluation.validate`: :class:`InvalidWeightsError`; both ``ValueError``) and
convert from python-chess at the boundary (:mod:`search.core.convert`: :class:`InvalidFenError`,
:class:`IllegalMoveError`).

The error classes are importable from this package (``from search import InvalidBoardError``);
they are loaded on first access, so that importing a light module such as
:mod:`search.params.catalog` does not load numba.

The module paths of the flat package before the rooms (``search.board``, ``search.search_api``,
...) still import, for the scripts and term plug-ins written against them: each is an alias of
the module that now holds it (``search.validate`` of both halves), and importing it warns once
with :class:`MovedModuleWarning`, which names the new path.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
import warnings
from pathlib import Path
from typing import Any

#: the packages whose ``@njit(cache=True)`` kernels share compiled code (their subpackages
#: included)
_KERNEL_DIRS = (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "objectives")


def _drop_stale_numba_cache() -> None:
    """Delete numba's cached kernels when any kernel source changed since they were compiled.

    numba keys a cached kernel on its own file only: a kernel that inlines or calls code of
    another file (every search kernel calls the evaluator; the catalogue's offsets are compile-
    time constants) would otherwise keep the old code after that file changes, e.g. after a
    ``git pull`` that adds features. The key is a hash of every source of ``search/`` and
    ``objectives/``, their subpackages (the rooms) included, kept in ``search/__pycache__``; with
    ``NUMBA_CACHE_DIR`` set, that folder is the user's to manage and nothing is deleted."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    digest = hashlib.sha256()
    for d in _KERNEL_DIRS:
        for f in sorted(d.rglob("*.py")):
            digest.update(f.relative_to(d).as_posix().encode() + b"\0" + f.read_bytes())
    key = digest.hexdigest()
    stamp = _KERNEL_DIRS[0] / "__pycache__" / "movetuner-kernel-sources.key"
    try:
        if stamp.read_text() == key:
            return
    except OSError:
        pass
    try:
        for d in _KERNEL_DIRS:
            for f in d.rglob("__pycache__/*.nb[ic]"):
                f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(key)
    except OSError:  # a read-only install: numba then compiles in memory or in its own cache dir
        pass


_drop_stale_numba_cache()

_ERRORS = {
    "InvalidBoardError": "search.core.validate",
    "InvalidWeightsError": "search.evaluation.validate",
    "InvalidFenError": "search.core.convert",
    "IllegalMoveError": "search.core.convert",
}

__all__ = sorted([*_ERRORS, "MovedModuleWarning", "moved_message"])

#: the rooms, in import order (tests/test_import_graph.py keeps it)
ROOMS = ("core", "params", "evaluation", "tree", "pls", "play")


class MovedModuleWarning(FutureWarning):
    """An import by a module path of the flat package before the rooms, e.g. ``search.board``
    (now ``search.core.board``); the old path is an alias and keeps working."""


def moved_message(old: str, new: str) -> str:
    """What a :class:`MovedModuleWarning` says of the old path ``old``, now ``new``."""
    return f"{old} is now {new}; the old path is an alias (import the new one)"


def moved_module_homes(name: str) -> tuple[str, ...]:
    """The modules that now hold the flat package's module ``name`` (``"board"`` ->
    ``("search.core.board",)``; ``"validate"`` -> its board and weights halves), in room order;
    empty when ``name`` was no module of it."""
    here = Path(__file__).resolve().parent
    if name in ROOMS or not name.isidentifier():
        return ()
    return tuple(f"search.{room}.{name}" for room in ROOMS if (here / room / f"{name}.py").is_file())


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``search.X`` for a module ``X`` that moved into a room: a module of its own whose
    names are those of the module(s) now holding it (the same objects)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.partition(".")
        if package != __name__ or "." in name or not moved_module_homes(name):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the default module

    def exec_module(self, module: types.ModuleType) -> None:
        homes = moved_module_homes(module.__name__.partition(".")[2])
        for home in homes:
            real = importlib.import_module(home)
            module.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
        module.__doc__ = f"An alias of {' and '.join(homes)} (the module's path before the rooms)."
        frame = sys._getframe(1)  # the importer: the first frame outside importlib and this file
        while frame.f_back is not None and ("importlib" in frame.f_code.co_filename
                                            or frame.f_code.co_filename == __file__):
            frame = frame.f_back
        warnings.warn_explicit(moved_message(module.__name__, " and ".join(homes)), MovedModuleWarning,
                               frame.f_code.co_filename, frame.f_lineno, module=frame.f_globals.get("__name__"))


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())


def __getattr__(name: str) -> Any:
    if name in _ERRORS:
        import importlib

        return getattr(importlib.import_module(_ERRORS[name]), name)
    raise AttributeError(f"module 'search' has no attribute {name!r}")
