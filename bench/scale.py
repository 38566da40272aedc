"""One MMTO iteration on GM positions: this process's threads against a Dask cluster on the
same machine, and the per-position costs that size a cluster (``docs/scaling.md``).

Each run is a child process of its own (``--child``), so that each reports its own peak memory:
the local run, and the Dask run's *driver*, whose cluster (a LocalCluster of one worker process
per core, its scheduler in this parent process, no work stealing as in the executor's own
LocalCluster) holds the positions and the leaf tables. Both
children use the same seeded sample of ``--max-train`` training positions (and 5,000
validation positions): the local one loads them, the Dask driver only chooses their rows (as
``tuner tune --executor dask`` does for MMTO: chunked :class:`tuner.training.training_data.TrainingData`)
and its workers build each chunk from the position set. Each measures the start (``begin``: the
first sweep, which also builds or ships the positions on the workers and warms their numba
caches), then times one outer iteration as the
driver runs it: 32 update steps, the sweep of every training position and the validation
move-match. Each child uses every core (the Dask run's workers divide them).

Prints one JSON line:

- ``local_seconds``, ``dask_seconds`` and ``overhead_ratio``;
- ``identical``: the Dask iteration's weights and metrics (all but ``*_seconds``) equal the
  local one's bit for bit;
- ``bytes_per_iteration``: what crossed between the driver and the workers in the iteration
  (``weights_bytes_per_iteration``: the weights out, once per sweep and per update step;
  ``results_bytes_per_iteration``: the sweep's 64-byte chunk summaries, one objective's sums per
  update step, the validation's credits) plus ``between_workers_bytes_per_iteration`` (the
  running sums of the chunk-ordered folds, passed from one worker to the next);
  ``bytes_per_iteration_tables``: the same iteration as before issue 26 item 3, when each chunk
  sent its leaf table back (the tables' bytes, each played move's score and the chunk's figures,
  counted as the executor counts them; with ``--old-sweep`` also measured by a sweep that returns
  the tables, ``bytes_per_iteration_tables_measured``); ``traffic_ratio`` (target at most 0.02);
  ``positions_bytes_once``: what the driver sent once per run for the training positions (since
  the driver no longer loads them, their row numbers in the position set, 8 bytes each: the
  workers build the chunks; before, the positions themselves, 144 bytes each);
- ``driver_peak_rss_mb`` (the Dask run's driver, the whole process) and ``local_peak_rss_mb``;
  ``driver_load_peak_rss_mb``: its peak while loading the positions; ``driver_training_peak_rss_mb``
  (and ``local_training_peak_rss_mb``): the peak from the end of the loading to the end of the
  iteration (Linux's VmHWM, reset after the loading); with ``--memory-at N ...`` the Dask
  driver's three figures at those numbers of training positions too (``*_at``; target: equal
  within 10 % at 50,000 and 400,000);
- per-position costs for ``docs/scaling.md``: ``search_core_seconds_per_position`` at depth 1
  (sweep seconds times cores over positions) and at depth 2 (a depth-2 sweep of
  ``DEPTH2_SAMPLE`` positions), the stored leaf-table bytes per position at both depths
  (``leaf_bytes_per_position``: depth 1, the compact layout of :mod:`objectives.leaf_table`,
  target at most 1,000; ``leaf_bytes_per_position_tapered``: the leaves of the first
  ``TAPERED_SAMPLE`` positions in the former tapered CSR layout), ``update_seconds`` of the 32 steps.

Arguments: ``python bench/scale.py [--data DIR] [--max-train N] [--workers W] [--old-sweep]
[--memory-at N ...]``; the GM position set defaults to ``datasets/built/gm``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import gm_position_set

from objectives.leaf_table import concatenate
from search.params.weights import load_weights
from tuner.cores import available_cores, resolve_threads
from tuner.methods.mmto import MmtoConfig, MmtoTrainer, search_training_set, sweep_kept
from tuner.training.executor import NO_STEALING
from tuner.training.paced import validation_match
from tuner.training.run_context import open_run_context
from tuner.training.training_data import load_training_data
from tuner.training.tune_config import TuneConfig

#: positions of the depth-2 sample (a depth-2 sweep costs ~20 times a depth-1 one)
DEPTH2_SAMPLE = 2000
#: positions whose leaves are also measured in the tapered layout (about 6.5 KB each)
TAPERED_SAMPLE = 20_000


def tapered_bytes(table: Any) -> int:
    """Bytes the same leaves took in the tapered CSR layout (before issue 26's compact one)."""
    return sum(a.nbytes for a in (table.pos_ptr, table.played, *table.tapered()))


def one_iteration(common: TuneConfig, data: Any, *, old_sweep: bool, depth2: bool) -> dict[str, Any]:
    """begin, then one timed outer iteration (update, sweep, validation move-match)."""
    with open_run_context(common, log=lambda _m: None, progress=False) as ctx:
        ex = ctx.executor
        trainer = MmtoTrainer(common, MmtoConfig(), data, load_weights("material").values, ctx)
        t = time.perf_counter()
        trainer.begin()
        validation_match(ctx, common, data, trainer.weights())
        begin_seconds = time.perf_counter() - t
        before = dict(getattr(ex, "traffic", {}))
        t = time.perf_counter()
        metrics = trainer.step(1)
        metrics["match_validation"] = validation_match(ctx, common, data, trainer.weights())
        seconds = time.perf_counter() - t
        after = dict(getattr(ex, "traffic", {}))
        summary = trainer.summary
        assert summary is not None  # set by the step just taken
        n = data.n_train
        out: dict[str, Any] = {
            "seconds": seconds, "begin_seconds": begin_seconds, "metrics": metrics,
            "weights": [int(v) for v in trainer.weights()], "moved": {k: after[k] - before.get(k, 0) for k in after},
            "positions_once": after.get("positions", 0), "leaf_bytes": summary.leaf_bytes,
            "chunks": len(summary.handles),
            # the sweep's results as the executor counted them before item 3: per chunk its four
            # figures, its table (arrays, n_base and phase_max) and its played moves' scores
            "tables_results": summary.leaf_bytes + len(summary.handles) * (4 * 8 + 2 * 8) + 8 * n}
        if common.executor == "local":
            kept = ex.fetch(summary.handles[:max(1, TAPERED_SAMPLE // ctx.chunk)])
            out["tapered_per_position"] = tapered_bytes(concatenate([k.leaves for k in kept])) / sum(
                len(k.results) for k in kept)
        # the driver's peaks so far (the old sweep below holds the tables here): the whole
        # process's (with the loading of the positions) and the training's since the loading
        out["training_peak_rss_mb"] = peak_since_reset_mb()  # (ru_maxrss is reset with VmHWM)
        if old_sweep:  # the sweep as before item 3: every chunk's table back to the driver
            r0 = ex.traffic["results"]  # type: ignore[attr-defined]
            s = sweep_kept(data.train_chunks(), trainer.weights(), depth=common.depth, budget=common.budget,
                           slope=0.02, window=300.0, n_threads=ctx.threads, progress=False, executor=ex,
                           batch=ctx.chunk)
            ex.fetch(s.handles)  # what search_training_set fetches
            ex.release(s.handles)
            out["old_sweep_results"] = ex.traffic["results"] - r0  # type: ignore[attr-defined]
    if depth2:  # depth 2 on a sample: seconds and stored leaf-table bytes per position
        sample = data.train.subset(np.arange(min(DEPTH2_SAMPLE, len(data.train))))
        t = time.perf_counter()
        s2 = search_training_set(sample, data.train_played_index[:len(sample)], trainer.weights(), depth=2,
                                 budget=common.budget, slope=0.02, window=300.0, n_threads=resolve_threads(common.threads),
                                 progress=False)
        out["depth2_seconds"] = time.perf_counter() - t
        out["depth2_positions"] = len(sample)
        out["leaf2_bytes"] = s2.table.nbytes
    return out


def peak_since_reset_mb() -> float:
    """This process's peak resident memory since :func:`reset_peak` (VmHWM, Linux), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return math.nan


def reset_peak() -> None:
    """Reset VmHWM to the current resident memory (Linux's /proc/self/clear_refs, value 5)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def child(args: argparse.Namespace) -> None:
    """One run (``--child local`` or ``dask``), its figures as one JSON line on stdout."""
    where = {"executor": "dask", "scheduler": args.scheduler, "threads": args.threads} if args.child == "dask" else {}
    common = TuneConfig(data=args.data, out="-", max_train=args.max_train, **where)
    # the Dask run's driver as tuner tune runs it: chunked training positions, built by the workers
    data = load_training_data(common, progress=False, chunked=args.child == "dask")
    load_peak = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    reset_peak()  # from here: the training's own peak, the positions held
    out = one_iteration(common, data, old_sweep=args.old_sweep, depth2=args.child == "local")
    out["load_peak_rss_mb"] = load_peak
    out["peak_rss_mb"] = max(load_peak, out["training_peak_rss_mb"])
    out["train_positions"], out["validation_positions"] = data.n_train, len(data.validation)
    print(json.dumps(out))


def run_child(kind: str, args: argparse.Namespace, data_dir: Path, max_train: int, scheduler: str = "",
              threads: int = 0, old_sweep: bool = False) -> dict[str, Any]:
    """A child's figures (its JSON line)."""
    cmd = [sys.executable, __file__, "--child", kind, "--data", str(data_dir), "--max-train", str(max_train),
           "--scheduler", scheduler, "--threads", str(threads)] + (["--old-sweep"] if old_sweep else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"bench/scale.py --child {kind}: failed\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="", help="GM position set (default: datasets/built/gm)")
    ap.add_argument("--max-train", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=0, help="LocalCluster workers (default: one per core)")
    ap.add_argument("--old-sweep", action="store_true", help="also measure a sweep that sends the tables back")
    ap.add_argument("--memory-at", type=int, nargs="*", default=[], help="Dask driver peak memory at these sizes")
    ap.add_argument("--child", choices=("local", "dask"), default="", help=argparse.SUPPRESS)
    ap.add_argument("--scheduler", default="", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    data_dir = Path(args.data) if args.data else gm_position_set()
    if data_dir is None:
        print(json.dumps({"bench": "scale", "skipped": "no GM games"}))
        return
    import dask  # noqa: PLC0415
    import distributed  # noqa: PLC0415

    cores = available_cores()
    workers = args.workers or cores
    local = run_child("local", args, data_dir, args.max_train)
    with dask.config.set(NO_STEALING), distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster:
        address, per_worker = cluster.scheduler_address, max(1, cores // workers)
        dask = run_child("dask", args, data_dir, args.max_train, address, per_worker, old_sweep=args.old_sweep)
        memory = {n: run_child("dask", args, data_dir, n, address, per_worker) for n in args.memory_at}

    def strip(m: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in m.items() if not k.endswith("_seconds")}

    identical = local["weights"] == dask["weights"] and strip(local["metrics"]) == strip(dask["metrics"])
    n = local["train_positions"]
    search1 = local["metrics"]["search_seconds"]
    moved = dask["moved"]
    new_bytes = moved.get("shared", 0) + moved.get("results", 0) + moved.get("between_workers", 0)
    # before item 3 the iteration sent the weights twice (sweep, validation) and got the tables
    # back instead of the chunk summaries and the update's sums
    sums_back = dask["chunks"] * 8 * 8 + MmtoConfig().inner_steps * (16 + 8 * len(local["weights"]))
    validation_back = moved.get("results", 0) - sums_back
    tables_bytes = 2 * 4 * len(local["weights"]) + dask["tables_results"] + validation_back
    out = {
        "bench": "scale", "train_positions": n, "validation_positions": local["validation_positions"], "cores": cores,
        "chunk": TuneConfig().chunk, "workers": workers,
        "local_seconds": round(local["seconds"], 2), "dask_seconds": round(dask["seconds"], 2),
        "overhead_ratio": round(dask["seconds"] / local["seconds"], 3),
        "local_begin_seconds": round(local["begin_seconds"], 2), "dask_begin_seconds": round(dask["begin_seconds"], 2),
        "identical": identical,
        "bytes_per_iteration": new_bytes,
        "weights_bytes_per_iteration": moved.get("shared", 0), "results_bytes_per_iteration": moved.get("results", 0),
        "between_workers_bytes_per_iteration": moved.get("between_workers", 0),
        "bytes_per_iteration_tables": tables_bytes,
        **({"bytes_per_iteration_tables_measured": 2 * 4 * len(local["weights"]) + dask["old_sweep_results"]
            + validation_back} if args.old_sweep else {}),
        "traffic_ratio": round(new_bytes / tables_bytes, 4), "target_traffic_met": new_bytes <= 0.02 * tables_bytes,
        "positions_bytes_once": dask["positions_once"],
        "driver_peak_rss_mb": dask["peak_rss_mb"], "local_peak_rss_mb": local["peak_rss_mb"],
        "driver_load_peak_rss_mb": dask["load_peak_rss_mb"], "driver_training_peak_rss_mb": dask["training_peak_rss_mb"],
        "local_training_peak_rss_mb": local["training_peak_rss_mb"],
        **({"driver_peak_rss_mb_at": {n: m["peak_rss_mb"] for n, m in memory.items()},
            "driver_load_peak_rss_mb_at": {n: m["load_peak_rss_mb"] for n, m in memory.items()},
            "driver_training_peak_rss_mb_at": {n: m["training_peak_rss_mb"] for n, m in memory.items()}}
           if memory else {}),
        "search_seconds_local": round(search1, 2), "update_seconds_local": local["metrics"]["update_seconds"],
        "update_seconds_dask": dask["metrics"]["update_seconds"],
        "search_core_seconds_per_position_depth1": round(search1 * cores / n, 7),
        "search_core_seconds_per_position_depth2": round(local["depth2_seconds"] * cores / local["depth2_positions"], 7),
        "leaf_bytes_per_position": round(local["leaf_bytes"] / n, 1),
        "leaf_bytes_per_position_tapered": round(local["tapered_per_position"], 1),
        "target_leaf_bytes_met": local["leaf_bytes"] / n <= 1000,
        "leaf_table_bytes_per_position_depth1": round(local["leaf_bytes"] / n, 1),
        "leaf_table_bytes_per_position_depth2": round(local["leaf2_bytes"] / local["depth2_positions"], 1),
        "rows_per_position": round(local["metrics"]["rows"] / n, 2),
        "rows_stored_per_position_depth1": round(local["metrics"]["rows_stored"] / n, 2),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
