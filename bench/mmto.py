"""MMTO on the grandmaster games: from the ``material`` weights, on the GM train split.

Ingests ``../shared/datasets/gm`` once (``datasets/built/gm``, reused), trains with the default
MMTO settings on a seeded sample of ``MAX_TRAIN`` training positions for ``ITERATIONS`` outer
iterations, and prints one JSON line:

- ``train_positions``, ``validation_positions``, ``iterations``, ``threads``;
- ``match_validation_before`` / ``_after`` (ties as fractions) and ``match_validation_best``
  with its iteration (the figure after the last iteration is the headline one);
- ``j_main_before`` / ``_after`` (per position, every legal move counted);
- ``seconds_per_iteration``: mean wall time of an outer iteration (search of every legal move of
  every training position, 32 updates); ``search_seconds`` and ``update_seconds`` means;
- the targets of issue 6: validation move-match +8 points over the start, and an outer
  iteration over 100,000 positions in under 2 minutes on 2 cores.

Arguments: ``python bench/mmto.py [ITERATIONS] [MAX_TRAIN]``.
"""

from __future__ import annotations

import json

from common import gm_position_set_or_skip, int_arguments, tuning_run

from tuner.cores import thread_ceiling


def main() -> None:
    args = int_arguments(iterations=4, max_train=100_000)
    iterations, max_train = args["iterations"], args["max_train"]
    data = gm_position_set_or_skip("mmto")
    if data is None:
        return
    with tuning_run("mmto", data, "--iterations", str(iterations), "--max-train", str(max_train),
                    "--patience", str(iterations), "--keep", "last", "--quiet") as (run, total):
        records = run.read_metrics()
        config = run.config_path.read_text()
    first, last = records[0], records[-1]
    later = records[1:]
    best = max(records, key=lambda r: r["match_validation"])
    per_iter = [r["search_seconds"] + r["update_seconds"] for r in later]
    out = {
        "bench": "mmto", "train_positions": max_train, "validation_positions": 5000,
        "iterations": len(later), "threads": thread_ceiling(),
        "match_validation_before": round(first["match_validation"], 4),
        "match_validation_after": round(last["match_validation"], 4),
        "match_validation_gain_points": round(100 * (last["match_validation"] - first["match_validation"]), 2),
        "match_validation_best": round(best["match_validation"], 4), "best_iteration": best["iteration"],
        "match_train_before": round(first["match_train"], 4), "match_train_after": round(last["match_train"], 4),
        "j_main_before": round(first["j_main"], 4), "j_main_after": round(last["j_main"], 4),
        "seconds_per_iteration": round(sum(per_iter) / len(per_iter), 1),
        "search_seconds": round(sum(r["search_seconds"] for r in later) / len(later), 1),
        "update_seconds": round(sum(r["update_seconds"] for r in later) / len(later), 1),
        "total_seconds": round(total, 1),
        "nonzero_weights_after": last["nonzero_weights"],
        "target_gain_met": last["match_validation"] - first["match_validation"] >= 0.08,
        "target_seconds_met": max(per_iter) < 120,
    }
    assert "iterations" in config
    print(json.dumps(out))


if __name__ == "__main__":
    main()
