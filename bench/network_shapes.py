"""Nodes per second of the playing search for each network shape (issue 60 item 4): accumulator
widths and output buckets.

Prints one JSON line. Each shape (``--shapes``, specs after ``network:``: ``128``, ``256/o8``,
``64x16x16``, ...) is a random network (seed 0); each file of ``--nets`` (a trained ``.mtnn``,
or a built-in name such as ``nnue``) is measured as it is. Every network searches the start
position and 20 middle-game positions (``bench/play_search.py``'s: the grandmaster games when
``../shared/datasets/gm`` is there, else the shipped sample games) to ``--nodes`` nodes with the
playing search and a fresh table, one thread, ``--repeat`` times; the figures are the mean
nodes per second (the best of the repeats per position, against the machine's noise), the mean
depth completed and each network's speed as a fraction of the first one's, all from this run.

A random network's tree is not a trained one's (other cutoffs, other quiescence), so its nodes
per second say what a node costs more than what a game gets; pass trained files with ``--nets``
to compare those. No engine or data beyond the repository is needed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import chess

from play_search import middle_games


def measure(spec: str, nodes: int, repeat: int, boards: list[chess.Board]) -> dict[str, object]:
    from search.core.convert import from_chess  # noqa: PLC0415
    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415
    from search.evaluation.network import QuantizedNetwork  # noqa: PLC0415
    from search.play.searcher import PlaySearcher  # noqa: PLC0415

    ev = load_evaluator(spec)
    PlaySearcher(ev, tt_bits=18).think(from_chess(boards[0]), [], max_depth=2)  # load the kernels
    nps: list[float] = []
    depth: list[int] = []
    for board in boards:
        b = from_chess(board)
        best = 0.0
        for _ in range(repeat):
            s = PlaySearcher(ev, tt_bits=18)
            t0 = time.perf_counter()
            it = s.think(b, [], node_limit=nodes)
            dt = time.perf_counter() - t0
            assert it is not None
            best = max(best, s.searched_nodes / dt)
        depth.append(it.depth - it.partial)
        nps.append(best)
    out: dict[str, object] = {"nps": round(statistics.mean(nps)), "depth": round(statistics.mean(depth), 2)}
    if isinstance(ev, QuantizedNetwork):
        out["shape"] = ev.shape.spec
        out["parameters"] = sum(int(v.size) for v in ev.params.values())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="128,128/o8,256,256/o8,512,512/o8",
                    help="comma-separated shapes of random networks (default: %(default)s; '' for none)")
    ap.add_argument("--nets", default="", help="comma-separated trained networks (.mtnn files or built-in names)")
    ap.add_argument("--nodes", type=int, default=100_000, help="nodes a position (default: 100,000)")
    ap.add_argument("--repeat", type=int, default=2, help="searches a position, the fastest kept (default: 2)")
    args = ap.parse_args()
    boards, source = middle_games()
    boards = [chess.Board(), *boards]
    specs = [f"network:{s}" for s in args.shapes.split(",") if s] + [n for n in args.nets.split(",") if n]
    if not specs:
        ap.error("no network: give --shapes or --nets")
    figures = {spec: measure(spec, args.nodes, args.repeat, boards) for spec in specs}
    first = str(figures[specs[0]]["nps"])
    for spec in specs:
        figures[spec]["nps_ratio"] = round(float(str(figures[spec]["nps"])) / float(first), 3)
    print(json.dumps({"bench": "network_shapes", "positions": len(boards),
                      "positions_source": f"start position + {source}", "nodes": args.nodes,
                      "search": "play", "networks": figures}))


if __name__ == "__main__":
    main()
