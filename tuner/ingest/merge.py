"""Merging position sets into one: ``tuner merge OUT SET SET...``.

Each generation of self-play adds a set; a learner trains on all of them. A merged set keeps
every row where its input put it (a training game stays a training game, so a network trained
on one set is never validated on its own training games in the merged set), renumbers the
games so that ids of different inputs never meet (each input's ids are shifted past the
previous inputs' largest), and drops repeated (position, move) pairs in input order, as
``tuner ingest`` does: the first input's row is kept. A row whose played move is not legal in
its position (an edited or damaged set) is dropped and counted, as ingest drops such lines. Rows are read and written in chunks, so
memory holds a few chunks plus the set of keys (about 70 bytes per kept position).

Reading each position with python-chess (its move's legality, its mirror) is most of a merge's
time: :func:`check_rows` does it once a row, in ``workers`` processes
(:func:`tuner.ordered_pool.ordered_map`, results in chunk order, so the output does not depend
on their number). With ``--mirror`` the mirrored rows wait in the staging folder until every
input's own rows are in.

The output is a position set like any other (:mod:`tuner.ingest.schema`), written through the
same staging folder and atomic rename as ``tuner ingest``: an interrupted merge leaves the
output as it was. Its manifest lists every input set with its manifest's SHA-256, so a run on
the merged set notices when an input was rebuilt.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import numpy as np
import polars as pl

import tuner
from tuner.cores import resolve_workers
from tuner.errors import TunerError, one_line
from tuner.ingest.positions import SPLIT_COLUMN
from tuner.ingest.reader import check_split_file, is_compact, read_manifest, read_split, split_path, split_rows
from tuner.ingest.schema import FORMAT, MANIFEST, SCHEMA, SCHEMA_VERSION, SPLITS, check_split_format, split_file
from tuner.ingest.writer import (
    PositionWriter,
    check_output,
    clean_leftovers,
    commit,
    os_failure,
    staging_dir,
    staging_path,
    write_manifest,
)
from tuner.ordered_pool import ordered_map
from tuner.progress import progress_bar

#: rows read from an input split at a time: one worker's job (about 3 s of python-chess for
#: training rows with ``--mirror``, so that an interrupt is not kept waiting)
CHUNK_ROWS = 50_000


class CheckedRows(NamedTuple):
    """What :func:`check_rows` found in a chunk's rows (indices into the chunk, ascending)."""

    bad: list[int]  #: rows whose move is not legal in their position, or unreadable
    mirrored: list[int]  #: the legal rows mirrored (those without a castling right, when asked)
    fens: list[str]  #: the mirrors' FENs
    moves: list[str | None]  #: the mirrors' moves (UCI)
    keys: list[int]  #: the mirrors' Zobrist keys (python-chess's polyglot hash)


def check_rows(fens: list[str], moves: list[str | None], mirror: bool, legality: bool = True) -> CheckedRows:
    """One pass over a chunk's rows, each position read once (python-chess): which to drop
    (:func:`legal_rows`) and, with ``mirror``, the mirrors of the others (:func:`mirror_rows`).
    Plain lists in and out: this runs in :func:`tuner.ordered_pool.ordered_map`'s workers.

    A row without a move (or every row, without ``legality``) stays without its move being
    checked (as ``tuner ingest`` keeps one), and is mirrored only if its position reads."""
    import chess  # noqa: PLC0415
    import chess.polyglot  # noqa: PLC0415

    out = CheckedRows([], [], [], [], [])
    for i, (fen, move) in enumerate(zip(fens, moves, strict=True)):
        board: chess.Board | None = None
        if legality and move is not None:
            try:
                board = chess.Board(fen)
                legal = board.is_legal(chess.Move.from_uci(move))
            except ValueError:  # an unreadable FEN or move (python-chess's errors subclass ValueError)
                legal = False
            if not legal:
                out.bad.append(i)
                continue
        if not mirror or fen.split(" ")[2] != "-":
            continue
        try:
            flipped = (board or chess.Board(fen)).transform(chess.flip_horizontal)
        except ValueError:
            continue
        out.mirrored.append(i)
        out.fens.append(flipped.fen())
        out.keys.append(chess.polyglot.zobrist_hash(flipped))
        out.moves.append(None if move is None else _mirror_move(move))
    return out


