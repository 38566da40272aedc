"""Chunked training data (a Dask MMTO run's driver keeps only the training positions' row
numbers, the workers build each chunk) against loaded training data: the same rows, the same
arrays chunk by chunk, the same sweep bit for bit, and the same one-line errors naming the file.

The Dask side (the workers building the chunks, a lost worker's chunks rebuilt) is in
``test_executor.py``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from search.params.weights import load_weights
from tuner.errors import TunerError
from tuner.ingest.reader import read_split
from tuner.methods.mmto import sweep_kept
from tuner.training.executor import ChunkSource, LocalExecutor, chunk_arrays, chunk_bounds
from tuner.training.position_set import NoPlayedMovesError, load_positions, position_rows
from tuner.training.training_data import TrainingChunks, TrainingData, load_training_data
from tuner.training.tune_config import TuneConfig

CHUNK = 64


def _same_positions(a: object, b: object) -> None:
    for name in ("boards", "played", "game_ids", "results"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), name
    assert getattr(a, "labels") == getattr(b, "labels")


def _pair(sample_set: Path, **kw: int) -> tuple[TrainingData, TrainingData]:
    cfg = TuneConfig(data=str(sample_set), **kw)
    return load_training_data(cfg, progress=False), load_training_data(cfg, progress=False, chunked=True)


def test_a_selection_of_rows_reads_as_those_rows_of_the_whole_split(sample_set: Path) -> None:
    whole = read_split(sample_set, "train")
    rows = np.array([0, 3, 4, 500, whole.height - 1], dtype=np.int64)
    assert read_split(sample_set, "train", rows=rows).equals(whole[rows])
    assert read_split(sample_set, "train", rows=np.zeros(0, dtype=np.int64)).height == 0
    with pytest.raises(TunerError, match=rf"train\.parquet: has {whole.height} rows, row {whole.height} was asked for$"):
        read_split(sample_set, "train", rows=np.array([1, whole.height]))


@pytest.mark.parametrize("limit", [0, 300])
def test_position_rows_read_as_the_positions_load_positions_keeps(sample_set: Path, limit: int) -> None:
    rows = position_rows(sample_set, "train", limit=limit, seed=4)
    loaded = load_positions(sample_set, "train", limit=limit, seed=4, progress=False)
    assert rows.rows.dtype == np.int64 and len(rows) == len(loaded) and Path(rows.folder).is_absolute()
    _same_positions(rows.read(), loaded)
    _same_positions(rows.part(100, 164).read(), loaded.subset(np.arange(100, 164)))


@pytest.mark.parametrize("max_train", [0, 500])
def test_chunks_built_on_demand_equal_the_loaded_arrays(sample_set: Path, max_train: int) -> None:
    loaded, chunked = _pair(sample_set, max_train=max_train, max_validation=100)
    assert not loaded.chunked and chunked.chunked and chunked.n_train == loaded.n_train
    source, arrays = chunked.train_chunks(), loaded.train_chunks()
    assert isinstance(source, TrainingChunks) and isinstance(source, ChunkSource)
    assert not isinstance(arrays, ChunkSource) and chunked.train_chunks() is source  # one object per run
    assert source.rows.rows.nbytes == 8 * chunked.n_train  # all the driver keeps per training position
    for a, z in chunk_bounds(loaded.n_train, CHUNK):
        for built, whole in zip(chunk_arrays(source, a, z), arrays):
            assert built.dtype == whole.dtype and np.array_equal(built, whole[a:z], equal_nan=True)
    # a selection of rows, as a move-match of a sample maps it
    pick = np.array([1, 5, 6, 70, 200], dtype=np.int64)
    for built, whole in zip(chunk_arrays(source, 1, 4, pick), arrays):
        assert np.array_equal(built, whole[pick[1:4]], equal_nan=True)
    # the positions themselves, for a trainer that needs them, loaded on first use
    _same_positions(chunked.train, loaded.train)
    assert np.array_equal(chunked.train_played_index, loaded.train_played_index)
    assert [len(p) for p in (chunked.validation, loaded.validation)] == [len(loaded.validation)] * 2


def test_a_local_sweep_over_chunks_built_on_demand_is_the_same_bit_for_bit(sample_set: Path) -> None:
    loaded, chunked = _pair(sample_set, max_train=300, max_validation=50)
    w = load_weights("material").values
    out = []
    for data in (loaded, chunked):
        ex = LocalExecutor(1)
        s = sweep_kept(data.train_chunks(), w, depth=1, budget=100_000, slope=0.02, window=300.0, executor=ex,
                       batch=CHUNK, n_threads=1, progress=False)
        out.append((s, ex.fetch(s.handles)))
    (s_l, kept_l), (s_c, kept_c) = out
    assert (s_l.j_main, s_l.match, s_l.rows_total, s_l.rows_stored, s_l.nodes, s_l.leaf_bytes) == \
        (s_c.j_main, s_c.match, s_c.rows_total, s_c.rows_stored, s_c.nodes, s_c.leaf_bytes)
    assert len(kept_l) == len(kept_c) == len(chunk_bounds(300, CHUNK))
    for x, y in zip(kept_l, kept_c):
        assert np.array_equal(x.played_scores, y.played_scores) and np.array_equal(x.results, y.results, equal_nan=True)
        assert np.array_equal(x.leaves.pos_ptr, y.leaves.pos_ptr) and x.leaves.nbytes == y.leaves.nbytes


def test_rows_of_a_set_named_by_a_relative_path_are_read_from_any_folder(sample_set: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(sample_set.parent)
    rows = position_rows(sample_set.name, "train", limit=50, seed=2)
    monkeypatch.chdir("/")  # a Dask worker started elsewhere
    assert rows.problem() is None and len(rows.read()) == 50


def test_a_missing_set_is_the_same_one_line_error_chunked(tmp_path: Path) -> None:
    for chunked in (False, True):
        with pytest.raises(TunerError, match=rf"^{tmp_path / 'none'}: no such position-set folder$"):
            load_training_data(TuneConfig(data=str(tmp_path / "none")), progress=False, chunked=chunked)


def _copy(sample_set: Path, to: Path) -> Path:
    shutil.copytree(sample_set, to)
    return to


def test_a_file_changed_after_sampling_is_refused_naming_it(sample_set: Path, tmp_path: Path) -> None:
    folder = _copy(sample_set, tmp_path / "set")
    rows = position_rows(folder, "train", limit=100, seed=1)
    assert rows.problem() is None
    path = folder / "train.parquet"
    frame = pl.read_parquet(path)
    frame.head(frame.height - 1).write_parquet(path)  # another file at the same path
    problem = rows.problem()
    assert problem is not None and problem.startswith(f"{path}: on ") and "not the file the positions were sampled" in problem
    with pytest.raises(TunerError, match=r"not the file the positions were sampled from"):
        TrainingChunks(rows).part(0, 10).arrays()
    os.remove(path)
    assert (rows.problem() or "").startswith(f"{path}: cannot be read on ")


def test_a_bad_position_is_a_one_line_error_naming_the_file_when_its_chunk_is_built(sample_set: Path,
                                                                                     tmp_path: Path) -> None:
    folder = _copy(sample_set, tmp_path / "set")
    path = folder / "train.parquet"
    frame = pl.read_parquet(path)
    bad = 150
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == bad).then(pl.lit("8/8/8 w - - 0 1"))
                               .otherwise(pl.col("fen")).alias("fen"))
    frame.write_parquet(path)
    game, ply = frame["game_id"][bad], frame["ply"][bad]
    with pytest.raises(TunerError) as loaded:
        load_training_data(TuneConfig(data=str(folder)), progress=False)
    data = load_training_data(TuneConfig(data=str(folder)), progress=False, chunked=True)  # rows only: no error yet
    source = data.train_chunks()
    assert isinstance(source, TrainingChunks)
    chunk_arrays(source, 0, CHUNK)  # a chunk without it builds
    with pytest.raises(TunerError) as built:
        chunk_arrays(source, CHUNK * 2, CHUNK * 3)
    assert str(built.value) == str(loaded.value) and "\n" not in str(built.value)
    assert str(built.value).startswith(f"{path}: game {game} ply {ply}: ")


def test_a_set_without_played_moves_is_refused_before_its_positions_are_read(sample_set: Path,
                                                                             tmp_path: Path) -> None:
    """Its own error class, so that ``tuner tune`` can add the methods that train on it."""
    folder = _copy(sample_set, tmp_path / "set")
    path = folder / "train.parquet"
    pl.read_parquet(path).with_columns(pl.lit(None, dtype=pl.Utf8).alias("move")).write_parquet(path)
    for chunked in (False, True):
        with pytest.raises(NoPlayedMovesError, match=rf"^{folder} has no played moves \(a position file with "
                                                     r"results only\)$"):
            load_training_data(TuneConfig(data=str(folder)), progress=False, chunked=chunked)
    data = load_training_data(TuneConfig(data=str(folder)), played_moves=False, progress=False)
    assert data.n_train == 1900 and not data.train.has_moves().any()
