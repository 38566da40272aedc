"""tuner.selfplay.run and ``tuner selfplay``: the position set, its independence of the number of
workers and of interruptions, resume, and the refusals."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from search.evaluation.evaluators import load_evaluator
from tuner.arena.match import DEFAULT_OPENINGS, load_openings
from tuner.errors import TunerError
from tuner.ingest.reader import read_manifest, read_split
from tuner.ingest.schema import SCHEMA, SPLITS
from tuner.ingest.split import stable_splits
from tuner.selfplay import SelfplayConfig, selfplay
from tuner.selfplay.run import PARTS, Journal

CFG = {"nodes": 300, "max_plies": 40, "start_nodes": 200, "seed": 3}


def _run(out: Path, games: int, workers: int, *, resume: bool = False) -> dict[str, object]:
    cfg = SelfplayConfig(games=games, workers=workers, **CFG)  # type: ignore[arg-type]
    return selfplay(load_evaluator("gm"), "gm", None, out, cfg, load_openings(DEFAULT_OPENINGS), "openings.epd",
                    resume=resume, progress=False)


def _frames(folder: Path) -> dict[str, pl.DataFrame]:
    return {name: read_split(folder, name) for name in SPLITS}


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sp") / "two"
    _run(out, 6, 2)
    return out


def test_the_set_holds_every_game_split_by_game_with_scores_and_results(two_workers: Path) -> None:
    manifest = read_manifest(two_workers)
    frames = _frames(two_workers)
    rows = pl.concat(list(frames.values()))
    assert list(rows.columns) == list(SCHEMA)
    assert rows["game_id"].n_unique() == 6 == manifest["games"]["kept"]
    assert manifest["positions"]["kept"] == rows.height > 0
    assert rows["score"].null_count() == 0 and rows["move"].null_count() == 0
    assert set(rows["result"].unique().to_list()) <= {"1-0", "0-1", "1/2-1/2"}
    per_game = rows.group_by("game_id").agg(pl.col("result").n_unique())
    assert per_game["result"].max() == 1
    ids = [set(f["game_id"].unique().to_list()) for f in frames.values()]
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    sp = manifest["selfplay"]
    assert sum(sp["results"].values()) == 6 and sum(sp["terminations"].values()) == 6
    assert sp["positions_per_s"] > 0


def test_one_worker_and_a_resumed_interrupted_run_give_the_same_set(two_workers: Path, tmp_path: Path) -> None:
    one = tmp_path / "one"
    _run(one, 6, 1)
    want = _frames(two_workers)
    assert all(want[n].equals(f) for n, f in _frames(one).items())
    # a run of 3 games, a part lost as a kill would lose it, then resumed to 6 games
    part = tmp_path / "resumed"
    _run(part, 2, 1)
    _run(part, 4, 1, resume=True)
    metas = sorted((part / PARTS).glob("part-*.json"))
    assert len(metas) == 2
    metas[-1].unlink()  # as if killed before the part's summaries were written
    assert len(Journal(part, "gm").summaries) == 2
    manifest = _run(part, 6, 2, resume=True)
    assert manifest["selfplay"]["games_played_now"] == 4  # type: ignore[index]
    assert all(want[n].equals(f) for n, f in _frames(part).items())


def test_each_part_records_its_search_and_a_resume_after_a_change_is_counted(two_workers: Path,
                                                                              tmp_path: Path) -> None:
    """Issue 60 item 5 carries a generation across sessions whose search changes: each part
    records the search's fingerprint, and the manifest counts the games each version played."""
    from tuner.selfplay.run import search_sha256

    now = search_sha256()
    assert len(now) == 16 and int(now, 16) >= 0
    metas = sorted((two_workers / PARTS).glob("part-*.json"))
    assert {json.loads(m.read_text())["search_sha256"] for m in metas} == {now}
    assert read_manifest(two_workers)["selfplay"]["searches"] == {now: 6}
    folder = tmp_path / "changed"
    _run(folder, 3, 1)
    _run(folder, 6, 1, resume=True)  # two parts
    for meta, old in zip(sorted((folder / PARTS).glob("part-*.json")), ("0123456789abcdef", None), strict=True):
        part = json.loads(meta.read_text())  # as if played by an older search, or before it was recorded
        part.pop("search_sha256")
        meta.write_text(json.dumps({"search_sha256": old, **part} if old else part))
    recorded = Journal(folder, "gm").search_of
    assert sorted(recorded) == list(range(6)) and None in recorded.values()
    log = io.StringIO()
    cfg = SelfplayConfig(games=8, workers=1, **CFG)  # type: ignore[arg-type]
    manifest = selfplay(load_evaluator("gm"), "gm", None, folder, cfg, load_openings(DEFAULT_OPENINGS),
                        "openings.epd", resume=True, progress=False, log=log)
    counts = manifest["selfplay"]["searches"]
    assert counts == {now: 2, "0123456789abcdef": 3, "unrecorded": 3}
    assert f"the search changed since some of these games were played (now {now}" in log.getvalue()
    assert read_manifest(folder)["selfplay"]["searches"] == counts
    # each game's split comes from its number alone (stable_splits), so the grown set (8 games)
    # keeps the split of each of the 6 games of the same seed
    grown, six = _frames(folder), _frames(two_workers)
    want = stable_splits(range(8), SelfplayConfig().split, CFG["seed"])
    for name in SPLITS:
        assert sorted(set(grown[name]["game_id"])) == want[name].tolist()
        assert sorted(set(grown[name].filter(pl.col("game_id") < 6)["game_id"])) == sorted(set(six[name]["game_id"]))
    meta = sorted((folder / PARTS).glob("part-*.json"))[0]
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "search_sha256": 7}))
    with pytest.raises(TunerError, match=r"part-00000\.json: not a readable self-play part.*search_sha256 is 7"):
        Journal(folder, "gm")


