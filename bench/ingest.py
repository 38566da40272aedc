"""Ingestion speed: the grandmaster games (PGN), and a 100,000-line position file.

Prints two JSON lines.

**PGN** (``"bench": "ingest"``): one worker against all workers, in the same run.

Reads ``../shared/datasets/gm/*.pgn`` (relative to the repository; ``MOVETUNER_GM_DIR``
overrides it, as in ``tests/conftest.py``) with the default filters, once with one worker and
once with every core, and prints one JSON line:

- ``games``, ``positions_kept``: games read and positions written (equal for both runs, and the
  files byte-identical: ``identical_output``);
- ``w1_*`` / ``wN_*``: elapsed seconds, games/s and positions/s (positions kept) with 1 and with
  ``workers`` processes, and ``speedup``;
- ``peak_rss_mb_self`` / ``peak_rss_mb_children``: peak resident memory of this process and of
  the largest worker (``resource.getrusage`` maxrss);
- ``target_60s_met``: whether the all-workers run took under 60 s.

That line is ``{"skipped": ...}`` when the folder is absent.

**Position file** (``"bench": "ingest-positions"``): a 100,000-line EPD file with results
(``FEN c9 "1-0";``, the zurichess quiet-labeled layout) written in a temporary folder from the
shipped sample games: each position before a move, then the positions one legal move after
it, every line distinct, each with the result of its game (the 3,229 positions of the 52
games alone are too few). It is ingested once untimed (numba loads its kernels), then timed
with one worker and with every core; the same lines as ``FEN [1.0]`` are timed with every core
too. ``positions_per_s`` is lines read per second of the whole ``ingest()`` call (reading,
parsing, checking, deduplicating, writing the set); ``target_100k_met`` whether the all-cores
EPD run reached 100,000. The baseline, measured in the same run, is python-chess reading
5,000 of the lines (``chess.Board(fen)``, the polyglot key and the legal-move count, per line:
what the PGN path's workers would do without the numba kernels): ``python_chess_positions_per_s``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from common import GM_DIR, gm_files

import chess
import chess.pgn
import chess.polyglot

from tuner.ingest import SPLITS, ingest
from tuner.cores import available_cores

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample" / "famous-games.pgn"
POSITION_LINES = 100_000


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for split in SPLITS:
        h.update((folder / f"{split}.parquet").read_bytes())
    return h.hexdigest()


def timed_run(files: list[Path], out: Path, workers: int) -> tuple[dict, float]:  # type: ignore[type-arg]
    with open(os.devnull, "w") as devnull:
        start = time.perf_counter()
        manifest = ingest(files, out, workers=workers, progress=False, log=devnull)
        return manifest, time.perf_counter() - start


def position_lines(n: int) -> list[tuple[chess.Board, str]]:
    """``n`` distinct positions from the sample games with their games' results: each position
    before a move, then its children (one legal move on), then their children."""
    games = []
    with SAMPLE.open(encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            board, positions = game.board(), []
            for move in game.mainline_moves():
                positions.append(board.copy(stack=False))
                board.push(move)
            games.append((positions, game.headers["Result"]))
    seen: set[str] = set()
    out: list[tuple[chess.Board, str]] = []
    level = [(p, result) for positions, result in games for p in positions]
    while len(out) < n and level:
        following = []
        for board, result in level:
            for child in [board] + [_after(board, m) for m in board.legal_moves]:
                key = child.epd()
                if key not in seen:
                    seen.add(key)
                    out.append((child, result))
                    following.append((child, result))
                    if len(out) == n:
                        return out
        level = following
    return out


def _after(board: chess.Board, move: chess.Move) -> chess.Board:
    child = board.copy(stack=False)
    child.push(move)
    return child


def python_chess_rate(lines: list[str]) -> float:
    """Lines per second python-chess reads (board, polyglot key, legal-move count)."""
    start = time.perf_counter()
    for line in lines:
        board = chess.Board(line.split(" c9 ")[0])
        chess.polyglot.zobrist_hash(board)
        board.legal_moves.count()
    return len(lines) / (time.perf_counter() - start)


def positions_row(workers: int) -> dict[str, object]:
    samples = position_lines(POSITION_LINES)
    points = {"1-0": "1.0", "0-1": "0.0", "1/2-1/2": "0.5"}
    epd = [f'{b.epd()} c9 "{r}";' for b, r in samples]
    brackets = [f"{b.fen()} [{points[r]}]" for b, r in samples]
    out: dict[str, object] = {"bench": "ingest-positions", "lines": len(epd), "workers": workers,
                              "cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, lines in (("epd", epd), ("brackets", brackets)):
            files[name] = Path(tmp) / f"{name}.epd"
            files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
        out["input_mb"] = round(files["epd"].stat().st_size / 1e6, 2)
        timed_run([files["epd"]], Path(tmp) / "warm", workers)
        for label, name, n in (("w1", "epd", 1), ("wN", "epd", workers), ("brackets_wN", "brackets", workers)):
            manifest, seconds = timed_run([files[name]], Path(tmp) / label, n)
            assert manifest["lines"]["rejected"] == 0
            out[f"{label}_seconds"] = round(seconds, 3)
            out[f"{label}_positions_per_s"] = round(manifest["lines"]["read"] / seconds)
            if label == "wN":
                out["positions_kept"] = manifest["positions"]["kept"]
                out["identical_output"] = digest(Path(tmp) / "w1") == digest(Path(tmp) / "wN")
    out["positions_per_s"] = out["wN_positions_per_s"]
    baseline = python_chess_rate(epd[:5000])
    out["python_chess_positions_per_s"] = round(baseline)
    out["speedup_vs_python_chess"] = round(float(out["wN_positions_per_s"]) / baseline, 1)  # type: ignore[arg-type]
    out["target_100k_met"] = float(out["wN_positions_per_s"]) >= 100_000  # type: ignore[arg-type]
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, and no stray arguments
    pgn_row()
    print(json.dumps(positions_row(available_cores())))


def pgn_row() -> None:
    files = gm_files()
    if not files:
        print(json.dumps({"bench": "ingest", "skipped": f"no PGN files in {GM_DIR}"}))
        return
    workers = available_cores()
    out: dict[str, object] = {"bench": "ingest", "files": [f.name for f in files],
                              "input_mb": round(sum(f.stat().st_size for f in files) / 1e6, 2),
                              "workers": workers, "cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for label, n in (("w1", 1), ("wN", workers)):
            manifest, seconds = timed_run(files, Path(tmp) / label, n)
            games, kept = manifest["games"]["read"], manifest["positions"]["kept"]
            results[label] = (manifest, digest(Path(tmp) / label))
            out[f"{label}_seconds"] = round(seconds, 2)
            out[f"{label}_games_per_s"] = round(games / seconds, 1)
            out[f"{label}_positions_per_s"] = round(kept / seconds, 1)
        m1 = results["w1"][0]
        out["games"] = m1["games"]["read"]
        out["games_kept"] = m1["games"]["kept"]
        out["positions_kept"] = m1["positions"]["kept"]
        out["problems"] = m1["problems"]["count"]
        out["identical_output"] = results["w1"][1] == results["wN"][1]
    out["speedup"] = round(float(out["w1_seconds"]) / float(out["wN_seconds"]), 2)  # type: ignore[arg-type]
    scale = 1024 if sys.platform != "darwin" else 1024 * 1024  # maxrss is KiB on Linux, bytes on macOS
    out["peak_rss_mb_self"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 1e6, 1)
    out["peak_rss_mb_children"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale / 1e6, 1)
    out["target_60s_met"] = float(out["wN_seconds"]) < 60  # type: ignore[arg-type]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
