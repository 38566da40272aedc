"""The Dask executor against the local one: MMTO, the GA and Texel give the same weights and
metrics on a LocalCluster of two worker processes as in this process, also when a worker
process is killed in the middle of an iteration; results kept on the workers (MMTO's leaf
tables) reduce to the same bits as in this process, send back sums rather than the tables, and
are recomputed when their worker is lost; Ctrl-C cancels the outstanding tasks; bad set-ups are
one-line errors.

"The same metrics" means every metric except the wall times (``*_seconds``), which differ
from run to run whatever executes them.

Skipped, with the reason, when ``dask[distributed]`` is not installed (the ``test`` extra
installs it).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask[distributed] is not installed: pip install -e '.[dask]' (the test extra includes it)")

import dask  # noqa: E402

import tuner.training.executor  # noqa: E402
import tuner.methods.mmto  # noqa: E402
from search.params.weights import load_weights  # noqa: E402
from tuner.cli import main  # noqa: E402
from tuner.errors import DeferredSigint, Interrupted, TunerError  # noqa: E402
from objectives.leaf_table import concatenate, objective_compact  # noqa: E402
from search.evaluation.evaluation_api import EVAL_SCALE  # noqa: E402
from tuner.training.executor import NO_STEALING, DaskExecutor, Kept, LocalExecutor, fold  # noqa: E402
from tuner.methods.ga import GaConfig, train_ga  # noqa: E402
from tuner.methods.mmto import MmtoConfig, masks_of, sweep_kept, train_mmto, update  # noqa: E402
from tuner.training.run_folder import RunDir  # noqa: E402
from tuner.methods.texel import TexelConfig  # noqa: E402
from tuner.methods.texel import METHOD as TEXEL  # noqa: E402
from tuner.training.driver import drive  # noqa: E402
from tuner.training.paced import move_match_chunk, paced_move_match  # noqa: E402
from tuner.training.training_data import TrainingData, load_training_data  # noqa: E402
from tuner.training.tune_config import TuneConfig  # noqa: E402
from tests.conftest import REPO  # noqa: E402

#: positions per chunk in these tests: several tasks per worker on a few hundred positions
CHUNK = 64


@pytest.fixture(scope="module")
def cluster() -> Any:
    """Two worker processes (not threads), one task at a time each, no work stealing (as the
    executor's own LocalCluster: tasks stay with their chunks)."""
    with dask.config.set(NO_STEALING), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR) as c:
        yield c


@pytest.fixture(scope="module")
def data(sample_set: Path) -> TrainingData:
    return load_training_data(TuneConfig(data=str(sample_set), max_train=500, max_validation=150), progress=False)


@pytest.fixture(scope="module")
def chunked(sample_set: Path) -> TrainingData:
    """The same positions as ``data``, chunked: their rows only, the workers build the chunks
    (as ``tuner tune --executor dask`` gives MMTO)."""
    return load_training_data(TuneConfig(data=str(sample_set), max_train=500, max_validation=150), progress=False,
                              chunked=True)


def _common(sample_set: Path, cluster: Any | None, **kw: Any) -> TuneConfig:
    where = {"executor": "dask", "scheduler": cluster.scheduler_address, "threads": 1} if cluster else {}
    return TuneConfig(data=str(sample_set), out="-", max_train=500, max_validation=150, chunk=CHUNK, **where, **kw)


def _no_seconds(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.endswith("_seconds")} for r in records]


def _run(train: Any, tmp_path: Path, name: str, common: TuneConfig, cfg: Any, data: TrainingData,
         log: list[str] | None = None) -> tuple[np.ndarray, list[dict[str, Any]]]:
    run = RunDir(tmp_path / name)
    run.create("")
    w = train(common, cfg, data, run, load_weights("material").values, progress=False,
              log=(log.append if log is not None else lambda _m: None))
    return w, _no_seconds(run.read_metrics())


