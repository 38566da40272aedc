"""Writing a position set: deduplication in game order, part files, the split files, the
manifest, and the atomic replacement of the output folder.

Rows arrive batch by batch in game order. Each batch is deduplicated against every (Zobrist
key, move) pair seen before and appended to a part file in a private staging folder next to
the output, so memory holds one batch plus the set of keys (about 70 bytes per kept position).
At the end each split's rows are streamed from the parts into ``<split>.parquet`` (zstd,
sorted by game and ply), the manifest is written, and the staging folder is renamed to the
output folder: an interrupted run never leaves a half-written set.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import chess
import numpy as np
import polars as pl

from tuner.errors import TunerError
from tuner.ingest.schema import MANIFEST, SCHEMA, SPLITS, split_file

#: Rows buffered before a part file is written.
PART_ROWS = 50_000

_PROMOS = ("", "n", "b", "r", "q")
#: UCI text -> 15-bit code (from | to << 6 | promotion << 12), for the deduplication keys.
_MOVE_CODES = {
    chess.SQUARE_NAMES[f] + chess.SQUARE_NAMES[t] + p: f | (t << 6) | (k << 12)
    for f in range(64) for t in range(64) for k, p in enumerate(_PROMOS)
}


def check_output(out: Path) -> None:
    """Refuse, before any work, an output that is a file or a folder with other content."""
    if out.exists():
        if not out.is_dir():
            raise TunerError(f"{out}: exists and is not a folder")
        if any(out.iterdir()) and not (out / MANIFEST).is_file():
            raise TunerError(f"{out}: folder exists, is not empty and is not a position set; not overwriting it")
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TunerError(f"{parent}: cannot create the output's parent folder ({exc.strerror or exc})") from None
    if not os.access(parent, os.W_OK):
        raise TunerError(f"{parent}: not writable")


def staging_dir(out: Path) -> Path:
    """A new empty folder beside ``out`` (same file system, so the final rename is atomic)."""
    out = out.resolve()
    path = out.parent / f".{out.name}.partial-{os.getpid()}"
    if path.exists():
        shutil.rmtree(path)
    path.mkdir()
    return path


def commit(staging: Path, out: Path) -> None:
    """Replace ``out`` by ``staging`` (a previous position set there is removed after)."""
    out = out.resolve()
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        os.replace(out, old)
    os.replace(staging, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


class PositionWriter:
    """Deduplicate and buffer rows; write the split files at the end.

    Parameters
    ----------
    folder : the staging folder (part files go to ``folder/parts``).
    dedup : whether to drop (Zobrist key, move) pairs seen before.
    """

    def __init__(self, folder: Path, *, dedup: bool) -> None:
        self.folder = folder
        self.dedup = dedup
        self._seen: set[int] = set()
        self._buffer: list[pl.DataFrame] = []
        self._buffered = 0
        self._parts: list[Path] = []
        (folder / "parts").mkdir()

    def add(self, rows: pl.DataFrame) -> int:
        """Append a batch (rows in game order); return how many were dropped as duplicates."""
        dropped = 0
        if self.dedup and rows.height:
            seen = self._seen
            keep = np.ones(rows.height, dtype=np.bool_)
            codes = _MOVE_CODES
            for i, (z, move) in enumerate(zip(rows["zobrist"].to_list(), rows["move"].to_list(), strict=True)):
                key = (z << 15) | codes[move]
                if key in seen:
                    keep[i] = False
                else:
                    seen.add(key)
            dropped = int(rows.height - keep.sum())
            if dropped:
                rows = rows.filter(pl.Series(keep))
        if rows.height:
            self._buffer.append(rows)
            self._buffered += rows.height
            if self._buffered >= PART_ROWS:
                self._flush()
        return dropped

    def _flush(self) -> None:
        if not self._buffer:
            return
        path = self.folder / "parts" / f"part-{len(self._parts):05d}.parquet"
        pl.concat(self._buffer).write_parquet(path, compression="lz4", statistics=False)
        self._parts.append(path)
        self._buffer, self._buffered = [], 0

    def finish(self, splits: dict[str, np.ndarray]) -> dict[str, int]:
        """Write ``<split>.parquet`` for every split (game ids per split); return row counts."""
        self._flush()
        self._seen = set()
        counts = {}
        for name in SPLITS:
            target = self.folder / split_file(name)
            ids = pl.Series(splits[name], dtype=pl.Int64)
            if self._parts:
                query = pl.scan_parquet(self._parts).filter(pl.col("game_id").is_in(ids.implode()))
                query.select(list(SCHEMA)).sink_parquet(target, compression="zstd", maintain_order=True)
            else:
                pl.DataFrame(schema=SCHEMA).write_parquet(target, compression="zstd")
            counts[name] = int(pl.scan_parquet(target).select(pl.len()).collect().item())
        shutil.rmtree(self.folder / "parts")
        return counts


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    path.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
