"""``tuner bench match classic material``: 200 games at depth 2, as one JSON line.

Runs the command line exactly as a user would (``--games 200 --depth 2``, the shipped
openings, both cores) and prints its summary: W/D/L from ``classic``'s view, the score with
its 95% interval, the Elo difference with its 95% interval (pentanomial over game pairs,
normal approximation; ``null`` when infinite, i.e. a score of 0% or 100%), the terminations,
the wall-clock seconds, and ``classic_wins_clearly``: whether the lower end of the score
interval is above 50%. ``classic`` must win clearly, otherwise the match or the evaluator is
wrong. The games go to ``results/bench-match-classic-vs-material.pgn``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys

from tuner.cli import main as tuner_main

ARGS = ["bench", "match", "classic", "material", "--games", "200", "--depth", "2", "--json",
        "--out", "results/bench-match-classic-vs-material.pgn"]


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, and no stray arguments
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = tuner_main(ARGS)
    if code != 0:
        sys.exit(f"tuner {' '.join(ARGS)} failed with exit code {code}")
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    summary["classic_wins_clearly"] = summary["score_ci95"][0] > 0.5
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