def _without(frame: pl.DataFrame, bad: list[int]) -> pl.DataFrame:
    if not bad:
        return frame
    keep = np.ones(frame.height, dtype=bool)
    keep[bad] = False
    return frame.filter(pl.Series(keep))


def _mirrors(frame: pl.DataFrame, checked: CheckedRows) -> pl.DataFrame:
    return frame[checked.mirrored].with_columns(pl.Series("fen", checked.fens, dtype=pl.Utf8()),
                                                pl.Series("move", checked.moves, dtype=pl.Utf8()),
                                                pl.Series("zobrist", checked.keys, dtype=pl.UInt64()))


def mirror_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``frame`` whose position has no castling right, mirrored file for file (a
    to h): chess is symmetric under that mirror when no side may castle, so each is a position
    of the same value, with the same side to move, result, score (White's view), legal move
    count and ply, its move mirrored and its Zobrist key recomputed. Rows with a castling right
    are left out (the mirror would move the king's rook the other way)."""
    return _mirrors(frame, check_rows(frame["fen"].to_list(), frame["move"].to_list(), True, legality=False))


def _mirror_move(move: str) -> str:
    import chess  # noqa: PLC0415

    m = chess.Move.from_uci(move)
    return chess.Move(m.from_square ^ 7, m.to_square ^ 7, m.promotion).uci()


def legal_rows(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``frame`` without its rows whose played move is not legal in the row's position (or
    whose FEN or move cannot be read), and how many were dropped; rows without a move stay. A
    position set written by ``tuner ingest`` or ``tuner selfplay`` has none, but an edited or
    damaged one may, and ``tune`` refuses a set holding one (issue 58 item 17)."""
    bad = check_rows(frame["fen"].to_list(), frame["move"].to_list(), False).bad
    return _without(frame, bad), len(bad)


def _split_rows(folder: Path, split: str) -> int:
    return split_rows(folder, split)


def _max_game_id(folder: Path) -> int:
    """The largest ``game_id`` over the three splits of ``folder`` (-1 for an empty set)."""
    top = -1
    for split in SPLITS:
        path = split_path(folder, split)
        if is_compact(path):
            ids = read_split(folder, split, ["game_id"])["game_id"].to_numpy()
            value = int(ids.max()) if len(ids) else None
        else:
            try:
                value = pl.scan_parquet(path).select(pl.col("game_id").max()).collect().item()
            except Exception as exc:  # noqa: BLE001  polars raises several error types for a damaged file
                raise TunerError(f"{path}: cannot be read ({type(exc).__name__})") from None
        if value is not None:
            top = max(top, int(value))
    return top


#: the staging folder's subfolder holding the mirrored rows until every input is in
_SPILL = "mirrors.tmp"


def _chunk_plan(folders: list[Path], sizes: list[dict[str, int]],
                mirror: bool) -> Iterator[tuple[int, str, int, int, bool]]:
    """The chunks to read, in merge order: ``(input, split, first row, end row, mirror it)``."""
    for k, (folder, size) in enumerate(zip(folders, sizes, strict=True)):
        for split in SPLITS:
            for lo in range(0, size[split], CHUNK_ROWS):
                yield k, split, lo, min(lo + CHUNK_ROWS, size[split]), mirror and split == "train"


def check_inputs(sets: list[Path], out: Path, *, single: bool = False) -> list[dict[str, Any]]:
    """Refuse, before any work, fewer than two inputs (one with ``single``), an input given
    twice, the output among the inputs, or an input that is not a readable position set; return
    their manifests."""
    if len(sets) < (1 if single else 2):
        raise TunerError("merge needs at least two position sets" if not single else "merge needs a position set")
    resolved = [s.resolve() for s in sets]
    for i, path in enumerate(resolved):
        if path in resolved[:i]:
            raise TunerError(f"{sets[i]}: given twice")
        if path == out.resolve():
            raise TunerError(f"{sets[i]}: is also the output folder; write the merged set elsewhere")
    manifests = []
    for folder in sets:
        manifest = read_manifest(folder)
        for split in SPLITS:
            check_split_file(split_path(folder, split, manifest))
        manifests.append(manifest)
    return manifests


def merge_sets(sets: list[str | Path], out: str | Path, *, dedup: bool = True, overwrite: bool = False,
               mirror: bool = False, progress: bool | None = None, log: TextIO = sys.stderr,
               split_format: str = "parquet", workers: int | None = None) -> dict[str, Any]:
    """Write the position sets ``sets`` as one set in ``out``; return its manifest.

    Parameters
    ----------
    sets : position-set folders (two or more), in the order their rows are kept.
    out : the output folder (refused if it holds anything but a position set, unless
        ``overwrite``, which replaces only the set's own files there).
    dedup : drop a (Zobrist key, move) pair seen in an earlier row (of any split or input).
    mirror : add the training rows' file mirrors (:func:`mirror_rows`) after every input, as
        the games of one more input (their ids shifted past all others); validation and test
        stay as they are. With ``mirror``, one input set is enough.
    progress : a tqdm bar over the rows (None: only on a terminal).
    split_format : ``parquet`` or ``compact`` (the output's splits as ``.mtpos`` files,
        :mod:`tuner.ingest.compact`); the inputs may be either.
    workers : processes that read the positions (legality, mirrors: python-chess, most of a
        merge's time); None or 0: one per core. The output does not depend on it.

    Raises
    ------
    TunerError
        One line naming the input or output at fault; the output is then left as it was.
    """
    started = time.perf_counter()
    check_split_format(split_format)
    try:
        workers = resolve_workers(workers)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    folders = [Path(s) for s in sets]
    out = Path(out)
    manifests = check_inputs(folders, out, single=mirror)
    sizes = [{split: _split_rows(folder, split) for split in SPLITS} for folder in folders]
    total = sum(sum(size.values()) for size in sizes) + (sum(size["train"] for size in sizes) if mirror else 0)
    staging: Path | None = None
    private = staging_path(out)
    try:
        for note in clean_leftovers(out):
            print(one_line(note), file=log)
        keep_others = check_output(out, overwrite=overwrite)
        staging = staging_dir(out)
        writer = PositionWriter(staging, dedup=dedup)
        offsets, offset = [], 0
        for folder in folders:
            offsets.append(offset)
            offset += _max_game_id(folder) + 1
        spill = staging / _SPILL
        dropped, illegal, mirrored = 0, 0, 0
        parts: list[tuple[int, Path, int]] = []

        def chunks() -> Iterator[tuple[pl.DataFrame, int, str, bool]]:
            """Each chunk's rows, read in merge order: ``(frame, input, split, mirror it)``."""
            for k, split, lo, hi, with_mirrors in _chunk_plan(folders, sizes, mirror):
                yield read_split(folders[k], split, rows=np.arange(lo, hi, dtype=np.int64)), k, split, with_mirrors

        with progress_bar(total=total, unit="pos", desc="merge", file=sys.stderr, leave=False,
                          disable=progress is False) as bar:
            def add(frame: pl.DataFrame, shift: int, split: int) -> int:
                """Add ``frame``'s rows to ``split`` with their games shifted by ``shift``;
                return the duplicates dropped."""
                return writer.add(frame.with_columns(pl.col("game_id") + shift,
                                                     pl.lit(split, dtype=pl.Int8()).alias(SPLIT_COLUMN)))

            for (frame, k, split, with_mirrors), checked in ordered_map(
                    check_rows, chunks(), workers, args=lambda c: (c[0]["fen"].to_list(), c[0]["move"].to_list(), c[3]),
                    failure="a merge worker process died"):
                illegal += len(checked.bad)
                dropped += add(_without(frame, checked.bad), offsets[k], SPLITS.index(split))
                bar.update(frame.height)
                if with_mirrors:
                    # the mirrors come after every input, so that an input's own row wins a
                    # repeat: they wait on disk in the staging folder
                    spill.mkdir(exist_ok=True)
                    part = spill / f"part-{len(parts):06d}.parquet"
                    _mirrors(frame, checked).write_parquet(part)
                    parts.append((k, part, frame.height))
            for k, part, source_rows in parts:
                mirrors = pl.read_parquet(part)
                mirrored += mirrors.height
                dropped += add(mirrors, offset + offsets[k], 0)
                part.unlink()
                bar.update(source_rows)
            if spill.exists():
                shutil.rmtree(spill)
        empty = {split: np.zeros(0, dtype=np.int64) for split in SPLITS}
        counts = writer.finish(empty)
        if not sum(counts.values()):
            raise TunerError(f"{out}: the inputs hold no position; nothing written")
        games = {split: int(pl.scan_parquet(staging / split_file(split)).select(pl.col("game_id").n_unique())
                            .collect().item()) for split in SPLITS}
        manifest = _manifest(folders, manifests, sizes, offsets, dedup, dropped, illegal, counts, games, started,
                             mirror={"mirrored": mirrored, "mirror_game_id_offset": offset} if mirror else None)
        if split_format == "compact":
            from tuner.ingest.convert import compact_splits  # noqa: PLC0415 - only for a compact set

            compact_splits(staging, manifest, out)
        write_manifest(staging / MANIFEST, manifest)
        commit(staging, out, keep_others=keep_others)
    except OSError as exc:
        raise TunerError(os_failure(exc, out, private)) from None
    finally:
        if staging is not None and staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return manifest


def _manifest(folders: list[Path], manifests: list[dict[str, Any]], sizes: list[dict[str, int]],
              offsets: list[int], dedup: bool, dropped: int, illegal: int, counts: dict[str, int],
              games: dict[str, int], started: float, mirror: dict[str, int] | None = None) -> dict[str, Any]:
    """The merged set's manifest; ``dropped``: repeated rows, ``illegal``: rows whose move is
    not legal (:func:`legal_rows`); ``mirror``: the mirrored rows' count and game-id offset,
    with ``--mirror``."""
    inputs = []
    for folder, manifest, size, offset in zip(folders, manifests, sizes, offsets, strict=True):
        digest = hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest()
        inputs.append({"path": str(folder), "name": folder.name, "kind": "position-set", "sha256": digest,
                       "positions": size, "game_id_offset": offset,
                       "inputs": [i.get("name") for i in manifest.get("inputs", []) if isinstance(i, dict)]})
    read = sum(sum(size.values()) for size in sizes)
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "package_version": tuner.__version__,
        "inputs": inputs,
        "config": {"merge": True, "dedup": dedup, "mirror": mirror is not None},
        "games": {"read": sum(games.values()), "kept": sum(games.values()), "rejected": 0, "rejected_by_reason": {}},
        "positions": {"read": read, "dropped_by_reason": {"duplicate": dropped, "illegal_move": illegal}, "kept": sum(counts.values()),
                      **counts, **(mirror or {})},
        "splits": {split: {"file": split_file(split), "games": games[split], "positions": counts[split]}
                   for split in SPLITS},
        "columns": {name: str(dtype) for name, dtype in SCHEMA.items()},
        "elapsed_seconds": round(time.perf_counter() - started, 3),
    }