def test_the_search_fingerprint_is_of_the_code_not_its_words(tmp_path: Path) -> None:
    """A change of docstrings, comments or layout leaves :func:`code_sha256` as it was (a resumed
    generation then does not report a changed search); a changed constant, statement or file
    name changes it."""
    from tuner.selfplay.run import code_sha256

    base = '''"""A module."""

LIMIT = 3


class Mover:
    """Moves."""

    def best(self, x):
        """The best of x."""
        return max(x, LIMIT)  # at least LIMIT
'''
    reworded = base.replace('"""A module."""', '"""A module, reworded\n\nat length."""')
    reworded = reworded.replace("# at least LIMIT", "# never below the limit").replace("\n\n\nclass", "\n\nclass")
    reworded = reworded.replace('"""The best of x."""', "# no docstring now")
    variants = {"base": base, "reworded": reworded, "constant": base.replace("LIMIT = 3", "LIMIT = 4"),
                "statement": base.replace("max(x, LIMIT)", "min(x, LIMIT)"), "only_doc": '"""Words."""\n'}
    digests = {}
    for name, text in variants.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "m.py").write_text(text)
        digests[name] = code_sha256([folder / "m.py"], folder)
    assert digests["reworded"] == digests["base"]
    assert len({digests[k] for k in ("base", "constant", "statement", "only_doc")}) == 4
    (tmp_path / "base" / "n.py").write_text(base)
    assert code_sha256([tmp_path / "base" / "n.py"], tmp_path / "base") != digests["base"]  # the path counts


def test_a_new_run_refuses_a_folder_that_is_not_empty_and_resume_refuses_other_settings(two_workers: Path,
                                                                                        tmp_path: Path) -> None:
    with pytest.raises(TunerError, match="not empty"):
        _run(two_workers, 6, 1)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    cfg = SelfplayConfig(games=2, workers=1, **CFG)  # type: ignore[arg-type]
    with pytest.raises(TunerError, match="no self-play folder"):
        selfplay(load_evaluator("gm"), "gm", None, other, cfg, load_openings(DEFAULT_OPENINGS), "x",
                 overwrite=True, progress=False)
    assert (other / "notes.txt").read_text() == "mine"
    changed = SelfplayConfig(games=6, workers=1, **{**CFG, "nodes": 301})  # type: ignore[arg-type]
    with pytest.raises(TunerError, match=r"other settings \(nodes\)"):
        selfplay(load_evaluator("gm"), "gm", None, two_workers, changed, load_openings(DEFAULT_OPENINGS),
                 "openings.epd", resume=True, progress=False)
    with pytest.raises(TunerError, match="player"):
        selfplay(load_evaluator("classic"), "classic", None, two_workers,
                 SelfplayConfig(games=6, workers=1, **CFG),  # type: ignore[arg-type]
                 load_openings(DEFAULT_OPENINGS), "openings.epd", resume=True, progress=False)


