"""The quality check of issue 15: does a tuned weight set beat the hand-set ``classic``?

Measures, on the grandmaster position set (``datasets/built/gm``, built from
``../shared/datasets/gm`` on first use):

- the move-match of ``material``, ``classic`` and the candidate on the **test** split (top-1
  with ties as fractions, top-3, mean rank; depth 1 + quiescence, as ``tuner bench move-match``);
  the test split is used here only, never for tuning or for choosing between runs;
- two matches of the candidate against ``classic`` from the shipped openings, colours swapped
  per opening: at depth 2 and at 20,000 nodes per move (``tuner bench match``; Elo with the
  pentanomial 95 % interval).

The candidate is the built-in ``gm`` set by default; ``--weights FILE`` measures another file,
and ``--recipe`` first runs the shipped recipe (``tuner tune --config tuner/recipes/gm.toml``)
into ``--run`` (default ``results/quality-gm``) and measures its weights. Prints one JSON line:
``{"bench": "quality", ..., "move_match": {set: {"top1", "top3", "mean_rank"}}, "match_depth2":
{"elo", "elo_ci95", ...}, "match_nodes": {...}, "top1_gain_points", "targets": {...}}``; the
targets are issue 15's: top-1 at least 3 points above ``classic``, both matches won with the
interval above 0.

    python bench/quality.py [--weights W] [--recipe] [--games 400] [--nodes 20000] [--depth 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, gm_position_set, match_record, tuner_json, won

from tuner.cli import main as tuner_main

RECIPE = REPO / "tuner" / "recipes" / "gm.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", default="gm", help="the candidate weight set (default: the built-in gm)")
    ap.add_argument("--recipe", action="store_true", help="run the shipped recipe first and measure its result")
    ap.add_argument("--run", default=str(REPO / "results" / "quality-gm"), help="run folder for --recipe")
    ap.add_argument("--games", type=int, default=400, help="games per match (default 400)")
    ap.add_argument("--depth", type=int, default=2, help="depth of the first match (default 2)")
    ap.add_argument("--nodes", type=int, default=20000, help="nodes per move of the second match (default 20000)")
    ap.add_argument("--max-positions", type=int, default=0, help="test positions (default: all)")
    args = ap.parse_args()

    data = gm_position_set()
    if data is None:
        print(json.dumps({"bench": "quality", "skipped": "no GM games"}))
        return
    record: dict = {"bench": "quality", "data": str(data)}  # type: ignore[type-arg]
    weights = args.weights
    if args.recipe:
        start = time.perf_counter()
        code = tuner_main(["tune", "--config", str(RECIPE), "--data", str(data), "--out", args.run,
                           "--overwrite", "--quiet"])
        if code != 0:
            raise SystemExit(code)
        record["recipe_seconds"] = round(time.perf_counter() - start, 1)
        weights = str(Path(args.run) / "weights.json")
    record["candidate"] = weights

    mm = tuner_json(["bench", "move-match", "--weights", "material", "classic", weights, "--data", str(data),
                   "--split", "test", "--max-positions", str(args.max_positions), "--json"])
    record["test_positions"] = mm["positions"]
    record["move_match"] = {("candidate" if name == weights else name): {k: r[k] for k in ("top1", "top3", "mean_rank")}
                            for name, r in mm["weights"].items()}
    gain = 100 * (record["move_match"]["candidate"]["top1"] - record["move_match"]["classic"]["top1"])
    record["top1_gain_points"] = round(gain, 2)

    with tempfile.TemporaryDirectory() as tmp:
        for key, limit in (("match_depth2", ["--depth", str(args.depth)]), ("match_nodes", ["--nodes", str(args.nodes)])):
            record[key] = match_record(weights, "classic", args.games, limit, f"{tmp}/{key}.pgn")

    record["targets"] = {"top1_plus_3_points": gain >= 3.0, "depth2_match_won": won(record["match_depth2"]),
                         "nodes_match_won": won(record["match_nodes"])}
    record["all_targets_met"] = all(record["targets"].values())
    print(json.dumps(record))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
