"""tuner.ingest.compact_file: chunks read alone, and the one-line refusals of a file that is
not one, truncated or corrupted."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest

from tuner.ingest import compact as C
from tuner.ingest.compact_file import (HEADER, MAGIC, TRAILER, CompactFile, CompactWriter, is_compact_file,
                                       write_compact)


@pytest.fixture(scope="module")
def records(real_boards: list[chess.Board]) -> np.ndarray:
    fens = [b.fen() for b in real_boards]
    n = len(fens)
    return C.pack(fens, moves=np.zeros(n, np.uint16), scores=np.arange(n, dtype=np.int16) - 1000,
                  results=(np.arange(n) % 4).astype(np.uint8), plies=np.arange(n) % 150, game_ids=np.arange(n) // 60)


def test_chunks_are_read_alone_and_in_order(records: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "a.mtpos"
    assert write_compact(path, records, chunk_records=1000) == len(records)
    assert is_compact_file(path)
    f = CompactFile(path)
    assert len(f) == len(records) and f.n_chunks == 4 and f.counts.tolist() == [1000, 1000, 1000, 229]
    assert f.chunk(2).tobytes() == records[2000:3000].tobytes()
    assert f.read().tobytes() == records.tobytes()
    rows = np.array([0, 5, 999, 1000, 3228])
    assert f.take(rows).tobytes() == records[rows].tobytes()
    assert path.stat().st_size == HEADER.itemsize + 40 * len(records) + 16 * 4 + TRAILER.itemsize


def test_writing_in_pieces_gives_the_same_file(records: np.ndarray, tmp_path: Path) -> None:
    write_compact(tmp_path / "whole.mtpos", records, chunk_records=700)
    with CompactWriter(tmp_path / "pieces.mtpos", chunk_records=700) as w:
        for lo in range(0, len(records), 333):
            w.write(records[lo:lo + 333])
    assert (tmp_path / "whole.mtpos").read_bytes() == (tmp_path / "pieces.mtpos").read_bytes()


def test_an_empty_file_has_no_chunk(tmp_path: Path) -> None:
    write_compact(tmp_path / "e.mtpos", np.zeros(0, dtype=C.RECORD))
    f = CompactFile(tmp_path / "e.mtpos")
    assert len(f) == 0 and f.n_chunks == 0 and len(f.read()) == 0


def test_a_failed_write_leaves_no_file(records: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "x.mtpos"
    with pytest.raises(RuntimeError), CompactWriter(path) as w:
        w.write(records)
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []


def test_a_flipped_byte_fails_its_chunks_checksum(records: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "c.mtpos"
    write_compact(path, records, chunk_records=1000)
    data = bytearray(path.read_bytes())
    data[HEADER.itemsize + 40 * 1500 + 3] ^= 0x10  # a byte of chunk 1
    path.write_bytes(bytes(data))
    f = CompactFile(path)
    assert f.chunk(0).tobytes() == records[:1000].tobytes()  # the others still read
    with pytest.raises(C.CompactError, match=rf"^{path}: chunk 1 \(records 1000 to 1999\) fails its checksum "
                                             r"\(corrupted\)$"):
        f.chunk(1)


def test_a_flipped_index_byte_is_refused_on_opening(records: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "i.mtpos"
    write_compact(path, records, chunk_records=1000)
    data = bytearray(path.read_bytes())
    data[-TRAILER.itemsize - 10] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(C.CompactError, match=rf"^{path}: the index fails its checksum \(corrupted\)$"):
        CompactFile(path)


@pytest.mark.parametrize("keep", [10, 20_000, 100_000])
def test_a_truncated_file_names_the_chunk_it_ends_in(records: np.ndarray, tmp_path: Path, keep: int) -> None:
    path = tmp_path / "t.mtpos"
    write_compact(path, records, chunk_records=1000)
    path.write_bytes(path.read_bytes()[:keep])
    chunk = max(keep - HEADER.itemsize, 0) // 40_000
    match = "shorter than the header" if keep < HEADER.itemsize else rf"ends inside chunk {chunk}, after {chunk}"
    with pytest.raises(C.CompactError, match=rf"^{path}: truncated.*{match}"):
        CompactFile(path)


def test_a_file_that_is_not_ours_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "n.mtpos"
    path.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 0 | 0.5\n")
    assert not is_compact_file(path)
    with pytest.raises(C.CompactError, match=rf"^{path}: not a compact position file"):
        CompactFile(path)
    with pytest.raises(C.CompactError, match=rf"^{tmp_path / 'missing.mtpos'}: cannot be read"):
        CompactFile(tmp_path / "missing.mtpos")


def test_another_version_is_refused(records: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "v.mtpos"
    write_compact(path, records[:10])
    data = bytearray(path.read_bytes())
    data[len(MAGIC)] = 9
    path.write_bytes(bytes(data))
    with pytest.raises(C.CompactError, match="version 9; this movetuner reads version 1"):
        CompactFile(path)


def test_a_damaged_record_with_a_matching_checksum_is_named(tmp_path: Path) -> None:
    rec = C.record_of_board(chess.Board())
    rec = np.concatenate([rec, rec, rec])
    rec["flags"][2] = 0x40
    path = tmp_path / "d.mtpos"
    write_compact(path, rec, chunk_records=2)
    with pytest.raises(C.CompactError, match=rf"^{path}: chunk 1 record 0 \(row 2\): reserved bits"):
        CompactFile(path).read()


def test_chunks_read_as_training_arrays(records: np.ndarray, tmp_path: Path) -> None:
    write_compact(tmp_path / "a.mtpos", records, chunk_records=1000)
    parts = list(CompactFile(tmp_path / "a.mtpos").arrays())
    whole = C.training_arrays(records)
    assert [len(p.played) for p in parts] == [1000, 1000, 1000, 229]
    assert np.array_equal(np.concatenate([p.boards for p in parts]), whole.boards)
    assert np.array_equal(np.concatenate([p.scores for p in parts]), whole.scores, equal_nan=True)
