"""A probe of hostile inputs (issue 58's target): many malformed, odd or adversarial inputs to
every ``tuner`` command, each run as a subprocess (``python -m tuner ...``) in its own temporary
folder with a timeout, and classified.

A case fails as
- a **traceback**: standard error holds ``Traceback``, or the exit code is none of 0, 2 (a
  refusal), 130 (Ctrl-C): 1 is an uncaught exception, a negative code a death by a signal;
- a **hang**: still running at its timeout (then its process group is killed);
- a **silent overwrite**: a file of the case's folder that existed before the command (the
  case made it, not the command) changed or vanished, unless it is the command's own ``--out``
  (``--pgn``, ``--plot``) and ``--overwrite`` was given, or a file the case declares the
  command's own (a resumed run's folder);
- for a ``tuner uci`` session, a ``bestmove 0000`` where python-chess says the last good
  position (or the legal prefix of a bad ``position`` line) has a legal move, a ``bestmove`` of
  a move legal in neither, or a ``go`` never answered (counted as a hang).

The built-in inputs (``search/data``) and the base folder the cases copy from are hashed before
and after the whole probe; a change there is a silent overwrite too.

Run it from a checkout (the subprocesses use that checkout's code through ``PYTHONPATH``)::

    NUMBA_CACHE_DIR=/tmp/nbcache nice -n 19 python bench/probe.py [--jobs 2] [--only SUBSTR] [--list]

It prints a line per failing case on standard error, and at the end one JSON line: the cases
run, the counts of each failure kind, the failing cases' names and the seconds taken.
"""

from __future__ import annotations

import argparse
import codecs
import concurrent.futures
import fnmatch
import gzip
import hashlib
import json
import os
import queue
import random
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import chess

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_PGN = ROOT / "datasets" / "sample" / "famous-games.pgn"
BUILTIN = ROOT / "search" / "data"
OUT_FLAGS = ("--out", "--pgn", "--plot")

Setup = Callable[[Path], None]


@dataclass
class Case:
    """One hostile run: ``argv`` after ``python -m tuner`` (``{d}``: the case's folder), made
    ready by ``setup`` in that folder."""

    name: str
    argv: list[str]
    setup: Setup | None = None
    timeout: float = 120.0
    #: glob patterns (relative to the case folder) of files the command may change (its own)
    owned: tuple[str, ...] = ()
    #: send SIGINT to the main process this many seconds after the start (None: never)
    sigint_after: float | None = None
    #: a UCI session: lines to send (``@sleep S``, ``@wait PREFIX``); None for other commands
    uci: list[str] | None = None
    stdin: bytes | None = None


@dataclass
class Outcome:
    name: str
    kinds: list[str] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0


# ---------------------------------------------------------------------------- helpers


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.setdefault("MOVETUNER_LOG_SECONDS", "5")
    e["PYTHONUNBUFFERED"] = "1"
    e["PYTHONFAULTHANDLER"] = "1"
    return e


def tuner(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tuner", *argv], cwd=cwd, env=env(), capture_output=True,
                          text=True, timeout=timeout)


def snapshot(folder: Path) -> dict[str, str]:
    """sha256 of every regular file under ``folder`` (symbolic links not followed; a link's
    target text stands for it)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in filenames + [n for n in dirnames if os.path.islink(os.path.join(dirpath, n))]:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, folder)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                try:
                    with open(p, "rb") as fh:
                        for chunk in iter(lambda: fh.read(1 << 20), b""):
                            h.update(chunk)
                except OSError as exc:  # an unreadable file (chmod 0): its mode stands for it
                    out[rel] = f"unreadable:{exc.errno}:{st.st_size}:{st.st_mtime_ns}"
                    continue
                out[rel] = h.hexdigest()
            else:
                out[rel] = f"special:{stat.S_IFMT(st.st_mode)}"
    return out


def out_targets(argv: list[str], d: Path) -> list[str]:
    """The case-relative paths named by the command's output flags (and ``tuner convert``'s OUT)."""
    outs = []
    if argv and argv[0] == "convert":
        positional = [a for a in argv[1:] if not a.startswith("-") and a not in ("compact", "parquet", "bullet")]
        if len(positional) >= 2:
            argv = [*argv, "--out", positional[1]]
    for i, a in enumerate(argv):
        for flag in OUT_FLAGS:
            value = argv[i + 1] if a == flag and i + 1 < len(argv) else (
                a.split("=", 1)[1] if a.startswith(flag + "=") else None)
            if value is not None:
                p = Path(value)
                p = p if p.is_absolute() else d / p
                try:
                    outs.append(os.path.relpath(p, d))
                except ValueError:
                    pass
    return outs


def overwritten(before: dict[str, str], after: dict[str, str], case: Case, argv: list[str], d: Path) -> list[str]:
    free = list(case.owned)
    if "--overwrite" in argv:
        for out in out_targets(argv, d):
            free += [out, out.rstrip("/") + "/*"]
    bad = []
    for rel, digest in before.items():
        if any(fnmatch.fnmatch(rel, pat) for pat in free):
            continue
        if after.get(rel) != digest:
            bad.append(f"{rel} {'removed' if rel not in after else 'changed'}")
    return bad


# ---------------------------------------------------------------------------- UCI sessions


def _board_after(fen: str, moves: list[str]) -> tuple[chess.Board | None, chess.Board | None]:
    """(the whole position, or None if any part is bad; the position after the legal prefix of
    the moves when the FEN is good, else None). A FEN of 4 to 6 fields, as the engine reads."""
    if not 4 <= len(fen.split()) <= 6:
        return None, None
    try:
        board = chess.Board(fen)
    except ValueError:
        return None, None
    if not board.is_valid():
        return None, None
    whole = True
    for uci in moves:
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            whole = False
            break
        if not move or move.uci() != uci or not board.is_legal(move):
            whole = False
            break
        board.push(move)
    return (board if whole else None), board


def _parse_position(line: str) -> tuple[str, list[str]] | None:
    tokens = line.split()[1:]
    if not tokens or tokens[0] not in ("startpos", "fen"):
        return None
    if "moves" in tokens:
        k = tokens.index("moves")
        spec, moves = tokens[:k], tokens[k + 1:]
    else:
        spec, moves = tokens, []
    if spec[0] == "startpos":
        return (chess.STARTING_FEN, moves) if len(spec) == 1 else None
    return " ".join(spec[1:]), moves


def _send_quit(proc: subprocess.Popen[bytes]) -> None:
    """``quit`` to an engine, its input closed after (a broken pipe ignored)."""
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"quit\n")
        proc.stdin.flush()
        proc.stdin.close()
    except OSError:
        pass


def run_uci(case: Case, d: Path) -> Outcome:
    assert case.uci is not None
    out = Outcome(case.name)
    proc = subprocess.Popen([sys.executable, "-m", "tuner", *case.argv], cwd=d, env=env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    lines: queue.Queue[tuple[float, str]] = queue.Queue()
    transcript: list[tuple[float, str]] = []
    err_chunks: list[bytes] = []

    def read_out() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\r\n")))

    def read_err() -> None:
        assert proc.stderr is not None
        err_chunks.append(proc.stderr.read())

    threading.Thread(target=read_out, daemon=True).start()
    err_thread = threading.Thread(target=read_err, daemon=True)
    err_thread.start()
    deadline = time.monotonic() + case.timeout

    seen = [0]  # transcript lines a @wait has looked at

    def drain(until_prefix: str | None, timeout: float) -> bool:
        """Read lines for ``timeout`` s; with ``until_prefix``, until a line starting with it
        that no earlier wait took (lines read meanwhile count too)."""
        if until_prefix is not None:
            for i in range(seen[0], len(transcript)):
                if transcript[i][1].startswith(until_prefix):
                    seen[0] = i + 1
                    return True
        end = min(deadline, time.monotonic() + timeout)
        while True:
            try:
                t, line = lines.get(timeout=max(0.0, min(0.05, end - time.monotonic())) or 0.001)
            except queue.Empty:
                if time.monotonic() >= end or (proc.poll() is not None and lines.empty()):
                    return until_prefix is None
                continue
            transcript.append((t, line))
            if until_prefix is not None and line.startswith(until_prefix):
                seen[0] = len(transcript)
                return True

    # python-chess's view of each go: (the acceptable boards, the preferred one)
    gos: list[tuple[list[chess.Board], chess.Board | None, str]] = []
    last_good: chess.Board | None = None
    quit_sent_at: float | None = None
    broken = False
    for item in case.uci:
        if item.startswith("@sleep"):
            drain(None, float(item.split()[1]))
            continue
        if item.startswith("@wait"):
            if not drain(item.split(None, 1)[1], 30.0):
                if proc.poll() is None:
                    out.kinds.append("hang")
                    out.detail = f"no {item.split(None, 1)[1]!r} within 30 s; last lines: " + " | ".join(
                        l for _, l in transcript[-6:])
                broken = True
                break
            continue
        word = item.split()[0] if item.split() else ""
        if word == "position":
            parsed = _parse_position(item)
            if parsed is not None:
                whole, prefix = _board_after(*parsed)
                if whole is not None:
                    last_good = whole
                elif prefix is not None:
                    last_good = prefix
        elif word == "go":
            gos.append(([b for b in (last_good,) if b is not None], last_good, item))
        elif word == "quit":
            quit_sent_at = time.monotonic()
        try:
            assert proc.stdin is not None
            proc.stdin.write((item + "\n").encode("utf-8", "surrogateescape"))
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            broken = True
            break
        drain(None, 0.0)
    if not broken and proc.poll() is None and quit_sent_at is None:
        if not drain("readyok", 0.0):
            try:
                assert proc.stdin is not None
                proc.stdin.write(b"isready\n")
                proc.stdin.flush()
            except OSError:
                pass
            if not drain("readyok", 30.0):
                out.kinds.append("hang")
                out.detail = "no readyok at the end"
        # every go answered by now? wait for the missing bestmoves
        while sum(1 for _, l in transcript if l.startswith("bestmove")) < len(gos) and time.monotonic() < deadline:
            if not drain("bestmove", 30.0):
                break
        _send_quit(proc)
    if broken and proc.poll() is None:
        _send_quit(proc)
    try:
        proc.wait(timeout=max(1.0, min(30.0, deadline - time.monotonic())))
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGABRT)  # PYTHONFAULTHANDLER: the threads' stacks on stderr
        time.sleep(2)
        out.kinds.append("hang")
        out.detail += " did not exit after quit; last lines: " + " | ".join(l for _, l in transcript[-6:])
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    drain(None, 0.2)
    err_thread.join(5)
    stderr = b"".join(err_chunks).decode("utf-8", "replace")
    if "hang" in out.kinds:
        out.detail += " stderr: " + stderr[-1500:]
    elif "Traceback" in stderr or proc.returncode not in (0, 2, 130):
        out.kinds.append("traceback")
        out.detail += f" exit {proc.returncode}: {stderr.strip()[-300:]!r}"
    answers = [(t, l) for t, l in transcript if l.startswith("bestmove")]
    expected = len(gos)
    if quit_sent_at is not None and len(answers) < expected:
        # a quit while the last go searched may end it without an answer
        answered_before_quit = sum(1 for t, _ in answers if t <= quit_sent_at)
        if answered_before_quit >= expected - 1:
            expected = len(answers)
    if len(answers) < expected:
        out.kinds.append("unanswered")
        out.detail += f" {expected - len(answers)} go unanswered of {len(gos)}"
    for (boards, last, go), (_, answer) in zip(gos, answers):
        parts = answer.split()
        move = parts[1] if len(parts) > 1 else ""
        if move in ("0000", "(none)", ""):
            if last is not None and any(last.legal_moves):
                out.kinds.append("bestmove0000")
                out.detail += f" [{go}] -> {answer} though {last.fen()} has legal moves"
        elif boards:
            try:
                m = chess.Move.from_uci(move)
            except ValueError:
                m = None
            if m is None or not any(b.is_legal(m) for b in boards):
                out.kinds.append("illegal")
                out.detail += f" [{go}] -> {answer} illegal in {boards[0].fen()}"
    return out


# ---------------------------------------------------------------------------- one case


def run_case(case: Case, work: Path) -> Outcome:
    d = Path(tempfile.mkdtemp(prefix="c-", dir=work))
    start = time.monotonic()
    try:
        if case.setup is not None:
            case.setup(d)
        argv = [a.replace("{d}", str(d)) for a in case.argv]
        case_run = Case(**{**case.__dict__, "argv": argv})
        before = snapshot(d)
        if case.uci is not None:
            out = run_uci(case_run, d)
        else:
            out = Outcome(case.name)
            proc = subprocess.Popen([sys.executable, "-m", "tuner", *argv], cwd=d, env=env(),
                                    stdin=subprocess.PIPE if case.stdin is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            try:
                if case.sigint_after is not None:
                    try:
                        proc.wait(timeout=case.sigint_after)
                    except subprocess.TimeoutExpired:
                        os.kill(proc.pid, signal.SIGINT)  # the main process only
                stdout, stderr = proc.communicate(input=case.stdin, timeout=case.timeout)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGABRT)  # PYTHONFAULTHANDLER: the threads' stacks on stderr
                time.sleep(2)
                os.killpg(proc.pid, signal.SIGKILL)
                stdout, stderr = proc.communicate()
                out.kinds.append("hang")
                out.detail = f"still running after {case.timeout:.0f} s; " + stderr.decode("utf-8", "replace")[-1500:]
            else:
                err = stderr.decode("utf-8", "replace")
                # -SIGINT after a Ctrl-C: Python ends by SIGINT itself (the shell's 130) when a
                # KeyboardInterrupt passed through exec()'d code (dataclasses, numpy), even if handled
                interrupted = (-signal.SIGINT,) if case.sigint_after is not None else ()
                if "Traceback" in err or proc.returncode not in (0, 2, 130, *interrupted):
                    out.kinds.append("traceback")
                    out.detail = f"exit {proc.returncode}: {err.strip()[-400:]!r}"
                else:
                    out.detail = f"exit {proc.returncode}: {err.strip().splitlines()[-1][:200] if err.strip() else ''}"
            try:  # leftover worker processes of the group
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        after = snapshot(d)
        lost = overwritten(before, after, case, argv, d)
        if lost:
            out.kinds.append("overwrite")
            out.detail += " overwrote: " + ", ".join(lost[:5])
    except Exception as exc:  # noqa: BLE001 - the probe's own bug: report it as such, go on
        out = Outcome(case.name, ["probe-error"], f"{exc.__class__.__name__}: {exc}")
    out.seconds = time.monotonic() - start
    bg = BACKGROUND.pop(d, None)
    if bg is not None:
        if bg.poll() is not None and bg.returncode not in (0, 2, 130):
            out.kinds.append("traceback")
            out.detail += f" the background command ended with exit {bg.returncode}"
        try:
            os.killpg(bg.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        bg.wait()
    for p in d.rglob("*"):  # read-only folders made by cases: make them removable
        try:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        except OSError:
            pass
    try:
        d.chmod(0o755)
    except OSError:
        pass
    shutil.rmtree(d, ignore_errors=True)
    return out


# ---------------------------------------------------------------------------- the base inputs


class Base:
    """Inputs the cases copy: a small position set, weights, a self-play folder, a run."""

    def __init__(self, folder: Path) -> None:
        self.dir = folder

    def build(self) -> None:
        d = self.dir
        d.mkdir(parents=True, exist_ok=True)
        steps = [
            ("sample", ["ingest", "--sample", "--out", str(d / "sample"), "--workers", "1", "--no-progress"]),
            ("w.json", ["export", "classic", "--format", "json", "--out", str(d / "w.json")]),
            ("w.txt", ["export", "classic", "--format", "text", "--out", str(d / "w.txt")]),
            ("sp", ["selfplay", "material", "--out", str(d / "sp"), "--games", "2", "--nodes", "60", "--workers", "1",
                    "--no-progress", "--max-plies", "40"]),
            ("run", ["tune", "--method", "mmto", "--data", str(d / "sample"), "--out", str(d / "run"),
                     "--iterations", "1", "--max-train", "150", "--max-validation", "60", "--depth", "1", "--quiet",
                     "--threads", "1"]),
            ("ga", ["tune", "--method", "ga", "--data", str(d / "sample"), "--out", str(d / "ga"),
                    "--generations", "1", "--population", "6", "--sample", "40", "--max-validation", "40", "--quiet",
                    "--train", "material", "--threads", "1"]),
        ]
        for name, argv in steps:
            if (d / name).exists():
                continue
            r = tuner(argv, d)
            if r.returncode != 0:
                raise SystemExit(f"probe: building {name} failed: {r.stderr[-2000:]}")
        shutil.copy(BUILTIN / "nnue.mtnn", d / "nnue.mtnn")
        shutil.copy(BUILTIN / "gm-nn.mtnn", d / "gm-nn.mtnn")
        # the sample games, and a bigger PGN for interrupts (the sample 12 times)
        shutil.copy(SAMPLE_PGN, d / "games.pgn")
        big = d / "big.pgn"
        if not big.exists():
            text = SAMPLE_PGN.read_text(encoding="utf-8")
            big.write_text("\n\n".join([text] * 12), encoding="utf-8")

    def copy(self, name: str, d: Path, as_name: str | None = None) -> Path:
        src, dst = self.dir / name, d / (as_name or name)
        if src.is_dir():
            shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".lock"))
        else:
            shutil.copy(src, dst)
        return dst


B: Base  # set in main


# ---------------------------------------------------------------------------- case makers


def write(rel: str, data: bytes | str) -> Setup:
    def setup(d: Path) -> None:
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return setup


def chain(*steps: Setup) -> Setup:
    def setup(d: Path) -> None:
        for s in steps:
            s(d)
    return setup


def copy(name: str, as_name: str | None = None) -> Setup:
    return lambda d: B.copy(name, d, as_name) and None  # type: ignore[func-returns-value]


def fifo(rel: str) -> Setup:
    return lambda d: os.mkfifo(d / rel)


def symlink(rel: str, target: str) -> Setup:
    return lambda d: os.symlink(target, d / rel)


def mkdir(rel: str) -> Setup:
    return lambda d: (d / rel).mkdir(parents=True, exist_ok=True)


def readonly(rel: str) -> Setup:
    return lambda d: (d / rel).chmod(0o555 if (d / rel).is_dir() else 0o444)


def modify(rel: str, fn: Callable[[bytes], bytes]) -> Setup:
    def setup(d: Path) -> None:
        p = d / rel
        p.write_bytes(fn(p.read_bytes()))
    return setup


def classic_doc() -> dict:  # type: ignore[type-arg]
    return json.loads((BUILTIN / "classic.json").read_text())


def weights_json(mutate: Callable[[dict], object]) -> bytes:  # type: ignore[type-arg]
    doc = classic_doc()
    res = mutate(doc)
    return json.dumps(doc if res is None else res, allow_nan=True).encode()


def network_bytes(header: dict | None = None, drop: tuple[str, ...] = (), src: str = "gm-nn.mtnn",  # type: ignore[type-arg]
                  body: Callable[[bytes], bytes] | None = None) -> bytes:
    """A network file with its header's keys changed, its CRC made right."""
    data = (BUILTIN / src).read_bytes()
    version, head_len = struct.unpack("<II", data[4:12])
    head = json.loads(data[12:12 + head_len])
    for k in drop:
        head.pop(k, None)
    head.update(header or {})
    rest = data[12 + head_len:-4]
    if body is not None:
        rest = body(rest)
    new_head = json.dumps(head).encode()
    out = data[:4] + struct.pack("<II", version, len(new_head)) + new_head + rest
    return out + struct.pack("<I", zlib.crc32(out))


