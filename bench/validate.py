"""The cost of the board check at the kernels' boundary (:func:`search.core.validate.check_boards`)
next to the work it guards: a depth-1 sweep of the same boards, measured in the same run.

Prints one JSON line: boards, seconds of the check (best of 5) and of the sweep, their ratio
(target: the check under 5 % of a sweep).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from common import gm_boards

from search.tree.search_api import sweep
from search.core.convert import from_chess
from search.core.validate import check_boards
from search.params.weights import load_weights


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, and no stray arguments
    boards = np.stack([from_chess(b) for b in gm_boards(20_000)])
    w = load_weights("classic").values
    sweep(boards[:64], 1, w, leaves=False)  # load the kernels
    check_boards(boards[:64])
    t0 = time.perf_counter()
    sweep(boards, 1, w, leaves=False)
    t_sweep = time.perf_counter() - t0
    t_check = []
    for _ in range(5):
        t0 = time.perf_counter()
        check_boards(boards)
        t_check.append(time.perf_counter() - t0)
    ratio = min(t_check) / t_sweep
    print(json.dumps({"bench": "validate", "boards": len(boards), "check_seconds": round(min(t_check), 4),
                      "sweep_seconds": round(t_sweep, 3), "check_over_sweep": round(ratio, 5),
                      "target_met": ratio < 0.05}))


if __name__ == "__main__":
    main()
