"""A position set read as training needs it, chunk by chunk: :class:`PositionStream`.

The methods that search every position at random (MMTO, the GA, the bootstrapping methods)
hold their training positions in memory (:mod:`tuner.training.training_data`). Texel's method
and the network's Texel training only pass over them, an epoch at a time, so they can read them
as a stream and keep only a window of them in memory, however large the set:

* **chunks**: a compact split's own chunks (:mod:`tuner.ingest.compact_file`, 65,536 records
  each by default), or slices of :data:`PARQUET_CHUNK_ROWS` rows of a Parquet split; with
  ``limit`` (``--max-train``), only the rows :func:`tuner.training.positions.sample_rows` keeps,
  the same rows an in-memory run loads;
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
  (the compact records, boards and played moves, or the Parquet columns, FENs and played moves:
  one-line :class:`tuner.errors.TunerError` naming the file, game and ply); when it reads the
  chunk again, a compact chunk's checksum (checked at every read) says it holds the same bytes,
  and only that is checked (a Parquet chunk's columns and FENs are checked at every read, its
  moves once).

Every result depends on the seed, the epoch and ``buffer_chunks`` only, so an epoch read again
(a resumed run) is the same epoch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tuner.training.positions import (REQUIRED_COLUMNS, Positions, RowLabels, _from_frame, positions_of_records,
                                      sample_rows)

if TYPE_CHECKING:
    from tuner.ingest.compact_file import CompactFile

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


def concatenate(parts: list[Positions]) -> Positions:
    """One :class:`Positions` of ``parts`` in order (their labels stay lazy where they were)."""
    if len(parts) == 1:
        return parts[0]
    labels = parts[0].labels
    lazy = [p.labels for p in parts if isinstance(p.labels, RowLabels)]
    if len(lazy) == len(parts):
        labels = RowLabels(lazy[0].source, np.concatenate([r.game_ids for r in lazy]),
                           np.concatenate([r.plies for r in lazy]))
    else:
        labels = [label for p in parts for label in p.labels]

    def joined(name: str) -> np.ndarray | None:
        arrays = [getattr(p, name) for p in parts]
        if all(a is None for a in arrays):
            return None
        return np.concatenate([np.full(len(p), np.nan) if a is None else a for p, a in zip(parts, arrays)])

    return Positions(np.concatenate([p.boards for p in parts]), np.concatenate([p.played for p in parts]),
                     np.concatenate([p.game_ids for p in parts]), labels, joined("results"), joined("scores"))


class PositionStream:
    """One split of a position set, read chunk by chunk (module docstring).

    Parameters
    ----------
    folder : the position-set folder (``tuner ingest``).
    split : ``"train"``, ``"validation"`` or ``"test"``.
    limit, seed : ``limit > 0`` keeps the seeded sample of ``limit`` rows that
        :func:`tuner.training.positions.load_positions` keeps with the same ``seed``.
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
        from tuner.ingest.reader import read_split  # noqa: PLC0415 - polars, only here

        mine = self._kept(k)
        rows = np.arange(int(self.bounds[k]), int(self.bounds[k + 1]), dtype=np.int64) if mine is None else mine
        if among is not None:
            rows = rows[among]
        if len(rows) == 0:
            return _empty()
        frame = read_split(self.folder, self.split, columns=REQUIRED_COLUMNS, rows=rows)
        return _from_frame(frame, self.path, self.split, False, check_moves=check)

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
            return self.chunk(0) if self.n_chunks else _empty()
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
            return _empty()
        return concatenate([self.chunk(k) for k in range(self.n_chunks)])


def _empty() -> Positions:
    from search.core.board import BOARD_WORDS  # noqa: PLC0415

    return Positions(np.zeros((0, BOARD_WORDS), np.uint64), np.zeros(0, np.int32), np.zeros(0, np.int64), [],
                     np.zeros(0), None)


__all__ = ["BUFFER_CHUNKS", "PARQUET_CHUNK_ROWS", "Keep", "PositionStream", "concatenate"]
