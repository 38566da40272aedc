"""``tuner selfplay --executor dask``: on a LocalCluster of two worker processes, the same seed
gives byte for byte the split files of a local run with two workers; a run resumes on the other
executor, also after games were lost, and gives the same set; a worker lost in the middle of a
game costs only time; a game that kills every worker it runs on stops the run with one line
naming it; Ctrl-C stops a run like a local one; a lost scheduler and set-up problems are
one-line errors.

The tests that start clusters of their own or kill workers are marked ``slow``. The cluster
tests are skipped, with the reason, when ``dask[distributed]`` is not installed.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from search.evaluation.evaluators import load_evaluator
from tuner.arena.match import DEFAULT_OPENINGS, load_openings
from tuner.errors import TunerError
from tuner.ingest.schema import SPLITS, split_file
from tuner.selfplay import SelfplayConfig, selfplay
from tuner.selfplay.run import PARTS, Journal

from tests.tuner.selfplay.test_run import CFG

#: the manifest's figures that differ from run to run (timings) or name where the games ran
_RUN_FIGURES = ("play_seconds", "positions_per_s", "elapsed_seconds")
_WHERE = ("workers", "executor", "scheduler")


@pytest.fixture(scope="module")
def cluster() -> Any:
    """Two worker processes (not threads), one task at a time each."""
    distributed = pytest.importorskip(
        "distributed", reason="dask[distributed] is not installed: pip install -e '.[dask]' (the test extra has it)")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as c:
        yield c


def _run(out: Path, games: int, cluster: Any | None = None, *, resume: bool = False, workers: int = 2,
         log: list[str] | None = None) -> dict[str, Any]:
    where = {"executor": "dask", "scheduler": cluster.scheduler_address} if cluster is not None else {}
    cfg = SelfplayConfig(games=games, workers=workers, **CFG, **where)  # type: ignore[arg-type]
    stream = _Lines(log if log is not None else [])
    return selfplay(load_evaluator("gm"), "gm", None, out, cfg, load_openings(DEFAULT_OPENINGS), "openings.epd",
                    resume=resume, progress=False, log=stream)  # type: ignore[arg-type]


class _Lines:
    """A log stream that keeps its lines."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def write(self, text: str) -> int:
        self.lines.extend(line for line in text.splitlines() if line.strip())
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / split_file(name)).read_bytes() for name in SPLITS}


def _manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """A manifest without the run's timings and the settings of where the games ran."""
    out = json.loads(json.dumps(manifest))
    for key in _RUN_FIGURES:
        out["selfplay"].pop(key)
    for key in _WHERE:
        out["config"].pop(key)
    return out


