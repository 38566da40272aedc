"""``selfplay()``: play games in worker processes, keep them in a resumable journal, and write
the position set (the library entry point of ``tuner selfplay``).

A self-play folder ``DIR`` holds:

* ``selfplay.json``: the player, its file's SHA-256, the settings (checked on ``--resume``);
* ``games/part-NNNNN.parquet`` and ``games/part-NNNNN.json``: the rows (position-set columns) and
  the summaries of a batch of finished games (with the fingerprint of the search that played
  them, :func:`search_sha256`: a resumed run may play on with changed code, and the manifest's
  ``selfplay.searches`` counts the games of each version), each written to a temporary name
  and renamed, the summaries last: a part counts once both are there, so a run killed at any point keeps every
  part it finished and loses only the games since (at most :data:`FLUSH_GAMES` games or
  :data:`FLUSH_SECONDS` seconds of play); Ctrl-C saves the games finished before it;
* the position set, once every game is played: ``train.parquet``, ``validation.parquet``,
  ``test.parquet`` and ``manifest.json`` as ``tuner ingest`` writes them (split by game with
  :func:`tuner.ingest.split.stable_splits`, so games added by ``--resume --games N`` leave
  the earlier games' splits as they were; a (position, move) pair kept once, the first time it is
  met in game order, unless ``dedup`` is off), built in a staging folder and moved in with the
  manifest last.

Games are played one per task in a pool of spawned processes (one per core by default), or on
a Dask cluster (``executor = "dask"``, :mod:`tuner.selfplay.dask_play`); each game depends only
on the player, the settings and its number (:mod:`tuner.selfplay.game`), so the folder's files
are the same whatever the executor, the number of workers and however often the run was
interrupted and resumed (on either executor).
"""

from __future__ import annotations

import ast
import concurrent.futures
import concurrent.futures.process
import contextlib
import hashlib
import json
import multiprocessing
import multiprocessing.util
import os
import shutil
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

import polars as pl

from search.core.input_limits import InputLimitError, loads_json, read_capped
from search.params.weights import atomic_write_text
from tuner import __version__
from tuner.arena.engines import DEFAULT_TIMEOUT, EngineSpec, ExternalEngine
from tuner.arena.match import Opening, choose_openings
from tuner.arena.players import Searchable
from tuner.config import from_mapping
from tuner.cores import resolve_workers
from tuner.errors import DeferredSigint, Interrupted, TunerError, one_line
from tuner.ingest.schema import FORMAT, MANIFEST, SCHEMA, SCHEMA_VERSION, SPLITS, check_split_format, split_file
from tuner.ingest.split import stable_splits
from tuner.ingest.writer import check_output, clean_leftovers, commit, staging_dir, write_manifest
from tuner.progress import PlainProgress, progress_bar
from tuner.selfplay.config import MAX_GAMES, SelfplayConfig
from tuner.selfplay.game import GameRecord, GameTask, Mover, play_game
from tuner.training.run_folder import LOCK_NAME, RunDir

#: the run's settings file and its parts folder
SETTINGS = "selfplay.json"
#: seconds between two looks for Ctrl-C while the games are played
WAKE_SECONDS = 0.25
#: the longest wait between two progress lines in a log (not a terminal)
PROGRESS_LOG_SECONDS = 10.0
PARTS = "games"
#: a part is written after this many finished games ...
FLUSH_GAMES = 200
#: ... or this many seconds after the previous one, whichever comes first
FLUSH_SECONDS = 30.0
#: games submitted to the worker pool ahead, per worker
IN_FLIGHT_PER_WORKER = 4
#: the settings a resumed run may change (the others must be those it started with)
RESUMABLE = ("games", "workers", "executor", "scheduler")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ------------------------------------------------------------------ the worker side

_MOVER: Mover | None = None


