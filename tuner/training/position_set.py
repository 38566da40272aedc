"""A position set read as training needs it: the one reader of a position set's splits for
``tuner tune``'s methods (and for the other commands that train or measure on a set: ``tuner
moves``, ``tuner bench``).

A position set is what ``tuner ingest`` writes (:mod:`tuner.ingest`): a manifest and a file a
split, Parquet or compact (``.mtpos``). Its files are opened by :mod:`tuner.ingest.reader` (the
manifest, the split's file, a frame of its columns), which ``tuner ingest``, ``merge``,
``convert`` and ``export`` use too; this module turns a split into :class:`Positions`
(:mod:`tuner.training.positions`: the FENs or the compact records to the numba core's boards,
the played moves to UCI keys, the results and scores to the side to move's view), every board
and played move checked (one-line :class:`tuner.errors.TunerError` naming the file, game and
ply), in one of three ways:

* **loaded** (:func:`load_positions`): the split's positions at once, in this process;
* **described** (:func:`position_rows`, :class:`PositionRows`): their row numbers only (8
  bytes a position), read where they are needed (a Dask worker, :mod:`tuner.training.training_data`'s
  chunked data) as the same positions :func:`load_positions` gives;
* **streamed** (:class:`PositionStream`): chunk by chunk, an epoch at a time, a window of
  chunks in memory (below).

In every way, ``limit`` (``--max-train``, ``--max-validation``) keeps the same seeded sample of
the split's rows (:func:`sample_rows`; :func:`split_size` counts it without reading a row), and
the rows come in their stored order (unless a stream shuffles them). A set without played moves
is refused here for a method that learns from them (:func:`require_played_moves`).

The stream
----------
The methods that search every position at random (MMTO, the GA, the bootstrapping methods)
hold their training positions in memory. Texel's method and the network's Texel training only
pass over them, an epoch at a time, so they can read them as a stream and keep only a window of
them in memory, however large the set:

* **chunks**: a compact split's own chunks (:mod:`tuner.ingest.compact_file`, 65,536 records
  each by default), or slices of :data:`PARQUET_CHUNK_ROWS` rows of a Parquet split; with
  ``limit`` (``--max-train``), only the rows :func:`sample_rows` keeps, the same rows an
  in-memory run loads;
* **an epoch** visits every chunk once, in a seeded random order (``[seed, epoch]``), gathered
  ``buffer_chunks`` at a time into a **window** whose rows are shuffled together (seed
  ``[seed, epoch, window]``): a shuffle across chunks and within a buffer of
  ``buffer_chunks`` chunks. With ``shuffle=False`` the chunks and rows come in stored order;
* **a filter** (``keep``, e.g. Texel's quiet positions with a target) is applied to each chunk
  before its rows join a window; its mask is kept from the chunk's first read, a bit a row, so
  that later epochs unpack (compact) or parse (Parquet) only the rows kept;
* **memory**: the stream holds the split file's index (16 bytes a chunk), the sampled row
  numbers when ``limit`` samples (8 bytes a row), the filter's masks (a bit a row) and the
  window it yields; nothing else grows with the set;
* **checks**: the first time this stream reads a chunk, it is checked as a loaded split is
  (the compact records, boards and played moves, or the Parquet columns, FENs and played moves);
  when it reads the chunk again, a compact chunk's checksum (checked at every read) says it
  holds the same bytes, and only that is checked (a Parquet chunk's columns and FENs are
  checked at every read, its moves once).

Every result of a stream depends on the seed, the epoch and ``buffer_chunks`` only, so an epoch
read again (a resumed run) is the same epoch.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from search.core.board import BOARD_WORDS, W_STM
from search.core.convert import IllegalMoveError, uci_key
from search.core.fen_batch import parse_fens
from tuner.errors import TunerError
from tuner.progress import progress_bar
from tuner.training.positions import (NO_PLAYED_MOVE, Positions, RowLabels, concatenate, no_positions,
                                      played_indices)

if TYPE_CHECKING:
    from tuner.ingest.compact_file import CompactFile


class NoPlayedMovesError(TunerError):
    """A set none of whose training positions has a played move (built from a position file with
    results only), given to a method that learns from the played moves."""


def _moves(folder: str | Path, split: str) -> Any:
    """The split's ``move`` column (a polars Series, null where a position has none): the one
    column read to choose rows or check a set has played moves."""
    from tuner.ingest.reader import read_split  # noqa: PLC0415 - polars: only when reading

    return read_split(folder, split, columns=["move"])["move"]


def require_played_moves(folder: str | Path, split: str = "train") -> None:
    """Refuse (:class:`NoPlayedMovesError`, one line naming the set) a split whose positions have
    no played move at all (a position file with results only); an empty split passes."""
    moves = _moves(folder, split)
    if len(moves) and moves.null_count() == len(moves):
        raise NoPlayedMovesError(f"{folder} has no played moves (a position file with results only)")


def sample_rows(n: int, limit: int, seed: int) -> np.ndarray:
    """The row numbers (int64, sorted) that :func:`load_positions` keeps of a split of ``n``
    rows: all of them, or with ``0 < limit < n`` a seeded random sample of ``limit``."""
    if 0 < limit < n:
        return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False)).astype(np.int64)
    return np.arange(n, dtype=np.int64)


def split_size(folder: str | Path, split: str, *, limit: int = 0) -> int:
    """The number of positions of ``split`` that reading it with ``limit`` gives
    (:func:`sample_rows`), from the split file's index or metadata only."""
    from tuner.ingest.reader import split_rows  # noqa: PLC0415 - polars: only when reading

    n = split_rows(folder, split)
    return min(n, limit) if limit > 0 else n


