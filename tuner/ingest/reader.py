"""Reading a position set back: the manifest and one split at a time.

A split is a Parquet file or a compact file (``<split>.mtpos``, :mod:`tuner.ingest.compact`),
as the manifest's ``splits.<split>.file`` says; :func:`read_split` gives the same frame from
either, so every method reads a set stored either way. These are the file readers of ``tuner
ingest``, ``merge``, ``convert`` and ``export``; training reads a set through
:mod:`tuner.training.position_set`, which turns a split read here into positions.

Every failure is a :class:`tuner.errors.TunerError` whose one-line message names the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from search.core.input_limits import InputLimitError, loads_json, open_regular, read_capped
from tuner.errors import TunerError
from tuner.ingest.schema import (
    ADDED_IN,
    FORMAT,
    MANIFEST,
    NOT_NULL,
    READABLE_VERSIONS,
    SCHEMA,
    SPLIT_FORMATS,
    SPLITS,
    split_file,
)


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of the position set in ``folder``, checked for format and schema version
    (any of :data:`tuner.ingest.schema.READABLE_VERSIONS`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TunerError(f"{folder}: no such position-set folder")
    path = folder / MANIFEST
    if not path.is_file():
        raise TunerError(f"{path}: missing, so {folder} is not a position set (build one with tuner ingest)")
    try:
        manifest = loads_json(read_capped(path).decode("utf-8"), str(path))
    except InputLimitError as exc:
        raise TunerError(str(exc)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TunerError(f"{path}: not a readable JSON manifest ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise TunerError(f"{path}: not a position-set manifest (format is not {FORMAT!r})")
    if manifest.get("schema_version") not in READABLE_VERSIONS:
        raise TunerError(f"{path}: schema version {manifest.get('schema_version')!r}, this movetuner reads "
                         f"{' and '.join(map(str, READABLE_VERSIONS))}; rebuild the set with tuner ingest")
    return manifest


def split_path(folder: str | Path, split: str, manifest: dict[str, Any] | None = None) -> Path:
    """The file of ``split`` in the position set ``folder``: the one its manifest names
    (``splits.<split>.file``: ``<split>.parquet`` or ``<split>.mtpos``), else
    ``<split>.parquet``. ``manifest``: the folder's, when already read."""
    if manifest is None:
        manifest = read_manifest(folder)
    splits = manifest.get("splits")
    entry = splits.get(split) if isinstance(splits, dict) else None
    name = entry.get("file") if isinstance(entry, dict) else None
    if name is None:
        return Path(folder) / split_file(split)
    allowed = [split_file(split, fmt) for fmt in SPLIT_FORMATS]
    if name not in allowed:
        raise TunerError(f"{Path(folder) / MANIFEST}: splits.{split}.file is {str(name)[:60]!r}, not "
                         f"{' or '.join(allowed)}")
    return Path(folder) / str(name)


def check_split_file(path: Path) -> Path:
    """``path``, a split file of a position set, if it is a regular file (links followed); else
    one :class:`TunerError` line: missing from the set, or what it is instead (a FIFO, which
    polars would wait on for ever, a device, a folder, a loop of links)."""
    try:
        open_regular(path).close()
    except FileNotFoundError:
        raise TunerError(f"{path}: missing from the position set") from None
    except OSError as exc:
        raise TunerError(f"{path}: {exc.strerror or exc.__class__.__name__}") from None
    return path


def is_compact(path: Path) -> bool:
    """Whether the split file ``path`` is a compact one (by its suffix)."""
    return path.suffix == SPLIT_FORMATS["compact"]


def split_rows(folder: str | Path, split: str) -> int:
    """The number of rows of ``split`` in the position set ``folder`` (its file's metadata or
    index only)."""
    path = check_split_file(split_path(folder, split))
    if is_compact(path):
        from tuner.ingest.compact_file import CompactFile  # noqa: PLC0415 - numba: only for a compact set

        return len(CompactFile(path))
    try:
        return int(pl.scan_parquet(path).select(pl.len()).collect().item())
    except Exception as exc:  # noqa: BLE001  polars raises several error types for a damaged file
        raise TunerError(f"{path}: not a readable parquet file ({type(exc).__name__})") from None


def _read_compact(path: Path, columns: list[str], rows: np.ndarray | None) -> pl.DataFrame:
    """The rows of a compact split as a frame of ``columns`` (:func:`tuner.ingest.compact.frame_of`)."""
    from tuner.ingest.compact import frame_of  # noqa: PLC0415 - numba: only for a compact set
    from tuner.ingest.compact_file import CompactFile  # noqa: PLC0415

    f = CompactFile(path)
    records = f.read() if rows is None else f.take(np.asarray(rows, dtype=np.int64))
    return frame_of(records, columns, label=lambda i: f"{path}: row {i if rows is None else int(rows[i])}")


#: the values a column may hold, where not every value of its dtype is one (a damaged or
#: hand-made file: refused in one line on load, not read as something else): column ->
#: (expression true for a good non-null value, what the values must be)
VALUE_RULES: dict[str, tuple[pl.Expr, str]] = {
    "stm": (pl.col("stm").is_in([0, 1]), "0 (White to move) or 1 (Black)"),
    "result": (pl.col("result").is_in(["1-0", "0-1", "1/2-1/2", "*"]), "1-0, 0-1, 1/2-1/2 or *"),
    "ply": (pl.col("ply") >= 0, "a ply from 0"),
    "n_legal": (pl.col("n_legal").is_between(0, 218), "a count of legal moves from 0 to 218"),
}