def search_sha256() -> str:
    """A fingerprint of the code that chooses self-play's moves: :func:`code_sha256` of the
    ``search`` package's Python sources and of the modules that make a game's engine
    (:mod:`tuner.selfplay.game`, :mod:`tuner.arena.players`: its table size). Each part of the
    journal records the one it was played with, so a generation resumed across a change of the
    search (a new feature, a fix) says in its manifest how many of its games each version
    played; a change of docstrings or comments alone is not one."""
    import search  # noqa: PLC0415
    import tuner  # noqa: PLC0415

    root = Path(search.__file__).parent.parent
    package = Path(tuner.__file__).parent
    files = [*Path(search.__file__).parent.rglob("*.py"),
             package / "selfplay" / "game.py", package / "arena" / "players.py"]
    return code_sha256(files, root)


def code_sha256(files: list[Path], root: Path) -> str:
    """The SHA-256 (16 hex digits) of Python source ``files`` as code, in path order: each
    file's path relative to ``root`` and its source as :func:`ast.unparse` writes it back with
    every docstring taken out, so that comments, docstrings and layout change nothing and any
    change to a statement, a name or a constant changes it (Python source, not the syntax
    tree's dump, whose form changes between Python versions)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                    and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + ast.unparse(tree).encode() + b"\0")
    return digest.hexdigest()[:16]


def _init_worker(player: Searchable | EngineSpec, timeout: float) -> None:
    """Worker initializer: Ctrl-C and SIGTERM are the parent's to handle (it saves the finished
    games, then kills the workers: :func:`_stop_pool`); the worker's engine is made once and kept
    for all its games."""
    global _MOVER  # noqa: PLW0603  (one engine per worker process)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # `timeout` and `kill -- -PGID` signal the whole group
    from tuner.ordered_pool import die_with_parent  # noqa: PLC0415

    die_with_parent(os.getppid())
    _MOVER = Mover(player, timeout)
    # an external engine's thread would keep the worker from exiting: close it when the pool
    # ends the worker (finalizers with a priority run before the interpreter waits for threads)
    multiprocessing.util.Finalize(_MOVER, _MOVER.close, exitpriority=10)


def _play(task: GameTask) -> GameRecord:
    assert _MOVER is not None
    return play_game(task, _MOVER)


# ------------------------------------------------------------------ the journal


def _rows_frame(records: list[GameRecord], player: str) -> pl.DataFrame:
    """The position-set rows of finished games, in game order."""
    cols: dict[str, list[Any]] = {name: [] for name in SCHEMA}
    for rec in sorted(records, key=lambda r: r.index):
        n = rec.positions
        cols["game_id"] += [rec.index] * n
        for name in ("ply", "fen", "move", "stm", "score", "n_legal", "zobrist"):
            cols[name] += rec.rows[name]
        for name in ("white_elo", "black_elo", "mover_elo", "date"):
            cols[name] += [None] * n
        cols["result"] += [rec.result] * n
        cols["event"] += ["selfplay"] * n
        cols["white"] += [player] * n
        cols["black"] += [player] * n
        cols["source"] += ["selfplay"] * n
        cols["source_line"] += [rec.index] * n
    return pl.DataFrame(cols, schema=SCHEMA)


class Journal:
    """The parts of a self-play folder: which games are finished, and writing new parts."""

    def __init__(self, folder: Path, player: str, search: str | None = None) -> None:
        self.folder = folder / PARTS
        self.player = player
        #: the :func:`search_sha256` new parts record (None: an external engine plays)
        self.search = search
        self.folder.mkdir(parents=True, exist_ok=True)
        self.summaries: dict[int, dict[str, Any]] = {}
        #: each finished game's :func:`search_sha256` (None: not recorded, or an external engine)
        self.search_of: dict[int, str | None] = {}
        self.parts = 0
        for meta in sorted(self.folder.glob("part-*.json")):
            rows = meta.with_suffix(".parquet")
            if not rows.is_file():
                continue
            try:
                part = loads_json(read_capped(meta).decode("utf-8"), str(meta))
                summaries = {_checked_summary(g)["game"]: g for g in part["games"]}
                search = part.get("search_sha256")
                if search is not None and not isinstance(search, str):
                    raise TypeError(f"its search_sha256 is {search!r}")
            except InputLimitError as exc:
                raise TunerError(f"{exc}; remove it and its .parquet to replay its games") from None
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise TunerError(f"{meta}: not a readable self-play part ({type(exc).__name__}: {exc}); "
                                 "remove it and its .parquet to replay its games") from None
            _check_rows(rows)
            self.summaries.update(summaries)
            self.search_of.update(dict.fromkeys(summaries, search))
            self.parts = max(self.parts, int(meta.stem.split("-")[1]) + 1)

    def write(self, records: list[GameRecord]) -> None:
        """A new part with ``records`` (rows first, then the summaries that make it count)."""
        if not records:
            return
        name = f"part-{self.parts:05d}"
        rows, meta = self.folder / f"{name}.parquet", self.folder / f"{name}.json"
        for path in (rows, meta):  # else the error of the rename below would name the temporary file
            if path.is_dir() or (path.exists() and not path.is_file()):
                raise TunerError(f"{path}: {'a folder' if path.is_dir() else 'not a regular file'} stands where "
                                 "the next part goes; move it away and resume")
        tmp_rows = rows.with_name(f".{name}.parquet.tmp")
        _rows_frame(records, self.player).write_parquet(tmp_rows, compression="zstd")
        os.replace(tmp_rows, rows)
        games = [r.summary() for r in sorted(records, key=lambda r: r.index)]
        atomic_write_text(meta, json.dumps({"search_sha256": self.search, "games": games}) + "\n")
        self.parts += 1
        for g in games:
            self.summaries[g["game"]] = g
            self.search_of[g["game"]] = self.search

    def searches(self, games: int) -> dict[str, int]:
        """How many of games ``0 .. games - 1`` each search played (:func:`search_sha256`;
        ``"unrecorded"``: parts written before it was recorded, or by an external engine)."""
        counts = Counter(self.search_of[g] or "unrecorded" for g in self.summaries if g < games)
        return dict(sorted(counts.items()))

    def rows(self, games: int) -> pl.DataFrame:
        """The rows of games ``0 .. games - 1`` in game order (only parts whose summaries were
        written); a part whose rows cannot be read is a one-line :class:`TunerError` naming it."""
        files = [m.with_suffix(".parquet") for m in sorted(self.folder.glob("part-*.json"))]
        if not files:
            return pl.DataFrame(schema=SCHEMA)
        try:
            return pl.scan_parquet(files).filter(pl.col("game_id") < games).sort(["game_id", "ply"]).collect()
        except (pl.exceptions.PolarsError, OSError) as exc:
            for f in files:  # which one: read each
                _check_rows(f, whole=True)
            raise TunerError(f"{self.folder}: the parts cannot be read together ({type(exc).__name__}); "
                             "remove the damaged ones (and their .json) to replay their games") from None


def _check_rows(path: Path, *, whole: bool = False) -> None:
    """Refuse (one-line :class:`TunerError` naming it) a part's rows file that cannot be read as
    parquet: its footer, or with ``whole`` every row."""
    try:
        pl.read_parquet(path) if whole else pl.read_parquet_schema(path)
    except (pl.exceptions.PolarsError, OSError) as exc:
        reason = one_line(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)[:200]
        raise TunerError(f"{path}: not a readable self-play part ({reason}); remove it and its .json to replay "
                         "its games") from None


# ------------------------------------------------------------------ settings and folders


def _checked_summary(g: Any) -> dict[str, Any]:
    """A game's journal line (:meth:`GameRecord.summary`) as read back: the fields the run counts
    must be there with their types (TypeError or ValueError otherwise: a damaged part)."""
    if not isinstance(g, dict):
        raise TypeError("a game's summary is not an object")
    for key, kind in (("game", int), ("positions", int), ("nodes", int), ("result", str), ("termination", str)):
        if not isinstance(g.get(key), kind) or isinstance(g.get(key), bool):
            raise TypeError(f"a game's {key} is {g.get(key)!r}")
    if not 0 <= g["game"] < MAX_GAMES or g["positions"] < 0 or g["nodes"] < 0 or \
            g["result"] not in ("1-0", "0-1", "1/2-1/2"):
        raise ValueError(f"game {g['game']}: a value out of range")
    return g


def _settings(player: str, player_sha: str | None, config: SelfplayConfig, openings: str) -> dict[str, Any]:
    return {"format": "movetuner-selfplay", "version": 1, "package_version": __version__, "player": player,
            "player_sha256": player_sha, "openings": openings, "config": asdict(config)}


def _read_settings(folder: Path) -> dict[str, Any]:
    """``folder``'s ``selfplay.json`` (the settings its run was started with), or a one-line
    :class:`TunerError` saying why it cannot be resumed."""
    path = folder / SETTINGS
    try:
        old = loads_json(read_capped(path).decode("utf-8"), str(path))
    except FileNotFoundError:
        raise TunerError(f"{path}: missing, so {folder} is not a self-play folder to resume") from None
    except InputLimitError as exc:
        raise TunerError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise TunerError(f"{path}: not readable ({type(exc).__name__})") from None
    if not isinstance(old, dict) or old.get("format") != "movetuner-selfplay":
        raise TunerError(f"{path}: not a self-play settings file")
    return old


def resumed_config(folder: Path | str) -> SelfplayConfig | None:
    """The settings a self-play folder's run was started with, for a resumed run to start from:
    the options given on the command line then override them, and :func:`selfplay` checks that
    only the resumable ones changed. None when they cannot be read: the resume's own check
    (:func:`_check_resume`) then says what is wrong with the folder."""
    try:
        stored = _read_settings(Path(folder)).get("config")
        return from_mapping(SelfplayConfig, stored, str(Path(folder) / SETTINGS)) if isinstance(stored, dict) else None
    except TunerError:
        return None


def _check_resume(folder: Path, settings: dict[str, Any]) -> None:
    path = folder / SETTINGS
    old = _read_settings(folder)
    for key in ("player", "player_sha256", "openings"):
        if old.get(key) != settings[key]:
            raise TunerError(f"{path}: the run was started with {key} {old.get(key)!r}, not {settings[key]!r}; "
                             "resume it with the same player and openings, or start a new folder")
    now = settings["config"]
    changed = [k for k, v in (old.get("config") or {}).items()
               if k not in RESUMABLE and json.dumps(v) != json.dumps(now.get(k))]
    if changed:
        raise TunerError(f"{path}: the run was started with other settings ({', '.join(sorted(changed))}); a resumed "
                         f"run may change only {', '.join(RESUMABLE[:-1])} and {RESUMABLE[-1]}")


def _prepare(folder: Path, settings: dict[str, Any], *, resume: bool, overwrite: bool) -> None:
    """Check the output folder and write its settings (a new run) or check them (resume)."""
    if resume:
        _check_resume(folder, settings)
    elif folder.exists():
        if not folder.is_dir():
            raise TunerError(f"{folder}: exists and is not a folder")
        entries = [e for e in folder.iterdir() if e.name != LOCK_NAME]  # the lock is this process's
        if entries and not overwrite:
            raise TunerError(f"{folder}: not empty; give --resume to go on with its games, or --overwrite to start "
                             "anew (only a self-play folder is cleared)")
        if entries:
            if not (folder / SETTINGS).is_file():
                raise TunerError(f"{folder}: holds files but is no self-play folder (no {SETTINGS}); not clearing it")
            for entry in entries:
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    # the settings with the games asked for now (a resumed run may play more)
    atomic_write_text(folder / SETTINGS, json.dumps(settings, indent=2) + "\n")


# ------------------------------------------------------------------ the run


class _Tally:
    """Results and terminations of the finished games, for the progress line and the manifest."""

    def __init__(self) -> None:
        self.results: Counter[str] = Counter()
        self.terminations: Counter[str] = Counter()
        self.positions = 0
        self.nodes = 0

    def add(self, summary: dict[str, Any]) -> None:
        self.results[summary["result"]] += 1
        self.terminations[summary["termination"].split(" (")[0]] += 1
        self.positions += int(summary["positions"])
        self.nodes += int(summary["nodes"])

    def wdl(self) -> str:
        r = self.results
        return f"{r['1-0']}/{r['1/2-1/2']}/{r['0-1']}"


# many parameters: the command's inputs (player, its name and hash, folder, settings, openings) and its
# switches (resume, overwrite, progress, log), each used once; a settings object would only rename them
def selfplay(player: Searchable | EngineSpec, player_name: str, player_sha: str | None, out: str | Path,
             config: SelfplayConfig, openings: list[Opening], openings_name: str, *, resume: bool = False,
             overwrite: bool = False, progress: bool | None = None, log: TextIO | None = None,
             engine_timeout: float = DEFAULT_TIMEOUT, split_format: str = "parquet") -> dict[str, Any]:
    """Play ``config.games`` self-play games and write their position set to ``out``; return its
    manifest.

    Parameters
    ----------
    player : weights or a network for the numba search (optionally probability-limited), or an
        external UCI engine.
    player_name, player_sha : how the player is named in the rows (``white``/``black``) and the
        manifest, and the SHA-256 of its file (checked on resume; None for an external engine).
    out : the self-play folder (module docstring). A new run refuses a folder that is not empty
        unless ``overwrite`` (which clears a self-play folder, never another one). One process at
        a time uses it: it holds ``DIR/.lock`` as ``tuner tune`` holds a run folder's
        (:meth:`tuner.training.run_folder.RunDir.lock`); another is refused naming this one's pid.
    openings : the start positions, used in a seeded order (:func:`choose_openings`).
    resume : go on with the games of ``out`` (its settings must be these, but for
        :data:`RESUMABLE`); not with ``overwrite``.
    progress : a progress bar (``None``: only on a terminal; plain lines in a log otherwise).
    split_format : ``parquet`` or ``compact``: the position set's splits as ``.mtpos`` files of
        40-byte records (:mod:`tuner.ingest.compact`; the players' names are not kept). Not a
        setting of the games: a resumed run may write the other format.

    Raises
    ------
    TunerError
        A folder that must not be written, settings that differ from those of the run resumed, a
        failed external engine. The games finished so far stay in ``out``.
    Interrupted
        Ctrl-C, after the games finished before it were saved.
    """
    if resume and overwrite:
        raise TunerError("--overwrite cannot be combined with --resume")
    check_split_format(split_format)
    log = log or sys.stderr
    folder = Path(out)
    settings = _settings(player_name, player_sha, config, openings_name)
    if isinstance(player, EngineSpec):  # an engine that cannot start: one line now, not a broken worker pool
        ExternalEngine(player, timeout=engine_timeout).close()
    with RunDir(folder).lock(create=True) as stale:  # one process at a time: "in use by process N"
        if stale is not None:
            print(one_line(f"{folder}: took over the lock left by process {stale}, which no longer runs"), file=log)
        return _selfplay(player, player_name, folder, settings, config, openings, resume=resume,
                         overwrite=overwrite, progress=progress, log=log, engine_timeout=engine_timeout,
                         split_format=split_format)


def _selfplay(player: Searchable | EngineSpec, player_name: str, folder: Path, settings: dict[str, Any],
              config: SelfplayConfig, openings: list[Opening], *, resume: bool, overwrite: bool,
              progress: bool | None, log: TextIO, engine_timeout: float, split_format: str) -> dict[str, Any]:
    """:func:`selfplay` once the folder's lock is held."""
    started = time.perf_counter()
    cluster = None
    if config.executor == "dask":  # before the folder is touched: a bad --scheduler leaves it as it was
        from tuner.selfplay.dask_play import log_to, open_cluster  # noqa: PLC0415 - distributed only when asked for

        cluster = open_cluster(config, log_to(log))
    try:
        return _selfplay_on(player, player_name, folder, settings, config, openings, cluster, started, resume=resume,
                            overwrite=overwrite, progress=progress, log=log, engine_timeout=engine_timeout,
                            split_format=split_format)
    finally:
        if cluster is not None:
            cluster.close()


def _selfplay_on(player: Searchable | EngineSpec, player_name: str, folder: Path, settings: dict[str, Any],
                 config: SelfplayConfig, openings: list[Opening], cluster: Any, started: float, *, resume: bool,
                 overwrite: bool,
                 progress: bool | None, log: TextIO, engine_timeout: float, split_format: str) -> dict[str, Any]:
    """:func:`selfplay` with its Dask cluster open (``cluster``, None for the local pool)."""
    _prepare(folder, settings, resume=resume, overwrite=overwrite)
    search = None if isinstance(player, EngineSpec) else search_sha256()
    journal = Journal(folder, player_name, search)
    tally = _Tally()
    for summary in journal.summaries.values():
        if summary["game"] < config.games:
            tally.add(summary)
    chosen = choose_openings(openings, config.games, config.seed)
    todo = [GameTask(i, chosen[i], player, config) for i in range(config.games) if i not in journal.summaries]
    if resume and journal.summaries:
        print(one_line(f"selfplay: {len(journal.summaries)} games already in {folder}, {len(todo)} to play"), file=log)
        before = set(journal.searches(MAX_GAMES)) - {search or "unrecorded"}
        if todo and before:
            print(one_line(f"selfplay: the search changed since some of these games were played (now {search}, "
                           f"before {', '.join(sorted(before))}); the manifest counts the games of each"), file=log)
    played_positions = 0
    play_started = time.perf_counter()
    if todo:
        played_positions = _play_all(todo, journal, tally, config, player, engine_timeout, progress, log, folder,
                                     cluster)
    play_seconds = time.perf_counter() - play_started
    now = {"games_played_now": len(todo), "positions_played_now": played_positions,
           "play_seconds": round(play_seconds, 3),
           "positions_per_s": round(played_positions / play_seconds, 1) if todo and play_seconds > 0 else None,
           "elapsed_seconds": round(time.perf_counter() - started, 3)}
    return _build_set(folder, journal, config, settings, tally, log, now, split_format)


@contextlib.contextmanager
def _stop_signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back for the block, in which worker processes are started, then raised as
    KeyboardInterrupt at its end. SIGINT is blocked in this thread, so the workers inherit it
    blocked and never see a Ctrl-C sent to the process group (``timeout -s INT``, a terminal),
    which would raise KeyboardInterrupt in a worker still starting, before its initializer
    ignores SIGINT; and Python's handler only notes it (:class:`tuner.errors.DeferredSigint`),
    so that no worker is left half-started, unknown to the pool and never ended. Either would
    print a traceback after the resume hint (issue 58 item 9). SIGTERM likewise (the command
    line handles it as Ctrl-C, :class:`tuner.errors.SigtermAsCtrlC`): sent to the group
    (``timeout``), it would end a worker still starting, and the pool would break."""
    with DeferredSigint() as deferred:
        old = (signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
               if hasattr(signal, "pthread_sigmask") else None)
        try:
            yield
        finally:
            if old is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)  # one held for this thread is noted now
    if deferred.requested:
        raise KeyboardInterrupt


def _stop_pool(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Stop the pool now: cancel what has not started and kill the workers, whose games in
    flight are lost (they are played again from their seed on ``--resume``). Without the
    kill, the interpreter's exit would wait for each worker's current game (the workers
    ignore SIGINT and SIGTERM), minutes on a loaded machine."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    # the workers first: the manager thread then finds the pool broken and closes the call
    # queue's reader (CPython gh-94777), which frees its feeder thread if it was blocked writing
    # a task no worker will read; shut down first, the manager could take the orderly path
    # and wait for that feeder for ever, and the exit with it (seen once under a full test run)
    for proc in workers:
        if proc.is_alive():
            proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        proc.join(timeout=5)
    # the pool's manager thread sees the ended workers and closes its pipes: let it finish now,
    # or the interpreter's exit wakes it through a pipe it is closing (a traceback after the
    # resume hint: "OSError: [Errno 9] Bad file descriptor", issue 58 item 9)
    if manager is not None:
        manager.join(timeout=5)


class Recorder:
    """The finished games as they come back, whatever plays them: the tally, the progress bar,
    and a journal part every :data:`FLUSH_GAMES` games or :data:`FLUSH_SECONDS` seconds."""

    def __init__(self, journal: Journal, tally: _Tally, total: int, progress: bool | None, log: TextIO) -> None:
        self.journal = journal
        self.tally = tally
        self.log = log
        self.done: list[GameRecord] = []
        self.positions = 0
        self.t0 = self.last_flush = time.perf_counter()
        # in a log, a line at least every PROGRESS_LOG_SECONDS: games finish seldom (issue 58 item
        # 15: 60 s without a line), so the caller's wait loop ticks it
        self.bar = progress_bar(total=total, unit="game", desc="selfplay", file=log,
                                disable=progress is False, log_seconds=PROGRESS_LOG_SECONDS)

    def tick(self) -> None:
        """A wake of the wait loop (a progress line in a log when one is due)."""
        if isinstance(self.bar, PlainProgress):
            self.bar.tick()

    def add(self, records: list[GameRecord]) -> None:
        """Finished games (in any order): counted, and saved in a part when one is due."""
        for rec in records:
            self.done.append(rec)
            self.positions += rec.positions
            self.tally.add(rec.summary())
            self.bar.update(1)
        rate = self.positions / max(time.perf_counter() - self.t0, 1e-9)
        self.bar.set_postfix({"W/D/L": self.tally.wdl(), "pos": self.tally.positions, "pos/s": f"{rate:.0f}"})
        if len(self.done) >= FLUSH_GAMES or time.perf_counter() - self.last_flush >= FLUSH_SECONDS:
            self.journal.write(self.done)
            self.done, self.last_flush = [], time.perf_counter()

    def close(self) -> None:
        """Save the games not yet in a part and close the bar (also when the run stops early)."""
        self.journal.write(self.done)
        self.done = []
        self.bar.close()

    def stopped(self, exc: BaseException, folder: Path) -> BaseException | None:
        """The one-line error that ends the run for ``exc`` (after :meth:`close`), saying how many
        games are saved; None for an error that is not the user's to read (re-raised as it is)."""
        saved = len(self.journal.summaries)
        if isinstance(exc, KeyboardInterrupt):
            return Interrupted(f"interrupted: {saved} games saved in {folder}; "
                               f"go on with: tuner selfplay ... --out {folder} --resume")
        if isinstance(exc, TunerError):
            return TunerError(f"{exc} ({saved} games saved in {folder}; --resume goes on)")
        if isinstance(exc, concurrent.futures.process.BrokenProcessPool):  # killed (out of memory?) or failed to start
            return TunerError(f"a self-play worker process ended abruptly ({saved} games saved in {folder}; "
                              "--resume goes on)")
        return None


def _play_all(todo: list[GameTask], journal: Journal, tally: _Tally, config: SelfplayConfig,
              player: Searchable | EngineSpec, timeout: float, progress: bool | None, log: TextIO,
              folder: Path, cluster: Any = None) -> int:
    """Play ``todo`` on ``cluster`` (a Dask executor, :mod:`tuner.selfplay.dask_play`) or in a
    pool of this machine's processes, writing parts as games finish; return the positions played."""
    recorder = Recorder(journal, tally, len(todo), progress, log)
    if cluster is not None:
        from tuner.selfplay.dask_play import play_on_dask  # noqa: PLC0415 - distributed only when asked for

        play_on_dask(cluster, todo, recorder, config, player, timeout, folder, in_flight=IN_FLIGHT_PER_WORKER,
                     wake=WAKE_SECONDS)
    else:
        _play_local(todo, recorder, config, player, timeout, folder)
    return recorder.positions


def _play_local(todo: list[GameTask], recorder: Recorder, config: SelfplayConfig, player: Searchable | EngineSpec,
                timeout: float, folder: Path) -> None:
    """Play ``todo`` in a pool of spawned worker processes of this machine."""
    workers = min(resolve_workers(config.workers), len(todo))
    ctx = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                                                  initargs=(player, timeout))
    # a window of games in flight, refilled as they finish: a million games are not a million
    # futures (memory), and Ctrl-C has only the window to cancel
    pending = iter(todo)
    futures: set[concurrent.futures.Future[GameRecord]] = set()

    def refill() -> None:
        with _stop_signals_held():  # submit() starts the workers
            while len(futures) < IN_FLIGHT_PER_WORKER * workers:
                task = next(pending, None)
                if task is None:
                    return
                futures.add(pool.submit(_play, task))

    try:
        refill()
        while futures:
            # a timeout, so that Ctrl-C is seen within it: the signal may reach another thread
            # (numba's, the pool's), and a wait without one would not wake for it
            finished, _ = concurrent.futures.wait(futures, timeout=WAKE_SECONDS,
                                                  return_when=concurrent.futures.FIRST_COMPLETED)
            recorder.tick()
            if not finished:
                continue
            for fut in finished:  # one at a time: a game that failed does not lose the others
                futures.discard(fut)
                recorder.add([fut.result()])
            refill()
        recorder.close()  # inside: a last part that cannot be written stops the pool too
    except BaseException as exc:
        for f in futures:
            f.cancel()
        try:
            recorder.close()
        except BaseException as again:  # noqa: BLE001 - the games cannot be saved: that is the error to report
            if not isinstance(exc, KeyboardInterrupt):
                exc = again
        finally:
            # always, or the interpreter's exit meets the pool's threads writing to pipes it
            # closes: "OSError: [Errno 9] Bad file descriptor" tracebacks after the error line
            _stop_pool(pool)
        stop = recorder.stopped(exc, folder)
        if stop is not None:
            raise stop from None
        raise exc from None
    pool.shutdown()


