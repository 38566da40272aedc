"""Conversions between the ways positions are stored (``tuner convert IN OUT``).

* a position set's Parquet split (or a ``.parquet`` file with its columns) <-> a compact file
  (``.mtpos``, :mod:`tuner.ingest.compact`): the rows come back with the same game, ply, FEN,
  move, side to move, result and score; ``n_legal`` and ``zobrist`` are computed again from
  the board; the columns a record does not hold (ratings, tags, source) come back null;
* a whole position set <-> the same set with its splits in the other format (the manifest
  kept, its ``splits.<split>.file`` changed and a ``converted`` entry added);
* bullet's text format (``FEN | score | result``, score in centipawns and result ``1.0``,
  ``0.5``, ``0.0``, both White's view) <-> a compact file. The text's score is the record's
  (a mate in n as ``+-(32000 - n)``, as movetuner's exports write it); a line is its own game
  (game id: its position's index in the file), its ply from the FEN's counters, no move. Each
  FEN is checked as ``tuner ingest`` checks it (:func:`search.core.fen_batch.parse_fens`) and
  kept as python-chess writes it. A compact file written as text skips the rows that have no
  score or an unfinished game's result (``*``), which the format cannot say; they are counted;
* a position set -> bullet text: the set's scored positions of finished games, as ``tuner
  selfplay --export`` writes them (:func:`tuner.selfplay.export.export_positions`).

Nothing is clamped: a row that does not fit a record, or a line that is not a position with a
score and a result, is refused by a one-line :class:`tuner.errors.TunerError` naming the file and the
row or line, and the output is left as it was (every output is written to a temporary name and
renamed).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from search.core.fen_batch import parse_fens
from search.core.input_limits import open_regular
from tuner.errors import TunerError, one_line
from tuner.ingest.compact import (MATE_TEXT, NO_SCORE, CompactError, fens_of, frame_of, pack, pack_frame,
                                  text_buffer)
from tuner.ingest.compact_file import CHUNK_RECORDS, SUFFIX, CompactFile, CompactWriter, is_compact_file
from tuner.ingest.reader import check_split_file, is_compact, read_manifest, read_split, split_path, split_rows
from tuner.ingest.schema import MANIFEST, SCHEMA, SPLIT_FORMATS, SPLITS, split_file
from tuner.ingest.writer import check_output as check_set_output
from tuner.ingest.writer import clean_leftovers, commit, os_failure, staging_dir, staging_path, write_manifest
from tuner.outputs import check_output

#: the kinds of input and output :func:`convert` knows
KINDS = ("set", "parquet", "compact", "bullet")
#: the position-set columns a compact record is made of
PACKED_COLUMNS = ["game_id", "ply", "fen", "move", "result", "score"]
#: rows converted at a time (a compact chunk)
BATCH_ROWS = CHUNK_RECORDS
#: bullet result texts (White's view) -> record result code; and back
BULLET_RESULTS = {"1.0": 1, "1": 1, "1-0": 1, "0.0": 2, "0": 2, "0-1": 2, "0.5": 3, "1/2-1/2": 3}
_RESULT_TEXT = {1: "1.0", 2: "0.0", 3: "0.5"}


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def _rows_of(path: str | Path, first: int) -> Callable[[int], str]:
    """The error label of row ``i`` of a batch starting at row ``first`` of ``path``."""
    return lambda i: f"{path}: row {first + i}"


# --- split files ---------------------------------------------------------------------------


def _parquet_frames(src: Path) -> Iterator[tuple[int, pl.DataFrame]]:
    """``(first row, frame)`` of a Parquet file's :data:`PACKED_COLUMNS`, :data:`BATCH_ROWS` rows at a time."""
    check_split_file(src)  # a FIFO would block polars for ever
    try:
        schema = pl.read_parquet_schema(src)
        missing = [c for c in PACKED_COLUMNS if c not in schema]
        if missing:
            raise TunerError(f"{src}: lacks column(s) {', '.join(missing)} of a position set")
        wrong = [f"{c} is {schema[c]}, not {SCHEMA[c]}" for c in PACKED_COLUMNS if schema[c] != SCHEMA[c]]
        if wrong:
            raise TunerError(f"{src}: wrong column type(s): {'; '.join(wrong)}")
        n = int(pl.scan_parquet(src).select(pl.len()).collect().item())
        for lo in range(0, n, BATCH_ROWS):
            yield lo, pl.scan_parquet(src).select(PACKED_COLUMNS).slice(lo, BATCH_ROWS).collect()
    except TunerError:
        raise
    except Exception as exc:  # noqa: BLE001  polars raises several error types for a damaged file
        raise TunerError(f"{src}: not a readable parquet file ({type(exc).__name__})") from None


