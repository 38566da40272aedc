"""Speed of the batched alpha-beta search on positions from real games, 1 thread and all cores.

Prints one JSON line:
- ``source``, ``positions``: GM game positions (plies 16 and later), or seeded playouts when the
  GM folder is absent;
- ``search_depth``, ``nodes_per_s_1`` / ``nodes_per_s_all``: nodes (interior, leaf and
  quiescence, as the kernel counts them) per second of ``search_many`` at that depth;
- ``sweep_positions_per_s_1`` / ``sweep_positions_per_s_all``, ``sweep_nodes_per_s_*``: the
  MMTO sweep (every legal move of a position searched at depth 1 + quiescence, PV leaves kept);
- ``threads``, ``speedup_search`` and ``speedup_sweep`` (all cores / 1 thread);
- the targets of issue 4: 1 million nodes per second per thread; all cores >= 1.6 x one thread.

Each figure is the best of ``REPEATS`` timed passes after a warm-up (compilation).
"""

from __future__ import annotations

import json

import numba
import numpy as np
from common import gm_boards, playout_boards, timed

from search.search_api import search_many, sweep
from search.convert import from_chess
from search.weights import load_weights

N_POSITIONS = 4_000
SEARCH_DEPTH = 3
REPEATS = 3


def main() -> None:
    boards = [b for b in gm_boards(4 * N_POSITIONS) if b.ply() >= 16][:N_POSITIONS]
    source = "gm"
    if len(boards) < N_POSITIONS:
        boards, source = playout_boards(N_POSITIONS), "random playouts"
    arr = np.stack([from_chess(b) for b in boards])
    w = load_weights("classic").values
    cores = numba.config.NUMBA_NUM_THREADS
    search_many(arr[:64], SEARCH_DEPTH, w)
    sweep(arr[:64], 1, w)
    out: dict[str, object] = {"source": source, "positions": len(arr), "threads": cores,
                              "search_depth": SEARCH_DEPTH}
    for label, n in (("1", 1), ("all", cores)):
        nodes = int(search_many(arr, SEARCH_DEPTH, w, n_threads=n).nodes.sum())
        t = min(timed(lambda n=n: search_many(arr, SEARCH_DEPTH, w, n_threads=n), REPEATS))
        out[f"nodes_per_s_{label}"] = round(nodes / t)
        sw_nodes = int(sweep(arr, 1, w, n_threads=n).nodes.sum())
        t = min(timed(lambda n=n: sweep(arr, 1, w, n_threads=n), REPEATS))
        out[f"sweep_positions_per_s_{label}"] = round(len(arr) / t)
        out[f"sweep_nodes_per_s_{label}"] = round(sw_nodes / t)
    out["speedup_search"] = round(out["nodes_per_s_all"] / out["nodes_per_s_1"], 2)  # type: ignore[operator]
    out["speedup_sweep"] = round(out["sweep_positions_per_s_all"] / out["sweep_positions_per_s_1"], 2)  # type: ignore[operator]
    out["target_nodes_per_s_per_thread"] = 1_000_000
    out["target_speedup"] = 1.6
    out["targets_met"] = bool(out["nodes_per_s_1"] >= 1_000_000 and min(out["speedup_search"], out["speedup_sweep"]) >= 1.6)  # type: ignore[call-overload, operator]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
