"""Time management (issue 43): the engine's time management against the engine's before issue 43,
as one JSON line.

Both sides play the same weights (``gm`` by default) with :class:`search.tree.iterative.Searcher` at a
fixed time a move (``--movetime``, 100 ms by default: the deadline cuts the running iteration
every move); side A keeps a cut iteration's best root move once its first root move was
searched in full (``keep_partial=True``, the engine's behaviour), side B discards every cut
iteration but the first (``keep_partial=False``, the behaviour before issue 43: the baseline,
measured in the same run). On a clock (``--tc``) A also scales its soft limit by the best
move's stability (``adapt_time=True``, :class:`search.tree.iterative.MoveStability`) and B keeps
the plan's (``adapt_time=False``); ``--fixed-soft`` gives A the plan's soft limit too, so that
only the kept cut iteration differs, and ``--first-move-gate`` lets A start an iteration whose
first root move only is predicted to end by the hard limit (``predict_first_move=True``). The
games are the match machinery's (:mod:`tuner.arena.match`: the shipped openings, each played
with both colours, its adjudication rules), and the summary its
own: W/D/L, score and Elo from A's view with 95% intervals (pentanomial over game pairs), plus
each side's mean reported depth a move (a kept cut iteration reports the depth it was cut at).

``--pls`` (issue 43's second target): side A plays the probability-limited search instead
(:class:`search.pls.pls.PlsSearcher`, the ``gm`` move model evaluated at nodes whose path
probability is above ``--pls-model-above``; below it the pre-move model ``gm-premove``, or
``--pls-leaf-model``'s (``prior``: the static prior); cut iterations kept as the
depth-limited search keeps them), side B the depth-limited search (keeping cut iterations, the
engine's behaviour), same weights: the target is A's interval above 0 at 100 ms a move.

``--tc BASE+INC`` plays on a clock per side instead (the match's ``--tc``: each side plans its
moves from its time left, and a side whose clock runs out loses on time).

``--usage N`` plays no games: it searches N positions of a position set's validation split
(``--data``, the GM set by default) once per side with the plan of a move (the clock's first
move with ``--tc``, else ``--movetime``) and prints how each side ends its searches (a kept cut
iteration, a discarded one), its mean seconds and depth a move: what the two sides' difference
can be worth at that limit.

Timed games depend on the machine's load; both sides share it, one game at a time by default
(``--workers``). A running line (games, W/D/L, Elo with its interval) goes to standard error
every 30 s. Run ``python bench/clock.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import time

import chess

from search.evaluation.evaluators import checked_evaluator, load_evaluator
from search.core.convert import from_fen
from search.tree.iterative import Searcher, TimePlan
from search.pls.move_model import load_move_model
from search.pls.pls import LEAF_MODEL_PLAY, MODEL_ABOVE_PLAY, STATIC_PRIOR, check_model_above, load_leaf_model
from tuner.arena.match import (DEFAULT_OPENINGS, TC_OVERHEAD, GameRecord, PairTask, choose_openings, load_openings,
                               parse_tc, play_with_engines, running_line, summarize)
from tuner.arena.engines import ExternalEngine
from tuner.arena.players import Engine, PlsPlayer, new_engine
from tuner.errors import TunerError
from tuner.ingest.reader import read_split
from tuner.progress import RunningLog

#: move-ordering table per engine and game, as the match's (2**16 entries)
TT_BITS = 16


def clock_sides(weights: object, adapt_a: bool = True, first_move: bool = False,
                by_ply_a: bool = True) -> dict[str, Searcher]:
    """The two sides of the time-management comparison, fresh: ``"A"`` keeps cut iterations (and
    scales its soft limit by the best move's stability unless not ``adapt_a``; predicts only an
    iteration's first root move with ``first_move``; on a clock allots its moves by the game's ply
    unless not ``by_ply_a``), ``"B"`` discards them, allots a thirtieth of its time left and
    keeps the plan's soft limit (the engine before issue 43)."""
    return {"A": Searcher(weights, tt_bits=TT_BITS, keep_partial=True, adapt_time=adapt_a,
                          predict_first_move=first_move, plan_by_ply=by_ply_a),
            "B": Searcher(weights, tt_bits=TT_BITS, keep_partial=False, adapt_time=False, plan_by_ply=False)}