@pytest.mark.parametrize("damage", ["garbage", "pages-zeroed"])
def test_a_garbled_part_is_one_line_naming_it_on_resume(two_workers: Path, tmp_path: Path, damage: str) -> None:
    # issue 58 item 8: a polars ComputeError traceback
    folder = tmp_path / "sp"
    shutil.copytree(two_workers, folder)
    part = folder / PARTS / "part-00000.parquet"
    data = part.read_bytes()
    if damage == "garbage":  # no footer: refused when the journal is read, before any game
        part.write_bytes(b"not parquet at all\n" * 50)
    else:  # the footer whole, the pages zeroed: refused when the rows are read
        footer = int.from_bytes(data[-8:-4], "little") + 8
        part.write_bytes(data[:4] + bytes(len(data) - 4 - footer) + data[-footer:])
    cfg = SelfplayConfig(games=6, workers=1, **CFG)  # type: ignore[arg-type]
    with pytest.raises(TunerError) as err:
        selfplay(load_evaluator("gm"), "gm", None, folder, cfg, load_openings(DEFAULT_OPENINGS), "openings.epd",
                 resume=True, progress=False)
    text = str(err.value)
    assert text.startswith(f"{part}: not a readable self-play part (") and "\n" not in text
    assert text.endswith("remove it and its .json to replay its games")


def test_a_folder_where_the_next_part_goes_is_named_not_the_temporary_file(two_workers: Path,
                                                                           tmp_path: Path) -> None:
    folder = tmp_path / "sp"
    shutil.copytree(two_workers, folder)
    parts = sorted((folder / PARTS).glob("part-*.json"))
    blocker = folder / PARTS / f"part-{len(parts):05d}.parquet"
    blocker.mkdir()
    with pytest.raises(TunerError) as err:
        _run(folder, 7, 1, resume=True)
    text = str(err.value)
    assert text.startswith(f"{blocker}: a folder stands where the next part goes; move it away and resume")
    assert ".tmp" not in text and "\n" not in text


_HOLDER = """
import sys, time
from tuner.training.run_folder import RunDir
with RunDir(sys.argv[1]).lock(create=True):
    print("locked", flush=True)
    time.sleep(120)
"""


def test_a_folder_in_use_is_refused_naming_the_process_and_resume_with_overwrite_is_refused(
        two_workers: Path, tmp_path: Path) -> None:
    # issue 58 item 3: two runs into one folder both went on, and one run's games were lost
    cfg = SelfplayConfig(games=6, workers=1, **CFG)  # type: ignore[arg-type]
    before = sorted(p.name for p in (two_workers / PARTS).iterdir())
    assert not (two_workers / ".lock").exists()  # the run that wrote it let it go
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(two_workers)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        for resume, overwrite in ((True, False), (False, True)):
            with pytest.raises(TunerError) as err:
                selfplay(load_evaluator("gm"), "gm", None, two_workers, cfg, load_openings(DEFAULT_OPENINGS),
                         "openings.epd", resume=resume, overwrite=overwrite, progress=False)
            assert str(err.value) == f"{two_workers} is in use by process {holder.pid}"
    finally:
        holder.kill()
        holder.wait()
    assert sorted(p.name for p in (two_workers / PARTS).iterdir()) == before
    with pytest.raises(TunerError, match="^--overwrite cannot be combined with --resume$"):
        selfplay(load_evaluator("gm"), "gm", None, tmp_path / "new", cfg, load_openings(DEFAULT_OPENINGS),
                 "openings.epd", resume=True, overwrite=True, progress=False)
    assert not (tmp_path / "new").exists()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tuner", "selfplay", *args], capture_output=True, text=True,
                          timeout=300)


def test_the_command_plays_exports_and_says_what_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    r = _cli("gm", "--out", str(out), "--games", "2", "--nodes", "300", "--max-plies", "30", "--workers", "1",
             "--export", str(tmp_path / "x.txt"))
    assert r.returncode == 0, r.stderr
    assert "selfplay: 2 games" in r.stdout and f"wrote {out}" in r.stdout
    lines = (tmp_path / "x.txt").read_text().splitlines()
    assert len(lines) == read_manifest(out)["positions"]["kept"]
    assert json.loads((out / "selfplay.json").read_text())["config"]["nodes"] == 300


