"""Streamed Texel training (issue 60 item 3): peak memory flat in the set's size, and training
positions a second against the in-memory path, for the network's Texel training and the linear one.

Run from the repository root: ``PYTHONPATH=. python bench/stream.py [--work DIR] [--rows 50000000]
[--today-rows 3900000] [--epoch-windows 2] [--methods network,linear]`` (about 45 minutes on 2
loaded cores with the defaults, and 2 GB of disk under ``--work``, a temporary folder by default).

It builds, chunk by chunk (never a whole set in memory), from the grandmaster games'
compact position set (``tuner ingest --format compact`` of ``../shared/datasets/gm``, or the
shipped sample games without them) two synthetic compact sets whose training split is that
split repeated (each copy's game ids shifted): ``today`` of about ``--today-rows`` positions
(the 3.9 M of the runs ``docs/network.md`` measured) and ``big`` of ``--rows`` (50 M: 2 GB at 40
bytes a position). Each run below is a child ``tuner tune --method texel`` process, one epoch,
its peak resident memory read from ``wait4``:

- ``memory``: today's path (``--stream off``: the whole training split loaded, its leaves
  stored) on ``today``, ``--epochs`` epochs (3), the fastest after the first measured (the
  machine's load swings; ``epoch_seconds_each`` has them all);
- ``streamed``: ``--stream on`` (windows of 16 chunks of 65,536) on ``today``, the same;
- ``streamed_big``: ``--stream on`` on ``big``, an epoch bounded to ``--epoch-windows`` windows
  (a whole 50 M epoch takes hours here): the peak of a stream does not depend on how many
  windows it reads, only on a window's size, so it is the set's size that this run changes.

The speed is compared after the first epoch: the cost of a quiescence search depends on the
weights searched with (a fresh network's take many more nodes), and in the first epoch the
streamed run searches most windows with weights the in-memory run only reaches at its end; and
the streamed run checks each chunk's records the first time it reads them, which the in-memory
run does while loading, before its first epoch.

Settings: the network ``network:128`` with the ``nnue`` recipe's ``--batch-size 4096 --lam 1 --k
0.0064``; the linear evaluator from ``gm`` with ``--batch-size 4096 --k 0.0064``. The figures,
for each method and run: ``peak_rss_mb``, ``train_positions`` (of the epoch), ``epoch_seconds``
(reading, searching and updating: the metrics' ``read_seconds + search_seconds +
update_seconds``, the validation search included in both paths), ``positions_per_s``, the
search's ``nodes`` and the epoch's ``e_validation``; then
``streamed_over_memory`` (positions a second, target at least 1), and the targets: a peak under
4 GB on ``big``, and ``big``'s peak within 10 % (+ 100 MB) of ``today``'s streamed one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

SETTINGS = {
    "network": ["--start", "network:128", "--batch-size", "4096", "--lam", "1", "--k", "0.0064"],
    "linear": ["--start", "gm", "--batch-size", "4096", "--k", "0.0064"],
}


def source_set(work: Path) -> tuple[Path, str]:
    """The compact position set the synthetic ones repeat, and its name: the GM games' (or the
    shipped sample's, without them)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import gm_files  # noqa: PLC0415

    files = [str(f) for f in gm_files()]
    out = work / ("source-gm" if files else "source-sample")
    if not (out / "manifest.json").exists():
        subprocess.run([sys.executable, "-m", "tuner", "ingest", *(files or ["--sample"]), "--out", str(out),
                        "--format", "compact", "--no-progress"], check=True, stdout=subprocess.DEVNULL)
    return out, "gm" if files else "sample"


def repeated_set(source: Path, out: Path, rows: int) -> int:
    """A compact set at ``out`` whose training split is ``source``'s repeated up to ``rows``
    records (each copy's game ids shifted past the last), written chunk by chunk; the other
    splits copied. Returns the training rows."""
    from tuner.ingest.compact_file import CompactFile, CompactWriter  # noqa: PLC0415

    if (out / "manifest.json").exists() and len(CompactFile(out / "train.mtpos")) == rows:
        return rows
    out.mkdir(parents=True, exist_ok=True)
    for name in ("validation.mtpos", "test.mtpos"):
        shutil.copy(source / name, out / name)
    src = CompactFile(source / "train.mtpos")
    shift = int(max(int(c["game_id"].max()) for c in src.chunks())) + 1
    written = 0
    with CompactWriter(out / "train.mtpos") as writer:
        copy = 0
        while written < rows:
            for records in src.chunks():
                part = records[:rows - written].copy()
                part["game_id"] += copy * shift
                writer.write(part)
                written += len(part)
                if written >= rows:
                    break
            copy += 1
    manifest = json.loads((source / "manifest.json").read_text())
    manifest.setdefault("rows", {})["train"] = written
    if isinstance(manifest.get("splits", {}).get("train"), dict):
        manifest["splits"]["train"]["positions"] = written
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return written


