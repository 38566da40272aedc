"""Nodes per second of the playing search for each network shape (issue 60 item 4): accumulator
widths and output buckets.

Prints one JSON line. Each shape of ``--shapes`` (``H`` or ``H/oO``: a direct network of H
accumulator entries and O output buckets) is made from the trained direct network ``--base``
(default ``nnue``, H = 128) so that it computes *the same scores*: its accumulator padded with
zero columns (they stay 0, so they add 0 to the output) and its output row copied to every
output bucket. The same scores give the same tree (``same_tree`` checks the node counts and
moves), so the shapes' nodes per second differ only by what a node costs. A random network of a
shape would search another tree (other cutoffs, other quiescence) and its speed would mostly
measure that. Each file of ``--nets`` (a trained ``.mtnn`` or a built-in name) is measured as
it is, with its own tree.

Every network searches the start position and 20 middle-game positions (``bench/play_search.py``'s:
the grandmaster games when ``../shared/datasets/gm`` is there, else the shipped sample games) to
``--nodes`` nodes with the playing search and a fresh table, one thread, ``--repeat`` times;
the figures are the mean nodes per second (the best of the repeats per position, against the
machine's noise), the mean depth completed and each network's speed as a fraction of the
first one's, all from this run. No engine or data beyond the repository is needed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import sys
from dataclasses import replace

import chess
import numpy as np

from play_search import middle_games
from search.core.convert import from_chess
from search.evaluation.evaluators import Evaluator, load_evaluator
from search.evaluation.network import QuantizedNetwork
from search.play.searcher import PlaySearcher


def widened(base: QuantizedNetwork, h: int, outputs: int) -> QuantizedNetwork:
    """``base`` (a direct network without output buckets) as a network of ``h`` accumulator
    entries and ``outputs`` output buckets that computes the same scores (module docstring)."""
    shape = base.shape
    if not shape.direct or shape.outputs != 1 or h < shape.h:
        sys.exit(f"bench/network_shapes.py: the base must be a direct network without output buckets and at most "
                 f"{h} wide, not {shape.spec}")
    new = replace(shape, h=h, outputs=outputs)
    p = base.params
    pad = h - shape.h
    w4 = np.concatenate([p["w4"][0, :shape.h], np.zeros(pad), p["w4"][0, shape.h:], np.zeros(pad)])
    params = {**p, "w1": np.pad(p["w1"], ((0, 0), (0, pad))), "b1": np.pad(p["b1"], (0, pad)),
              "w4": np.tile(w4, (outputs, 1)).astype(p["w4"].dtype), "b4": np.repeat(p["b4"], outputs)}
    return QuantizedNetwork(new, params, None, {"name": f"{base.metadata.get('name', 'base')} as {new.spec}"})


def one_search(ev: Evaluator, b: np.ndarray, nodes: int) -> tuple[float, int, tuple[int, int]]:
    """Nodes per second, depth completed and (nodes, move) of one search of ``b`` with a fresh table."""
    s = PlaySearcher(ev, tt_bits=18)
    t0 = time.perf_counter()
    it = s.think(b, [], node_limit=nodes)
    dt = time.perf_counter() - t0
    assert it is not None
    return s.searched_nodes / dt, it.depth - it.partial, (s.searched_nodes, int(it.pv[0]) if it.pv else 0)


def measure(nets: dict[str, Evaluator], nodes: int, repeat: int,
            boards: list[chess.Board]) -> dict[str, dict[str, object]]:
    """Each network's figures; the networks take turns on each position (and each repeat), so
    that a slow spell of the machine falls on all of them alike."""
    for ev in nets.values():  # load the kernels
        PlaySearcher(ev, tt_bits=18).think(from_chess(boards[0]), [], max_depth=2)
    nps: dict[str, list[float]] = {k: [] for k in nets}
    depth: dict[str, list[int]] = {k: [] for k in nets}
    tree: dict[str, list[tuple[int, int]]] = {k: [] for k in nets}
    for board in boards:
        b = from_chess(board)
        best = dict.fromkeys(nets, 0.0)
        for k in range(repeat):
            for name, ev in nets.items():
                speed, d, t = one_search(ev, b, nodes)
                best[name] = max(best[name], speed)
                if k == 0:  # the same every repeat: one thread is deterministic
                    depth[name].append(d)
                    tree[name].append(t)
        for name in nets:
            nps[name].append(best[name])
    out: dict[str, dict[str, object]] = {}
    for name, ev in nets.items():
        out[name] = {"nps": round(statistics.mean(nps[name])), "depth": round(statistics.mean(depth[name]), 2),
                     "tree": tree[name]}
        if isinstance(ev, QuantizedNetwork):
            out[name]["shape"] = ev.shape.spec
            out[name]["parameters"] = sum(int(v.size) for v in ev.params.values())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="nnue", help="the direct network the shapes are made from (default: nnue)")
    ap.add_argument("--shapes", default="128,128/o8,256,256/o8,512,512/o8",
                    help="comma-separated shapes H or H/oO made from --base (default: %(default)s; '' for none)")
    ap.add_argument("--nets", default="", help="comma-separated trained networks (.mtnn files or built-in names)")
    ap.add_argument("--nodes", type=int, default=100_000, help="nodes a position (default: 100,000)")
    ap.add_argument("--repeat", type=int, default=2, help="searches a position, the fastest kept (default: 2)")
    args = ap.parse_args()
    boards, source = middle_games()
    boards = [chess.Board(), *boards]
    nets: dict[str, Evaluator] = {}
    shapes = [s for s in args.shapes.split(",") if s]
    if shapes:
        base = load_evaluator(args.base)
        if not isinstance(base, QuantizedNetwork):
            sys.exit(f"bench/network_shapes.py: --base {args.base} is not a network")
        for spec in shapes:
            h, _, outputs = spec.partition("/o")
            nets[spec] = widened(base, int(h), int(outputs or 1))
    for name in (n for n in args.nets.split(",") if n):
        nets[name] = load_evaluator(name)
    if not nets:
        ap.error("no network: give --shapes or --nets")
    figures = measure(nets, args.nodes, args.repeat, boards)
    first = float(str(figures[next(iter(nets))]["nps"]))
    trees = {str(figures[s].pop("tree")) for s in shapes}
    for name in nets:
        figures[name].pop("tree", None)
        figures[name]["nps_ratio"] = round(float(str(figures[name]["nps"])) / first, 3)
    print(json.dumps({"bench": "network_shapes", "base": args.base if shapes else None,
                      "same_tree": len(trees) == 1 if shapes else None, "positions": len(boards),
                      "positions_source": f"start position + {source}", "nodes": args.nodes,
                      "search": "play", "networks": figures}))


if __name__ == "__main__":
    main()
