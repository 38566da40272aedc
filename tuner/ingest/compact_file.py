"""The compact position file (``.mtpos``): records of :mod:`tuner.ingest.compact` in checksummed
chunks, with an index at the end so that a reader reads chunk k alone.

=========  ==================  =============================================================
offset     bytes               content
=========  ==================  =============================================================
0          24                  header: magic ``MTPOS\\r\\n\\x1a`` (8), version uint16 (1),
                               record size uint16 (40), records per chunk uint32 (65,536 by
                               default), layout uint32 (CRC-32 of the record's field table,
                               :data:`LAYOUT`), reserved uint32 (0)
24         40 x records        the records, chunk after chunk (each chunk full but the last)
I          16 x chunks         the index, one entry a chunk: offset uint64, records uint32,
                               CRC-32 of the chunk's bytes uint32
I + 16 k   24                  trailer: I uint64, chunks uint32, CRC-32 of the index uint32,
                               ``MTPOSEND`` (8)
=========  ==================  =============================================================

All numbers little-endian. The file is written to a temporary name beside it and renamed when
its index is written, so a file with this name is whole unless something else cut or changed
it. Reading checks the header, the trailer, the index against the file's size and its
checksum when the file is opened, then each chunk's checksum and records (:func:`tuner.ingest.compact.problems`) when it
is read. A file that is not one, of another version, truncated (no trailer: the error says in
which chunk the file ends) or corrupted (a checksum that does not match: the error names the
chunk) is refused with a one-line :class:`tuner.ingest.compact.CompactError` naming the file.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, cast

import numpy as np

from search.core.input_limits import open_regular
from tuner.ingest.compact import (RECORD, RECORD_BYTES, RECORD_FIELDS, RECORD_FORMATS, RECORD_OFFSETS, CompactError,
                                  TrainingArrays, problem_text, problems, training_arrays)

MAGIC = b"MTPOS\r\n\x1a"
END_MAGIC = b"MTPOSEND"
VERSION = 1
#: records per chunk written by default (2.6 MB a chunk)
CHUNK_RECORDS = 65_536
#: suffix of a compact file (a position set's compact split is ``<split>.mtpos``)
SUFFIX = ".mtpos"

HEADER = np.dtype([("magic", "S8"), ("version", "<u2"), ("record_bytes", "<u2"), ("chunk_records", "<u4"),
                   ("layout", "<u4"), ("reserved", "<u4")])
INDEX_ENTRY = np.dtype([("offset", "<u8"), ("count", "<u4"), ("crc32", "<u4")])
TRAILER = np.dtype([("index_offset", "<u8"), ("chunks", "<u4"), ("index_crc32", "<u4"), ("magic", "S8")])
#: CRC-32 of the record's field table (name, type, offset of each field): a file of another
#: layout is refused
LAYOUT = zlib.crc32(";".join(f"{name}:{fmt}@{offset}" for name, fmt, offset in
                             zip(RECORD_FIELDS, RECORD_FORMATS, RECORD_OFFSETS, strict=True)).encode("ascii"))


def is_compact_file(path: str | Path) -> bool:
    """Whether ``path`` is a file starting with the compact file's magic."""
    try:
        with open_regular(path) as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


