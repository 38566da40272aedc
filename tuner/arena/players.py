"""The players of ``tuner bench match|compare|epd``, ``tuner selfplay`` and ``tuner uci``: a
weight set searched by the playing search (:class:`search.play.searcher.PlaySearcher`, the
default: selective alpha-beta), by the exact search training uses
(:class:`search.tree.iterative.Searcher`: full-width alpha-beta to a depth) or
probability-limited (:class:`search.pls.pls.PlsSearcher`, Giraffe's search, Lai 2015), or an
external engine.

A player spec is a weight set (a built-in set's name, a weights or network file, a run folder
where the command takes one) with an optional search suffix: ``gm@pls`` plays ``gm`` with the
probability-limited search, ``gm@exact`` with the exact one (``gm@depth``, its name before
issue 57, still works), ``gm@play`` with the playing search, ``gm@play-lmr,null_move`` with it
without those features (the ablations of ``docs/search.md``); without a suffix the command's
``--search`` decides (default ``play``). A probability-limited player carries its
move model (``--move-model``, default the built-in ``gm`` model) and the threshold of its first
iteration (:data:`search.pls.pls.START`, 1/32) and the path probability above which the model
splits a node's probability (``--pls-model-above``, :data:`search.pls.pls.MODEL_ABOVE_PLAY`; below
it the static prior, the mixed search of issue 43); ``--depth D`` gives it D iterations (the last to
the threshold ``start * 4**-(D - 1)``), ``--nodes`` and ``--movetime`` bound it as they bound
the depth-limited search.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from search.core.convert import from_fen
from search.evaluation.evaluators import Evaluator, checked_evaluator
from search.play.kernel import FEATURES
from search.play.searcher import PlaySearcher
from search.tree.iterative import Searcher
from search.pls.move_model import MoveModel, load_move_model
from search.pls.pls import LEAF_MODEL_PLAY, MODEL_ABOVE_PLAY, START, PlsSearcher, load_leaf_model

#: the searches a player may use (the first is the default)
SEARCHES = ("play", "exact", "pls")
#: the default search of the commands that play
DEFAULT_SEARCH = SEARCHES[0]
#: old names of searches, still accepted (``depth``: the exact search before issue 57)
SEARCH_ALIASES = {"depth": "exact"}
#: what ``--search`` and the ``Search`` option accept
SEARCH_CHOICES = (*SEARCHES, *SEARCH_ALIASES)
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


@dataclass(frozen=True)
class PlayPlayer:
    """A weight set playing with the playing search: ``weights`` the evaluator, ``features`` the
    search features switched off (names of :data:`search.play.kernel.FEATURES`; empty: all on)."""

    weights: Evaluator
    features_off: tuple[str, ...] = ()


#: what the numba engine plays with: an evaluator (the exact search), a :class:`PlayPlayer` or a
#: :class:`PlsPlayer`
Searchable = Evaluator | PlsPlayer | PlayPlayer
#: an engine of :func:`new_engine`: all have ``think``, ``clear``, ``abort`` and ``rearm``
Engine = Searcher | PlsSearcher | PlaySearcher


#: the playing search with features off: ``play-F1,F2`` (names of :data:`search.play.kernel.FEATURES`)
PLAY_WITHOUT = "play-"


def split_search(spec: str, default: str = DEFAULT_SEARCH) -> tuple[str, str]:
    """``"gm@pls"`` -> ``("gm", "pls")``, ``"gm@depth"`` -> ``("gm", "exact")``, ``"gm@play-lmr"``
    -> ``("gm", "play-lmr")`` (the playing search without late-move reductions); a spec without a
    search suffix -> ``(spec, default)``."""
    name, at, suffix = spec.rpartition("@")
    if at and name and (suffix in SEARCH_CHOICES or suffix.startswith(PLAY_WITHOUT)):
        return name, check_search(suffix)
    return spec, check_search(default)


def check_search(search: str) -> str:
    """``search`` (an old name as its new one) if it is one of :data:`SEARCH_CHOICES` or
    ``play-F1,F2`` with known feature names; else a one-line ``ValueError``."""
    if search.startswith(PLAY_WITHOUT):
        features_off(search)
        return search
    if search not in SEARCH_CHOICES:
        raise ValueError(f"search must be one of {', '.join(SEARCH_CHOICES)}, not {search!r}")
    return SEARCH_ALIASES.get(search, search)


def features_off(search: str) -> tuple[str, ...]:
    """The features a ``play-F1,F2`` search switches off (``()`` for ``play``); a one-line
    ``ValueError`` naming an unknown one."""
    if not search.startswith(PLAY_WITHOUT):
        return ()
    names = tuple(f for f in search[len(PLAY_WITHOUT):].split(",") if f)
    unknown = [f for f in names if f not in FEATURES]
    if unknown or not names:
        raise ValueError(f"{search!r}: unknown search features {', '.join(unknown) or '(none given)'}; "
                         f"known: {', '.join(FEATURES)}")
    return names


# many parameters: PlsPlayer's fields, each with the default of play
def as_player(weights: Evaluator, search: str, model: MoveModel | None = None, start: float = START,
              model_above: float = MODEL_ABOVE_PLAY, leaf_model: MoveModel | str | None = LEAF_MODEL_PLAY) -> Searchable:
    """``weights`` for ``search``: a :class:`PlayPlayer` for the playing search, the evaluator
    itself for the exact search, or with ``model`` (default: the built-in one),
    ``start``, ``model_above`` and ``leaf_model`` (a model, ``None`` for the static prior, or a
    spec for :func:`search.pls.pls.load_leaf_model`) (:class:`PlsPlayer`) for the
    probability-limited one."""
    kind = check_search(search)
    if kind == "exact":
        return checked_evaluator(weights)
    if kind == "play" or kind.startswith(PLAY_WITHOUT):
        return PlayPlayer(checked_evaluator(weights), features_off(kind))
    leaf = load_leaf_model(leaf_model) if isinstance(leaf_model, str) else leaf_model
    return PlsPlayer(checked_evaluator(weights), model if model is not None else load_move_model(DEFAULT_MOVE_MODEL),
                     start, model_above, leaf)


def player_label(name: str, search: str) -> str:
    """The name a player plays under: ``name`` for the playing search, with ``@pls`` or ``@exact``
    for the others."""
    kind = check_search(search)
    return name if kind == "play" else f"{name}@{kind}"


def evaluator_of(player: Searchable) -> Evaluator:
    """The evaluator a player searches with."""
    return player.weights if isinstance(player, (PlsPlayer, PlayPlayer)) else player


def checked_player(player: Searchable) -> Searchable:
    """``player`` with its evaluator checked (:func:`search.evaluation.evaluators.checked_evaluator`)."""
    if isinstance(player, PlsPlayer):
        return PlsPlayer(checked_evaluator(player.weights), player.model, player.start, player.model_above,
                         player.leaf_model)
    if isinstance(player, PlayPlayer):
        return PlayPlayer(checked_evaluator(player.weights), player.features_off)
    return checked_evaluator(player)


def new_engine(player: Searchable, tt_bits: int, *, threads: int = 1) -> Engine:
    """A fresh engine for ``player`` with a table of ``2**tt_bits`` entries (the exact search's
    12-byte move-ordering entries; the playing search's entries take 32 bytes, so it gets a
    quarter as many: less memory than the exact search's table, as the ``Hash`` option asks);
    ``threads``: the playing search's Lazy SMP threads (the other searches use one)."""
    if isinstance(player, PlsPlayer):
        return PlsSearcher(player.weights, player.model, tt_bits=tt_bits, start=player.start,
                           model_above=player.model_above, leaf_model=player.leaf_model)
    if isinstance(player, PlayPlayer):
        return PlaySearcher(player.weights, tt_bits=max(tt_bits - 2, 1),
                            features={f: False for f in player.features_off}, threads=threads)
    return Searcher(player, tt_bits=tt_bits)


def load_kernels(player: Searchable) -> None:
    """Load ``player``'s search kernels from numba's cache (compile them on a cold one) with a
    depth-1 search of the start position on a throwaway engine, so that loading (about 0.7 s on
    a warm cache) does not eat a timed first move: at 100 ms a move, the first move of each match
    worker came from an iteration cut at depth 1 (a rook lost in one game against Stockfish)."""
    new_engine(player, 8).think(from_fen(chess.STARTING_FEN), [], max_depth=1)


__all__ = ["DEFAULT_MOVE_MODEL", "DEFAULT_SEARCH", "Engine", "PlayPlayer", "PlsPlayer", "SEARCHES", "SEARCH_ALIASES",
           "SEARCH_CHOICES", "Searchable", "as_player", "check_search",
           "checked_player", "evaluator_of", "load_kernels", "new_engine", "player_label", "split_search"]