def _write_records(dst: Path, batches: Iterator[np.ndarray]) -> int:
    """Write the record batches as the compact file ``dst``; return the records."""
    with CompactWriter(dst) as writer:
        for records in batches:
            writer.write(records)
    return writer.records


def parquet_to_compact(src: str | Path, dst: str | Path, *, name: str | None = None) -> int:
    """Write the rows of the Parquet file ``src`` (a position set's split) as the compact file
    ``dst``; return how many. A row that does not fit a record is refused, naming it (and the
    file as ``name``, default ``src``)."""
    src, dst = Path(src), Path(dst)
    shown = name if name is not None else str(src)

    def batches() -> Iterator[np.ndarray]:
        for lo, frame in _parquet_frames(src):
            yield pack_frame(frame, label=_rows_of(shown, lo))

    return _write_records(dst, batches())


def compact_splits(staging: Path, manifest: dict[str, Any], out: Path) -> None:
    """Turn the Parquet split files a set writer left in its staging folder into compact files
    (``--format compact`` of ``tuner ingest``, ``merge`` and ``selfplay``), and name them in
    ``manifest``'s ``splits``; a row that does not fit is refused naming the split of ``out``."""
    for split in SPLITS:
        src, dst = staging / split_file(split), staging / split_file(split, "compact")
        parquet_to_compact(src, dst, name=f"{out} ({split} split)")
        src.unlink()
        manifest["splits"][split]["file"] = dst.name


def compact_frames(src: str | Path, columns: list[str] | None = None) -> Iterator[pl.DataFrame]:
    """The rows of the compact file ``src`` as position-set frames (:func:`tuner.ingest.compact.frame_of`),
    one chunk at a time."""
    for records in CompactFile(src).chunks():
        yield frame_of(records, columns)


def compact_to_parquet(src: str | Path, dst: str | Path) -> int:
    """Write the compact file ``src`` as the Parquet file ``dst`` with the columns of a position
    set (:data:`tuner.ingest.schema.SCHEMA`; those a record lacks null); return the rows."""
    frames = list(compact_frames(src))
    frame = pl.concat(frames) if frames else pl.DataFrame(schema=SCHEMA)
    _write_parquet(frame, Path(dst))
    return frame.height


def _write_parquet(frame: pl.DataFrame, dst: Path) -> None:
    tmp = _tmp(dst)
    try:
        frame.write_parquet(tmp, compression="zstd")
        os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)


# --- bullet text ---------------------------------------------------------------------------


def _bullet_lines(src: Path, batch: int) -> Iterator[tuple[list[int], list[str]]]:
    """(line numbers, lines) of the non-blank lines of ``src``, ``batch`` at a time."""
    try:
        with io.TextIOWrapper(open_regular(src), encoding="utf-8", errors="surrogateescape", newline=None) as fh:
            numbered = ((k + 1, line) for k, line in enumerate(fh) if line.strip())
            while True:
                block = list(itertools.islice(numbered, batch))
                if not block:
                    return
                yield [k for k, _ in block], [line for _, line in block]
    except OSError as exc:
        raise TunerError(f"{src}: cannot be read ({exc.strerror or exc})") from None


