"""Options and argument checks that several ``tuner bench`` subcommands share, declared once."""

from __future__ import annotations

import argparse
import dataclasses
import functools
from collections.abc import Callable


from search.evaluation.evaluators import Evaluator, load_evaluator
from search.pls.move_model import MoveModel, load_move_model
from tuner.limits import SearchLimits
from search.pls.pls import LEAF_MODEL_PLAY, MODEL_ABOVE_PLAY, STATIC_PRIOR, check_model_above, load_leaf_model
from tuner.arena.players import DEFAULT_MOVE_MODEL, DEFAULT_SEARCH, SEARCH_CHOICES, Searchable, as_player, player_label, split_search
from tuner.commands import PLAYER_SUFFIXES_HELP, builtins_help
from tuner.errors import TunerError
from tuner.arena.sprt import Sprt, parse_sprt


def add_weights_argument(p: argparse.ArgumentParser, *, players: bool = False) -> None:
    """``--weights W...``: one or more weights files or built-in sets (required); ``players``:
    each may name its search (:func:`load_players`)."""
    p.add_argument("--weights", nargs="+", required=True, metavar="W",
                   help=f"weights files, network files (.mtnn) or built-in sets ({builtins_help()})"
                        + (f"; {PLAYER_SUFFIXES_HELP}" if players else ""))


def load_weight_sets(names: list[str]) -> list[tuple[str, Evaluator]]:
    """``(name, evaluator)`` of each weights file, network file or built-in set
    (:func:`search.evaluation.evaluators.load_evaluator`); a one-line :class:`TunerError` for the first
    that cannot be read."""
    try:
        return [(name, load_evaluator(name)) for name in names]
    except ValueError as exc:
        raise TunerError(str(exc)) from None


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    """``--search play|exact|pls``, ``--move-model FILE``, ``--pls-model-above P`` and ``--pls-leaf-model
    MODEL`` (:mod:`tuner.arena.players`)."""
    p.add_argument("--search", choices=SEARCH_CHOICES, default=DEFAULT_SEARCH,
                   help="the numba engine's search: play (selective alpha-beta: null move, reductions, pruning; "
                        "docs/search.md), exact (the full-width alpha-beta training uses; depth is its old name), "
                        "or pls (probability-limited, Giraffe's: iteration D to the threshold 1/32 * 4^-(D-1)); a "
                        "player named NAME@play, NAME@exact or NAME@pls overrides it (default: play)")
    p.add_argument("--move-model", metavar="FILE", default=None,
                   help=f"move model of the probability-limited search (default: the built-in {DEFAULT_MOVE_MODEL})")
    p.add_argument("--pls-model-above", metavar="P", type=_probability, default=MODEL_ABOVE_PLAY,
                   help="the probability-limited search evaluates its move model at nodes whose path probability "
                        "is above P, its leaf model (--pls-leaf-model) below: 0 the model everywhere, 1 "
                        f"nowhere (default: {MODEL_ABOVE_PLAY:g})")
    p.add_argument("--pls-leaf-model", metavar="MODEL", default=LEAF_MODEL_PLAY,
                   help="what splits the probability below --pls-model-above: a pre-move move model (built in: "
                        f"gm-premove; a file from 'tuner moves train --groups premove') or {STATIC_PRIOR} (a "
                        f"static prior, captures by victim value) (default: {LEAF_MODEL_PLAY})")


def _probability(text: str) -> float:
    """``--pls-model-above``'s value: a probability in [0, 1], a decimal or a fraction (``1/64``)."""
    num, sep, den = text.strip().partition("/")
    try:
        return check_model_above(float(num) / float(den) if sep else float(num))
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text[:20]!r} is not a probability in [0, 1]") from None


class MoveModels:
    """The move model of ``--move-model``, loaded once when a player first needs it (one-line
    :class:`TunerError` when it cannot be read)."""

    def __init__(self, spec: str | None) -> None:
        self.spec = spec or DEFAULT_MOVE_MODEL
        self._model: MoveModel | None = None

    def get(self) -> MoveModel:
        if self._model is None:
            try:
                self._model = load_move_model(self.spec)
            except ValueError as exc:
                raise TunerError(str(exc)) from None
        return self._model


def leaf_models(spec: str) -> Callable[[], MoveModel | None]:
    """The model of ``--pls-leaf-model`` (:func:`search.pls.pls.load_leaf_model`; ``None``: the
    static prior), loaded once, when a player first needs it (one-line :class:`TunerError`
    naming the option when it cannot be read)."""
    @functools.cache
    def get() -> MoveModel | None:
        try:
            return load_leaf_model(spec)
        except ValueError as exc:
            raise TunerError(f"--pls-leaf-model: {exc}") from None
    return get


