"""Compact position files (issue 60 item 2): conversion and reading speed on a million positions.

Prints one JSON line (``"bench": "compact"``).

The set: the 3,229 positions of the shipped sample games (``datasets/sample/famous-games.pgn``)
with their moves, repeated under new game ids to ``--positions`` rows (default 1,000,000), a
stand-in score on each (the material balance, one row in nine without one) and the game's
result, written as one Parquet split in a temporary folder the way a position set stores it
(zstd). Each conversion runs once untimed on the first chunk (numba loads its kernels), then:

- ``parquet_to_compact_s``, ``compact_to_parquet_s``: the split to a ``.mtpos`` file and back
  (:mod:`tuner.ingest.convert`);
- ``compact_to_bullet_s``, ``bullet_to_compact_s``: the ``.mtpos`` file to ``FEN | score | result``
  text and back (every FEN checked by :func:`search.core.fen_batch.parse_fens`);
- ``read_compact_frame_s`` against ``read_parquet_frame_s`` (the baseline): the position-set
  frame with every column (a compact file computes ``n_legal`` and ``zobrist`` from the boards);
- ``compact_boards_s`` against ``parse_fens_boards_s`` (the baseline): the search's board
  arrays from the records directly, and from the FEN texts as training builds them today;
- ``compact_bytes_per_position`` and ``parquet_bytes_per_position``: file sizes;
- ``target_met``: every conversion of the million took under 60 s.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import chess
import chess.pgn
import numpy as np
import polars as pl

from search.core.fen_batch import parse_fens
from tuner.ingest import compact as C
from tuner.ingest.compact_file import CompactFile
from tuner.ingest.convert import bullet_to_compact, compact_to_bullet, compact_to_parquet, parquet_to_compact
from tuner.ingest.schema import SCHEMA

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample" / "famous-games.pgn"
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900, chess.KING: 0}


def sample_frame(n: int) -> pl.DataFrame:
    """``n`` rows of position-set columns: the sample games' positions, repeated under new game ids."""
    rows: dict[str, list[object]] = {k: [] for k in ("game_id", "ply", "fen", "move", "result", "score")}
    with SAMPLE.open(encoding="utf-8") as fh:
        g = 0
        while (game := chess.pgn.read_game(fh)) is not None:
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                rows["game_id"].append(g)
                rows["ply"].append(ply)
                rows["fen"].append(board.fen())
                rows["move"].append(move.uci())
                rows["result"].append(game.headers.get("Result", "*"))
                rows["score"].append(sum(VALUES[p.piece_type] * (1 if p.color else -1)
                                         for p in board.piece_map().values()))
                board.push(move)
            g += 1
    base = pl.DataFrame(rows).with_columns(pl.col("game_id").cast(pl.Int64), pl.col("ply").cast(pl.Int32),
                                           pl.col("score").cast(pl.Int32))
    copies = -(-n // base.height)
    frame = pl.concat([base.with_columns(pl.col("game_id") + k * g) for k in range(copies)]).head(n)
    idx = np.arange(n)
    frame = frame.with_columns(pl.Series("score", frame["score"]).scatter(idx[idx % 9 == 0], None))
    return frame.with_columns(
        pl.Series("stm", [0 if f.split()[1] == "w" else 1 for f in frame["fen"].to_list()], dtype=pl.Int8()),
        *(pl.lit(None, dtype=SCHEMA[c]).alias(c) for c in SCHEMA if c not in frame.columns
          and c not in ("stm", "n_legal", "zobrist")),
        pl.lit(20, dtype=pl.Int32()).alias("n_legal"), pl.lit(0, dtype=pl.UInt64()).alias("zobrist"),
    ).select(list(SCHEMA))


def timed(fn: object, *args: object) -> tuple[float, object]:
    assert callable(fn)
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=1_000_000, help="rows of the split (default 1,000,000)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        frame = sample_frame(args.positions)
        frame.write_parquet(d / "train.parquet", compression="zstd")
        # warm-up: the kernels load (or compile) on a small file
        frame.head(1000).write_parquet(d / "w.parquet")
        parquet_to_compact(d / "w.parquet", d / "w.mtpos")
        compact_to_bullet(d / "w.mtpos", d / "w.txt")
        bullet_to_compact(d / "w.txt", d / "w2.mtpos")
        C.frame_of(CompactFile(d / "w.mtpos").read())

        out: dict[str, object] = {"bench": "compact", "positions": frame.height, "record_bytes": C.RECORD.itemsize}
        out["parquet_to_compact_s"], _ = timed(parquet_to_compact, d / "train.parquet", d / "train.mtpos")
        out["compact_to_parquet_s"], _ = timed(compact_to_parquet, d / "train.mtpos", d / "back.parquet")
        out["compact_to_bullet_s"], (lines, skipped) = timed(compact_to_bullet, d / "train.mtpos", d / "train.txt")
        out["bullet_lines"], out["bullet_skipped"] = lines, skipped
        out["bullet_to_compact_s"], _ = timed(bullet_to_compact, d / "train.txt", d / "text.mtpos")
        out["read_parquet_frame_s"], _ = timed(pl.read_parquet, d / "train.parquet")
        out["read_compact_frame_s"], _ = timed(lambda: C.frame_of(CompactFile(d / "train.mtpos").read()))
        records = CompactFile(d / "train.mtpos").read()
        out["compact_boards_s"], (boards, ok) = timed(C.boards_of, records)
        fens = frame["fen"].to_list()
        buf, starts, ends = C.text_buffer(fens)
        out["parse_fens_boards_s"], batch = timed(parse_fens, buf.tobytes(), starts, ends)
        out["boards_equal"] = bool(np.array_equal(boards, batch.boards))  # type: ignore[attr-defined]
        out["compact_bytes_per_position"] = round((d / "train.mtpos").stat().st_size / frame.height, 3)
        out["parquet_bytes_per_position"] = round((d / "train.parquet").stat().st_size / frame.height, 3)
        back = pl.read_parquet(d / "back.parquet")
        out["round_trip_equal"] = back.select(list(C.STORED)[:7]).equals(frame.select(list(C.STORED)[:7]))
    conversions = ("parquet_to_compact_s", "compact_to_parquet_s", "compact_to_bullet_s", "bullet_to_compact_s")
    for k, v in list(out.items()):
        if k.endswith("_s"):
            out[k] = round(float(v), 3)  # type: ignore[arg-type]
    out["target_met"] = all(float(out[k]) < 60 for k in conversions)  # type: ignore[arg-type]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
