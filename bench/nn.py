"""The network evaluator's check: does a trained network beat the linear ``gm``, per node and at the clock?

Measures, on the grandmaster position set (``datasets/built/gm``, built from
``../shared/datasets/gm`` on first use), with the candidate network (default: the built-in
``nnue``; ``--network FILE`` another):

- move-match of ``gm`` and the candidate on the **test** split (top-1 with ties as fractions,
  top-3, mean rank; depth 1 + quiescence, as ``tuner bench move-match``): the test split is
  used here only, never to tune or to choose;
- matches of the candidate against ``gm`` from the shipped openings, colours swapped per
  opening: at depth 2, at 20,000 nodes per move, and at equal time (100 ms per move);
- ``nodes_per_s_ratio``: the candidate's nodes per second over ``gm``'s, one thread, the same
  positions and depth (``search_many``), measured in this run;
- with ``--epoch``: one MMTO iteration of a fresh ``network:64x16x16+gm`` over 100,000 training
  positions (search + update seconds, the leaf table's bytes, the process's peak memory);
- with ``--texel-epoch SET``: one Texel epoch of a fresh ``--texel-start`` network (default
  ``network:128``, the direct form) on a self-play position set (``tuner selfplay``; scores as
  targets, ``--batch-size 4096``): its seconds, positions, the seconds it would take over 5
  million positions at that rate, and the process's peak memory.

Prints one JSON line with the figures and ``targets``: at 100 ms a move at least +50 Elo with
the interval above 0, at 20,000 nodes at least +100, nodes per second at least 0.8 of ``gm``'s,
and (with ``--texel-epoch``) an epoch over 5 M positions within 10 minutes.

    python bench/nn.py [--network F] [--games 400] [--max-positions N] [--epoch] [--texel-epoch SET]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import gm_boards, gm_position_set, match_record, tuner_json, won

from search.core.convert import from_chess
from search.evaluation.evaluators import load_evaluator
from search.tree.search_api import search_many, threads


def nodes_per_second(network: str, n_positions: int = 1000, depth: int = 3) -> dict[str, float]:
    """Nodes per second of ``gm`` and of ``network`` on the same GM positions, one thread,
    alternating three passes of each (best of three), after a warm-up."""
    boards = np.stack([from_chess(b) for b in gm_boards(4 * n_positions) if b.ply() >= 16][:n_positions])
    evs = {"linear": load_evaluator("gm"), "network": load_evaluator(network)}
    best = {k: 0.0 for k in evs}
    with threads(1):
        for ev in evs.values():
            search_many(boards[:50], depth, ev)
        for _ in range(3):
            for k, ev in evs.items():
                t = time.perf_counter()
                res = search_many(boards, depth, ev)
                best[k] = max(best[k], float(res.nodes.sum()) / (time.perf_counter() - t))
    return {"linear_nodes_per_s": round(best["linear"]), "network_nodes_per_s": round(best["network"]),
            "nodes_per_s_ratio": round(best["network"] / best["linear"], 3)}


def epoch(data: Path) -> dict[str, float]:
    """One MMTO iteration of a fresh hybrid over 100,000 training positions, in a child process
    (its peak memory is the run's)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "tuner", "tune", "--method", "mmto", "--start", "network:64x16x16+gm",
               "--data", str(data), "--out", f"{tmp}/run", "--max-train", "100000", "--max-validation", "2000",
               "--iterations", "1", "--inner-steps", "16", "--loss", "softmax", "--slope", "0.05", "--quiet"]
        start = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        line = json.loads((Path(tmp) / "run" / "metrics.jsonl").read_text().splitlines()[1])
    return {"epoch_positions": 100000, "epoch_search_seconds": line["search_seconds"],
            "epoch_update_seconds": line["update_seconds"],
            "epoch_seconds": round(line["search_seconds"] + line["update_seconds"], 1),
            "epoch_wall_seconds_with_start": round(wall, 1), "leaf_bytes": line["leaf_bytes"],
            "peak_memory_mb": round(peak_mb)}


def texel_epoch(data: str, start: str) -> dict[str, float]:
    """One Texel epoch (quiescence leaves + a pass of 4,096-position mini-batches) of a fresh
    ``start`` network on self-play set ``data``, in a child process (its peak memory is the run's)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "tuner", "tune", "--method", "texel", "--start", start, "--data", data,
               "--out", f"{tmp}/run", "--epochs", "1", "--batch-size", "4096", "--lam", "1", "--k", "0.0064",
               "--quiet"]
        subprocess.run(cmd, check=True)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        lines = [json.loads(x) for x in (Path(tmp) / "run" / "metrics.jsonl").read_text().splitlines()]
    seconds = lines[1]["search_seconds"] + lines[1]["update_seconds"]
    n = lines[0]["train_positions"]
    return {"texel_epoch_positions": n, "texel_epoch_seconds": round(seconds, 1),
            "texel_epoch_seconds_per_5m": round(seconds * 5e6 / n, 1), "texel_peak_memory_mb": round(peak_mb)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--network", default="nnue", help="the candidate network (default: the built-in nnue)")
    ap.add_argument("--games", type=int, default=400, help="games per match (default 400)")
    ap.add_argument("--max-positions", type=int, default=0, help="test positions (default: all)")
    ap.add_argument("--epoch", action="store_true", help="also time one training iteration over 100,000 positions")
    ap.add_argument("--texel-epoch", metavar="SET", help="also time one Texel epoch on this self-play position set")
    ap.add_argument("--texel-start", default="network:128", help="the fresh network of --texel-epoch")
    args = ap.parse_args()

    data = gm_position_set()
    if data is None:
        print(json.dumps({"bench": "nn", "skipped": "no GM games"}))
        return
    net = args.network
    record: dict = {"bench": "nn", "data": str(data), "candidate": net}  # type: ignore[type-arg]
    record.update(nodes_per_second(net))
    mm = tuner_json(["bench", "move-match", "--weights", "gm", net, "--data", str(data), "--split", "test",
                   "--max-positions", str(args.max_positions), "--json"])
    record["test_positions"] = mm["positions"]
    record["move_match"] = {("candidate" if name == net else name): {k: r[k] for k in ("top1", "top3", "mean_rank")}
                            for name, r in mm["weights"].items()}
    gain = 100 * (record["move_match"]["candidate"]["top1"] - record["move_match"]["gm"]["top1"])
    record["top1_gain_points"] = round(gain, 2)
    with tempfile.TemporaryDirectory() as tmp:
        for key, limit in (("match_depth2", ["--depth", "2"]), ("match_nodes", ["--nodes", "20000"]),
                           ("match_time", ["--movetime", "100"])):
            record[key] = match_record(net, "gm", args.games, limit, f"{tmp}/{key}.pgn")
    if args.epoch:
        record.update(epoch(data))
    if args.texel_epoch:
        record.update(texel_epoch(args.texel_epoch, args.texel_start))

    record["targets"] = {"time_match_plus_50": won(record["match_time"]) and record["match_time"]["elo"] >= 50,
                         "nodes_match_plus_100": won(record["match_nodes"]) and record["match_nodes"]["elo"] >= 100,
                         "nodes_per_s_ratio_0_8": record["nodes_per_s_ratio"] >= 0.8}
    if "texel_epoch_seconds_per_5m" in record:
        record["targets"]["epoch_5m_under_10_min"] = record["texel_epoch_seconds_per_5m"] <= 600
    record["all_targets_met"] = all(record["targets"].values())
    print(json.dumps(record))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