def _bullet_records(src: Path, numbers: list[int], lines: list[str], first_id: int) -> np.ndarray:
    """Records of bullet lines (their line numbers ``numbers``; game ids from ``first_id``)."""
    n = len(lines)
    fens: list[str] = []
    scores = np.zeros(n, dtype=np.int64)
    results = np.zeros(n, dtype=np.uint8)
    for i, line in enumerate(lines):
        parts = line.split("|")
        where = f"{src}:{numbers[i]}"
        if len(parts) != 3:
            raise TunerError(one_line(f"{where}: not a bullet line 'FEN | score | result': {line.strip()[:80]!r}"))
        fen, score, result = (p.strip() for p in parts)
        try:
            scores[i] = int(score)
        except ValueError:
            raise TunerError(one_line(f"{where}: score {score[:20]!r} is not an integer (centipawns)")) from None
        code = BULLET_RESULTS.get(result)
        if code is None:
            raise TunerError(one_line(f"{where}: result {result[:20]!r} is not 1.0, 0.5 or 0.0 (White's view)"))
        results[i] = code
        fens.append(fen)
    big = np.flatnonzero(np.abs(scores) >= MATE_TEXT)
    if len(big):
        i = int(big[0])
        raise CompactError(f"{src}:{numbers[i]}: score {int(scores[i])} does not fit a compact record "
                           f"(|score| below {MATE_TEXT}; a mate in n moves is +-({MATE_TEXT} - n))")
    buf, starts, ends = text_buffer(fens)
    parsed = parse_fens(buf.tobytes(), starts, ends)
    bad = np.flatnonzero(~parsed.ok)
    if len(bad):
        i = int(bad[0])
        raise TunerError(one_line(f"{src}:{numbers[i]}: {parsed.errors[i]}: {fens[i][:100]!r}"))
    normal = [f for f in parsed.fens if f is not None]
    return pack(normal, moves=np.zeros(n, dtype=np.uint16), scores=scores.astype(np.int16), results=results,
                plies=parsed.ply, game_ids=np.arange(first_id, first_id + n), label=lambda i: f"{src}:{numbers[i]}")


def bullet_to_compact(src: str | Path, dst: str | Path) -> int:
    """Write the bullet text file ``src`` as the compact file ``dst``; return the positions."""
    src, dst = Path(src), Path(dst)

    def batches() -> Iterator[np.ndarray]:
        first = 0
        for numbers, lines in _bullet_lines(src, BATCH_ROWS):
            yield _bullet_records(src, numbers, lines, first)
            first += len(lines)

    return _write_records(dst, batches())


def bullet_lines(records: np.ndarray) -> tuple[list[str], int]:
    """The bullet lines of records (those with a score and a finished game's result), and how
    many were skipped for lacking either."""
    keep = (records["score"] != NO_SCORE) & ((records["flags"] & 3) != 0)
    rec = records[keep]
    fens = fens_of(rec)
    lines = [f"{fen} | {score} | {_RESULT_TEXT[r]}"
             for fen, score, r in zip(fens, rec["score"].tolist(), (rec["flags"] & 3).tolist(), strict=True)]
    return lines, int(len(records) - len(rec))


def compact_to_bullet(src: str | Path, dst: str | Path, *, allow_empty: bool = True) -> tuple[int, int]:
    """Write the compact file ``src`` as bullet text ``dst``; return (lines written, rows
    skipped: no score, or the result ``*``). Without ``allow_empty``, no line to write leaves
    ``dst`` as it was."""
    dst = Path(dst)
    tmp = _tmp(dst)
    written = skipped = 0
    try:
        with open(tmp, "w", encoding="ascii", newline="\n") as fh:
            for records in CompactFile(src).chunks():
                lines, dropped = bullet_lines(records)
                fh.write("".join(line + "\n" for line in lines))
                written += len(lines)
                skipped += dropped
        if written or allow_empty:
            os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)
    return written, skipped


# --- position sets -------------------------------------------------------------------------


def set_format(folder: Path) -> str:
    """``"compact"`` when the set's splits are compact files, else ``"parquet"``."""
    manifest = read_manifest(folder)
    kinds = {is_compact(split_path(folder, s, manifest)) for s in SPLITS}
    return "compact" if kinds == {True} else "parquet"


