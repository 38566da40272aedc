"""One MMTO iteration on 100,000 GM positions: this process's threads against a Dask
LocalCluster on the same machine, and the per-position costs that size a cluster.

Both runs load the same seeded sample of ``MAX_TRAIN`` training positions (and 5,000
validation positions), measure the start (``begin``: the first sweep, which also ships the
positions to the workers and warms their numba caches), then time one outer iteration as the
driver runs it: 32 update steps, the sweep of every training position and the validation
move-match. The Dask run uses a LocalCluster of one worker process per core, one numba thread
each (the cores divided among the workers), so that both use every core.

Prints one JSON line:

- ``local_seconds``, ``dask_seconds`` and ``overhead_ratio`` (target: at most 1.3);
- ``identical``: the Dask iteration's weights and metrics (all but ``*_seconds``) equal the
  local one's bit for bit;
- ``bytes_per_iteration``: what crossed between driver and workers in the iteration (weights
  out, per-chunk results back: ``results_bytes``, mostly the PV-leaf tables), and
  ``positions_bytes_once``: the positions shipped once per run;
- per-position costs for ``docs/scaling.md``: ``search_core_seconds_per_position`` at depth 1
  (sweep seconds times cores over positions) and at depth 2 (a depth-2 sweep of
  ``DEPTH2_SAMPLE`` positions), the stored leaf-table bytes per position at both depths
  (``leaf_bytes_per_position``: depth 1, the compact layout of :mod:`objectives.leaf_table`,
  target at most 1,000; ``leaf_bytes_per_position_tapered``: the same leaves in the former
  tapered CSR layout), ``update_seconds`` of the 32 steps, and the driver's peak memory.

Arguments: ``python bench/scale.py [--data DIR] [--max-train N] [--workers W]``; the GM
position set defaults to ``datasets/built/gm`` (built from ``../shared/datasets/gm`` once).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import gm_position_set

from search.weights import load_weights
from tuner.cores import available_cores, threads_for
from tuner.methods.mmto import MmtoConfig, MmtoTrainer, search_training_set
from tuner.training.paced import validation_match
from tuner.training.run_context import open_run_context
from tuner.training.training_data import load_training_data
from tuner.training.tune_config import TuneConfig

#: positions of the depth-2 sample (a depth-2 sweep costs ~20 times a depth-1 one)
DEPTH2_SAMPLE = 2000


def tapered_bytes(table: Any) -> int:
    """Bytes the same leaves took in the tapered CSR layout (before issue 26's compact one)."""
    return sum(a.nbytes for a in (table.pos_ptr, table.played, *table.tapered()))


def one_iteration(common: TuneConfig, data: Any) -> dict[str, Any]:
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
    moved = {k: after[k] - before.get(k, 0) for k in after}
    assert trainer.summary is not None  # set by the step just taken
    return {"seconds": seconds, "begin_seconds": begin_seconds, "metrics": metrics,
            "weights": trainer.weights().copy(), "moved": moved, "positions_once": after.get("positions", 0),
            "leaf_bytes": trainer.summary.table.nbytes, "tapered_bytes": tapered_bytes(trainer.summary.table)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="", help="GM position set (default: datasets/built/gm)")
    ap.add_argument("--max-train", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=0, help="LocalCluster workers (default: one per core)")
    args = ap.parse_args()
    data_dir = Path(args.data) if args.data else gm_position_set()
    if data_dir is None:
        print(json.dumps({"bench": "scale", "skipped": "no GM games"}))
        return
    base = TuneConfig(data=str(data_dir), out="-", max_train=args.max_train)
    data = load_training_data(base, progress=False)
    cores = available_cores()
    local = one_iteration(base, data)
    dask = one_iteration(dataclasses.replace(base, executor="dask", workers=args.workers), data)

    def strip(m: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in m.items() if not k.endswith("_seconds")}

    identical = bool(np.array_equal(local["weights"], dask["weights"])) and strip(local["metrics"]) == strip(dask["metrics"])
    n = len(data.train)
    search1 = local["metrics"]["search_seconds"]
    # depth 2 on a sample: seconds and stored leaf-table bytes per position
    sample = data.train.subset(np.arange(min(DEPTH2_SAMPLE, n)))
    t = time.perf_counter()
    s2 = search_training_set(sample, data.train_played_index[:len(sample)], local["weights"], depth=2,
                             budget=base.budget, slope=0.02, window=300.0, n_threads=threads_for(base.threads), progress=False)
    depth2_seconds = time.perf_counter() - t
    leaf2 = s2.table.nbytes
    moved = dask["moved"]
    out = {
        "bench": "scale", "train_positions": n, "validation_positions": len(data.validation), "cores": cores,
        "chunk": base.chunk, "workers": args.workers or cores,
        "local_seconds": round(local["seconds"], 2), "dask_seconds": round(dask["seconds"], 2),
        "overhead_ratio": round(dask["seconds"] / local["seconds"], 3),
        "local_begin_seconds": round(local["begin_seconds"], 2), "dask_begin_seconds": round(dask["begin_seconds"], 2),
        "identical": identical,
        "bytes_per_iteration": moved.get("shared", 0) + moved.get("results", 0),
        "weights_bytes_per_iteration": moved.get("shared", 0), "results_bytes_per_iteration": moved.get("results", 0),
        "positions_bytes_once": dask["positions_once"],
        "search_seconds_local": round(search1, 2), "update_seconds_local": local["metrics"]["update_seconds"],
        "search_core_seconds_per_position_depth1": round(search1 * cores / n, 7),
        "search_core_seconds_per_position_depth2": round(depth2_seconds * cores / len(sample), 7),
        "leaf_bytes_per_position": round(local["leaf_bytes"] / n, 1),
        "leaf_bytes_per_position_tapered": round(local["tapered_bytes"] / n, 1),
        "target_leaf_bytes_met": local["leaf_bytes"] / n <= 1000,
        "leaf_table_bytes_per_position_depth1": round(local["leaf_bytes"] / n, 1),
        "leaf_table_bytes_per_position_depth2": round(leaf2 / len(sample), 1),
        "rows_per_position": round(local["metrics"]["rows"] / n, 2),
        "rows_stored_per_position_depth1": round(local["metrics"]["rows_stored"] / n, 2),
        "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "target_ratio_met": dask["seconds"] / local["seconds"] <= 1.3,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
