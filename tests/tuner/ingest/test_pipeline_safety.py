"""``tuner ingest`` never loses data and never prints a traceback (issue 12): an output folder
with other files in it, truncated zstd input, killed runs (orphaned workers, leftover staging
folders), bad options, an output that is a file, a full or read-only disk, and inputs that
yield no game (empty, binary, UTF-16 without a byte-order mark) or cannot be read; and a corrupt
stretch inside a PGN file of real games, which costs at most the game it falls in (issue 28)."""

from __future__ import annotations

import errno
import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
import zstandard

from tuner.cli import main
from tuner.ingest import SPLITS, IngestConfig, read_manifest, read_split
from tests.conftest import REPO

SAMPLE = REPO / "datasets" / "sample" / "famous-games.pgn"
SAMPLE_GAMES = 52


def ingest_cli(*args: str | Path) -> list[str]:
    return ["ingest", "--no-progress", "--workers", "1", *map(str, args)]


def one_line_error(err: str, *needles: str) -> None:
    """``err`` is one ``tuner ingest: error: ...`` line (no traceback) holding ``needles``."""
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tuner ingest: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, err)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".partial-" in p.name or ".old-" in p.name)


def all_rows(folder: Path) -> pl.DataFrame:
    return pl.concat([read_split(folder, s) for s in SPLITS]).sort(["game_id", "ply"])


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# ---------------------------------------------------------------------------------------------
# the output folder