def test_mmto_on_a_local_cluster_equals_the_local_run(sample_set: Path, cluster: Any, data: TrainingData,
                                                      chunked: TrainingData, tmp_path: Path) -> None:
    cfg = MmtoConfig(iterations=2, inner_steps=4, patience=5)
    w_local, m_local = _run(train_mmto, tmp_path, "local", _common(sample_set, None), cfg, data)
    log: list[str] = []
    w_dask, m_dask = _run(train_mmto, tmp_path, "dask", _common(sample_set, cluster), cfg, data, log)
    assert np.array_equal(w_local, w_dask)
    assert m_local == m_dask  # every metric but the wall times, bit for bit
    assert m_local[-1]["j_main"] < m_local[0]["j_main"]  # the run did train
    assert any(line.startswith("dask: 2 worker(s)") for line in log)
    # the positions built by the workers from their rows: the same run again
    log = []
    w_chunked, m_chunked = _run(train_mmto, tmp_path, "chunked", _common(sample_set, cluster), cfg, chunked, log)
    assert np.array_equal(w_local, w_chunked) and m_local == m_chunked
    assert not any("cannot build" in line for line in log), log  # the workers read the set themselves


@pytest.mark.slow
def test_ga_on_a_local_cluster_equals_the_local_run(sample_set: Path, cluster: Any, data: TrainingData,
                                                    tmp_path: Path) -> None:
    cfg = GaConfig(generations=2, population=6, sample=90)
    kw = {"method": "ga", "train": ("material",), "seed": 5}
    w_local, m_local = _run(train_ga, tmp_path, "local", _common(sample_set, None, **kw), cfg, data)
    w_dask, m_dask = _run(train_ga, tmp_path, "dask", _common(sample_set, cluster, **kw), cfg, data)
    assert np.array_equal(w_local, w_dask) and m_local == m_dask
    assert [r["generation"] for r in m_dask] == [0, 1, 2] and 0 < m_dask[1]["fitness_best"] <= 1


def test_texel_on_a_local_cluster_equals_the_local_run(sample_set: Path, cluster: Any, data: TrainingData,
                                                       tmp_path: Path) -> None:
    cfg = TexelConfig(epochs=1, steps=5, k=0.004)

    def train(common: TuneConfig, cfg: Any, data: TrainingData, run: RunDir, w0: np.ndarray, **kw: Any) -> np.ndarray:
        return drive(TEXEL, common, cfg, data, run, w0, **kw)

    kw = {"method": "texel"}
    w_local, m_local = _run(train, tmp_path, "local", _common(sample_set, None, **kw), cfg, data)
    w_dask, m_dask = _run(train, tmp_path, "dask", _common(sample_set, cluster, **kw), cfg, data)
    assert np.array_equal(w_local, w_dask) and m_local == m_dask
    assert m_dask[1]["e_train"] < m_dask[0]["e_train"]


@pytest.mark.slow
def test_a_worker_killed_mid_iteration_changes_nothing(sample_set: Path, cluster: Any, data: TrainingData,
                                                      chunked: TrainingData, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # the killed worker's position chunks are recomputed from their tasks: their rows, which
    # another worker reads from the position set (as tuner tune runs MMTO on a cluster; a task
    # whose arguments are shipped arrays is recomputed as any task is, tested with kept results
    # below)
    cfg = MmtoConfig(iterations=2, inner_steps=4, patience=5)
    w_local, m_local = _run(train_mmto, tmp_path, "local", _common(sample_set, None), cfg, data)

    # iteration 1's update runs here; right after it, its sweep's tasks are submitted and the
    # first wait for a result kills the worker process busy with the most of them
    real_update, real_result = tuner.methods.mmto.update, DaskExecutor._result
    armed: dict[str, Any] = {"now": False, "killed": None}

    def update(*args: Any, **kwargs: Any) -> Any:
        armed["now"] = armed["killed"] is None
        return real_update(*args, **kwargs)

    def result(self: DaskExecutor, future: Any) -> Any:
        if armed["now"]:
            armed["now"] = False
            for _ in range(200):  # until the scheduler has handed the tasks out
                busy = self.client.processing()
                if any(busy.values()):
                    break
                time.sleep(0.01)
            victim = max(busy, key=lambda a: len(busy[a]))
            assert busy[victim], "no task was running: the kill would not be mid-iteration"
            os.kill(self.worker_pids()[victim], signal.SIGKILL)
            armed["killed"] = victim
        return real_result(self, future)

    monkeypatch.setattr(tuner.methods.mmto, "update", update)
    monkeypatch.setattr(DaskExecutor, "_result", result)
    log: list[str] = []
    w_dask, m_dask = _run(train_mmto, tmp_path, "killed", _common(sample_set, cluster), cfg, chunked, log)
    assert armed["killed"] is not None
    assert np.array_equal(w_local, w_dask) and m_local == m_dask
    lost = [line for line in log if "was lost" in line]
    assert lost and armed["killed"] in lost[0] and "recomputed" in lost[0], log
    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)  # the nanny restarted it


