"""A training run's folder: config, metrics, weights and the resume checkpoint.

Layout of ``RUN/`` (shared by every optimizer):

=================  ==========================================================================
``config.toml``    the full configuration of the run (re-read by ``--resume``)
``metrics.jsonl``  one JSON object per outer iteration / generation, appended and fsynced
``weights.json``   the current weights in the evaluator's format (atomic writes); a network's
                   run writes ``weights.mtnn`` instead (``docs/network.md``)
``state.json``     the checkpoint ``--resume`` continues from (atomic writes): method, the
                   number of completed iterations, the weights and the optimizer's own state
``data.json``      the position set the run started on: its inputs' names and SHA-256 and its
                   ingest settings, from its ``manifest.json`` (:func:`data_identity`)
=================  ==========================================================================

A resume compares the position set's manifest with ``data.json`` and refuses, in one line, a
set rebuilt from other games or with other settings: the run would otherwise continue silently
on other data (a run folder of an earlier version, without ``data.json``, is not checked).

``state.json`` is the commit point: an iteration counts as done once its checkpoint is
written. On resume, metric lines of iterations after the checkpoint (written just before an
interruption) are dropped, so that the finished run is the same as an uninterrupted one; a
run killed before its first checkpoint starts again from the beginning, and one whose
``state.json`` is lost after that is refused (:meth:`RunDir.resume_point`). A checkpoint of an
earlier feature catalogue (:data:`search.params.catalog.LEGACY_CATALOGS`) is refused too, with a
one-line error pointing to a new run started from the old run's ``weights.json`` (which
loads, migrated): the optimizers' states (Adam moments, GA populations, MMTO's steps) are
shaped by the old catalogue and are not carried over.

While a process uses the folder it holds ``RUN/.lock``, an exclusive ``flock`` on a file that
holds its pid: a second ``tuner tune`` on the same folder is refused naming that pid. The
system releases the lock when the process ends, however it ends, so a lock file left by a
killed process is recognised as stale and taken over. The holder deletes the file when it
is done.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

try:
    import fcntl

    _FLOCK = True
except ImportError:  # not POSIX: runs are not locked
    _FLOCK = False

import numpy as np

from search.params.catalog import CATALOG_HASH, LEGACY_CATALOGS, N_FEATURES
from search.core.input_limits import InputLimitError, loads_json
from search.evaluation.evaluators import (Evaluator, evaluator_file_name, evaluator_from_json, evaluator_to_json,
                               save_evaluator)
from search.evaluation.network import NetworkFileError, QuantizedNetwork, read_network
from search.params.weights import Weights, WeightsFileError, atomic_write_text, dumps
from tuner import __version__
from tuner.errors import TunerError

STATE_SCHEMA = "movetuner-run-state"
STATE_VERSION = 1
#: the lock file's name in a run folder
LOCK_NAME = ".lock"


def git_commit() -> str | None:
    """The repository's commit when running from a checkout, else None."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def provenance() -> dict[str, Any]:
    """What produced a file: package version, git commit, catalogue, Python, machine."""
    return {"package_version": __version__, "git_commit": git_commit(), "catalog_hash": CATALOG_HASH,
            "python": platform.python_version(), "machine": platform.machine()}


@dataclass(frozen=True)
class Checkpoint:
    """The state an optimizer resumes from."""

    method: str
    iteration: int  # completed outer iterations / generations
    weights: Evaluator  # int32[N_FEATURES], or a network
    extra: dict[str, Any]  # the optimizer's own state (JSON-serialisable)


