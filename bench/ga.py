"""The genetic algorithm on the grandmaster games: speed per generation and what it learns.

Ingests ``../shared/datasets/gm`` once (``datasets/built/gm``, reused) and runs
``tuner tune --method ga`` from the ``material`` weights, training material plus piece-square
tables, with the ACPP sizes (50 individuals, 500 positions drawn anew each generation, depth 1 +
quiescence) for ``GENERATIONS`` generations. Prints one JSON line:

- ``seconds_per_generation`` (mean, and ``evaluation_seconds``: the batched fitness search of
  the whole population, 50 x 500 positions) - ACPP took about four hours per generation in 1991;
  target: under 10 s on 2 cores;
- ``match_validation_start`` and ``match_validation_after`` (the best individual's, as kept in
  RUN/weights.json) on 5,000 validation positions, ties as fractions;
- ``fitness_best_last`` / ``fitness_mean_last``.

Arguments: ``python bench/ga.py [GENERATIONS]`` (default 30).
"""

from __future__ import annotations

import json

from common import gm_position_set_or_skip, int_arguments, tuning_run


def main() -> None:
    generations = int_arguments(generations=30)["generations"]
    data = gm_position_set_or_skip("ga")
    if data is None:
        return
    with tuning_run("ga", data, "--train", "material,pst", "--generations", str(generations),
                    "--quiet") as (run, total):
        records = run.read_metrics()
    gens = records[1:]
    out = {
        "bench": "ga", "generations": len(gens), "population": 50, "sample": 500, "train": "material,pst",
        "seconds_per_generation": round(sum(r["iteration_seconds"] for r in gens) / len(gens), 2),
        "evaluation_seconds": round(sum(r["evaluation_seconds"] for r in gens) / len(gens), 2),
        "match_validation_start": round(records[0]["match_validation"], 4),
        "match_validation_after": round(gens[-1]["best_validation"], 4),
        "match_validation_last_best_individual": round(gens[-1]["match_validation"], 4),
        "fitness_best_last": gens[-1]["fitness_best"], "fitness_mean_last": round(gens[-1]["fitness_mean"], 4),
        "total_seconds": round(total, 1),
        "target_seconds_met": max(r["iteration_seconds"] for r in gens) < 10,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