# ------------------------------------ rows to positions: one conversion for every way of reading

REQUIRED_COLUMNS = ["game_id", "ply", "fen", "move", "stm", "result", "score"]

#: a game's result tag -> White's score (``*``: unknown)
WHITE_SCORE = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def mover_results(result_tags: list[str], stm: np.ndarray) -> np.ndarray:
    """The result from the side to move's view (float64[P]: 1, 0.5, 0; NaN for ``*`` or an
    unknown tag) from the games' result tags and the side to move (0 White, 1 Black)."""
    white = np.array([WHITE_SCORE.get(r, np.nan) for r in result_tags], dtype=np.float64)
    return np.where(np.asarray(stm) == 0, white, 1.0 - white)


def mover_scores(white_scores: Any, stm: np.ndarray) -> np.ndarray | None:
    """The scores (a polars column, White's view, nulls where none) from the side to move's view,
    float64[P] with NaN for a null; None when no row has one."""
    if white_scores.null_count() == len(white_scores):
        return None
    white = white_scores.to_numpy().astype(np.float64)  # nulls come out as NaN
    out: np.ndarray = np.where(np.asarray(stm) == 0, white, -white)
    return out


def _from_frame(frame: Any, source: Path, split: str, progress: bool, *, check_moves: bool = True) -> Positions:
    """The positions of a frame of :data:`REQUIRED_COLUMNS` read from ``source``; with
    ``check_moves``, every played move checked legal (one-line errors naming the file, game and
    ply)."""
    fens = frame["fen"].to_list()
    ucis = frame["move"].to_list()
    game_ids = frame["game_id"].to_numpy().astype(np.int64)
    labels = RowLabels(source, game_ids, frame["ply"].to_numpy())
    boards = _boards(fens, labels, progress and len(fens) >= 20000, split)
    keys = np.full(len(fens), NO_PLAYED_MOVE, dtype=np.int32)
    for i, uci in enumerate(ucis):
        if uci is None:
            continue
        try:
            keys[i] = uci_key(uci)
        except IllegalMoveError as exc:
            raise TunerError(f"{labels[i]}: {exc}") from None
    stm = frame["stm"].to_numpy()
    wrong = np.flatnonzero(boards[:, W_STM].astype(np.int64) != stm) if len(fens) else np.zeros(0, np.int64)
    if len(wrong):  # the results and scores would be read from the wrong side's view
        i = int(wrong[0])
        raise TunerError(f"{labels[i]}: column stm is {int(stm[i])} but its FEN has "
                         f"{'White' if int(boards[i, W_STM]) == 0 else 'Black'} to move ({len(wrong)} such row(s)); "
                         "rebuild the set with tuner ingest")
    results = mover_results(frame["result"].to_list(), stm)
    pos = Positions(boards, keys, game_ids, labels, results, mover_scores(frame["score"], stm))
    if check_moves:
        played_indices(pos)
    return pos


