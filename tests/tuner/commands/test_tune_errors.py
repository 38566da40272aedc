"""``tuner tune`` and friends fail with one line, never a traceback, and never corrupt a run
(issue 12): locked run folders, a lost ``state.json``, Ctrl-C inside a numba kernel, a full or
read-only disk, garbage in ``metrics.jsonl``, and options that were accepted silently (NaN,
infinities, impossible ranges)."""

from __future__ import annotations

import errno
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tuner.training.run_folder
from search.tree.search_api import DEFAULT_BUDGET, move_match, sweep
from search.tree.batch import CHUNK
from search.params.catalog import CATALOG_HASH, FEATURE_NAMES
from search.params.weights import load_weights
from tuner.cli import main
from tuner.compiling import COMPILING_NOTE
from tuner.errors import DeferredSigint, Interrupted, check_interrupt, is_interrupt
from tuner.training.run_folder import RunDir
from tuner.training.paced import Pacer, paced_move_match, paced_sweep
from tuner.training.training_data import load_training_data
from tuner.training.tune_config import TuneConfig
from tests.conftest import REPO

FAST = ["--max-train", "150", "--max-validation", "50", "--inner-steps", "2", "--quiet"]
INTERRUPTED = re.compile(r"^tuner tune: interrupted at iteration (\d+); resume with: tuner tune --resume \S+$")


def _last_words(err: str) -> str:
    """A stopped child's stderr without the note a cold numba cache prints first (exactly that
    line: any other line still fails the match)."""
    return "\n".join(line for line in err.strip().splitlines() if line != f"tuner tune: note: {COMPILING_NOTE}")


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a refused command wrote to stderr (besides the note of a cold numba cache:
    the checks before the refusal may compile a kernel)."""
    err = _last_words(capsys.readouterr().err).splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def _metrics(run: Path) -> list[dict]:  # type: ignore[type-arg]
    return [{k: v for k, v in json.loads(line).items() if not k.endswith("seconds")}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


def _wait_for(proc: subprocess.Popen[str], path: Path, seconds: float) -> None:
    """Until ``path`` exists, while ``proc`` runs (it must not exit first) for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)


def _tune(sample_set: Path, run: Path, *extra: str) -> int:
    return main(["tune", "--data", str(sample_set), "--out", str(run), *FAST, *extra])