def pgn_game(moves: str = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *", **tags: str) -> str:
    head = {"Event": "probe", "Site": "?", "Date": "2020.01.01", "Round": "1", "White": "A", "Black": "B",
            "Result": "*", "WhiteElo": "2500", "BlackElo": "2500"}
    head.update(tags)
    return "".join(f'[{k} "{v}"]\n' for k, v in head.items()) + "\n" + moves + "\n\n"


def sample_text() -> str:
    return SAMPLE_PGN.read_text(encoding="utf-8")


MIDGAME = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"

# weights commands: {w} is the weights path (case-relative), one cheap line each
WEIGHT_USES = {
    "eval": ["eval", MIDGAME, "--weights", "{w}"],
    "export": ["export", "{w}", "--format", "c", "--out", "{d}/o.h"],
    "epd": ["bench", "epd", "{d}/s.epd", "--weights", "{w}", "--depth", "1", "--workers", "1"],
    "tune-start": ["tune", "--method", "mmto", "--data", "{d}/sample", "--out", "{d}/r", "--start", "{w}",
                   "--iterations", "1", "--max-train", "60", "--max-validation", "30", "--depth", "1", "--quiet"],
    "move-match": ["bench", "move-match", "--weights", "{w}", "--data", "{d}/sample", "--max-positions", "50",
                   "--threads", "1"],
    "match": ["bench", "match", "{w}", "material", "--games", "2", "--nodes", "50", "--workers", "1",
              "--max-plies", "20", "--out", "{d}/m.pgn"],
    "selfplay": ["selfplay", "{w}", "--out", "{d}/sp", "--games", "1", "--nodes", "50", "--workers", "1",
                 "--max-plies", "16", "--no-progress"],
}
SUITE = '4k3/8/8/8/8/8/8/4K2R w K - bm O-O; id "probe.1";\n'


def weight_cases() -> list[Case]:
    rng = random.Random(58)
    kinds: dict[str, Setup] = {
        "empty": write("w.json", b""),
        "spaces": write("w.json", b"   \n\t\n"),
        "bom-json": write("w.json", codecs.BOM_UTF8 + weights_json(lambda d: None)),
        "utf16-json": write("w.json", weights_json(lambda d: None).decode().encode("utf-16")),
        "utf16be-nobom": write("w.json", weights_json(lambda d: None).decode().encode("utf-16-be")),
        "utf32-json": write("w.json", weights_json(lambda d: None).decode().encode("utf-32")),
        "crlf-json": write("w.json", json.dumps(classic_doc(), indent=1).replace("\n", "\r\n")),
        "binary": write("w.json", bytes(rng.randrange(256) for _ in range(5000))),
        "nul-json": write("w.json", b"{\x00\x00}"),
        "null": write("w.json", b"null"),
        "list": write("w.json", b"[1, 2, 3]"),
        "string": write("w.json", b'"classic"'),
        "number": write("w.json", b"1e999"),
        "weights-list": write("w.json", weights_json(lambda d: d.__setitem__("weights", [1, 2]))),
        "weights-nan": write("w.json", weights_json(lambda d: d["weights"].__setitem__("mg.material.knight", float("nan")))),
        "weights-inf": write("w.json", weights_json(lambda d: d["weights"].__setitem__("eg.material.rook", float("-inf")))),
        "weights-str": write("w.json", weights_json(lambda d: d["weights"].__setitem__("mg.material.bishop", "320"))),
        "weights-bool": write("w.json", weights_json(lambda d: d["weights"].__setitem__("mg.material.queen", True))),
        "weights-null": write("w.json", weights_json(lambda d: d["weights"].__setitem__("eg.material.queen", None))),
        "weights-float": write("w.json", weights_json(lambda d: d["weights"].__setitem__("mg.material.pawn", 100.5))),
        "weights-1e300": write("w.json", weights_json(lambda d: d["weights"].__setitem__("mg.material.pawn", 1e300))),
        "weights-dict": write("w.json", weights_json(lambda d: d["weights"].__setitem__("mg.material.pawn", {"a": 1}))),
        "unknown-name": write("w.json", weights_json(lambda d: d["weights"].__setitem__("mg.material.dragon", 5))),
        "no-weights-key": write("w.json", weights_json(lambda d: d.pop("weights"))),
        "hash-int": write("w.json", weights_json(lambda d: d.__setitem__("catalog_hash", 12345))),
        "hash-missing": write("w.json", weights_json(lambda d: d.pop("catalog_hash", None))),
        "phase-max-0": write("w.json", weights_json(lambda d: d.__setitem__("phase_max", 0))),
        "phase-max-neg": write("w.json", weights_json(lambda d: d.__setitem__("phase_max", -24))),
        "phase-max-str": write("w.json", weights_json(lambda d: d.__setitem__("phase_max", "24"))),
        "phase-max-float": write("w.json", weights_json(lambda d: d.__setitem__("phase_max", 24.0))),
        "metadata-list": write("w.json", weights_json(lambda d: d.__setitem__("metadata", ["x"]))),
        "name-huge": write("w.json", weights_json(lambda d: d.__setitem__("metadata", {"name": "N" * 300_000}))),
        "name-control": write("w.json", weights_json(lambda d: d.__setitem__("metadata", {"name": "a\x1b[2Jb\u202e"}))),
        "dup-keys": write("w.json", weights_json(lambda d: None)[:-1] + b', "weights": {}}'),
        "truncated": write("w.json", weights_json(lambda d: None)[:5000]),
        "schema-9": write("w.json", weights_json(lambda d: d.__setitem__("schema_version", 9))),
        "schema-str": write("w.json", weights_json(lambda d: d.__setitem__("schema_version", "1"))),
        "text-garbage": write("w.txt", "[mg.material]\npawn = banana\n"),
        "text-bom-crlf": chain(copy("w.txt"), modify("w.txt", lambda b: codecs.BOM_UTF8 + b.replace(b"\n", b"\r\n"))),
        "text-utf16": chain(copy("w.txt"), modify("w.txt", lambda b: b.decode().encode("utf-16"))),
        "text-truncated": chain(copy("w.txt"), modify("w.txt", lambda b: b[: len(b) // 2])),
        "text-dup-line": chain(copy("w.txt"), modify("w.txt", lambda b: b + b"\nmg.material.pawn = 5\n")),
        "dir": mkdir("w.json"),
        "dangling": symlink("w.json", "nowhere.json"),
        "loop": chain(symlink("w.json", "w2.json"), symlink("w2.json", "w.json")),
        "fifo": fifo("w.json"),
        "unreadable": chain(copy("w.json"), lambda d: (d / "w.json").chmod(0)),
        "newline-name": chain(copy("w.json", "w\nx.json")),
        "json-as-mtnn": chain(copy("w.json", "w.mtnn")),
        "mtnn-as-json": chain(copy("nnue.mtnn", "w.json")),
        "mtnn-truncated": write("w.mtnn", (BUILTIN / "nnue.mtnn").read_bytes()[:777]),
        "mtnn-magic-only": write("w.mtnn", (BUILTIN / "nnue.mtnn").read_bytes()[:4]),
        "mtnn-h-zero": write("w.mtnn", network_bytes({"shape": {"h": 0, "h2": 16, "h3": 16, "buckets": "none"}})),
        "mtnn-h-neg": write("w.mtnn", network_bytes({"shape": {"h": -64, "h2": 16, "h3": 16, "buckets": "none"}})),
        "mtnn-h-str": write("w.mtnn", network_bytes({"shape": {"h": "64", "h2": 16, "h3": 16, "buckets": "none"}})),
        "mtnn-h-float": write("w.mtnn", network_bytes({"shape": {"h": 64.0, "h2": 16, "h3": 16, "buckets": "none"}})),
        "mtnn-h-huge": write("w.mtnn", network_bytes({"shape": {"h": 2**40, "h2": 16, "h3": 16, "buckets": "none"}})),
        "mtnn-h3-bool": write("w.mtnn", network_bytes({"shape": {"h": 64, "h2": 16, "h3": True, "buckets": "none"}})),
        "mtnn-h2-null": write("w.mtnn", network_bytes({"shape": {"h": 64, "h2": None, "h3": 16, "buckets": "none"}})),
        "mtnn-buckets-odd": write("w.mtnn", network_bytes({"shape": {"h": 64, "h2": 16, "h3": 16, "buckets": "king9"}})),
        "mtnn-buckets-int": write("w.mtnn", network_bytes({"shape": {"h": 64, "h2": 16, "h3": 16, "buckets": 4}})),
        "mtnn-shape-list": write("w.mtnn", network_bytes({"shape": [64, 16, 16]})),
        "mtnn-shape-extra": write("w.mtnn", network_bytes({"shape": {"h": 64, "h2": 16, "h3": 16, "buckets": "none",
                                                                      "h4": 1}})),
        "mtnn-qa-float": write("w.mtnn", network_bytes({"qa": 255.0})),
        "mtnn-phase-bool": write("w.mtnn", network_bytes({"phase_max": True})),
        "mtnn-format-list": write("w.mtnn", network_bytes({"format": ["movetuner-network"]})),
        "mtnn-layout-int": write("w.mtnn", network_bytes({"layout_hash": 7})),
        "mtnn-no-layout": write("w.mtnn", network_bytes(drop=("layout_hash",))),
        "mtnn-linear-n-float": write("w.mtnn", network_bytes({"linear": {"catalog_hash": "05dcf0990061da21",
                                                                        "n": 1110.0}})),
        "mtnn-linear-empty": write("w.mtnn", network_bytes({"linear": {}})),
        "mtnn-linear-dropped": write("w.mtnn", network_bytes({"linear": None})),
        "mtnn-meta-huge": write("w.mtnn", network_bytes({"metadata": {"name": "x" * 200_000, "n": [1] * 1000}})),
        "mtnn-meta-nan": write("w.mtnn", network_bytes({"metadata": {"name": "n", "v": float("nan")}})),
        "mtnn-header-not-utf8": write("w.mtnn", network_bytes({"metadata": {"name": "\udcff"}}) if False else
                                      (lambda b: b)(network_bytes({"metadata": {"name": "é"}}))),
        "mtnn-extra-bytes": write("w.mtnn", network_bytes(body=lambda b: b + b"\0" * 8)),
        "mtnn-short-body": write("w.mtnn", network_bytes(body=lambda b: b[:-6])),
        "mtnn-nnue-direct-h2": write("w.mtnn", network_bytes({"shape": {"h": 128, "h2": 16, "h3": 0, "buckets": "none"}},
                                                             src="nnue.mtnn")),
        "mtnn-version-2": write("w.mtnn", (lambda b: (lambda o: o + struct.pack("<I", zlib.crc32(o)))(
            b[:4] + struct.pack("<I", 2) + b[8:-4]))(network_bytes())),
        "mtnn-headlen-huge": write("w.mtnn", (lambda b: (lambda o: o + struct.pack("<I", zlib.crc32(o)))(
            b[:8] + struct.pack("<I", 2**31) + b[12:-4]))(network_bytes())),
    }
    cases = []
    # every kind through eval (cheap); a spread of kinds through the other commands
    spread = ["bom-json", "utf16-json", "weights-nan", "phase-max-0", "loop", "fifo", "mtnn-h-str",
              "mtnn-buckets-odd", "mtnn-linear-n-float", "name-huge", "text-utf16", "mtnn-nnue-direct-h2"]
    for kind, setup in kinds.items():
        wname = "w.mtnn" if kind.startswith("mtnn-") or kind == "json-as-mtnn" else (
            "w.txt" if kind.startswith("text-") else ("w\nx.json" if kind == "newline-name" else "w.json"))
        commands = ["eval"] + ([c for c in WEIGHT_USES if c != "eval"] if kind in spread else [])
        for command in commands:
            argv = [a.replace("{w}", "{d}/" + wname) for a in WEIGHT_USES[command]]
            extra: list[Setup] = [setup]
            if command in ("tune-start", "move-match"):
                extra.append(copy("sample"))
            if command == "epd":
                extra.append(write("s.epd", SUITE))
            cases.append(Case(f"weights/{kind}/{command}", argv, chain(*extra), timeout=150))
    # uci --weights with a bad file, then a search
    for kind in ["empty", "binary", "fifo", "loop", "mtnn-h-zero", "mtnn-buckets-odd", "utf16-json", "dir"]:
        wname = "w.mtnn" if kind.startswith("mtnn-") else "w.json"
        cases.append(Case(f"weights/{kind}/uci-arg", ["uci", "--weights", "{d}/" + wname], kinds[kind],
                          uci=["uci", "@wait uciok", "position startpos", "go nodes 200", "@wait bestmove", "quit"],
                          timeout=60))
    return cases


def pgn_cases() -> list[Case]:
    rng = random.Random(5858)
    text = sample_text()
    g = pgn_game
    inputs: dict[str, tuple[str, bytes | str]] = {
        "empty": ("g.pgn", b""),
        "only-spaces": ("g.pgn", "\n\n   \n"),
        "bom": ("g.pgn", codecs.BOM_UTF8 + text.encode()),
        "utf16": ("g.pgn", text.encode("utf-16")),
        "utf16le-nobom": ("g.pgn", text.encode("utf-16-le")),
        "utf32": ("g.pgn", text.encode("utf-32")),
        "cr-only": ("g.pgn", text.replace("\n", "\r")),
        "crlf-mixed": ("g.pgn", text.replace("\n", "\r\n", 200)),
        "binary": ("g.pgn", bytes(rng.randrange(256) for _ in range(20000))),
        "nul-in-tags": ("g.pgn", g(Event="a\x00b") + text[:3000]),
        "latin1": ("g.pgn", g(White="Müller").encode("latin-1") + text.encode()),
        "unicode-names": ("g.pgn", g(White="\u202e\u0645\u0631\u062d\u0628\u0627", Black="🐴" * 50) + text),
        "huge-tag": ("g.pgn", g(Annotator="x" * 3_000_000) + text[:2000]),
        "one-line-5mb": ("g.pgn", "1. e4 " * 900_000),
        "deep-variations": ("g.pgn", g("1. e4 " + "(1. d4 " * 3000 + ")" * 3000 + " e5 *")),
        "unclosed-comment": ("g.pgn", g("1. e4 { never closed e5 2. Nf3 *") + text),
        "unclosed-variation": ("g.pgn", g("1. e4 (1. d4 d5 e5 2. Nf3 *") + text),
        "fen-counters-neg": ("g.pgn", g("1. e4 e5 *", FEN="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -5 -3",
                                        SetUp="1")),
        "fen-counters-huge": ("g.pgn", g("1. e4 e5 *", FEN="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 "
                                         + "9" * 40, SetUp="1")),
        "fen-halfmove-1e30": ("g.pgn", g("1. e4 e5 *", FEN="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - "
                                         + "1" * 31 + " 1", SetUp="1")),
        "fen-bad-castling": ("g.pgn", g("1. e4 e5 *", FEN="4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1", SetUp="1")),
        "fen-bad-ep": ("g.pgn", g("1. e4 e5 *", FEN="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1",
                                  SetUp="1")),
        "fen-9-files": ("g.pgn", g("1. e4 *", FEN="rnbqkbnrr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", SetUp="1")),
        "fen-no-kings": ("g.pgn", g("1. e4 *", FEN="8/8/8/8/8/8/PPPPPPPP/8 w - - 0 1", SetUp="1")),
        "fen-3-kings": ("g.pgn", g("1. Kd2 *", FEN="4k3/8/8/8/8/8/8/K3K3 w - - 0 1", SetUp="1")),
        "fen-stalemate": ("g.pgn", g("*", FEN="7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", SetUp="1")),
        "fen-check-wrong-side": ("g.pgn", g("1. Kb1 *", FEN="k7/8/8/8/8/8/8/K6r w - - 0 1", SetUp="1") +
                                 g("1. Qxa8 *", FEN="r3k3/8/8/8/8/8/8/Q3K3 b - - 0 1", SetUp="1")),
        "variant-tags": ("g.pgn", g(Variant="Atomic") + g(Variant="chess960", FEN="bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/"
                                                           "NPP1P1PP/BQ1BNRKR w HFhf - 2 9", SetUp="1")),
        "illegal-moves": ("g.pgn", g("1. e4 e5 2. Ke3 Qh4 3. Qxf7# 1-0") + text[:5000]),
        "moves-only": ("g.pgn", "1. e4 e5 2. Nf3 *\n"),
        "tags-only": ("g.pgn", '[Event "x"]\n[Result "1-0"]\n' * 1000),
        "elo-odd": ("g.pgn", g(WhiteElo="-5", BlackElo="99999999999999999999999") + g(WhiteElo="nan", BlackElo="2.5e3")),
        "result-odd": ("g.pgn", g("1. e4 e5 3-0", Result="3-0") + g("1. e4 e5 1-0", Result="0-1")),
        "nags-many": ("g.pgn", g("1. e4 " + "$1 " * 20000 + "e5 *")),
        "many-games-no-moves": ("g.pgn", g("*") * 3000),
        "gz-not-gzip": ("g.pgn.gz", text.encode()),
        "gz-truncated": ("g.pgn.gz", gzip.compress(text.encode())[:4000]),
        "bz2-empty": ("g.pgn.bz2", b""),
        "zst-garbage": ("g.pgn.zst", b"\x28\xb5\x2f\xfd" + bytes(rng.randrange(256) for _ in range(3000))),
        "gz-of-binary": ("g.pgn.gz", gzip.compress(bytes(rng.randrange(256) for _ in range(30000)))),
        "gz-bomb-ish": ("g.pgn.gz", gzip.compress(b"\n" * 50_000_000, compresslevel=9)),
    }
    cases = []
    for kind, (name, data) in inputs.items():
        cases.append(Case(f"pgn/{kind}", ["ingest", "{d}/" + name, "--out", "{d}/set", "--workers", "1",
                                          "--no-progress", "--allow-setup"], write(name, data), timeout=180))
    # a few through bench openings and bench match --openings too
    for kind in ["utf16", "fen-counters-huge", "fen-3-kings", "deep-variations", "illegal-moves", "fen-stalemate",
                 "unicode-names", "cr-only"]:
        name, data = inputs[kind]
        cases.append(Case(f"pgn/{kind}/openings", ["bench", "openings", "--from-pgn", "{d}/" + name, "--out", "{d}/o.epd",
                                                   "--count", "3", "--depth", "1"], write(name, data), timeout=180))
        cases.append(Case(f"pgn/{kind}/match-openings", ["bench", "match", "material", "classic", "--games", "2",
                                                         "--nodes", "40", "--workers", "1", "--max-plies", "12",
                                                         "--openings", "{d}/" + name, "--out", "{d}/m.pgn"],
                          write(name, data), timeout=180))
    # files of the wrong kind where a PGN is expected
    for kind, setup in {"dir": mkdir("g.pgn"), "fifo": fifo("g.pgn"), "dangling": symlink("g.pgn", "none.pgn"),
                        "loop": chain(symlink("g.pgn", "h.pgn"), symlink("h.pgn", "g.pgn")),
                        "unreadable": chain(write("g.pgn", pgn_game()), lambda d: (d / "g.pgn").chmod(0)),
                        "dev-null": symlink("g.pgn", "/dev/null"), "dev-urandom": symlink("g.pgn", "/dev/urandom")}.items():
        cases.append(Case(f"pgn-file/{kind}", ["ingest", "{d}/g.pgn", "--out", "{d}/set", "--workers", "1",
                                               "--no-progress"], setup, timeout=60))
        cases.append(Case(f"pgn-file/{kind}/openings", ["bench", "openings", "--from-pgn", "{d}/g.pgn", "--out",
                                                        "{d}/o.epd", "--count", "2", "--depth", "1"], setup, timeout=60))
    return cases


def epd_cases() -> list[Case]:
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -"
    lines = {
        "result-2": f"{fen} [2.0]\n",
        "result-nan": f"{fen} [nan]\n{fen} [inf]\n",
        "bullet-inf": f"{fen} 0 1 | inf | 1.0\n{fen} 0 1 | 1e400 | 0.5\n",
        "bullet-cp-str": f"{fen} 0 1 | abc | 1.0\n",
        "c9-3-0": f'{fen} c9 "3-0";\n',
        "ce-huge": f"{fen} ce 99999999999999999999999; c9 \"1-0\";\n",
        "bm-illegal": f"{fen} bm Ke2xe8; c9 \"1-0\";\n",
        "bm-garbage": f"{fen} bm ;;;;; c9 \"1-0\";\n",
        "no-ops": f"{fen}\n" * 50,
        "mate-pos": "7k/6Q1/6K1/8/8/8/8/8 b - - c9 \"1-0\";\n",
        "4-fields-only": "8/8/8/8/8/8/8/8 w - -\n",
        "fields-7": f"{fen} 0 1 extra [1.0]\n",
        "crlf-bom": codecs.BOM_UTF8.decode() + f"{fen} [1.0]\r\n{fen} [0.0]\r\n",
        "mixed-garbage": f"{fen} [1.0]\n\x00\x01\x02\nnot a fen at all\n{fen} [0.5]\n",
        "long-line": f"{fen} [1.0] " + "x" * 2_000_000 + "\n",
        "utf16": None,  # below
        "many-lines": (f"{fen} [1.0]\n" * 200000),
    }
    cases = []
    for kind, body in lines.items():
        data: bytes = (f"{fen} [1.0]\n{fen} [0.0]\n".encode("utf-16") if body is None else body.encode("utf-8"))
        cases.append(Case(f"epd-ingest/{kind}", ["ingest", "{d}/p.epd", "--out", "{d}/set", "--workers", "1",
                                                 "--no-progress"], write("p.epd", data), timeout=180))
    suites = {
        "bm-illegal": f"{fen} bm Qxh8; id \"a\";\n",
        "am-only": f"{fen} am Nf3; id \"a\";\n",
        "c8-c9-mismatch": f'{fen} c8 "10 5 3"; c9 "Nxe5 Bc4"; id "a";\n',
        "c8-neg": f'{fen} c8 "-10 nan"; c9 "Nxe5 Bc4"; id "a";\n',
        "no-bm": f'{fen} id "a";\n',
        "mate-bm": '7k/6Q1/6K1/8/8/8/8/8 b - - bm Kxg7; id "m";\n',
        "stalemate": '7k/5Q2/6K1/8/8/8/8/8 b - - bm Kh8; id "s";\n',
        "id-huge": f'{fen} bm Nxe5; id "{"i" * 500_000}";\n',
        "id-control": f'{fen} bm Nxe5; id "a\x1b[31mred\u2028b";\n',
        "utf16-bom": None,
        "utf16-nobom": None,
        "empty": "",
        "only-comments": "# nothing\n# here\n",
        "bm-both-castle": '4k3/8/8/8/8/8/8/R3K2R w KQ - bm O-O O-O-O 0-0; id "c";\n',
        "unicode-bm": f"{fen} bm Ｎxe5; id \"u\";\n",
        "counters-huge": f"{fen} hmvc 99999999999999999999; fmvn -1; bm Nxe5;\n",
        "fen-counters-in-epd": f"{fen} 0 999999999999999999999 bm Nxe5;\n",
    }
    for kind, body in suites.items():
        if body is None:
            data = f'{fen} bm Nxe5; id "a";\n'.encode("utf-16" if kind == "utf16-bom" else "utf-16-le")
        else:
            data = body.encode("utf-8")
        cases.append(Case(f"epd-suite/{kind}", ["bench", "epd", "{d}/s.epd", "--weights", "material", "--depth", "1",
                                                "--workers", "1"], write("s.epd", data), timeout=120))
    # an EPD suite through compare, and as openings for selfplay / match
    for kind in ["bm-illegal", "utf16-bom", "stalemate", "empty", "mate-bm"]:
        body = suites[kind]
        data = (f'{fen} bm Nxe5; id "a";\n'.encode("utf-16") if body is None else body.encode())
        cases.append(Case(f"epd-suite/{kind}/selfplay-openings",
                          ["selfplay", "material", "--out", "{d}/sp", "--games", "2", "--nodes", "40", "--workers", "1",
                           "--max-plies", "12", "--openings", "{d}/s.epd", "--no-progress"], write("s.epd", data),
                          timeout=120))
        cases.append(Case(f"epd-suite/{kind}/match-openings",
                          ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40", "--workers", "1",
                           "--max-plies", "12", "--openings", "{d}/s.epd", "--out", "{d}/m.pgn"], write("s.epd", data),
                          timeout=120))
    return cases


def config_cases() -> list[Case]:
    tomls = {
        "empty": b"",
        "bom": codecs.BOM_UTF8 + b'method = "mmto"\niterations = 1\n',
        "utf16": 'method = "mmto"\n'.encode("utf-16"),
        "binary": bytes(range(256)) * 10,
        "crlf": b'method = "mmto"\r\niterations = 1\r\nmax_train = 60\r\n',
        "wrong-types": b'method = 5\niterations = "ten"\n',
        "unknown-key": b'method = "mmto"\nbanana = 1\n',
        "iterations-huge": b'method = "mmto"\niterations = 9999999999999999999\n',
        "iterations-neg": b'method = "mmto"\niterations = -3\n',
        "lr-nan": b'method = "mmto"\nlr = nan\n',
        "lr-inf": b'method = "mmto"\nlr = inf\n',
        "table-as-value": b'method = "mmto"\n[mmto]\n[mmto.x]\ny = 1\n',
        "array-of-tables": b'[[mmto]]\na = 1\n[[mmto]]\nb = 2\n',
        "deep-inline": b'x = ' + b'{a = ' * 200 + b'1' + b'}' * 200 + b'\n',
        "dup-key": b'method = "mmto"\nmethod = "ga"\n',
        "data-nowhere": b'method = "mmto"\ndata = "/nonexistent/set"\n',
        "out-is-data": b'method = "mmto"\nout = "sample"\n',
        "start-fifo": b'method = "mmto"\nstart = "f.fifo"\n',
        "terms-missing": b'method = "mmto"\nterms = "nope.py"\n',
        "train-empty": b'method = "mmto"\ntrain = []\n',
        "train-unknown": b'method = "mmto"\ntrain = ["dragons"]\n',
        "datetime": b'method = 1979-05-27T07:32:00Z\n',
    }
    cases = []
    for kind, body in tomls.items():
        setup = chain(write("c.toml", body), copy("sample"), fifo("f.fifo"))
        cases.append(Case(f"config/{kind}/tune", ["tune", "--config", "{d}/c.toml", "--data", "{d}/sample", "--out",
                                                  "{d}/r", "--iterations", "1", "--max-train", "60",
                                                  "--max-validation", "30", "--depth", "1", "--quiet"], setup,
                          timeout=150))
    for kind in ["empty", "bom", "utf16", "binary", "wrong-types", "deep-inline", "datetime"]:
        body = tomls[kind].replace(b"method", b"min_elo") if kind == "wrong-types" else tomls[kind]
        cases.append(Case(f"config/{kind}/ingest", ["ingest", "{d}/g.pgn", "--config", "{d}/c.toml", "--out", "{d}/set",
                                                    "--workers", "1", "--no-progress"],
                          chain(write("c.toml", b"[ingest]\n" + body if kind in ("wrong-types",) else body),
                                copy("games.pgn", "g.pgn")), timeout=120))
        cases.append(Case(f"config/{kind}/selfplay", ["selfplay", "material", "--config", "{d}/c.toml", "--out",
                                                      "{d}/sp", "--games", "1", "--nodes", "40", "--workers", "1",
                                                      "--max-plies", "10", "--no-progress"],
                          write("c.toml", b"[selfplay]\n" + body if kind in ("wrong-types",) else body), timeout=120))
    # --resume with a damaged config.toml
    for kind in ["empty", "bom", "utf16", "binary", "wrong-types", "dup-key", "data-nowhere", "datetime"]:
        cases.append(Case(f"config/{kind}/resume", ["tune", "--resume", "{d}/run", "--iterations", "2", "--quiet"],
                          chain(copy("sample"), copy("run"), write("run/config.toml", tomls[kind])), timeout=150,
                          owned=("run/*",)))
    return cases


DATA_DAMAGE: dict[str, Callable[[Path], None]] = {}


def set_damages() -> dict[str, Setup]:
    def garble(rel: str, how: str) -> Setup:
        def setup(d: Path) -> None:
            p = d / "sample" / rel
            b = p.read_bytes()
            if how == "truncate":
                p.write_bytes(b[: len(b) // 3])
            elif how == "zero":
                p.write_bytes(b"")
            elif how == "flip":
                ba = bytearray(b)
                for i in range(len(ba) // 2, len(ba) // 2 + 64):
                    ba[i] ^= 0xFF
                p.write_bytes(bytes(ba))
            elif how == "head":
                p.write_bytes(b"PAR1" + b"\0" * 100 + b"PAR1")
            elif how == "json":
                p.write_bytes(b"{}")
        return setup

    def manifest(fn: Callable[[dict], object]) -> Setup:  # type: ignore[type-arg]
        def setup(d: Path) -> None:
            p = d / "sample" / "manifest.json"
            doc = json.loads(p.read_text())
            res = fn(doc)
            p.write_text(json.dumps(doc if res is None else res, allow_nan=True))
        return setup

    def rm(rel: str) -> Setup:
        def setup(d: Path) -> None:
            p = d / "sample" / rel
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        return setup

    return {
        "train-truncated": garble("train.parquet", "truncate"),
        "train-zero": garble("train.parquet", "zero"),
        "train-flipped": garble("train.parquet", "flip"),
        "validation-fake-header": garble("validation.parquet", "head"),
        "test-is-json": garble("test.parquet", "json"),
        "train-missing": rm("train.parquet"),
        "test-missing": rm("test.parquet"),
        "manifest-missing": rm("manifest.json"),
        "manifest-empty": lambda d: (d / "sample" / "manifest.json").write_bytes(b""),
        "manifest-utf16": lambda d: (d / "sample" / "manifest.json").write_bytes(
            (d / "sample" / "manifest.json").read_text().encode("utf-16")),
        "manifest-bom": lambda d: (d / "sample" / "manifest.json").write_bytes(
            codecs.BOM_UTF8 + (d / "sample" / "manifest.json").read_bytes()),
        "manifest-list": manifest(lambda m: [m]),
        "manifest-null": manifest(lambda m: None if False else "null"),
        "manifest-no-positions": manifest(lambda m: {k: v for k, v in m.items() if "position" not in k}),
        "manifest-counts-neg": manifest(lambda m: m.__setitem__("positions", {"train": -5, "validation": "x"})),
        "manifest-format-odd": manifest(lambda m: m.__setitem__("format", {"x": 1})),
        "manifest-schema-99": manifest(lambda m: m.__setitem__("schema_version", 99)),
        "train-dir": chain(rm("train.parquet"), lambda d: (d / "sample" / "train.parquet").mkdir()),
        "train-loop": chain(rm("train.parquet"), lambda d: os.symlink("train2.parquet", d / "sample" / "train.parquet"),
                            lambda d: os.symlink("train.parquet", d / "sample" / "train2.parquet")),
        "train-fifo": chain(rm("train.parquet"), lambda d: os.mkfifo(d / "sample" / "train.parquet")),
        "train-dangling": chain(rm("train.parquet"), lambda d: os.symlink("gone", d / "sample" / "train.parquet")),
        "stray-files": lambda d: [(d / "sample" / n).write_text("x") for n in ("extra.parquet", "train.mtpos", "x.json")]
        and None,
        "set-is-file": lambda d: (shutil.rmtree(d / "sample"), (d / "sample").write_text("not a folder")) and None,
        "set-loop": lambda d: (shutil.rmtree(d / "sample"), os.symlink("sample2", d / "sample"),
                               os.symlink("sample", d / "sample2")) and None,
        "train-unreadable": lambda d: (d / "sample" / "train.parquet").chmod(0),
    }


def set_cases() -> list[Case]:
    uses = {
        "tune": ["tune", "--method", "mmto", "--data", "{d}/sample", "--out", "{d}/r", "--iterations", "1",
                 "--max-train", "60", "--max-validation", "30", "--depth", "1", "--quiet"],
        "texel": ["tune", "--method", "texel", "--data", "{d}/sample", "--out", "{d}/r", "--epochs", "1",
                  "--max-train", "60", "--max-validation", "30", "--quiet"],
        "move-match": ["bench", "move-match", "--weights", "material", "--data", "{d}/sample", "--max-positions", "30",
                       "--threads", "1"],
        "merge": ["merge", "{d}/sample", "{d}/good", "--out", "{d}/merged", "--no-progress"],
        "convert": ["convert", "{d}/sample", "{d}/compact", "--to", "compact"],
        "moves-measure": ["moves", "measure", "--data", "{d}/sample", "--max-positions", "30"],
        "moves-train": ["moves", "train", "--data", "{d}/sample", "--out", "{d}/mm.json", "--epochs", "1",
                        "--max-train", "60", "--max-validation", "30", "--quiet"],
    }
    cases = []
    for kind, damage in set_damages().items():
        for use, argv in uses.items():
            if use in ("texel", "moves-train", "moves-measure", "move-match") and kind not in (
                    "train-truncated", "manifest-list", "train-loop", "manifest-utf16", "test-is-json",
                    "train-fifo", "set-is-file", "manifest-counts-neg"):
                continue
            setup = chain(copy("sample"), damage, copy("sample", "good") if use == "merge" else (lambda d: None))
            cases.append(Case(f"set/{kind}/{use}", argv, setup, timeout=150))
    return cases


def selfplay_folder_cases() -> list[Case]:
    resume = ["selfplay", "material", "--out", "{d}/sp", "--resume", "--games", "3", "--nodes", "60", "--workers", "1",
              "--no-progress", "--max-plies", "40"]

    def part(fn: Callable[[Path], None]) -> Setup:
        def setup(d: Path) -> None:
            fn(d / "sp" / "games")
        return setup

    def first(games: Path, ext: str) -> Path:
        return sorted(games.glob(f"part-*.{ext}"))[0]

    damages: dict[str, Setup] = {
        "parquet-truncated": part(lambda g: first(g, "parquet").write_bytes(first(g, "parquet").read_bytes()[:200])),
        "parquet-empty": part(lambda g: first(g, "parquet").write_bytes(b"")),
        "parquet-missing": part(lambda g: first(g, "parquet").unlink()),
        "json-missing": part(lambda g: first(g, "json").unlink()),
        "json-bom": part(lambda g: first(g, "json").write_bytes(codecs.BOM_UTF8 + first(g, "json").read_bytes())),
        "json-utf16": part(lambda g: first(g, "json").write_bytes(first(g, "json").read_text().encode("utf-16"))),
        "json-empty": part(lambda g: first(g, "json").write_bytes(b"")),
        "json-game-neg": part(lambda g: first(g, "json").write_text(json.dumps(
            {"games": [{**json.loads(first(g, "json").read_text())["games"][0], "game": -1}]}))),
        "json-game-huge": part(lambda g: first(g, "json").write_text(json.dumps(
            {"games": [{**json.loads(first(g, "json").read_text())["games"][0], "game": 10**30}]}))),
        "json-plies-str": part(lambda g: first(g, "json").write_text(json.dumps(
            {"games": [{k: (str(v) if isinstance(v, int) else v) for k, v in
                        json.loads(first(g, "json").read_text())["games"][0].items()}]}))),
        "part-dir": part(lambda g: (first(g, "parquet").unlink(), (g / "part-00000.parquet").mkdir())),
        "games-is-file": lambda d: (shutil.rmtree(d / "sp" / "games"), (d / "sp" / "games").write_text("x")) and None,
        "games-missing": lambda d: shutil.rmtree(d / "sp" / "games"),
        "stray-part": part(lambda g: (g / "part-99999.parquet").write_bytes(b"PAR1garbagePAR1")),
        "settings-missing": lambda d: (d / "sp" / "selfplay.json").unlink(),
        "settings-bom": lambda d: (d / "sp" / "selfplay.json").write_bytes(
            codecs.BOM_UTF8 + (d / "sp" / "selfplay.json").read_bytes()),
        "settings-list": lambda d: (d / "sp" / "selfplay.json").write_text("[]"),
        "settings-games-neg": lambda d: (d / "sp" / "selfplay.json").write_text(json.dumps(
            {**json.loads((d / "sp" / "selfplay.json").read_text()), "games": -4})),
        "lock-stale": lambda d: (d / "sp" / ".lock").write_text("999999\n"),
        "lock-garbage": lambda d: (d / "sp" / ".lock").write_bytes(b"\xff\xfe garbage"),
        "lock-dir": lambda d: (d / "sp" / ".lock").mkdir(),
        "lock-live-pid1": lambda d: (d / "sp" / ".lock").write_text("1\n"),
    }
    cases = []
    for kind, damage in damages.items():
        owned = ("sp/*", "sp/games/*")  # a resume goes on in its own folder: its files are the command's
        cases.append(Case(f"selfplay-folder/{kind}/resume", resume, chain(copy("sp"), damage), timeout=150,
                          owned=owned))
    # with other settings on resume
    for extra in (["--nodes", "61"], ["--seed", "4"], ["--max-plies", "41"], ["--search", "exact"],
                  ["--overwrite"], ["--games", "1"], ["--games", "0"], ["--format", "compact"]):
        argv = [a for a in resume]
        for i in range(0, len(extra), 2):
            flag = extra[i]
            if flag in argv and i + 1 < len(extra):
                argv[argv.index(flag) + 1] = extra[i + 1]
            else:
                argv += extra[i:i + 2]
        cases.append(Case(f"selfplay-folder/other-settings/{'_'.join(extra)}", argv, copy("sp"), timeout=150,
                          owned=("sp/*", "sp/games/*") if extra[0] != "--overwrite" else ()))
    # a self-play run into a folder that holds other things
    for kind, setup in {"run-folder": copy("run", "sp"), "position-set": copy("sample", "sp"),
                        "user-files": chain(mkdir("sp"), write("sp/notes.txt", "mine\n"), write("sp/train.parquet", "x")),
                        "file": write("sp", "i am a file"),
                        "readonly": chain(mkdir("sp"), readonly("sp")),
                        "readonly-parent": chain(mkdir("ro"), readonly("ro"))}.items():
        out = "{d}/ro/sp" if kind == "readonly-parent" else "{d}/sp"
        cases.append(Case(f"selfplay-out/{kind}", ["selfplay", "material", "--out", out, "--games", "1", "--nodes",
                                                   "40", "--workers", "1", "--max-plies", "10", "--no-progress"],
                          setup, timeout=120))
        cases.append(Case(f"selfplay-out/{kind}/overwrite", ["selfplay", "material", "--out", out, "--games", "1",
                                                             "--nodes", "40", "--workers", "1", "--max-plies", "10",
                                                             "--no-progress", "--overwrite"], setup, timeout=120))
    return cases


def run_folder_cases() -> list[Case]:
    resume = ["tune", "--resume", "{d}/run", "--iterations", "2", "--quiet"]

    def run_file(rel: str, data: bytes | Callable[[bytes], bytes]) -> Setup:
        def setup(d: Path) -> None:
            p = d / "run" / rel
            p.write_bytes(data(p.read_bytes()) if callable(data) else data)
        return setup

    def rm(rel: str) -> Setup:
        return lambda d: (d / "run" / rel).unlink()

    damages: dict[str, Setup] = {
        "metrics-nan": run_file("metrics.jsonl", lambda b: b + b'{"iteration": NaN}\n'),
        "metrics-garbage": run_file("metrics.jsonl", b"\x00\x01garbage\n"),
        "metrics-empty": run_file("metrics.jsonl", b""),
        "metrics-missing": rm("metrics.jsonl"),
        "weights-missing": rm("weights.json"),
        "weights-garbage": run_file("weights.json", b"{not json"),
        "lock-stale": lambda d: (d / "run" / ".lock").write_text("999999"),
        "lock-garbage": lambda d: (d / "run" / ".lock").write_text("\u2603 snowman"),
        "data-moved": lambda d: (d / "sample").rename(d / "sample-moved"),
        "data-replaced-by-file": lambda d: (shutil.rmtree(d / "sample"), (d / "sample").write_text("x")) and None,
    }
    for p in sorted((B.dir / "run").iterdir()) if (B.dir / "run").is_dir() else []:
        if p.is_file() and p.name.endswith(".json") and p.name != "weights.json":
            damages[f"{p.name}-truncated"] = run_file(p.name, lambda b: b[: len(b) // 2])
            damages[f"{p.name}-empty"] = run_file(p.name, b"")
            damages[f"{p.name}-missing"] = rm(p.name)
    cases = []
    for kind, damage in damages.items():
        cases.append(Case(f"run-folder/{kind}/resume", resume, chain(copy("sample"), copy("run"), damage),
                          timeout=150, owned=("run/*",)))
    for kind in ["weights-garbage", "metrics-nan", "metrics-garbage"]:
        cases.append(Case(f"run-folder/{kind}/plot", ["bench", "plot", "{d}/run", "--out", "{d}/plots"],
                          chain(copy("sample"), copy("run"), damages[kind]), timeout=120))
        cases.append(Case(f"run-folder/{kind}/compare", ["bench", "compare", "{d}/run", "material", "--data",
                                                         "{d}/sample", "--games", "0", "--max-positions", "20",
                                                         "--out", "{d}/cmp"],
                          chain(copy("sample"), copy("run"), damages[kind]), timeout=150))
    # odd resumes
    for name, argv in {
        "resume-not-a-run": ["tune", "--resume", "{d}/sample", "--iterations", "2", "--quiet"],
        "resume-missing": ["tune", "--resume", "{d}/none", "--quiet"],
        "resume-file": ["tune", "--resume", "{d}/w.json", "--quiet"],
        "resume-overwrite": ["tune", "--resume", "{d}/run", "--overwrite", "--iterations", "2", "--quiet"],
        "resume-other-out": ["tune", "--resume", "{d}/run", "--out", "{d}/elsewhere", "--iterations", "2", "--quiet"],
        "resume-other-method": ["tune", "--resume", "{d}/run", "--method", "ga", "--iterations", "2", "--quiet"],
        "resume-fewer-iterations": ["tune", "--resume", "{d}/run", "--iterations", "0", "--quiet"],
        "resume-ga": ["tune", "--resume", "{d}/ga", "--generations", "2", "--quiet"],
        "resume-twice-flag": ["tune", "--resume", "{d}/run", "--resume", "{d}/ga", "--quiet"],
    }.items():
        cases.append(Case(f"run-folder/{name}", argv, chain(copy("sample"), copy("run"), copy("ga"), copy("w.json")),
                          timeout=150, owned=("run/*", "ga/*")))
    return cases


def output_cases() -> list[Case]:
    """Outputs over inputs, over user files, into read-only places, through links."""
    tune = ["tune", "--method", "mmto", "--data", "{d}/sample", "--iterations", "1", "--max-train", "60",
            "--max-validation", "30", "--depth", "1", "--quiet"]
    cases = []
    base = chain(copy("sample"), copy("w.json"), copy("games.pgn"), copy("run"), copy("sp"), write("s.epd", SUITE))
    specs: dict[str, list[str]] = {
        "ingest-out-is-pgn": ["ingest", "{d}/games.pgn", "--out", "{d}/games.pgn", "--workers", "1", "--no-progress"],
        "ingest-out-is-set-overwrite": ["ingest", "{d}/games.pgn", "--out", "{d}/run", "--workers", "1",
                                        "--no-progress", "--overwrite"],
        "ingest-out-holds-input": ["ingest", "{d}/sp/notes.pgn", "--out", "{d}/sp", "--workers", "1", "--no-progress",
                                   "--overwrite"],
        "ingest-out-over-set": ["ingest", "{d}/games.pgn", "--out", "{d}/sample", "--workers", "1", "--no-progress"],
        "ingest-same-input-twice": ["ingest", "{d}/games.pgn", "{d}/games.pgn", "--out", "{d}/set2", "--workers", "1",
                                    "--no-progress"],
        "tune-out-is-weights-file": tune + ["--out", "{d}/w.json"],
        "tune-out-is-selfplay": tune + ["--out", "{d}/sp"],
        "tune-out-is-selfplay-overwrite": tune + ["--out", "{d}/sp", "--overwrite"],
        "tune-out-holds-start": tune + ["--out", "{d}/u", "--start", "{d}/u/mine.json", "--overwrite"],
        "tune-out-user-files": tune + ["--out", "{d}/u"],
        "tune-start-is-out-weights": tune + ["--out", "{d}/run", "--start", "{d}/run/weights.json", "--overwrite"],
        "tune-config-in-out": ["tune", "--config", "{d}/u/c.toml", "--data", "{d}/sample", "--out", "{d}/u",
                               "--overwrite", "--iterations", "1", "--max-train", "60", "--max-validation", "30",
                               "--depth", "1", "--quiet"],
        "export-out-is-pgn": ["export", "classic", "--format", "json", "--out", "{d}/games.pgn"],
        "export-out-is-dir": ["export", "classic", "--format", "json", "--out", "{d}/sample", "--overwrite"],
        "export-out-link-to-input": ["export", "{d}/w.json", "--format", "text", "--out", "{d}/lnk", "--overwrite"],
        "export-out-link-to-user": ["export", "classic", "--format", "c", "--out", "{d}/lnk2"],
        "export-out-fifo": ["export", "classic", "--format", "c", "--out", "{d}/f.fifo"],
        "export-out-fifo-overwrite": ["export", "classic", "--format", "c", "--out", "{d}/f.fifo", "--overwrite"],
        "export-out-readonly-dir": ["export", "classic", "--format", "rust", "--out", "{d}/ro/w.rs"],
        "export-out-readonly-file": ["export", "classic", "--format", "rust", "--out", "{d}/ro.rs", "--overwrite"],
        "export-out-devfull": ["export", "classic", "--format", "json", "--out", "/dev/full", "--overwrite"],
        "export-out-empty": ["export", "classic", "--format", "json", "--out", ""],
        "export-format-twice": ["export", "classic", "--format", "json", "--format", "rust", "--out", "{d}/w.rs"],
        "export-net-as-text": ["export", "{d}/n.mtnn", "--format", "text", "--out", "{d}/n.txt"],
        "export-net-over-net": ["export", "{d}/n.mtnn", "--format", "mtnn", "--out", "{d}/n2.mtnn"],
        "convert-same": ["convert", "{d}/sample", "{d}/sample", "--to", "compact", "--overwrite"],
        "convert-out-is-pgn": ["convert", "{d}/sample", "{d}/games.pgn", "--to", "bullet"],
        "convert-out-is-pgn-overwrite-link": ["convert", "{d}/sample", "{d}/lnk3", "--to", "bullet", "--overwrite"],
        "convert-into-input": ["convert", "{d}/sample", "{d}/sample/out.txt", "--to", "bullet"],
        "convert-bullet-over-set": ["convert", "{d}/sample", "{d}/run", "--to", "parquet"],
        "merge-out-is-input": ["merge", "{d}/sample", "{d}/sp", "--out", "{d}/sample", "--overwrite", "--no-progress"],
        "merge-out-is-run": ["merge", "{d}/sample", "{d}/sp", "--out", "{d}/run", "--no-progress"],
        "merge-out-is-run-overwrite": ["merge", "{d}/sample", "{d}/sp", "--out", "{d}/run", "--overwrite",
                                       "--no-progress"],
        "merge-same-twice": ["merge", "{d}/sample", "{d}/sample", "--out", "{d}/m", "--no-progress"],
        "merge-one-input": ["merge", "{d}/sample", "--out", "{d}/m", "--no-progress"],
        "merge-no-input": ["merge", "--out", "{d}/m", "--no-progress"],
        "selfplay-export-is-openings": ["selfplay", "material", "--out", "{d}/sp2", "--games", "1", "--nodes", "40",
                                        "--workers", "1", "--max-plies", "10", "--no-progress", "--openings",
                                        "{d}/s.epd", "--export", "{d}/s.epd", "--overwrite"],
        "selfplay-export-is-pgn": ["selfplay", "material", "--out", "{d}/sp2", "--games", "1", "--nodes", "40",
                                   "--workers", "1", "--max-plies", "10", "--no-progress", "--export", "{d}/games.pgn"],
        "selfplay-export-link": ["selfplay", "material", "--out", "{d}/sp2", "--games", "1", "--nodes", "40",
                                 "--workers", "1", "--max-plies", "10", "--no-progress", "--export", "{d}/lnk"],
        "selfplay-export-in-run": ["selfplay", "material", "--out", "{d}/sp2", "--games", "1", "--nodes", "40",
                                   "--workers", "1", "--max-plies", "10", "--no-progress", "--export",
                                   "{d}/run/weights.json"],
        "selfplay-export-is-dir": ["selfplay", "material", "--out", "{d}/sp2", "--games", "1", "--nodes", "40",
                                   "--workers", "1", "--max-plies", "10", "--no-progress", "--export", "{d}/sample"],
        "selfplay-export-dangling": ["selfplay", "material", "--out", "{d}/sp2", "--games", "1", "--nodes", "40",
                                     "--workers", "1", "--max-plies", "10", "--no-progress", "--export", "{d}/dang"],
        "selfplay-out-is-export": ["selfplay", "material", "--out", "{d}/sp2", "--games", "1", "--nodes", "40",
                                   "--workers", "1", "--max-plies", "10", "--no-progress", "--export", "{d}/sp2"],
        "selfplay-resume-export-existing": ["selfplay", "material", "--out", "{d}/sp", "--resume", "--games", "3",
                                            "--nodes", "60", "--workers", "1", "--max-plies", "40", "--no-progress",
                                            "--export", "{d}/w.json"],
        "match-pgn-is-openings": ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40",
                                  "--workers", "1", "--max-plies", "10", "--openings", "{d}/s.epd", "--pgn",
                                  "{d}/s.epd", "--overwrite"],
        "match-pgn-is-weights": ["bench", "match", "{d}/w.json", "classic", "--games", "2", "--nodes", "40",
                                 "--workers", "1", "--max-plies", "10", "--pgn", "{d}/lnk", "--overwrite"],
        "match-pgn-and-out": ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40", "--workers",
                              "1", "--max-plies", "10", "--pgn", "{d}/a.pgn", "--out", "{d}/games.pgn"],
        "match-chosen-by-is-pgn": ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40",
                                   "--workers", "1", "--max-plies", "10", "--out", "{d}/m.pgn", "--chosen-by",
                                   "{d}/games.pgn"],
        "epd-out-is-suite-link": ["bench", "epd", "{d}/s.epd", "--weights", "material", "--depth", "1", "--out",
                                  "{d}/lnk4", "--overwrite"],
        "epd-out-is-weights": ["bench", "epd", "{d}/s.epd", "--weights", "{d}/w.json", "--depth", "1", "--out",
                               "{d}/w.json", "--overwrite"],
        "epd-out-existing": ["bench", "epd", "{d}/s.epd", "--weights", "material", "--depth", "1", "--out",
                             "{d}/games.pgn"],
        "plot-out-is-run": ["bench", "plot", "{d}/run", "--out", "{d}/run"],
        "plot-out-is-file": ["bench", "plot", "{d}/run", "--out", "{d}/w.json", "--overwrite"],
        "plot-out-user-pngs": ["bench", "plot", "{d}/run", "--out", "{d}/u"],
        "compare-out-is-run": ["bench", "compare", "{d}/run", "material", "--data", "{d}/sample", "--games", "0",
                               "--max-positions", "20", "--out", "{d}/run", "--overwrite"],
        "compare-out-is-sp": ["bench", "compare", "material", "classic", "--data", "{d}/sample", "--games", "0",
                              "--max-positions", "20", "--out", "{d}/sp"],
        "openings-out-is-pgn": ["bench", "openings", "--from-pgn", "{d}/games.pgn", "--out", "{d}/games.pgn",
                                "--count", "2", "--depth", "1", "--overwrite"],
        "openings-out-is-exclude": ["bench", "openings", "--from-pgn", "{d}/games.pgn", "--out", "{d}/s.epd",
                                    "--exclude", "{d}/s.epd", "--count", "2", "--depth", "1", "--overwrite"],
        "moves-train-out-is-weights": ["moves", "train", "--data", "{d}/sample", "--out", "{d}/w.json", "--epochs",
                                       "1", "--max-train", "60", "--max-validation", "30", "--quiet"],
        "moves-train-out-is-manifest": ["moves", "train", "--data", "{d}/sample", "--out", "{d}/sample/manifest.json",
                                        "--epochs", "1", "--max-train", "60", "--max-validation", "30", "--quiet",
                                        "--overwrite"],
        "moves-train-label-weights-is-out": ["moves", "train", "--data", "{d}/sample", "--out", "{d}/w.json",
                                             "--labels", "search", "--label-weights", "{d}/w.json", "--epochs", "1",
                                             "--max-train", "60", "--max-validation", "30", "--quiet", "--overwrite"],
        "ladder-pgn-is-ladder": ["bench", "ladder", "material", "--ladder", "{d}/l.toml", "--openings", "{d}/s.epd",
                                 "--nodes", "40", "--games", "2", "--pgn", "{d}/l.toml", "--overwrite"],
        "ladder-plot-is-openings": ["bench", "ladder", "material", "--ladder", "{d}/l.toml", "--openings", "{d}/s.epd",
                                    "--nodes", "40", "--games", "2", "--plot", "{d}/s.epd", "--overwrite"],
    }
    extra = chain(
        base,
        lambda d: (d / "u").mkdir(),
        copy("w.json", "u/mine.json"),
        write("u/notes.txt", "my notes\n"),
        write("u/metrics.png", b"\x89PNG user"),
        write("u/c.toml", b'method = "mmto"\n'),
        write("sp/notes.pgn", pgn_game() * 3),
        symlink("lnk", "w.json"),
        write("user.h", "/* mine */\n"),
        symlink("lnk2", "user.h"),
        symlink("lnk3", "games.pgn"),
        symlink("lnk4", "s.epd"),
        symlink("dang", "nowhere/x.txt"),
        fifo("f.fifo"),
        mkdir("ro"),
        readonly("ro"),
        write("ro.rs", "// mine\n"),
        readonly("ro.rs"),
        copy("gm-nn.mtnn", "n.mtnn"),
        write("n2.mtnn", b"mine"),
        write("l.toml", '[[engine]]\nname = "x"\ncommand = "false"\nrating = 1500\n'),
    )
    for name, argv in specs.items():
        owned: tuple[str, ...] = ()
        if name.startswith("selfplay-resume"):
            owned = ("sp/*", "sp/games/*")
        cases.append(Case(f"outputs/{name}", argv, extra, timeout=150, owned=owned))
    return cases


def number_cases() -> list[Case]:
    """Out-of-range numbers: 0, negative, huge, NaN, inf, not a number, empty."""
    values = ["0", "-1", "99999999999999999999999", "nan", "-inf", "1e400", "x", "", "0x10", "1_0"]
    tune = ["tune", "--data", "{d}/sample", "--out", "{d}/r", "--quiet", "--max-validation", "30", "--max-train", "60"]
    opts: list[tuple[str, list[str], str, list[str]]] = [
        # (group, base argv, option, values)
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--lr", values[:8]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--slope", ["0", "-1", "nan", "1e400"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1"], "--depth", ["0", "-2", "5", "nan", "99999999999"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--window", ["0", "-5", "nan", "1e400"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--chunk", ["0", "-1", "1", "2e9"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--budget", ["0", "-1", "1",
                                                                                            "9" * 25]),
        ("mmto", tune + ["--method", "mmto", "--depth", "1"], "--iterations", ["0", "-1", "9" * 25, "1.5"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--l1", ["-1", "nan", "inf"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--patience", ["0", "-1"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--threads", ["-1", "4096",
                                                                                             "9" * 25]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--seed", ["-1", "1e3",
                                                                                          str(2**64)]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--max-train", ["-1", "1",
                                                                                               "9" * 25]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--result-weight", ["-1", "nan"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--step", ["0", "-3", "nan"]),
        ("mmto", tune + ["--method", "mmto", "--iterations", "1", "--depth", "1"], "--inner-steps", ["0", "-1"]),
        ("ga", tune + ["--method", "ga", "--generations", "1", "--sample", "30"], "--population", ["0", "1", "-4",
                                                                                                 "9" * 20]),
        ("ga", tune + ["--method", "ga", "--generations", "1", "--population", "4"], "--sample", ["0", "-1", "9" * 20]),
        ("ga", tune + ["--method", "ga", "--generations", "1", "--population", "4", "--sample", "30"], "--bits",
         ["0", "-1", "64", "1000"]),
        ("ga", tune + ["--method", "ga", "--generations", "1", "--population", "4", "--sample", "30"], "--mutation",
         ["-0.5", "1.5", "nan"]),
        ("ga", tune + ["--method", "ga", "--generations", "1", "--population", "4", "--sample", "30"], "--elite",
         ["-1", "5", "100"]),
        ("ga", tune + ["--method", "ga", "--generations", "1", "--population", "4", "--sample", "30"], "--span",
         ["0", "-5", "1e9"]),
        ("ga", tune + ["--method", "ga", "--generations", "1", "--population", "4", "--sample", "30"], "--tournament",
         ["0", "1", "100"]),
        ("texel", tune + ["--method", "texel", "--epochs", "1"], "--k", ["-1", "nan", "1e400"]),
        ("texel", tune + ["--method", "texel", "--epochs", "1"], "--lam", ["-0.5", "1.5", "nan"]),
        ("texel", tune + ["--method", "texel", "--epochs", "1"], "--batch-size", ["0", "-1", "9" * 20]),
        ("texel", tune + ["--method", "texel"], "--epochs", ["0", "-1", "9" * 20]),
        ("texel", tune + ["--method", "texel", "--epochs", "1"], "--steps", ["0", "-2"]),
        ("texel", tune + ["--method", "texel", "--epochs", "1"], "--score-cap", ["0", "-1", "nan"]),
        ("texel", tune + ["--method", "texel", "--epochs", "1"], "--beta1", ["1", "-1", "nan"]),
        ("rootstrap", tune + ["--method", "rootstrap", "--source", "data", "--positions", "20"], "--nodes",
         ["0", "-1", "9" * 25]),
        ("rootstrap", tune + ["--method", "rootstrap", "--source", "data", "--positions", "20", "--nodes", "30"],
         "--lambda-depth", ["-1", "nan", "2"]),
        ("rootstrap", tune + ["--method", "rootstrap", "--source", "data", "--nodes", "30"], "--positions",
         ["0", "-1", "9" * 20]),
        ("tdleaf", tune + ["--method", "tdleaf", "--games", "1", "--nodes", "30"], "--td-lambda", ["-1", "2", "nan"]),
        ("tdleaf", tune + ["--method", "tdleaf", "--nodes", "30"], "--games", ["0", "-1"]),
        ("tdleaf", tune + ["--method", "tdleaf", "--games", "1", "--nodes", "30"], "--minutes", ["-1", "nan",
                                                                                              "1e400"]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--nodes", "40", "--workers", "1", "--max-plies", "10",
                      "--no-progress"], "--games", ["0", "-1", "9" * 20, "2.5"]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--workers", "1", "--max-plies", "10",
                      "--no-progress"], "--nodes", ["0", "-5", "9" * 25]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--workers", "1", "--max-plies", "10",
                      "--no-progress"], "--depth", ["0", "-1", "61", "9" * 20]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "40", "--workers", "1",
                      "--no-progress"], "--max-plies", ["0", "-1", "1", "9" * 20]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "40", "--workers", "1",
                      "--max-plies", "10", "--no-progress"], "--random-plies", ["-1", "1001", "9" * 20]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "40", "--workers", "1",
                      "--max-plies", "10", "--no-progress"], "--start-margin", ["0", "-1", "nan"]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "40", "--workers", "1",
                      "--max-plies", "10", "--no-progress"], "--resign-cp", ["0", "-100", "nan", "9" * 20]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "40", "--workers", "1",
                      "--max-plies", "10", "--no-progress"], "--draw-after", ["-1", "9" * 20]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "2", "--nodes", "40", "--workers", "1",
                      "--max-plies", "10", "--no-progress"], "--split", ["1,0,0", "0,0,1", "-1,1,1", "nan,1,1", "0.5",
                                                                           "a,b,c", "0,0,0", "1,1,1,1"]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "40", "--max-plies", "10",
                      "--no-progress"], "--workers", ["-1", "1025", "9" * 20]),
        ("selfplay", ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "40", "--workers", "1",
                      "--max-plies", "10", "--no-progress"], "--start-tries", ["0", "-1"]),
        ("ingest", ["ingest", "{d}/games.pgn", "--out", "{d}/set", "--workers", "1", "--no-progress"], "--split",
         ["1,0,0", "0,1,0", "-0.5,1,0.5", "inf,1,1", "0,0,0", "1", "1,2"]),
        ("ingest", ["ingest", "{d}/games.pgn", "--out", "{d}/set", "--workers", "1", "--no-progress"], "--min-elo",
         ["-1", "nan", "9" * 20, "99999"]),
        ("ingest", ["ingest", "{d}/games.pgn", "--out", "{d}/set", "--workers", "1", "--no-progress"], "--skip-plies",
         ["-1", "9" * 20, "1000"]),
        ("ingest", ["ingest", "{d}/games.pgn", "--out", "{d}/set", "--workers", "1", "--no-progress"], "--min-plies",
         ["-1", "9" * 20]),
        ("ingest", ["ingest", "{d}/games.pgn", "--out", "{d}/set", "--no-progress"], "--workers", ["-1", "2000"]),
        ("ingest", ["ingest", "{d}/games.pgn", "--out", "{d}/set", "--workers", "1", "--no-progress"], "--seed",
         ["-1", str(2**64), "nan"]),
        ("match", ["bench", "match", "material", "classic", "--nodes", "40", "--workers", "1", "--max-plies", "10",
                   "--out", "{d}/m.pgn"], "--games", ["0", "-2", "3", "9" * 20]),
        ("match", ["bench", "match", "material", "classic", "--games", "2", "--workers", "1", "--max-plies", "10",
                   "--out", "{d}/m.pgn"], "--movetime", ["0", "-5", "9" * 20, "nan"]),
        ("match", ["bench", "match", "material", "classic", "--games", "2", "--workers", "1", "--max-plies", "10",
                   "--out", "{d}/m.pgn"], "--tc", ["0+0", "-1+0", "1+-1", "nan+0", "1e400+0", "5", "+", "0.05+0"]),
        ("match", ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40", "--workers", "1",
                   "--out", "{d}/m.pgn"], "--max-plies", ["0", "-1", "9" * 20]),
        ("match", ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40", "--workers", "1",
                   "--max-plies", "10", "--out", "{d}/m.pgn"], "--adjudicate-cp", ["-1", "nan", "9" * 20]),
        ("match", ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40", "--workers", "1",
                   "--max-plies", "10", "--out", "{d}/m.pgn"], "--engine-timeout", ["0", "-1", "nan", "1e400"]),
        ("epd", ["bench", "epd", "{d}/s.epd", "--weights", "material", "--workers", "1"], "--depth",
         ["0", "-1", "61", "nan"]),
        ("epd", ["bench", "epd", "{d}/s.epd", "--weights", "material", "--workers", "1"], "--nodes",
         ["0", "-1", str(2**63)]),
        ("epd", ["bench", "epd", "{d}/s.epd", "--weights", "material", "--workers", "1"], "--movetime",
         ["0", str(2**31), "-7"]),
        ("move-match", ["bench", "move-match", "--weights", "material", "--data", "{d}/sample", "--threads", "1"],
         "--max-positions", ["0", "-1", "9" * 20]),
        ("move-match", ["bench", "move-match", "--weights", "material", "--data", "{d}/sample", "--threads", "1",
                        "--max-positions", "20"], "--depth", ["0", "64", "-1"]),
        ("eval", ["eval", MIDGAME], "--top", ["0", "-1", "9" * 20]),
        ("moves-predict", ["moves", "predict", MIDGAME], "--top", ["-1", "9" * 20, "nan"]),
        ("moves-train", ["moves", "train", "--data", "{d}/sample", "--out", "{d}/mm.json", "--epochs", "1",
                         "--max-train", "60", "--max-validation", "30", "--quiet"], "--l2", ["-1", "nan", "", ",,",
                                                                                             "1e400"]),
        ("moves-train", ["moves", "train", "--data", "{d}/sample", "--out", "{d}/mm.json", "--max-train", "60",
                         "--max-validation", "30", "--quiet"], "--epochs", ["0", "-1"]),
        ("moves-train", ["moves", "train", "--data", "{d}/sample", "--out", "{d}/mm.json", "--epochs", "1",
                         "--max-train", "60", "--max-validation", "30", "--quiet", "--labels", "search"],
         "--label-depth", ["0", "7", "-1"]),
        ("openings", ["bench", "openings", "--from-pgn", "{d}/games.pgn", "--out", "{d}/o.epd", "--depth", "1"],
         "--count", ["0", "-1", "9" * 20]),
        ("openings", ["bench", "openings", "--from-pgn", "{d}/games.pgn", "--out", "{d}/o.epd", "--count", "2",
                      "--depth", "1"], "--min-plies", ["-1", "500", "9" * 20]),
        ("openings", ["bench", "openings", "--from-pgn", "{d}/games.pgn", "--out", "{d}/o.epd", "--count", "2"],
         "--depth", ["0", "-1", "99"]),
        ("openings", ["bench", "openings", "--from-pgn", "{d}/games.pgn", "--out", "{d}/o.epd", "--count", "2",
                      "--depth", "1"], "--margin", ["-1", "nan"]),
        ("compare", ["bench", "compare", "material", "classic", "--data", "{d}/sample", "--max-positions", "20",
                     "--nodes", "30", "--max-plies", "10", "--workers", "1", "--out", "{d}/cmp"], "--games",
         ["-2", "1", "9" * 20]),
        ("compare", ["bench", "compare", "material", "classic", "--data", "{d}/sample", "--games", "0",
                     "--max-positions", "20", "--out", "{d}/cmp"], "--anchor-elo", ["nan", "inf", "1e400"]),
        ("perft", ["perft", "startpos"], "", ["-1", "0", "nan", "99"]),
    ]
    cases = []
    setup = chain(copy("sample"), copy("games.pgn"), write("s.epd", SUITE))
    for group, argv, opt, vals in opts:
        for v in vals:
            full = argv + ([opt, v] if opt else [v])
            cases.append(Case(f"numbers/{group}{opt}={v[:12]}", full, setup, timeout=150))
    # sprt
    for sprt in (["0", "0", "0.05", "0.05"], ["5", "0", "0.05", "0.05"], ["0", "5", "0", "0.05"],
                 ["0", "5", "0.6", "0.6"], ["nan", "5", "0.05", "0.05"], ["0", "5", "1", "1"]):
        cases.append(Case(f"numbers/match--sprt={'_'.join(sprt)}", ["bench", "match", "material", "classic", "--games",
                                                                   "2", "--nodes", "40", "--workers", "1",
                                                                   "--max-plies", "10", "--out", "{d}/m.pgn", "--sprt",
                                                                   *sprt], setup, timeout=120))
    return cases


