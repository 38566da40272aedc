"""``tuner uci`` as a GUI sees it, through python-chess (issue 28): one JSON line.

* ``help_seconds``: ``python -m tuner --help``, best of 5, next to the baseline
  ``python_start_seconds`` (``python -c pass``, best of 5);
* ``movetime_used``: wall seconds of ``engine.play(board, Limit(time=T))`` / T for T = 0.1, 1.0
  and 3.0 s on three positions (start, a middle game, Kiwipete), min / mean / max;
* ``nodes_searched``: the ``nodes`` python-chess reports for ``Limit(nodes=N)``, N = 20,000 and
  200,000, on the same positions;
* ``cold_start``: with an empty ``NUMBA_CACHE_DIR``, seconds from launch to ``uciok``, from
  ``isready`` to ``readyok``, and from ``readyok`` to the first ``bestmove`` of ``go movetime
  1000`` (and whether an ``info string`` said that kernels compile, and that the quick search
  played: ``bench/coldstart.py`` measures the cold start through python-chess);
* ``targets`` and whether each is ``met``.

Run as ``python bench/uci.py`` from the repository (about 1.5 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import chess
import chess.engine

UCI = [sys.executable, "-m", "tuner", "uci"]
POSITIONS = [
    chess.STARTING_FEN,
    "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
]
MOVETIMES = (0.1, 1.0, 3.0)
NODES = (20_000, 200_000)
HELP_BELOW = 0.5
MOVETIME_USED = (0.85, 1.05)
NODES_200000 = (190_000, 200_000)
FIRST_BESTMOVE_BELOW = 10.0
TARGETS = {"help_seconds_below": HELP_BELOW, "movetime_used_between": MOVETIME_USED,
           "nodes_200000_between": NODES_200000, "first_bestmove_after_readyok_below": FIRST_BESTMOVE_BELOW}


def best_wall(cmd: list[str], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        best = min(best, time.perf_counter() - start)
    return round(best, 3)


def limits() -> tuple[dict[str, dict[str, float]], dict[str, list[int]]]:
    """Movetime ratios and node counts through python-chess, the kernels loaded first."""
    used: dict[str, list[float]] = {str(t): [] for t in MOVETIMES}
    nodes: dict[str, list[int]] = {str(n): [] for n in NODES}
    with chess.engine.SimpleEngine.popen_uci(UCI, timeout=300) as engine:
        for fen in POSITIONS:
            board = chess.Board(fen)
            engine.play(board, chess.engine.Limit(depth=1), game=fen)  # ucinewgame + isready out of the timing
            for t in MOVETIMES:
                start = time.perf_counter()
                engine.play(board, chess.engine.Limit(time=t), game=fen)
                used[str(t)].append((time.perf_counter() - start) / t)
            for n in NODES:
                result = engine.play(board, chess.engine.Limit(nodes=n), info=chess.engine.INFO_ALL, game=fen)
                nodes[str(n)].append(int(result.info["nodes"]))
    ratios = {t: {"min": round(min(r), 3), "mean": round(statistics.fmean(r), 3), "max": round(max(r), 3)}
              for t, r in used.items()}
    return ratios, nodes


def cold_start() -> dict[str, float | bool]:
    """The engine on an empty numba cache, driven line by line (no client timeout)."""
    with tempfile.TemporaryDirectory(prefix="movetuner-cold-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        start = time.perf_counter()
        proc = subprocess.Popen(UCI, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, bufsize=1, env=env)
        lines: queue.Queue[tuple[float, str]] = queue.Queue()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put((time.perf_counter(), line.strip()))

        threading.Thread(target=read, daemon=True).start()

        def send(text: str) -> float:
            assert proc.stdin is not None
            proc.stdin.write(text + "\n")
            proc.stdin.flush()
            return time.perf_counter()

        def wait(prefix: str) -> tuple[float, list[str]]:
            seen = []
            while True:
                at, line = lines.get(timeout=600)
                if line.startswith(prefix):
                    return at, seen
                seen.append(line)

        send("uci")
        uciok, _ = wait("uciok")
        asked = send("isready")
        readyok, before = wait("readyok")
        send("position startpos")
        send("go movetime 1000")
        bestmove, searched = wait("bestmove")
        send("quit")
        proc.wait(timeout=30)
    return {"uciok_seconds": round(uciok - start, 2), "readyok_seconds_after_isready": round(readyok - asked, 2),
            "said_compiling": any("compiling" in b for b in before + searched),
            "quick_search": any("quick python-chess search" in b for b in searched),
            "first_bestmove_seconds_after_readyok": round(bestmove - readyok, 2)}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, and no stray arguments
    python_start = best_wall([sys.executable, "-c", "pass"])
    help_seconds = best_wall([sys.executable, "-m", "tuner", "--help"])
    ratios, nodes = limits()
    cold = cold_start()
    met = {
        "help": help_seconds < HELP_BELOW,
        "movetime": all(MOVETIME_USED[0] <= r["min"] and r["max"] <= MOVETIME_USED[1] for r in ratios.values()),
        "nodes": all(NODES_200000[0] <= n <= NODES_200000[1] for n in nodes["200000"])
        and all(n <= 20_000 for n in nodes["20000"]),
        "cold_start": float(cold["first_bestmove_seconds_after_readyok"]) < FIRST_BESTMOVE_BELOW,
    }
    print(json.dumps({"bench": "uci", "python_start_seconds": python_start, "help_seconds": help_seconds,
                      "movetime_used": ratios, "nodes_searched": nodes, "cold_start": cold,
                      "targets": TARGETS, "met": met}))


if __name__ == "__main__":
    main()
