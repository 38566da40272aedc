"""Ingestion speed on the grandmaster games: one worker against all workers, in the same run.

Reads ``../shared/datasets/gm/*.pgn`` (relative to the repository; ``MOVETUNER_GM_DIR``
overrides it, as in ``tests/conftest.py``) with the default filters, once with one worker and
once with every core, and prints one JSON line:

- ``games``, ``positions_kept``: games read and positions written (equal for both runs, and the
  files byte-identical: ``identical_output``);
- ``w1_*`` / ``wN_*``: elapsed seconds, games/s and positions/s (positions kept) with 1 and with
  ``workers`` processes, and ``speedup``;
- ``peak_rss_mb_self`` / ``peak_rss_mb_children``: peak resident memory of this process and of
  the largest worker (``resource.getrusage`` maxrss);
- ``target_60s_met``: whether the all-workers run took under 60 s.

It exits 0 with ``{"skipped": ...}`` when the folder is absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from common import GM_DIR, gm_files

from tuner.ingest import SPLITS, ingest
from tuner.cores import available_cores


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for split in SPLITS:
        h.update((folder / f"{split}.parquet").read_bytes())
    return h.hexdigest()


def timed_run(files: list[Path], out: Path, workers: int) -> tuple[dict, float]:  # type: ignore[type-arg]
    with open(os.devnull, "w") as devnull:
        start = time.perf_counter()
        manifest = ingest(files, out, workers=workers, progress=False, log=devnull)
        return manifest, time.perf_counter() - start


def main() -> None:
    files = gm_files()
    if not files:
        print(json.dumps({"bench": "ingest", "skipped": f"no PGN files in {GM_DIR}"}))
        return
    workers = available_cores()
    out: dict[str, object] = {"bench": "ingest", "files": [f.name for f in files],
                              "input_mb": round(sum(f.stat().st_size for f in files) / 1e6, 2),
                              "workers": workers, "cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for label, n in (("w1", 1), ("wN", workers)):
            manifest, seconds = timed_run(files, Path(tmp) / label, n)
            games, kept = manifest["games"]["read"], manifest["positions"]["kept"]
            results[label] = (manifest, digest(Path(tmp) / label))
            out[f"{label}_seconds"] = round(seconds, 2)
            out[f"{label}_games_per_s"] = round(games / seconds, 1)
            out[f"{label}_positions_per_s"] = round(kept / seconds, 1)
        m1 = results["w1"][0]
        out["games"] = m1["games"]["read"]
        out["games_kept"] = m1["games"]["kept"]
        out["positions_kept"] = m1["positions"]["kept"]
        out["problems"] = m1["problems"]["count"]
        out["identical_output"] = results["w1"][1] == results["wN"][1]
    out["speedup"] = round(float(out["w1_seconds"]) / float(out["wN_seconds"]), 2)  # type: ignore[arg-type]
    scale = 1024 if sys.platform != "darwin" else 1024 * 1024  # maxrss is KiB on Linux, bytes on macOS
    out["peak_rss_mb_self"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 1e6, 1)
    out["peak_rss_mb_children"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale / 1e6, 1)
    out["target_60s_met"] = float(out["wN_seconds"]) < 60  # type: ignore[arg-type]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