def _keep_scaled(x: np.ndarray, *, pacer: Any = None, w: np.ndarray, scale: float) -> tuple[int, np.ndarray]:
    """A kept map's chunk: its length comes back, ``x * w * scale`` stays where computed."""
    return len(x), x * w * scale


def _weighted(kept: np.ndarray, *, w: np.ndarray) -> tuple[float, np.ndarray]:
    """A kept result's share of a sum: a float and a float64[3]."""
    return float(kept[:, 0].sum()), (kept * w).sum(axis=0)


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    """float64[n, 3] over 16 orders of magnitude: their sums depend on the order of the additions."""
    return rng.standard_normal((n, 3)) * 10.0 ** rng.integers(-8, 8, (n, 3))


def _same(a: tuple[float, np.ndarray], b: tuple[float, np.ndarray]) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1])


def _gone(cluster: Any, prefix: str) -> bool:
    for _ in range(50):
        if not _tasks(cluster, prefix):
            return True
        time.sleep(0.1)
    return False


def test_kept_results_reduce_to_the_same_bits_on_every_executor(cluster: Any) -> None:
    rng = np.random.default_rng(4)
    x, w = _values(rng, 200), np.array([1.0, 3.0, 0.5])
    ex = DaskExecutor(scheduler=cluster.scheduler_address, log=lambda _m: None)
    try:
        got = {}
        for name, executor in (("local", LocalExecutor(1)), ("dask", ex)):
            parts = list(executor.map_chunks(_keep_scaled, (x,), size=16, shared={"w": w}, keep=True, what="kt",
                                             scale=2.0))
            assert [(a, z, s) for a, z, (s, _h) in parts] == [(a, min(a + 16, 200), min(16, 200 - a))
                                                            for a in range(0, 200, 16)]
            handles = [h for *_, (_s, h) in parts]
            assert all(isinstance(h, Kept) == (name == "dask") for h in handles)  # local: the objects
            assert np.array_equal(np.concatenate(executor.fetch(handles)), x * w * 2.0)
            each = list(executor.map_kept(_weighted, handles, shared={"w": w}, what="kt-each"))
            before = dict(getattr(executor, "traffic", {}))
            total = executor.reduce_kept(_weighted, handles, shared={"w": w}, what="kt-sum")
            if name == "dask":  # one sum back, not one per chunk; the running sum moved at most once
                assert ex.traffic["results"] - before["results"] == 8 + 3 * 8
                assert ex.traffic["between_workers"] - before["between_workers"] <= 8 + 3 * 8
            acc = each[0]
            for part in each[1:]:  # the fold in chunk order, written out
                acc = (acc[0] + part[0], acc[1] + part[1])
            assert _same(total, acc) and _same(fold(None, *each), acc)
            assert not _same(fold(None, *each[::-1]), acc)  # another order gives other bits
            got[name] = total
            executor.release(handles)
        assert _same(got["local"], got["dask"])
        assert _gone(cluster, "kt-")  # released: nothing of the maps is left on the cluster
    finally:
        ex.close()


