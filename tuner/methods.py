"""The registry of tuning methods: ``tuner tune --method NAME``.

A method is one module that defines

* a frozen, keyword-only config dataclass (its ``[NAME]`` table in a run's ``config.toml``, and
  its group of ``tuner tune`` options, derived by :mod:`tuner.config`), and
* a trainer class (:class:`tuner.driver.Trainer`): what one outer iteration does, what it
  reports and what it checkpoints,

and one :class:`Method` line in :data:`BUILTIN` below (or a call to :func:`register` from a
plug-in). Everything else comes from the registry: ``--method`` choices, the TOML tables, the
``--help`` sections, ``--resume``, and the panels of ``tuner bench plot``. The outer loop
(iterations, checkpoints, metrics, validation move-match, early stopping, Ctrl-C, resume,
progress bars) is :func:`tuner.driver.drive`, shared by every method.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.driver import Trainer

#: a plot panel: (title, [(metrics key, label)])
Panel = tuple[str, list[tuple[str, str]]]


@dataclass(frozen=True)
class Method:
    """One tuning method.

    ``config``: its settings dataclass; ``trainer``: a callable ``(common, cfg, data, w0,
    log, progress) -> Trainer`` (usually the trainer class); ``summary``: one line for
    ``--help``; ``iterations``: the name of its setting that counts outer iterations (what
    ``--resume`` may extend); ``unit``: what one outer iteration is called in messages and
    plots; ``panels``: the figures of ``tuner bench plot`` beside the validation move-match;
    ``best_by``: the metric (a key of the iteration's metrics) and direction (``"max"`` or
    ``"min"``) by which the driver keeps the best iteration and stops early: the validation
    move-match unless the method has its own validation criterion (Texel: its validation
    error ``e_validation``, lower is better).
    """

    name: str
    config: type
    trainer: Callable[..., Trainer]
    summary: str
    iterations: str = "iterations"
    unit: str = "iteration"
    panels: list[Panel] = field(default_factory=list)
    headline: tuple[str, ...] = ()
    best_by: tuple[str, str] = ("match_validation", "max")


#: name -> "module:attribute" of the built-in methods' :class:`Method` objects (imported when
#: first needed, so that ``tuner --help`` of other commands does not load them)
BUILTIN: dict[str, str] = {
    "mmto": "tuner.mmto:METHOD",
    "ga": "tuner.ga:METHOD",
    "texel": "tuner.texel:METHOD",
    "rootstrap": "tuner.bootstrap:ROOTSTRAP_METHOD",
    "treestrap-mm": "tuner.bootstrap:TREESTRAP_MM_METHOD",
    "treestrap-ab": "tuner.bootstrap:TREESTRAP_AB_METHOD",
    "tdleaf": "tuner.bootstrap:TDLEAF_METHOD",
}

_REGISTRY: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add (or replace) a method; returns it, so a module can write ``METHOD = register(...)``."""
    if not method.name or not method.name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a method's name must be a word, not {method.name!r}")
    _REGISTRY[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove a registered plug-in (tests); built-in methods come back when next asked for."""
    _REGISTRY.pop(name, None)


def _load_builtin() -> None:
    for name, target in BUILTIN.items():
        if name not in _REGISTRY:
            module, attr = target.split(":")
            _REGISTRY[name] = getattr(importlib.import_module(module), attr)


def methods() -> dict[str, Method]:
    """Every registered method by name: the built-in ones first, then plug-ins."""
    _load_builtin()
    return {**{n: _REGISTRY[n] for n in BUILTIN}, **{n: m for n, m in _REGISTRY.items() if n not in BUILTIN}}


def get(name: str) -> Method:
    """The method called ``name``; ``ValueError`` naming the known ones otherwise."""
    known = methods()
    if name not in known:
        raise ValueError(f"method must be one of {', '.join(known)}, not {name!r}")
    return known[name]


__all__ = ["BUILTIN", "Method", "Panel", "get", "methods", "register", "unregister"]