def play_pair(task: PairTask, adapt_a: bool = True, first_move: bool = False,
              by_ply_a: bool = True) -> tuple[GameRecord, GameRecord]:
    """Both games of an opening (A as White, then B), each with fresh searchers: the sides of
    :func:`clock_sides`; or, when A is a :class:`PlsPlayer` (``--pls``), A plays the
    probability-limited search and B the depth-limited one."""
    games = []
    for white, round_name in (("A", f"{task.index + 1}.1"), ("B", f"{task.index + 1}.2")):
        engines: dict[str, Engine | ExternalEngine]
        if isinstance(task.weights_a, PlsPlayer):
            engines = {"A": new_engine(task.weights_a, TT_BITS),
                       "B": Searcher(task.weights_a.weights, tt_bits=TT_BITS)}
        else:
            engines = dict(clock_sides(task.weights_a, adapt_a, first_move, by_ply_a))
        games.append(play_with_engines(task, white, round_name, engines))
    return games[0], games[1]


def mean_depth(pairs: list[tuple[GameRecord, GameRecord]], side: str) -> float:
    """Side ``side``'s mean reported depth over its moves."""
    depths = []
    for pair in pairs:
        for game in pair:
            white_to_move = chess_white_to_move(game.opening.fen)
            for k, (_, depth) in enumerate(game.scores):
                mover_is_white = white_to_move == (k % 2 == 0)
                if (game.white == side) == mover_is_white:
                    depths.append(depth)
    return round(sum(depths) / len(depths), 2) if depths else 0.0


def chess_white_to_move(fen: str) -> bool:
    return fen.split()[1] == "w"


