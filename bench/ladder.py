"""``tuner bench ladder`` for ``gm`` and ``nnue`` at 10+0.1 against Debian's engines, as one JSON line.

Needs the Debian packages of the ladder's rated engines (datasets/ladder/debian.toml; as
root: ``apt-get update && apt-get install stockfish phalanx sjeng hoichess gnuchess
glaurung toga2``; only those rated in the file are played, today the Stockfish 15.1
``UCI_Elo`` levels) and the grandmaster games in ``../shared/datasets/gm/`` (or
``MOVETUNER_GM_DIR``). Steps, each as a user would run them:

1. the large opening suite, ``tuner bench openings --from-pgn GM/*.pgn --out
   results/openings-gm.epd`` (reused when that file exists; ``--openings FILE`` to give one);
2. for each player, ``tuner bench ladder PLAYER --ladder LADDER --tc 10+0.1 --games N --openings
   SUITE --seed S``: its rating on the ladder's published scale with a 95 % interval, the PGN and
   plot in ``results/`` (an existing one is refused: pass --overwrite).

Prints one JSON line: the suite (file, positions, sha256, seed), and per player its rating,
interval, per-opponent scores, the PGN and plot, and ``seconds``; ``interval_within_60``: whether
each interval is no wider than +-60 (the issue's target). Full length (4 rated opponents x 100
games x 2 players at 10+0.1) takes about 3 hours on 2 cores. A smoke run: ``--ladder FILE``
of ``tuner uci`` opponents, ``--nodes 300 --games 2``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path

from common import GM_DIR, REPO, gm_files

from tuner.cli import main as tuner_main

DEFAULT_LADDER = REPO / "datasets" / "ladder" / "debian.toml"
DEFAULT_SUITE = Path("results") / "openings-gm.epd"


def run(args: list[str]) -> dict[str, object]:
    """``tuner ARGS --json`` in this process; its JSON line, or exit naming the command."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = tuner_main([*args, "--json"])
    if code != 0:
        sys.exit(f"tuner {' '.join(args)} failed with exit code {code}")
    doc = json.loads(out.getvalue().strip().splitlines()[-1])
    assert isinstance(doc, dict)
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Debian packages needed: stockfish (and for entries once rated: "
                                        "phalanx sjeng hoichess gnuchess glaurung toga2); install with apt-get as root.")
    ap.add_argument("--players", default="gm,nnue", help="weight sets, comma-separated (default: gm,nnue)")
    ap.add_argument("--ladder", type=Path, default=DEFAULT_LADDER, help=f"ladder file (default: {DEFAULT_LADDER})")
    ap.add_argument("--openings", type=Path, default=None,
                    help=f"openings file (default: build {DEFAULT_SUITE} from the GM games, or reuse it)")
    ap.add_argument("--only", default=None,
                    help="play only these opponents of the ladder (names, comma-separated; default: every rated one)")
    ap.add_argument("--games", type=int, default=100, help="games per opponent (default: 100)")
    limit = ap.add_mutually_exclusive_group()
    limit.add_argument("--tc", default=None, help="clock per side, BASE+INC (default: 10+0.1)")
    limit.add_argument("--nodes", type=int, default=None, help="nodes per move instead of a clock (smoke runs)")
    ap.add_argument("--seed", type=int, default=1, help="openings seed (default: 1; not the seed that chose anything)")
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    ap.add_argument("--overwrite", action="store_true", help="replace earlier ladder PGN and plot files")
    args = ap.parse_args()
    start = time.perf_counter()
    suite = args.openings
    built = None
    if suite is None:
        suite = DEFAULT_SUITE
        if not suite.exists():
            files = gm_files()
            if not files:
                sys.exit(f"no GM games in {GM_DIR} (set MOVETUNER_GM_DIR) and no --openings")
            built = run(["bench", "openings", "--from-pgn", *map(str, files), "--out", str(suite)])
    limit_args = ["--nodes", str(args.nodes)] if args.nodes is not None else ["--tc", args.tc or "10+0.1"]
    common = ["--ladder", str(args.ladder), *limit_args, "--games", str(args.games), "--openings", str(suite),
              "--seed", str(args.seed)]
    if args.workers is not None:
        common += ["--workers", str(args.workers)]
    if args.only is not None:
        common += ["--only", args.only]
    players = {}
    for player in [p.strip() for p in args.players.split(",") if p.strip()]:
        stem = f"results/bench-ladder-{player}"
        doc = run(["bench", "ladder", player, *common, "--pgn", f"{stem}.pgn", "--plot", f"{stem}.png",
                   *(["--overwrite"] if args.overwrite else [])])
        interval = doc["elo_ci95"]
        players[player] = {**{k: doc[k] for k in ("elo", "elo_ci95", "se", "opponents", "skipped", "pgn", "plot",
                                                   "limit", "games_per_opponent", "seconds")},
                           "interval_within_60": bool(isinstance(interval, list) and interval[1] - interval[0] <= 120)}
        suite_record = {k: doc[k] for k in ("openings", "openings_sha256", "seed")}
    print(json.dumps({"ladder": str(args.ladder), "only": args.only, "suite": {**suite_record, "built": built} if players else None,
                      "players": players, "seconds": round(time.perf_counter() - start, 1)}))


if __name__ == "__main__":
    main()
