"""The move-probability model of issue 25 (first slice): as a move predictor, its cost, and as the
search's move ordering.

Measures, on the grandmaster position set (``datasets/built/gm``, built from
``../shared/datasets/gm`` on first use), its **test** split (never used for training or choosing):

- ``predictor``: the model (the built-in ``gm`` move model unless ``--model``) on every test
  position: top-1 and top-3 credit of the played move (ties as fractions, the one definition of
  move-match) and the mean cross-entropy; next to it, ``gm``'s depth-1 search (1 ply +
  quiescence, ``tuner bench move-match``) on the same positions;
- ``cost``: the model's moves scored per second (features, scores and the softmax:
  :func:`search.pls.move_model.move_probabilities`) with 1 thread and all cores, next to the
  depth-1 sweep's positions per second on the same positions;
- ``ordering``: nodes of alpha-beta (``gm`` weights, no transposition table, killers) to reach
  the same depth-2 and depth-4 values on a seeded sample of test positions, with the search's
  own order (MVV/LVA, killers) and with the model's (``model``: every move of a full-width node
  by the model's score; ``quiet``: captures and killers as before, quiet moves by the model),
  and their wall times (1 thread); ``same_values`` checks that every order gave every value.

- ``sweep``: the MMTO sweep through the probability-limited search (:func:`search.pls.pls.pls_sweep`,
  every legal move's subtree to the threshold, leaves kept) on ``--sweep-positions`` test
  positions at 1/32 and 1/128, next to the depth sweep (:func:`search.tree.search_api.sweep`) at depth
  1 and 2 on the same positions (best of two, all cores; ``--sweep-only`` measures only this).

With ``--play`` (or ``--play-only``, which skips the rest): ``pls_vs_depth``, probability-limited
against depth-limited search, same ``gm`` weights, ``--nodes`` per move, ``--pairs`` openings
with both colours (``bench/pls_play.py``), Elo from the probability-limited side; with
``--movetime MS`` at equal time (MS milliseconds per move each) instead of equal nodes;
``--model-above P`` evaluates the model only above path probability P, a static prior below
(the mixed search of issue 43; default 0, the model everywhere), ``--workers`` games at once.

- ``nps`` (``--nps-only``, alone): nodes per second of the probability-limited search to
  ``--nps-threshold`` (default 1/2048) on every 100th position of the shipped sample games
  (``datasets/sample/famous-games.pgn``, 33 positions, a fresh table each), with the model
  evaluated above path probability 0 (everywhere), 1/16, 1/64, 1/256 and 1 (nowhere), below it
  the static prior or ``--leaf-model``'s pre-move model (e.g. ``gm-premove``, the play default),
  next to the depth-limited search's iterative deepening to depth 4; best of two.

Prints one JSON line. Targets (issue 25): the model's top-1 above the search's; fewer nodes with
the model's order; ``pls_vs_depth`` won (interval above 0).

    python bench/pls.py [--model FILE] [--depth2-positions 2000] [--depth4-positions 400]
                        [--play | --play-only] [--pairs 200] [--nodes 20000 | --movetime MS]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np
from common import gm_position_set_or_skip, timed, tuner_json
from pls_play import pls_vs_depth

from search.pls.move_model import BUILTIN_MOVE_MODELS, MoveModel, load_move_model, move_probabilities, search_with_order
from search.pls.pls import load_leaf_model, pls_sweep
from search.tree.search_api import sweep
from search.params.weights import load_weights
from tuner.moves.measure import choice_set, figures
from tuner.training.position_set import load_positions

#: positions timed for the cost figures
COST_POSITIONS = 20_000


def sweep_cost(data: Path, gm: np.ndarray, model: MoveModel, count: int) -> dict[str, object]:
    """Seconds (best of two, all cores) and nodes of the probability-limited sweep at 1/32 and
    1/128 and of the depth sweep at depth 1 and 2, on ``count`` seeded test positions."""
    boards = load_positions(data, "test", limit=count, seed=5, progress=False).boards
    pls_sweep(boards[:8], 1 / 32, gm, model)  # compile or load
    sweep(boards[:8], 1, gm)
    out: dict[str, object] = {"positions": len(boards)}
    runs = {"pls_1/32": lambda: pls_sweep(boards, 1 / 32, gm, model), "depth1": lambda: sweep(boards, 1, gm),
            "pls_1/128": lambda: pls_sweep(boards, 1 / 128, gm, model), "depth2": lambda: sweep(boards, 2, gm)}
    for name, run in runs.items():
        nodes = int(run().nodes.sum())
        out[name] = {"seconds": round(min(timed(run, 2)), 3), "nodes": nodes}
    out["ratio_1/32_over_depth1"] = round(out["pls_1/32"]["seconds"] / out["depth1"]["seconds"], 2)  # type: ignore[index]
    out["ratio_1/128_over_depth2"] = round(out["pls_1/128"]["seconds"] / out["depth2"]["seconds"], 2)  # type: ignore[index]
    return out


def nps_figures(threshold: float, leaf_model: MoveModel | None = None) -> dict[str, object]:
    """Nodes and nodes per second of the probability-limited search at ``model_above`` 0, 1/16,
    1/64, 1/256 and 1 (``leaf_model`` below it, ``None``: the static prior), and of iterative
    deepening to depth 4 (module docstring)."""
    import chess.pgn  # noqa: PLC0415
    import os  # noqa: PLC0415

    from search.core.convert import from_chess  # noqa: PLC0415
    from search.tree.iterative import Searcher  # noqa: PLC0415
    from search.pls.pls import PlsSearcher  # noqa: PLC0415

    boards = []
    with open(Path(__file__).resolve().parent.parent / "datasets" / "sample" / "famous-games.pgn") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            b = game.board()
            for move in game.mainline_moves():
                boards.append(from_chess(b))
                b.push(move)
    boards = boards[5::100]
    gm = load_weights("gm").values
    model = load_move_model("gm")
    PlsSearcher(gm, model).search(boards[0], 0.1)  # load the kernels
    Searcher(gm, tt_bits=4).think(boards[0], [], max_depth=1)
    out: dict[str, object] = {"positions": len(boards), "threshold": threshold,
                              "load_average": round(os.getloadavg()[0], 1)}

    def best_of_two(search_one: Callable[[np.ndarray], int]) -> tuple[int, float]:
        runs = []
        for _ in range(2):
            start = time.perf_counter()
            nodes = sum(search_one(b) for b in boards)
            runs.append((nodes, time.perf_counter() - start))
        return min(runs, key=lambda r: r[1])

    for p, label in ((0.0, "0"), (1 / 16, "1/16"), (1 / 64, "1/64"), (1 / 256, "1/256"), (1.0, "1")):
        s = PlsSearcher(gm, model, tt_bits=16, model_above=p, leaf_model=leaf_model)

        def pls_nodes(b: np.ndarray, s: PlsSearcher = s) -> int:
            s.clear()
            return s.search(b, threshold).nodes

        nodes, seconds = best_of_two(pls_nodes)
        out[f"pls_above_{label}"] = {"nodes": nodes, "nps": round(nodes / seconds)}
    d = Searcher(gm, tt_bits=16)

    def depth_nodes(b: np.ndarray) -> int:
        d.clear()
        d.think(b, [], max_depth=4)
        return d.searched_nodes

    nodes, seconds = best_of_two(depth_nodes)
    out["depth4"] = {"nodes": nodes, "nps": round(nodes / seconds)}
    return out


# long: a bench script's steps in order, each printing into the one JSON line
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="gm", help="the move model (default: the built-in gm)")
    ap.add_argument("--depth2-positions", type=int, default=2000, help="test positions searched at depth 2")
    ap.add_argument("--depth4-positions", type=int, default=400, help="test positions searched at depth 4")
    ap.add_argument("--play", action="store_true", help="also play probability-limited against depth-limited search")
    ap.add_argument("--play-only", action="store_true", help="only play (no predictor, cost or ordering figures)")
    ap.add_argument("--pairs", type=int, default=200, help="game pairs of the play figures (default 200: 400 games)")
    ap.add_argument("--nodes", type=int, default=20_000, help="nodes per move of the play figures (default 20000)")
    ap.add_argument("--depth-nodes", type=int, default=0,
                    help="nodes per move of the depth-limited player (default: --nodes; e.g. 4 x --nodes for equal cost)")
    ap.add_argument("--movetime", type=int, default=0, metavar="MS",
                    help="play at equal time, MS milliseconds per move each, instead of --nodes (default: 0, equal nodes)")
    ap.add_argument("--model-above", type=float, default=0.0, metavar="P",
                    help="play figures: the probability-limited player evaluates the model at nodes whose path "
                         "probability is above P, a static prior below (default: 0, the model everywhere)")
    ap.add_argument("--workers", type=int, default=2, help="games played at once in the play figures (default: 2)")
    ap.add_argument("--sweep-positions", type=int, default=500, help="test positions of the sweep figures")
    ap.add_argument("--sweep-only", action="store_true", help="only the sweep figures")
    ap.add_argument("--nps-only", action="store_true", help="only the nodes-per-second figures (shipped games)")
    ap.add_argument("--nps-threshold", type=float, default=1 / 2048, help="threshold of the nps figures")
    ap.add_argument("--leaf-model", default="prior", metavar="MODEL",
                    help="nps figures: below the model's path probability, a pre-move model (gm-premove, or a "
                         "file) or prior, the static prior (default: prior)")
    args = ap.parse_args()
    if args.nps_only:
        try:
            leaf_model = load_leaf_model(args.leaf_model)
        except ValueError as exc:
            ap.error(str(exc))
        print(json.dumps({"bench": "pls", "model": "gm", "leaf_model": args.leaf_model,
                          "nps": nps_figures(args.nps_threshold, leaf_model)}))
        return
    if args.movetime < 0 or (args.movetime and args.depth_nodes):
        ap.error("--movetime must be positive, and is not used with --depth-nodes")
    if args.play_only:
        print(json.dumps({"bench": "pls", "model": args.model,
                          "pls_vs_depth": pls_vs_depth(args.pairs, args.nodes, model=args.model,
                                                       depth_nodes=args.depth_nodes, movetime=args.movetime,
                                                       model_above=args.model_above, workers=args.workers)}))
        return
    data = gm_position_set_or_skip("pls")
    if data is None:
        return
    model = load_move_model(args.model)
    path = BUILTIN_MOVE_MODELS.get(args.model, Path(args.model))
    gm = load_weights("gm").values
    if args.sweep_only:
        print(json.dumps({"bench": "pls", "data": str(data), "model": args.model,
                          "sweep": sweep_cost(data, gm, model, args.sweep_positions)}))
        return
    record: dict = {"bench": "pls", "data": str(data), "model": args.model,  # type: ignore[type-arg]
                    "model_file_bytes": path.stat().st_size}

    pos = load_positions(data, "test", progress=False)
    record["test_positions"] = len(pos)
    fig = figures(choice_set(pos), model.weights)
    mm = tuner_json(["bench", "move-match", "--weights", "gm", "--data", str(data), "--split", "test", "--json"])
    search = mm["weights"]["gm"]
    record["predictor"] = {"model": {k: round(v, 5) if isinstance(v, float) else v
                                     for k, v in fig.to_json().items() if k in ("top1", "top3", "loss")},
                           "gm_depth1_search": {k: search[k] for k in ("top1", "top3", "mean_rank")}}
    record["top1_gain_points"] = round(100 * (fig.top1 - search["top1"]), 2)

    boards = pos.boards[:COST_POSITIONS]
    move_probabilities(boards[:64], model)
    sweep(boards[:64], 1, gm)
    moves = int(move_probabilities(boards, model).pos_ptr[-1])
    cost: dict[str, object] = {"positions": len(boards), "moves": moves}
    for label, n in (("1", 1), ("all", numba.config.NUMBA_NUM_THREADS)):
        t = min(timed(lambda n=n: move_probabilities(boards, model, n_threads=n), 3))
        cost[f"model_moves_per_s_{label}"] = round(moves / t)
        cost[f"model_positions_per_s_{label}"] = round(len(boards) / t)
    t = min(timed(lambda: sweep(boards, 1, gm, leaves=False, n_threads=1), 2))
    cost["depth1_sweep_positions_per_s_1"] = round(len(boards) / t)
    cost["model_speed_over_sweep_1"] = round(cost["model_positions_per_s_1"] * t / len(boards), 2)  # type: ignore[operator]
    record["cost"] = cost

    ordering: dict[str, object] = {}
    for depth, count in ((2, args.depth2_positions), (4, args.depth4_positions)):
        sample = load_positions(data, "test", limit=count, seed=depth, progress=False).boards
        search_with_order(sample[:8], depth, gm, model, order="model")  # compile
        row: dict[str, object] = {"positions": len(sample)}
        values = {}
        for order in ("default", "model", "quiet"):
            result = None

            def run(order: str = order) -> None:
                nonlocal result
                result = search_with_order(sample, depth, gm, model, order=order, budget=1 << 40, n_threads=1)

            seconds = min(timed(run, 1))
            assert result is not None
            values[order] = result.scores
            row[order] = {"nodes": int(result.nodes.sum()), "seconds": round(seconds, 2),
                          "nodes_per_s": round(int(result.nodes.sum()) / seconds)}
        row["same_values"] = all(bool((values[o] == values["default"]).all()) for o in values)
        for order in ("model", "quiet"):
            row[f"{order}_nodes_ratio"] = round(row[order]["nodes"] / row["default"]["nodes"], 3)  # type: ignore[index]
            row[f"{order}_time_ratio"] = round(row[order]["seconds"] / row["default"]["seconds"], 3)  # type: ignore[index]
        ordering[f"depth{depth}"] = row
    record["ordering"] = ordering
    record["sweep"] = sweep_cost(data, gm, model, args.sweep_positions)
    record["targets"] = {"model_top1_above_search": fig.top1 > search["top1"],
                         "fewer_nodes_depth2": ordering["depth2"]["model_nodes_ratio"] < 1,  # type: ignore[index]
                         "fewer_nodes_depth4": ordering["depth4"]["model_nodes_ratio"] < 1}  # type: ignore[index]
    if args.play:
        play = pls_vs_depth(args.pairs, args.nodes, model=args.model, depth_nodes=args.depth_nodes,
                            movetime=args.movetime, model_above=args.model_above, workers=args.workers)
        record["pls_vs_depth"] = play
        low = play["elo_ci95"][0]  # type: ignore[index]
        record["targets"]["pls_vs_depth_won"] = low is not None and low > 0  # type: ignore[index]
    print(json.dumps(record))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