class RunDir:
    """The files of one run (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def config_path(self) -> Path:
        return self.path / "config.toml"

    @property
    def metrics_path(self) -> Path:
        return self.path / "metrics.jsonl"

    @property
    def weights_path(self) -> Path:
        """``weights.mtnn`` when the run trains a network (that file exists), else ``weights.json``."""
        network = self.path / "weights.mtnn"
        return network if network.exists() else self.path / "weights.json"

    @property
    def state_path(self) -> Path:
        return self.path / "state.json"

    @property
    def lock_path(self) -> Path:
        return self.path / LOCK_NAME

    @contextlib.contextmanager
    def lock(self, *, create: bool = False) -> Iterator[int | None]:
        """Hold the run folder's lock for the block (see the module docstring); yields the pid
        of a dead process whose lock was left behind (taken over), else None.

        ``create`` makes the folder first (and removes it again on exit if the block left it
        empty). Raises a one-line :class:`TunerError` when another process holds the lock, or
        when the folder is a file or cannot be made.
        """
        made = False
        if self.path.exists() and not self.path.is_dir():
            raise TunerError(f"{self.path}: exists and is not a folder")
        if create and not self.path.exists():
            try:
                self.path.mkdir(parents=True)
            except FileExistsError:
                pass  # made meanwhile by another process: the lock decides
            except OSError as exc:
                raise TunerError(f"{self.path}: cannot make the run folder ({exc.strerror})") from None
            else:
                made = True
        if not self.path.is_dir():
            raise TunerError(f"{self.path}: not a run folder (no such folder)")
        fd, stale = self._acquire()
        try:
            self._remove_temporary_files()
            yield stale
        finally:
            try:
                os.unlink(self.lock_path)  # still ours: we hold it, and every taker re-checks
            except OSError:
                pass
            os.close(fd)
            if made:
                with contextlib.suppress(OSError):
                    self.path.rmdir()  # only when empty: nothing of a run was written

    def _acquire(self) -> tuple[int, int | None]:
        """Open and lock ``lock_path``; (file descriptor, pid of a stale lock's owner or None)."""
        if not _FLOCK:  # no flock on this platform: no protection, but no failure either
            return os.open(os.devnull, os.O_RDONLY), None
        while True:
            try:
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise TunerError(f"{self.lock_path}: cannot make the lock file ({exc.strerror})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _read_pid(fd)
                os.close(fd)
                who = f"process {owner}" if owner else "another process"
                raise TunerError(f"{self.path} is in use by {who}") from None
            # the holder before us may have removed the file after we opened it: then ours is
            # an orphan that nobody else sees, and we must lock the file that is there now
            try:
                same = os.stat(self.lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        stale = _read_pid(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd, (stale if stale and stale != os.getpid() else None)

    def _remove_temporary_files(self) -> None:
        """Delete the temporary files of atomic writes that a killed process left behind."""
        for name in (self.config_path.name, self.metrics_path.name, self.weights_path.name, self.state_path.name,
                     self.data_path.name):
            for tmp in self.path.glob(f".{name}.*.tmp"):
                with contextlib.suppress(OSError):
                    tmp.unlink()

    @property
    def data_path(self) -> Path:
        return self.path / "data.json"

    def record_data(self, identity: dict[str, Any] | None) -> None:
        """Write ``data.json``: the position set the run starts on (:func:`data_identity`);
        nothing for a set without a manifest."""
        if identity is not None:
            _write(self.data_path, json.dumps(identity, indent=1, sort_keys=True) + "\n")

    def check_data(self, identity: dict[str, Any] | None, data: str) -> bool:
        """Refuse (one-line :class:`TunerError`) to resume on the position set ``data`` whose
        identity differs from the one recorded when the run started; False when the run recorded
        none (an earlier version's run folder, or a set without a manifest)."""
        try:
            recorded = loads_json(self.data_path.read_text(encoding="utf-8"), str(self.data_path))
        except FileNotFoundError:
            return False
        except (OSError, ValueError) as exc:
            raise TunerError(f"{self.data_path}: cannot be read ({exc.__class__.__name__}); the run's position "
                             "set cannot be checked") from None
        if identity is None or recorded != identity:
            raise TunerError(f"{data}: not the position set {self.path} started on ({_data_change(recorded, identity)}); "
                             f"resume with the set it started on, or start a new run")
        return True

    def holds_run(self) -> bool:
        """Whether the folder holds a started run (a checkpoint or metric lines)."""
        return self.state_path.exists() or self.metrics_path.exists()

    def check_new(self, *, overwrite: bool = False) -> None:
        """Refuse to start a run in a folder that already holds one, or that holds other files
        (anything but the lock and the temporary files of a killed run), unless ``overwrite``:
        then only the run's own files are replaced (:meth:`create`), the others stay."""
        if overwrite:
            return
        if self.holds_run():
            raise TunerError(f"{self.path}: already holds a run; continue it with --resume {self.path}, "
                             "replace it with --overwrite, or choose another --out")
        others = sorted(p.name for p in self.path.iterdir() if p.name != LOCK_NAME) if self.path.is_dir() else []
        if others:
            more = f" and {len(others) - 1} more" if len(others) > 1 else ""
            resume = f", --resume {self.path} if it is a run stopped before its first iteration" \
                if self.config_path.exists() else ""
            raise TunerError(f"{self.path}: not empty and holds no run ({others[0]!r}{more}); write the run into it "
                             f"with --overwrite (which replaces only a run's files){resume}, or choose another --out")

    def create(self, config_toml: str, *, overwrite: bool = False) -> None:
        """Start a new run: refuse a folder that already holds one (use ``--resume``), unless
        ``overwrite``, which deletes that run's files first."""
        self.check_new(overwrite=overwrite)
        for f in (self.state_path, self.metrics_path, self.path / "weights.json", self.path / "weights.mtnn",
                  self.data_path):
            f.unlink(missing_ok=True)
        self.path.mkdir(parents=True, exist_ok=True)
        _write(self.config_path, config_toml)

    def write_config(self, config_toml: str) -> None:
        _write(self.config_path, config_toml)

    def append_metrics(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, sort_keys=False, allow_nan=False)
        try:
            with self.metrics_path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:  # a line cut short is dropped on resume (torn tail)
            if exc.errno is None:
                raise
            raise OSError(exc.errno, exc.strerror, str(self.metrics_path)) from exc

    def _metric_lines(self) -> list[tuple[str, dict[str, Any]]]:
        """(line, record) of every line of ``metrics.jsonl``; a last line that is not
        terminated and does not parse (an append cut short by a kill or a full disk) is left
        out, any other line that is not a record is a one-line :class:`TunerError`."""
        try:
            raw = self.metrics_path.read_bytes()
        except FileNotFoundError:
            return []
        lines = raw.split(b"\n")
        out = []
        for n, chunk in enumerate(lines, start=1):
            last = n == len(lines)  # after the final newline: b"" in a well-formed file
            if not chunk.strip():
                continue
            try:
                text = chunk.decode("utf-8")
                record = loads_json(text, f"{self.metrics_path}:{n}")  # too deep: InputLimitError, a ValueError
                if not isinstance(record, dict) or not _is_iteration(record.get("iteration")):
                    raise ValueError("not a metrics record")
            except UnicodeDecodeError:
                if last:
                    break
                raise TunerError(f"{self.metrics_path}:{n}: not UTF-8 text (not a metrics file)") from None
            except ValueError:  # json.JSONDecodeError is a ValueError
                if last:
                    break
                raise TunerError(f"{self.metrics_path}:{n}: not a metrics record "
                                 "(a JSON object with an integer 'iteration')") from None
            out.append((text, record))
        return out

    def read_metrics(self) -> list[dict[str, Any]]:
        """The metric records, in file order; a one-line :class:`TunerError` names the first
        line that is not one. A last line cut short by a kill is left out."""
        return [record for _, record in self._metric_lines()]

    def truncate_metrics(self, iteration: int) -> None:
        """Keep the metric lines of iterations ``0..iteration`` (one each, the last written):
        lines of later iterations were written before a checkpoint that never came.

        Refuses (one-line :class:`TunerError`) when one of those iterations has no line.
        """
        by_iteration: dict[int, str] = {}
        for text, record in self._metric_lines():
            if record["iteration"] <= iteration:
                by_iteration[record["iteration"]] = text
        missing = [i for i in range(iteration + 1) if i not in by_iteration]
        if missing:
            raise TunerError(f"{self.metrics_path}: has no line for iteration {missing[0]}, but "
                             f"{self.state_path.name} is at iteration {iteration}: the run's metrics are "
                             "incomplete; start it again with --overwrite")
        _write(self.metrics_path, "".join(by_iteration[i] + "\n" for i in range(iteration + 1)))

    def save(self, checkpoint: Checkpoint, metadata: dict[str, Any], *, output: Evaluator | None = None) -> None:
        """Write ``weights.json`` or ``weights.mtnn`` (``output``, by default the checkpoint's
        evaluator) and then the checkpoint (the commit point), both atomically."""
        out = checkpoint.weights if output is None else output
        path = self.path / evaluator_file_name(out)
        if isinstance(out, QuantizedNetwork):
            try:
                save_evaluator(path, out, metadata)
            except OSError as exc:
                if exc.errno is None:
                    raise
                raise OSError(exc.errno, exc.strerror, str(path)) from exc
        else:
            _write(path, dumps(Weights(np.asarray(out, dtype=np.int32), metadata)))
        doc = {"schema": STATE_SCHEMA, "schema_version": STATE_VERSION, "catalog_hash": CATALOG_HASH,
               "method": checkpoint.method, "iteration": checkpoint.iteration,
               "weights": evaluator_to_json(checkpoint.weights), "extra": checkpoint.extra}
        _write(self.state_path, json.dumps(doc) + "\n")

    def load(self) -> Checkpoint | None:
        """The last checkpoint, or None when the run has not completed an iteration."""
        if not self.state_path.exists():
            return None
        where = str(self.state_path)
        try:
            doc = loads_json(self.state_path.read_text(encoding="utf-8"), where)
        except InputLimitError as exc:
            raise TunerError(str(exc)) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise TunerError(f"{where}: unreadable checkpoint ({exc.__class__.__name__})") from None
        if not isinstance(doc, dict) or doc.get("schema") != STATE_SCHEMA or doc.get("schema_version") != STATE_VERSION:
            raise TunerError(f"{where}: not a movetuner checkpoint of schema version {STATE_VERSION}")
        found = doc.get("catalog_hash")
        if found in LEGACY_CATALOGS:
            # the weights would migrate, but not the method's state (moments, population, ...)
            added = " and ".join(LEGACY_CATALOGS[found])
            raise TunerError(f"{where}: made for the earlier feature catalogue {found!r}, before the {added} "
                             "groups, and cannot be resumed exactly; start a new run from its weights: "
                             f"tuner tune --start {self.weights_path} ...")
        if found != CATALOG_HASH:
            raise TunerError(f"{where}: made for feature catalogue {found!r}, this version's is {CATALOG_HASH!r}")
        try:
            weights = evaluator_from_json(doc.get("weights"), f"{where}: 'weights'")
        except (WeightsFileError, NetworkFileError) as exc:
            raise TunerError(str(exc)) from None
        if isinstance(weights, np.ndarray) and len(weights) != N_FEATURES:
            raise TunerError(f"{where}: 'weights' must be {N_FEATURES} integers")
        iteration = doc.get("iteration")
        if not _is_iteration(iteration):
            raise TunerError(f"{where}: 'iteration' must be a non-negative integer")
        extra = doc.get("extra")
        if extra is not None and not isinstance(extra, dict):
            raise TunerError(f"{where}: 'extra' must be an object")
        return Checkpoint(str(doc.get("method")), iteration, weights, dict(extra or {}))

    def resume_point(self) -> Checkpoint | None:
        """The checkpoint ``--resume`` continues from; None when no iteration was completed
        (the run starts again from the beginning: nothing it did is lost).

        A run whose ``state.json`` is missing although it completed iterations cannot be
        resumed exactly (the optimizer's state, e.g. the GA's population and random state, is
        only there): that is refused with a one-line :class:`TunerError`.
        """
        checkpoint = self.load()
        if checkpoint is not None:
            return checkpoint
        in_metrics = max((r["iteration"] for r in self.read_metrics()), default=-1)
        in_weights = _saved_iteration(self.weights_path) if self.weights_path.exists() else -1
        if max(in_metrics, in_weights) >= 1:
            name, done = ((self.metrics_path.name, in_metrics) if in_metrics >= in_weights
                          else (self.weights_path.name, in_weights))
            raise TunerError(f"{self.state_path}: missing, but {name} records iterations up to {done}: "
                             "the run cannot be resumed exactly without its checkpoint; "
                             "start it again with --overwrite")
        return None


def data_identity(data: str | Path) -> dict[str, Any] | None:
    """What identifies the position set in folder ``data``: its inputs' names and SHA-256 and
    its ingest settings, from its manifest (the same inputs and settings give the same set,
    byte for byte); None when it has no readable manifest."""
    from tuner.ingest.reader import read_manifest  # noqa: PLC0415 - polars: only for a run

    try:
        manifest = read_manifest(data)
    except TunerError:
        return None
    inputs = manifest.get("inputs")
    if not isinstance(inputs, list) or not all(isinstance(i, dict) for i in inputs):
        return None
    return {"inputs": [{"name": i.get("name"), "sha256": i.get("sha256")} for i in inputs],
            "settings": manifest.get("config")}


def _data_change(recorded: Any, now: dict[str, Any] | None) -> str:
    """How the identity ``now`` of a position set differs from the ``recorded`` one, briefly."""
    if now is None:
        return "it has no readable manifest.json now"
    if not isinstance(recorded, dict):
        return "data.json is not a record of a position set"

    def inputs(identity: dict[str, Any]) -> str:
        items = identity.get("inputs") or []
        return ", ".join(f"{i.get('name')} {str(i.get('sha256'))[:12]}" for i in items if isinstance(i, dict))

    if recorded.get("inputs") != now["inputs"]:
        return f"its inputs were {inputs(recorded) or 'none'}, now {inputs(now)} (name, SHA-256)"
    before, after = recorded.get("settings") or {}, now.get("settings") or {}
    keys = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)) \
        if isinstance(before, dict) and isinstance(after, dict) else []
    if keys:
        return f"its ingest setting {keys[0]} was {before.get(keys[0])!r}, now {after.get(keys[0])!r}"
    return "its ingest settings differ"


def _write(path: Path, text: str) -> None:
    """Write a file of the run atomically; an OSError (a full or read-only disk) names ``path``
    itself rather than the temporary file beside it."""
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        if exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def _saved_iteration(path: Path) -> int:
    """The iteration (generation) a run's ``weights.json`` was saved at; 1 when unreadable, so
    that a damaged file counts as work that would be lost."""
    try:
        if path.suffix == ".mtnn":
            metadata = read_network(path).metadata
        else:
            metadata = loads_json(path.read_text(encoding="utf-8"), str(path)).get("metadata", {})
        value = metadata.get("iteration", metadata.get("generation"))
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return 1
    return value if _is_iteration(value) else 1


def _is_iteration(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _read_pid(fd: int) -> int | None:
    """The pid written in a lock file, or None."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
