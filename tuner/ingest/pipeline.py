"""``ingest()``: PGN and position files in, a position set out (the library entry point of
``tuner ingest``).

The parent process cuts the inputs into game chunks and blocks of lines
(:mod:`tuner.ingest.sources`) and sends batches of them to a process pool
(:func:`tuner.ingest.games.process_batch`, :func:`tuner.ingest.positions.process_lines`);
results are consumed in submission order, so deduplication, the tallies and the split are
computed in reading order and the files are byte-for-byte the same whatever the number of
workers. Workers die with the parent, even when it is killed by a signal
(:func:`tuner.ordered_pool.die_with_parent`).

Every failure is a :class:`tuner.errors.TunerError` with a one-line message, the output folder
left as it was: a bad input or output before any work, a PGN input that yields no game or a
position file that yields no valid position, a full or read-only disk while writing.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import chess
import numpy as np

from search.core.convert import from_chess
from tuner import __version__
from tuner.cores import resolve_workers
from tuner.errors import TunerError, one_line
from tuner.ingest.filters import IngestConfig
from tuner.ingest.games import (
    DROP_REASONS,
    IngestedBatch,
    GameChunk,
    Problem,
    process_batch,
)
from search.core.replay import replay
from tuner.ingest.positions import LINE_DROP_REASONS, LINE_REASONS, LineChunk, LinesOutcome, process_lines
from tuner.ingest.schema import FORMAT, MANIFEST, SCHEMA, SCHEMA_VERSION, SPLITS, check_split_format, split_file
from tuner.ingest.sources import (
    LINE_TOO_LONG,
    FileDigest,
    InputFile,
    SourceProblem,
    check_inputs,
    iter_games,
)
from tuner.ingest.split import assign_splits
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
from tuner.progress import Progress, progress_bar

#: Games per batch sent to a worker (and bytes, whichever is reached first).
BATCH_GAMES = 64
BATCH_BYTES = 512 * 1024
#: Problems printed to stderr / listed in the manifest.
PRINTED_PROBLEMS = 10
LISTED_PROBLEMS = 20


@dataclass
class _Batch:
    """Games, or one block of lines of a position file, and the problems met before them."""

    chunks: list[GameChunk] = field(default_factory=list)
    problems: list[SourceProblem] = field(default_factory=list)
    size: int = 0
    bytes_read: int = 0
    """Input bytes read when the batch was cut (the progress bar shows it once processed)."""
    lines: LineChunk | None = None


class _ByteCounter:
    def __init__(self) -> None:
        self.value = 0

    def __call__(self, n: int) -> None:
        self.value += n


def _batches(items: Iterable[GameChunk | LineChunk | SourceProblem], counter: _ByteCounter) -> Iterator[_Batch]:
    batch = _Batch()
    for item in items:
        if isinstance(item, SourceProblem):
            batch.problems.append(item)
            continue
        if isinstance(item, LineChunk):
            if batch.chunks:  # the games before it go first
                batch.bytes_read = counter.value
                yield batch
                batch = _Batch()
            batch.lines = item
            batch.bytes_read = counter.value
            yield batch
            batch = _Batch()
            continue
        batch.chunks.append(item)
        batch.size += len(item.data)
        if len(batch.chunks) >= BATCH_GAMES or batch.size >= BATCH_BYTES:
            batch.bytes_read = counter.value
            yield batch
            batch = _Batch()
    batch.bytes_read = counter.value
    if batch.chunks or batch.problems:
        yield batch


def _process(batch: _Batch, config: IngestConfig) -> IngestedBatch | LinesOutcome:
    """A worker's job: a batch of games, or a block of lines."""
    if batch.lines is not None:
        return process_lines(batch.lines, config)
    return process_batch(batch.chunks, config)


def _run(batches: Iterable[_Batch], config: IngestConfig,
         workers: int) -> Iterator[tuple[_Batch, IngestedBatch | LinesOutcome]]:
    """Process batches (in a pool when ``workers > 1``: :func:`tuner.ordered_pool.ordered_map`,
    whose workers never touch polars or tqdm, so forking them is safe), yielding results in
    batch order."""
    return ordered_map(_process, batches, workers, args=lambda batch: (batch, config),
                       failure="a parser process died")


