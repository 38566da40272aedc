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
``warm`` is measured on the cache that run filled instead. With ``--timed`` (issue 58) it measures instead ``go movetime`` answers as a GUI sees them: for
``gm`` (linear) and ``nnue`` (network), a cold run on a fresh cache then a warm run on the cache
that run filled, each ``--moves`` moves (default 500) at ``--movetime`` (default 100 ms) from
the shipped large opening suite, the engine playing both sides (the cold run goes on until the numba search answers a move, so
that the warm run finds its kernels in the cache); ``first_move_ms`` and
``worst_ms`` are the ``play`` calls' wall times (``position`` and ``go`` through the pipe),
with ``p99_ms``, the moves the quick search answered, and ``over_limit`` (above
``movetime``) and ``over_limit_and_overhead`` (above ``movetime`` + the ``MoveOverhead``
option, the issue's target), and ``compile_in_child`` (whether a cold cache compiled in a child
process, :mod:`tuner.compile_apart`, or with ``--in-process`` in the engine's own, as before);
``--players`` limits the runs to some of ``gm`` and ``nnue``. Run it alone for the quiet figures; ``--load N`` runs N busy
processes beside it (the loaded machine). Each case compiles for up to a minute of CPU: run it as
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
OPENINGS = REPO / "datasets" / "openings" / "gnuchess-book.epd"


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


def timed_run(weights: str, cache: str, movetime_ms: int, moves: int, *, takeover: bool = False) -> dict[str, object]:
    """One engine process on the cache folder ``cache``: ``moves`` moves of ``go movetime``, the
    engine playing both sides from the large opening suite's positions in order (a new one when
    a game ends or reaches 160 plies); the wall milliseconds of each ``play`` call. With
    ``takeover``, more moves until the numba search answers one (its kernels then are in the
    cache: the warm run after it finds them there); ``takeover_move`` says which."""
    env = {**{k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}, "NUMBA_CACHE_DIR": cache}
    launched = time.perf_counter()
    engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "tuner", "uci", "--weights", weights],
                                                 env=env, cwd=str(REPO))
    overhead = int(engine.options["MoveOverhead"].default or 0)
    openings = [chess.Board.from_epd(line)[0] for line in OPENINGS.read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    times: list[float] = []
    quick = illegal = 0
    k, board, plies = 0, None, 0
    last_quick, takeover_move = True, None
    try:
        while len(times) < moves or (takeover and last_quick and len(times) < 20 * moves):
            if board is None or board.is_game_over() or plies >= 160:
                board, plies, k = openings[k % len(openings)].copy(), 0, k + 1
            sent = time.perf_counter()
            result = engine.play(board, chess.engine.Limit(time=movetime_ms / 1000), info=chess.engine.INFO_ALL)
            times.append(1000 * (time.perf_counter() - sent))
            last_quick = "quick" in str(result.info.get("string", ""))
            quick += last_quick
            if not last_quick and takeover_move is None:
                takeover_move = len(times)
            if result.move is None or result.move not in board.legal_moves:
                illegal += 1
                board = None
                continue
            board.push(result.move)
            plies += 1
    finally:
        engine.quit()
    ranked = sorted(times)
    return {"first_move_ms": round(times[0], 1), "worst_ms": round(ranked[-1], 1),
            "p99_ms": round(ranked[int(0.99 * (len(ranked) - 1))], 1), "median_ms": round(ranked[len(ranked) // 2], 1),
            "moves": len(times), "quick_moves": quick, "takeover_move": takeover_move, "illegal": illegal, "overhead_ms": overhead,
            "over_limit": sum(t > movetime_ms for t in times),
            "over_limit_and_overhead": sum(t > movetime_ms + overhead for t in times),
            "seconds": round(time.perf_counter() - launched, 1)}


def busy(stop_at: float) -> None:
    """A CPU hog until ``stop_at`` (``time.time``): one process of the loaded machine."""
    x = 0
    while time.time() < stop_at:
        x = (x * 1103515245 + 12345) % 2147483648


def timed(movetime_ms: int, moves: int, load: int, players: list[str]) -> dict[str, object]:
    """The ``--timed`` record: cold then warm runs of each of ``players`` (``gm``, ``nnue``)."""
    import multiprocessing  # noqa: PLC0415

    hogs = [multiprocessing.Process(target=busy, args=(time.time() + 3600,), daemon=True) for _ in range(load)]
    for h in hogs:
        h.start()
    record: dict[str, object] = {"movetime_ms": movetime_ms, "moves": moves, "load_processes": load,
                                 "compile_in_child": os.environ.get("MOVETUNER_COMPILE_IN_CHILD", "1") != "0"}
    met = True
    try:
        for weights in players:
            cache = fresh_cache()
            for kind in ("cold", "warm"):
                run = timed_run(weights, cache, movetime_ms, moves, takeover=kind == "cold")
                record[f"{weights}_{kind}"] = run
                worst, overhead = run["worst_ms"], run["overhead_ms"]
                assert isinstance(worst, float) and isinstance(overhead, int)
                met = met and run["illegal"] == 0 and worst <= movetime_ms + overhead
    finally:
        for h in hogs:
            h.terminate()
    record["met"] = met
    return record


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
    parser.add_argument("--timed", action="store_true",
                        help="time go movetime answers, cold and warm, gm and nnue (issue 58) instead")
    parser.add_argument("--movetime", type=int, default=100, help="with --timed: milliseconds a move (default 100)")
    parser.add_argument("--moves", type=int, default=500, help="with --timed: moves a run (default 500)")
    parser.add_argument("--load", type=int, default=0, help="with --timed: busy processes beside it (default 0)")
    parser.add_argument("--players", default="gm,nnue", help="with --timed: comma-separated, of gm, nnue")
    parser.add_argument("--in-process", action="store_true",
                        help="compile in the engine's own process, as before issue 58 item 12 "
                             "(MOVETUNER_COMPILE_IN_CHILD=0) instead of in a child process")
    args = parser.parse_args(argv)
    if args.in_process:
        os.environ["MOVETUNER_COMPILE_IN_CHILD"] = "0"  # the engines inherit it
    if args.timed:
        print(json.dumps(timed(args.movetime, args.moves, args.load, args.players.split(","))))
        return
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