class CompactWriter:
    """Write records into a compact file ``path``, chunk by chunk.

    Use as a context manager (or call :meth:`close`): the file appears under ``path`` only
    when it is complete; an exception inside the block removes the partial file. An existing
    ``path`` is replaced (callers check their outputs first).
    """

    def __init__(self, path: str | Path, *, chunk_records: int = CHUNK_RECORDS) -> None:
        if not 1 <= chunk_records <= 2**32 - 1:
            raise ValueError("chunk_records must be in 1 .. 2**32 - 1")
        self.path = Path(path)
        self.chunk_records = chunk_records
        self.tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
        self._fh = open(self.tmp, "wb")  # noqa: SIM115  closed by close() or abort()
        self._index: list[tuple[int, int, int]] = []
        self._pending: list[np.ndarray] = []
        self._pending_n = 0
        self._offset = HEADER.itemsize
        self.records = 0
        header = np.zeros(1, dtype=HEADER)
        header[0] = (MAGIC, VERSION, RECORD_BYTES, chunk_records, LAYOUT, 0)
        self._fh.write(header.tobytes())

    def write(self, records: np.ndarray) -> None:
        """Append records (a 1-D array of :data:`tuner.ingest.compact.RECORD`)."""
        if records.dtype != RECORD or records.ndim != 1:
            raise ValueError("records must be a 1-D array of dtype tuner.ingest.compact.RECORD")
        self._pending.append(records)
        self._pending_n += len(records)
        self.records += len(records)
        while self._pending_n >= self.chunk_records:
            data = np.concatenate(self._pending)
            self._write_chunk(data[:self.chunk_records])
            rest = data[self.chunk_records:]
            self._pending, self._pending_n = [rest], len(rest)

    def _write_chunk(self, chunk: np.ndarray) -> None:
        raw = np.ascontiguousarray(chunk).tobytes()
        self._fh.write(raw)
        self._index.append((self._offset, len(chunk), zlib.crc32(raw)))
        self._offset += len(raw)

    def close(self) -> int:
        """Write the last chunk, the index and the trailer; put the file in place; return the
        records written."""
        if self._pending_n:
            self._write_chunk(np.concatenate(self._pending))
        self._pending, self._pending_n = [], 0
        index = np.array(self._index, dtype=INDEX_ENTRY)
        raw = index.tobytes()
        trailer = np.zeros(1, dtype=TRAILER)
        trailer[0] = (self._offset, len(index), zlib.crc32(raw), END_MAGIC)
        self._fh.write(raw)
        self._fh.write(trailer.tobytes())
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self.tmp, self.path)
        return self.records

    def abort(self) -> None:
        """Drop the partial file."""
        self._fh.close()
        self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> CompactWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_compact(path: str | Path, records: np.ndarray, *, chunk_records: int = CHUNK_RECORDS) -> int:
    """Write ``records`` as the compact file ``path``; return how many."""
    with CompactWriter(path, chunk_records=chunk_records) as writer:
        writer.write(records)
    return writer.records


