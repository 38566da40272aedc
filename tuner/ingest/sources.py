"""Input PGN files: checking them up front, opening them (plain, gzip, bzip2, zstd), hashing
them while they stream, and cutting the text into game chunks.

The cutting happens in the parent process on bytes, line by line, so memory stays flat however
large a file is: a game starts at a line beginning with ``[`` that follows a blank line, move
text, or the start of the file (``[`` lines inside a ``{...}`` comment do not count, unless a
blank line precedes a well-formed tag, which ends a comment left open). Text before a file's
first game is reported as ``garbage``; a compressed stream that breaks off is reported as
``corrupt_stream`` and ends that file (its last game then counts as ``truncated``).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

import zstandard

from tuner.errors import TunerError
from tuner.ingest.games import GameChunk, Problem

#: Suffix -> (magic bytes, name) of the compressed formats read.
COMPRESSIONS: dict[str, tuple[bytes, str]] = {
    ".gz": (b"\x1f\x8b", "gzip"),
    ".bz2": (b"BZh", "bzip2"),
    ".zst": (b"\x28\xb5\x2f\xfd", "zstd"),
}
_BUFFER = 1 << 16
_BOM = b"\xef\xbb\xbf"
_TAG = re.compile(rb'^\[[A-Za-z0-9][A-Za-z0-9_+#=:-]*\s+".*"\]\s*$')
_STREAM_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, zstandard.ZstdError)


@dataclass(frozen=True)
class InputFile:
    """A checked input: its path as given, file name (the ``source`` column) and size."""

    path: Path
    name: str
    size: int


class SourceProblem(NamedTuple):
    """An input problem that belongs to no game (text before the first game, a broken
    stream), yielded by :func:`iter_games` in file order."""

    file_index: int
    problem: Problem


def check_inputs(paths: list[str | Path]) -> list[InputFile]:
    """Check that every input exists, is a readable file, and starts with the magic bytes its
    suffix promises; raise :class:`TunerError` (one line) for the first that does not."""
    if not paths:
        raise TunerError("no PGN files given")
    out = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise TunerError(f"{path}: no such file")
        if path.is_dir():
            raise TunerError(f"{path}: is a folder, not a PGN file")
        try:
            with path.open("rb") as fh:
                head = fh.read(4)
        except OSError as exc:
            raise TunerError(f"{path}: cannot read ({exc.strerror or exc})") from None
        suffix = path.suffix.lower()
        if suffix in COMPRESSIONS and head:
            magic, kind = COMPRESSIONS[suffix]
            if not head.startswith(magic):
                raise TunerError(f"{path}: not a {kind} file (its suffix is {suffix})")
        out.append(InputFile(path=path, name=path.name, size=path.stat().st_size))
    return out


class _HashingReader(io.RawIOBase):
    """A raw reader that hashes (SHA-256) and counts the bytes it passes on."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self.sha256 = hashlib.sha256()
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = self._fh.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            self.sha256.update(memoryview(buffer)[:n])
            self.bytes_read += n
        return n or 0

    def drain(self) -> None:
        """Hash the rest of the file (after a stream error, so the digest covers it all)."""
        while chunk := self._fh.read(_BUFFER):
            self.sha256.update(chunk)
            self.bytes_read += len(chunk)


def _decompressed(path: Path, raw: _HashingReader) -> BinaryIO:
    buffered = io.BufferedReader(raw, _BUFFER)
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
    if suffix == ".bz2":
        return bz2.BZ2File(buffered, mode="rb")  # type: ignore[return-value]
    if suffix == ".zst":
        reader = zstandard.ZstdDecompressor().stream_reader(buffered, read_across_frames=True)
        return io.BufferedReader(reader, _BUFFER)  # type: ignore[arg-type]
    return buffered


def _comment_state(line: bytes, in_comment: bool) -> bool:
    """Whether a ``{...}`` comment is still open after ``line``."""
    i = 0
    while True:
        if in_comment:
            j = line.find(b"}", i)
            if j < 0:
                return True
            in_comment, i = False, j + 1
        else:
            j = line.find(b"{", i)
            k = line.find(b";", i)
            if j < 0 or 0 <= k < j:
                return False
            in_comment, i = True, j + 1


@dataclass
class FileDigest:
    """Filled in by :func:`iter_games` once a file has been read to its end."""

    sha256: str = ""
    games: int = 0


def _chunks_of_file(index: int, inp: InputFile, first_id: int, digest: FileDigest,
                    progress: Callable[[int], None]) -> Iterator[GameChunk | SourceProblem]:
    game_id = first_id
    with inp.path.open("rb") as fh:
        raw = _HashingReader(fh)
        lines: list[bytes] | None = None
        start = 0
        in_tags = in_comment = False
        prev_blank = True
        reported = 0
        lineno = 0
        try:
            with _decompressed(inp.path, raw) as stream:
                for line in stream:
                    lineno += 1
                    if lineno == 1 and line.startswith(_BOM):
                        line = line[3:]
                    if line[:1] == b"[" and (
                        lines is None
                        or (not in_tags and not in_comment)
                        or (in_comment and prev_blank and _TAG.match(line))
                    ):
                        if lines is not None:
                            yield GameChunk(game_id, index, inp.name, start, b"".join(lines), False)
                            game_id += 1
                            progress(raw.bytes_read - reported)
                            reported = raw.bytes_read
                        lines, start, in_tags, in_comment, prev_blank = [line], lineno, True, False, False
                        continue
                    blank = line.isspace() or not line
                    if lines is None:
                        if not blank and not line.startswith((b"%", b";")) and prev_blank:
                            text = line.strip()[:40].decode("utf-8", "replace")
                            yield SourceProblem(index, Problem(lineno, "garbage", f"text before the first game: {text!r}"))
                        prev_blank = prev_blank and blank
                        continue
                    lines.append(line)
                    if line[:1] != b"[":
                        in_tags = False
                    if (in_comment or b"{" in line) and not line.startswith(b"%"):
                        in_comment = _comment_state(line, in_comment)
                    prev_blank = blank
        except _STREAM_ERRORS as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            yield SourceProblem(index, Problem(lineno + 1, "corrupt_stream", f"reading stopped: {detail}"))
            raw.drain()
        if lines is not None:
            yield GameChunk(game_id, index, inp.name, start, b"".join(lines), True)
            game_id += 1
        raw.drain()
        progress(raw.bytes_read - reported)
    digest.sha256 = raw.sha256.hexdigest()
    digest.games = game_id - first_id


def iter_games(inputs: list[InputFile], digests: list[FileDigest],
               progress: Callable[[int], None] = lambda n: None) -> Iterator[GameChunk | SourceProblem]:
    """Game chunks of all inputs in order (game ids counting from 0 over all files), with the
    problems that belong to no game; ``digests[i]`` is filled once file ``i`` is read.
    ``progress(n)`` is called with the number of (compressed) bytes newly read."""
    game_id = 0
    for index, (inp, digest) in enumerate(zip(inputs, digests, strict=True)):
        yield from _chunks_of_file(index, inp, game_id, digest, progress)
        game_id += digest.games

