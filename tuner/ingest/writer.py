"""Writing a position set: deduplication in game order, part files, the split files, the
manifest, and the atomic replacement of the output folder.

Rows arrive batch by batch in game order. Each batch is deduplicated against every (Zobrist
key, move) pair seen before and appended to a part file in a private staging folder next to
the output, so memory holds one batch plus the set of keys (about 70 bytes per kept position).
At the end each split's rows are streamed from the parts into ``<split>.parquet`` (zstd,
sorted by game and ply), the manifest is written, and the staging folder is renamed to the
output folder: an interrupted run never leaves a half-written set.

The output folder is only ever replaced whole when it holds nothing but a position set (or
nothing). A folder with a position set or other files is refused, unless the caller allows
replacing the set's own files in it (``tuner ingest --overwrite``): then the old manifest is removed first, the split
files are moved in one by one and the new manifest last, so the other files stay and the set is
never a mix of two runs that claims to be whole. The staging folder is named after the process
(``.<out>.partial-<pid>``); the next run into the same output removes those whose process is
gone (a run killed by a signal cannot clean up after itself).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from search.core.board import UCI_KEY_BITS, uci_keys_by_text
from search.core.input_limits import loads_json, read_capped
from tuner.errors import TunerError
from tuner.ingest.positions import SPLIT_COLUMN
from tuner.ingest.schema import FORMAT, MANIFEST, SCHEMA, SPLIT_FORMATS, SPLITS, split_file

#: Rows buffered before a part file is written.
PART_ROWS = 50_000

#: The files of a position set (its splits in either format, :data:`tuner.ingest.schema.SPLIT_FORMATS`);
#: anything else in its folder belongs to someone else.
SET_FILES = (*(split_file(name, fmt) for fmt in SPLIT_FORMATS for name in SPLITS), MANIFEST)

_LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?P<kind>partial|old)-(?P<pid>\d+)")
_OS_ERROR = re.compile(r"os error (\d+)")


def _is_set_manifest(path: Path) -> bool:
    try:
        data = loads_json(read_capped(path).decode("utf-8"), str(path))
    except (OSError, UnicodeDecodeError, ValueError):  # InputLimitError is a ValueError
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def check_output(out: Path, *, overwrite: bool = False) -> bool:
    """Refuse, before any work, an output that must not be written: a file, a folder that is
    not empty (a position set already, or other files) unless ``overwrite``, or a
    ``manifest.json`` that is not a position set's (even then).

    Returns
    -------
    bool
        Whether the folder holds files to keep: then :func:`commit` replaces only the set's
        files in it instead of the whole folder.
    """
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise TunerError(f"{out}: exists and is not a folder")
        try:
            entries = sorted(out.iterdir())
        except OSError as exc:
            raise TunerError(f"{out}: cannot list the folder ({exc.strerror or exc})") from None
        for name in SET_FILES:
            if (out / name).is_dir():
                raise TunerError(f"{out / name}: a folder where a position set has a file; not overwriting it")
        manifest = out / MANIFEST
        is_set = manifest.is_file() and _is_set_manifest(manifest)
        if (manifest.exists() or manifest.is_symlink()) and not is_set:
            raise TunerError(f"{manifest}: not a position set's manifest; not overwriting it")
        others = [p.name for p in entries if p.name not in SET_FILES]
        unproven = [] if is_set else [p.name for p in entries if p.name in SET_FILES]
        if (others or unproven) and not overwrite:
            names = others + unproven
            more = f" and {len(names) - 1} more" if len(names) > 1 else ""
            raise TunerError(f"{out}: not a position set folder: it holds {names[0]!r}{more}; not overwriting it "
                             f"(--overwrite replaces only {', '.join(SET_FILES)} and keeps everything else)")
        if is_set and not overwrite:
            raise TunerError(f"{out}: holds a position set already; pass --overwrite to replace it (or choose "
                             "another output folder)")
        keep_others = bool(others)
    else:
        keep_others = False
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TunerError(f"{parent}: cannot create the output's parent folder ({exc.strerror or exc})") from None
    if not os.access(parent, os.W_OK):
        raise TunerError(f"{parent}: not writable")
    return keep_others


def os_failure(exc: OSError, out: Path, staging: Path) -> str:
    """One line for an I/O failure during a run: the file it names, unless that is in the
    staging folder (a private name), then the output folder."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = Path(os.fsdecode(exc.filename)) if isinstance(exc.filename, (str, bytes, os.PathLike)) else None
    if where is not None and (where == staging or staging in where.parents):
        return f"{out}: cannot write the position set ({reason}); {out} was left as it was"
    return f"{where or out}: {reason} (while building the position set; {out} was left as it was)"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (``True`` when that cannot be told safely)."""
    if os.name == "nt":  # os.kill(pid, 0) would terminate it there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):  # PermissionError: someone else's process
        return True
    return True


def clean_leftovers(out: Path) -> list[str]:
    """Remove what runs into ``out`` that were killed left beside it: staging folders
    (``.<out>.partial-<pid>``) and set-aside old sets (``.<out>.old-<pid>``, put back as ``out``
    if the run died before its new set took that place), when process ``pid`` is gone.
    Returns one line per folder removed or restored."""
    out = out.resolve()
    try:
        siblings = sorted(out.parent.iterdir())
    except OSError:
        return []
    notes = []
    for path in siblings:
        m = _LEFTOVER.fullmatch(path.name)
        if m is None or m["name"] != out.name or path.is_symlink() or not path.is_dir() or _alive(int(m["pid"])):
            continue
        if m["kind"] == "old" and not out.exists() and not out.is_symlink():
            os.replace(path, out)
            notes.append(f"{out}: restored from {path.name}, set aside by a run that was killed (pid {m['pid']})")
        else:
            shutil.rmtree(path, ignore_errors=True)
            notes.append(f"{path}: removed, left by a run that was killed (pid {m['pid']})")
    return notes


def staging_path(out: Path) -> Path:
    """This process's staging folder for ``out``: beside it (same file system, so the final
    rename is atomic), named after the process."""
    out = out.resolve()
    return out.parent / f".{out.name}.partial-{os.getpid()}"


def staging_dir(out: Path) -> Path:
    """Create :func:`staging_path` (empty)."""
    path = staging_path(out)
    if path.exists():
        shutil.rmtree(path)
    path.mkdir()
    return path


def commit(staging: Path, out: Path, *, keep_others: bool = False) -> None:
    """Put the finished set in ``staging`` in place as ``out``.

    Without ``keep_others`` the folder is replaced whole (a previous position set there is
    removed after, and put back if the rename fails). With it only the set's files are moved
    into ``out``: its old manifest first removed, the new one moved in last.
    """
    out = out.resolve()
    if keep_others:
        _replace_set_files(staging, out)
        return
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        os.replace(out, old)
    try:
        os.replace(staging, out)
    except BaseException:
        if old is not None:
            os.replace(old, out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _replace_set_files(staging: Path, out: Path) -> None:
    try:
        (out / MANIFEST).unlink(missing_ok=True)
    except OSError as exc:
        raise TunerError(f"{out / MANIFEST}: cannot remove the old manifest ({exc.strerror or exc}); "
                         f"{out} was left as it was") from None
    try:
        for name in SET_FILES:  # the manifest last: until then the folder is not a readable set
            if (staging / name).exists():
                os.replace(staging / name, out / name)
            else:  # the old set's split in the other format
                (out / name).unlink(missing_ok=True)
    except OSError as exc:
        raise TunerError(f"{out / name}: cannot be replaced ({exc.strerror or exc}); the position set in {out} "
                         f"is incomplete (it has no {MANIFEST}): rerun to rebuild it") from None


def _io_error(exc: BaseException, path: Path) -> OSError | None:
    """``exc`` as an ``OSError`` naming ``path``, when it is an I/O failure (polars reports
    one as a ``ComputeError`` or an ``OSError`` without an errno, the number in its text)."""
    m = _OS_ERROR.search(str(exc))
    if m is not None:
        code = int(m[1])
        return OSError(code, os.strerror(code), str(path))
    if isinstance(exc, OSError):
        return OSError(exc.errno, exc.strerror or str(exc), str(path))
    return None


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Raise an I/O failure while writing ``path`` (a full or read-only disk) as an
    ``OSError`` naming it."""
    try:
        yield
    except (OSError, pl.exceptions.PolarsError) as exc:
        error = _io_error(exc, path)
        if error is None:
            raise
        raise error from exc


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
        """Append a batch (rows in game order, with the split column of position-file rows or
        without it for games); return how many were dropped as duplicates."""
        dropped = 0
        if SPLIT_COLUMN not in rows.columns:
            rows = rows.with_columns(pl.lit(-1, dtype=pl.Int8()).alias(SPLIT_COLUMN))
        if self.dedup and rows.height:
            seen = self._seen
            codes = uci_keys_by_text()
            # position and move (code 0, a1a1, for none): the deduplication key
            keys = [(z << UCI_KEY_BITS) | (0 if move is None else codes[move])
                    for z, move in zip(rows["zobrist"].to_list(), rows["move"].to_list(), strict=True)]
            if seen.isdisjoint(keys) and len(set(keys)) == len(keys):  # nothing repeated (the common case)
                seen.update(keys)
            else:
                keep = np.ones(rows.height, dtype=np.bool_)
                for i, key in enumerate(keys):
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
        with _writing(path):
            pl.concat(self._buffer).write_parquet(path, compression="lz4", statistics=False)
        self._parts.append(path)
        self._buffer, self._buffered = [], 0

    def finish(self, splits: dict[str, np.ndarray]) -> dict[str, int]:
        """Write ``<split>.parquet`` for every split (game ids per split for games; rows of
        position files carry their split); return row counts."""
        self._flush()
        self._seen = set()
        counts = {}
        for k, name in enumerate(SPLITS):
            target = self.folder / split_file(name)
            ids = pl.Series(splits[name], dtype=pl.Int64)
            by_game = (pl.col(SPLIT_COLUMN) < 0) & pl.col("game_id").is_in(ids.implode())
            with _writing(target):
                if self._parts:
                    query = pl.scan_parquet(self._parts).filter(by_game | (pl.col(SPLIT_COLUMN) == k))
                    query.select(list(SCHEMA)).sink_parquet(target, compression="zstd", maintain_order=True)
                else:
                    pl.DataFrame(schema=SCHEMA).write_parquet(target, compression="zstd")
                counts[name] = int(pl.scan_parquet(target).select(pl.len()).collect().item())
        shutil.rmtree(self.folder / "parts")
        return counts


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    path.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
