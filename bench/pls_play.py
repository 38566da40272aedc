"""Probability-limited search against depth-limited search in play (issue 25's third target),
used by ``python bench/pls.py --play`` / ``--play-only``.

Both players use the ``gm`` weights and the same node limit per move (or, with ``movetime``,
the same time per move: a fixed time plan for each, the running iteration aborted at the
deadline; the games then depend on the machine's speed and load). The depth-limited player
is :class:`search.tree.iterative.Searcher` (iterative deepening, transposition table, the engine of
``tuner uci`` and ``tuner bench match``); the probability-limited one is
:func:`search.pls.pls.pls_iterate` (the threshold lowered from 1/32 by 4 each iteration, the move
model ordering the moves) with a :class:`search.pls.pls.PlsSearcher` kept for the game. Openings
from ``datasets/openings/openings.epd`` in a seeded order, each played with both colours (a
pair); games end by the match rules (:func:`tuner.arena.match.rules_end`) or as a draw after
400 plies. The result is :func:`tuner.arena.match.summarize`'s (pentanomial interval over the
pairs), from the probability-limited player's side.
"""

from __future__ import annotations

import concurrent.futures
import math
import time

import chess

from search.core.board import W_KEY
from search.core.convert import from_chess, move_to_uci
from search.tree.iterative import Searcher, TimePlan
from search.pls.move_model import load_move_model
from search.pls.pls import MODEL_ABOVE, PlsSearcher, pls_iterate
from search.params.weights import load_weights
from tuner.arena.match import (DEFAULT_OPENINGS, GameRecord, Opening, choose_openings, load_openings, rules_end,
                               summarize)

MAX_PLIES = 400


def _game(opening: Opening, pls_white: bool, nodes: int, model_spec: str, name: str,
          depth_nodes: int, movetime: int = 0, model_above: float = MODEL_ABOVE) -> GameRecord:
    gm = load_weights("gm").values
    model = load_move_model(model_spec)
    pls = PlsSearcher(gm, model, tt_bits=16, model_above=model_above)
    depth = Searcher(gm, tt_bits=16)
    board = chess.Board(opening.fen)
    keys: list[int] = []
    moves: list[str] = []
    while True:
        end = rules_end(board)
        if end is None and len(moves) >= MAX_PLIES:
            end = ("1/2-1/2", f"adjudication: draw after {MAX_PLIES} plies")
        if end is not None:
            break
        b = from_chess(board)
        if (board.turn == chess.WHITE) == pls_white:
            move = pls_iterate(b, gm, model, node_limit=None if movetime else nodes, movetime=movetime / 1000 or None,
                               history=keys, searcher=pls)[-1].result.pv[0]
        else:
            it = depth.think(b, keys, node_limit=None if movetime else depth_nodes,
                             plan=TimePlan.fixed(movetime / 1000) if movetime else None)
            assert it is not None
            move = it.pv[0]
        uci = move_to_uci(move)
        if not board.is_legal(chess.Move.from_uci(uci)):  # python-chess is the rules oracle
            raise RuntimeError(f"illegal move {uci} in {board.fen()}")
        keys.append(int(b[W_KEY]))
        board.push_uci(uci)
        moves.append(uci)
    result, reason = end
    return GameRecord(name, opening, "A" if pls_white else "B", tuple(moves), (), result, reason)


def _pair(opening: Opening, nodes: int, model_spec: str, index: int, depth_nodes: int,
          movetime: int = 0, model_above: float = MODEL_ABOVE) -> tuple[GameRecord, GameRecord]:
    return (_game(opening, True, nodes, model_spec, f"{index}.1", depth_nodes, movetime, model_above),
            _game(opening, False, nodes, model_spec, f"{index}.2", depth_nodes, movetime, model_above))


def _finite(x: float) -> float | None:
    """``x`` rounded, or None for an infinite bound (a one-sided score: JSON has no infinity)."""
    return round(x, 1) if math.isfinite(x) else None


def pls_vs_depth(pairs: int, nodes: int, *, model: str = "gm", workers: int = 2, seed: int = 0,
                 depth_nodes: int = 0, movetime: int = 0, model_above: float = MODEL_ABOVE) -> dict[str, object]:
    """Play ``pairs`` game pairs at ``nodes`` nodes per move (the depth-limited player
    ``depth_nodes`` if given: an equal-cost match when the ratio is the two searches' speed
    ratio), or with ``movetime`` > 0 at ``movetime`` milliseconds per move for both (an
    equal-time match); ``model_above``: the probability-limited player evaluates the model at nodes
    whose path probability is above it, a static prior below (0: everywhere, the search of
    issue 25); the summary as JSON figures."""
    depth_nodes = depth_nodes or nodes
    openings = choose_openings(load_openings(DEFAULT_OPENINGS), pairs, seed)
    t = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(workers) as pool:
        done = list(pool.map(_pair, openings, [nodes] * pairs, [model] * pairs, range(1, pairs + 1),
                             [depth_nodes] * pairs, [movetime] * pairs, [model_above] * pairs))
    s = summarize(done)
    limit = f"{nodes} nodes per move" if depth_nodes == nodes else \
        f"{nodes} nodes per move against {depth_nodes}"
    if movetime:
        limit = f"{movetime} ms per move"
    return {"limit": limit, "model_above": model_above, "games": 2 * pairs, "wins": s.wins, "draws": s.draws,
            "losses": s.losses, "score": round(s.score, 4), "elo": _finite(s.elo),
            "elo_ci95": [_finite(s.elo_low), _finite(s.elo_high)], "seconds": round(time.perf_counter() - t, 1)}


__all__ = ["pls_vs_depth"]
