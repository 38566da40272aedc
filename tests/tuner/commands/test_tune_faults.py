"""Fault injection: ``tuner tune`` processes killed (SIGKILL) or interrupted (Ctrl-C, SIGINT) at
seeded random points and resumed end with the same ``weights.json``, byte for byte, as an
uninterrupted run, and a ``metrics.jsonl`` with one line per iteration (issue 12)."""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tuner.training.run_folder import RunDir

pytestmark = pytest.mark.slow

MMTO = ["--method", "mmto", "--max-train", "200", "--max-validation", "50", "--inner-steps", "2",
        "--iterations", "8", "--patience", "8"]
GA = ["--method", "ga", "--population", "6", "--sample", "100", "--max-validation", "50", "--train", "material",
      "--generations", "6"]
INTERRUPTED = re.compile(r"^tuner tune: interrupted at iteration (\d+); resume with: tuner tune --resume \S+$")


def _start(sample_set: Path, run: Path, options: list[str]) -> subprocess.Popen[str]:
    """A new run into ``run``, or, once the folder holds one, its resumption (what a user does)."""
    if (run / "config.toml").exists():
        argv = ["--resume", str(run)]
    else:
        argv = ["--data", str(sample_set), "--out", str(run), *options]
    return subprocess.Popen([sys.executable, "-m", "tuner", "tune", *argv, "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _lines(run: Path) -> int:
    """Complete lines of metrics.jsonl (while a process may be appending to it)."""
    path = run / "metrics.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _iterations(run: Path) -> list[int]:
    path = run / "metrics.jsonl"
    return [json.loads(line)["iteration"] for line in path.read_text().splitlines()] if path.exists() else []


@dataclass
class Reference:
    weights: bytes  # weights.json of the uninterrupted run
    metrics: list[dict]  # type: ignore[type-arg]
    started: float  # seconds from launch to the first metric line
    total: float  # seconds from launch to exit
    stops: list[float] = field(default_factory=list)


def _metrics(run: Path) -> list[dict]:  # type: ignore[type-arg]
    return [{k: v for k, v in json.loads(line).items() if not k.endswith("seconds")}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


def _reference(sample_set: Path, run: Path, options: list[str]) -> Reference:
    """An uninterrupted run in a subprocess, timed after a run of iteration 0 only has made
    sure that the numba kernels are compiled and cached."""
    for warm in (True, False):
        _clear(run)
        start = time.monotonic()
        proc = _start(sample_set, run, [*options, "--iterations" if "mmto" in options else "--generations", "0"]
                      if warm else options)
        started = None
        while proc.poll() is None:
            if started is None and (run / "metrics.jsonl").exists():
                started = time.monotonic() - start
            time.sleep(0.01)
        total = time.monotonic() - start
        assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    started = started or total
    print(f"reference: first metric line after {started:.2f} s, done after {total:.2f} s")  # shown by -s
    return Reference((run / "weights.json").read_bytes(), _metrics(run), started, total)


def _finish(run: Path, ref: Reference) -> None:
    """The run is complete and the same as the reference."""
    iterations = _iterations(run)
    assert iterations == list(range(len(iterations))), f"duplicate or missing iterations: {iterations}"
    assert _metrics(run) == ref.metrics
    assert (run / "weights.json").read_bytes() == ref.weights
    assert not list(run.glob(".*.tmp")) and not (run / ".lock").exists()


def _clear(run: Path) -> None:
    if run.exists():
        for f in run.iterdir():
            f.unlink()
        run.rmdir()


def _kill_at_random(sample_set: Path, run: Path, options: list[str], ref: Reference, kills: int, seed: int) -> int:
    """Runs from scratch, each SIGKILLed at seeded random times and resumed until it finishes,
    until ``kills`` kills have landed; returns the number of runs."""
    rng = random.Random(seed)
    last = len(ref.metrics) - 1
    landed = runs = 0
    while landed < kills:
        _clear(run)
        runs += 1
        while True:
            checkpoint = RunDir(run).load() if (run / "state.json").exists() else None
            proc = _start(sample_set, run, options)
            # from late in the start-up (imports, data) to the end of a whole run: kills land
            # while loading, searching, updating, and writing the metrics and checkpoints; a
            # run whose last iteration is saved is left to finish
            delay = rng.uniform(0.7 * ref.started, ref.total)
            if checkpoint is not None and checkpoint.iteration == last:
                delay = 600.0
            try:
                proc.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                landed += 1
                print(f"kill {landed} after {delay:.2f} s: iterations {_iterations(run)[-1:]}")
                continue
            assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
            break
        _finish(run, ref)
    return runs


def _interrupt_at_random(sample_set: Path, run: Path, options: list[str], ref: Reference, stops: int,
                         seed: int) -> None:
    """Runs from scratch, each interrupted (SIGINT) at seeded random points after one of its
    iterations and resumed, until ``stops`` interruptions have landed. Every interrupted
    process must exit with code 130 and exactly one line on stderr, its last checkpoint
    matching that line, and nothing after it in the metrics."""
    rng = random.Random(seed)
    last = len(ref.metrics) - 1
    per_iteration = (ref.total - ref.started) / last
    landed = 0
    while landed < stops:
        _clear(run)
        while True:
            before = _lines(run)
            proc = _start(sample_set, run, options)
            target = None
            while proc.poll() is None:
                done = _lines(run)
                if target is None and done > before:
                    if last - (done - 1) < 3 or landed >= stops:  # near the end: let it finish
                        target = float("inf")
                    else:  # somewhere in the next iteration or the one after, never past the end
                        target = time.monotonic() + rng.uniform(0.0, 1.5 * per_iteration)
                if target is not None and time.monotonic() >= target:
                    sent = time.monotonic()
                    proc.send_signal(signal.SIGINT)
                    _, err = proc.communicate(timeout=60)
                    ref.stops.append(time.monotonic() - sent)
                    assert proc.returncode == 130, err
                    match = INTERRUPTED.match(err.strip())
                    assert match and err.count("\n") == 1, err
                    checkpoint = RunDir(run).load()
                    assert checkpoint is not None and checkpoint.iteration == int(match.group(1))
                    assert _iterations(run) == list(range(checkpoint.iteration + 1))  # nothing half-done
                    landed += 1
                    print(f"stop {landed} at iteration {checkpoint.iteration} in {ref.stops[-1]:.2f} s")
                    break
                time.sleep(0.005)
            else:
                _, err = proc.communicate()
                assert proc.returncode == 0, err
                break
        _finish(run, ref)


def faults(sample_set: Path, run: Path, kind: str, *, kills: int, stops: int, seed: int) -> dict[str, float]:
    """``kills`` SIGKILLs and ``stops`` Ctrl-Cs at seeded random points of ``kind``'s runs
    (``"mmto"`` or ``"ga"``), every run resumed to the end and checked against an uninterrupted
    one; figures of what landed (``bench/faults.py`` runs many more than the tests)."""
    options = MMTO if kind == "mmto" else GA
    ref = _reference(sample_set, run, options)
    assert [r["iteration"] for r in ref.metrics] == list(range(9 if kind == "mmto" else 7))
    runs = _kill_at_random(sample_set, run, options, ref, kills=kills, seed=seed)
    assert runs >= 1
    _interrupt_at_random(sample_set, run, options, ref, stops=stops, seed=seed + 1)
    return {"kills": kills, "runs_killed": runs, "stops": stops, "slowest_stop_seconds": max(ref.stops, default=0.0),
            "reference_seconds": ref.total}


def test_mmto_killed_and_interrupted_at_random_points_resumes_to_the_same_weights(
        sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"  # the same path throughout: weights.json records the run folder
    figures = faults(sample_set, run, "mmto", kills=2, stops=1, seed=0)
    assert figures["slowest_stop_seconds"] < 5.0, f"slowest stop after Ctrl-C: {figures['slowest_stop_seconds']:.2f} s"


def test_ga_killed_and_interrupted_at_random_points_resumes_to_the_same_weights(
        sample_set: Path, tmp_path: Path) -> None:
    faults(sample_set, tmp_path / "run", "ga", kills=1, stops=1, seed=2)