@pytest.fixture(scope="module")
def full(sample_set: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of 3 iterations, to compare interrupted and resumed ones with."""
    run = tmp_path_factory.mktemp("full") / "run"
    assert _tune(sample_set, run, "--iterations", "3") == 0
    return run


def _same_run(run: Path, full: Path) -> None:
    assert _metrics(run) == _metrics(full)
    assert load_weights(run / "weights.json").values.tolist() == load_weights(full / "weights.json").values.tolist()


# ---------------------------------------------------------------- options accepted silently


@pytest.mark.parametrize(("argv", "message"), [
    (["--l1", "nan"], "l1 must be a finite number, not nan"),
    (["--l1", "inf"], "l1 must be a finite number, not inf"),
    (["--window", "nan"], "window must be a finite number"),
    (["--min-improvement", "nan"], "min_improvement must be a finite number"),
    (["--slope", "inf"], "slope must be a finite number"),
    (["--method", "ga", "--init-spread", "nan"], "init_spread must be a finite number"),
    (["--method", "ga", "--mutation-sigma", "nan"], "mutation_sigma must be a finite number"),
    (["--method", "ga", "--scale-to", "nan"], "scale_to must be a finite number"),
    (["--method", "ga", "--population", "4", "--tournament", "9"], "tournament (9) must not exceed population (4)"),
    (["--train", ""], "no weights to train"),
])
def test_impossible_options_are_refused_before_anything_is_written(
        sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    run = tmp_path / "run"
    assert main(["tune", "--data", str(sample_set), "--out", str(run), *argv, "--quiet"]) == 2
    line = _one_line_error(capsys)
    assert line.startswith("tuner tune: error: ") and message in line
    assert not run.exists()


def test_a_roulette_ga_may_have_fewer_individuals_than_the_tournament_size(sample_set: Path, tmp_path: Path) -> None:
    assert main(["tune", "--method", "ga", "--data", str(sample_set), "--out", str(tmp_path / "ga"),
                 "--selection", "roulette", "--population", "2", "--elite", "0", "--generations", "1",
                 "--sample", "20", "--max-validation", "20", "--quiet"]) == 0


def test_a_run_folder_with_nan_in_its_config_is_one_line_on_resume(sample_set: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # such folders were written before NaN was refused; resuming one raised a traceback
    run = tmp_path / "run"
    assert _tune(sample_set, run, "--iterations", "0") == 0
    config = run / "config.toml"
    text = config.read_text()
    assert "\nl1 = 2e-05\n" in text
    config.write_text(text.replace("\nl1 = 2e-05\n", "\nl1 = nan\n"))
    assert main(["tune", "--resume", str(run), "--quiet"]) == 2
    line = _one_line_error(capsys)
    assert f"{config} [mmto]: l1 must be a finite number, not nan" in line


def test_eval_top_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "startpos", "--top", "-3"]) == 2
    assert "--top must be >= 1, not -3" in _one_line_error(capsys)


def test_out_naming_an_existing_file_is_one_line(sample_set: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    assert _tune(sample_set, afile) == 2
    assert f"{afile}: exists and is not a folder" in _one_line_error(capsys)
    assert afile.read_text() == "mine\n"
    assert main(["tune", "--resume", str(afile)]) == 2
    assert "not a run folder" in _one_line_error(capsys)


def test_a_folder_with_other_files_but_no_run_is_refused_without_overwrite(sample_set: Path, tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # issue 58 item 2: tune replaced a weights.json in a folder that held no run
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "weights.json").write_text("my own weights\n")
    assert _tune(sample_set, folder) == 2
    assert _one_line_error(capsys) == (
        f"tuner tune: error: {folder}: not empty and holds no run ('weights.json'); write the run into it with "
        "--overwrite (which replaces only a run's files), or choose another --out")
    assert sorted(p.name for p in folder.iterdir()) == ["weights.json"]
    assert (folder / "weights.json").read_text() == "my own weights\n"
    (folder / "config.toml").write_text("# a run stopped before its first iteration\n")
    assert _tune(sample_set, folder) == 2
    assert f"and 1 more); write the run into it with --overwrite (which replaces only a run's files), " \
           f"--resume {folder} if it is a run stopped before" in _one_line_error(capsys)
    RunDir(folder).check_new(overwrite=True)  # --overwrite lets the run in
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".lock").write_text("12345\n")  # a killed run's lock file is not "other files"
    RunDir(empty).check_new()


# ---------------------------------------------------------------- two processes, one run folder


_HOLDER = """
import sys, time
from tuner.training.run_folder import RunDir
with RunDir(sys.argv[1]).lock():
    print("locked", flush=True)
    time.sleep(120)
"""


def _hold_lock(run: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_locked_run_folder_is_refused_naming_the_process_and_a_killed_holder_does_not_block(
        sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert _tune(sample_set, run, "--iterations", "1") == 0
    before = (run / "metrics.jsonl").read_bytes(), (run / "weights.json").read_bytes()
    assert not (run / ".lock").exists()  # removed by the process that held it
    holder = _hold_lock(run)
    try:
        assert main(["tune", "--resume", str(run), "--iterations", "2", "--quiet"]) == 2
        assert _one_line_error(capsys) == f"tuner tune: error: {run} is in use by process {holder.pid}"
        assert _tune(sample_set, run, "--overwrite") == 2
        assert f"is in use by process {holder.pid}" in _one_line_error(capsys)
        assert ((run / "metrics.jsonl").read_bytes(), (run / "weights.json").read_bytes()) == before
    finally:
        holder.kill()
        holder.wait()
    # the killed holder left its lock file, naming it; the system released the lock itself
    assert (run / ".lock").read_text().strip() == str(holder.pid)
    assert main(["tune", "--resume", str(run), "--iterations", "2", "--quiet"]) == 0
    assert [r["iteration"] for r in _metrics(run)] == [0, 1, 2]
    assert not (run / ".lock").exists()


def test_two_tune_processes_on_one_out_folder(sample_set: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    # a run that lasts until the SIGINT below: no iteration bound, MMTO patience rule (J_main not falling that many
    # iterations in a row) or early stop (the gm recipe's: 2 iterations without a better validation move-match) can
    # end it first (with 50 iterations and patience and the recipe's early stop it once finished before the signal
    # came, and exited 0)
    first = subprocess.Popen([sys.executable, "-m", "tuner", "tune", "--data", str(sample_set), "--out", str(run),
                              *FAST, "--iterations", "1000000", "--patience", "1000000", "--early-stop", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # until iteration 0's checkpoint is written (its metric line comes first: a SIGINT between the two is
        # "interrupted before iteration 0 was completed"); a cold numba cache beside other work once took over 120 s
        _wait_for(first, run / "state.json", 600)
        assert _tune(sample_set, run, "--overwrite") == 2
        assert _one_line_error(capsys) == f"tuner tune: error: {run} is in use by process {first.pid}"
        assert main(["tune", "--resume", str(run), "--quiet"]) == 2
        assert f"is in use by process {first.pid}" in _one_line_error(capsys)
    finally:
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=60)
    assert first.returncode == 130 and INTERRUPTED.match(_last_words(err)), err
    iterations = [r["iteration"] for r in _metrics(run)]
    assert iterations == list(range(len(iterations)))


# ---------------------------------------------------------------- a lost or damaged run folder


def test_resume_without_state_json_is_refused_once_an_iteration_was_completed(
        sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert _tune(sample_set, run, "--iterations", "2") == 0
    (run / "state.json").unlink()
    metrics = (run / "metrics.jsonl").read_bytes()
    assert main(["tune", "--resume", str(run), "--iterations", "3", "--quiet"]) == 2
    line = _one_line_error(capsys)
    assert f"{run / 'state.json'}: missing, but metrics.jsonl records iterations up to 2" in line
    assert "cannot be resumed exactly" in line and "--overwrite" in line
    assert (run / "metrics.jsonl").read_bytes() == metrics  # no duplicate lines appended
    (run / "metrics.jsonl").unlink()
    assert main(["tune", "--resume", str(run), "--iterations", "3", "--quiet"]) == 2
    assert "missing, but weights.json records iterations up to 2" in _one_line_error(capsys)


def test_resume_without_state_json_before_the_first_checkpoint_starts_again(
        sample_set: Path, tmp_path: Path, full: Path) -> None:
    # killed between iteration 0's metric line and its checkpoint: nothing was completed
    cut = tmp_path / "cut"
    assert _tune(sample_set, cut, "--iterations", "0") == 0
    (cut / "state.json").unlink()
    assert main(["tune", "--resume", str(cut), "--iterations", "3", "--quiet"]) == 0
    _same_run(cut, full)


#: weights file of the catalogue before the attacks and defends groups (its feature names)
LEGACY_CLASSIC = REPO / "tests" / "data" / "catalog_26fcb341cd55f948" / "classic.json"


def _as_legacy_run(run: Path) -> None:
    """Rewrite the run's checkpoint and weights as the version before the attacks and defends
    groups wrote them: catalogue 26fcb341cd55f948 and its 990 features, by name."""
    old_names = list(json.loads(LEGACY_CLASSIC.read_text())["weights"])
    doc = json.loads((run / "weights.json").read_text())
    doc["catalog_hash"] = "26fcb341cd55f948"
    doc["weights"] = {name: doc["weights"][name] for name in old_names}
    (run / "weights.json").write_text(json.dumps(doc))
    state = json.loads((run / "state.json").read_text())
    by_name = dict(zip(FEATURE_NAMES, state["weights"]))
    state["catalog_hash"] = "26fcb341cd55f948"
    state["weights"] = [by_name[name] for name in old_names]
    (run / "state.json").write_text(json.dumps(state))


def test_a_run_of_the_earlier_catalogue_is_refused_on_resume_and_its_weights_start_a_new_run(
        sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert _tune(sample_set, run, "--iterations", "1") == 0
    capsys.readouterr()
    _as_legacy_run(run)
    state = (run / "state.json").read_bytes()
    assert main(["tune", "--resume", str(run), "--iterations", "2", "--quiet"]) == 2
    line = _one_line_error(capsys)
    assert line.startswith(f"tuner tune: error: {run / 'state.json'}: made for the earlier feature catalogue "
                           "'26fcb341cd55f948', before the attacks and defends groups, and cannot be resumed exactly")
    assert f"--start {run / 'weights.json'}" in line
    assert (run / "state.json").read_bytes() == state  # the old run is left as it was
    # the suggested way on: a new run from the old run's weights (migrated, with one note line)
    assert _tune(sample_set, tmp_path / "new", "--iterations", "0", "--start", str(run / "weights.json")) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tuner tune: note: {run / 'weights.json'}: made for the earlier feature catalogue "
                   f"'26fcb341cd55f948'; read into '{CATALOG_HASH}' with every attacks and "
                   "defends weight 0"]


def test_metrics_of_random_bytes_is_one_line_naming_the_file_and_line(
        sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert _tune(sample_set, run, "--iterations", "1") == 0
    garbage = bytes(random.Random(0).randrange(256) for _ in range(2000))
    metrics = run / "metrics.jsonl"
    metrics.write_bytes(b"\x93\xfe\xff" + garbage + b"\n" + garbage)
    assert main(["tune", "--resume", str(run), "--iterations", "2", "--quiet"]) == 2
    assert re.search(rf"{re.escape(str(metrics))}:1: not UTF-8 text", _one_line_error(capsys))
    assert main(["bench", "plot", str(run)]) == 2
    assert f"{metrics}:1: not UTF-8 text" in _one_line_error(capsys)
    metrics.write_text('{"iteration": 0}\n[1, 2]\n')
    assert main(["tune", "--resume", str(run), "--iterations", "2", "--quiet"]) == 2
    assert f"{metrics}:2: not a metrics record" in _one_line_error(capsys)


def test_a_torn_metric_line_and_stray_temporary_files_resume_to_the_same_run(
        sample_set: Path, tmp_path: Path, full: Path) -> None:
    cut = tmp_path / "cut"
    assert _tune(sample_set, cut, "--iterations", "1") == 0
    # killed while appending iteration 2's line, and while writing the checkpoint
    line = (full / "metrics.jsonl").read_text().splitlines()[2]
    with (cut / "metrics.jsonl").open("a") as fh:
        fh.write(line[: len(line) // 2])
    (cut / ".state.json.k1ll3d.tmp").write_text('{"schema": "movetu')
    assert main(["tune", "--resume", str(cut), "--iterations", "3", "--quiet"]) == 0
    _same_run(cut, full)
    assert not list(cut.glob(".*.tmp"))


@pytest.mark.parametrize(("code", "victim"), [(errno.ENOSPC, "state.json"), (errno.EROFS, "weights.json"),
                                              (errno.EACCES, "state.json")])
def test_a_full_or_read_only_disk_is_one_line_and_keeps_the_last_checkpoint(
        sample_set: Path, tmp_path: Path, full: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, code: int, victim: str) -> None:
    real = tuner.training.run_folder.atomic_write_text
    writes = {"n": 0}

    def failing(path: str | Path, text: str) -> None:
        if Path(path).name == victim:
            writes["n"] += 1
            if writes["n"] == 3:  # iteration 2's
                raise OSError(code, os.strerror(code), str(path))
        real(path, text)

    cut = tmp_path / "cut"
    monkeypatch.setattr(tuner.training.run_folder, "atomic_write_text", failing)
    assert _tune(sample_set, cut, "--iterations", "3") == 2
    line = _one_line_error(capsys)
    assert line.startswith(f"tuner tune: error: {cut / victim}: {os.strerror(code)}; ")
    assert line.endswith(f"{cut} keeps iteration 1; resume with: tuner tune --resume {cut}")
    assert RunDir(cut).load().iteration == 1  # type: ignore[union-attr]
    assert not list(cut.glob(".*.tmp"))
    monkeypatch.setattr(tuner.training.run_folder, "atomic_write_text", real)
    assert main(["tune", "--resume", str(cut), "--quiet"]) == 0
    _same_run(cut, full)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders: chmod cannot make one")
def test_a_read_only_run_folder_is_one_line(sample_set: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert _tune(sample_set, run, "--iterations", "1") == 0
    state = (run / "state.json").read_bytes()
    run.chmod(0o555)
    try:
        assert main(["tune", "--resume", str(run), "--iterations", "2", "--quiet"]) == 2
        line = _one_line_error(capsys)
        assert str(run) in line and "Permission denied" in line
    finally:
        run.chmod(0o755)
    assert (run / "state.json").read_bytes() == state


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_is_deferred_to_the_next_check() -> None:
    previous = signal.getsignal(signal.SIGINT)
    with DeferredSigint():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler has run: it only took note
        with pytest.raises(Interrupted):
            check_interrupt()
    assert signal.getsignal(signal.SIGINT) is previous
    check_interrupt()  # outside a block: nothing pending


def test_a_keyboard_interrupt_inside_a_numba_call_counts_as_ctrl_c() -> None:
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as inner:
            raise SystemError("CPUDispatcher(<function sweep_kernel>) returned a result with an exception set") from inner
    except SystemError as exc:
        assert is_interrupt(exc)
    assert not is_interrupt(SystemError("something else"))


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_inside_the_mmto_kernels_stops_at_once_with_one_line(sample_set: Path, tmp_path: Path, signum: int,
                                                                    code: int) -> None:
    # the full sample with 64 update steps: most of the run is spent inside numba kernels,
    # where a KeyboardInterrupt used to surface as SystemError (11 of 14 tries in the issue);
    # SIGTERM (a batch system's stop) the same way, where Python used to die without its checkpoint
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "tune", "--data", str(sample_set), "--out", str(run),
                             "--inner-steps", "64", "--iterations", "20", "--patience", "20", "--early-stop", "0",
                             "--quiet"],  # no early stop: the gm recipe's (2 iterations) could end it before the signal
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(proc, run / "metrics.jsonl", 180)
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    seconds = time.monotonic() - sent
    assert proc.returncode == code, err
    match = INTERRUPTED.match(_last_words(err))
    assert match, err
    assert int(match.group(1)) == RunDir(run).load().iteration  # type: ignore[union-attr]
    assert [r["iteration"] for r in _metrics(run)] == list(range(int(match.group(1)) + 1))
    assert seconds < 5.0, f"took {seconds:.1f} s to stop"  # about 1 s: the process's exit included


_PERFT = """
import sys
from search.core.convert import STARTING_FEN, from_fen
from search.core.perft import perft
from tuner.cli import build_parser, main
build_parser()
perft(from_fen(STARTING_FEN), 3)  # the kernel is loaded: counting starts at once
print("ready", flush=True)
sys.exit(main(["perft", "startpos", "9"]))
"""


def test_perft_stops_within_a_second_of_ctrl_c() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _PERFT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    seconds = time.monotonic() - sent
    assert proc.returncode == 130
    assert re.fullmatch(r"tuner perft: interrupted after \d+\.\d s\n", err), err
    assert seconds < 3.0, f"took {seconds:.1f} s to stop"  # the count itself stops within 0.1 s


def test_perft_in_pieces_counts_as_the_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", "position4", "5"]) == 0  # 6 kernel calls of depth 4
    assert "nodes 15833292" in capsys.readouterr().out
    assert main(["perft", "position3", "5", "--divide", "--no-bulk"]) == 0
    out = capsys.readouterr().out
    assert "nodes 674624" in out and len([ln for ln in out.splitlines() if ": " in ln]) == 14


def test_kernel_calls_cut_for_ctrl_c_give_the_same_results(sample_set: Path) -> None:
    # a run searches in calls of about 0.4 s, cut at multiples of CHUNK positions: the results
    # must be those of one call, whatever the cuts
    data = load_training_data(TuneConfig(data=str(sample_set), max_train=150, max_validation=0), progress=False)
    boards, played = data.train.boards, data.train.played
    w = load_weights("classic").values
    whole = sweep(boards, 1, w)
    weights = np.stack([w, load_weights("material").values, w // 2]).astype(np.int32)
    match = move_match(boards, played, weights, 1)
    for pacer in (Pacer(target=1e-9, first=CHUNK), Pacer(target=1e9, first=3 * CHUNK), Pacer(first=5 * CHUNK)):
        cut = paced_sweep(boards, 1, w, budget=DEFAULT_BUDGET, pacer=pacer)
        for name in ("pos_ptr", "moves", "scores", "kinds", "signs", "leaves", "nodes"):
            assert np.array_equal(getattr(cut, name), getattr(whole, name)), name
        assert np.array_equal(paced_move_match(boards, played, weights, 1, budget=DEFAULT_BUDGET, n_threads=2,
                                               pacer=pacer), match)
