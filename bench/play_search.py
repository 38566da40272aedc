"""The playing search against the exact one (issue 57): speed and depth, and optionally games.

(Issue 57 asks for ``bench/search.py``; a script of that name in this folder, which every bench
script has on its import path, would shadow the ``search`` package for all of them.)

Prints one JSON line. Always measured, in this run, on the start position and 20 middle-game
positions (plies 20-40 of the grandmaster games when ``../shared/datasets/gm`` is there, else
of 20 of the shipped sample games; ``positions_source`` says which), each search with a fresh
table:

* ``nps``: nodes per second of each search at ``--nodes`` (default 250,000) a position, and
  their ratio (``play / exact``);
* ``depth_at``: the mean depth each reaches at 5,000 nodes (the self-play setting) and at
  ``--nodes``;
* ``time_to_depth``: mean seconds to complete depth 6 (both searches) and depth 10 (the
  playing search; the exact one does not get there in reasonable time: ``exact_depth_in_that_time``
  is the mean depth it completes in the time the playing search took to depth 10).

With ``--before TREE`` (a checkout of the code before the playing search, e.g. ``git worktree add
../before 50f9c1e^``, the commit before it landed): ``before`` holds that tree's exact search's
figures on the same positions and evaluator (a built-in name is this tree's file), run in a child
process with TREE first on the import path after this tree's: ``nps`` at ``--nodes``, the depth
at 5,000 and ``--nodes`` nodes, the mean seconds to depth 6; ``play_over_before_exact`` is this
tree's playing search's nodes a second over that search's, each measured in this run.

With ``--games N``: the playing search against the exact one, both with ``--weights``, at
``--movetime`` ms a move (``tuner bench match W W@exact``), from ``--openings`` with
``--seed``. With ``--stockfish-elo E --sf-games N``: the playing search against Stockfish held
to ``UCI_Elo`` E (``UCI_LimitStrength``, 1 thread, the same movetime). Stockfish is Debian's
package (``apt-get install stockfish``: ``/usr/games/stockfish``); no test needs it. Each
match's JSON (games, W/D/L, Elo with its 95 % interval, openings, seed) is included.
Report strength figures from openings and a seed that chose nothing (``docs/search.md``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from common import REPO, gm_files

START_PLY, END_PLY = 20, 40


def middle_games(count: int = 20) -> tuple[list[chess.Board], str]:
    """``count`` middle-game positions, one per game (ply 20 + game index mod 21), from the GM
    games when present, else from the shipped sample games."""
    files = gm_files()
    source = "gm" if files else "sample games"
    paths = files or [REPO / "datasets" / "sample" / "famous-games.pgn"]
    out: list[chess.Board] = []
    for path in paths:
        with path.open(encoding="utf-8", errors="replace") as fh:
            k = 0
            while len(out) < count * (paths.index(path) + 1) // len(paths):
                game = chess.pgn.read_game(fh)
                if game is None:
                    break
                k += 1
                if files and k % 97:  # spread over a large file
                    continue
                moves = list(game.mainline_moves())
                ply = START_PLY + len(out) % (END_PLY - START_PLY + 1)
                if len(moves) <= ply or game.board().fen() != chess.STARTING_FEN:
                    continue
                board = game.board()
                for move in moves[:ply]:
                    board.push(move)
                if not board.is_game_over():
                    out.append(board.copy(stack=False))
    return out, source


def board_figures(make: Callable[[], Any], b: Any, nodes: int, depth: dict[str, list[int]], nps: list[float],
                  t6: list[float]) -> None:
    """Append one board's figures of the search ``make()`` returns (a fresh one for each: a fresh
    table): the depth it completes at 5,000 and at ``nodes`` nodes to ``depth["5000"]`` and
    ``depth[str(nodes)]``, its nodes a second at ``nodes`` to ``nps``, its seconds to complete depth
    6 to ``t6``. ``b``: the search's board; only ``think(board, history, node_limit=|max_depth=)``
    and ``searched_nodes`` are used, which every tree since the exact search has."""
    for limit in (5000, nodes):
        s = make()
        t0 = time.perf_counter()
        it = s.think(b, [], node_limit=limit)
        dt = time.perf_counter() - t0
        assert it is not None
        depth[str(limit)].append(it.depth - it.partial)
        if limit == nodes:
            nps.append(s.searched_nodes / dt)
    t0 = time.perf_counter()
    make().think(b, [], max_depth=6)
    t6.append(time.perf_counter() - t0)


def speed(weights_name: str, nodes: int, boards: list[chess.Board], source: str) -> dict[str, object]:
    from search.core.convert import from_chess  # noqa: PLC0415
    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415
    from search.play.searcher import PlaySearcher  # noqa: PLC0415
    from search.tree.iterative import Searcher  # noqa: PLC0415

    ev = load_evaluator(weights_name)
    makers = {"exact": lambda: Searcher(ev, tt_bits=20), "play": lambda: PlaySearcher(ev, tt_bits=18)}
    for make in makers.values():  # load the kernels
        make().think(from_chess(boards[0]), [], max_depth=2)
    nps: dict[str, list[float]] = {k: [] for k in makers}
    depth: dict[str, dict[str, list[int]]] = {k: {"5000": [], str(nodes): []} for k in makers}
    t6: dict[str, list[float]] = {k: [] for k in makers}
    t10: list[float] = []
    exact_in_t10: list[int] = []
    for board in boards:
        b = from_chess(board)
        for kind, make in makers.items():
            board_figures(make, b, nodes, depth[kind], nps[kind], t6[kind])
        s = makers["play"]()
        t0 = time.perf_counter()
        s.think(b, [], max_depth=10)
        t10.append(time.perf_counter() - t0)
        from search.tree.iterative import TimePlan  # noqa: PLC0415

        it = makers["exact"]().think(b, [], plan=TimePlan(t10[-1], max(t10[-1], 0.001), fill=True))
        assert it is not None
        exact_in_t10.append(it.depth - it.partial)
    mean_nps = {k: statistics.mean(v) for k, v in nps.items()}
    return {
        "positions": len(boards), "positions_source": f"start position + {source}",
        "nps": {**{k: round(v) for k, v in mean_nps.items()}, "play_over_exact": round(mean_nps["play"] / mean_nps["exact"], 3)},
        "depth_at": {k: {n: round(statistics.mean(v), 2) for n, v in d.items()} for k, d in depth.items()},
        "time_to_depth": {"depth6": {k: round(statistics.mean(v), 4) for k, v in t6.items()},
                          "play_depth10": round(statistics.mean(t10), 4),
                          "exact_depth_in_that_time": round(statistics.mean(exact_in_t10), 2)},
    }


def exact_figures(boards: list[chess.Board], weights: str, nodes: int) -> dict[str, object]:
    """The exact search's ``nps`` at ``nodes``, mean ``depth_at`` 5,000 and ``nodes`` nodes and
    mean ``seconds_to_depth6`` over ``boards`` (:func:`board_figures`), with whichever ``search``
    package is on the import path (beyond :func:`board_figures`, it uses only
    ``Searcher(evaluator, tt_bits=)``, which every tree since the exact search has)."""
    from search.core.convert import from_chess  # noqa: PLC0415
    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415
    from search.tree.iterative import Searcher  # noqa: PLC0415

    ev = load_evaluator(weights)
    Searcher(ev, tt_bits=20).think(from_chess(boards[0]), [], max_depth=2)  # load or compile the kernels
    nps: list[float] = []
    depth: dict[str, list[int]] = {"5000": [], str(nodes): []}
    t6: list[float] = []
    for board in boards:
        board_figures(lambda: Searcher(ev, tt_bits=20), from_chess(board), nodes, depth, nps, t6)
    return {"nps": round(statistics.mean(nps)), "depth_at": {k: round(statistics.mean(v), 2) for k, v in depth.items()},
            "seconds_to_depth6": round(statistics.mean(t6), 4)}


def weights_file(weights: str) -> str:
    """``weights`` as a path another tree loads as this one does: a built-in name becomes this
    tree's file of it (another tree's built-in of that name may be another network), by the
    loaders' own resolution (a file called ``weights`` wins over the name)."""
    from search.params.weights import builtin_network, resolve  # noqa: PLC0415

    path = builtin_network(weights) or resolve(weights)
    if not path.is_file():
        sys.exit(f"bench/play_search.py: --before: no file for the weights {weights!r} (give a path)")
    return str(path.resolve())


