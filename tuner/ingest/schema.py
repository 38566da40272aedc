"""The position-set format: folder layout, column names and dtypes, schema version.

A position set is a folder holding ``train.parquet``, ``validation.parquet``, ``test.parquet``
and ``manifest.json``. Every parquet file has exactly the columns of :data:`SCHEMA`, rows
sorted by ``(game_id, ply)``. Its files are read by :mod:`tuner.ingest.reader`; the optimizers
read a set through :mod:`tuner.training.position_set`, which uses it.

A split may instead be stored as compact records (``train.mtpos`` ..., :mod:`tuner.ingest.compact`,
40 bytes a position; ``tuner convert`` writes them): the manifest's ``splits.<split>.file``
names the file, and the reader gives the same rows, with the columns a record does not hold
(ratings, tags, source) null.

Rows come from games (PGN) or from position files (one position per line,
:mod:`tuner.ingest.positions`). A position-file row is its own "game": ``game_id`` is unique
to its line, the tags and ratings are null, ``ply`` comes from the FEN's counters, ``move`` is
null when the line names no move, ``result`` is ``"*"`` when it gives none.

Version 2 added ``score`` (and allowed a null ``move``); sets of version 1 are still read, with
``score`` null (:data:`ADDED_IN`).
"""

from __future__ import annotations

import polars as pl

#: ``manifest.json``'s ``format`` value.
FORMAT = "movetuner-position-set"
#: Version of the layout below; bump it when a column changes meaning, name or dtype.
SCHEMA_VERSION = 2
#: the versions :mod:`tuner.ingest.reader` reads
READABLE_VERSIONS = (1, 2)
MANIFEST = "manifest.json"
SPLITS = ("train", "validation", "test")

#: Column -> polars dtype, in file order.
SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.Int64(),      # index of the game (or position-file line) over all inputs, in reading order
    "ply": pl.Int32(),          # 0-based ply of the position (before the move)
    "fen": pl.Utf8(),           # python-chess board.fen()
    "move": pl.Utf8(),          # the move played, UCI; null when a position file names none
    "stm": pl.Int8(),           # side to move: 0 white, 1 black
    "white_elo": pl.Int32(),    # null when missing, empty or unparseable
    "black_elo": pl.Int32(),
    "mover_elo": pl.Int32(),    # rating of the side to move
    "result": pl.Utf8(),        # the game's result, White's view: "1-0", "0-1", "1/2-1/2" or "*"
    "score": pl.Int32(),        # a search score from the input, centipawns, White's view; else null
    "n_legal": pl.Int32(),      # legal moves in the position
    "zobrist": pl.UInt64(),     # chess.polyglot.zobrist_hash(board)
    "event": pl.Utf8(),         # tags, null when absent
    "date": pl.Utf8(),
    "white": pl.Utf8(),
    "black": pl.Utf8(),
    "source": pl.Utf8(),        # input file name
    "source_line": pl.Int64(),  # line of the game's first tag (or of the position) in that file
}

#: columns every row of a position set fills (the others may be null, as their comments say)
NOT_NULL = ("game_id", "ply", "fen", "stm", "result", "n_legal", "zobrist")

#: columns added after version 1, with the version that added them (read as nulls from older sets)
ADDED_IN: dict[str, int] = {"score": 2}


#: the formats a split file may have, by the suffix of its name: Parquet (the columns of
#: :data:`SCHEMA`) or compact records (:mod:`tuner.ingest.compact`, ``.mtpos``, 40 bytes a row)
SPLIT_FORMATS = {"parquet": ".parquet", "compact": ".mtpos"}


def check_split_format(fmt: str) -> None:
    """Refuse (one line) a split format that is not one of :data:`SPLIT_FORMATS`."""
    if fmt not in SPLIT_FORMATS:
        from tuner.errors import TunerError  # noqa: PLC0415

        raise TunerError(f"unknown position-set format {fmt!r} (known: {', '.join(SPLIT_FORMATS)})")


def split_file(split: str, fmt: str = "parquet") -> str:
    """File name of a split inside a position-set folder, in format ``fmt``
    (:data:`SPLIT_FORMATS`). The manifest's ``splits.<split>.file`` names the one a set has."""
    return f"{split}{SPLIT_FORMATS[fmt]}"