def test_kept_results_of_a_lost_worker_are_recomputed(cluster: Any) -> None:
    rng = np.random.default_rng(8)
    x, w = _values(rng, 160), np.array([2.0, 1.0, 0.25])
    log: list[str] = []
    ex = DaskExecutor(scheduler=cluster.scheduler_address, log=log.append)
    try:
        parts = list(ex.map_chunks(_keep_scaled, (x,), size=16, shared={"w": w}, keep=True, what="kl", scale=3.0))
        handles = [h for *_, (_s, h) in parts]
        want = ex.reduce_kept(_weighted, handles, shared={"w": w}, what="kl-sum")
        holders = ex.client.who_has([h.future for h in handles])
        victim = holders[handles[0].future.key][0]
        assert 0 < sum(victim in holders[h.future.key] for h in handles) < len(handles)  # on both workers
        os.kill(ex.worker_pids()[victim], signal.SIGKILL)
        for _ in range(300):  # until the scheduler has noticed
            if victim not in ex.client.nthreads():
                break
            time.sleep(0.1)
        # the victim's tables are rebuilt from their chunks and the map's shared weights
        assert _same(ex.reduce_kept(_weighted, handles, shared={"w": w}, what="kl-sum"), want)
        assert np.array_equal(np.concatenate(ex.fetch(handles)), x * w * 3.0)
        lost = [line for line in log if "was lost" in line]
        assert lost and victim in lost[0] and "recomputed" in lost[0], log
        ex.release(handles)
        ex.client.wait_for_workers(2, timeout=60)  # the nanny restarted it
    finally:
        ex.close()


def test_mmto_updates_from_kept_tables_take_the_same_steps_everywhere(cluster: Any, data: TrainingData) -> None:
    w0 = load_weights("material").values
    cfg = MmtoConfig(inner_steps=3)
    masks = masks_of(TuneConfig(), cfg)
    results = np.asarray(data.train.results, dtype=np.float64)
    pos = data.train.subset(np.arange(300))
    index, res = data.train_played_index[:300], results[:300]
    ex = DaskExecutor(scheduler=cluster.scheduler_address, log=lambda _m: None)
    try:
        out = {}
        for name, executor in (("local", LocalExecutor(1)), ("dask", ex)):
            kw = {"depth": 1, "budget": 100_000, "slope": cfg.slope, "window": cfg.window, "executor": executor,
                  "batch": CHUNK, "n_threads": 1, "progress": False}
            s = sweep_kept((pos.boards, index, res), w0, **kw)
            before = dict(getattr(executor, "traffic", {}))
            w, losses = update(s, w0, cfg, masks, executor=executor, n_threads=1, progress=False)
            moved = {k: v - before.get(k, 0) for k, v in getattr(executor, "traffic", {}).items()}
            out[name] = (s, w, losses, moved, executor.fetch(s.handles))
            executor.release(s.handles)
    finally:
        ex.close()
    (s_l, w_l, loss_l, _, kept_l), (s_d, w_d, loss_d, moved, kept_d) = out["local"], out["dask"]
    assert np.array_equal(w_l, w_d) and loss_l == loss_d and not np.array_equal(w_l, w0)
    assert (s_l.j_main, s_l.match, s_l.rows_stored, s_l.leaf_bytes) == (s_d.j_main, s_d.match, s_d.rows_stored,
                                                                        s_d.leaf_bytes)
    # the driver got the weights out and one objective's sums back per step (of all 5 chunks),
    # not the tables
    n_w = len(w0)
    assert len(s_d.handles) == 5 and moved["results"] == 3 * (8 + 8 + 8 * n_w) and moved["shared"] == 3 * 4 * n_w
    assert s_d.rows_stored < s_d.rows_total < s_d.nodes
    # the fold over chunks gives the one-table objective up to the last bits
    one = objective_compact(concatenate([k.leaves for k in kept_d]), w0, cfg.slope, EVAL_SCALE)
    assert loss_l[0] == pytest.approx(one.total, rel=1e-12)
    assert all(np.array_equal(a.played_scores, b.played_scores) for a, b in zip(kept_l, kept_d))