def run(data: Path, out: Path, method: str, epochs: int, *extra: str) -> dict[str, Any]:
    """``epochs`` epochs of ``tuner tune --method texel`` in a child process: the figures of the
    fastest epoch after the first (of the only one, with one), the child's peak memory and its
    wall time."""
    cmd = [sys.executable, "-m", "tuner", "tune", "--method", "texel", "--data", str(data), "--out", str(out),
           "--overwrite", "--epochs", str(epochs), "--keep", "last", "--quiet", *SETTINGS[method], *extra]
    log = out.with_name(out.name + ".log")
    t = time.perf_counter()
    with open(log, "w") as fh:
        child = subprocess.Popen(cmd, stderr=fh)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not the largest of all children
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench/stream.py: {' '.join(cmd)} failed: {log.read_text().strip()[-500:]}")
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]

    def seconds_of(epoch: dict[str, Any]) -> float:
        return float(epoch.get("read_seconds", 0.0) + epoch["search_seconds"] + epoch["update_seconds"])

    later = lines[2:] or lines[1:]  # after the first epoch, when there are more
    epoch = min(later, key=seconds_of)  # the least loaded of them: the machine's load swings
    n = epoch.get("train_positions") or lines[0]["train_positions"]
    seconds = seconds_of(epoch)
    return {"peak_rss_mb": round(usage.ru_maxrss / 1024), "epoch": epoch["iteration"],
            "epoch_seconds_each": [round(seconds_of(e), 1) for e in lines[1:]], "train_positions": n,
            "epoch_seconds": round(seconds, 1), "read_seconds": epoch.get("read_seconds", 0.0),
            "search_seconds": epoch["search_seconds"], "update_seconds": epoch["update_seconds"],
            "positions_per_s": round(n / seconds), "nodes": epoch["nodes"], "updates": epoch["updates"],
            "e_validation": round(epoch["e_validation"], 5), "wall_seconds": round(wall, 1),
            "load_average_5min": round(os.getloadavg()[1], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", help="folder for the sets and runs (kept; default: a temporary one, removed)")
    ap.add_argument("--rows", type=int, default=50_000_000, help="training positions of the big set (default 50 M)")
    ap.add_argument("--today-rows", type=int, default=3_900_000,
                    help="training positions of the set both paths train on (default 3.9 M)")
    ap.add_argument("--epoch-windows", type=int, default=2,
                    help="windows of the bounded epoch on the big set (default 2, of 1,048,576 positions)")
    ap.add_argument("--methods", default="network,linear", help="network, linear or both (default both)")
    ap.add_argument("--epochs", type=int, default=3,
                    help="epochs of the runs on the today set, the fastest after the first measured (default 3)")
    args = ap.parse_args()
    methods = [m for m in args.methods.split(",") if m]
    unknown = [m for m in methods if m not in SETTINGS]
    if unknown:
        raise SystemExit(f"bench/stream.py: unknown method(s) {', '.join(unknown)}: choose network, linear")
    tmp = None if args.work else tempfile.TemporaryDirectory(prefix="bench-stream-")
    work = Path(args.work or tmp.name)  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    try:
        source, name = source_set(work)
        t = time.perf_counter()
        today = work / "today"
        today_rows = repeated_set(source, today, args.today_rows)
        big = work / "big"
        big_rows = repeated_set(source, big, args.rows)
        record: dict[str, Any] = {"bench": "stream", "source": name,
                                  "today_rows": today_rows, "big_rows": big_rows,
                                  "big_bytes": (big / "train.mtpos").stat().st_size,
                                  "build_seconds": round(time.perf_counter() - t, 1)}
        targets: dict[str, bool] = {}
        for method in methods:
            r = {"memory": run(today, work / f"{method}-memory", method, args.epochs, "--stream", "off"),
                 "streamed": run(today, work / f"{method}-streamed", method, args.epochs, "--stream", "on"),
                 "streamed_big": run(big, work / f"{method}-big", method, 1, "--stream", "on", "--epoch-windows",
                                     str(args.epoch_windows))}
            r["streamed_over_memory"] = round(r["streamed"]["positions_per_s"] / r["memory"]["positions_per_s"], 3)
            record[method] = r
            targets[f"{method}_big_peak_under_4gb"] = r["streamed_big"]["peak_rss_mb"] < 4096
            targets[f"{method}_peak_flat"] = (r["streamed_big"]["peak_rss_mb"]
                                              <= 1.1 * r["streamed"]["peak_rss_mb"] + 100)
            targets[f"{method}_no_slower"] = r["streamed_over_memory"] >= 1.0
        record["load_average"] = [round(x, 2) for x in os.getloadavg()]
        record["targets"] = targets
        print(json.dumps(record))
        sys.stdout.flush()
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
