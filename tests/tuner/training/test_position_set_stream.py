"""The streamed reading of a position set (:class:`PositionStream`, tuner/training/position_set.py)
and Texel's training from it: every row once an epoch, a shuffle fixed by the seed, Parquet and
compact sets alike, at most a window of chunks held at once, one-line errors for a damaged chunk;
Texel (linear and network) streamed agrees with the in-memory run where the two compute the same
thing, and a resumed streamed run equals an uninterrupted one."""

from __future__ import annotations

import gc
import json
import shutil
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from search.evaluation.evaluators import same_evaluator
from search.evaluation.network import read_network
from search.params.weights import load_weights
from tuner.cli import main
from tuner.ingest.compact_file import CompactFile, write_compact
from tuner.methods import texel_config
from tuner.methods.texel_config import TexelConfig, streams
from tuner.training import position_set
from tuner.training.position_set import PositionStream, load_positions, split_size
from tuner.training.positions import Positions
from tuner.training.tune_config import TuneConfig

#: rows per chunk in these tests: the sample's 1,900 training positions in 8 chunks
CHUNK = 256


@pytest.fixture(scope="module")
def sets(sample_set: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample as Parquet (``sample_set``) and as a compact set of :data:`CHUNK`-record chunks."""
    out = tmp_path_factory.mktemp("stream") / "compact"
    assert main(["ingest", "--sample", "--out", str(out), "--format", "compact", "--no-progress"]) == 0
    train = out / "train.mtpos"
    write_compact(train, CompactFile(train).read(), chunk_records=CHUNK)
    return {"parquet": sample_set, "compact": out}


def _stream(sets: dict[str, Path], kind: str, **kw: Any) -> PositionStream:
    return PositionStream(sets[kind], "train", chunk_rows=CHUNK, **kw)


def _keys(pos: Positions) -> list[tuple[int, int]]:
    """(game, ply) of each position: a row's identity in the sample."""
    return [(int(g), int(p)) for g, p in zip(pos.game_ids, pos.labels.plies)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["parquet", "compact"])
def test_an_epoch_visits_every_row_once_and_reads_as_a_loaded_split(sets: dict[str, Path], kind: str) -> None:
    loaded = load_positions(sets[kind], "train", progress=False)
    s = _stream(sets, kind)
    assert len(s) == len(loaded) == 1900 and s.n_chunks == 8
    whole = s.read()  # stored order: the loaded split, bit for bit
    assert np.array_equal(whole.boards, loaded.boards) and np.array_equal(whole.played, loaded.played)
    assert np.array_equal(whole.results, loaded.results, equal_nan=True)  # type: ignore[arg-type]
    assert whole.labels[7] == loaded.labels[7]
    for epoch in (1, 2):
        seen = [k for w in s.windows(epoch, seed=5, buffer_chunks=3) for k in _keys(w)]
        assert len(seen) == len(set(seen)) == 1900 and set(seen) == set(_keys(whole))
    in_order = [k for w in s.windows(1, seed=5, shuffle=False, buffer_chunks=3) for k in _keys(w)]
    assert in_order == _keys(whole)


def test_parquet_and_compact_streams_give_the_same_positions(sets: dict[str, Path]) -> None:
    a, b = _stream(sets, "parquet"), _stream(sets, "compact")
    for wa, wb in zip(a.windows(3, seed=1, buffer_chunks=2), b.windows(3, seed=1, buffer_chunks=2), strict=True):
        assert np.array_equal(wa.boards, wb.boards) and np.array_equal(wa.played, wb.played)


def test_the_shuffle_is_fixed_by_seed_and_epoch(sets: dict[str, Path]) -> None:
    s = _stream(sets, "compact")

    def order(epoch: int, seed: int) -> list[tuple[int, int]]:
        return [k for w in s.windows(epoch, seed, buffer_chunks=2) for k in _keys(w)]

    assert order(1, 0) == order(1, 0) == [k for w in _stream(sets, "compact").windows(1, 0, buffer_chunks=2)
                                          for k in _keys(w)]
    assert order(1, 0) != order(2, 0) and order(1, 0) != order(1, 1)
    assert list(s.chunk_order(1, 0)) != list(range(8))  # across chunks...
    first = next(iter(s.windows(1, 0, buffer_chunks=2)))
    row = {k: i for i, k in enumerate(_keys(s.read()))}
    rows = [row[k] for k in _keys(first)]
    assert {r // CHUNK for r in rows} == set(s.chunk_order(1, 0)[:2].tolist())  # ...and within a window
    assert rows != sorted(rows)


@pytest.mark.parametrize("kind", ["parquet", "compact"])
def test_a_sampled_stream_keeps_the_rows_an_in_memory_run_loads(sets: dict[str, Path], kind: str) -> None:
    s = _stream(sets, kind, limit=700, seed=3)
    loaded = load_positions(sets[kind], "train", limit=700, seed=3, progress=False)
    assert len(s) == 700 == split_size(sets[kind], "train", limit=700)
    assert split_size(sets[kind], "train") == 1900 == split_size(sets[kind], "train", limit=5000)
    assert np.array_equal(s.read().boards, loaded.boards)
    assert sorted(k for w in s.windows(1, 9, buffer_chunks=3) for k in _keys(w)) == sorted(_keys(loaded))


@pytest.mark.parametrize("kind", ["parquet", "compact"])
def test_at_most_a_window_of_chunks_is_held(sets: dict[str, Path], kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    s = _stream(sets, kind)
    refs: list[weakref.ref[np.ndarray]] = []
    reads: list[int] = []
    # what a chunk's reading gives: its records (compact) or its positions' boards (Parquet)
    owner, name = (s._file, "chunk") if kind == "compact" else (s, "chunk")
    read = getattr(owner, name)

    def tracked(k: int, **kw: Any) -> Any:
        got = read(k, **kw)
        refs.append(weakref.ref(got if isinstance(got, np.ndarray) else got.boards))
        reads.append(k)
        return got

    monkeypatch.setattr(owner, name, tracked)
    windows = 0
    for w in s.windows(1, seed=2, buffer_chunks=3):
        gc.collect()
        assert all(r() is None for r in refs)  # its chunks were let go once gathered (at most 3 held at once)
        assert len(w) <= 3 * CHUNK
        del w
        windows += 1
    assert windows == 3 and sorted(reads) == list(range(8))


def test_a_damaged_chunk_is_one_line_naming_file_and_chunk(sets: dict[str, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(sets["compact"], bad)
    train = bad / "train.mtpos"
    raw = bytearray(train.read_bytes())
    raw[24 + 40 * CHUNK * 5 + 3] ^= 0xFF  # a byte of chunk 5
    train.write_bytes(bytes(raw))
    code = main(["tune", "--method", "texel", "--data", str(bad), "--out", str(tmp_path / "run"), "--start", "classic",
                 "--stream", "on", "--batch-size", "256", "--k", "0.002", "--epochs", "1", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1
    assert "train.mtpos: chunk 5" in err[0] and "checksum" in err[0] and "Traceback" not in err[0]


def test_auto_streams_a_large_set_with_mini_batches(sets: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    common = TuneConfig(method="texel", data=str(sets["compact"]))
    monkeypatch.setattr(texel_config, "STREAM_ABOVE", 1000)
    assert streams(common, TexelConfig(batch_size=256))
    assert not streams(common, TexelConfig())  # full-batch steps need every leaf at once
    assert not streams(TuneConfig(method="texel", data=str(sets["compact"]), max_train=900), TexelConfig(batch_size=256))
    assert not streams(common, TexelConfig(batch_size=256, stream="off"))
    monkeypatch.setattr(texel_config, "STREAM_ABOVE", 5000)
    assert not streams(common, TexelConfig(batch_size=256))
    assert streams(common, TexelConfig(batch_size=256, stream="on"))
    with pytest.raises(ValueError, match="stream on trains by mini-batches"):
        TexelConfig(stream="on").validate()


def _lines(run: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in json.loads(line).items() if not k.endswith("seconds")}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


LINEAR = ["--method", "texel", "--start", "classic", "--max-validation", "200", "--train", "material,pst",
          "--k", "0.002", "--lr", "2", "--quiet"]
NETWORK = ["--method", "texel", "--start", "network:16x8x8+classic", "--max-validation", "100", "--k", "0.002",
           "--network-lr", "0.01", "--quiet"]


@pytest.mark.parametrize("args", [LINEAR, NETWORK], ids=["linear", "network"])
def test_streamed_texel_equals_in_memory_when_a_window_holds_the_set(sets: dict[str, Path], tmp_path: Path,
                                                                     args: list[str]) -> None:
    # one window of every chunk, one mini-batch of every position: both runs take each epoch's
    # step from every position's leaf found with the epoch's starting weights, the same step
    # up to the order of the sum's terms (the window's rows are shuffled)
    runs = {}
    for how in ("on", "off"):
        runs[how] = tmp_path / how
        assert main(["tune", "--data", str(sets["compact"]), "--out", str(runs[how]), "--epochs", "3",
                     "--batch-size", "4096", "--stream", how, "--stream-buffer", "8", "--keep", "last", *args]) == 0
    on, off = _lines(runs["on"]), _lines(runs["off"])
    for a, b in zip(on[1:], off[1:], strict=True):
        assert a["e_validation"] == pytest.approx(b["e_validation"], rel=1e-6)
        assert a["updates"] == b["updates"] == 1
    # the streamed e_train of epoch t is E at the weights epoch t started from: in memory, epoch t - 1's
    assert [r["e_train"] for r in on[1:]] == pytest.approx([r["e_train"] for r in off[:-1]], rel=1e-6)
    state = [json.loads((runs[h] / "state.json").read_text())["extra"]["trainer"]["master"] for h in ("on", "off")]
    assert np.allclose(np.asarray(state[0], dtype=float), np.asarray(state[1], dtype=float), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("args", "kind"), [(LINEAR, "compact"), (NETWORK, "compact"), (LINEAR, "parquet")],
                         ids=["linear", "network", "linear-parquet"])
def test_a_resumed_streamed_run_equals_an_uninterrupted_one(sets: dict[str, Path], tmp_path: Path,
                                                            args: list[str], kind: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(position_set, "PARQUET_CHUNK_ROWS", CHUNK)  # several windows of a Parquet set too
    whole, part = tmp_path / "whole", tmp_path / "part"
    common = ["--data", str(sets[kind]), "--batch-size", "200", "--stream", "on", "--stream-buffer", "3",
              "--keep", "last", *args]
    assert main(["tune", "--out", str(whole), "--epochs", "3", *common]) == 0
    assert main(["tune", "--out", str(part), "--epochs", "1", *common]) == 0
    assert main(["tune", "--resume", str(part), "--epochs", "3", "--quiet"]) == 0
    assert _lines(part) == _lines(whole)
    lines = _lines(whole)
    assert lines[1]["updates"] >= -(-lines[1]["train_positions"] // 200)  # a pass of mini-batches over each window
    assert lines[-1]["e_train"] < lines[1]["e_train"]
    if args is NETWORK:
        assert same_evaluator(read_network(whole / "weights.mtnn"), read_network(part / "weights.mtnn"))
    else:
        assert np.array_equal(load_weights(whole / "weights.json").values, load_weights(part / "weights.json").values)


def test_parquet_chunk_rows_default_is_read_at_call_time(sets: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(position_set, "PARQUET_CHUNK_ROWS", 500)
    assert PositionStream(sets["parquet"], "train").n_chunks == 4


def test_epoch_windows_bounds_a_streamed_epoch(sets: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "bounded"
    assert main(["tune", "--data", str(sets["compact"]), "--out", str(run), "--epochs", "2", "--batch-size", "200",
                 "--stream", "on", "--stream-buffer", "2", "--epoch-windows", "1", *LINEAR]) == 0
    lines = _lines(run)
    assert lines[0]["train_rows"] == 1900
    for epoch in lines[1:]:
        assert 0 < epoch["train_positions"] + epoch["left_out"] <= 2 * CHUNK  # one window of two chunks


@pytest.mark.parametrize("kind", ["parquet", "compact"])
def test_a_filter_is_applied_per_chunk_and_its_masks_reused(sets: dict[str, Path], kind: str) -> None:
    s = _stream(sets, kind)
    calls: list[int] = []

    @dataclass(frozen=True)
    class Finished:
        """Positions of finished games, every other one (a filter with reasons)."""

        def __call__(self, pos: Positions) -> tuple[np.ndarray, dict[str, int]]:
            calls.append(len(pos))
            assert pos.results is not None
            finished = np.isfinite(pos.results)
            odd = (pos.labels.plies % 2 == 1)  # type: ignore[attr-defined]
            return finished & odd, {"unfinished": int((~finished).sum()), "even": int((finished & ~odd).sum())}

    whole = s.read()
    assert whole.results is not None
    wanted = {k for k, r, p in zip(_keys(whole), whole.results, whole.labels.plies)  # type: ignore[attr-defined]
              if np.isfinite(r) and p % 2 == 1}
    for epoch in (1, 2, 3):
        dropped: dict[str, int] = {}
        seen = [k for w in s.windows(epoch, 4, buffer_chunks=3, keep=Finished(), dropped=dropped) for k in _keys(w)]
        assert len(seen) == len(set(seen)) and set(seen) == wanted
        assert sum(dropped.values()) == 1900 - len(wanted) and dropped["even"] > 0
        assert len(calls) == 8  # each chunk filtered once, at its first read
    first = [k for w in s.windows(1, 4, buffer_chunks=3, keep=Finished()) for k in _keys(w)]
    assert first == [k for w in s.windows(1, 4, buffer_chunks=3, keep=Finished()) for k in _keys(w)]


def test_streamed_distillation_learns_the_teachers_values(sets: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "distil"
    assert main(["tune", "--data", str(sets["compact"]), "--out", str(run), "--method", "texel",
                 "--start", "network:16x8x8", "--teacher", "gm", "--epochs", "3", "--keep", "last", "--quiet",
                 "--max-validation", "100", "--batch-size", "256", "--network-lr", "0.02", "--stream", "on",
                 "--stream-buffer", "4", "--k", "0.002"]) == 0
    lines = _lines(run)
    assert [r["train_positions"] for r in lines[1:]] == [1900] * 3  # a teacher labels every position
    assert lines[3]["e_train"] < 0.8 * lines[0]["e_train"]  # towards the teacher's values


def test_a_streamed_network_run_follows_the_step_schedule(sets: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "scheduled"
    assert main(["tune", "--data", str(sets["compact"]), "--out", str(run), "--method", "texel",
                 "--start", "network:16x8x8", "--epochs", "2", "--keep", "last", "--quiet", "--max-train", "600",
                 "--max-validation", "100", "--batch-size", "256", "--network-lr", "0.02", "--network-lr-end",
                 "0.002", "--stream", "on", "--k", "0.002", "--lam", "1"]) == 0
    assert [r["network_lr"] for r in _lines(run)[1:]] == [0.02, 0.002]
