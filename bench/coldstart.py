"""``tuner uci``'s first move on an empty numba cache, as python-chess sees it (issue 43): one JSON line.

For each case (``gm``: the linear evaluator; ``gm-nn``: the network; ``pls``: ``gm`` with the
option ``Search pls``) a fresh ``NUMBA_CACHE_DIR`` (checked empty, and the one numba then uses),
``chess.engine.SimpleEngine.popen_uci`` with python-chess's default timeouts, and
``engine.play(start position, Limit(time=1.0))``:

* ``start_seconds``: from launch to the end of the handshake (``uciok``);
* ``first_move_seconds``: the ``play`` call's wall seconds (target: below 2), and whether the
  move was legal and came from the quick search (``quick``);
* ``isready_ms_max``, ``isready_ms_median`` (``gm``): 20 ``isready`` round trips, 0.2 s apart,
  after the first move, while the kernels compile: whether the reading thread gets the
  interpreter while numba compiles in another thread;
* ``quit_seconds``: ``engine.quit()`` while the kernels still compile (the process must end at
  once; target below 2).

``warm``, the baseline, is the same first move (``gm``) on the installation's own numba cache
(``quick`` false once ``tuner warmup`` filled it). With ``--takeover`` the ``gm`` case then keeps
playing 1-s moves until one comes from the numba search (``takeover_seconds`` from launch), and
``warm`` is measured on the cache that run filled instead. Each case compiles for up to a minute of CPU: run it as
``python bench/coldstart.py`` from the repository, alone on the machine (about 30 s, 1.5
minutes with ``--takeover``, on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import chess
import chess.engine

CASES = {"gm": ("gm", {}), "gm-nn": ("gm-nn", {}), "pls": ("gm", {"Search": "pls"})}
FIRST_MOVE_BELOW = 2.0
QUIT_BELOW = 2.0
#: isready round trips timed after the first move (``gm``), 0.2 s apart
PINGS = 20
TARGETS = {"first_move_seconds_below": FIRST_MOVE_BELOW, "quit_seconds_below": QUIT_BELOW}
REPO = Path(__file__).resolve().parents[1]


def play_once(weights: str, options: dict[str, str], cache: str | None, *, takeover: bool = False,
              ping: bool = False) -> dict[str, object]:
    """One engine process on the cache folder ``cache`` (``None``: numba's default cache of
    this installation): its first 1-s move (and, with ``takeover``, the moves until the numba
    search plays)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    launched = time.perf_counter()
    engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "tuner", "uci", "--weights", weights],
                                                 env=env, cwd=str(REPO))
    out: dict[str, object] = {"start_seconds": round(time.perf_counter() - launched, 2)}
    try:
        if options:
            engine.configure(options)
        board = chess.Board()
        start = time.perf_counter()
        result = engine.play(board, chess.engine.Limit(time=1.0), info=chess.engine.INFO_ALL)
        out["first_move_seconds"] = round(time.perf_counter() - start, 2)
        out["legal"] = result.move is not None and result.move in board.legal_moves
        out["quick"] = "quick" in str(result.info.get("string", ""))
        if ping:  # isready round trips while the kernels compile (the reader must not starve)
            waits = []
            for _ in range(PINGS):
                sent = time.perf_counter()
                engine.ping()
                waits.append(time.perf_counter() - sent)
                time.sleep(0.2)
            out["isready_ms_max"] = round(1000 * max(waits), 1)
            out["isready_ms_median"] = round(1000 * sorted(waits)[len(waits) // 2], 1)
        if takeover:
            while True:
                result = engine.play(board, chess.engine.Limit(time=1.0), info=chess.engine.INFO_ALL)
                if "quick" not in str(result.info.get("string", "")):
                    out["takeover_seconds"] = round(time.perf_counter() - launched, 1)
                    break
    finally:
        start = time.perf_counter()
        engine.quit()
        out["quit_seconds"] = round(time.perf_counter() - start, 2)
    return out


def fresh_cache() -> str:
    """An empty folder for ``NUMBA_CACHE_DIR`` (numba keeps every index there when it is set)."""
    folder = tempfile.mkdtemp(prefix="movetuner-coldstart-")
    assert not os.listdir(folder)
    return folder


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--takeover", action="store_true",
                        help="also time the numba search's takeover and a warm start (gm)")
    args = parser.parse_args(argv)
    record: dict[str, object] = {"targets": TARGETS}
    met = True
    for name in args.cases.split(","):
        weights, options = CASES[name]
        cache = fresh_cache()
        case = play_once(weights, options, cache, takeover=args.takeover and name == "gm", ping=name == "gm")
        case["cache_files_after"] = sum(len(files) for _, _, files in os.walk(cache))
        record[name] = case
        met = met and bool(case["legal"]) and float(case["first_move_seconds"]) < FIRST_MOVE_BELOW \
            and float(case["quit_seconds"]) < QUIT_BELOW
        if args.takeover and name == "gm":
            record["warm"] = play_once(weights, options, cache)
    if not args.takeover:  # the baseline: the installation's own cache (filled by tuner warmup)
        record["warm"] = play_once("gm", {}, None)
    record["met"] = met
    print(json.dumps(record))


if __name__ == "__main__":
    main()