@pytest.mark.parametrize("export, message", [
    ("{w}", "--export names an input of the command"),
    ("{openings}", "--export names an input of the command"),
    ("{other}", "exists; --overwrite is for the self-play folder, not the export"),
], ids=["the-player's-weights", "the-openings", "an-existing-file"])
def test_an_export_over_an_existing_file_is_refused_even_with_overwrite(tmp_path: Path, export: str, message: str,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # issue 58 item 1: `--overwrite --export w.json` replaced the player's own weights
    from search.params.weights import BUILTIN_DIR  # noqa: PLC0415
    from tuner.cli import main  # noqa: PLC0415

    files = {"w": tmp_path / "w.json", "openings": tmp_path / "o.epd", "other": tmp_path / "x.txt"}
    files["w"].write_bytes((BUILTIN_DIR / "material.json").read_bytes())
    files["openings"].write_text(DEFAULT_OPENINGS.read_text())
    files["other"].write_text("keep me\n")
    before = {k: f.read_bytes() for k, f in files.items()}
    code = main(["selfplay", str(files["w"]), "--out", str(tmp_path / "sp"), "--overwrite", "--openings",
                 str(files["openings"]), "--games", "2", "--nodes", "200",
                 "--export", export.format(**{k: str(f) for k, f in files.items()})])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err
    assert {k: f.read_bytes() for k, f in files.items()} == before
    assert not (tmp_path / "sp").exists()


@pytest.mark.parametrize("args, message", [
    (["gm", "--games", "0"], "games must be from 1 to 1,000,000, not 0"),
    (["gm", "--nodes", "0"], "give a node budget"),
    (["gm", "--split", "0.5,0.5,0.5"], "split must be"),
    (["no-such-weights.json"], "no-such-weights.json"),
    ([], "needs one player"),
    (["gm", "--openings", "/no/such/openings.epd"], "no such openings file"),
])
def test_bad_settings_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    r = _cli(*args, "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if "compiling kernels" not in ln]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in r.stderr
    assert not (tmp_path / "o" / "manifest.json").exists()


def test_an_external_uci_engine_plays_itself_too(tmp_path: Path) -> None:
    # tuner uci as the external engine, with the engine's own scores from its info lines
    out = tmp_path / "uci"
    r = _cli("--engine", f"{sys.executable} -m tuner uci", "--out", str(out), "--games", "1", "--nodes", "300",
             "--max-plies", "12", "--random-plies", "0", "--workers", "1")
    assert r.returncode == 0, r.stderr
    rows = pl.concat(list(_frames(out).values()))
    assert 0 < rows.height <= 12
    assert rows["score"].null_count() == 0 and rows["move"].null_count() == 0
    assert rows["white"][0] == rows["black"][0] != "gm"


@pytest.mark.parametrize(("signum", "group", "code"), [
    (signal.SIGINT, False, 130),  # `kill -INT PID`
    (signal.SIGTERM, False, 143),  # `kill PID`: it stopped the command at once, without the games not yet in a part
    (signal.SIGTERM, True, 143),  # `timeout`, `kill -- -PGID`: the workers get it too
])
def test_ctrl_c_or_sigterm_stops_at_once_without_waiting_for_the_games_in_flight(tmp_path: Path, signum: int, group: bool,
                                                                      code: int) -> None:
    # games of 200,000 nodes a move take minutes: the interrupted run must not wait for them
    out = tmp_path / "long"
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "selfplay", "gm", "--out", str(out), "--games", "4",
                             "--nodes", "200000", "--workers", "2", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=group,
                            # as from a terminal: a job started in the background of a script
                            # inherits SIGINT ignored, and Python then never raises Ctrl-C
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not (out / "selfplay.json").exists():  # written before the first game is handed out
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(3)  # the workers are playing their first games
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)  # to the command only
        started = time.monotonic()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - started < 20
    assert proc.returncode == code, err
    assert "interrupted: 0 games saved" in err and "--resume" in err
    # nothing from the pool's threads at exit, no "leaked semaphore" from the resource tracker
    assert "Traceback" not in err and "Error" not in err and "leaked" not in err, err
    assert err.strip().splitlines()[-1].startswith("tuner selfplay: interrupted"), err


def test_sigterm_is_handled_as_ctrl_c_and_restored_after() -> None:
    from tuner.errors import DeferredSigint, Interrupted, SigtermAsCtrlC, check_interrupt  # noqa: PLC0415

    before = signal.getsignal(signal.SIGTERM)
    with SigtermAsCtrlC().installed() as term:
        with DeferredSigint():  # noted, raised at the next check
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)
            with pytest.raises(Interrupted):
                check_interrupt()
        assert term.received
        with pytest.raises(KeyboardInterrupt):  # Python's own SIGINT handler
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            with pytest.raises(KeyboardInterrupt):  # SIGINT ignored does not make SIGTERM ignored
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
        finally:
            signal.signal(signal.SIGINT, ignored)
    assert signal.getsignal(signal.SIGTERM) is before