def load_players(specs: list[str], search: str, move_model: str | None, model_above: float = MODEL_ABOVE_PLAY,
                 leaf_model: str = LEAF_MODEL_PLAY) -> list[tuple[str, Searchable]]:
    """``(label, player)`` of each spec (a weight set, optionally ``@play``, ``@exact`` or ``@pls``;
    :func:`tuner.arena.players.split_search`), the label with ``@exact`` or ``@pls`` for those
    searches (:func:`tuner.arena.players.player_label`; the probability-limited search (``model_above`` and ``leaf_model``, a spec of
    :func:`search.pls.pls.load_leaf_model`: :class:`tuner.arena.players.PlsPlayer`'s)); a one-line
    :class:`TunerError` for the first that cannot be read."""
    models = MoveModels(move_model)
    leaf = leaf_models(leaf_model)
    out: list[tuple[str, Searchable]] = []
    for spec in specs:
        name, kind = split_search(spec, search)
        weights = load_weight_sets([name])[0][1]
        model = models.get() if kind == "pls" else None
        out.append((player_label(name, kind), as_player(weights, kind, model, model_above=model_above,
                                                        leaf_model=leaf() if kind == "pls" else None)))
    return out


def add_limit_arguments(p: argparse.ArgumentParser, *, required: bool, prefix: str = "") -> None:
    """``--depth``, ``--nodes``, ``--movetime`` (mutually exclusive), from the fields of
    :class:`tuner.limits.SearchLimits`; ``prefix`` starts each help text (e.g. what they limit)."""
    limits = p.add_mutually_exclusive_group(required=required)
    for f in dataclasses.fields(SearchLimits):
        limits.add_argument("--" + f.name, type=int, metavar=f.metadata["metavar"],
                            help=prefix + f.metadata["help"])


def add_sprt_argument(p: argparse.ArgumentParser, *, what: str = "the match") -> None:
    """``--sprt ELO0 ELO1 ALPHA BETA``: stop ``what`` by a sequential test (:mod:`tuner.arena.sprt`)."""
    p.add_argument("--sprt", nargs=4, type=float, metavar=("ELO0", "ELO1", "ALPHA", "BETA"),
                   help=f"stop {what} early by a sequential probability ratio test as fishtest runs it "
                        "(GSPRT on pentanomial game-pair counts, logistic Elo): H0 elo = ELO0 against H1 "
                        "elo = ELO1 with false-positive rate ALPHA and false-negative rate BETA, e.g. "
                        "'--sprt 0 10 0.05 0.05'; --games is then the most games played")


def sprt_of(values: list[float] | None) -> Sprt | None:
    """The test ``--sprt`` asks for (None without it); a one-line :class:`TunerError` when its
    values are not a valid test."""
    try:
        return parse_sprt(values)
    except ValueError as exc:
        raise TunerError(str(exc)) from None


def check_sweep_options(depth: int, threads: int, depth_flag: str = "--depth") -> None:
    """A one-line :class:`TunerError` unless a move-match sweep's ``depth`` is within 1 ..
    :data:`tuner.limits.SWEEP_DEPTH` and ``threads`` a valid request (:func:`tuner.cores.check_threads`):
    beyond, the kernels' wrappers raise."""
    from tuner.cores import check_threads  # noqa: PLC0415
    from tuner.limits import SWEEP_DEPTH, check_range  # noqa: PLC0415

    try:
        check_range(depth_flag, depth, SWEEP_DEPTH)
        check_threads(threads, "--threads")
    except ValueError as exc:
        raise TunerError(str(exc)) from None


def check_workers(workers: int | None) -> None:
    """A one-line :class:`TunerError` unless ``workers`` is a valid request for worker processes
    (:func:`tuner.cores.check_workers`: None or 0 for one per core, else up to
    :data:`tuner.cores.MAX_WORKERS`)."""
    from tuner.cores import check_workers as check  # noqa: PLC0415

    try:
        check(workers, "--workers")
    except ValueError as exc:
        raise TunerError(str(exc)) from None


__all__ = ["MoveModels", "leaf_models", "add_limit_arguments", "add_search_arguments", "add_sprt_argument", "add_weights_argument",
           "check_sweep_options", "check_workers", "load_players", "load_weight_sets", "sprt_of"]