def _slow_identity(x: np.ndarray, *, pacer: Any = None, seconds: float) -> np.ndarray:
    import time  # noqa: PLC0415

    time.sleep(seconds)
    return x


def _tasks(cluster: Any, prefix: str) -> list[Any]:
    return [k for k in list(cluster.scheduler.tasks) if str(k).startswith(prefix)]


def test_chunked_positions_cross_as_row_numbers_and_sweep_the_same(cluster: Any, data: TrainingData,
                                                                     chunked: TrainingData) -> None:
    w0 = load_weights("material").values
    kw: dict[str, Any] = {"depth": 1, "budget": 100_000, "slope": 0.02, "window": 300.0, "batch": CHUNK,
                          "n_threads": 1, "progress": False}
    local = sweep_kept(data.train_chunks(), w0, executor=LocalExecutor(1), **kw)
    log: list[str] = []
    ex = DaskExecutor(scheduler=cluster.scheduler_address, log=log.append)
    try:
        s = sweep_kept(chunked.train_chunks(), w0, executor=ex, **kw)
        n = chunked.n_train
        # the driver sent each chunk's row numbers (8 bytes a position and a few fields), not
        # the positions (boards 128 bytes, played move, result: 144)
        assert 8 * n <= ex.traffic["positions"] <= 8 * n + 64 * len(s.handles)
        assert ex.traffic["positions"] < 144 * n / 10
        kept_d, kept_l = ex.fetch(s.handles), LocalExecutor(1).fetch(local.handles)
        ex.release(s.handles)
        again = sweep_kept(chunked.train_chunks(), w0, executor=ex, **kw)  # shipped once per source
        assert ex.traffic["positions"] <= 8 * n + 64 * len(s.handles)
        ex.release(again.handles)
    finally:
        ex.close()
    assert (s.j_main, s.match, s.rows_total, s.rows_stored, s.nodes, s.leaf_bytes) == \
        (local.j_main, local.match, local.rows_total, local.rows_stored, local.nodes, local.leaf_bytes)
    for x, y in zip(kept_d, kept_l):
        assert np.array_equal(x.played_scores, y.played_scores) and np.array_equal(x.leaves.pos_ptr, y.leaves.pos_ptr)
    assert not any("cannot build" in line for line in log), log


@dataclasses.dataclass(frozen=True)
class _DriverOnly:
    """A chunk source over arrays that only the process that made it can build (as a position
    set the workers do not see)."""

    x: np.ndarray
    pid: int

    def __len__(self) -> int:
        return len(self.x)

    def part(self, a: int, z: int) -> _DriverOnly:
        return _DriverOnly(self.x[a:z].copy(), self.pid)

    def problem(self) -> str | None:
        return None if os.getpid() == self.pid else "the set is not on this machine"

    def arrays(self) -> tuple[np.ndarray, ...]:
        assert self.problem() is None
        return (self.x,)


def _total(x: np.ndarray, *, pacer: Any = None) -> float:
    return float(x.sum())


def test_chunks_the_workers_cannot_build_are_built_and_sent_by_the_driver(cluster: Any) -> None:
    x = _values(np.random.default_rng(3), 100)
    source = _DriverOnly(x, os.getpid())
    log: list[str] = []
    ex = DaskExecutor(scheduler=cluster.scheduler_address, log=log.append)
    try:
        got = list(ex.map_chunks(_total, source, size=16, what="driver-built"))
        assert ex.traffic["positions"] == x.nbytes  # the arrays, built here chunk by chunk
    finally:
        ex.close()
    assert got == list(LocalExecutor(1).map_chunks(_total, source, size=16)) == \
        list(LocalExecutor(1).map_chunks(_total, (x,), size=16))
    assert [line for line in log if "cannot build the position chunks (the set is not on this machine)" in line]


