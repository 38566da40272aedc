"""The shipped EPD suite with ``material`` (the baseline) and ``classic``, as one JSON line.

Runs ``datasets/epd/movetuner.epd`` (33 tactical positions, 10 positional ones with partial
credit) through the engine of ``tuner uci`` at a fixed :data:`NODES` nodes a position with
both built-in weight sets, in this process (results do not depend on the number of workers),
and prints per weight set: positions solved with the Wilson 95 % interval, points (at most 10
a position) with the mean's normal 95 % interval, the same per theme, and the seconds taken;
then the paired difference (``classic`` minus ``material`` per position: total, mean and a
normal 95 % interval of the mean from the per-position differences' sample standard
deviation) and ``classic_higher``: whether ``classic`` scored more points than ``material``. It
must: ``material`` sees every quiet move as equal, so only the tactics can go its way.
"""

from __future__ import annotations

import argparse
import json
import time

from search.params.weights import load_weights
from tuner.limits import SearchLimits
from tuner.arena.epd import DEFAULT_SUITE, MAX_POINTS, mean_interval, parse_epd, run_suite, summarise

NODES = 20_000
WEIGHT_SETS = ("material", "classic")


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, and no stray arguments
    positions, problems = parse_epd(DEFAULT_SUITE)
    if problems:
        raise SystemExit(f"the shipped suite has problems: {problems[0]}")
    limits = SearchLimits(nodes=NODES)
    report: dict[str, object] = {"suite": str(DEFAULT_SUITE.relative_to(DEFAULT_SUITE.parents[2])),
                                 "positions": len(positions), "nodes": NODES}
    summaries = {}
    points: dict[str, list[int]] = {}
    for name in WEIGHT_SETS:
        start = time.perf_counter()
        results = run_suite(positions, load_weights(name).values, limits)
        summaries[name] = {**summarise(results), "seconds": round(time.perf_counter() - start, 2)}
        points[name] = [r.points for r in results]
    report["weights"] = summaries
    diff = [c - m for c, m in zip(points["classic"], points["material"])]
    ci = mean_interval(diff, -MAX_POINTS, MAX_POINTS)
    report["classic_minus_material"] = {"points": sum(diff), "mean_per_position": round(sum(diff) / len(diff), 4),
                                        "mean_ci95": [round(x, 4) for x in ci] if ci else None,
                                        "better": sum(d > 0 for d in diff), "worse": sum(d < 0 for d in diff)}
    report["classic_higher"] = summaries["classic"]["points"] > summaries["material"]["points"]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
