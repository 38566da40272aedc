"""Texel's method on the grandmaster games, from the ``material`` weights, then a match.

Ingests ``../shared/datasets/gm`` once (``datasets/built/gm``, reused), runs ``tuner tune
--method texel`` from ``material`` on a seeded sample of ``MAX_TRAIN`` training positions (Adam,
full batch, the default settings) for ``EPOCHS`` epochs, then plays ``tuner bench match`` of the
result against ``material`` (200 games at depth 2 from the shipped openings). Prints one JSON
line:

- ``k``: the fitted K per centipawn; ``e_validation_before`` / ``_after`` (E on the validation
  positions of finished games) and ``e_train_before`` / ``_after``;
- ``match_validation_before`` / ``_after``: validation move-match (ties as fractions) of the
  start weights and of the weights the run kept (its best epoch by validation error E);
- ``seconds_per_epoch``: mean wall time of an epoch (the optimizer's steps and the search of
  the quiescence leaves of every training and validation position); target: under 60 s for
  100,000 positions on 2 cores;
- ``elo`` and ``elo_ci95`` of the tuned weights against ``material``, as ``bench/match.py``
  prints them (target: the interval above 0), with W/D/L and the score.

Arguments: ``python bench/texel.py [EPOCHS] [MAX_TRAIN]`` (defaults 10 and 100,000).
"""

from __future__ import annotations

import contextlib
import io
import json

from common import gm_position_set_or_skip, int_arguments, tuning_run

from tuner.cli import main as tuner_main


def main() -> None:
    args = int_arguments(epochs=10, max_train=100_000)
    epochs, max_train = args["epochs"], args["max_train"]
    data = gm_position_set_or_skip("texel")
    if data is None:
        return
    with tuning_run("texel", data, "--epochs", str(epochs), "--max-train", str(max_train), "--quiet") as (run, total):
        records = run.read_metrics()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = tuner_main(["bench", "match", str(run.weights_path), "material", "--games", "200", "--depth", "2",
                               "--json", "--out", str(run.path.parent / "games.pgn")])
        if code != 0:
            raise SystemExit(code)
        match = json.loads(out.getvalue().strip().splitlines()[-1])
    first, last = records[0], records[-1]
    epochs_done = records[1:]
    per_epoch = [r["iteration_seconds"] for r in epochs_done]
    print(json.dumps({
        "bench": "texel", "train_positions": max_train, "epochs": len(epochs_done), "k": first["k"],
        "e_train_before": round(first["e_train"], 5), "e_train_after": round(last["e_train"], 5),
        "e_validation_before": round(first["e_validation"], 5), "e_validation_after": round(last["e_validation"], 5),
        "match_validation_before": round(first["match_validation"], 4),
        "match_validation_after": round(last["best_validation"], 4), "best_epoch": last["best_iteration"],
        "seconds_per_epoch": round(sum(per_epoch) / len(per_epoch), 1), "total_seconds": round(total, 1),
        "match_games": match["games"], "wins": match["wins"], "draws": match["draws"], "losses": match["losses"],
        "score": match["score"], "elo": match["elo"], "elo_ci95": match["elo_ci95"],
        "target_e_falls": last["e_validation"] < first["e_validation"],
        "target_match_won": match["elo_ci95"][0] is not None and match["elo_ci95"][0] > 0,
        "target_seconds_met": max(per_epoch) < 60,
    }))


if __name__ == "__main__":
    main()