@dataclass
class _Tally:
    """Counts accumulated over the games, in game order."""

    read: int = 0
    kept_ids: list[int] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    problems: Counter[str] = field(default_factory=Counter)
    first: list[tuple[int, int, str, str]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    plies: int = 0
    printed: int = 0
    lines: int = 0
    """Lines of position files that were neither blank nor comments."""
    lines_rejected: Counter[str] = field(default_factory=Counter)
    valid_positions: Counter[int] = field(default_factory=Counter)
    """Per position file (by index), its lines with a valid position."""
    held: list[tuple[int, Problem]] = field(default_factory=list)
    """Problems of a position file not printed until the file shows a valid position (a file
    that has none is refused in one line, not after a screen of bad lines)."""


def _warm_up(inputs: list[InputFile], config: IngestConfig) -> None:
    """Load (or compile, the first time) the numba kernels the inputs need in the parent,
    before the pool forks its workers (or, with spawn, so that they find them in the cache):
    the replay kernel for PGN, the line and FEN kernels for position files."""
    if any(inp.kind == "pgn" for inp in inputs):
        replay(from_chess(chess.Board())[None, :], np.array([0, 1]), np.array([12]), np.array([28]),
               np.array([0]), np.array([True]))
    if any(inp.kind == "positions" for inp in inputs):
        process_lines(LineChunk(0, "", 1, 0, f"{chess.STARTING_FEN} [0.5]\n".encode()), config)


def ingest(paths: Sequence[str | Path], out: str | Path, config: IngestConfig | None = None, *,
           workers: int | None = None, progress: bool | None = None,
           log: TextIO | None = None, overwrite: bool = False, split_format: str = "parquet") -> dict[str, Any]:
    """Build a position set from PGN and position files; return its manifest.

    Parameters
    ----------
    paths : PGN files and position files (:mod:`tuner.ingest.positions`; plain, ``.gz``,
        ``.bz2``, ``.zst``; UTF-8, Latin-1 or UTF-16/32 with a byte-order mark), read in this
        order; each PGN file must yield at least one game, each position file one valid position.
    out : the output folder; replaced atomically if it is empty or holds only a position set.
        A folder with other files is refused unless ``overwrite``.
    overwrite : write into an ``out`` that holds other files too: only the set's files
        (the split files and the manifest) are replaced, everything else stays.
    config : filters and split (defaults: :class:`IngestConfig`).
    workers : parser processes (default: the cores available); the output does not depend on it.
    progress : show a progress bar by bytes read (``None``: only on a terminal).
    log : where problems are reported, ``file:line: reason: detail`` (default: stderr).
    split_format : ``parquet`` or ``compact`` (the splits as ``.mtpos`` files of 40-byte records,
        :mod:`tuner.ingest.compact`: the tags, ratings and source are not kept, a row that does
        not fit one is refused).

    Raises
    ------
    TunerError
        Before any work, for a missing, unreadable, empty or binary input or an output that
        must not be written; during the run, for an input that yields no game, a compressed
        input broken before its first game, a run that keeps no position at all, or a failure
        to write (a full or read-only disk).
        The output folder is then as it was.
    """
    started = time.perf_counter()
    config = config or IngestConfig()
    config.validate()
    check_split_format(split_format)
    log = log or sys.stderr
    try:
        workers = resolve_workers(workers)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    inputs = check_inputs(list(paths))
    out = Path(out)
    staging: Path | None = None
    private = staging_path(out)
    try:
        for note in clean_leftovers(out):
            print(one_line(note), file=log)
        keep_others = check_output(out, overwrite=overwrite)
        staging = staging_dir(out)
        _warm_up(inputs, config)
        digests = [FileDigest() for _ in inputs]
        writer = PositionWriter(staging, dedup=config.dedup)
        tally = _Tally()
        total = sum(inp.size for inp in inputs)
        with progress_bar(total=total, unit="B", unit_scale=True, desc="ingest", disable=progress is False,
                  file=sys.stderr, leave=False) as bar:
            counter = _ByteCounter()
            for batch, result in _run(_batches(iter_games(inputs, digests, counter), counter), config, workers):
                if isinstance(result, LinesOutcome):
                    _account_lines(batch, result, tally, inputs, bar, log)
                    frame = result.frame(inputs[result.file_index].name)
                else:
                    _account(batch, result, tally, inputs, bar, log)
                    frame = result.frame()
                tally.dropped["duplicate"] += writer.add(frame)
                bar.update(batch.bytes_read - bar.n)
        _check_position_files(inputs, digests, tally)
        splits = assign_splits(tally.kept_ids, config.split, config.seed)
        counts = writer.finish(splits)
        _check_kept(inputs, tally, counts, out)
        _report([], tally, inputs, bar, log)  # anything still held
        manifest = _manifest(inputs, digests, config, workers, tally, splits, counts, started)
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
    if tally.printed < sum(tally.problems.values()):
        print(one_line(f"... {sum(tally.problems.values()) - tally.printed} more problem(s), counted in {out / MANIFEST}"),
              file=log)
    return manifest


def _check_position_files(inputs: list[InputFile], digests: list[FileDigest], tally: _Tally) -> None:
    """Refuse a position file none of whose lines holds a valid position (not a position file)."""
    for index, (inp, digest) in enumerate(zip(inputs, digests, strict=True)):
        if inp.kind == "positions" and not tally.valid_positions[index]:
            first = next((f"; first problem at line {line}: {reason}" + (f" ({detail})" if detail else "")
                          for f, line, reason, detail in tally.first if f == index), "")
            raise TunerError(f"{inp.path}: no valid position in its {digest.lines} line(s) (a line starts with a "
                             f"FEN, then a result such as [1.0] or c9 \"1-0\";){first}; not a position file?")


def _check_kept(inputs: list[InputFile], tally: _Tally, counts: dict[str, int], out: Path) -> None:
    """Refuse a run that keeps no position (every game rejected, every position filtered out):
    it would replace ``out`` with an empty set. The line names the first input and the first
    problem met, if any."""
    if sum(counts.values()):
        return
    first = tally.first[0] if tally.first else None
    where = inputs[first[0]].path if first else inputs[0].path
    rejected = sum(tally.rejected.values()) + sum(tally.lines_rejected.values())
    read = " and ".join(f"{n} {what}" for n, what in ((tally.read, "game(s)"), (tally.lines, "line(s)")) if n) or "nothing"
    why = [f"{read} read, {rejected} rejected"]
    why += [f"first problem at line {first[1]}: {first[2]}"] if first else []
    why += [f"dropped: {', '.join(f'{k} {v}' for k, v in tally.dropped.items() if v)}"] \
        if any(tally.dropped.values()) else []
    raise TunerError(f"{where}: no position kept ({'; '.join(why)}); {out} was left as it was")


def _count_long_lines(batch: _Batch, tally: _Tally) -> None:
    """Count each line a position file's reader skipped as too long as a line read and rejected."""
    for p in batch.problems:
        if p.problem.reason == LINE_TOO_LONG:
            tally.lines += 1
            tally.lines_rejected[LINE_TOO_LONG] += 1


def _account_lines(batch: _Batch, result: LinesOutcome, tally: _Tally, inputs: list[InputFile],
                   bar: Progress, log: TextIO) -> None:
    _count_long_lines(batch, tally)
    tally.lines += result.records
    tally.lines_rejected.update(result.rejected)
    tally.dropped.update(result.dropped)
    tally.valid_positions[result.file_index] += result.valid
    problems = [(p.file_index, p.problem) for p in batch.problems]
    problems.extend((result.file_index, p) for p in result.problems)
    _report(problems, tally, inputs, bar, log, hold=not tally.valid_positions[result.file_index])


def _report(problems: list[tuple[int, Problem]], tally: _Tally, inputs: list[InputFile],
            bar: Progress, log: TextIO, *, hold: bool = False) -> None:
    """Count problems (sorted by file and line here), keep the first ones for the manifest,
    print the first few (``hold``: not yet, see :attr:`_Tally.held`)."""
    problems.sort(key=lambda fp: (fp[0], fp[1].line))
    if not hold:
        for file_index, p in tally.held:
            bar.write(one_line(f"{inputs[file_index].path}:{p.line}: {p.reason}: {p.detail}"), file=log)
        tally.held = []
    # batches come in file order and each batch's problems are sorted: the first problems
    # met are the first in the files
    for file_index, p in problems:
        tally.problems[p.reason] += 1
        if len(tally.first) < LISTED_PROBLEMS:
            tally.first.append((file_index, p.line, p.reason, p.detail))
        if tally.printed < PRINTED_PROBLEMS:
            tally.printed += 1
            if hold:
                tally.held.append((file_index, p))
            else:
                bar.write(one_line(f"{inputs[file_index].path}:{p.line}: {p.reason}: {p.detail}"), file=log)


def _account(batch: _Batch, result: IngestedBatch, tally: _Tally, inputs: list[InputFile],
             bar: Progress, log: TextIO) -> None:
    _count_long_lines(batch, tally)  # a position file ending in one: its problem comes alone
    problems: list[tuple[int, Problem]] = [(p.file_index, p.problem) for p in batch.problems]
    for outcome, chunk in zip(result.outcomes, batch.chunks, strict=True):
        tally.read += 1
        problems.extend((chunk.file_index, p) for p in outcome.problems)
        if outcome.reason is not None:
            tally.rejected[outcome.reason] += 1
            continue
        tally.kept_ids.append(outcome.game_id)
        tally.plies += outcome.plies
        tally.dropped.update(outcome.dropped)
    # until a game is kept, its problems are held: a run that keeps none is one line (_check_kept)
    _report(problems, tally, inputs, bar, log, hold=not tally.kept_ids)


def _manifest(inputs: list[InputFile], digests: list[FileDigest], config: IngestConfig, workers: int,
              tally: _Tally, splits: dict[str, np.ndarray], counts: dict[str, int], started: float) -> dict[str, Any]:
    rejected = sum(tally.rejected.values())
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "package_version": __version__,
        "inputs": [{"path": str(inp.path.resolve()), "name": inp.name, "kind": inp.kind, "size": inp.size,
                    "sha256": d.sha256, **({"lines": d.lines} if inp.kind == "positions" else {"games": d.games})}
                   for inp, d in zip(inputs, digests, strict=True)],
        "config": asdict(config),
        "workers": workers,
        "games": {
            "read": tally.read,
            "kept": tally.read - rejected,
            "rejected": rejected,
            "rejected_by_reason": dict(sorted(tally.rejected.items())),
        },
        "lines": {
            "read": tally.lines,
            "kept": tally.lines - sum(tally.lines_rejected.values()),
            "rejected": sum(tally.lines_rejected.values()),
            "rejected_by_reason": {r: tally.lines_rejected[r] for r in LINE_REASONS if tally.lines_rejected[r]},
        },
        "problems": {
            "count": sum(tally.problems.values()),
            "by_reason": dict(sorted(tally.problems.items())),
            "first": [{"file": str(inputs[f].path), "line": line, "reason": reason, "detail": detail}
                      for f, line, reason, detail in tally.first],
        },
        "positions": {
            "plies_in_kept_games": tally.plies,
            "dropped_by_reason": {r: tally.dropped.get(r, 0) for r in dict.fromkeys(DROP_REASONS + LINE_DROP_REASONS)},
            "kept": sum(counts.values()),
            **{name: counts[name] for name in SPLITS},
        },
        "splits": {name: {"file": split_file(name), "games": len(splits[name]), "positions": counts[name]}
                   for name in SPLITS},
        "columns": {name: str(dtype) for name, dtype in SCHEMA.items()},
        "elapsed_seconds": round(time.perf_counter() - started, 3),
    }