def test_stopping_the_pool_ends_its_manager_thread_before_the_interpreter_exits() -> None:
    # issue 58 item 9: after Ctrl-C, the interpreter's exit woke the pool's manager thread through
    # a pipe that thread was closing: "OSError: [Errno 9] Bad file descriptor" after the hint
    import concurrent.futures  # noqa: PLC0415
    import multiprocessing  # noqa: PLC0415

    from tuner.selfplay.run import _stop_pool  # noqa: PLC0415

    pool = concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))
    futures = [pool.submit(time.sleep, 60) for _ in range(4)]
    deadline = time.monotonic() + 60
    while not any(f.running() for f in futures):  # the workers are up and busy
        assert time.monotonic() < deadline
        time.sleep(0.05)
    manager = pool._executor_manager_thread  # type: ignore[attr-defined]
    workers = list(pool._processes.values())  # type: ignore[attr-defined]
    assert manager is not None and manager.is_alive()
    started = time.monotonic()
    _stop_pool(pool)
    assert time.monotonic() - started < 10
    assert not any(w.is_alive() for w in workers)
    assert not manager.is_alive()


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask") or not Path("/proc/self/status").exists(),
                    reason="needs POSIX signal masks and /proc")
def test_workers_never_see_a_ctrl_c_to_the_group_and_one_meanwhile_is_held_not_lost() -> None:
    # issue 58 item 9: `timeout -s INT` signals the whole process group; a worker still starting
    # (before its initializer ignores SIGINT) printed a KeyboardInterrupt traceback
    import concurrent.futures  # noqa: PLC0415
    import multiprocessing  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from tuner.selfplay.run import _stop_signals_held  # noqa: PLC0415

    def blocked(pid: int) -> bool:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        mask = int(next(line for line in status if line.startswith("SigBlk:")).split()[1], 16)
        return bool(mask & (1 << (signal.SIGINT - 1)))

    pool = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    try:
        with _stop_signals_held():
            future = pool.submit(os.getpid)
        worker = future.result(timeout=120)
        assert blocked(worker) and not blocked(os.getpid())
    finally:
        pool.shutdown()
    for send in (lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT),  # this thread's, blocked
                 lambda: os.kill(os.getpid(), signal.SIGINT)):  # the process's: any thread may take it
        reached = False
        with pytest.raises(KeyboardInterrupt):
            with _stop_signals_held():
                send()
                time.sleep(0.2)
                reached = True
        assert reached


@pytest.mark.parametrize(("search", "player"), [([], "material@play"), (["--search", "exact"], "material"),
                                                (["--search", "depth"], "material")])
def test_the_set_records_its_player_with_its_search(tmp_path: Path, search: list[str], player: str) -> None:
    # issue 57: self-play searches with the playing search by default, recorded as NAME@play; the
    # exact search keeps the bare name, which every set before issue 57 recorded (so they resume)
    from tuner.cli import main  # noqa: PLC0415

    out = tmp_path / "sp"
    assert main(["selfplay", "material", "--out", str(out), "--games", "2", "--nodes", "300", "--workers", "1",
                 "--no-progress", *search]) == 0
    assert json.loads((out / "selfplay.json").read_text())["player"] == player


def test_the_set_is_written_compact_with_format_and_rebuilt_in_either(tmp_path: Path) -> None:
    out = tmp_path / "compact"
    cfg = SelfplayConfig(games=2, workers=1, **CFG)  # type: ignore[arg-type]
    args = (load_evaluator("gm"), "gm", None, out, cfg, load_openings(DEFAULT_OPENINGS), "openings.epd")
    manifest = selfplay(*args, progress=False, split_format="compact")
    assert manifest["splits"]["train"]["file"] == "train.mtpos" and not list(out.glob("*.parquet"))
    compact = _frames(out)
    selfplay(*args, progress=False, resume=True)  # nothing to play: the set rebuilt as Parquet
    assert not list(out.glob("*.mtpos")) and (out / "train.parquet").is_file()
    stored = ["game_id", "ply", "fen", "move", "stm", "result", "score", "n_legal", "zobrist"]
    assert all(f.select(stored).equals(compact[n].select(stored)) for n, f in _frames(out).items())
    assert sum(f.height for f in compact.values()) == manifest["positions"]["kept"] > 0


@pytest.mark.parametrize(("progress", "plain"), [(None, True), (True, True), (False, False)])
def test_a_log_gets_plain_progress_lines_unless_no_progress(tmp_path: Path, progress: bool | None,
                                                             plain: bool) -> None:
    """The command's default (``progress=None``) meant tqdm's "terminal only": a 9,000-game run
    with its standard error in a log said nothing for 80 minutes; now a log gets plain lines (at
    least every PROGRESS_LOG_SECONDS), ``--no-progress`` none."""
    import io

    from tuner.progress import PlainProgress
    from tuner.selfplay.run import Journal, Recorder, _Tally

    recorder = Recorder(Journal(tmp_path, "gm"), _Tally(), 10, progress, io.StringIO())
    assert isinstance(recorder.bar, PlainProgress) is plain
    recorder.bar.close()
