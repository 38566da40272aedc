"""Meep's experiment at small scale (Veness, Silver, Uther & Blair, NIPS 2009, table 1).

From *untrained* weights (every weight 0 except the pawn's, 100 cp in both phases), each method
learns by self-play from the shipped openings for the same training time (``--minutes``, the
trainer's own clock: CPU time of its training thread, searches and updates, not the validation
move-match; ``--parallel`` runs side by side, which that clock keeps fair): TD-Leaf(lambda),
RootStrap(alpha-beta), TreeStrap(minimax), TreeStrap(alpha-beta), and TreeStrap(alpha-beta)
*staged* as in the Duchess paper (``material``, then ``material,pieces,king``, then every group,
a third of the time each, each stage from the last one's weights). Then a match tournament at a
fixed depth (``tuner bench match``'s engine and rules, each opening played twice with colours
swapped): every learnt weight set against the untrained one (``--pairs untrained``) or every pair
(``--pairs all``, a round robin), ``--games`` games a pair. The hand-set ``material`` set
(``--reference``) joins the tournament for scale.

Elo (untrained = 0) is :func:`tuner.arena.ratings.fit_ratings`' maximum-likelihood fit of all game
pairs played (the ``tuner bench compare`` ratings), with 95 % sandwich intervals from the
pentanomial variance of each pair. A player whose group won every point against the untrained
weights' group has rating ``"+inf"`` (the maximum does not exist: the reference's games
usually connect the groups); its interval is then the exact one-sided binomial bound of its
direct match, to ``null`` (+infinity), and
``elo_among_learnt`` rates the learnt sets among themselves (the first method as anchor), which
is what orders them. The targets are read on the lower ends: every learnt set's above 0,
TreeStrap(alpha-beta)'s at least +400. Meep's
table for comparison (its own scale): untrained 250, TD-Leaf 1068, RootStrap 1362,
TreeStrap(mm) 1807, TreeStrap(ab) 2157.

Prints one JSON line: ``elo``, ``elo_ci95``, each match's W/D/L, each run's training figures,
whether Meep's ordering holds, and the targets (every method's interval above 0; TreeStrap(ab)
at least +400).

Usage: ``python bench/bootstrap.py [--minutes 10] [--games 100] [--depth 2] [--match-depth 2]
[--pairs all|untrained] [--workers 2] [--parallel 2] [--data DIR] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script from anywhere; the package is also installed

from search.params.catalog import FEATURE_INDEX, N_FEATURES  # noqa: E402
from search.params.weights import Weights, load_weights, save_weights  # noqa: E402
from tuner.arena.compare import finite  # noqa: E402
from tuner.arena.match import DEFAULT_OPENINGS, MatchConfig, load_openings, pair_scores, run_match, summarize  # noqa: E402
from tuner.arena.ratings import PairScores, fit_ratings  # noqa: E402

METHODS = ("tdleaf", "rootstrap", "treestrap-mm", "treestrap-ab")
MEEP = {"untrained": 250, "tdleaf": 1068, "rootstrap": 1362, "treestrap-mm": 1807, "treestrap-ab": 2157}
STAGES = "material;material,pieces,king;all"


def untrained(path: Path) -> None:
    w = np.zeros(N_FEATURES, dtype=np.int32)
    for name in ("mg.material.pawn", "eg.material.pawn"):
        w[FEATURE_INDEX[name]] = 100
    save_weights(path, Weights(w, {"name": "untrained", "description": "zero except the pawn (100 cp)"}))


def train(method: str, run: Path, start: Path, args: argparse.Namespace, *, minutes: float,
          stages: str = "") -> dict[str, object]:
    cmd = [sys.executable, "-m", "tuner", "tune", "--method", method, "--data", str(args.data), "--out", str(run),
           "--overwrite", "--quiet", "--start", str(start), "--iterations", "1000000", "--minutes", str(minutes),
           "--games", str(args.games_per_iteration), "--search-depth", str(args.depth), "--keep", "last", "--max-validation", "100",
           "--threads", "1", "--seed", str(args.seed)]
    if method.startswith("treestrap") and not args.quiescence_nodes:
        cmd += ["--no-quiescence-nodes"]
    if method == "treestrap-mm" and args.mm_nodes:
        cmd += ["--nodes", str(args.mm_nodes)]
    if stages:
        cmd += ["--stages", stages]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=REPO)
    return {**figures(run, staged=bool(stages)), "wall_seconds": round(time.perf_counter() - t, 1)}


def figures(run: Path, *, staged: bool) -> dict[str, object]:
    """A run's training figures from its metrics.jsonl, and its material values in cp (middle
    game / end game)."""
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    w = load_weights(run / "weights.json").values
    pieces = ("pawn", "knight", "bishop", "rook", "queen")
    return {"iterations": rows[-1]["iteration"], "games": sum(r.get("games", 0) for r in rows),
            "searches": sum(r.get("searches", 0) for r in rows), "nodes": sum(r.get("nodes", 0) for r in rows),
            "train_seconds": round(_staged_seconds(rows) if staged else rows[-1].get("train_seconds", 0.0), 1),
            "rms_error_cp_last": rows[-1].get("rms_error_cp"), "match_validation": rows[-1].get("match_validation"),
            "material": {p: [int(w[FEATURE_INDEX[f"mg.material.{p}"]]), int(w[FEATURE_INDEX[f"eg.material.{p}"]])]
                         for p in pieces}}


def _staged_seconds(rows: list[dict]) -> float:  # type: ignore[type-arg]
    """Training time of a staged run: the last train_seconds of each stage (the trainer's clock
    is cumulative and starts again at 0 with each stage)."""
    last: dict[int, float] = {}
    for r in rows:
        if "stage" in r:
            last[r["stage"]] = r["train_seconds"]
    return sum(last.values())


def _rounded(iv: tuple[float, float] | None) -> list[float | None] | None:
    """A 95 % interval rounded for JSON (``None``: no interval)."""
    return None if iv is None else [finite(iv[0]), finite(iv[1])]


# long: a bench script's steps in order, each printing into the one JSON line
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="training time per method (default 10)")
    ap.add_argument("--games", type=int, default=100, help="games per pair in the tournament (even; default 100)")
    ap.add_argument("--depth", type=int, default=2, help="self-play search depth (default 2)")
    ap.add_argument("--games-per-iteration", type=int, default=4,
                    help="self-play games per outer iteration (a checkpoint and a validation move-match each)")
    ap.add_argument("--mm-nodes", type=int, default=0, help="node limit of TreeStrap(minimax)'s searches (0: none)")
    ap.add_argument("--match-depth", type=int, default=2, help="tournament search depth (default 2)")
    ap.add_argument("--pairs", choices=("untrained", "all"), default="all",
                    help="all: a round robin (default); untrained: each run against the untrained weights only")
    ap.add_argument("--workers", type=int, default=2, help="match worker processes")
    ap.add_argument("--parallel", type=int, default=2, help="training runs side by side (each one thread)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=str(REPO / "datasets" / "built" / "sample"),
                    help="position set for the validation move-match (tuner ingest --sample)")
    ap.add_argument("--out", default=str(REPO / "results" / "bench-bootstrap"))
    ap.add_argument("--reference", default="material",
                    help="a weight set that joins the round robin for scale (default: material; empty: none)")
    ap.add_argument("--skip-training", action="store_true", help="reuse the runs already in --out")
    ap.add_argument("--only", default="", help="train only these runs (comma-separated names), reuse the others")
    ap.add_argument("--quiescence-nodes", action=argparse.BooleanOptionalAction, default=True,
                    help="TreeStrap also updates quiescence nodes (the methods' default)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not Path(args.data).is_dir():
        subprocess.run([sys.executable, "-m", "tuner", "ingest", "--sample"], check=True, cwd=REPO)
    start = out / "untrained.json"
    untrained(start)

    runs = {m: (m, "") for m in METHODS}
    runs["treestrap-ab-staged"] = ("treestrap-ab", STAGES)
    todo = [n for n in runs if not args.skip_training and (not args.only or n in args.only.split(","))]
    training: dict[str, dict[str, object]] = {}
    # the budget is CPU time of each run's training thread, so runs side by side get the same work
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        jobs = {n: pool.submit(train, runs[n][0], out / n, start, args,
                               minutes=args.minutes / 3 if runs[n][1] else args.minutes, stages=runs[n][1])
                for n in todo}
        for n, job in jobs.items():
            training[n] = job.result()
            print(f"trained {n}: {training[n]}", file=sys.stderr)
    for n in runs:
        if n not in training:  # a run trained before (--only, --skip-training)
            training[n] = figures(out / n, staged=bool(runs[n][1]))

    names = ["untrained", *runs]
    weights = [load_weights(start).values] + [load_weights(out / n / "weights.json").values for n in runs]
    if args.reference:  # a hand-set weight set in the round robin, for scale
        names.append(args.reference)
        weights.append(load_weights(args.reference).values)
    openings = load_openings(DEFAULT_OPENINGS)
    if args.pairs == "all":
        pairs = list(itertools.combinations(range(len(names)), 2))
    else:
        pairs = [(k, 0) for k in range(1, len(names))]
    matches: dict[str, dict[str, object]] = {}
    scores: list[PairScores] = []
    t = time.perf_counter()
    for i, j in pairs:
        cfg = MatchConfig(games=args.games, depth=args.match_depth, workers=args.workers, seed=args.seed)
        played = run_match(weights[i], weights[j], openings, cfg)
        scores.append(PairScores(i, j, pair_scores(played)))
        summary = summarize(played)
        key = f"{names[i]}-vs-{names[j]}"
        matches[key] = {"wins": summary.wins, "draws": summary.draws, "losses": summary.losses,
                        "score": round(summary.score, 4)}
        print(f"{key}: {matches[key]}", file=sys.stderr)
    match_seconds = time.perf_counter() - t
    (out / "matches.json").write_text(json.dumps({"names": names, "pairs": [
        {"i": p.i, "j": p.j, "pair_scores": p.pair_scores.tolist()} for p in scores]}) + "\n")

    fit = fit_ratings(len(names), scores, anchor=0)
    # among the learnt sets (and the reference) alone, anchored at the first method: their
    # ratings exist even when the untrained weights scored nothing against any of them
    inner = fit_ratings(len(names) - 1, [PairScores(p.i - 1, p.j - 1, p.pair_scores)
                                         for p in scores if p.i != 0 and p.j != 0], anchor=0) \
        if args.pairs == "all" else None

    table = {n: finite(e) if math.isfinite(e) else ("+inf" if e > 0 else "-inf") for n, e in zip(names, fit.elo)}
    ci: dict[str, list[float | None] | None] = {}
    lower: dict[str, float] = {}  # each learnt set's 95 % lower bound against the untrained weights
    for k, n in enumerate(names):
        iv = fit.interval(k)
        ci[n] = _rounded(iv)
        direct = next((p for p in scores if 0 in (p.i, p.j) and k in (p.i, p.j) and k != 0), None)
        if direct is not None:
            pairs_won = direct.pair_scores if direct.i == k else 1.0 - direct.pair_scores
            if iv is None and np.all(pairs_won == 1.0):
                # no spread to fit: the exact one-sided binomial (Clopper-Pearson) bound on the
                # rate of won game pairs, 0.025^(1/n) for n pairs all won, to +infinity
                q = 0.025 ** (1.0 / len(pairs_won))
                lower[n] = 400.0 * math.log10(q / (1.0 - q))
                ci[n] = [finite(lower[n]), None]
            elif iv is not None:
                lower[n] = iv[0]

    def value(n: str) -> float:
        return float(fit.elo[names.index(n)])

    def strength(n: str) -> float:
        """Rating for ordering: against untrained, then among the learnt sets."""
        if n == "untrained":
            return -math.inf
        return float(inner.elo[names.index(n) - 1]) if inner is not None else value(n)

    order = ["untrained", *METHODS]
    meep_order = all(value(b) > 0 for b in METHODS) and all(
        strength(a) < strength(b) for a, b in zip(order[1:], order[2:]))
    among = None if inner is None else {
        "anchor": names[1], "elo": {n: finite(inner.elo[k - 1]) for k, n in enumerate(names) if k},
        "elo_ci95": {n: _rounded(inner.interval(k - 1)) for k, n in enumerate(names) if k}}
    print(json.dumps({
        "minutes_per_method": args.minutes, "clock": "CPU time of each run's training thread",
        "parallel_runs": args.parallel, "selfplay_depth": args.depth, "match_depth": args.match_depth,
        "selfplay_games_per_iteration": args.games_per_iteration, "treestrap_quiescence_nodes": args.quiescence_nodes,
        "trained_now": todo, "games_per_pair": args.games, "pairs": args.pairs, "elo": table, "elo_ci95": ci,
        "elo_among_learnt": among, "meep_elo": MEEP, "meep_order_holds": meep_order,
        "order": sorted(names, key=lambda n: -strength(n)),
        "matches": matches, "training": training, "match_seconds": round(match_seconds, 1),
        "target_all_beat_untrained": all(lower.get(n, -1.0) > 0 for n in runs),
        "target_treestrap_ab_400": lower.get("treestrap-ab", -1.0) >= 400,
    }))


if __name__ == "__main__":
    main()