#: FENs parsed per call of the batch parser when loading
_FEN_BATCH = 50_000


def _boards(fens: list[str], labels: Sequence[str], progress: bool, split: str) -> np.ndarray:
    """The boards of a split's FENs (uint64[P, BOARD_WORDS]); a one-line error naming the first
    that is not a valid position."""
    boards = np.zeros((len(fens), BOARD_WORDS), dtype=np.uint64)
    bar = progress_bar(total=len(fens), desc=f"load {split}", unit="pos", disable=not progress, leave=False)
    for a in range(0, len(fens), _FEN_BATCH):
        part = [f.encode("ascii", "replace") for f in fens[a:a + _FEN_BATCH]]
        ends = np.cumsum([len(f) + 1 for f in part], dtype=np.int64) - 1
        batch = parse_fens(b"\n".join(part), ends - np.array([len(f) for f in part], dtype=np.int64), ends)
        bad = np.flatnonzero(~batch.ok)
        if len(bad):
            raise TunerError(f"{labels[a + bad[0]]}: {batch.errors[bad[0]]} in {fens[a + bad[0]]!r}")
        boards[a:a + len(part)] = batch.boards
        bar.update(len(part))
    bar.close()
    return boards


def positions_of_records(path: Path, records: np.ndarray, *, check: bool = True) -> Positions:
    """The positions of records read from the compact split ``path``, built from the records'
    boards (:func:`tuner.ingest.compact.training_arrays`), every board checked possible and every
    played move legal (one-line errors naming the file, game and ply); ``check=False`` skips
    both, for records that passed them before (a stream's chunk read again)."""
    from tuner.ingest.compact import training_arrays  # noqa: PLC0415 - polars: only when reading

    arrays = training_arrays(records, label=RowLabels(path, records["game_id"], records["ply"]).__getitem__,
                             check=check)
    labels = RowLabels(path, arrays.game_ids, arrays.plies)  # not the records' fields: those would keep the records
    odd = np.flatnonzero(~arrays.usable)
    if len(odd):
        raise TunerError(f"{labels[odd[0]]}: a Chess960 castling right, which the search's boards cannot hold "
                         f"({len(odd)} such position(s))")
    scores = None if np.isnan(arrays.scores).all() else arrays.scores
    pos = Positions(arrays.boards, arrays.played, arrays.game_ids, labels, arrays.results, scores)
    if check:
        played_indices(pos)
    return pos


def _from_records(path: Path, rows: Callable[[Any], np.ndarray]) -> Positions:
    """The positions of the rows ``rows(file)`` of the compact split ``path``
    (:func:`positions_of_records`)."""
    from tuner.ingest.compact_file import CompactFile  # noqa: PLC0415 - numba: only for a compact set

    return positions_of_records(path, rows(CompactFile(path)))


def _parquet_rows(folder: str | Path, split: str, path: Path, rows: np.ndarray, *, progress: bool = False,
                  check: bool = True) -> Positions:
    """The positions of ``rows`` (int64, sorted, distinct) of the Parquet split ``path`` (the
    file of ``split`` in ``folder``), their played moves checked with ``check``."""
    from tuner.ingest.reader import read_split  # noqa: PLC0415 - polars: only when reading

    frame = read_split(folder, split, columns=REQUIRED_COLUMNS, rows=rows)
    return _from_frame(frame, path, split, progress, check_moves=check)