def convert_set(src: str | Path, dst: str | Path, fmt: str, *, overwrite: bool = False) -> dict[str, Any]:
    """Write the position set ``src`` as the set ``dst`` with every split in format ``fmt``
    (``parquet`` or ``compact``); return the new manifest (``src``'s, with the split files
    renamed and a ``converted`` entry). ``dst`` is written as ``tuner ingest`` writes a set:
    a staging folder renamed into place; one holding other files is refused unless
    ``overwrite`` (which replaces only the set's files)."""
    src, dst = Path(src), Path(dst)
    if fmt not in SPLIT_FORMATS:
        raise TunerError(f"unknown position-set format {fmt!r} (known: {', '.join(SPLIT_FORMATS)})")
    manifest = read_manifest(src)
    if dst.exists() and dst.resolve() == src.resolve():
        raise TunerError(f"{dst}: is the input set; write the converted set to another folder")
    staging: Path | None = None
    try:
        clean_leftovers(dst)
        keep_others = check_set_output(dst, overwrite=overwrite)
        staging = staging_dir(dst)
        counts = {}
        for split in SPLITS:
            path = split_path(src, split, manifest)
            target = staging / split_file(split, fmt)
            if fmt == "compact":
                counts[split] = _write_records(target, _split_records(src, split, path))
            elif is_compact(path):
                counts[split] = compact_to_parquet(path, target)
            else:  # Parquet to Parquet: the same file
                shutil.copyfile(path, target)
                counts[split] = split_rows(src, split)
        new = dict(manifest)
        given = manifest.get("splits")
        splits: dict[str, Any] = given if isinstance(given, dict) else {}
        new["splits"] = {}
        for split in SPLITS:
            entry = splits.get(split)
            new["splits"][split] = {**(entry if isinstance(entry, dict) else {}), "file": split_file(split, fmt),
                                    "positions": counts[split]}
        digest = hashlib.sha256((src / MANIFEST).read_bytes()).hexdigest()
        new["converted"] = {"from": str(src), "sha256": digest, "format": fmt,
                            "columns_not_stored": [c for c in SCHEMA if c not in PACKED_COLUMNS + ["stm", "n_legal",
                                                                                                    "zobrist"]]
                            if fmt == "compact" else []}
        write_manifest(staging / MANIFEST, new)
        commit(staging, dst, keep_others=keep_others)
    except OSError as exc:
        raise TunerError(os_failure(exc, dst, staging_path(dst))) from None
    finally:
        if staging is not None and staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return new


def _split_records(folder: Path, split: str, path: Path) -> Iterator[np.ndarray]:
    """The records of a split, read :data:`BATCH_ROWS` rows at a time (checked by the reader)."""
    if is_compact(path):
        yield from CompactFile(path).chunks()
        return
    n = split_rows(folder, split)
    for lo in range(0, n, BATCH_ROWS):
        frame = read_split(folder, split, PACKED_COLUMNS, rows=np.arange(lo, min(lo + BATCH_ROWS, n), dtype=np.int64))
        yield pack_frame(frame, label=_rows_of(path, lo))


# --- the command ---------------------------------------------------------------------------


def input_kind(path: Path) -> str:
    """What ``path`` holds: a position ``set`` folder, a ``compact`` file, a ``parquet`` file,
    else ``bullet`` text."""
    if path.is_dir():
        read_manifest(path)
        return "set"
    if not path.exists():
        raise TunerError(f"{path}: no such file or folder")
    if is_compact_file(path):
        return "compact"
    return "parquet" if path.suffix.lower() == ".parquet" else "bullet"


def output_kind(path: Path, source: str, to: str | None) -> str:
    """What to write to ``path`` for an input of kind ``source``: ``to`` when given, else by
    the suffix (``.mtpos`` compact, ``.parquet`` Parquet, ``.txt`` bullet), else a set folder
    in the other format (for a set)."""
    if to is not None:
        if to not in KINDS[1:]:
            raise TunerError(f"unknown output format {to!r} (known: {', '.join(KINDS[1:])})")
        return to
    suffix = path.suffix.lower()
    if suffix == SUFFIX:
        return "compact"
    if suffix == ".parquet":
        return "parquet"
    if suffix == ".txt":
        return "bullet"
    return "set"


