"""The positions a run trains and validates on: the train and validation splits of a position
set, sampled per the run's settings, with each played move's index among the legal moves.

Two ways to hold the training positions (:class:`TrainingData`):

* **loaded** (the default, and every local run): their arrays in this process, read at once
  and checked before the run starts;
* **chunked** (``load_training_data(..., chunked=True)``: ``tuner tune --executor dask`` for a
  method whose trainer reads them only through :meth:`TrainingData.train_chunks`, MMTO's linear
  one, :attr:`tuner.methods.registry.Method.streams_train`): this process keeps only their row
  numbers in the split's file (:class:`tuner.training.position_set.PositionRows`, one int64,
  8 bytes, per position), and each chunk's arrays are built where the chunk is
  searched, by the Dask worker that holds it (:class:`TrainingChunks`, an executor's
  :class:`tuner.training.executor.ChunkSource`). The driver's memory then does not grow with
  the training positions' arrays. A position that cannot be read is still a one-line
  error naming the file, game and ply, raised by the chunk's first sweep rather than before the
  run starts;
* **streamed** (``load_training_data(..., streamed=True)``: Texel's method and the network's
  Texel training, when :attr:`tuner.methods.registry.Method.reads_stream` says so): the training
  positions are a :class:`tuner.training.position_set.PositionStream`, read a window of chunks at
  a time by the trainer, an epoch at a time; nothing of them is loaded here.

The validation positions are loaded in every case. Every way reads the set through
:mod:`tuner.training.position_set` (the same rows, the same checks and one-line errors); this
module chooses the way and the samples from the run's settings and adds what a sweep maps over.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from search.tree.search_api import threads
from tuner.cores import resolve_threads
from tuner.errors import TunerError
from tuner.training.position_set import (PositionRows, PositionStream, load_positions, position_rows,
                                         require_played_moves)
from tuner.training.positions import Positions, played_indices
from tuner.training.tune_config import TuneConfig


def result_array(pos: Positions) -> np.ndarray:
    """The positions' game results float64[P] from the mover's view (NaN: none, also for a
    source without results)."""
    return np.full(len(pos), np.nan) if pos.results is None else np.asarray(pos.results, dtype=np.float64)


@dataclass(frozen=True)
class ValueTarget:
    """The target of a value term on a position with a search score (a ``tuner selfplay``
    set): ``lam * sigma(k_cp * score) + (1 - lam) * R``, the score in centipawns and R the
    game's result, both from the mover's view (the NNUE convention, as Texel's ``--lam``).
    A position without a score keeps R when ``lam < 1`` and has no target when ``lam`` is 1."""

    lam: float
    k_cp: float

    def targets(self, pos: Positions) -> np.ndarray:
        """float64[P]: each position's target (NaN: none)."""
        results = result_array(pos)
        if pos.scores is None or self.lam == 0:
            return results if self.lam < 1 else np.full(len(pos), np.nan)
        scores = np.asarray(pos.scores, dtype=np.float64)
        scored = np.isfinite(scores)
        fitted = 0.5 * (1.0 + np.tanh(0.5 * self.k_cp * np.where(scored, scores, 0.0)))
        mixed = fitted if self.lam == 1 else self.lam * fitted + (1.0 - self.lam) * results
        out: np.ndarray = np.where(scored, mixed, results if self.lam < 1 else np.nan)
        return out


def train_arrays(pos: Positions, played_index: np.ndarray,
                 value: ValueTarget | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a sweep maps over: ``(boards, played_index, results)``, the results float64[P] from
    the mover's view (NaN: none, also for a source without results); with ``value``, its
    targets (:class:`ValueTarget`) in place of the results."""
    return pos.boards, played_index, result_array(pos) if value is None else value.targets(pos)


@dataclass(frozen=True)
class TrainingChunks:
    """The training positions of chunked :class:`TrainingData`, as a
    :class:`tuner.training.executor.ChunkSource`: :meth:`part` describes positions ``a:z`` (their
    row numbers, 8 bytes each: what a Dask task carries), :meth:`arrays` builds them where it is
    called: :func:`train_arrays` of the rows read from the split's file, bit for bit the slice
    ``a:z`` of the arrays a loaded run maps over (the same rows through the same conversion)."""

    rows: PositionRows
    value: ValueTarget | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def part(self, a: int, z: int) -> TrainingChunks:
        return TrainingChunks(self.rows.part(a, z), self.value)

    def problem(self) -> str | None:
        """Why this process cannot build the chunks (:meth:`PositionRows.problem`), or None."""
        return self.rows.problem()

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pos = self.rows.read()
        return train_arrays(pos, played_indices(pos), self.value)


class TrainingData:
    """The training and validation positions of a run, and each played move's index among the
    legal moves of its position (the row order of a sweep; -1 for a position without one).

    ``TrainingData(train, validation, train_played_index)``: loaded training positions; or
    ``TrainingData(None, validation, train_rows=rows)``: chunked ones (see the module
    docstring), of which this process holds only the row numbers. :meth:`train_chunks` is what
    a sweep maps over either way; :attr:`train` and :attr:`train_played_index` of chunked data
    load every training position into this process on first use (for the trainers that need
    the arrays; MMTO's linear trainer does not use them).
    """

    def __init__(self, train: Positions | None, validation: Positions, train_played_index: np.ndarray | None = None,
                 *, train_rows: PositionRows | None = None, train_stream: PositionStream | None = None) -> None:
        if train is None and train_rows is None and train_stream is None:
            raise ValueError("TrainingData needs the training positions, their rows or their stream")
        if train is not None and train_played_index is None:
            raise ValueError("TrainingData needs the played moves' indices of loaded training positions")
        self.validation = validation
        self.train_rows = train_rows
        #: the training positions as a stream (streamed data), else None
        self.train_stream = train_stream
        self._train = train
        self._index = train_played_index
        self._chunks: tuple[np.ndarray, np.ndarray, np.ndarray] | TrainingChunks | None = None

    @property
    def chunked(self) -> bool:
        """Whether the training positions are described by their rows (not loaded up front)."""
        return self.train_rows is not None

    @property
    def n_train(self) -> int:
        """The number of training positions (without loading chunked or streamed ones; a stream's
        rows, before a method's own filter)."""
        if self.train_stream is not None:
            return len(self.train_stream)
        return len(self.train_rows) if self.train_rows is not None else len(self.train)

    @property
    def train(self) -> Positions:
        """The training positions (chunked ones are loaded here, all of them, on first use)."""
        return self._loaded()[0]

    @property
    def train_played_index(self) -> np.ndarray:
        """int64[P_train]: each played move's index among its position's legal moves."""
        return self._loaded()[1]

    def _loaded(self) -> tuple[Positions, np.ndarray]:
        if self.train_stream is not None:
            raise RuntimeError("streamed training data has no loaded training positions: read train_stream")
        if self._train is None or self._index is None:
            assert self.train_rows is not None
            self._train = self.train_rows.read()
            self._index = played_indices(self._train)
        return self._train, self._index

    def train_chunks(self, value: ValueTarget | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | TrainingChunks:
        """What a sweep maps over (``Executor.map_chunks``), the same object at every call (a
        Dask executor ships it once per run): loaded data's ``(boards, played_index, results)``
        (:func:`train_arrays`, with ``value``'s targets as the results), or chunked data's
        :class:`TrainingChunks`, which build those arrays chunk by chunk where they are
        searched. ``value`` is a run's: the first call's is kept."""
        if self._chunks is None:
            self._chunks = (TrainingChunks(self.train_rows, value) if self.train_rows is not None
                            else train_arrays(self.train, self.train_played_index, value))
        return self._chunks


def load_training_data(cfg: TuneConfig, *, played_moves: bool = True, progress: bool = True, chunked: bool = False,
                       streamed: bool = False) -> TrainingData:
    """The train and validation splits of ``cfg.data`` (sampled per ``max_train`` and
    ``max_validation``), with every played move checked legal; one-line errors.

    ``played_moves``: the method learns from the played moves
    (:data:`tuner.methods.registry.PLAYED_MOVES` among its needs). Then a set whose train split
    has no played move (built from a position file with results only) is refused before its
    positions are read (:class:`tuner.training.position_set.NoPlayedMovesError`); of a set with
    some, only the positions that have one are used.

    ``chunked``: the training positions are not loaded, only their rows chosen (the same rows:
    :func:`tuner.training.position_set.position_rows`); their positions are checked when their
    chunks are built (see the module docstring). ``streamed``: the training positions are a
    :class:`tuner.training.position_set.PositionStream` of the same rows, not read here (a method
    that needs no played move only). The validation positions are loaded in every case.
    """
    if not cfg.data:
        raise TunerError("no position set given: pass --data DIR (built by 'tuner ingest')")
    if played_moves:
        require_played_moves(cfg.data)
    rows = None
    if streamed:
        if played_moves:
            raise ValueError("a streamed run is for methods that need no played move")
        stream = PositionStream(cfg.data, "train", limit=cfg.max_train, seed=cfg.seed)
        if len(stream) == 0:
            raise TunerError(f"{cfg.data}: the train split holds no positions")
        validation = load_positions(cfg.data, "validation", limit=cfg.max_validation, seed=cfg.seed + 1,
                                    progress=progress)
        return TrainingData(None, validation, train_stream=stream)
    if chunked:
        rows = position_rows(cfg.data, "train", limit=cfg.max_train, seed=cfg.seed, moves_only=played_moves)
    else:
        train = load_positions(cfg.data, "train", limit=cfg.max_train, seed=cfg.seed, progress=progress)
    if len(rows if rows is not None else train) == 0:
        raise TunerError(f"{cfg.data}: the train split holds no positions")
    validation = load_positions(cfg.data, "validation", limit=cfg.max_validation, seed=cfg.seed + 1,
                                progress=progress)
    if played_moves:
        validation = validation.subset(np.flatnonzero(validation.has_moves()))
    if rows is not None:
        return TrainingData(None, validation, train_rows=rows)
    if played_moves:
        train = train.subset(np.flatnonzero(train.has_moves()))
    with threads(resolve_threads(cfg.threads)):
        index = played_indices(train)
    return TrainingData(train, validation, index)


__all__ = ["TrainingChunks", "TrainingData", "ValueTarget", "load_training_data", "result_array", "train_arrays"]
