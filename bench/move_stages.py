"""Where the playing search's interior nodes stop in their move lists (issue 57): how much a
staged move generation could save.

Runs the playing search as Python (``NUMBA_DISABLE_JIT=1``: the script starts itself again with
it set, so importing this file changes nothing) on ``bench/play_search.py``'s positions (the start
position and 20 middle-game positions), each to ``--depth`` with a fresh table, and logs every
move the picker hands out by its ordering class. Prints one JSON line:

* ``interior_nodes``: nodes that generated and ordered their moves;
* ``moves_generated``, ``moves_tried``: their mean numbers of moves generated and picked;
* ``stopped_at``: the share of those nodes whose last picked move was in each class, in order:
  the table's move (``tt``), winning and equal captures (``good_captures``), the killers and the
  countermove (``killers_counter``), quiet moves by history (``quiets``), losing captures
  (``bad_captures``). A staged generator skips all generation and ordering at the first and the
  quiet moves' ordering at the second.

Slow (about three minutes at depth 9: the search runs as Python); ``--depth`` trades time for a
deeper tree. Needs no engine and no data beyond the repository (``../shared/datasets/gm`` is used
when present, as ``bench/play_search.py`` does).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from typing import Any

STAGES = ("tt", "good_captures", "killers_counter", "quiets", "bad_captures")


def _stage(key: int, k: Any) -> int:
    """The ordering class (an index of :data:`STAGES`) of a move's ordering key; ``k``: the
    module :mod:`search.play.kernel`, whose ``_ORDER_*`` bases the keys are built on."""
    if key >= k._ORDER_TT:
        return 0
    if key >= k._ORDER_GOOD - (1 << 20):  # MVV/LVA adds less than 2^20 to the class's base
        return 1
    if key >= k._ORDER_COUNTER:
        return 2
    if key > k._ORDER_BAD + (1 << 20):
        return 3
    return 4


def count(weights: str, depth: int, tt_bits: int) -> dict[str, Any]:
    """The figures of the module docstring, from a Python run of the playing search."""
    import warnings  # noqa: PLC0415

    import chess  # noqa: PLC0415
    from play_search import middle_games  # noqa: PLC0415

    import search.play.kernel as k  # noqa: PLC0415
    from search.core.convert import from_chess  # noqa: PLC0415
    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415
    from search.play.searcher import PlaySearcher  # noqa: PLC0415

    nodes: list[list[int]] = []  # per interior node: [moves generated, class of each move picked...]
    current: dict[int, list[int]] = {}
    order_moves, pick = k._order_moves, k._pick

    def logged_order(st: Any, ply: int, n: int, b: Any, tt_move: int, row1: int, row2: int) -> None:
        rec = [int(n)]
        nodes.append(rec)
        current[int(ply)] = rec
        order_moves(st, ply, n, b, tt_move, row1, row2)

    def logged_pick(st: Any, ply: int, i: int, n: int) -> tuple[int, int]:
        m, o = pick(st, ply, i, n)
        current[int(ply)].append(_stage(int(o), k))
        return m, o

    k._order_moves, k._pick = logged_order, logged_pick  # the Python run looks them up at each call
    warnings.filterwarnings("ignore", category=RuntimeWarning)  # the attack tables' multiplications wrap, on purpose
    ev = load_evaluator(weights)
    boards, source = middle_games()
    for board in [chess.Board(), *boards]:
        PlaySearcher(ev, tt_bits=tt_bits).think(from_chess(board), [], max_depth=depth)
    stopped = Counter(max(rec[1:]) for rec in nodes if len(rec) > 1)
    total = len(nodes)
    return {
        "bench": "move_stages", "weights": weights, "depth": depth, "positions": len(boards) + 1,
        "positions_source": f"start position + {source}", "interior_nodes": total,
        "moves_generated": round(sum(r[0] for r in nodes) / max(total, 1), 2),
        "moves_tried": round(sum(len(r) - 1 for r in nodes) / max(total, 1), 2),
        "stopped_at": {name: round(stopped[i] / max(total, 1), 3) for i, name in enumerate(STAGES)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", default="nnue", help="a built-in evaluator (default nnue)")
    parser.add_argument("--depth", type=int, default=9, help="depth of each search (default 9)")
    parser.add_argument("--tt-bits", type=int, default=16, help="log2 of the table's entries (default 16)")
    args = parser.parse_args()
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":  # the Python run needs the flag before numba loads
        env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
        return subprocess.call([sys.executable, __file__, *sys.argv[1:]], env=env)
    print(json.dumps(count(args.weights, args.depth, args.tt_bits)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