class CompactFile:
    """A compact file opened for reading: its index read and checked, no chunk read yet.

    Attributes
    ----------
    path : the file.
    counts : int64[chunks], the records of each chunk.
    starts : int64[chunks + 1], the row number of each chunk's first record (and the total).

    Raises
    ------
    CompactError
        One line naming the file when it is not a compact file, has another version or
        layout, is truncated, or its index is corrupted.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            with open_regular(self.path) as fh:
                size = os.fstat(fh.fileno()).st_size
                head = fh.read(HEADER.itemsize)
                if len(head) < len(MAGIC) or head[:len(MAGIC)] != MAGIC:
                    raise CompactError(f"{self.path}: not a compact position file (it does not start with "
                                       f"{MAGIC!r})")
                if len(head) < HEADER.itemsize:
                    raise CompactError(f"{self.path}: truncated: {size} bytes, shorter than the header")
                header = np.frombuffer(head, dtype=HEADER)[0]
                if int(header["version"]) != VERSION:
                    raise CompactError(f"{self.path}: compact position file version {int(header['version'])}; this "
                                       f"movetuner reads version {VERSION}")
                if int(header["record_bytes"]) != RECORD_BYTES or int(header["layout"]) != LAYOUT:
                    raise CompactError(f"{self.path}: records of {int(header['record_bytes'])} bytes in layout "
                                       f"{int(header['layout']):08x}, not this movetuner's ({RECORD_BYTES} bytes, "
                                       f"layout {LAYOUT:08x})")
                self.chunk_records = int(header["chunk_records"])
                self._read_index(fh, size)
        except OSError as exc:
            raise CompactError(f"{self.path}: cannot be read ({exc.strerror or exc})") from None

    def _truncated(self, size: int) -> CompactError:
        body = max(size - HEADER.itemsize, 0)
        whole = body // (RECORD_BYTES * max(self.chunk_records, 1))
        return CompactError(f"{self.path}: truncated or unfinished: no index at its end ({size} bytes; it ends "
                            f"inside chunk {whole}, after {whole} whole chunk(s) of {self.chunk_records} records)")

    def _read_index(self, fh: BinaryIO, size: int) -> None:
        if size < HEADER.itemsize + TRAILER.itemsize:
            raise self._truncated(size)
        fh.seek(size - TRAILER.itemsize)
        trailer = np.frombuffer(fh.read(TRAILER.itemsize), dtype=TRAILER)[0]
        if bytes(trailer["magic"]) != END_MAGIC:
            raise self._truncated(size)
        index_offset, chunks = int(trailer["index_offset"]), int(trailer["chunks"])
        if index_offset + chunks * INDEX_ENTRY.itemsize + TRAILER.itemsize != size:
            raise CompactError(f"{self.path}: its index does not match the file's size (corrupted, or cut and "
                               "joined)")
        fh.seek(index_offset)
        raw = fh.read(chunks * INDEX_ENTRY.itemsize)
        if zlib.crc32(raw) != int(trailer["index_crc32"]):
            raise CompactError(f"{self.path}: the index fails its checksum (corrupted)")
        index = np.frombuffer(raw, dtype=INDEX_ENTRY)
        self.counts = index["count"].astype(np.int64)
        self.offsets = index["offset"].astype(np.int64)
        self.crcs = index["crc32"].astype(np.int64)
        self.starts = np.zeros(chunks + 1, dtype=np.int64)
        np.cumsum(self.counts, out=self.starts[1:])
        expected = HEADER.itemsize + self.starts[:-1] * RECORD_BYTES
        if (chunks and (not np.array_equal(self.offsets, expected) or self.counts.min() < 1)) or \
                HEADER.itemsize + int(self.starts[-1]) * RECORD_BYTES != index_offset:
            bad = int(np.flatnonzero((self.offsets != expected) | (self.counts < 1))[0]) if chunks else 0
            raise CompactError(f"{self.path}: the index entry of chunk {bad} does not match the chunks before it "
                               "(corrupted)")

    @property
    def n_chunks(self) -> int:
        return len(self.counts)

    def __len__(self) -> int:
        return int(self.starts[-1])

    def chunk(self, k: int, *, check: bool = True) -> np.ndarray:
        """The records of chunk ``k``, checksum and records checked (one-line
        :class:`CompactError` naming the file and the chunk otherwise). ``check=False`` skips the
        records' check, not the checksum: for a chunk whose records a reader has checked before
        (the checksum then says they are the same bytes)."""
        if not 0 <= k < self.n_chunks:
            raise IndexError(f"chunk {k} of a file of {self.n_chunks}")
        n = int(self.counts[k])
        buf = bytearray(n * RECORD_BYTES)
        try:
            with open_regular(self.path) as fh:
                fh.seek(int(self.offsets[k]))
                got = cast(io.BufferedReader, fh).readinto(buf)  # open_regular's file is one
        except OSError as exc:
            raise CompactError(f"{self.path}: chunk {k} cannot be read ({exc.strerror or exc})") from None
        first, last = int(self.starts[k]), int(self.starts[k + 1]) - 1
        if got != len(buf):
            raise CompactError(f"{self.path}: truncated in chunk {k} (records {first} to {last})")
        if zlib.crc32(buf) != int(self.crcs[k]):
            raise CompactError(f"{self.path}: chunk {k} (records {first} to {last}) fails its checksum (corrupted)")
        records = np.frombuffer(buf, dtype=RECORD)
        if not check:
            return records
        codes = problems(records)
        bad = np.flatnonzero(codes)
        if len(bad):
            j = int(bad[0])
            raise CompactError(f"{self.path}: chunk {k} record {j} (row {first + j}): {problem_text(int(codes[j]))} "
                               f"({len(bad)} bad record(s) in the chunk)")
        return records

    def chunks(self) -> Iterator[np.ndarray]:
        """Every chunk's records, in order."""
        for k in range(self.n_chunks):
            yield self.chunk(k)

    def arrays(self) -> Iterator[TrainingArrays]:
        """Every chunk as the arrays training takes (:func:`tuner.ingest.compact.training_arrays`:
        boards, played moves, games, plies, results and scores; no FEN text), in order."""
        for records in self.chunks():
            yield training_arrays(records)

    def read(self) -> np.ndarray:
        """All records."""
        if not self.n_chunks:
            return np.zeros(0, dtype=RECORD)
        return np.concatenate(list(self.chunks()))

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The records of the row numbers ``rows`` (int64, sorted), reading only the chunks
        that hold them; a row past the end is an error."""
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return np.zeros(0, dtype=RECORD)
        if rows[0] < 0 or rows[-1] >= len(self):
            asked = int(rows[-1] if rows[-1] >= len(self) else rows[0])
            raise CompactError(f"{self.path}: has {len(self)} rows, row {asked} was asked for")
        chunk_of = np.searchsorted(self.starts, rows, side="right") - 1
        parts = []
        for k in np.unique(chunk_of).tolist():
            mine = rows[chunk_of == k]
            parts.append(self.chunk(k)[mine - self.starts[k]])
        return np.concatenate(parts)


__all__ = ["CHUNK_RECORDS", "END_MAGIC", "LAYOUT", "MAGIC", "SUFFIX", "VERSION", "CompactFile", "CompactWriter",
           "is_compact_file", "write_compact"]