def before_figures(tree: Path, weights: str, nodes: int, boards: list[chess.Board]) -> dict[str, object]:
    """:func:`exact_figures` of ``tree``'s exact search on ``boards`` (this run's positions), in a
    child process with ``tree`` first on the import path (this folder after it, for this function)."""
    job = {"fens": [b.fen() for b in boards], "weights": weights_file(weights), "nodes": nodes}
    code = ("import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import chess, play_search; "
            "job = json.load(sys.stdin); "
            "print(json.dumps(play_search.exact_figures([chess.Board(f) for f in job['fens']], job['weights'], job['nodes'])))")
    done = subprocess.run([sys.executable, "-c", code, str(tree.resolve()), str(Path(__file__).resolve().parent)],
                          input=json.dumps(job), capture_output=True, text=True, cwd=tree)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no message"])[-1]
        sys.exit(f"bench/play_search.py: --before {tree}: the child failed: {tail}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def tuner_json(args: list[str]) -> dict[str, object]:
    """Run ``tuner ARGS --json`` in this process; its last JSON line."""
    from tuner.cli import main as tuner_main  # noqa: PLC0415

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = tuner_main([*args, "--json"])
    if code != 0:
        sys.exit(f"tuner {' '.join(args)} failed with exit code {code}")
    return dict(json.loads(out.getvalue().strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", default="nnue", help="the evaluator both searches use (default: nnue)")
    ap.add_argument("--nodes", type=int, default=250_000, help="nodes a position for the speed figures")
    ap.add_argument("--games", type=int, default=0, help="games of the playing search against the exact one (0: none)")
    ap.add_argument("--stockfish-elo", type=int, default=None, help="UCI_Elo of a Stockfish opponent (Debian's stockfish)")
    ap.add_argument("--sf-games", type=int, default=200, help="games against Stockfish (default: 200)")
    ap.add_argument("--movetime", type=int, default=100, help="milliseconds a move in the matches (default: 100)")
    ap.add_argument("--openings", default=None, help="openings file of the matches (default: the shipped 330)")
    ap.add_argument("--seed", type=int, default=57, help="the matches' seed (which openings, in which order)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-speed", action="store_true", help="skip the speed figures")
    ap.add_argument("--before", type=Path, default=None, metavar="TREE",
                    help="a checkout of the code before the playing search: its exact search's speed figures too")
    ap.add_argument("--out", default="results/search", help="folder for the matches' PGN (default: results/search)")
    args = ap.parse_args()
    if args.before is not None and not (args.before / "search" / "tree" / "iterative.py").is_file():
        sys.exit(f"bench/play_search.py: --before {args.before}: not a checkout with search/tree/iterative.py")
    if args.before is not None and args.no_speed:
        sys.exit("bench/play_search.py: --before compares with this run's speed figures: drop --no-speed")
    result: dict[str, object] = {"bench": "search", "weights": args.weights}
    if not args.no_speed:
        middle, source = middle_games()
        boards = [chess.Board(), *middle]
        result["speed"] = speed(args.weights, args.nodes, boards, source)
    if args.before is not None:
        before = before_figures(args.before, args.weights, args.nodes, boards)
        result["before"] = {"tree": str(args.before), **before}
        play_nps = result["speed"]["nps"]["play"]  # type: ignore[index]
        result["play_over_before_exact"] = round(play_nps / before["nps"], 3)  # type: ignore[operator]
    common = ["--movetime", str(args.movetime), "--seed", str(args.seed), "--workers", str(args.workers)]
    if args.openings:
        common += ["--openings", args.openings]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.games:
        result["play_vs_exact"] = tuner_json(["bench", "match", args.weights, f"{args.weights}@exact", "--games",
                                              str(args.games), *common, "--overwrite", "--out",
                                              str(out / f"play-vs-exact-{args.weights}-s{args.seed}.pgn")])
    if args.stockfish_elo is not None:
        sf = shutil.which("stockfish") or "/usr/games/stockfish"
        if not Path(sf).exists():
            sys.exit("bench/play_search.py: no stockfish (apt-get install stockfish)")
        result["vs_stockfish"] = tuner_json(["bench", "match", args.weights, "--engine", sf, "--engine-options",
                                             f"UCI_LimitStrength=true,UCI_Elo={args.stockfish_elo},Threads=1",
                                             "--games", str(args.sf_games), *common, "--overwrite", "--out",
                                             str(out / f"play-vs-sf{args.stockfish_elo}-{args.weights}-s{args.seed}.pgn")])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
