"""Merge speed (``tuner merge --mirror``): one pass over the positions, in worker processes.

Prints one JSON line (``"bench": "merge"``).

The input is the grandmaster position set (``datasets/built/gm``, built from
``../shared/datasets/gm`` on first use; the line says ``skipped`` without it), merged with
``--mirror`` (every training position without castling rights mirrored a<->h), the way a
self-play set is merged before training:

- ``w1_s`` / ``wN_s``: seconds of the whole merge (``tuner.ingest.merge.merge_sets``: reading,
  the legality of every row's move, the mirrors, deduplication, writing) with one worker
  process and with ``workers`` (every core), ``w1_rows_per_s`` / ``wN_rows_per_s`` (rows read
  per second), ``speedup``; ``identical_output``: the two wrote the same split files;
- the baseline, measured in the same run on the first ``--sample`` training rows: the three
  passes the merge made before it read each position once (``legal_rows``, then again
  ``legal_rows`` and ``mirror_rows`` for the mirrors: ``three_pass_us_per_train_row``) against
  the one pass (``check_rows``: ``one_pass_us_per_train_row``), microseconds a training row;
- ``peak_rss_mb``: this process's peak resident memory.

Run it on an idle machine: the workers' figures count every core.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from common import gm_position_set_or_skip

from tuner.cores import available_cores
from tuner.ingest.merge import check_rows, legal_rows, merge_sets, mirror_rows
from tuner.ingest.reader import read_split
from tuner.ingest.schema import SPLITS, split_file


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for split in SPLITS:
        h.update((folder / split_file(split)).read_bytes())
    return h.hexdigest()


def _per_row_us(sample: int, data: Path) -> tuple[float, float]:
    """Microseconds a training row: the three passes before, the one pass now."""
    frame = read_split(data, "train", rows=np.arange(0, sample, dtype=np.int64))
    t = time.perf_counter()
    legal_rows(frame)  # the pass over every row
    mirror_rows(legal_rows(frame)[0])  # the mirrors' pass over the training rows, legality again
    three = time.perf_counter() - t
    t = time.perf_counter()
    check_rows(frame["fen"].to_list(), frame["move"].to_list(), True)
    one = time.perf_counter() - t
    return 1e6 * three / frame.height, 1e6 * one / frame.height


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Needs ../shared/datasets/gm (MOVETUNER_GM_DIR overrides it); run it from "
                                        "the repository root.")
    ap.add_argument("--workers", type=int, default=available_cores(), help="the many-worker run's processes "
                                                                           "(default: every core)")
    ap.add_argument("--sample", type=int, default=20_000, help="training rows of the per-row baseline")
    args = ap.parse_args()
    data = gm_position_set_or_skip("merge")
    if data is None:
        return 0
    three, one = _per_row_us(args.sample, data)
    out: dict[str, object] = {"bench": "merge", "data": str(data), "workers": args.workers,
                              "three_pass_us_per_train_row": round(three, 1), "one_pass_us_per_train_row": round(one, 1)}
    digests, seconds = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, workers in (("w1", 1), ("wN", args.workers)):
            t = time.perf_counter()
            manifest = merge_sets([data], Path(tmp) / name, mirror=True, progress=False, workers=workers)
            seconds[name] = time.perf_counter() - t
            read = manifest["positions"]["read"]
            out[f"{name}_s"] = round(seconds[name], 2)
            out[f"{name}_rows_per_s"] = round(read / seconds[name])
            digests[name] = _digest(Path(tmp) / name)
            out["rows_read"], out["rows_kept"] = read, manifest["positions"]["kept"]
    out["speedup"] = round(seconds["w1"] / seconds["wN"], 2)
    out["identical_output"] = digests["w1"] == digests["wN"]
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
