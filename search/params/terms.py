"""An engine author's own evaluation terms, declared as a plug-in file (``docs/own-terms.md``).

A plug-in is a Python file that declares, at its top level:

* ``NAME`` (str): the plug-in's name, recorded in every weights file made with it;
* ``GROUP`` (str): the group of its terms (the unit of ``--train``; not a built-in group);
* ``TERMS``: a tuple of ``(term, labels, defaults)``: ``term`` a name (letters, digits, ``_``),
  ``labels`` a tuple of label strings (empty: the term is one feature), ``defaults`` one
  integer weight (centipawns, both stages) per label (or one for a term without labels);
* ``BOUNDS`` (optional, default ``(-500, 500)``): the inclusive range, centipawns, a tuner keeps
  every weight of the group in;
* ``count(b, counts)``: an ``@njit`` function on a board array (uint64[BOARD_WORDS], the
  search's board, :mod:`search.core.board`) that *adds* the net count of each base feature, White's
  minus Black's, into ``counts`` (int64[number of base features], zero on entry, in the order of
  ``TERMS`` and their labels);
* ``reference(board)``: the same net counts (a list of ints) from a ``chess.Board``: the oracle
  the tests compare ``count`` with.

Its features are named ``<stage>.<GROUP>.<term>[.<label>]`` and, as the built-in ones, each has
a middle-game copy (value ``x * phase``) and an end-game copy (``x * (PHASE_MAX - phase)``).
One plug-in file is active per process: the file named by the environment variable
:data:`ENV_VAR` (the command line's ``--terms FILE`` sets it), read once when
:mod:`search.params.catalog` is first imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from search.core.input_limits import NotRegularFileError

#: environment variable naming the active plug-in file
ENV_VAR = "MOVETUNER_TERMS"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_LABEL = re.compile(r"[A-Za-z0-9_]+$")


class TermsFileError(ValueError):
    """A plug-in file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class TermPlugin:
    """A loaded plug-in: its declarations (module docstring) and its two extractors."""

    path: str
    name: str
    group: str
    terms: tuple[tuple[str, tuple[str, ...], tuple[int, ...]], ...]
    bounds: tuple[int, int]
    count: Any  # the numba dispatcher count(b, counts)
    reference: Callable[..., Any]
    #: the warnings its import raised, one line each ("FILE:LINE: Category: message"), e.g. an
    #: import by a module path before the rooms (``search.board``); the command line prints them
    notes: tuple[str, ...] = ()

    @property
    def n_base(self) -> int:
        """Base features of the plug-in (one per label, or one per term without labels)."""
        return sum(len(labels) or 1 for _, labels, _ in self.terms)


def load_plugin(path: str | Path) -> TermPlugin:
    """Import and check the plug-in file ``path``; one-line :class:`TermsFileError` naming the
    file (and the line of a syntax error) otherwise."""
    where = str(path)
    if where in _LOADED:
        return _LOADED[where]
    p = Path(path)
    if not p.is_file():
        if p.is_dir():
            raise TermsFileError(f"{where}: a folder, not a term plug-in file")
        if p.exists():  # a FIFO, a device or a socket: importing it would block or read garbage
            raise TermsFileError(str(NotRegularFileError(where, p.stat().st_mode)))
        raise TermsFileError(f"{where}: no such term plug-in file")
    # a name the same in every process (numba's cache imports it by name when it loads a kernel
    # compiled for the plug-in: search.evaluation.plugin_tag)
    mod_name = f"movetuner_terms_{hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:16]}"
    spec = importlib.util.spec_from_file_location(mod_name, p)
    if spec is None or spec.loader is None:
        raise TermsFileError(f"{where}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(mod_name, None)
        raise TermsFileError(f"{where}: line {exc.lineno}: syntax error ({exc.msg})") from None
    except Exception as exc:  # the author's code: any failure is theirs, reported in one line
        sys.modules.pop(mod_name, None)
        raise TermsFileError(f"{where}: importing the plug-in failed: {exc.__class__.__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
    notes = tuple(" ".join(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}".split())
                  for w in caught)
    _LOADED[where] = replace(_checked(module, where), notes=notes)
    return _LOADED[where]


_LOADED: dict[str, TermPlugin] = {}


def _checked(module: Any, where: str) -> TermPlugin:
    def need(attr: str) -> Any:
        if not hasattr(module, attr):
            raise TermsFileError(f"{where}: the plug-in does not define {attr} (see docs/own-terms.md)")
        return getattr(module, attr)

    name, group, terms = need("NAME"), need("GROUP"), need("TERMS")
    count, reference = need("count"), need("reference")
    bounds = getattr(module, "BOUNDS", (-500, 500))
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise TermsFileError(f"{where}: NAME must be a name of letters, digits and _, not {name!r}")
    if not isinstance(group, str) or not _NAME.fullmatch(group):
        raise TermsFileError(f"{where}: GROUP must be a name of letters, digits and _, not {group!r}")
    if (not isinstance(bounds, tuple) or len(bounds) != 2 or not all(isinstance(v, int) for v in bounds)
            or bounds[0] > bounds[1]):
        raise TermsFileError(f"{where}: BOUNDS must be (low, high) integers, low <= high, not {bounds!r}")
    if not isinstance(terms, tuple) or not terms:
        raise TermsFileError(f"{where}: TERMS must be a non-empty tuple of (term, labels, defaults)")
    out = []
    seen: set[str] = set()
    for k, entry in enumerate(terms):
        if not (isinstance(entry, tuple) and len(entry) == 3):
            raise TermsFileError(f"{where}: TERMS[{k}] must be (term, labels, defaults)")
        term, labels, defaults = entry
        if not isinstance(term, str) or not _NAME.fullmatch(term) or term in seen:
            raise TermsFileError(f"{where}: TERMS[{k}]: {term!r} is not a new name of letters, digits and _")
        seen.add(term)
        if not isinstance(labels, tuple) or not all(isinstance(x, str) and _LABEL.fullmatch(x) for x in labels) \
                or len(set(labels)) != len(labels):
            raise TermsFileError(f"{where}: TERMS[{k}] ({term}): labels must be a tuple of distinct names")
        if not isinstance(defaults, tuple) or len(defaults) != (len(labels) or 1) \
                or not all(isinstance(v, int) and bounds[0] <= v <= bounds[1] for v in defaults):
            raise TermsFileError(f"{where}: TERMS[{k}] ({term}): defaults must be {len(labels) or 1} "
                                 f"integer(s) within BOUNDS {bounds}")
        out.append((term, tuple(labels), tuple(defaults)))
    if not hasattr(count, "py_func"):
        raise TermsFileError(f"{where}: count must be an @njit function count(b, counts)")
    if not callable(reference):
        raise TermsFileError(f"{where}: reference must be a function reference(board) -> list of int")
    return TermPlugin(where, name, group, tuple(out), (int(bounds[0]), int(bounds[1])), count, reference)


_ACTIVE: list[TermPlugin | None] = []


def active_plugin() -> TermPlugin | None:
    """The plug-in of :data:`ENV_VAR` (loaded on the first call; the same one after), or None."""
    if not _ACTIVE:
        path = os.environ.get(ENV_VAR, "").strip()
        _ACTIVE.append(load_plugin(path) if path else None)
    return _ACTIVE[0]


__all__ = ["ENV_VAR", "TermPlugin", "TermsFileError", "active_plugin", "load_plugin"]