def test_folder_with_other_files_is_refused_then_kept_with_overwrite(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "set"
    assert main(ingest_cli(SAMPLE, "--out", out)) == 0
    (out / "notes.txt").write_text("keep me")
    (out / "run-1").mkdir()
    (out / "run-1" / "weights.json").write_text("{}")
    before = folder_bytes(out)
    capsys.readouterr()

    assert main(ingest_cli(SAMPLE, "--out", out, "--seed", "5")) == 2
    one_line_error(capsys.readouterr().err, str(out), "not a position set", "--overwrite")
    assert folder_bytes(out) == before

    assert main(ingest_cli(SAMPLE, "--out", out, "--seed", "5", "--overwrite")) == 0
    after = folder_bytes(out)
    assert after["notes.txt"] == b"keep me" and after["run-1/weights.json"] == b"{}"
    assert read_manifest(out)["config"]["seed"] == 5
    assert after["train.parquet"] != before["train.parquet"]
    assert leftovers(tmp_path) == []


def test_foreign_manifest_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "web"
    out.mkdir()
    (out / "manifest.json").write_text('{"name": "my web app"}')
    assert main(ingest_cli(SAMPLE, "--out", out, "--overwrite")) == 2
    one_line_error(capsys.readouterr().err, "manifest.json", "not a position set")
    assert (out / "manifest.json").read_text() == '{"name": "my web app"}'


def test_out_naming_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep me")
    for extra in ([], ["--overwrite"]):
        assert main(ingest_cli(SAMPLE, "--out", target, *extra)) == 2
        one_line_error(capsys.readouterr().err, str(target), "not a folder")
    assert main(ingest_cli(SAMPLE, "--out", target / "below")) == 2
    one_line_error(capsys.readouterr().err, str(target))
    assert target.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


# ---------------------------------------------------------------------------------------------
# truncated zstd


def test_truncated_zst_reports_corrupt_stream_like_gz(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = SAMPLE.read_bytes()
    half = len(data) // 2
    cctx = zstandard.ZstdCompressor()
    skippable = b"\x50\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"pad"
    frames = cctx.compress(data[:half]) + skippable + cctx.compress(data[half:])
    (tmp_path / "whole.pgn.zst").write_bytes(frames)
    assert main(ingest_cli(tmp_path / "whole.pgn.zst", "--out", tmp_path / "whole")) == 0
    assert read_manifest(tmp_path / "whole")["games"]["read"] == SAMPLE_GAMES

    (tmp_path / "cut.pgn.zst").write_bytes(frames[: len(frames) - 100])
    capsys.readouterr()
    assert main(ingest_cli(tmp_path / "cut.pgn.zst", "--out", tmp_path / "cut")) == 0
    assert "corrupt_stream" in capsys.readouterr().err
    m = read_manifest(tmp_path / "cut")
    assert m["problems"]["by_reason"]["corrupt_stream"] == 1
    assert SAMPLE_GAMES // 2 - 2 <= m["games"]["read"] < SAMPLE_GAMES

    one_frame = cctx.compress(data)
    (tmp_path / "half.pgn.zst").write_bytes(one_frame[: len(one_frame) // 2])
    assert main(ingest_cli(tmp_path / "half.pgn.zst", "--out", tmp_path / "half")) == 2
    one_line_error(capsys.readouterr().err, "half.pgn.zst:1: corrupt_stream", "truncated")
    assert leftovers(tmp_path) == [] and not (tmp_path / "half").exists()


# ---------------------------------------------------------------------------------------------
# killed runs


def _proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state, ppid, ...), None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of the live processes whose parent is ``pid``."""
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _proc_stat(int(entry.name))
            if stat is not None and int(stat[1]) == pid and stat[0] != "Z":
                kids.append((int(entry.name), stat[19]))
    return kids


def _running(kid: tuple[int, str]) -> bool:
    stat = _proc_stat(kid[0])
    return stat is not None and stat[19] == kid[1] and stat[0] != "Z"


#: ``python -c`` driver that disables prctl(PR_SET_PDEATHSIG) (an invalid option), so the
#: workers fall back on watching their parent's pid.
_NO_PRCTL = ("import sys, tuner.ordered_pool as p; p._PR_SET_PDEATHSIG = 0x7fff; "
             "from tuner.cli import main; sys.exit(main(sys.argv[1:]))")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the workers")
@pytest.mark.parametrize("mechanism", ["pdeathsig", "poll"])
def test_killed_run_leaves_no_workers_and_the_next_run_cleans_up(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], mechanism: str) -> None:
    big = tmp_path / "big.pgn"
    big.write_bytes(SAMPLE.read_bytes() * 100)
    out = tmp_path / "set"
    prefix = [sys.executable, "-m", "tuner"] if mechanism == "pdeathsig" else [sys.executable, "-c", _NO_PRCTL]
    with (tmp_path / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen([*prefix, "ingest", str(big), "--out", str(out), "--workers", "2", "--no-progress"],
                                stdout=subprocess.DEVNULL, stderr=err, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        kids: list[tuple[int, str]] = []
        while len(kids) < 2:
            assert proc.poll() is None, f"ended before it was killed: {(tmp_path / 'stderr.txt').read_text()}"
            assert time.monotonic() < deadline, "no workers started"
            time.sleep(0.05)
            kids = _children(proc.pid)
        time.sleep(0.3)
        assert proc.poll() is None
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 5
        while any(map(_running, kids)) and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = [k for k in kids if _running(k)]
        assert not alive, f"orphaned workers {alive}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid, started in _children(proc.pid) + kids:
            if _running((pid, started)):
                os.kill(pid, 9)
    assert leftovers(tmp_path) == [f".set.partial-{proc.pid}"]
    assert not out.exists()

    capsys.readouterr()
    assert main(ingest_cli(SAMPLE, "--out", out)) == 0
    assert f".set.partial-{proc.pid}: removed" in capsys.readouterr().err
    assert leftovers(tmp_path) == []
    assert read_manifest(out)["games"]["kept"] == SAMPLE_GAMES


def test_only_leftovers_of_dead_runs_are_touched(tmp_path: Path) -> None:
    out = tmp_path / "set"
    assert main(ingest_cli(SAMPLE, "--out", out)) == 0
    dead = dead_pid()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / f".set.partial-{dead}").mkdir()
        (tmp_path / f".set.partial-{dead}" / "part.parquet").write_bytes(b"x")
        (tmp_path / f".set.partial-{sleeper.pid}").mkdir()  # a run still going
        (tmp_path / f".other.partial-{dead}").mkdir()  # another output's
        os.replace(out, tmp_path / f".set.old-{dead}")  # killed between its two renames
        assert main(ingest_cli(SAMPLE, "--out", tmp_path / "set", "--seed", "3", "--overwrite")) == 0
        assert leftovers(tmp_path) == [f".other.partial-{dead}", f".set.partial-{sleeper.pid}"]
        assert read_manifest(out)["config"]["seed"] == 3
    finally:
        sleeper.kill()
        sleeper.wait()


# ---------------------------------------------------------------------------------------------
# options and disks


def test_nan_or_infinite_split_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for split in ("nan,0.5,0.5", "inf,0,0", "0.5,0.5,nan"):
        assert main(ingest_cli(SAMPLE, "--out", tmp_path / "o", "--split", split)) == 2
        one_line_error(capsys.readouterr().err, "split must be")
        with pytest.raises(ValueError, match="split must be three"):  # the library API checks too
            IngestConfig(split=tuple(map(float, split.split(",")))).validate()
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_disk_is_a_one_line_error_and_keeps_the_old_set(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "set"
    assert main(ingest_cli(SAMPLE, "--out", out)) == 0
    before = folder_bytes(out)
    real = pl.DataFrame.write_parquet

    def to_full_disk(self: pl.DataFrame, file: object, *args: object, **kwargs: object) -> None:
        real(self, "/dev/full", *args, **kwargs)  # type: ignore[arg-type]  # polars' own ENOSPC error

    monkeypatch.setattr(pl.DataFrame, "write_parquet", to_full_disk)
    capsys.readouterr()
    assert main(ingest_cli(SAMPLE, "--out", out, "--seed", "9", "--overwrite")) == 2
    one_line_error(capsys.readouterr().err, f"{out}: cannot write the position set", os.strerror(errno.ENOSPC),
                   "left as it was")
    assert folder_bytes(out) == before
    assert leftovers(tmp_path) == []


def test_read_only_disk_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    real = Path.mkdir

    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        if ".partial-" in self.name:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", read_only)
    assert main(ingest_cli(SAMPLE, "--out", tmp_path / "set")) == 2
    one_line_error(capsys.readouterr().err, f"{tmp_path / 'set'}: cannot write", os.strerror(errno.EROFS))
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# inputs that yield no game or cannot be read


@pytest.mark.parametrize(("name", "content", "needle"), [
    ("empty.pgn", b"", "empty file"),
    ("blank.pgn", b"\n\n  \n", "no game"),
    ("notes.pgn", b"just some notes\nabout chess\n", "no game"),
    ("binary.pgn", bytes(range(256)) * 8, "binary data"),
    ("tagged-binary.pgn", b'[Event "x"]\n' + bytes(range(256)) * 8, "binary data"),
    ("utf16-no-bom.pgn", SAMPLE.read_text(encoding="utf-8").encode("utf-16-le"), "UTF-16"),
    ("empty.pgn.gz", gzip.compress(b""), "empty once decompressed"),
], ids=["empty", "blank", "notes", "binary", "tagged-binary", "utf16-no-bom", "empty-gz"])
def test_input_without_games_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         name: str, content: bytes, needle: str) -> None:
    (tmp_path / name).write_bytes(content)
    assert main(ingest_cli(SAMPLE, tmp_path / name, "--out", tmp_path / "set")) == 2
    one_line_error(capsys.readouterr().err, f"{tmp_path / name}", needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_with_a_byte_order_mark_is_decoded(tmp_path: Path, encoding: str) -> None:
    text = SAMPLE.read_text(encoding="utf-8")
    data = text.encode(encoding) if encoding != "utf-16-be" else b"\xfe\xff" + text.encode(encoding)
    (tmp_path / "wide.pgn").write_bytes(data)
    assert main(ingest_cli(SAMPLE, "--out", tmp_path / "a")) == 0
    assert main(ingest_cli(tmp_path / "wide.pgn", "--out", tmp_path / "b")) == 0
    assert read_manifest(tmp_path / "b")["problems"]["count"] == 0
    assert all_rows(tmp_path / "a").drop("source").equals(all_rows(tmp_path / "b").drop("source"))


def test_unreadable_input_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(ingest_cli(SAMPLE, tmp_path, "--out", tmp_path / "set")) == 2
    one_line_error(capsys.readouterr().err, f"{tmp_path}: is a folder")

    locked = tmp_path / "locked.pgn"
    locked.write_bytes(SAMPLE.read_bytes())
    real, real_fd = Path.open, os.open

    def denied(self: Path, *args: object, **kwargs: object) -> object:
        if self == locked:  # what chmod 000 does, also when the tests run as root
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    def denied_fd(path: str, *args: object, **kwargs: object) -> int:  # the same through os.open
        if Path(path) == locked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_fd(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", denied)
    monkeypatch.setattr(os, "open", denied_fd)
    assert main(ingest_cli(SAMPLE, locked, "--out", tmp_path / "set")) == 2
    one_line_error(capsys.readouterr().err, f"{locked}: cannot read", os.strerror(errno.EACCES))
    assert not (tmp_path / "set").exists()


# ---------------------------------------------------------------------------------------------
# a corrupt stretch costs one game, not the file (issue 28)

def _games(text: str) -> list[str]:
    """The sample's games as texts, each ending with the blank line after it."""
    parts = text.split("\n\n[Event ")
    return [parts[0] + "\n\n"] + ["[Event " + p + "\n\n" for p in parts[1:-1]] + ["[Event " + parts[-1]]


@pytest.mark.parametrize(("garbage", "where"), [
    ("\x00\x00]]][[ \x00 [[", "between"),
    ("[[\x00]] [", "between"),
    ("[[ ]] [", "between"),
    ("\x00]][[ \x00", "inside"),
], ids=["nul-and-brackets", "nul-line-opening-with-a-bracket", "stray-brackets", "nul-inside-a-game"])
def test_a_corrupt_stretch_costs_at_most_its_game(tmp_path: Path, garbage: str, where: str) -> None:
    games = _games(SAMPLE.read_text(encoding="utf-8"))
    assert len(games) == SAMPLE_GAMES and "".join(games) == SAMPLE.read_text(encoding="utf-8")
    broken = 3  # within the first 8 KiB, where a NUL byte once refused the whole file
    if where == "between":  # on its own line after game 3's blank line
        text = "".join(games[:broken]) + garbage + "\n" + "".join(games[broken:])
    else:  # in the middle of game 4's moves
        head, moves = games[broken].split("\n\n", 1)
        cut = moves.index("\n") + 1
        game = head + "\n\n" + moves[:cut] + garbage + "\n" + moves[cut:]
        text = "".join(games[:broken]) + game + "".join(games[broken + 1:])
    line = text[:text.index(garbage)].count("\n") + 1
    path = tmp_path / "corrupt.pgn"
    path.write_bytes(text.encode("utf-8"))
    assert b"\0" in path.read_bytes()[:8192] or "\x00" not in garbage

    assert main(ingest_cli(SAMPLE, "--out", tmp_path / "clean")) == 0
    assert main(ingest_cli(path, "--out", tmp_path / "set")) == 0
    clean, manifest = read_manifest(tmp_path / "clean"), read_manifest(tmp_path / "set")
    problems = {(p["line"], p["reason"]) for p in manifest["problems"]["first"]}
    assert all(p["file"] == str(path) for p in manifest["problems"]["first"])
    same = ["fen", "move", "result", "white", "black", "event"]
    rows, clean_rows = all_rows(tmp_path / "set").select(same), all_rows(tmp_path / "clean")
    if where == "inside":  # that game alone is rejected, at the garbage's line
        assert manifest["games"]["read"] == SAMPLE_GAMES
        assert manifest["games"]["rejected_by_reason"] == {"invalid_move": 1}
        assert (line, "invalid_move") in problems
        assert rows.equals(clean_rows.filter(pl.col("game_id") != broken).select(same))
        return
    assert rows.equals(clean_rows.select(same))  # every game kept
    if "\x00" in garbage:  # the NUL line stays behind game 3's result: text after a game
        assert manifest["games"] == clean["games"]
        assert problems == {(line, "garbage")}
    else:  # a stray bracket line is a game with a malformed tag, rejected alone
        assert manifest["games"]["read"] == SAMPLE_GAMES + 1
        assert manifest["games"]["rejected_by_reason"] == {"bad_tag": 1}
        assert problems == {(line, "bad_tag")}


def test_a_symlink_loop_as_an_ingest_input_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tmp_path / "a.pgn"
    loop.symlink_to(tmp_path / "b.pgn")
    (tmp_path / "b.pgn").symlink_to(loop)
    assert main(ingest_cli(loop, "--out", tmp_path / "set")) == 2
    assert capsys.readouterr().err.strip() == \
        f"tuner ingest: error: {loop}: no such file (a broken or looping symbolic link)"