# ---------------------------------------------------------------------------------------- loaded

def load_positions(data_dir: str | Path, split: str, *, limit: int = 0, seed: int = 0,
                   progress: bool = True) -> Positions:
    """Read ``split`` (train, validation, test) of the position set in ``data_dir``.

    ``limit`` > 0 keeps a seeded random sample of that many positions (in their stored order,
    :func:`sample_rows`).
    """
    from tuner.ingest.reader import is_compact, read_split, split_path  # noqa: PLC0415 - polars: only when reading

    path = split_path(data_dir, split)
    if is_compact(path):  # the boards straight from the records, no FEN text
        return _from_records(path, lambda f: f.take(sample_rows(len(f), limit, seed)))
    frame = read_split(data_dir, split, columns=REQUIRED_COLUMNS)
    n = frame.height
    if 0 < limit < n:
        frame = frame[sample_rows(n, limit, seed)]
    return _from_frame(frame, path, split, progress)


# ----------------------------------------------------- described: row numbers, read where needed

@dataclass(frozen=True)
class PositionRows:
    """Positions described rather than loaded: rows of one split's file (Parquet or compact).

    ``folder``, ``split``: the position set (an absolute path) and the split; ``rows``: int64[P], the row numbers
    (sorted, distinct) of the positions, 8 bytes each; ``file_size`` and ``file_mtime_ns``: the
    split file's size and modification time when the rows were chosen, so that whoever reads
    them (a Dask worker, perhaps on another machine) reads the same file or says it cannot.
    :meth:`read` gives the same positions as :func:`load_positions` gives for those rows.
    """

    folder: str
    split: str
    rows: np.ndarray
    file_size: int
    file_mtime_ns: int

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def path(self) -> Path:
        """The split's file (Parquet or compact, as the set's manifest says)."""
        from tuner.ingest.reader import split_path  # noqa: PLC0415 - polars: only when reading

        return split_path(self.folder, self.split)

    def part(self, a: int, z: int) -> PositionRows:
        """The positions ``a:z`` of these (their own copy of the row numbers)."""
        return replace(self, rows=self.rows[a:z].copy())

    def problem(self) -> str | None:
        """Why this process cannot read the rows (the file missing here, or not the file they
        were chosen from), or None when it can."""
        try:
            st = os.stat(self.path)
        except OSError as exc:
            return f"{self.path}: cannot be read on {socket.gethostname()} ({exc.strerror or exc})"
        if (st.st_size, st.st_mtime_ns) != (self.file_size, self.file_mtime_ns):
            return (f"{self.path}: on {socket.gethostname()} not the file the positions were sampled from "
                    f"(size {st.st_size}, modified {st.st_mtime_ns} ns; sampled from size {self.file_size}, "
                    f"modified {self.file_mtime_ns} ns)")
        return None

    def read(self, *, progress: bool = False) -> Positions:
        """The positions of these rows, in their order; a one-line :class:`TunerError` naming the
        file if it cannot be read here (:meth:`problem`) or holds a bad position."""
        from tuner.ingest.reader import is_compact  # noqa: PLC0415 - polars: only when reading

        problem = self.problem()
        if problem is not None:
            raise TunerError(problem)
        if is_compact(self.path):  # a compact split: the boards straight from the records
            return _from_records(self.path, lambda f: f.take(self.rows))
        return _parquet_rows(self.folder, self.split, self.path, self.rows, progress=progress)


def position_rows(data_dir: str | Path, split: str, *, limit: int = 0, seed: int = 0,
                  moves_only: bool = False) -> PositionRows:
    """The rows of ``split`` that :func:`load_positions` with the same ``limit`` and ``seed``
    keeps (``moves_only``: of those, the ones with a played move), without loading them: only
    the split's ``move`` column is read (one-line errors for a missing or unreadable set)."""
    from tuner.ingest.reader import split_path  # noqa: PLC0415 - polars: only when reading

    moves = _moves(data_dir, split)
    rows = sample_rows(len(moves), limit, seed)
    if moves_only:
        rows = rows[moves.is_not_null().to_numpy()[rows]]
    folder = os.path.abspath(data_dir)  # a worker's working folder need not be this process's
    st = os.stat(split_path(folder, split))
    return PositionRows(folder, split, rows, st.st_size, st.st_mtime_ns)


