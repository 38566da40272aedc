"""What the benchmarks share: positions from the GM games (or seeded playouts) and timing.

Each benchmark is run as ``python bench/<name>.py`` (this folder is then on the import path).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import chess
import chess.pgn

if TYPE_CHECKING:
    from tuner.training.run_folder import RunDir

REPO = Path(__file__).resolve().parents[1]
GM_DIR = Path(os.environ.get("MOVETUNER_GM_DIR", REPO.parent / "shared" / "datasets" / "gm"))


def gm_files() -> list[Path]:
    """The GM collection's PGN files, sorted; empty when the folder is absent."""
    return sorted(GM_DIR.glob("*.pgn")) if GM_DIR.is_dir() else []


def gm_boards(limit: int) -> list[chess.Board]:
    """Positions before each move of the GM games, taken evenly from every file."""
    files = gm_files()
    out: list[chess.Board] = []
    for k, path in enumerate(files):
        quota = limit * (k + 1) // len(files)
        with path.open(encoding="utf-8", errors="replace") as fh:
            while len(out) < quota:
                game = chess.pgn.read_game(fh)
                if game is None:
                    break
                if game.errors or game.board().fen() != chess.STARTING_FEN:
                    continue
                board = chess.Board()
                for move in game.mainline_moves():
                    out.append(board.copy(stack=False))
                    board.push(move)
                    if len(out) >= quota:
                        break
    return out


def playout_boards(limit: int, seed: int = 0) -> list[chess.Board]:
    """Positions of seeded random games: the stand-in when the GM files are absent."""
    rng = random.Random(seed)
    out: list[chess.Board] = []
    while len(out) < limit:
        board = chess.Board()
        while not board.is_game_over() and board.ply() < 200 and len(out) < limit:
            out.append(board.copy(stack=False))
            board.push(rng.choice(list(board.legal_moves)))
    return out


def bench_boards(limit: int, min_ply: int = 0) -> tuple[list[chess.Board], str]:
    """``limit`` GM positions (from ply ``min_ply`` on) and ``"gm"``, or, when the GM files give
    fewer, seeded random playouts and ``"random playouts"`` (a bench's ``source`` field)."""
    boards = [b for b in gm_boards(limit if min_ply == 0 else 4 * limit) if b.ply() >= min_ply][:limit]
    if len(boards) < limit:
        return playout_boards(limit), "random playouts"
    return boards, "gm"


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    """Wall seconds of each of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def gm_position_set(out: Path = REPO / "datasets" / "built" / "gm") -> Path | None:
    """The GM games ingested with the default filters into ``out`` (built on first use, then
    reused); None when the GM folder is absent."""
    files = gm_files()
    if not files:
        return None
    if not (out / "manifest.json").exists():
        from tuner.ingest import ingest  # noqa: PLC0415

        with open(os.devnull, "w") as devnull:
            ingest(files, out, progress=False, log=devnull)
    return out


def gm_position_set_or_skip(bench: str) -> Path | None:
    """:func:`gm_position_set`, or None after printing the benchmark's JSON line that says it was
    skipped (no GM games on this machine)."""
    data = gm_position_set()
    if data is None:
        print(json.dumps({"bench": bench, "skipped": "no GM games"}))
    return data


def int_arguments(argv: list[str] | None = None, **defaults: int) -> dict[str, int]:
    """The optional positional integer arguments of a benchmark, in the order of ``defaults``
    (``python bench/mmto.py [ITERATIONS] [MAX_TRAIN]``): ``{name: value}``. Called from a
    benchmark's ``main()``, never at import; ``argv`` defaults to ``sys.argv[1:]``."""
    import argparse  # noqa: PLC0415

    ap = argparse.ArgumentParser()
    for name, default in defaults.items():
        ap.add_argument(name, type=int, nargs="?", default=default, help=f"default: {default}")
    return dict(vars(ap.parse_args(argv)))


@contextlib.contextmanager
def tuning_run(method: str, data: Path, *flags: str) -> Iterator[tuple[RunDir, float]]:
    """``tuner tune --method METHOD --data DATA FLAGS`` into a temporary run folder: yields the
    :class:`tuner.training.run_folder.RunDir` (removed on exit) and the run's wall time in seconds; exits with
    the command's code when it fails."""
    from tuner.cli import main as tuner_main  # noqa: PLC0415
    from tuner.training.run_folder import RunDir  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        run = RunDir(f"{tmp}/run")
        start = time.perf_counter()
        code = tuner_main(["tune", "--method", method, "--data", str(data), "--out", str(run.path), *flags])
        seconds = time.perf_counter() - start
        if code != 0:
            raise SystemExit(code)
        yield run, seconds


def tuner_json(argv: list[str]) -> dict:  # type: ignore[type-arg]
    """Run a ``tuner`` command that prints one JSON line (in this process); its figures."""
    import io  # noqa: PLC0415

    from tuner.cli import main as tuner_main  # noqa: PLC0415

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = tuner_main(argv)
    if code != 0:
        raise SystemExit(f"tuner {' '.join(argv)}: exit {code}")
    return json.loads(out.getvalue().strip().splitlines()[-1])


def match_record(a: str, b: str, games: int, limit: list[str], pgn: str) -> dict:  # type: ignore[type-arg]
    """``tuner bench match A B`` at ``limit`` (e.g. ``["--depth", "2"]``): its result from A's
    view (W/D/L, score, Elo with the 95 % interval) and its wall seconds."""
    start = time.perf_counter()
    m = tuner_json(["bench", "match", a, b, "--games", str(games), *limit, "--json", "--out", pgn])
    return {**{k: m[k] for k in ("limit", "games", "wins", "draws", "losses", "score", "elo", "elo_ci95")},
            "seconds": round(time.perf_counter() - start, 1)}


def won(match: dict) -> bool:  # type: ignore[type-arg]
    """Whether a :func:`match_record` is won: its Elo interval lies above 0."""
    return match["elo_ci95"][0] is not None and match["elo_ci95"][0] > 0
