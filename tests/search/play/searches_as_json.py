"""Runs the playing search on positions and prints what it found, as one JSON line: the
compiled kernel's reference run (``NUMBA_DISABLE_JIT=1``, where numba's decorators return the
functions unchanged) for ``test_play_as_python.py``.

Reads ``{"fens": [...], "weights": NAME, "depth": D}`` on stdin; prints a list with, for each
position, the nodes searched, the score and the PV (UCI) of the iteration at depth D.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def searches(fens: list[str], weights: str, depth: int) -> list[dict[str, Any]]:
    """Each of ``fens`` searched to ``depth`` by a fresh playing search with every feature on,
    with the evaluator ``weights`` (a built-in name)."""
    import chess  # noqa: PLC0415

    from search.core.convert import from_chess, move_to_uci  # noqa: PLC0415
    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415
    from search.play.searcher import PlaySearcher  # noqa: PLC0415

    ev = load_evaluator(weights)
    out = []
    for fen in fens:
        searcher = PlaySearcher(ev, tt_bits=14)
        it = searcher.think(from_chess(chess.Board(fen)), [], max_depth=depth)
        assert it is not None
        out.append({"nodes": searcher.searched_nodes, "score": it.score, "pv": [move_to_uci(m) for m in it.pv]})
    return out


if __name__ == "__main__":
    job = json.loads(sys.stdin.read())
    print(json.dumps(searches(job["fens"], job["weights"], job["depth"])))