def time_usage(weights: object, fens: list[str], plan: TimePlan | tuple[float, float], adapt_a: bool = True,
               first_move: bool = False, by_ply_a: bool = True) -> dict[str, dict[str, float]]:
    """How each side of :func:`clock_sides` (keys ``"a"`` and ``"b"``) ends a search of each of
    ``fens`` under ``plan``, or on a clock (``(base, increment)`` seconds: each side's plan of its
    first move there, at the position's ply): searches ending in a kept cut iteration, in a
    discarded one, mean seconds, mean depth and mean soft limit."""
    out = {}
    for name, searcher in clock_sides(weights, adapt_a, first_move, by_ply_a).items():
        searcher.think(from_fen(fens[0]), [], max_depth=2)  # load the kernels before timing
        kept = discarded = 0
        seconds = depth = soft = 0.0
        for fen in fens:
            searcher.clear()
            move_plan = (plan if isinstance(plan, TimePlan)
                         else searcher.clock_plan(plan[0], plan[1], chess.Board(fen).ply(), None, TC_OVERHEAD))
            soft += move_plan.soft
            best = searcher.think(from_fen(fen), [], plan=move_plan)
            assert best is not None
            kept += best.partial
            discarded += searcher.searched_nodes > best.total_nodes  # a discarded iteration's nodes
            seconds += searcher.searched_seconds
            depth += best.depth
        out[name.lower()] = {"kept_cut": kept, "discarded_cut": discarded,
                             "mean_seconds": round(seconds / len(fens), 4), "mean_depth": round(depth / len(fens), 2),
                             "mean_soft": round(soft / len(fens), 4)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=20, help="games, even (default: 20, a smoke run; "
                    "hundreds are needed to see a few Elo)")
    ap.add_argument("--movetime", type=int, default=100, metavar="MS", help="milliseconds a move (default: 100)")
    ap.add_argument("--tc", metavar="BASE+INC", help="a clock per side in seconds (e.g. 10+0.1) instead of --movetime")
    ap.add_argument("--weights", default="gm", help="the weights both sides play (default: gm)")
    ap.add_argument("--workers", type=int, default=1, help="games played at once (default: 1)")
    ap.add_argument("--seed", type=int, default=0, help="seed for choosing the openings (default: 0)")
    ap.add_argument("--max-plies", type=int, default=400, help="adjudicate a draw after this many plies")
    ap.add_argument("--fixed-soft", action="store_true",
                    help="A keeps the plan's soft limit as B does (only the kept cut iteration differs; "
                         "matters with --tc)")
    ap.add_argument("--per-thirty", action="store_true",
                    help="A allots a thirtieth of its time left a move as B does, not by the game's ply "
                         "(matters with --tc)")
    ap.add_argument("--first-move-gate", action="store_true",
                    help="A starts an iteration when its first root move is predicted to end by the hard limit "
                         "(matters with --tc)")
    ap.add_argument("--usage", type=int, default=0, metavar="N",
                    help="play no games: how each side ends its searches of N validation positions (see above)")
    ap.add_argument("--data", default="datasets/built/gm", metavar="DIR",
                    help="with --usage: the position set (default: datasets/built/gm)")
    ap.add_argument("--pls", action="store_true",
                    help="A plays the probability-limited search, B the depth-limited one (issue 43's target)")
    ap.add_argument("--pls-model-above", type=float, default=MODEL_ABOVE_PLAY, metavar="P",
                    help=f"with --pls: the move model above path probability P, --pls-leaf-model below "
                         f"(default: {MODEL_ABOVE_PLAY:g}; 0: the model everywhere)")
    ap.add_argument("--pls-leaf-model", default=LEAF_MODEL_PLAY, metavar="MODEL",
                    help="with --pls: below --pls-model-above, a pre-move move model (gm-premove, or a file) or "
                         f"{STATIC_PRIOR}, the static prior (default: {LEAF_MODEL_PLAY})")
    args = ap.parse_args()
    if args.games < 2 or args.games % 2:
        ap.error(f"--games must be a positive even number, not {args.games}")
    if args.movetime < 1 or args.workers < 1:
        ap.error("--movetime and --workers must be positive")
    try:
        weights = checked_evaluator(load_evaluator(args.weights))
        model_above = check_model_above(args.pls_model_above)
        tc = parse_tc(args.tc) if args.tc is not None else None
        leaf_model = load_leaf_model(args.pls_leaf_model)
    except ValueError as exc:
        ap.error(str(exc))
    movetime = None if tc is not None else args.movetime
    if args.usage > 0:
        try:
            frame = read_split(args.data, "validation", columns=["fen"])
        except TunerError as exc:
            ap.error(str(exc))
        fens = frame.sample(min(args.usage, frame.height), seed=args.seed)["fen"].to_list()
        plan = tc if tc is not None else TimePlan.fixed(args.movetime / 1000)
        usage = time_usage(weights, fens, plan, not args.fixed_soft, args.first_move_gate, not args.per_thirty)
        fixed = ({"plan": {"soft": round(plan.soft, 4), "hard": round(plan.hard, 4), "fill": plan.fill}}
                 if isinstance(plan, TimePlan) else {})
        print(json.dumps({"bench": "clock-usage", "weights": args.weights, "movetime_ms": movetime, "tc": args.tc,
                          **fixed, "positions": len(fens), **usage}))
        return
    openings = choose_openings(load_openings(DEFAULT_OPENINGS), args.games // 2, args.seed)
    side_a = (PlsPlayer(weights, load_move_model("gm"), model_above=model_above, leaf_model=leaf_model) if args.pls
              else weights)
    tasks = [PairTask(i, op, side_a, weights, None, None, args.max_plies, 1000, 4, movetime, tc=tc)
             for i, op in enumerate(openings)]
    start = time.perf_counter()
    done: list[tuple[GameRecord, GameRecord]] = []  # in the order they end; replaced whole

    def describe() -> str:
        return running_line("clock", list(done), args.games, None, time.perf_counter() - start)

    with RunningLog(describe):  # a line on standard error every 30 s
        if args.workers == 1:
            for t in tasks:
                done = [*done, play_pair(t, not args.fixed_soft, args.first_move_gate, not args.per_thirty)]
            pairs = done
        else:
            spawn = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(args.workers, mp_context=spawn) as pool:
                futures = [pool.submit(play_pair, t, not args.fixed_soft, args.first_move_gate, not args.per_thirty)
                           for t in tasks]
                for fut in concurrent.futures.as_completed(futures):
                    done = [*done, fut.result()]
                pairs = [fut.result() for fut in futures]  # opening order
    summary = summarize(pairs).to_json()
    sides = ({"a": f"probability-limited search, model above {model_above:g}, {args.pls_leaf_model} below",
              "b": "depth-limited search"}
             if args.pls else {"a": "keeps cut iterations" + ("" if args.fixed_soft or tc is None else
                                                              ", soft limit by the best move's stability")
                                    + (", predicts the first root move" if args.first_move_gate and tc else "")
                                    + (", moves allotted by the game's ply" if tc and not args.per_thirty else ""),
                               "b": "discards them, a thirtieth of the time left, the plan's soft limit "
                                    "(before issue 43)"})
    print(json.dumps({"bench": "clock", "weights": args.weights, "movetime_ms": movetime, "tc": args.tc,
                      **sides, **summary,
                      "mean_depth_a": mean_depth(pairs, "A"), "mean_depth_b": mean_depth(pairs, "B"),
                      "seconds": round(time.perf_counter() - start, 1)}))


if __name__ == "__main__":
    main()
