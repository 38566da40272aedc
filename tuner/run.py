"""A training run's folder: config, metrics, weights and the resume checkpoint.

Layout of ``RUN/`` (shared by every optimizer):

=================  ==========================================================================
``config.toml``    the full configuration of the run (re-read by ``--resume``)
``metrics.jsonl``  one JSON object per outer iteration / generation, appended and fsynced
``weights.json``   the current weights in the evaluator's format (atomic writes)
``state.json``     the checkpoint ``--resume`` continues from (atomic writes): method, the
                   number of completed iterations, the weights and the optimizer's own state
=================  ==========================================================================

``state.json`` is the commit point: an iteration counts as done once its checkpoint is
written. On resume, metric lines of iterations after the checkpoint (written just before an
interruption) are dropped, so that the finished run is the same as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from search.catalog import CATALOG_HASH, N_FEATURES
from search.weights import Weights, atomic_write_text, save_weights
from tuner import __version__
from tuner.errors import TunerError

STATE_SCHEMA = "movetuner-run-state"
STATE_VERSION = 1


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
    weights: np.ndarray  # int32[N_FEATURES]
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
        return self.path / "weights.json"

    @property
    def state_path(self) -> Path:
        return self.path / "state.json"

    def create(self, config_toml: str, *, overwrite: bool = False) -> None:
        """Start a new run: refuse a folder that already holds one (use ``--resume``), unless
        ``overwrite``, which deletes that run's files first."""
        files = (self.state_path, self.metrics_path, self.weights_path)
        if any(f.exists() for f in files[:2]):
            if not overwrite:
                raise TunerError(f"{self.path}: already holds a run; continue it with --resume {self.path}, "
                                 "replace it with --overwrite, or choose another --out")
            for f in files:
                f.unlink(missing_ok=True)
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.config_path, config_toml)

    def write_config(self, config_toml: str) -> None:
        atomic_write_text(self.config_path, config_toml)

    def append_metrics(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, sort_keys=False, allow_nan=False)
        with self.metrics_path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def read_metrics(self) -> list[dict[str, Any]]:
        if not self.metrics_path.exists():
            return []
        out = []
        for n, line in enumerate(self.metrics_path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                raise TunerError(f"{self.metrics_path}:{n}: not a JSON line") from None
        return out

    def truncate_metrics(self, iteration: int) -> None:
        """Drop metric lines of iterations after ``iteration`` (written before a checkpoint)."""
        kept = [r for r in self.read_metrics() if int(r.get("iteration", 0)) <= iteration]
        atomic_write_text(self.metrics_path, "".join(json.dumps(r) + "\n" for r in kept))

    def save(self, checkpoint: Checkpoint, metadata: dict[str, Any]) -> None:
        """Write ``weights.json`` and then the checkpoint (the commit point), both atomically."""
        save_weights(self.weights_path, Weights(checkpoint.weights, metadata))
        doc = {"schema": STATE_SCHEMA, "schema_version": STATE_VERSION, "catalog_hash": CATALOG_HASH,
               "method": checkpoint.method, "iteration": checkpoint.iteration,
               "weights": [int(v) for v in checkpoint.weights], "extra": checkpoint.extra}
        atomic_write_text(self.state_path, json.dumps(doc) + "\n")

    def load(self) -> Checkpoint | None:
        """The last checkpoint, or None when the run has not completed an iteration."""
        if not self.state_path.exists():
            return None
        where = str(self.state_path)
        try:
            doc = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise TunerError(f"{where}: unreadable checkpoint ({exc.__class__.__name__})") from None
        if not isinstance(doc, dict) or doc.get("schema") != STATE_SCHEMA or doc.get("schema_version") != STATE_VERSION:
            raise TunerError(f"{where}: not a movetuner checkpoint of schema version {STATE_VERSION}")
        if doc.get("catalog_hash") != CATALOG_HASH:
            raise TunerError(f"{where}: made for feature catalogue {doc.get('catalog_hash')!r}, "
                             f"this version's is {CATALOG_HASH!r}")
        weights = doc.get("weights")
        if not isinstance(weights, list) or len(weights) != N_FEATURES or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in weights):
            raise TunerError(f"{where}: 'weights' must be {N_FEATURES} integers")
        iteration = doc.get("iteration")
        if not isinstance(iteration, int) or iteration < 0:
            raise TunerError(f"{where}: 'iteration' must be a non-negative integer")
        return Checkpoint(str(doc.get("method")), iteration, np.array(weights, dtype=np.int32),
                          dict(doc.get("extra") or {}))
