"""Input PGN files: checking them up front, opening them (plain, gzip, bzip2, zstd), hashing
them while they stream, and cutting the text into game chunks.

The cutting happens in the parent process on bytes, line by line, so memory stays flat however
large a file is: a game starts at a line beginning with ``[`` that follows a blank line, move
text, or the start of the file (``[`` lines inside a ``{...}`` comment do not count, unless a
blank line precedes a well-formed tag, which ends a comment left open). Text before a file's
first game is reported as ``garbage``; a compressed stream that breaks off (a gzip, bzip2 or
zstd file cut short, or damaged) is reported as ``corrupt_stream`` and ends that file (its last
game then counts as ``truncated``).

A file that starts with a UTF-16 or UTF-32 byte-order mark is decoded and read as UTF-8; a file
with a NUL byte near its start (binary data, UTF-16 without a byte-order mark) and a file that
yields no game at all are errors (:class:`tuner.errors.TunerError`) naming the file.
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
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple, cast

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

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
#: Byte-order marks of the encodings other than UTF-8 that are decoded (longest first: the
#: UTF-32 LE mark starts with the UTF-16 LE one).
_OTHER_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
#: Bytes (after decompression) checked for a NUL byte, the sign of a file that is not text.
_SNIFF = 8192
_TAG = re.compile(rb'^\[[A-Za-z0-9][A-Za-z0-9_+#=:-]*\s+".*"\]\s*$')
_STREAM_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, zstandard.ZstdError)


@dataclass(frozen=True)
class InputFile:
    """A checked input: its path as given, file name (the ``source`` column), size, and the
    text encoding found by its byte-order mark (``utf-8`` when it has none)."""

    path: Path
    name: str
    size: int
    encoding: str = "utf-8"


class SourceProblem(NamedTuple):
    """An input problem that belongs to no game (text before the first game, a broken
    stream), yielded by :func:`iter_games` in file order."""

    file_index: int
    problem: Problem


def check_inputs(paths: list[str | Path]) -> list[InputFile]:
    """Check that every input exists, is a readable, non-empty file, starts with the magic
    bytes its suffix promises and, once decompressed, looks like text; raise
    :class:`TunerError` (one line naming the file) for the first that does not."""
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
            size = path.stat().st_size
        except OSError as exc:
            raise TunerError(f"{path}: cannot read ({exc.strerror or exc})") from None
        if not head:
            raise TunerError(f"{path}: empty file, no game in it")
        suffix = path.suffix.lower()
        if suffix in COMPRESSIONS:
            magic, kind = COMPRESSIONS[suffix]
            if not head.startswith(magic):
                raise TunerError(f"{path}: not a {kind} file (its suffix is {suffix})")
        out.append(InputFile(path=path, name=path.name, size=size, encoding=_sniff(path)))
    return out


def _sniff(path: Path) -> str:
    """The text encoding of a file by its byte-order mark (``utf-8`` without one); raise
    :class:`TunerError` when its first bytes hold a NUL byte, which no PGN text has.

    A stream that is broken already at its start is let through: reading it reports
    ``corrupt_stream``."""
    try:
        with path.open("rb") as fh, _decompressed(path, _HashingReader(fh)) as stream:
            head = stream.read(_SNIFF)
    except _STREAM_ERRORS:
        return "utf-8"
    for bom, encoding in _OTHER_BOMS:
        if head.startswith(bom):
            return encoding
    nul = head.find(b"\0")
    if nul >= 0:
        line = head.count(b"\n", 0, nul) + 1
        if head[1::2].count(0) > len(head) // 4 or head[0::2].count(0) > len(head) // 4:
            raise TunerError(f"{path}:{line}: NUL bytes: UTF-16 text without a byte-order mark? "
                             "Convert it to UTF-8 (or add the mark)")
        raise TunerError(f"{path}:{line}: binary data (a NUL byte), not PGN text")
    return "utf-8"


class _HashingReader(io.RawIOBase):
    """A raw reader that hashes (SHA-256) and counts the bytes it passes on."""

    def __init__(self, fh: io.BufferedIOBase) -> None:
        self._fh = fh
        self.sha256 = hashlib.sha256()
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        n = self._fh.readinto(buffer)
        if n:
            self.sha256.update(memoryview(buffer)[:n])
            self.bytes_read += n
        return n or 0

    def drain(self) -> None:
        """Hash the rest of the file (after a stream error, so the digest covers it all)."""
        while chunk := self._fh.read(_BUFFER):
            self.sha256.update(chunk)
            self.bytes_read += len(chunk)


class _ZstdReader(io.RawIOBase):
    """The decompressed bytes of consecutive zstd frames (skippable frames included).

    Raises ``EOFError`` when the input ends inside a frame: a truncated file. (zstandard's
    ``stream_reader`` ends quietly there, so a file cut short would read as a shorter one.)
    """

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self._dctx = zstandard.ZstdDecompressor()
        self._frame: Any = None  # the decompressobj of the frame being read
        self._input = b""
        self._output = b""
        self._pos = 0
        """Offset of the first byte of ``_output`` not passed on yet."""

    def readable(self) -> bool:
        return True

    def _fill(self) -> bool:
        """Decompress until some output is ready; ``False`` at the clean end of the input."""
        while self._pos >= len(self._output):
            if not self._input:
                self._input = self._fh.read(_BUFFER)
                if not self._input:
                    if self._frame is not None:
                        raise EOFError("the zstd stream ends inside a frame (the file is truncated)")
                    return False
            if self._frame is None:
                self._frame = self._dctx.decompressobj()
            self._output, self._pos = self._frame.decompress(self._input), 0
            self._input = b""
            if self._frame.eof:
                self._input, self._frame = self._frame.unused_data, None
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        if not self._fill():
            return 0
        view = memoryview(buffer)
        n = min(len(view), len(self._output) - self._pos)
        view[:n] = memoryview(self._output)[self._pos:self._pos + n]
        self._pos += n
        return n


def _decompressed(path: Path, raw: _HashingReader) -> BinaryIO:
    buffered = io.BufferedReader(raw, _BUFFER)
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return cast(BinaryIO, gzip.GzipFile(fileobj=buffered, mode="rb"))
    if suffix == ".bz2":
        return cast(BinaryIO, bz2.BZ2File(buffered, mode="rb"))
    if suffix == ".zst":
        return io.BufferedReader(_ZstdReader(buffered), _BUFFER)
    return buffered


def _lines(stream: BinaryIO, encoding: str) -> Iterator[bytes]:
    """The lines of a decompressed stream as UTF-8 bytes (a UTF-16/32 file is decoded; its
    byte-order mark is dropped, undecodable units become U+FFFD)."""
    if encoding == "utf-8":
        yield from stream
        return
    for line in io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline="\n"):
        yield line.encode("utf-8")


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
                for line in _lines(stream, inp.encoding):
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
            if lines is None:
                raise TunerError(f"{inp.path}:{lineno + 1}: corrupt_stream before any game: {detail}") from None
            yield SourceProblem(index, Problem(lineno + 1, "corrupt_stream", f"reading stopped: {detail}"))
            raw.drain()
        if lines is None:
            what = "empty once decompressed" if lineno == 0 else f"no game in its {lineno} line(s)"
            raise TunerError(f"{inp.path}: {what} (a game starts with a tag line such as "
                             '[Event "..."]); not a PGN file?')
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

