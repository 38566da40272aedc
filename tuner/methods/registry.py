"""The registry of tuning methods: ``tuner tune --method NAME``.

A method is one module that defines

* a frozen, keyword-only config dataclass (its ``[NAME]`` table in a run's ``config.toml``, and
  its group of ``tuner tune`` options, derived by :mod:`tuner.config`), and
* a trainer class (:class:`Trainer`, defined here so that the driver and the methods import
  it from the registry, not from each other): what one outer iteration does, what it reports
  and what it checkpoints,

and one :class:`Method` line in :data:`BUILTIN` below (or a call to :func:`register` from a
plug-in). Everything else comes from the registry: ``--method`` choices, the TOML tables, the
``--help`` sections, ``--resume``, and the panels of ``tuner bench plot``. The outer loop
(iterations, checkpoints, metrics, validation move-match, early stopping, Ctrl-C, resume,
progress bars) is :func:`tuner.training.driver.drive`, shared by every method.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the registry stays light: tuner --help names the methods without loading them
    from search.evaluation.evaluators import Evaluator


class Trainer(Protocol):
    """One method's training, driven one outer iteration at a time by :func:`drive`.

    A trainer is made by its method's factory as ``trainer(common, cfg, data, w0, ctx)``
    (``common``: the run's shared settings, :class:`tuner.training.tune_config.TuneConfig`;
    ``cfg``: the method's; ``data``: the training and validation positions; ``w0``: the start
    weights, int32[N_FEATURES] or a network; ``ctx``: where to work, a
    :class:`tuner.training.run_context.RunContext` with the threads, the executor, the pacers,
    the log and whether to draw progress bars).
    """

    def begin(self) -> dict[str, Any]:
        """Set up from ``w0`` and measure the start; the metrics of iteration 0."""

    def restore(self, state: dict[str, Any]) -> None:
        """Set up from a checkpoint's trainer state (what :meth:`state` returned), so that the
        next :meth:`step` does what it would have done in an uninterrupted run."""

    def step(self, iteration: int) -> dict[str, Any]:
        """Run outer iteration ``iteration`` (from 1); its metrics (JSON-able numbers)."""

    def weights(self) -> Evaluator:
        """The weights the last :meth:`begin` / :meth:`step` produced (int32[N_FEATURES], or a
        network): the ones the driver measures on the validation split and may keep."""

    def state(self) -> dict[str, Any]:
        """Everything :meth:`restore` needs, JSON-able (floats round-trip exactly)."""

    def finished(self) -> str | None:
        """A reason to stop before the configured number of iterations, or None."""


#: a plot panel: (title, [(metrics key, label)])
Panel = tuple[str, list[tuple[str, str]]]

#: what a method may need of a position set (:attr:`Method.needs`): the move played in each
#: position, or the game's result
PLAYED_MOVES = "played_moves"
RESULTS = "results"


@dataclass(frozen=True)
class Method:
    """One tuning method.

    ``config``: its settings dataclass; ``trainer``: a callable ``(common, cfg, data, w0,
    ctx) -> Trainer`` (usually the trainer class); ``summary``: one line for
    ``--help``; ``iterations``: the name of its setting that counts outer iterations (what
    ``--resume`` may extend); ``unit``: what one outer iteration is called in messages and
    plots; ``panels``: the figures of ``tuner bench plot`` beside the validation move-match;
    ``evaluators``: the evaluator kinds its trainer accepts as the start;
    ``needs``: what it needs of a position set, :data:`PLAYED_MOVES` (the default: it learns
    from or is judged by the moves played, as the driver keeps the weights of the best
    validation move-match) and/or :data:`RESULTS` (game results only: Texel). ``tuner tune``
    refuses a set without played moves for a method that needs them.
    ``streams_train``: the evaluator kinds whose trainer reads the training positions only
    through ``TrainingData.train_chunks`` (MMTO's linear one): with ``--executor dask``,
    ``tuner tune`` gives it chunked data (:mod:`tuner.training.training_data`), whose positions
    the workers build chunk by chunk and the driver never loads.
    ``reads_stream``: ``(common, cfg) -> bool``, whether its trainer reads the training
    positions as a stream for these settings (:mod:`tuner.training.position_set`: Texel's, when large
    or asked): ``tuner tune`` then gives it streamed data and loads no training position.
    ``refuses``: ``(cfg, kind) -> reason or None``, a setting its trainer for the start's
    evaluator kind cannot take, checked by ``tuner tune`` before the positions load (a
    one-line error then, not after minutes of loading).
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
    #: the evaluator kinds it trains (search.evaluation.evaluators.kind_of): "linear", "network"
    evaluators: tuple[str, ...] = ("linear",)
    needs: frozenset[str] = frozenset({PLAYED_MOVES})
    best_by: tuple[str, str] = ("match_validation", "max")
    streams_train: tuple[str, ...] = ()
    reads_stream: Callable[[Any, Any], bool] | None = None
    refuses: Callable[[Any, str], str | None] | None = None


#: name -> "module:attribute" of the built-in methods' :class:`Method` objects (imported when
#: first needed, so that ``tuner --help`` of other commands does not load them)
BUILTIN: dict[str, str] = {
    "mmto": "tuner.methods.mmto:METHOD",
    "ga": "tuner.methods.ga:METHOD",
    "texel": "tuner.methods.texel:METHOD",
    "rootstrap": "tuner.methods.rootstrap:METHOD",
    "treestrap-mm": "tuner.methods.treestrap_mm:METHOD",
    "treestrap-ab": "tuner.methods.treestrap_ab:METHOD",
    "tdleaf": "tuner.methods.tdleaf:METHOD",
}

_REGISTRY: dict[str, Method] = {}


def by_evaluator(linear: Callable[..., Trainer], network: Callable[..., Trainer]) -> Callable[..., Trainer]:
    """A :attr:`Method.trainer` for a method that trains either evaluator kind: ``network``'s
    trainer when the start ``w0`` is a network, else ``linear``'s."""
    def make(common: Any, cfg: Any, data: Any, w0: Any, ctx: Any) -> Trainer:
        from search.evaluation.evaluators import is_network  # noqa: PLC0415 (the registry stays light)

        return (network if is_network(w0) else linear)(common, cfg, data, w0, ctx)

    return make


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


def method_names() -> list[str]:
    """The names of :func:`methods`, in its order, without importing the built-in methods."""
    return [*BUILTIN, *(n for n in _REGISTRY if n not in BUILTIN)]


def get(name: str) -> Method:
    """The method called ``name``; ``ValueError`` naming the known ones otherwise."""
    known = methods()
    if name not in known:
        raise ValueError(f"method must be one of {', '.join(known)}, not {name!r}")
    return known[name]


__all__ = ["BUILTIN", "PLAYED_MOVES", "RESULTS", "Method", "Panel", "Trainer", "by_evaluator", "get", "methods",
           "register", "unregister"]