#: (input kind, output kind) -> what :func:`convert` does
ROUTES = {
    ("set", "compact"): "set", ("set", "parquet"): "set", ("set", "set"): "set", ("set", "bullet"): "export",
    ("parquet", "compact"): "parquet_to_compact", ("compact", "parquet"): "compact_to_parquet",
    ("bullet", "compact"): "bullet_to_compact", ("compact", "bullet"): "compact_to_bullet",
}


def convert(src: str | Path, dst: str | Path, *, to: str | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Convert ``src`` into ``dst`` (see the module docstring and :data:`ROUTES`); return a
    summary: the kinds, the positions written, those skipped, the output's bytes and the
    seconds taken.

    ``to``: ``parquet``, ``compact`` or ``bullet``; for a set it is the format of the output
    set's splits (default: the other one) unless ``dst`` ends in ``.txt`` or ``to`` is
    ``bullet``. An existing ``dst`` is replaced only with ``overwrite``.
    """
    started = time.perf_counter()
    src, dst = Path(src), Path(dst)
    source = input_kind(src)
    target = output_kind(dst, source, to)
    route = ROUTES.get((source, target))
    if source == "set" and target != "bullet":
        if dst.suffix.lower() in (SUFFIX, ".parquet"):
            raise TunerError(f"{dst}: a position set converts to a folder (its splits in the other format, or "
                             "--to parquet|compact) or to a bullet .txt file, not to one split file")
        fmt = target if target in SPLIT_FORMATS else ("parquet" if set_format(src) == "compact" else "compact")
        manifest = convert_set(src, dst, fmt, overwrite=overwrite)
        written = sum(int(manifest["splits"][s]["positions"]) for s in SPLITS)
        return _summary(src, dst, source, f"set ({fmt})", written, 0, started)
    check_output(dst, overwrite=overwrite, inputs=[src])
    if route is None:
        raise TunerError(f"{dst}: cannot convert a {source} file to {'a folder' if target == 'set' else target}: "
                         "tuner convert converts a position set (to a set in the other format, or to bullet .txt), "
                         ".parquet <-> .mtpos and bullet .txt <-> .mtpos")
    skipped = 0
    try:
        if route == "export":
            from tuner.selfplay.export import export_positions  # noqa: PLC0415

            from tuner.ingest.reader import split_rows  # noqa: PLC0415

            written = export_positions(src, dst, fmt="bullet", overwrite=overwrite, allow_empty=False)
            skipped = sum(split_rows(src, split) for split in SPLITS) - written
        elif route == "parquet_to_compact":
            written = parquet_to_compact(src, dst)
        elif route == "compact_to_parquet":
            written = compact_to_parquet(src, dst)
        elif route == "bullet_to_compact":
            written = bullet_to_compact(src, dst)
        else:
            written, skipped = compact_to_bullet(src, dst, allow_empty=False)
    except OSError as exc:
        raise TunerError(f"{exc.filename or dst}: {exc.strerror or exc}") from None
    if target == "bullet" and written == 0:  # an empty training file helps no one: say why
        # (nothing was written: an existing file given with --overwrite is as it was)
        raise TunerError(f"{src}: none of its {skipped} positions has both a score and a finished game's result "
                         "(a bullet line needs both; sets from games have no scores: self-play sets do); "
                         f"{dst} not written")
    return _summary(src, dst, source, target, written, skipped, started)


def _summary(src: Path, dst: Path, source: str, target: str, written: int, skipped: int,
             started: float) -> dict[str, Any]:
    size = sum(p.stat().st_size for p in dst.iterdir() if p.is_file()) if dst.is_dir() else dst.stat().st_size
    return {"in": str(src), "out": str(dst), "from": source, "to": target, "positions": written,
            "skipped": skipped, "bytes": size, "seconds": round(time.perf_counter() - started, 3)}


__all__ = ["BULLET_RESULTS", "KINDS", "ROUTES", "bullet_lines", "bullet_to_compact", "compact_frames",
           "compact_splits", "compact_to_bullet", "compact_to_parquet", "convert", "convert_set", "input_kind", "output_kind",
           "parquet_to_compact", "set_format"]
