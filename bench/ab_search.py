"""Compare this tree's search with another tree's in one process, alternating, one thread.

    python bench/ab_search.py OTHER_TREE [--rounds 15]

Wall-clock figures on a shared or virtual machine drift by 20 % and more from one minute to the
next, so two runs of ``bench/search_speed.py`` cannot tell a 5 % change. This bench copies
``OTHER_TREE/search`` to a temporary package ``search_b`` (its imports renamed), loads both, and
times the two alternately on the same GM positions: a depth-1 sweep of 400 positions, a depth-2
sweep of 120 and a depth-3 search of 200, each ``--rounds`` times, the order swapped every round.
The ratio of each round's two times (other / this) cancels the drift that the two share; the
line gives their median and quartiles and each tree's best time. Node counts must be equal (the
trees search the same trees), else the bench stops.

The copy compiles its kernels into its own cache on the first run (minutes); run the bench twice
and read the second line: code compiled in the same process ran about 20 % slower than code
loaded from the cache in the runs that found this, which would bias the first run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numba
import numpy as np

from common import REPO, bench_boards

COPY_ROOT = REPO / "results" / "ab_search"


def _copy_package(tree: Path) -> None:
    """``tree/search`` as ``COPY_ROOT/search_b``, its own imports renamed; the compiled cache of
    an earlier copy is kept when the sources are unchanged."""
    dst = COPY_ROOT / "search_b"
    dst.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for src in sorted((tree / "search").rglob("*.py")):  # the rooms (subpackages) too
        text = src.read_text(encoding="utf-8")
        text = re.sub(r"\bfrom search\.", "from search_b.", text)
        text = re.sub(r"\bfrom search import", "from search_b import", text)
        text = re.sub(r"\bimport search\.", "import search_b.", text)
        text = re.sub(r'"search\.', '"search_b.', text)
        rel = src.relative_to(tree / "search")
        out = dst / rel
        wanted.add(rel)
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            out.write_text(text, encoding="utf-8")
    for stale in dst.rglob("*.py"):
        if stale.relative_to(dst) not in wanted:
            stale.unlink()


def _search_api_room(tree: Path) -> str | None:
    """The room of ``tree``'s search API: ``"tree"``, or ``""`` in a tree from before the rooms
    (a flat ``search/``); None when it has neither."""
    for room in ("tree", ""):
        if (tree / "search" / room / "search_api.py").exists():
            return room
    return None


def _timed_pair(first: Callable[[], object], second: Callable[[], object]) -> tuple[float, float]:
    times = []
    for f in (first, second):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("other", type=Path, help="the other tree (a checkout of this repository)")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    other = args.other.resolve()
    room = _search_api_room(other)
    if room is None:
        sys.exit(f"ab_search: {other}: no search/tree/search_api.py (or search/search_api.py) there")
    _copy_package(other)
    sys.path.insert(0, str(COPY_ROOT))
    a: ModuleType = importlib.import_module("search.tree.search_api")
    b: ModuleType = importlib.import_module(".".join(["search_b", *([room] if room else []), "search_api"]))
    from search.core.convert import from_chess  # noqa: PLC0415
    from search.params.weights import load_weights  # noqa: PLC0415

    boards, source = bench_boards(1500, min_ply=16)
    arr = np.stack([from_chess(x) for x in boards])
    w = load_weights("classic").values
    numba.set_num_threads(1)
    out: dict[str, object] = {"bench": "ab_search", "source": source, "other": str(other), "rounds": args.rounds}
    work: dict[str, Callable[[ModuleType], Any]] = {"sweep_d1": lambda m: m.sweep(arr[:400], 1, w, n_threads=1),
                                                    "sweep_d2": lambda m: m.sweep(arr[:120], 2, w, n_threads=1),
                                                    "search_d3": lambda m: m.search_many(arr[:200], 3, w, n_threads=1)}
    for name, run in work.items():
        nodes_a, nodes_b = int(run(a).nodes.sum()), int(run(b).nodes.sum())
        if nodes_a != nodes_b:
            sys.exit(f"ab_search: {name}: {nodes_a} nodes here, {nodes_b} in {other}: not the same search")
        ratios, best_a, best_b = [], float("inf"), float("inf")
        for r in range(args.rounds):
            if r % 2 == 0:
                ta, tb = _timed_pair(lambda: run(a), lambda: run(b))
            else:
                tb, ta = _timed_pair(lambda: run(b), lambda: run(a))
            ratios.append(tb / ta)
            best_a, best_b = min(best_a, ta), min(best_b, tb)
        q = np.quantile(ratios, [0.25, 0.5, 0.75])
        out[name] = {"nodes": nodes_a, "ratio_other_to_this": round(float(q[1]), 3),
                     "ratio_quartiles": [round(float(q[0]), 3), round(float(q[2]), 3)],
                     "best_s_this": round(best_a, 4), "best_s_other": round(best_b, 4)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
