"""The move-probability model as a user calls it: features, scores and probabilities of the
legal moves of many positions, and the model's weights files.

A model is a weight per feature of :mod:`search.pls.move_catalog` (float64[N_MOVE_FEATURES]). A
legal move's *score* is the sum of the weights of its active features (log-odds units); the
model's probability of a move is the softmax of the scores over the position's legal moves.
The features are defined in ``docs/move-model.md``; the kernels are
:mod:`search.pls.move_model_kernels`. Moves come in :func:`search.core.movegen.generate_moves` order (a
sweep's rows), as packed int32 moves (:mod:`search.core.board`). :func:`search_with_order` runs the
alpha-beta search with the model ordering the moves (:mod:`search.pls.model_ordering`).

Weights files (``schema_version`` 1)::

    {
      "kind": "movetuner-move-model",
      "schema_version": 1,
      "layout_hash": "<search.pls.move_catalog.MOVE_LAYOUT_HASH>",
      "evaluation": {"weights": "gm", "hash": "<evaluation_hash()>"},
      "score": "...",
      "features": {"piece_to.pawn.e4": 0.42, ...},   # every feature name, finite numbers
      "metadata": {...}                              # free: how the model was made
    }

Loading (:func:`load_move_model`) refuses with a one-line :class:`MoveModelFileError` naming the
file and the place: invalid JSON, another kind, version or layout, a missing or unknown feature,
a value that is not a finite number or is beyond :data:`MAX_ABS_MOVE_WEIGHT`, a model made with other evaluation weights than the
built-in ``gm`` set that some features measure. Saving is atomic (:func:`search.params.weights.atomic_write_text`).
``gm`` names the built-in model (``search/data/move-model-gm.json``, trained on the grandmaster
games' train split and chosen on their validation split), ``gm-premove`` the built-in pre-move
model (``search/data/move-model-gm-premove.json``: the same data, only the groups of
:data:`search.pls.move_catalog.PREMOVE_GROUPS`; the mixed search's model near the leaves).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from search.core.input_limits import InputLimitError, loads_json, read_capped
from search.params.catalog import PLUGIN_START
from search.core.convert import Board, move_to_uci
from search.pls.move_catalog import (EVALUATION, MOVE_FEATURE_INDEX, MOVE_FEATURE_NAMES, MOVE_LAYOUT_HASH, N_GROUPS,
                                 N_MOVE_FEATURES)
from search.pls.model_ordering import ORDER_DEFAULT, ORDER_MODEL, ORDER_QUIET, model_search_batch_kernel
from search.pls.move_model_kernels import count_kernel, features_kernel, probabilities_kernel
from search.tree.search_api import DEFAULT_BUDGET, Evaluator, threads
from search.core.validate import check_board, check_boards
from search.evaluation.validate import check_evaluator
from search.params.weights import atomic_write_text, load_weights

KIND = "movetuner-move-model"
SCHEMA_VERSION = 1
#: the largest weight a move model may hold, in log-odds units (the built-in ``gm`` model's
#: largest is about 2.3). A score difference of 745 already makes ``exp`` underflow, so no model
#: needs more; the kernels turn scores into int64 ordering keys and log-probabilities (times
#: 2**20, summed over at most 64 plies), which this keeps far from overflow
MAX_ABS_MOVE_WEIGHT = 10_000.0
#: built-in models by name (files in search/data/)
BUILTIN_MOVE_MODELS = {name: Path(__file__).resolve().parents[1] / "data" / f"move-model-{name}.json"
                       for name in ("gm", "gm-premove")}


@functools.cache
def evaluation_weights() -> np.ndarray:
    """The linear weights (int32[N_FEATURES]) of the evaluation that some features measure
    (:data:`search.pls.move_catalog.EVALUATION`, the built-in ``gm`` set); read once."""
    w: np.ndarray = load_weights(EVALUATION).values
    return w


@functools.cache
def evaluation_hash() -> str:
    """The first 16 hex digits of the SHA-256 of :func:`evaluation_weights` (int32, little-endian)
    over the built-in terms: a model file records it, and one made with other evaluation weights
    is refused. The features measure the built-in evaluation only (the kernels read the built-in
    terms' weights), so a term plug-in (:mod:`search.params.terms`) changes neither."""
    built_in = evaluation_weights()[:PLUGIN_START]
    return hashlib.sha256(built_in.astype("<i4").tobytes()).hexdigest()[:16]


class MoveModelFileError(ValueError):
    """A move-model file that cannot be used; the message is one line naming the file and place."""


@dataclass(frozen=True)
class MoveModel:
    """A move model: ``weights`` float64[N_MOVE_FEATURES] (log-odds units, one per feature of
    :data:`search.pls.move_catalog.MOVE_FEATURE_NAMES`) and free ``metadata``."""

    weights: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        w = np.ascontiguousarray(self.weights, dtype=np.float64)
        if w.shape != (N_MOVE_FEATURES,):
            raise ValueError(f"move-model weights must have shape ({N_MOVE_FEATURES},), not {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("move-model weights must be finite")
        if np.any(np.abs(w) > MAX_ABS_MOVE_WEIGHT):
            i = int(np.argmax(np.abs(w)))
            raise ValueError(f"move-model weight {MOVE_FEATURE_NAMES[i]!r} = {w[i]:g} is beyond the limit "
                             f"+-{MAX_ABS_MOVE_WEIGHT:g}")
        object.__setattr__(self, "weights", w)

    @classmethod
    def uniform(cls) -> MoveModel:
        """The model with every weight 0: every legal move equally likely."""
        return cls(np.zeros(N_MOVE_FEATURES), {"name": "uniform"})

    def by_name(self) -> dict[str, float]:
        return {name: float(v) for name, v in zip(MOVE_FEATURE_NAMES, self.weights)}


@dataclass(frozen=True)
class MoveFeatures:
    """The legal moves of many positions and their feature slots.

    Rows of position ``p``: ``pos_ptr[p]:pos_ptr[p+1]`` (int64[P+1]); ``moves`` int32[M] packed;
    ``slots`` int16[M, N_GROUPS], the index of each group's active feature or -1."""

    pos_ptr: np.ndarray
    moves: np.ndarray
    slots: np.ndarray


@dataclass(frozen=True)
class MoveProbabilities:
    """The legal moves of many positions with the model's ``scores`` (float64[M], log-odds) and
    ``probabilities`` (float64[M], summing to 1 over each position's rows); rows as in
    :class:`MoveFeatures`."""

    pos_ptr: np.ndarray
    moves: np.ndarray
    scores: np.ndarray
    probabilities: np.ndarray


def _pos_ptr(boards: np.ndarray) -> np.ndarray:
    counts = count_kernel(boards)
    pos_ptr = np.zeros(len(boards) + 1, dtype=np.int64)
    np.cumsum(counts, out=pos_ptr[1:])
    return pos_ptr


def move_features(boards: np.ndarray, *, n_threads: int | None = None) -> MoveFeatures:
    """The feature slots of every legal move of every board (uint64[P, BOARD_WORDS]);
    :class:`search.core.validate.InvalidBoardError` for a board that is not a legal position."""
    boards = check_boards(boards)
    with threads(n_threads):
        pos_ptr = _pos_ptr(boards)
        moves, slots = features_kernel(boards, pos_ptr, evaluation_weights())
    return MoveFeatures(pos_ptr, moves, slots)


def move_probabilities(boards: np.ndarray, model: MoveModel, *, n_threads: int | None = None) -> MoveProbabilities:
    """Scores and probabilities of every legal move of every board (uint64[P, BOARD_WORDS]) under
    ``model``. A position without a legal move has no rows."""
    boards = check_boards(boards)
    with threads(n_threads):
        pos_ptr = _pos_ptr(boards)
        moves, scores, probs = probabilities_kernel(boards, pos_ptr, model.weights, evaluation_weights())
    return MoveProbabilities(pos_ptr, moves, scores, probs)


def predict(board: Board, model: MoveModel) -> list[tuple[str, float]]:
    """``(uci, probability)`` of every legal move of ``board``, most likely first (ties in
    generation order)."""
    b = check_board(board)
    mp = move_probabilities(b[None, :], model)
    order = np.argsort(-mp.probabilities, kind="stable")
    return [(move_to_uci(int(mp.moves[i])), float(mp.probabilities[i])) for i in order]


#: the move orders of :func:`search_with_order` (:mod:`search.pls.model_ordering`)
ORDERS = {"default": ORDER_DEFAULT, "model": ORDER_MODEL, "quiet": ORDER_QUIET}


@dataclass(frozen=True)
class OrderedSearches:
    """Searches of many boards: ``scores`` int64[P] (eval units, side to move's view), ``nodes``
    int64[P] visited, ``budget_exhausted`` bool[P]."""

    scores: np.ndarray
    nodes: np.ndarray
    budget_exhausted: np.ndarray


def search_with_order(boards: np.ndarray, depth: int, weights: Evaluator, model: MoveModel, *, order: str = "model",
                      budget: int = DEFAULT_BUDGET, n_threads: int | None = None) -> OrderedSearches:
    """Alpha-beta of each board (uint64[P, BOARD_WORDS]) to ``depth`` plies plus quiescence with
    the evaluator ``weights``, its full-width nodes' moves ordered by ``order``: ``"default"``
    (the search's own order: :func:`search.tree.search_api.search_many` gives the same searches),
    ``"model"`` (every move by ``model``'s score after the table's move) or ``"quiet"`` (captures
    and killers as by default, quiet moves by the model). The values are those of the default
    search whatever the order (unless the budget runs out); the nodes differ."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    if not (isinstance(depth, int) and 0 <= depth < 64 and isinstance(budget, int) and budget >= 1):
        raise ValueError(f"depth must be 0..63 and budget >= 1, not {depth!r} and {budget!r}")
    boards = check_boards(boards)
    ev = check_evaluator(weights)
    with threads(n_threads):
        scores, nodes, hit = model_search_batch_kernel(boards, depth, ev, budget, model.weights, evaluation_weights(),
                                                       ORDERS[order])
    return OrderedSearches(scores, nodes, hit)


def slot_scores(slots: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """float64[M]: the score of each row of ``slots`` (int16[M, N_GROUPS]) under ``weights``
    (float64[N_MOVE_FEATURES]), summed over the groups in order (as the kernels do)."""
    padded = np.append(np.asarray(weights, dtype=np.float64), 0.0)  # slot -1 reads the 0 at the end
    scores = np.zeros(len(slots), dtype=np.float64)
    for g in range(N_GROUPS):
        scores += padded[slots[:, g]]
    return scores


# ---------------------------------------------------------------- files


def to_document(model: MoveModel) -> dict[str, Any]:
    return {
        "kind": KIND,
        "schema_version": SCHEMA_VERSION,
        "layout_hash": MOVE_LAYOUT_HASH,
        "evaluation": {"weights": EVALUATION, "hash": evaluation_hash()},
        "score": "a legal move's score is the sum of the weights of its active features (docs/move-model.md); "
                 "its probability is the softmax of the scores over the position's legal moves",
        "features": {name: float(f"{v:.6g}") for name, v in zip(MOVE_FEATURE_NAMES, model.weights)},
        "metadata": model.metadata,
    }


def dumps(model: MoveModel) -> str:
    return json.dumps(to_document(model), indent=1) + "\n"


def save_move_model(path: str | Path, model: MoveModel) -> None:
    """Write ``model`` to ``path`` atomically (weights rounded to 6 significant digits)."""
    atomic_write_text(path, dumps(model))


def parse_document(doc: Any, where: str) -> MoveModel:
    """Validate a parsed move-model document; ``where`` names its source in error messages."""
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        kind = doc.get("kind") if isinstance(doc, dict) else None
        raise MoveModelFileError(f"{where}: not a move-model file (kind is {kind!r}, expected {KIND!r})")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise MoveModelFileError(f"{where}: unsupported schema_version {doc.get('schema_version')!r} "
                                 f"(this version reads {SCHEMA_VERSION})")
    if doc.get("layout_hash") != MOVE_LAYOUT_HASH:
        raise MoveModelFileError(f"{where}: feature layout {doc.get('layout_hash')!r} is not this version's "
                                 f"({MOVE_LAYOUT_HASH}); train the model again")
    evaluation = doc.get("evaluation")
    if evaluation != {"weights": EVALUATION, "hash": evaluation_hash()}:
        raise MoveModelFileError(f"{where}: made with the evaluation {evaluation!r}, not this version's built-in "
                                 f"{EVALUATION!r} weights ({evaluation_hash()}); train the model again")
    features = doc.get("features")
    if not isinstance(features, dict):
        raise MoveModelFileError(f"{where}: 'features' must be an object of feature name -> number")
    w = np.zeros(N_MOVE_FEATURES, dtype=np.float64)
    for name, value in features.items():
        i = MOVE_FEATURE_INDEX.get(name)
        if i is None:
            raise MoveModelFileError(f"{where}: unknown feature {name!r}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise MoveModelFileError(f"{where}: feature {name!r} is {value!r}, not a finite number")
        if abs(value) > MAX_ABS_MOVE_WEIGHT:
            raise MoveModelFileError(f"{where}: feature {name!r} = {value:g} is beyond the move model's limit "
                                     f"+-{MAX_ABS_MOVE_WEIGHT:g} (log-odds)")
        w[i] = value
    missing = [n for n in MOVE_FEATURE_NAMES if n not in features]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise MoveModelFileError(f"{where}: missing feature {missing[0]!r}{more}")
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        raise MoveModelFileError(f"{where}: 'metadata' must be an object")
    return MoveModel(w, metadata)


def load_move_model(spec: str | Path) -> MoveModel:
    """The model a spec names: ``gm`` or ``gm-premove`` (built in, :data:`BUILTIN_MOVE_MODELS`), ``uniform`` (every
    weight 0), or a move-model file; one-line :class:`MoveModelFileError` otherwise."""
    if isinstance(spec, str) and not Path(spec).exists():
        if spec == "uniform":
            return MoveModel.uniform()
        if spec in BUILTIN_MOVE_MODELS:
            spec = BUILTIN_MOVE_MODELS[spec]
    path = Path(spec)
    try:
        text = read_capped(path).decode("utf-8")
    except FileNotFoundError:
        raise MoveModelFileError(f"{path}: no such move-model file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise MoveModelFileError(f"{path}: cannot read move-model file ({exc.__class__.__name__})") from None
    except InputLimitError as exc:
        raise MoveModelFileError(str(exc)) from None
    try:
        doc = loads_json(text, str(path))
    except InputLimitError as exc:
        raise MoveModelFileError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise MoveModelFileError(f"{path}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})") from None
    return parse_document(doc, str(path))


__all__ = ["BUILTIN_MOVE_MODELS", "KIND", "MAX_ABS_MOVE_WEIGHT", "ORDERS", "evaluation_hash", "evaluation_weights", "MoveFeatures", "MoveModel",
           "MoveModelFileError", "MoveProbabilities", "OrderedSearches", "search_with_order",
           "SCHEMA_VERSION", "dumps", "load_move_model", "move_features", "move_probabilities", "parse_document",
           "predict", "save_move_model", "slot_scores", "to_document"]
