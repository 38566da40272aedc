"""Self-play data and value training (issue 41): generation speed, Texel's epoch on it, and
whether the weights it makes pay in games.

Stages (``--stages``, default all, in this order; each reuses what the earlier ones left in
``--out``):

- ``generate``: ``tuner selfplay gm --games GAMES --nodes NODES`` into ``OUT/set`` (resumed if
  there): ``positions``, ``games``, ``positions_per_s`` (of the games played now, both cores),
  ``peak_rss_mb`` (the largest process), ``minutes_per_million`` (target: 1,000,000 positions in
  20 minutes at 5,000 nodes). With ``--executor dask`` (issue 60), the same games twice, each
  from an empty folder: on a Dask LocalCluster of ``--workers`` processes into ``OUT/set`` (the
  figures above), and as the baseline with ``--workers`` local processes into ``OUT/set-local``
  (``local``: its figures); ``dask_vs_local``, the ratio of the two ``positions_per_s`` (target at
  least 0.9); ``identical``, whether the split files are the same bytes; ``positions_per_s_wall``
  counts the whole command (the interpreter's and the cluster's or pool's start too), where
  ``positions_per_s`` counts the games' play from the first game handed out (the manifest's:
  it includes the local pool's start but not the LocalCluster's, which is up before the first
  game; both include loading the kernels in the workers), ``dask_vs_local_wall`` their ratio:
  on a few games the two ratios differ by those starts, on thousands they agree;
- ``epoch``: one Texel epoch from ``gm`` over every training position (``texel_epoch_seconds``,
  ``texel_positions``; target for a million positions: under 60 s);
- ``pst``: Texel on the set from ``material``, material and piece-square tables only
  (``--train material,pst``), then ``PST_GAMES`` games at 20,000 nodes against PeSTO's tables
  (``datasets/weights/pesto.json``) from the shipped openings (``pst_vs_pesto``; target: the
  interval above 0);
- ``full``: Texel on the set from ``gm``, every term, then ``FULL_GAMES`` games against ``gm``
  at 20,000 nodes and at 100 ms a move (``full_vs_gm_nodes``, ``full_vs_gm_100ms``; targets:
  won at 20,000 nodes, not lost at 100 ms).

Matches report W/D/L, score, Elo with its 95 % interval and seconds (:func:`common.match_record`).
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, match_record

STAGES = ("generate", "epoch", "pst", "full")


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", default=str(REPO / "results" / "bench-selfplay"), help="working folder (kept)")
    ap.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    ap.add_argument("--games", type=int, default=9000, help="self-play games (about 100 positions each)")
    ap.add_argument("--nodes", type=int, default=5000, help="nodes per self-play move")
    ap.add_argument("--seed", type=int, default=1, help="self-play seed")
    ap.add_argument("--workers", type=int, default=0, help="self-play processes (0: one per core)")
    ap.add_argument("--executor", choices=("local", "dask"), default="local",
                    help="dask: generate on a Dask LocalCluster of --workers processes and again locally, "
                         "and compare (the generate stage only)")
    ap.add_argument("--epochs", type=int, default=10, help="Texel epochs of the pst and full stages")
    ap.add_argument("--lam", type=float, default=0.75, help="Texel's lam for the pst and full stages")
    ap.add_argument("--pst-games", type=int, default=400, help="games of the pst stage's match")
    ap.add_argument("--full-games", type=int, default=400, help="games of each of the full stage's matches")
    return ap.parse_args()


def _tuner(*argv: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([sys.executable, "-m", "tuner", *argv], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"tuner {' '.join(argv)}: exit {r.returncode}: {r.stderr.strip().splitlines()[-1:]}")
    return r


def _generate(data: Path, args: argparse.Namespace, *flags: str, fresh: bool = False) -> dict[str, object]:
    """``tuner selfplay`` into ``data`` (resumed if there, unless ``fresh``) and its figures."""
    again = ["--overwrite"] if fresh else ["--resume"] if (data / "selfplay.json").is_file() else []
    start = time.perf_counter()
    _tuner("selfplay", "gm", "--out", str(data), "--games", str(args.games), "--nodes", str(args.nodes),
           "--seed", str(args.seed), "--workers", str(args.workers), "--no-progress", *again, *flags)
    seconds = time.perf_counter() - start
    manifest = json.loads((data / "manifest.json").read_text())
    sp = manifest["selfplay"]
    rate = sp["positions_per_s"]
    return {"positions": manifest["positions"]["kept"], "positions_played": manifest["positions"]["played"],
            "games": manifest["games"]["kept"], "games_played_now": sp["games_played_now"],
            "positions_per_s": rate, "minutes_per_million": round(1e6 / rate / 60, 1) if rate else None,
            "positions_per_s_wall": round(sp["positions_played_now"] / seconds, 1),
            "generate_seconds": round(seconds, 1), "results_white_view": sp["results"],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)}


def _dask_against_local(out: Path, args: argparse.Namespace) -> dict[str, object]:
    """The same games on a Dask LocalCluster (``OUT/set``) and locally (``OUT/set-local``), each
    from an empty folder: the Dask run's figures, the local ones, their ratio and whether the
    split files are the same bytes."""
    local = _generate(out / "set-local", args, fresh=True)
    dask = _generate(out / "set", args, "--executor", "dask", fresh=True)
    identical = all((out / "set" / split).read_bytes() == (out / "set-local" / split).read_bytes()
                    for split in ("train.parquet", "validation.parquet", "test.parquet"))
    ratio = (round(float(dask["positions_per_s"]) / float(local["positions_per_s"]), 3)  # type: ignore[arg-type]
             if dask["positions_per_s"] and local["positions_per_s"] else None)
    wall = round(float(dask["positions_per_s_wall"])  # type: ignore[arg-type]
                 / float(local["positions_per_s_wall"]), 3)  # type: ignore[arg-type]
    keep = ("positions_per_s", "positions_per_s_wall", "generate_seconds", "positions", "games")
    return {**dask, "executor": "dask", "workers": args.workers, "local": {k: local[k] for k in keep},
            "dask_vs_local": ratio, "dask_vs_local_wall": wall, "identical": identical}


def _texel(data: Path, run: Path, start: str, *flags: str) -> dict[str, object]:
    _tuner("tune", "--method", "texel", "--data", str(data), "--out", str(run), "--start", start, "--overwrite",
           "--quiet", *flags)
    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return {"epochs": len(metrics) - 1, "best_epoch": metrics[-1].get("best_iteration"),
            "e_validation": [m.get("e_validation") for m in metrics],
            "match_validation": [m.get("match_validation") for m in metrics],
            "seconds_per_epoch": round(sum(m["iteration_seconds"] for m in metrics[1:]) / max(1, len(metrics) - 1), 1),
            "train_positions": metrics[0].get("train_positions")}


def main() -> None:
    args = _args()
    stages = [s for s in args.stages.split(",") if s]
    unknown = sorted(set(stages) - set(STAGES))
    if unknown:
        raise SystemExit(f"unknown stages: {', '.join(unknown)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = out / "set"
    record: dict[str, object] = {"bench": "selfplay", "nodes": args.nodes}
    if "generate" in stages:
        record.update(_dask_against_local(out, args) if args.executor == "dask" else _generate(data, args))
    if "epoch" in stages:
        epoch = _texel(data, out / "texel-epoch", "gm", "--epochs", "1", "--keep", "last")
        record.update({"texel_epoch_seconds": epoch["seconds_per_epoch"], "texel_positions": epoch["train_positions"]})
    if "pst" in stages:
        pst = _texel(data, out / "pst", "material", "--train", "material,pst", "--epochs", str(args.epochs),
                     "--lam", str(args.lam))
        record["pst_run"] = pst
        record["pst_vs_pesto"] = match_record(str(out / "pst" / "weights.json"),
                                              str(REPO / "datasets" / "weights" / "pesto.json"), args.pst_games,
                                              ["--nodes", "20000"], str(out / "pst-vs-pesto.pgn"))
    if "full" in stages:
        full = _texel(data, out / "full", "gm", "--epochs", str(args.epochs), "--lam", str(args.lam))
        record["full_run"] = full
        weights = str(out / "full" / "weights.json")
        record["full_vs_gm_nodes"] = match_record(weights, "gm", args.full_games, ["--nodes", "20000"],
                                                  str(out / "full-vs-gm-nodes.pgn"))
        record["full_vs_gm_100ms"] = match_record(weights, "gm", args.full_games, ["--movetime", "100"],
                                                  str(out / "full-vs-gm-100ms.pgn"))
    print(json.dumps(record))


if __name__ == "__main__":
    main()
