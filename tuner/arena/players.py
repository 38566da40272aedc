"""The players of ``tuner bench match|compare|epd`` and ``tuner uci``: a weight set searched
depth-limited (:class:`search.tree.iterative.Searcher`) or probability-limited
(:class:`search.pls.pls.PlsSearcher`, Giraffe's search, Lai 2015), or an external engine.

A player spec is a weight set (a built-in set's name, a weights or network file, a run folder
where the command takes one) with an optional search suffix: ``gm@pls`` plays ``gm`` with the
probability-limited search, ``gm@depth`` with the depth-limited one; without a suffix the
command's ``--search`` decides (default ``depth``). A probability-limited player carries its
move model (``--move-model``, default the built-in ``gm`` model) and the threshold of its first
iteration (:data:`search.pls.pls.START`, 1/32) and the path probability above which the model
splits a node's probability (``--pls-model-above``, :data:`search.pls.pls.MODEL_ABOVE_PLAY`; below
it the static prior, the mixed search of issue 43); ``--depth D`` gives it D iterations (the last to
the threshold ``start * 4**-(D - 1)``), ``--nodes`` and ``--movetime`` bound it as they bound
the depth-limited search.
"""

from __future__ import annotations

from dataclasses import dataclass

from search.evaluation.evaluators import Evaluator, checked_evaluator
from search.tree.iterative import Searcher
from search.pls.move_model import MoveModel, load_move_model
from search.pls.pls import LEAF_MODEL_PLAY, MODEL_ABOVE_PLAY, START, PlsSearcher, load_leaf_model

#: the searches a player may use
SEARCHES = ("depth", "pls")
#: the move model of a probability-limited player unless ``--move-model`` names another
DEFAULT_MOVE_MODEL = "gm"


@dataclass(frozen=True)
class PlsPlayer:
    """A weight set playing with the probability-limited search: ``weights`` the evaluator,
    ``model`` the move model, ``start`` the first iteration's threshold in (0, 1],
    ``model_above`` the path probability above which the model splits a node's probability,
    ``leaf_model`` the pre-move model below it (``None``: the static prior)."""

    weights: Evaluator
    model: MoveModel
    start: float = START
    model_above: float = MODEL_ABOVE_PLAY
    leaf_model: MoveModel | None = None


#: what the numba engine plays with: an evaluator (depth-limited search) or a :class:`PlsPlayer`
Searchable = Evaluator | PlsPlayer
#: an engine of :func:`new_engine`: both have ``think``, ``clear``, ``abort`` and ``rearm``
Engine = Searcher | PlsSearcher


def split_search(spec: str, default: str = "depth") -> tuple[str, str]:
    """``"gm@pls"`` -> ``("gm", "pls")``; a spec without a search suffix -> ``(spec, default)``."""
    for search in SEARCHES:
        if spec.endswith("@" + search) and len(spec) > len(search) + 1:
            return spec[: -len(search) - 1], search
    return spec, default


def check_search(search: str) -> str:
    """``search`` if it is one of :data:`SEARCHES`; else a one-line ``ValueError``."""
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {', '.join(SEARCHES)}, not {search!r}")
    return search


# many parameters: PlsPlayer's fields, each with the default of play
def as_player(weights: Evaluator, search: str, model: MoveModel | None = None, start: float = START,
              model_above: float = MODEL_ABOVE_PLAY, leaf_model: MoveModel | str | None = LEAF_MODEL_PLAY) -> Searchable:
    """``weights`` for the depth-limited search, or with ``model`` (default: the built-in one),
    ``start``, ``model_above`` and ``leaf_model`` (a model, ``None`` for the static prior, or a
    spec for :func:`search.pls.pls.load_leaf_model`) (:class:`PlsPlayer`) for the
    probability-limited one."""
    if check_search(search) == "depth":
        return checked_evaluator(weights)
    leaf = load_leaf_model(leaf_model) if isinstance(leaf_model, str) else leaf_model
    return PlsPlayer(checked_evaluator(weights), model if model is not None else load_move_model(DEFAULT_MOVE_MODEL),
                     start, model_above, leaf)


def player_label(name: str, search: str) -> str:
    """The name a player plays under: ``name``, with ``@pls`` for the probability-limited search."""
    return name + "@pls" if search == "pls" else name


def evaluator_of(player: Searchable) -> Evaluator:
    """The evaluator a player searches with."""
    return player.weights if isinstance(player, PlsPlayer) else player


def checked_player(player: Searchable) -> Searchable:
    """``player`` with its evaluator checked (:func:`search.evaluation.evaluators.checked_evaluator`)."""
    if isinstance(player, PlsPlayer):
        return PlsPlayer(checked_evaluator(player.weights), player.model, player.start, player.model_above,
                         player.leaf_model)
    return checked_evaluator(player)


def new_engine(player: Searchable, tt_bits: int) -> Engine:
    """A fresh engine for ``player`` with a move-ordering table of ``2**tt_bits`` entries."""
    if isinstance(player, PlsPlayer):
        return PlsSearcher(player.weights, player.model, tt_bits=tt_bits, start=player.start,
                           model_above=player.model_above, leaf_model=player.leaf_model)
    return Searcher(player, tt_bits=tt_bits)


__all__ = ["DEFAULT_MOVE_MODEL", "Engine", "PlsPlayer", "SEARCHES", "Searchable", "as_player", "check_search",
           "checked_player", "evaluator_of", "new_engine", "player_label", "split_search"]