def test_a_bad_position_of_a_chunked_set_is_one_line_from_the_workers(sample_set: Path, cluster: Any, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import shutil  # noqa: PLC0415

    import polars as pl  # noqa: PLC0415

    folder = tmp_path / "set"
    shutil.copytree(sample_set, folder)
    frame = pl.read_parquet(folder / "train.parquet")
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 150).then(pl.lit("8/8/8 w - - 0 1"))
                               .otherwise(pl.col("fen")).alias("fen"))
    frame.write_parquet(folder / "train.parquet")
    args = ["tune", "--data", str(folder), "--max-train", "0", "--max-validation", "100", "--chunk", "64",
            "--iterations", "1", "--inner-steps", "2", "--quiet", "--executor", "dask", "--scheduler",
            cluster.scheduler_address, "--threads", "1"]
    assert main([*args, "--out", str(tmp_path / "run")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and f"{folder / 'train.parquet'}: game {frame['game_id'][150]} ply {frame['ply'][150]}: " in err[0], err


def test_ctrl_c_cancels_the_outstanding_tasks(cluster: Any) -> None:
    ex = DaskExecutor(scheduler=cluster.scheduler_address, log=lambda _m: None)
    try:
        with DeferredSigint() as sigint:
            parts = ex.map_chunks(_slow_identity, (np.arange(40),), size=2, what="slow", seconds=1.0)
            a, z, first = next(parts)
            assert (a, z) == (0, 2) and first.tolist() == [0, 1]
            waiting = len(_tasks(cluster, "slow-"))
            sigint.requested = True  # Ctrl-C while the next result is awaited
            with pytest.raises(Interrupted):
                next(parts)
        # the 19 other tasks of 1 s on 2 workers would take 9 s to finish; cancelled, they are
        # dropped at once (the executor's client stays connected: nothing else releases them)
        for _ in range(40):
            if not _tasks(cluster, "slow-"):
                break
            time.sleep(0.1)
        assert waiting >= 15 and not _tasks(cluster, "slow-")
    finally:
        ex.close()


def test_move_match_of_a_selection_is_the_same_on_every_executor(cluster: Any, data: TrainingData) -> None:
    w = np.stack([load_weights(n).values for n in ("material", "classic")])
    rows = np.sort(np.random.default_rng(1).choice(len(data.train), size=77, replace=False))
    one_call = move_match_chunk(data.train.boards[rows], data.train.played[rows], weights=w, depth=1, budget=100_000)
    local = paced_move_match(data.train.boards, data.train.played, w, 1, rows=rows, budget=100_000, n_threads=1,
                             executor=LocalExecutor(1))
    ex = DaskExecutor(scheduler=cluster.scheduler_address, chunk=50, log=lambda _m: None)
    try:
        dask = paced_move_match(data.train.boards, data.train.played, w, 1, rows=rows, budget=100_000, n_threads=1,
                                executor=ex)
        assert ex.traffic["positions"] == data.train.boards.nbytes + data.train.played.nbytes
        again = paced_move_match(data.train.boards, data.train.played, w, 1, budget=100_000, n_threads=1, executor=ex)
        assert ex.traffic["positions"] == data.train.boards.nbytes + data.train.played.nbytes  # shipped once
    finally:
        ex.close()
    assert one_call.shape == (2, 77) and np.array_equal(one_call, local) and np.array_equal(one_call, dask)
    assert np.array_equal(again[:, rows], one_call)
    assert one_call[1].mean() != one_call[0].mean()  # two different weight sets were measured


@pytest.mark.slow
def test_the_command_line_starts_its_own_local_cluster(sample_set: Path, tmp_path: Path) -> None:
    common = ["tune", "--data", str(sample_set), "--max-train", "300", "--max-validation", "100", "--chunk", "64",
              "--iterations", "1", "--inner-steps", "3", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    assert main([*common, "--out", str(tmp_path / "dask"), "--executor", "dask", "--workers", "1"]) == 0
    metrics = [_no_seconds([__import__("json").loads(line) for line in (tmp_path / r / "metrics.jsonl").open()])
               for r in ("local", "dask")]
    assert metrics[0] == metrics[1] and len(metrics[0]) == 2
    assert 'executor = "dask"' in (tmp_path / "dask" / "config.toml").read_text()
    # resuming may move a run between executors
    assert main(["tune", "--resume", str(tmp_path / "dask"), "--executor", "local", "--iterations", "2",
                 "--quiet"]) == 0


def test_set_up_problems_are_one_line_errors(cluster: Any, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], sample_set: Path,
                                             tmp_path: Path) -> None:
    # a worker that runs other code than the driver
    monkeypatch.setattr(tuner.training.executor, "code_fingerprint", lambda: "0" * 16)
    with pytest.raises(TunerError, match=r"^dask worker tcp://.* runs other movetuner code \(code "):
        DaskExecutor(scheduler=cluster.scheduler_address, log=lambda _m: None)
    monkeypatch.undo()
    # nothing listens there
    with pytest.raises(TunerError, match=r"^--scheduler tcp://127.0.0.1:9: cannot connect"):
        DaskExecutor(scheduler="tcp://127.0.0.1:9", connect_timeout=1.0)
    # distributed absent
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(TunerError, match=r"pip install 'movetuner\[dask\]'"):
        DaskExecutor()
    monkeypatch.undo()
    # the command line: --scheduler without --executor dask
    assert main(["tune", "--data", str(sample_set), "--out", str(tmp_path / "x"), "--scheduler", "tcp://h:1"]) == 2
    assert "scheduler is an option of executor dask" in capsys.readouterr().err


def test_the_executor_settings_have_their_defaults() -> None:
    # the base install runs locally: nothing of dask is needed unless asked for
    common = TuneConfig()
    assert (common.executor, common.scheduler, common.workers, common.chunk) == ("local", "", 0, 4096)
    assert dataclasses.replace(common, executor="dask").executor == "dask"
    with pytest.raises(ValueError, match="executor must be one of local, dask"):
        dataclasses.replace(common, executor="slurm").validate()


@pytest.mark.slow
def test_ctrl_c_in_a_terminal_stops_a_dask_run_with_one_line(sample_set: Path, tmp_path: Path) -> None:
    # a real SIGINT to the whole process group, as a terminal sends it: the LocalCluster's
    # worker processes ignore it, the driver stops between two results and closes the cluster
    import subprocess  # noqa: PLC0415

    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "tune", "--data", str(sample_set), "--out", str(run),
                             "--max-train", "500", "--max-validation", "100", "--chunk", "64", "--iterations", "200",
                             "--patience", "200", "--executor", "dask", "--workers", "1", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for _ in range(1200):  # until iteration 0 is written: the run is inside its iterations
            if (run / "metrics.jsonl").exists() and (run / "metrics.jsonl").read_text().count("\n") >= 1:
                break
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "interrupted at iteration" in lines[0] and "--resume" in lines[0], err


def test_bench_commands_on_the_cluster_print_the_local_figures(sample_set: Path, cluster: Any,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import json  # noqa: PLC0415

    mm = ["bench", "move-match", "--weights", "material", "classic", "--data", str(sample_set), "--split",
          "validation", "--json"]
    assert main(mm) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*mm, "--executor", "dask", "--scheduler", cluster.scheduler_address, "--threads", "1"]) == 0
    assert json.loads(capsys.readouterr().out) == local and local["positions"] > 200
    suite = str(REPO / "datasets" / "epd" / "movetuner.epd")
    epd = ["bench", "epd", suite, "--weights", "material", "classic", "--depth", "2", "--json"]
    assert main(epd) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*epd, "--scheduler", cluster.scheduler_address]) == 0
    remote = json.loads(capsys.readouterr().out)
    for name in ("material", "classic"):  # the same answers, whatever answered them
        assert {k: v for k, v in remote["weights"][name].items() if k != "seconds"} == \
            {k: v for k, v in local["weights"][name].items() if k != "seconds"}