# -------------------------------------------------------------------------------------- streamed

#: rows per chunk of a Parquet split (a compact split's chunks are its file's own)
PARQUET_CHUNK_ROWS = 65_536
#: chunks held at once by default: the window, the buffer rows are shuffled within
#: (16 compact chunks: 1,048,576 positions, about 135 MB of boards)
BUFFER_CHUNKS = 16
#: a filter of a chunk's positions: ``keep(positions) -> (bool[P] the rows kept, {reason: count left
#: out})``; hashable (a stream keeps each chunk's mask per filter)
Keep = Callable[[Positions], tuple[np.ndarray, dict[str, int]]]
#: the second key of the seed of :meth:`PositionStream.sample`'s chunk order (epochs are 0..)
_SAMPLE_KEY = 2**31 - 1


class PositionStream:
    """One split of a position set, read chunk by chunk (module docstring).

    Parameters
    ----------
    folder : the position-set folder (``tuner ingest``).
    split : ``"train"``, ``"validation"`` or ``"test"``.
    limit, seed : ``limit > 0`` keeps the seeded sample of ``limit`` rows that
        :func:`load_positions` keeps with the same ``seed``.
    chunk_rows : rows per chunk of a Parquet split (default :data:`PARQUET_CHUNK_ROWS`).

    Raises
    ------
    TunerError
        One line naming the file when the set or the split is missing or unreadable.
    """

    def __init__(self, folder: str | Path, split: str, *, limit: int = 0, seed: int = 0,
                 chunk_rows: int | None = None) -> None:
        from tuner.ingest.reader import check_split_file, is_compact, split_path, split_rows  # noqa: PLC0415 - polars

        chunk_rows = PARQUET_CHUNK_ROWS if chunk_rows is None else chunk_rows
        if chunk_rows < 1:
            raise ValueError("chunk_rows must be >= 1")
        self.folder, self.split = Path(folder), split
        self.path = check_split_file(split_path(folder, split))
        self.compact = is_compact(self.path)
        if self.compact:
            from tuner.ingest.compact_file import CompactFile  # noqa: PLC0415 - numba: only for a compact set

            self._file: CompactFile | None = CompactFile(self.path)
            bounds = self._file.starts.copy()
        else:
            self._file = None
            n = split_rows(folder, split)
            bounds = np.append(np.arange(0, n, chunk_rows, dtype=np.int64), np.int64(n)) if n else np.zeros(1, np.int64)
        #: int64[chunks + 1]: the first row of each chunk in the file (and the rows)
        self.bounds = bounds.astype(np.int64)
        n = int(self.bounds[-1])
        #: the sampled rows (int64, sorted) or None for every row
        self.rows = sample_rows(n, limit, seed) if 0 < limit < n else None
        #: int64[chunks + 1]: where each chunk's rows start among the rows kept
        self.cuts = self.bounds if self.rows is None else np.searchsorted(self.rows, self.bounds).astype(np.int64)
        self._checked: set[int] = set()
        self._masks: dict[tuple[Keep, int], tuple[np.ndarray, int, dict[str, int]]] = {}

    @property
    def n_chunks(self) -> int:
        return len(self.bounds) - 1

    def __len__(self) -> int:
        """The rows the stream reads an epoch (before any training filter)."""
        return int(self.cuts[-1])

    def chunk_sizes(self) -> np.ndarray:
        """int64[chunks]: the rows kept of each chunk."""
        sizes: np.ndarray = np.diff(self.cuts)
        return sizes

    def _first_read(self, k: int) -> bool:
        """Whether chunk ``k`` is read for the first time (and so checked), now marked read."""
        if not 0 <= k < self.n_chunks:
            raise IndexError(f"chunk {k} of {self.n_chunks}")
        first = k not in self._checked
        self._checked.add(k)
        return first

    def _kept(self, k: int) -> np.ndarray | None:
        """The kept rows of chunk ``k`` (file row numbers), or None for all of them."""
        return None if self.rows is None else self.rows[int(self.cuts[k]):int(self.cuts[k + 1])]

    def _records(self, k: int, check: bool) -> np.ndarray:
        """A compact split's records of chunk ``k``'s kept rows (the records checked with ``check``)."""
        assert self._file is not None
        records = self._file.chunk(k, check=check)
        mine = self._kept(k)
        return records if mine is None else records[mine - int(self.bounds[k])]

    def chunk(self, k: int) -> Positions:
        """The positions of chunk ``k`` (its kept rows, in stored order), checked (module
        docstring)."""
        check = self._first_read(k)
        if self._file is not None:
            return positions_of_records(self.path, self._records(k, check), check=check)
        return self._parquet(k, None, check)

    def _filtered(self, k: int, keep: Keep, dropped: dict[str, int] | None) -> np.ndarray | Positions:
        """Chunk ``k`` kept to ``keep``'s rows: a compact split's records (not unpacked), a
        Parquet split's positions. The chunk's mask is computed at its first read with ``keep``
        (the positions unpacked and checked then) and kept, a bit a row, so that later reads
        unpack or parse only the rows kept; their counts left out are added to ``dropped``."""
        cached = self._masks.get((keep, k))
        if cached is None:
            check = self._first_read(k)
            if self._file is not None:
                records = self._records(k, check)
                mask, out = keep(positions_of_records(self.path, records, check=check))
                got: np.ndarray | Positions = records[mask]
            else:
                pos = self._parquet(k, None, check)
                mask, out = keep(pos)
                got = pos.subset(np.flatnonzero(mask))
            self._masks[(keep, k)] = (np.packbits(mask), len(mask), out)
        else:
            packed, n, out = cached
            mask = np.unpackbits(packed, count=n).view(np.bool_)
            got = (self._records(k, False)[mask] if self._file is not None
                   else self._parquet(k, np.flatnonzero(mask), False))
        if dropped is not None:
            for reason, count in out.items():
                dropped[reason] = dropped.get(reason, 0) + count
        return got

    def _parquet(self, k: int, among: np.ndarray | None, check: bool) -> Positions:
        """A Parquet split's positions of chunk ``k``'s kept rows (``among``: of those, only
        these), moves checked with ``check``."""
        mine = self._kept(k)
        rows = np.arange(int(self.bounds[k]), int(self.bounds[k + 1]), dtype=np.int64) if mine is None else mine
        if among is not None:
            rows = rows[among]
        if len(rows) == 0:
            return no_positions()
        return _parquet_rows(self.folder, self.split, self.path, rows, check=check)

    def window(self, chunks: np.ndarray, order: np.random.Generator | None = None, *, keep: Keep | None = None,
               dropped: dict[str, int] | None = None) -> Positions:
        """The positions of ``chunks`` together, in their order, or shuffled by ``order``; with
        ``keep``, only the rows it keeps (:meth:`windows`). A compact split's records (40 bytes
        a position) are gathered and shuffled before they are unpacked into boards (128 bytes),
        in one call for the window."""
        if keep is not None:
            parts = [self._filtered(int(k), keep, dropped) for k in chunks]
            if self._file is None:
                pos = concatenate([p for p in parts if isinstance(p, Positions)])
                return pos if order is None else pos.subset(order.permutation(len(pos)))
            records = np.concatenate([p for p in parts if isinstance(p, np.ndarray)])
            del parts
            if order is not None:
                records = records[order.permutation(len(records))]
            return positions_of_records(self.path, records, check=False)  # each chunk checked at its first read
        if self._file is None:
            pos = concatenate([self.chunk(int(k)) for k in chunks])
            return pos if order is None else pos.subset(order.permutation(len(pos)))
        checks = [self._first_read(int(k)) for k in chunks]
        records = np.concatenate([self._records(int(k), check) for k, check in zip(chunks, checks)])
        if order is not None:
            records = records[order.permutation(len(records))]
        return positions_of_records(self.path, records, check=any(checks))

    def chunk_order(self, epoch: int, seed: int, *, shuffle: bool = True) -> np.ndarray:
        """int64[chunks]: the order epoch ``epoch`` reads the chunks in (a seeded permutation, or
        stored order without ``shuffle``); chunks with no kept row left out."""
        order = (np.random.default_rng([seed, epoch]).permutation(self.n_chunks) if shuffle
                 else np.arange(self.n_chunks))
        kept: np.ndarray = order[self.chunk_sizes()[order] > 0].astype(np.int64)
        return kept

    def windows(self, epoch: int, seed: int, *, shuffle: bool = True, buffer_chunks: int = BUFFER_CHUNKS,
                limit: int = 0, keep: Keep | None = None, dropped: dict[str, int] | None = None) -> Iterator[Positions]:
        """Epoch ``epoch``: every kept row once, as windows of at most ``buffer_chunks`` chunks
        (module docstring); with ``shuffle`` each window's rows in a seeded random order; with
        ``limit`` > 0, only the first ``limit`` windows. Only one window (and the chunks being
        gathered into it) is held at a time.

        ``keep``: a filter of a chunk's positions (:data:`Keep`), applied before the window is
        gathered and shuffled; its mask of each chunk is kept from the first read (a bit a row:
        6 MB for 50 M rows), so that later epochs unpack only the rows kept; the counts it
        leaves out are added to ``dropped``. The same filter (an equal ``keep``) must be given
        at every epoch for the masks to be reused."""
        if buffer_chunks < 1:
            raise ValueError("buffer_chunks must be >= 1")
        order = self.chunk_order(epoch, seed, shuffle=shuffle)
        if limit > 0:
            order = order[:limit * buffer_chunks]
        for w, a in enumerate(range(0, len(order), buffer_chunks)):
            yield self.window(order[a:a + buffer_chunks], np.random.default_rng([seed, epoch, w]) if shuffle else None,
                              keep=keep, dropped=dropped)

    def sample(self, n: int, seed: int) -> Positions:
        """About ``n`` positions for an estimate (K's fit): whole chunks in a seeded random
        order until ``n`` rows, cut to ``n``; every row when the stream holds fewer."""
        parts: list[Positions] = []
        got = 0
        for k in self.chunk_order(_SAMPLE_KEY, seed):
            if got >= n:
                break
            parts.append(self.chunk(int(k)))
            got += len(parts[-1])
        if not parts:
            return self.chunk(0) if self.n_chunks else no_positions()
        pos = concatenate(parts)
        return pos if len(pos) <= n else pos.subset(np.arange(n))

    def has_scores(self) -> bool:
        """Whether the positions carry search scores, judged by the first chunk with rows (a
        set's rows all come from one kind of source: self-play scores every row)."""
        for k in range(self.n_chunks):
            if self.chunk_sizes()[k] > 0:
                pos = self.chunk(k)
                return pos.scores is not None and bool(np.isfinite(pos.scores).any())
        return False

    def read(self) -> Positions:
        """Every kept row at once (tests, small sets)."""
        if not self.n_chunks:
            return no_positions()
        return concatenate([self.chunk(k) for k in range(self.n_chunks)])


__all__ = ["BUFFER_CHUNKS", "PARQUET_CHUNK_ROWS", "REQUIRED_COLUMNS", "Keep", "NoPlayedMovesError", "PositionRows",
           "PositionStream", "Positions", "concatenate", "load_positions", "mover_results", "mover_scores",
           "position_rows", "positions_of_records", "require_played_moves", "sample_rows", "split_size"]