def _build_set(folder: Path, journal: Journal, config: SelfplayConfig, settings: dict[str, Any], tally: _Tally,
               log: TextIO, now: dict[str, Any], split_format: str = "parquet") -> dict[str, Any]:
    """Write the position set of games ``0 .. config.games - 1`` into ``folder`` (its other files
    stay), its splits in ``split_format``; return its manifest. ``now``: this run's figures, for
    the manifest."""
    for note in clean_leftovers(folder):
        print(one_line(note), file=log)
    keep_others = check_output(folder, overwrite=True)
    staging = staging_dir(folder)
    try:
        rows = journal.rows(config.games)
        total = rows.height
        if config.dedup and total:
            rows = rows.unique(subset=["zobrist", "move"], keep="first", maintain_order=True)
        game_ids = sorted(g for g in journal.summaries if g < config.games)
        splits = stable_splits(game_ids, config.split, config.seed)  # a grown set keeps each game's split
        counts = {}
        for name in SPLITS:
            part = rows.filter(pl.col("game_id").is_in(pl.Series(splits[name]).implode()))
            part.write_parquet(staging / split_file(name), compression="zstd")
            counts[name] = part.height
        manifest = {
            "format": FORMAT, "schema_version": SCHEMA_VERSION, "package_version": __version__,
            "inputs": [{"path": settings["player"], "name": settings["player"], "kind": "selfplay",
                        "sha256": settings["player_sha256"]}],
            "config": settings["config"],
            "games": {"read": len(game_ids), "kept": len(game_ids), "rejected": 0, "rejected_by_reason": {}},
            "positions": {"played": total, "dropped_by_reason": {"duplicate": total - rows.height},
                          "kept": rows.height, **counts},
            "splits": {name: {"file": split_file(name), "games": len(splits[name]), "positions": counts[name]}
                       for name in SPLITS},
            "columns": {name: str(dtype) for name, dtype in SCHEMA.items()},
            "selfplay": {"player": settings["player"], "openings": settings["openings"],
                         "results": {"1-0": tally.results["1-0"], "1/2-1/2": tally.results["1/2-1/2"],
                                     "0-1": tally.results["0-1"]},
                         "terminations": dict(sorted(tally.terminations.items())),
                         "nodes": tally.nodes, "searches": journal.searches(config.games), **now},
        }
        if split_format == "compact":
            from tuner.ingest.convert import compact_splits  # noqa: PLC0415 - only for a compact set

            compact_splits(staging, manifest, folder)
        write_manifest(staging / MANIFEST, manifest)
        commit(staging, folder, keep_others=keep_others)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return manifest


__all__ = ["FLUSH_GAMES", "Journal", "Recorder", "SETTINGS", "code_sha256", "file_sha256", "search_sha256",
           "selfplay"]
