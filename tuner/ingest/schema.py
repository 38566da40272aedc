"""The position-set format: folder layout, column names and dtypes, schema version.

A position set is a folder holding ``train.parquet``, ``validation.parquet``, ``test.parquet``
and ``manifest.json``. Every parquet file has exactly the columns of :data:`SCHEMA`, rows
sorted by ``(game_id, ply)``. Optimizers read it through :mod:`tuner.ingest.reader`.
"""

from __future__ import annotations

import polars as pl

#: ``manifest.json``'s ``format`` value.
FORMAT = "movetuner-position-set"
#: Version of the layout below; bump it when a column changes meaning, name or dtype.
SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
SPLITS = ("train", "validation", "test")

#: Column -> polars dtype, in file order.
SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.Int64(),      # 0-based index of the game over all inputs, in reading order
    "ply": pl.Int32(),          # 0-based ply of the position (before the move)
    "fen": pl.Utf8(),           # python-chess board.fen()
    "move": pl.Utf8(),          # the move played, UCI
    "stm": pl.Int8(),           # side to move: 0 white, 1 black
    "white_elo": pl.Int32(),    # null when missing, empty or unparseable
    "black_elo": pl.Int32(),
    "mover_elo": pl.Int32(),    # rating of the side to move
    "result": pl.Utf8(),        # "1-0", "0-1", "1/2-1/2" or "*"
    "n_legal": pl.Int32(),      # legal moves in the position
    "zobrist": pl.UInt64(),     # chess.polyglot.zobrist_hash(board)
    "event": pl.Utf8(),         # tags, null when absent
    "date": pl.Utf8(),
    "white": pl.Utf8(),
    "black": pl.Utf8(),
    "source": pl.Utf8(),        # input file name
    "source_line": pl.Int64(),  # line of the game's first tag in that file
}


def split_file(split: str) -> str:
    """File name of a split inside a position-set folder."""
    return f"{split}.parquet"