@pytest.fixture(scope="module")
def local_two(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("spd") / "local"
    return out, _run(out, 6)


def test_a_dask_run_writes_the_files_of_a_local_run_with_two_workers(cluster: Any, local_two: tuple[Path, Any],
                                                                     tmp_path: Path) -> None:
    local, local_manifest = local_two
    log: list[str] = []
    manifest = _run(tmp_path / "dask", 6, cluster, log=log)
    assert _files(tmp_path / "dask") == _files(local)  # byte for byte: the same rows, the same Parquet writer
    assert _manifest(manifest) == _manifest(local_manifest)
    assert manifest["config"]["executor"] == "dask" and manifest["selfplay"]["games_played_now"] == 6
    assert log[0].startswith("dask: 2 worker(s) at scheduler tcp://"), log
    seconds = {g["game"]: g.pop("seconds") for g in Journal(tmp_path / "dask", "gm").summaries.values()}
    assert sorted(seconds) == list(range(6))
    local_games = Journal(local, "gm").summaries
    for g in local_games.values():
        g.pop("seconds")
    assert Journal(tmp_path / "dask", "gm").summaries.keys() == local_games.keys()


def test_a_run_resumes_on_the_other_executor_and_after_lost_games(cluster: Any, local_two: tuple[Path, Any],
                                                                  tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    local, _ = local_two
    monkeypatch.setattr("tuner.selfplay.run.FLUSH_GAMES", 1)  # a part per game: a kill loses the games since
    out = tmp_path / "moved"
    _run(out, 2, workers=1)  # started locally
    _run(out, 4, cluster, resume=True)  # more games, on the cluster
    parts = sorted((out / PARTS).glob("part-*.json"))
    assert len(parts) == 4
    for meta in parts[-2:]:  # as if the driver was killed before those games' parts were complete
        meta.unlink()
    assert len(Journal(out, "gm").summaries) == 2
    manifest = _run(out, 6, cluster, resume=True)
    assert manifest["selfplay"]["games_played_now"] == 4
    assert _files(out) == _files(local)
    manifest = _run(out, 6, resume=True)  # and back: nothing to play, the set rebuilt locally
    assert manifest["selfplay"]["games_played_now"] == 0 and _files(out) == _files(local)


def test_set_up_problems_are_one_line_errors_and_leave_the_folder_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.cli import main  # noqa: PLC0415

    common = ["selfplay", "gm", "--games", "2", "--nodes", "300", "--no-progress"]

    def refused(*args: str) -> str:
        assert main([*common, *args]) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(err) == 1, err
        return err[0]

    # nothing listens there
    monkeypatch.setattr("tuner.selfplay.dask_play.CONNECT_SECONDS", 1.0)
    out = tmp_path / "bad"
    line = refused("--out", str(out), "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9")
    assert "--scheduler tcp://127.0.0.1:9: cannot connect" in line
    assert not (out / "selfplay.json").exists()  # a run with the right address starts here, without --overwrite
    # distributed absent: the message tuner tune gives
    monkeypatch.setitem(sys.modules, "distributed", None)
    line = refused("--out", str(out), "--executor", "dask", "--workers", "1")
    assert "--executor dask needs Dask's distributed scheduler: pip install 'movetuner[dask]'" in line
    monkeypatch.undo()
    # a scheduler without the dask executor; an executor that does not exist
    assert "scheduler is an option of executor dask" in refused("--out", str(out), "--scheduler", "tcp://h:1")
    assert "executor must be one of local, dask, not 'slurm'" in refused("--out", str(out), "--executor", "slurm")
    assert not (out / "selfplay.json").exists()


def _dies_on(marker: str, games: tuple[int, ...], *args: Any) -> Any:
    """A game's task (:func:`tuner.selfplay.dask_play._play_task`) whose worker process dies in
    the middle of game ``games``: once, when ``marker`` is a file name (the file is made
    first), or every time (``marker`` empty)."""
    from tuner.selfplay.dask_play import _play_task  # noqa: PLC0415

    if args[3] in games and (not marker or not os.path.exists(marker)):
        if marker:
            Path(marker).touch()
        os._exit(1)  # the process ends at once, as when it is killed
    return _play_task(*args)


def _workers_back(cluster: Any) -> None:
    import distributed  # noqa: PLC0415

    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)  # the nanny restarts a lost worker


@pytest.mark.slow
def test_a_worker_lost_in_a_game_costs_only_time(cluster: Any, local_two: tuple[Path, Any], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    local, _ = local_two
    monkeypatch.setattr("tuner.selfplay.dask_play._play_task",
                        functools.partial(_dies_on, str(tmp_path / "died"), (3,)))
    log: list[str] = []
    try:
        manifest = _run(tmp_path / "lost", 6, cluster, log=log)
    finally:
        _workers_back(cluster)
    assert (tmp_path / "died").exists()  # the worker did die in game 3
    assert manifest["selfplay"]["games_played_now"] == 6 and _files(tmp_path / "lost") == _files(local)
    assert any("was lost during selfplay" in line and "recomputed" in line for line in log), log


@pytest.mark.slow
def test_a_game_that_kills_every_worker_stops_the_run_with_one_line_naming_it(cluster: Any, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tuner.selfplay.dask_play._play_task", functools.partial(_dies_on, "", (1,)))
    monkeypatch.setattr("tuner.selfplay.run.FLUSH_GAMES", 1)
    scheduler = cluster.scheduler
    allowed, scheduler.allowed_failures = scheduler.allowed_failures, 0  # the first death is the last
    out = tmp_path / "killer"
    try:
        with pytest.raises(TunerError) as err:
            _run(out, 3, cluster)
    finally:
        scheduler.allowed_failures = allowed
        _workers_back(cluster)
    # game 1 is named, or a game that ran beside it on the worker it killed (that worker's
    # tasks all count a failure; with none allowed, each of them stops the run)
    text = str(err.value)
    assert "\n" not in text and re.match(r"dask: game [012] lost its worker too many times", text), text
    assert text.endswith(f"games saved in {out}; --resume goes on)")
    saved = Journal(out, "gm").summaries
    assert 1 not in saved and set(saved) <= {0, 2}


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs process groups")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_to_the_group_stops_a_dask_run_with_one_line(tmp_path: Path, signum: int) -> None:
    # a SIGINT to the whole process group, as a terminal sends it, or a SIGTERM to it (a batch
    # system's stop): the LocalCluster's workers ignore both; the driver cancels the games in
    # flight, saves the finished ones and closes the cluster
    out = tmp_path / "long"
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "selfplay", "gm", "--out", str(out), "--games", "4",
                             "--nodes", "200000", "--executor", "dask", "--workers", "2", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            # as from a terminal: a job started in the background of a script
                            # inherits SIGINT ignored, and Python then never raises Ctrl-C
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not (out / "selfplay.json").exists():  # written once the cluster is up
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(3)  # the workers are playing their first games
        os.killpg(proc.pid, signum)
        started = time.monotonic()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert time.monotonic() - started < 20
    assert proc.returncode == (130 if signum == signal.SIGINT else 143), err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[0].startswith("dask: 2 worker(s) at a LocalCluster of 2 worker processes"), err
    assert len(lines) == 2 and "interrupted: 0 games saved" in lines[1] and "--resume" in lines[1], err


_SCHEDULER = """
import logging, time, distributed
c = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=':0',
                             silence_logs=logging.ERROR)
print(c.scheduler_address, flush=True)
time.sleep(600)
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs process groups")
def test_a_lost_scheduler_is_one_line(tmp_path: Path) -> None:
    # the scheduler (and its worker) killed in the middle of the games: distributed's client
    # logged its cancelled reconnection as an ERROR traceback after the run's own line
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    holder = subprocess.Popen([sys.executable, "-c", _SCHEDULER], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    out = tmp_path / "orphan"
    try:
        assert holder.stdout is not None
        address = holder.stdout.readline().strip()
        proc = subprocess.Popen([sys.executable, "-m", "tuner", "selfplay", "gm", "--out", str(out), "--games", "4",
                                 "--nodes", "200000", "--executor", "dask", "--scheduler", address, "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (out / "selfplay.json").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(2)
        os.killpg(holder.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    assert proc.returncode == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 2 and lines[0].startswith(f"dask: 1 worker(s) at scheduler {address}"), err
    assert re.match(r"tuner selfplay: error: dask: (game \d was lost|lost the scheduler)", lines[1]), err
    assert lines[1].endswith(f"(0 games saved in {out}; --resume goes on)"), err