def _check_values(frame: pl.DataFrame, path: Path, rows: np.ndarray | None) -> None:
    """Refuse (one-line :class:`TunerError` naming the file, the column, the first bad row of the
    file and its value) a value outside :data:`VALUE_RULES`; nulls are :data:`NOT_NULL`'s."""
    for column, (good, what) in VALUE_RULES.items():
        if column not in frame.columns:
            continue
        bad = frame.select((~good & pl.col(column).is_not_null()).alias("bad"))["bad"]
        if bad.any():
            first = int(bad.arg_true()[0])
            value = frame[column][first]
            raise TunerError(f"{path}: column {column} holds {value!r} at row "
                             f"{first if rows is None else int(rows[first])} ({int(bad.sum())} bad row(s)); "
                             f"it must be {what}; rebuild the set with tuner ingest")


def _check_frame(frame: pl.DataFrame, path: Path, rows: np.ndarray | None) -> None:
    """Refuse nulls in :data:`NOT_NULL` columns and values outside :data:`VALUE_RULES` (a
    damaged or hand-made file: one line, not a traceback later)."""
    for c in (c for c in frame.columns if c in NOT_NULL):
        nulls = frame[c].is_null()
        if nulls.any():
            first = int(nulls.arg_true()[0])
            raise TunerError(f"{path}: column {c} is null in {int(nulls.sum())} row(s), the first at row "
                             f"{first if rows is None else int(rows[first])}; rebuild the set with tuner ingest")
    _check_values(frame, path, rows)


def read_split(folder: str | Path, split: str, columns: list[str] | None = None,
               rows: np.ndarray | None = None) -> pl.DataFrame:
    """One split of a position set as a polars frame, rows sorted by ``(game_id, ply)``; the
    same frame whether the split is Parquet or compact (whose rows have the columns a record
    does not hold null, and ``n_legal`` and ``zobrist`` computed from the board).

    Parameters
    ----------
    folder : the position-set folder written by ``tuner ingest``.
    split : ``"train"``, ``"validation"`` or ``"test"``.
    columns : the columns to load (default: all of :data:`tuner.ingest.schema.SCHEMA`).
    rows : only these rows (int64, sorted, distinct row numbers of the file), in that order:
        read as the slice from the first to the last of them (the row groups outside it are
        skipped), then taken; a row number past the end is an error.

    Raises
    ------
    TunerError
        When the folder or file is missing, is not a position set, or lacks a column (or has
        it with another dtype); for a compact split, when the file is truncated or a chunk
        read fails its checksum (:class:`tuner.ingest.compact.CompactError`, naming the chunk).
    """
    if split not in SPLITS:
        raise TunerError(f"unknown split {split!r}: choose one of {', '.join(SPLITS)}")
    wanted = list(SCHEMA) if columns is None else list(columns)
    unknown = [c for c in wanted if c not in SCHEMA]
    if unknown:
        raise TunerError(f"unknown column(s) {', '.join(unknown)}: a position set has {', '.join(SCHEMA)}")
    manifest = read_manifest(folder)
    version = manifest["schema_version"]
    path = check_split_file(split_path(folder, split, manifest))
    if is_compact(path):  # every column of SCHEMA, those a record lacks null; checked as a Parquet split is
        frame = _read_compact(path, wanted, rows)
        _check_frame(frame, path, rows)
        return frame
    try:
        schema = pl.read_parquet_schema(path)
    except Exception as exc:  # noqa: BLE001  polars raises several error types for a damaged file
        raise TunerError(f"{path}: not a readable parquet file ({type(exc).__name__})") from None
    later = [c for c in wanted if c not in schema and ADDED_IN.get(c, 0) > version]
    missing = [c for c in wanted if c not in schema and c not in later]
    if missing:
        raise TunerError(f"{path}: lacks column(s) {', '.join(missing)}")
    wrong = [f"{c} is {schema[c]}, not {SCHEMA[c]}" for c in wanted if c in schema and schema[c] != SCHEMA[c]]
    if wrong:
        raise TunerError(f"{path}: wrong column type(s): {'; '.join(wrong)}")
    present = [c for c in wanted if c not in later]
    try:
        if rows is None:
            frame = pl.read_parquet(path, columns=present)
        else:
            lo, hi = (int(rows[0]), int(rows[-1]) + 1) if len(rows) else (0, 0)
            frame = pl.scan_parquet(path).select(present).slice(lo, hi - lo).collect()
    except Exception as exc:  # noqa: BLE001  (as above)
        raise TunerError(f"{path}: cannot be read ({type(exc).__name__})") from None
    if rows is not None:
        if frame.height < hi - lo:
            raise TunerError(f"{path}: has {lo + frame.height} rows, row {hi - 1} was asked for")
        frame = frame[np.asarray(rows, dtype=np.int64) - lo]
    _check_frame(frame, path, rows)
    if later:  # a set written before these columns existed: they read as nulls
        frame = frame.with_columns(pl.lit(None, dtype=SCHEMA[c]).alias(c) for c in later).select(wanted)
    return frame
