"""Fault injection at scale: ``tuner tune`` runs (MMTO and the GA on the shipped sample) SIGKILLed
and interrupted (Ctrl-C) at many seeded random points, each resumed to the end and compared
byte for byte with an uninterrupted run (the checks of ``tests/tuner/commands/test_tune_faults.py``,
which lands a few of each; this lands many).

Prints one JSON line: per method the kills and stops that landed, the runs killed, the slowest
stop after Ctrl-C (target: under 5 s) and ``identical`` (every resumed run ended as the
uninterrupted one; a difference stops the bench with an assertion naming it).

    python bench/faults.py [--kills 30] [--stops 12] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package, from a checkout

from tests.tuner.commands.test_tune_faults import faults  # noqa: E402
from tuner.cli import main as tuner  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=30, help="SIGKILLs per method (the GA gets a third)")
    ap.add_argument("--stops", type=int, default=12, help="Ctrl-Cs per method (the GA gets half)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(sys.stderr):  # progress lines
        sample = Path(tmp) / "sample"
        assert tuner(["ingest", "--sample", "--out", str(sample), "--no-progress"]) == 0
        out: dict[str, object] = {"bench": "faults"}
        out["mmto"] = faults(sample, Path(tmp) / "mmto", "mmto", kills=args.kills, stops=args.stops, seed=args.seed)
        out["ga"] = faults(sample, Path(tmp) / "ga", "ga", kills=max(1, args.kills // 3), stops=max(1, args.stops // 2),
                           seed=args.seed + 2)
        slowest = max(out["mmto"]["slowest_stop_seconds"], out["ga"]["slowest_stop_seconds"])  # type: ignore[index]
        out.update({"identical": True, "target_stop_seconds": 5.0, "targets_met": slowest < 5.0})
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