def conflict_cases() -> list[Case]:
    setup = chain(copy("sample"), copy("games.pgn"), write("s.epd", SUITE), copy("w.json"))
    specs = {
        "match-nodes-and-depth": ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40", "--depth",
                                  "1", "--workers", "1", "--out", "{d}/m.pgn"],
        "match-movetime-and-tc": ["bench", "match", "material", "classic", "--games", "2", "--movetime", "20", "--tc",
                                  "1+0", "--workers", "1", "--out", "{d}/m.pgn"],
        "match-no-limit": ["bench", "match", "material", "classic", "--games", "2", "--workers", "1", "--out",
                           "{d}/m.pgn"],
        "match-out-twice": ["bench", "match", "material", "classic", "--games", "2", "--nodes", "40", "--workers",
                            "1", "--max-plies", "10", "--out", "{d}/a.pgn", "--out", "{d}/b.pgn"],
        "match-same-player": ["bench", "match", "material", "material", "--games", "2", "--nodes", "40", "--workers",
                              "1", "--max-plies", "10", "--out", "{d}/m.pgn"],
        "match-three-players": ["bench", "match", "material", "classic", "gm", "--games", "2", "--nodes", "40",
                                "--out", "{d}/m.pgn"],
        "match-engine-false": ["bench", "match", "material", "--engine", "false", "--games", "2", "--nodes", "40",
                               "--workers", "1", "--out", "{d}/m.pgn"],
        "match-engine-cat": ["bench", "match", "material", "--engine", "cat", "--games", "2", "--nodes", "40",
                             "--workers", "1", "--out", "{d}/m.pgn", "--engine-timeout", "3"],
        "match-engine-empty": ["bench", "match", "material", "--engine", "", "--games", "2", "--nodes", "40",
                               "--workers", "1", "--out", "{d}/m.pgn"],
        "match-engine-options-odd": ["bench", "match", "material", "--engine", f"{sys.executable} -m tuner uci",
                                     "--engine-options", "=,,Hash=-5,Nope=1,=x", "--games", "2", "--nodes", "40",
                                     "--workers", "1", "--max-plies", "8", "--out", "{d}/m.pgn"],
        "match-player-at-odd": ["bench", "match", "material@nope", "classic@", "--games", "2", "--nodes", "40",
                                "--workers", "1", "--out", "{d}/m.pgn"],
        "match-player-minus-odd": ["bench", "match", "material@play-dragons", "classic", "--games", "2", "--nodes",
                                   "40", "--workers", "1", "--out", "{d}/m.pgn"],
        "epd-depth-and-nodes": ["bench", "epd", "{d}/s.epd", "--weights", "material", "--depth", "1", "--nodes", "30"],
        "epd-weights-none": ["bench", "epd", "{d}/s.epd", "--weights", "--depth", "1"],
        "epd-weights-repeated": ["bench", "epd", "{d}/s.epd", "--weights", "material", "material", "{d}/w.json",
                                 "{d}/w.json", "--depth", "1", "--workers", "1"],
        "tune-method-unknown": ["tune", "--method", "sgd", "--data", "{d}/sample", "--out", "{d}/r"],
        "tune-method-twice": ["tune", "--method", "ga", "--method", "mmto", "--data", "{d}/sample", "--out", "{d}/r",
                              "--iterations", "1", "--max-train", "60", "--max-validation", "30", "--depth", "1",
                              "--quiet"],
        "tune-data-twice": ["tune", "--method", "mmto", "--data", "{d}/nope", "--data", "{d}/sample", "--out", "{d}/r",
                            "--iterations", "1", "--max-train", "60", "--max-validation", "30", "--depth", "1",
                            "--quiet"],
        "tune-ga-options-on-mmto": ["tune", "--method", "mmto", "--population", "7", "--data", "{d}/sample", "--out",
                                    "{d}/r", "--iterations", "1", "--max-train", "60", "--max-validation", "30",
                                    "--depth", "1", "--quiet"],
        "tune-stages-odd": ["tune", "--method", "mmto", "--stages", ";;;", "--data", "{d}/sample", "--out", "{d}/r",
                            "--iterations", "1", "--max-train", "60", "--max-validation", "30", "--depth", "1",
                            "--quiet"],
        "tune-stages-unknown": ["tune", "--method", "mmto", "--stages", "material;dragons", "--data", "{d}/sample",
                                "--out", "{d}/r", "--iterations", "2", "--max-train", "60", "--max-validation", "30",
                                "--depth", "1", "--quiet"],
        "tune-train-empty": ["tune", "--method", "mmto", "--train", "", "--data", "{d}/sample", "--out", "{d}/r",
                             "--iterations", "1", "--max-train", "60", "--max-validation", "30", "--depth", "1",
                             "--quiet"],
        "tune-constraint-odd": ["tune", "--method", "mmto", "--constraint", "x=y", "--data", "{d}/sample", "--out",
                                "{d}/r", "--iterations", "1", "--max-train", "60", "--max-validation", "30", "--depth",
                                "1", "--quiet"],
        "tune-start-network-odd": ["tune", "--method", "mmto", "--start", "network:0x0", "--data", "{d}/sample",
                                   "--out", "{d}/r", "--iterations", "1", "--max-train", "60", "--max-validation",
                                   "30", "--depth", "1", "--quiet"],
        "tune-start-network-huge": ["tune", "--method", "texel", "--start", "network:99999999x16x16", "--data",
                                    "{d}/sample", "--out", "{d}/r", "--epochs", "1", "--max-train", "60",
                                    "--max-validation", "30", "--quiet"],
        "tune-start-network-neg": ["tune", "--method", "texel", "--start", "network:-64", "--data", "{d}/sample",
                                   "--out", "{d}/r", "--epochs", "1", "--max-train", "60", "--max-validation", "30",
                                   "--quiet"],
        "tune-teacher-fifo": ["tune", "--method", "texel", "--start", "network:8", "--teacher", "{d}/f.fifo", "--data",
                              "{d}/sample", "--out", "{d}/r", "--epochs", "1", "--max-train", "60",
                              "--max-validation", "30", "--quiet"],
        "tune-executor-odd": ["tune", "--method", "mmto", "--executor", "mpi", "--data", "{d}/sample", "--out", "{d}/r",
                              "--iterations", "1", "--quiet"],
        "tune-scheduler-bad": ["tune", "--method", "mmto", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1",
                               "--data", "{d}/sample", "--out", "{d}/r", "--iterations", "1", "--max-train", "60",
                               "--max-validation", "30", "--depth", "1", "--quiet"],
        "tune-pls-threshold-odd": ["tune", "--method", "mmto", "--pls-threshold", "2", "--data", "{d}/sample", "--out",
                                   "{d}/r", "--iterations", "1", "--max-train", "60", "--max-validation", "30",
                                   "--quiet"],
        "terms-is-pgn": ["eval", MIDGAME, "--terms", "{d}/games.pgn"],
        "terms-is-dir": ["eval", MIDGAME, "--terms", "{d}/sample"],
        "terms-twice": ["eval", MIDGAME, "--terms", "{d}/t.py", "--terms", "{d}/games.pgn"],
        "terms-raises": ["eval", MIDGAME, "--terms", "{d}/t.py"],
        "terms-exit-3": ["eval", MIDGAME, "--terms", "{d}/t3.py"],
        "terms-keyboardinterrupt": ["eval", MIDGAME, "--terms", "{d}/t4.py"],
        "terms-empty-eq": ["eval", MIDGAME, "--terms="],
        "eval-fen-huge": ["eval", "8/" * 30000 + " w - - 0 1"],
        "eval-fen-unicode": ["eval", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 １"],
        "eval-fen-empty": ["eval", ""],
        "eval-fen-counters-huge": ["eval", "4k3/8/8/8/8/8/8/4K3 w - - 99999999999999999999 99999999999999999999"],
        "eval-fen-nul": ["eval", "4k3/8/8/8/8/8/8/4K3 w - - 0 1\x01"],
        "perft-fen-odd": ["perft", "4k3/8/8/8/8/8/8/4K3 w KQkq e3 0 1", "2"],
        "perft-fen-many-pieces": ["perft", "qqqqkqqq/qqqqqqqq/8/8/8/8/QQQQQQQQ/QQQQKQQQ w - - 0 1", "2"],
        "perft-no-moves": ["perft", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "3"],
        "moves-predict-mate": ["moves", "predict", "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"],
        "moves-predict-model-fifo": ["moves", "predict", MIDGAME, "--model", "{d}/f.fifo"],
        "moves-predict-model-weights": ["moves", "predict", MIDGAME, "--model", "{d}/w.json"],
        "moves-predict-model-empty": ["moves", "predict", MIDGAME, "--model", ""],
        "warmup-steps-odd": ["warmup", "--steps", ",,nope"],
        "warmup-steps-comma": ["warmup", "--steps", ","],
        "ingest-sample-and-file": ["ingest", "--sample", "{d}/games.pgn", "--out", "{d}/set", "--workers", "1",
                                   "--no-progress"],
        "ingest-no-input": ["ingest", "--out", "{d}/set"],
        "ingest-format-odd": ["ingest", "{d}/games.pgn", "--out", "{d}/set", "--format", "csv"],
        "ingest-non-utf8-odd": ["ingest", "{d}/games.pgn", "--out", "{d}/set", "--non-utf8", "ebcdic"],
        "convert-to-same": ["convert", "{d}/sample", "{d}/c2", "--to", "parquet"],
        "convert-missing-in": ["convert", "{d}/nothing", "{d}/c2"],
        "convert-pgn-in": ["convert", "{d}/games.pgn", "{d}/c.mtpos"],
        "convert-epd-to-mtpos": ["convert", "{d}/s.epd", "{d}/c.mtpos"],
        "selfplay-no-player": ["selfplay", "--out", "{d}/sp", "--games", "1"],
        "selfplay-engine-and-weights": ["selfplay", "material", "--engine", "false", "--out", "{d}/sp", "--games", "1",
                                        "--nodes", "30", "--workers", "1", "--no-progress"],
        "selfplay-depth-and-nodes": ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "30",
                                     "--depth", "1", "--workers", "1", "--max-plies", "8", "--no-progress"],
        "selfplay-executor-dask-bad": ["selfplay", "material", "--out", "{d}/sp", "--games", "1", "--nodes", "30",
                                       "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "--no-progress"],
        "selfplay-resume-empty-folder": ["selfplay", "material", "--out", "{d}/empty", "--resume", "--games", "1",
                                         "--nodes", "30", "--workers", "1", "--no-progress"],
        "bench-no-sub": ["bench"],
        "moves-no-sub": ["moves"],
        "unknown-command": ["frobnicate"],
        "compare-anchor-unknown": ["bench", "compare", "material", "classic", "--data", "{d}/sample", "--games", "0",
                                   "--max-positions", "20", "--anchor", "nobody", "--out", "{d}/cmp"],
        "compare-one-entrant": ["bench", "compare", "material", "--data", "{d}/sample", "--games", "2", "--nodes",
                                "30", "--max-positions", "20", "--out", "{d}/cmp", "--workers", "1"],
        "ladder-empty-toml": ["bench", "ladder", "material", "--ladder", "{d}/empty.toml", "--openings", "{d}/s.epd",
                              "--nodes", "30", "--games", "2"],
        "ladder-odd-toml": ["bench", "ladder", "material", "--ladder", "{d}/odd.toml", "--openings", "{d}/s.epd",
                            "--nodes", "30", "--games", "2", "--pgn", "{d}/l.pgn"],
        "ladder-only-unknown": ["bench", "ladder", "material", "--ladder", "{d}/odd.toml", "--openings", "{d}/s.epd",
                                "--nodes", "30", "--games", "2", "--only", "nobody,,", "--pgn", "{d}/l.pgn"],
        "openings-book-garbage": ["bench", "openings", "--from-book", "{d}/games.pgn", "--out", "{d}/o.epd", "--count",
                                  "2", "--depth", "1"],
        "openings-book-empty": ["bench", "openings", "--from-book", "{d}/empty.bin", "--out", "{d}/o.epd", "--count",
                                "2", "--depth", "1"],
        "openings-book-odd-entries": ["bench", "openings", "--from-book", "{d}/odd.bin", "--out", "{d}/o.epd",
                                      "--count", "2", "--depth", "1", "--book-walks", "5"],
    }
    odd_book = b"".join(struct.pack(">QHHI", k, m, w, 0) for k, m, w in
                        [(0x463B96181691FC9C, 0xFFFF, 1), (0x463B96181691FC9C, 0, 0), (0x463B96181691FC9C, 0x0FFF, 65535),
                         (0, 1, 1), (2**64 - 1, 12345, 7)]) + b"\x01\x02"
    extra = chain(setup, fifo("f.fifo"), write("t.py", "raise ValueError('plug-in says no')\n"),
                  write("t3.py", "import sys\nsys.exit(3)\n"), write("t4.py", "raise KeyboardInterrupt\n"),
                  mkdir("empty"), write("empty.toml", b""), write("empty.bin", b""), write("odd.bin", odd_book),
                  write("odd.toml", '[[engine]]\nname = 5\ncommand = ["x"]\nrating = "high"\n[[engine]]\n'))
    return [Case(f"flags/{name}", argv, extra, timeout=150) for name, argv in specs.items()]


def uci_cases() -> list[Case]:
    start = ["uci", "@wait uciok", "isready", "@wait readyok"]
    fen = MIDGAME
    scripts: dict[str, list[str]] = {
        "go-before-position": ["go nodes 300", "@wait bestmove"],
        "go-movetime-before-position": ["go movetime 50", "@wait bestmove"],
        "position-illegal-then-go": ["position startpos moves e2e4 e7e5 g1g5", "go nodes 300", "@wait bestmove"],
        "position-partial-move": ["position startpos moves e2", "go nodes 300", "@wait bestmove"],
        "position-promo-odd": ["position fen 4k3/P7/8/8/8/8/8/4K3 w - - 0 1 moves a7a8k", "go nodes 300",
                               "@wait bestmove"],
        "position-promo-uppercase": ["position fen 4k3/P7/8/8/8/8/8/4K3 w - - 0 1 moves a7a8Q", "go nodes 300",
                                     "@wait bestmove"],
        "position-null-move": ["position startpos moves 0000 e7e5", "go nodes 300", "@wait bestmove"],
        "position-castle-as-king-takes-rook": ["position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1h1",
                                               "go nodes 300", "@wait bestmove"],
        "position-fen-then-garbage": ["position fen " + fen, "position fen banana", "go nodes 300", "@wait bestmove"],
        "position-empty-fen": ["position startpos", "position fen", "go nodes 300", "@wait bestmove"],
        "position-only": ["position", "go nodes 300", "@wait bestmove"],
        "position-startpos-extra": ["position startpos extra words moves e2e4", "go nodes 300", "@wait bestmove"],
        "position-moves-no-list": ["position startpos moves", "go nodes 300", "@wait bestmove"],
        "position-moves-twice": ["position startpos moves e2e4 moves e7e5", "go nodes 300", "@wait bestmove"],
        "position-fen-3-fields": ["position fen 4k3/8/8/8/8/8/8/4K3 w -", "go nodes 300", "@wait bestmove"],
        "position-fen-7-fields": ["position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1 extra", "go nodes 300",
                                  "@wait bestmove"],
        "position-fen-counters-huge": ["position fen 4k3/8/8/8/8/8/8/4K2R w K - 99999999999999999999 "
                                       "99999999999999999999", "go nodes 300", "@wait bestmove"],
        "position-fen-counters-neg": ["position fen 4k3/8/8/8/8/8/8/4K2R w K - -1 -1", "go movetime 100",
                                      "@wait bestmove"],
        "position-side-in-check-not-to-move": ["position startpos", "position fen 4k3/8/8/8/8/8/4r3/4K3 b - - 0 1",
                                               "go nodes 300", "@wait bestmove"],
        "position-checkmated": ["position startpos moves f2f3 e7e5 g2g4 d8h4", "go nodes 300", "@wait bestmove"],
        "position-stalemate": ["position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "go movetime 100", "@wait bestmove"],
        "position-after-mate-moves": ["position startpos moves f2f3 e7e5 g2g4 d8h4 e2e4", "go nodes 300",
                                      "@wait bestmove"],
        "position-bad-first-good-prefix": ["position fen " + fen + " moves e1g1 e8g8 a1a1", "go depth 2",
                                           "@wait bestmove"],
        "position-many-pieces": ["position fen qqqqkqqq/qqqqqqqq/8/8/8/8/QQQQQQQQ/QQQQKQQQ w - - 0 1", "go nodes 300",
                                 "@wait bestmove"],
        "position-10-queens-valid": ["position fen 4k3/8/8/8/8/8/QQQQQQQQ/Q3K2Q w - - 0 1", "go nodes 300",
                                     "@wait bestmove"],
        "position-ep-odd": ["position fen 4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1 moves e5d6", "go nodes 300",
                            "@wait bestmove"],
        "position-long-game": ["position startpos moves " + " ".join(["g1f3", "g8f6", "f3g1", "f6g8"] * 60),
                               "go nodes 300", "@wait bestmove"],
        "position-very-long-line": ["position startpos moves " + "e2e4 " * 100000, "go nodes 300", "@wait bestmove"],
        "position-unicode": ["position fen 4k3/8/8/8/8/8/8/4K2R w K – 0 1", "go nodes 300", "@wait bestmove"],
        "position-control-chars": ["position startpos moves e2e4\x00 e7e5", "go nodes 300", "@wait bestmove"],
        "position-tab-separated": ["position\tstartpos\tmoves\te2e4", "go nodes 300", "@wait bestmove"],
        "position-cr": ["position startpos moves e2e4\r", "go nodes 300\r", "@wait bestmove"],
        "go-negative": ["position startpos", "go movetime -5", "@wait bestmove"],
        "go-zero-movetime": ["position startpos", "go movetime 0", "@wait bestmove"],
        "go-zero-depth": ["position startpos", "go depth 0", "@wait bestmove"],
        "go-zero-nodes": ["position startpos", "go nodes 0", "@wait bestmove"],
        "go-negative-nodes": ["position startpos", "go nodes -100", "@wait bestmove"],
        "go-huge-depth": ["position startpos", "go depth 99999999999999999999", "@sleep 1", "stop", "@wait bestmove"],
        "go-huge-nodes": ["position startpos", "go nodes 99999999999999999999", "@sleep 1", "stop", "@wait bestmove"],
        "go-huge-movetime": ["position startpos", "go movetime 99999999999999999999", "@sleep 1", "stop",
                             "@wait bestmove"],
        "go-nan": ["position startpos", "go movetime nan", "@wait bestmove"],
        "go-float": ["position startpos", "go movetime 100.5", "@wait bestmove"],
        "go-wtime-zero": ["position startpos", "go wtime 0 btime 0", "@wait bestmove"],
        "go-wtime-negative": ["position startpos", "go wtime -1000 btime -1000 winc -50", "@wait bestmove"],
        "go-wtime-huge": ["position startpos", "go wtime 99999999999999999999 btime 5", "@sleep 1", "stop",
                          "@wait bestmove"],
        "go-movestogo-zero": ["position startpos", "go wtime 1000 btime 1000 movestogo 0", "@wait bestmove"],
        "go-movestogo-neg": ["position startpos", "go wtime 1000 btime 1000 movestogo -3", "@wait bestmove"],
        "go-mate-zero": ["position startpos", "go mate 0", "@sleep 1", "stop", "@wait bestmove"],
        "go-mate-neg": ["position startpos", "go mate -2", "@sleep 1", "stop", "@wait bestmove"],
        "go-mate-1-found": ["position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "go mate 1", "@wait bestmove"],
        "go-searchmoves-illegal": ["position startpos", "go nodes 300 searchmoves e2e5 a1a8", "@wait bestmove"],
        "go-searchmoves-one": ["position startpos", "go depth 3 searchmoves h2h3", "@wait bestmove"],
        "go-unknown-words": ["position startpos", "go banana 5 nodes 300", "@wait bestmove"],
        "go-repeated-limits": ["position startpos", "go nodes 100 nodes 200 depth 1 depth 3 movetime 50",
                               "@wait bestmove"],
        "go-missing-value": ["position startpos", "go movetime", "@sleep 0.5", "stop", "@wait bestmove"],
        "go-ponder-then-ponderhit": ["position startpos", "go ponder movetime 200", "@sleep 0.3", "ponderhit",
                                     "@sleep 0.5", "stop", "@wait bestmove"],
        "go-infinite-then-stop": ["position startpos", "go infinite", "@sleep 0.5", "stop", "@wait bestmove"],
        "go-infinite-then-go": ["position startpos", "go infinite", "@sleep 0.3", "go nodes 200", "@wait bestmove",
                                "@wait bestmove"],
        "go-go-go": ["position startpos", "go nodes 100", "go nodes 100", "go movetime 30", "go depth 1",
                     "@sleep 2"],
        "position-during-search": ["position startpos", "go infinite", "@sleep 0.3", "position fen " + fen,
                                   "stop", "@wait bestmove", "go nodes 200", "@wait bestmove"],
        "setoption-during-search": ["position startpos", "go infinite", "@sleep 0.3",
                                    "setoption name Hash value 1", "stop", "@wait bestmove"],
        "ucinewgame-during-search": ["position startpos", "go infinite", "@sleep 0.3", "ucinewgame", "isready",
                                     "@wait readyok", "stop", "@wait bestmove"],
        "stop-without-go": ["stop", "stop", "position startpos", "go nodes 200", "@wait bestmove"],
        "ponderhit-without-go": ["ponderhit", "position startpos", "go nodes 200", "@wait bestmove"],
        "quit-mid-search": ["position startpos", "go infinite", "@sleep 0.5", "quit"],
        "quit-mid-timed-search": ["position startpos", "go movetime 5000", "@sleep 0.3", "quit"],
        "eof-mid-search": ["position startpos", "go infinite", "@sleep 0.5"],
        "setoption-unknown": ["setoption name Banana value 7", "setoption name", "setoption", "setoption value 5",
                              "position startpos", "go nodes 200", "@wait bestmove"],
        "setoption-hash-odd": ["setoption name Hash value -1", "setoption name Hash value 99999999999999999999",
                               "setoption name Hash value 1.5", "setoption name Hash value", "setoption name Hash",
                               "position startpos", "go nodes 200", "@wait bestmove"],
        "setoption-threads-odd": ["setoption name Threads value 0", "setoption name Threads value 4096",
                                  "setoption name Threads value 2", "position startpos", "go nodes 2000",
                                  "@wait bestmove"],
        "setoption-overhead-odd": ["setoption name MoveOverhead value -100", "setoption name MoveOverhead value "
                                   "9999999", "position startpos", "go movetime 100", "@wait bestmove"],
        "setoption-weights-odd": ["setoption name Weights value", "setoption name Weights value /nonexistent",
                                  "setoption name Weights value /dev/zero", "setoption name Weights value /",
                                  "setoption name Weights value " + "x" * 10000, "position startpos",
                                  "go nodes 200", "@wait bestmove"],
        "setoption-weights-fifo": ["setoption name Weights value {d}/f.fifo", "isready", "@wait readyok",
                                   "position startpos", "go nodes 200", "@wait bestmove"],
        "setoption-weights-loop": ["setoption name Weights value {d}/loop", "isready", "@wait readyok",
                                   "position startpos", "go nodes 200", "@wait bestmove"],
        "setoption-weights-net-odd": ["setoption name Weights value {d}/odd.mtnn", "isready", "@wait readyok",
                                      "position startpos", "go nodes 200", "@wait bestmove"],
        "setoption-weights-nnue-then-go": ["setoption name Weights value nnue", "position fen " + fen,
                                           "go nodes 500", "@wait bestmove", "setoption name Weights value classic",
                                           "go nodes 500", "@wait bestmove"],
        "setoption-search-odd": ["setoption name Search value quantum", "setoption name Search value PLAY",
                                 "setoption name Search value pls", "position startpos", "go nodes 300",
                                 "@wait bestmove", "setoption name Search value exact", "go depth 2",
                                 "@wait bestmove"],
        "setoption-pls-odd": ["setoption name Search value pls", "setoption name PlsStart value 0",
                              "setoption name PlsStart value nan", "setoption name PlsStart value -1",
                              "setoption name PlsStart value 1e-400", "setoption name PlsModelAbove value 2",
                              "setoption name PlsLeafModel value /nonexistent", "setoption name MoveModel value {d}/f.fifo",
                              "position startpos", "go depth 2", "@wait bestmove"],
        "setoption-timeplan-odd": ["setoption name TimePlan value forty", "position startpos",
                                   "go wtime 500 btime 500", "@wait bestmove"],
        "setoption-case": ["setoption name hash value 2", "setoption name HASH value 2", "setoption name threads value 1",
                           "position startpos", "go nodes 200", "@wait bestmove"],
        "setoption-value-with-spaces": ["setoption name Weights value  {d}/w  x.json  ", "position startpos",
                                        "go nodes 200", "@wait bestmove"],
        "garbage-lines": ["\x00\x01\x02", "   ", "\ufeffuci", "GO", "Position startpos", "isready", "@wait readyok",
                          "position startpos", "go nodes 200", "@wait bestmove"],
        "huge-line": ["x" * 3_000_000, "isready", "@wait readyok", "position startpos", "go nodes 200",
                      "@wait bestmove"],
        "invalid-utf8": ["position startpos moves e2e4 \udcff\udcfe", "go nodes 200", "@wait bestmove"],
        "debug-odd": ["debug", "debug on", "debug banana", "position startpos", "go nodes 200", "@wait bestmove"],
        "register": ["register later", "register name x code y", "position startpos", "go nodes 200",
                     "@wait bestmove"],
        "many-isready": ["isready"] * 200 + ["@wait readyok", "position startpos", "go nodes 200", "@wait bestmove"],
        "bad-after-good-go-movetime": ["position fen " + fen, "position fen " + fen + " moves a1a8",
                                       "go movetime 100", "@wait bestmove"],
        "bad-fen-after-moves": ["position startpos moves e2e4 e7e5", "position fen 9/9/9 w - - 0 1",
                                "go wtime 1000 btime 1000", "@wait bestmove"],
        "kings-adjacent": ["position fen 8/8/8/8/8/8/8/4Kk2 w - - 0 1", "go nodes 200", "@wait bestmove"],
        "only-kings": ["position fen 8/8/8/4k3/8/8/8/4K3 w - - 0 1", "go depth 5", "@wait bestmove"],
        "pawn-on-back-rank": ["position fen P3k3/8/8/8/8/8/8/4K3 w - - 0 1", "go nodes 200", "@wait bestmove"],
        "ucinewgame-no-position": ["ucinewgame", "go nodes 200", "@wait bestmove"],
        "pls-bad-position": ["setoption name Search value pls", "position fen banana", "go depth 2", "@wait bestmove"],
        "exact-illegal-prefix": ["setoption name Search value exact", "position startpos moves e2e4 e2e4",
                                 "go depth 2", "@wait bestmove"],
    }
    setup = chain(fifo("f.fifo"), symlink("loop", "loop2"), symlink("loop2", "loop"),
                  write("odd.mtnn", network_bytes({"shape": {"h": 64, "h2": 16, "h3": 16, "buckets": "kingside"}})),
                  copy("w.json", "w  x.json"))
    cases = []
    for name, script in scripts.items():
        cases.append(Case(f"uci/{name}", ["uci"], setup, uci=start + [s.replace("{d}", "\0D") for s in script],
                          timeout=90))
    return cases


def sigint_cases() -> list[Case]:
    cases = []
    specs = {
        "ingest": (["ingest", "{d}/big.pgn", "--out", "{d}/set", "--no-progress"], [1.5, 3.0, 5.0]),
        "ingest-over-set": (["ingest", "{d}/big.pgn", "--out", "{d}/sample", "--overwrite", "--no-progress"], [3.0]),
        "selfplay": (["selfplay", "material", "--out", "{d}/sp2", "--games", "40", "--nodes", "200", "--no-progress"],
                     [2.0, 4.0, 7.0]),
        "selfplay-resume": (["selfplay", "material", "--out", "{d}/sp", "--resume", "--games", "30", "--nodes", "60",
                             "--max-plies", "40", "--no-progress"], [2.5, 5.0]),
        "selfplay-export": (["selfplay", "material", "--out", "{d}/sp2", "--games", "20", "--nodes", "200",
                             "--no-progress", "--export", "{d}/x.epd"], [4.0]),
        "tune-mmto": (["tune", "--method", "mmto", "--data", "{d}/sample", "--out", "{d}/r", "--iterations", "20",
                       "--depth", "1", "--quiet"], [2.0, 4.0, 8.0]),
        "tune-texel": (["tune", "--method", "texel", "--data", "{d}/sample", "--out", "{d}/r", "--epochs", "50",
                        "--quiet"], [3.0, 6.0]),
        "tune-ga": (["tune", "--method", "ga", "--data", "{d}/sample", "--out", "{d}/r", "--generations", "50",
                     "--quiet"], [4.0]),
        "tune-rootstrap": (["tune", "--method", "rootstrap", "--data", "{d}/sample", "--out", "{d}/r", "--nodes",
                            "100", "--quiet"], [4.0]),
        "tune-resume": (["tune", "--resume", "{d}/run", "--iterations", "30", "--quiet"], [3.0, 6.0]),
        "match": (["bench", "match", "material", "classic", "--games", "40", "--nodes", "300", "--out", "{d}/m.pgn"],
                  [3.0, 6.0]),
        "epd": (["bench", "epd", "{d}/mates.epd", "--weights", "material", "--nodes", "3000", "--workers", "2"],
                [3.0]),
        "compare": (["bench", "compare", "material", "classic", "--data", "{d}/sample", "--games", "20", "--nodes",
                     "200", "--out", "{d}/cmp"], [4.0]),
        "merge": (["merge", "{d}/sample", "{d}/sp", "--out", "{d}/m", "--no-progress"], [1.2]),
        "moves-train": (["moves", "train", "--data", "{d}/sample", "--out", "{d}/mm.json", "--epochs", "30"], [4.0]),
        "openings": (["bench", "openings", "--from-pgn", "{d}/big.pgn", "--out", "{d}/o.epd", "--count", "300"],
                     [4.0]),
        "move-match": (["bench", "move-match", "--weights", "material", "classic", "--data", "{d}/sample",
                        "--depth", "2"], [3.0]),
        "warmup": (["warmup"], [1.5]),
    }
    setup = chain(copy("big.pgn"), copy("sample"), copy("sp"), copy("run"),
                  lambda d: shutil.copy(ROOT / "datasets" / "epd" / "mates.epd", d / "mates.epd"))
    for name, (argv, times) in specs.items():
        for t in times:
            owned = ("sp/*", "sp/games/*") if name == "selfplay-resume" else (("run/*",) if name == "tune-resume"
                                                                                else ())
            cases.append(Case(f"sigint/{name}@{t}s", argv, setup, timeout=90, sigint_after=t, owned=owned))
    return cases


BACKGROUND: dict[Path, subprocess.Popen[bytes]] = {}


def background(argv: list[str], wait_for: str) -> Setup:
    """Start ``tuner ARGV`` in the case's folder and wait (up to 30 s) until ``wait_for`` (a
    case-relative path) exists; the case's command then runs beside it, and the probe ends it."""
    def setup(d: Path) -> None:
        proc = subprocess.Popen([sys.executable, "-m", "tuner", *[a.replace("{d}", str(d)) for a in argv]], cwd=d,
                                env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        BACKGROUND[d] = proc
        end = time.monotonic() + 30
        while not (d / wait_for).exists() and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.1)
    return setup


def concurrency_cases() -> list[Case]:
    """A second command into a folder a first one is using (the first runs in the background)."""
    sp = ["selfplay", "material", "--out", "{d}/sp", "--games", "40", "--nodes", "300", "--workers", "1",
          "--no-progress"]
    tune = ["tune", "--method", "mmto", "--data", "{d}/sample", "--out", "{d}/r", "--iterations", "30", "--depth",
            "1", "--quiet", "--threads", "1"]
    specs = {
        "selfplay-twice": (sp, sp, "sp/.lock"),
        "selfplay-resume-beside": (sp, sp + ["--resume"], "sp/.lock"),
        "selfplay-overwrite-beside": (sp, sp + ["--overwrite"], "sp/.lock"),
        "tune-twice": (tune, tune, "r/.lock"),
        "tune-overwrite-beside": (tune, tune + ["--overwrite"], "r/.lock"),
        "tune-resume-beside": (tune, ["tune", "--resume", "{d}/r", "--iterations", "31", "--quiet"], "r/.lock"),
        "ingest-into-selfplay-beside": (sp, ["ingest", "{d}/games.pgn", "--out", "{d}/sp", "--overwrite",
                                             "--workers", "1", "--no-progress"], "sp/.lock"),
        "merge-into-run-beside": (tune, ["merge", "{d}/sample", "--out", "{d}/r", "--overwrite", "--no-progress"],
                                  "r/.lock"),
    }
    cases = []
    for name, (first, second, lock) in specs.items():
        setup = chain(copy("sample"), copy("games.pgn"), background(first, lock))
        cases.append(Case(f"concurrent/{name}", second, setup, timeout=120, owned=("sp/*", "sp/games/*", "r/*")))
    return cases


ALL = (weight_cases, pgn_cases, epd_cases, config_cases, set_cases, selfplay_folder_cases, run_folder_cases,
       output_cases, number_cases, conflict_cases, uci_cases, sigint_cases, concurrency_cases)


def all_cases() -> list[Case]:
    cases = [c for make in ALL for c in make()]
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, dup
    return cases


# ---------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()),
                                 epilog="Run: NUMBA_CACHE_DIR=/tmp/nbcache nice -n 19 python bench/probe.py")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once (default: 2)")
    ap.add_argument("--only", action="append", default=[], help="run only the cases whose name holds this (repeatable)")
    ap.add_argument("--skip", action="append", default=[], help="leave out the cases whose name holds this")
    ap.add_argument("--base", type=Path, default=None,
                    help="folder of the base inputs (kept between runs; default: a temporary one)")
    ap.add_argument("--list", action="store_true", help="list the cases' names and exit")
    ap.add_argument("--verbose", action="store_true", help="print every case's outcome")
    args = ap.parse_args()
    # Ctrl-C reaches the probe, and its cases start with SIGINT's default disposition even when
    # the probe was started with it ignored (a background job of a script): an ignored SIGINT is
    # inherited, and a command would then ignore the SIGINT of a case until it installs a handler
    signal.signal(signal.SIGINT, signal.default_int_handler)
    global B
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="probe-") as tmp:
        base_dir = args.base or Path(tmp) / "base"
        B = Base(base_dir)
        if not args.list:
            B.build()
        cases = all_cases()
        if args.only:
            cases = [c for c in cases if any(s in c.name for s in args.only)]
        cases = [c for c in cases if not any(s in c.name for s in args.skip)]
        if args.list:
            print("\n".join(c.name for c in cases))
            return
        # a UCI script's placeholder for the case folder
        for c in cases:
            if c.uci is not None:
                c.uci = [s for s in c.uci]
        guarded = {**{f"builtin/{k}": v for k, v in snapshot(BUILTIN).items()},
                   **{f"base/{k}": v for k, v in snapshot(base_dir).items()}}
        work = Path(tmp) / "cases"
        work.mkdir()
        outcomes: list[Outcome] = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(run_one, c, work): c for c in cases}
            for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
                o = fut.result()
                outcomes.append(o)
                if o.kinds or args.verbose:
                    print(f"[{i}/{len(cases)}] {o.name}: {','.join(o.kinds) or 'ok'} ({o.seconds:.1f} s) "
                          f"{o.detail.strip()[:600]}", file=sys.stderr, flush=True)
        after = {**{f"builtin/{k}": v for k, v in snapshot(BUILTIN).items()},
                 **{f"base/{k}": v for k, v in snapshot(base_dir).items()}}
        changed = [k for k, v in guarded.items() if after.get(k) != v]
        if changed:
            outcomes.append(Outcome("shared-inputs", ["overwrite"], ", ".join(changed[:10])))
            print(f"shared inputs changed: {changed[:10]}", file=sys.stderr)

    def count(kind: str) -> int:
        return sum(1 for o in outcomes if kind in o.kinds)

    failing = sorted(o.name for o in outcomes if o.kinds)
    print(json.dumps({
        "bench": "probe", "cases": len(cases), "tracebacks": count("traceback"),
        "hangs": count("hang") + count("unanswered"), "unanswered_go": count("unanswered"),
        "silent_overwrites": count("overwrite"), "bestmove_0000_with_legal_moves": count("bestmove0000"),
        "illegal_bestmoves": count("illegal"), "probe_errors": count("probe-error"), "failing": failing,
        "seconds": round(time.monotonic() - started, 1),
    }), flush=True)


def run_one(case: Case, work: Path) -> Outcome:
    if case.uci is not None:
        # the case folder is known only inside run_case: substitute there
        original = case.uci

        def setup(d: Path, inner: Setup | None = case.setup) -> None:
            if inner is not None:
                inner(d)
            case_copy.uci = [s.replace("\0D", str(d)) for s in original]

        case_copy = Case(**{**case.__dict__, "setup": setup})
        return run_case(case_copy, work)
    return run_case(case, work)


if __name__ == "__main__":
    main()
