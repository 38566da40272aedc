"""Input files: checking them up front, opening them (plain, gzip, bzip2, zstd), hashing
them while they stream, and cutting PGN text into game chunks and position files into blocks
of lines.

Each input is a PGN file or a position file (one position per line, see
:mod:`tuner.ingest.positions`), told apart by its first lines (:func:`_kind`): the first line
that is a PGN tag or starts with a FEN decides; without either, the suffix does (``.epd``,
``.fen``, ``.txt``, ``.book`` before any compression suffix: a position file; anything else: PGN).

The cutting happens in the parent process on bytes, line by line, so memory stays flat however
large a file is: a game starts at a line beginning with ``[`` that follows a blank line, move
text, or the start of the file (``[`` lines inside a ``{...}`` comment do not count, unless a
blank line precedes a well-formed tag, which ends a comment left open). Text before a file's
first game is reported as ``garbage``; a compressed stream that breaks off (a gzip, bzip2 or
zstd file cut short, or damaged) is reported as ``corrupt_stream`` and ends that file (its last
game then counts as ``truncated``).

A line holding a NUL byte (a corrupt stretch of a large dump) never starts a game and leaves the
cutter's state alone: it stays inside the game it falls in, which it breaks (an unreadable
token: the game is rejected and counted) unless it comes after that game's result (then it is
reported as ``garbage``). Likewise a stray line starting with ``[`` that is no tag does not
swallow the game that follows it: a well-formed tag after such lines starts a new game.

A file that starts with a UTF-16 or UTF-32 byte-order mark is decoded and read as UTF-8. Errors
(:class:`tuner.errors.TunerError`) naming the file: NUL bytes in every other byte near its
start (UTF-16 without a byte-order mark), a start that is not text at all (a NUL byte and
neither a tag nor a FEN line, or more than :data:`_BINARY_SHARE` control bytes), and a PGN
file that yields no game.
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

from search.core.input_limits import NotRegularFileError, open_regular
from tuner.errors import TunerError
from tuner.ingest.games import GameChunk, Problem
from tuner.ingest.positions import LineChunk

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
#: Bytes (after decompression) looked at to tell text from binary data and PGN from positions.
_SNIFF = 8192
#: Share of control bytes (other than tab, line feed, carriage return, form feed) above which a
#: file's start is binary data, not text with a corrupt stretch.
_BINARY_SHARE = 0.05
_TAG = re.compile(rb'^\[[A-Za-z0-9][A-Za-z0-9_+#=:-]*\s+".*"\]\s*$')
#: a line that starts with a FEN's placement and side to move
_FEN_LINE = re.compile(rb"[1-8pnbrqkPNBRQK]{1,8}(?:/[1-8pnbrqkPNBRQK]{1,8}){7}[ \t]+[wb][ \t;|]")
#: suffixes (before a compression suffix) of position files
POSITION_SUFFIXES = (".epd", ".fen", ".txt", ".book")
KINDS = ("pgn", "positions")
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 12, 13))
_STREAM_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, zstandard.ZstdError)


@dataclass(frozen=True)
class InputFile:
    """A checked input: its path as given, file name (the ``source`` column), size, the
    text encoding found by its byte-order mark (``utf-8`` when it has none), and its kind
    (``pgn`` or ``positions``)."""

    path: Path
    name: str
    size: int
    encoding: str = "utf-8"
    kind: str = "pgn"


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
        raise TunerError("no input files given")
    out = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            link = " (a broken or looping symbolic link)" if path.is_symlink() else ""
            raise TunerError(f"{path}: no such file{link}")
        if path.is_dir():
            raise TunerError(f"{path}: is a folder, not a PGN or position file")
        try:
            with open_regular(path) as fh:  # a FIFO is refused, not waited on
                head = fh.read(4)
            size = path.stat().st_size
        except NotRegularFileError as exc:
            raise TunerError(str(exc)) from None
        except OSError as exc:
            raise TunerError(f"{path}: cannot read ({exc.strerror or exc})") from None
        if not head:
            raise TunerError(f"{path}: empty file, no game in it")
        suffix = path.suffix.lower()
        if suffix in COMPRESSIONS:
            magic, kind = COMPRESSIONS[suffix]
            if not head.startswith(magic):
                raise TunerError(f"{path}: not a {kind} file (its suffix is {suffix})")
        encoding, kind = _sniff(path)
        out.append(InputFile(path=path, name=path.name, size=size, encoding=encoding, kind=kind))
    return out


def _sniff(path: Path) -> tuple[str, str]:
    """The text encoding of a file by its byte-order mark (``utf-8`` without one) and its kind
    (:func:`_kind`); raise :class:`TunerError` when its start is not text (see the module
    docstring).

    A stream that is broken already at its start is let through (as PGN, or by its suffix):
    reading it reports ``corrupt_stream``."""
    try:
        with path.open("rb") as fh, _decompressed(path, _HashingReader(fh)) as stream:
            head = stream.read(_SNIFF)
    except _STREAM_ERRORS:
        return "utf-8", _kind_by_suffix(path)
    for bom, encoding in _OTHER_BOMS:
        if head.startswith(bom):
            text = head.decode(encoding, errors="replace").encode("utf-8")
            return encoding, _kind(text) or _kind_by_suffix(path)
    kind = _kind(head)
    nul = head.find(b"\0")
    if nul >= 0:
        line = head.count(b"\n", 0, nul) + 1
        if head[1::2].count(0) > len(head) // 4 or head[0::2].count(0) > len(head) // 4:
            raise TunerError(f"{path}:{line}: NUL bytes: UTF-16 text without a byte-order mark? "
                             "Convert it to UTF-8 (or add the mark)")
        control = len(head) - len(head.translate(None, _CONTROL))
        if kind is None or control > _BINARY_SHARE * len(head):
            raise TunerError(f"{path}:{line}: binary data (a NUL byte), not PGN or position text")
    return "utf-8", kind or _kind_by_suffix(path)


def _kind(head: bytes) -> str | None:
    """``pgn`` or ``positions`` by the first line of ``head`` that is a PGN tag or starts with a
    FEN (comments and other lines are passed over); ``None`` when there is neither."""
    lines = head.split(b"\n")
    if len(head) >= _SNIFF and len(lines) > 1:
        lines.pop()  # cut off by the sniff
    for raw in lines:
        line = raw.strip().removeprefix(_BOM)
        if _TAG.match(line):
            return "pgn"
        if _FEN_LINE.match(line):
            return "positions"
    return None


def _kind_by_suffix(path: Path) -> str:
    name = path.name.lower()
    for suffix in COMPRESSIONS:
        name = name.removesuffix(suffix)
    return "positions" if name.endswith(POSITION_SUFFIXES) else "pgn"


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
    """Filled in by :func:`iter_games` once a file has been read to its end: its SHA-256, its
    games (PGN) or lines (position file), and the game ids it took (one per game or line)."""

    sha256: str = ""
    games: int = 0
    lines: int = 0
    ids: int = 0


def _chunks_of_file(index: int, inp: InputFile, first_id: int, digest: FileDigest,
                    progress: Callable[[int], None]) -> Iterator[GameChunk | SourceProblem]:
    game_id = first_id
    with inp.path.open("rb") as fh:
        raw = _HashingReader(fh)
        lines: list[bytes] | None = None
        start = 0
        in_tags = in_comment = good_tag = False
        prev_blank = True
        reported = 0
        lineno = 0
        try:
            with _decompressed(inp.path, raw) as stream:
                for line in _lines(stream, inp.encoding):
                    lineno += 1
                    if lineno == 1 and line.startswith(_BOM):
                        line = line[3:]
                    if b"\0" in line:  # a corrupt stretch: it stays in its game and changes no state
                        if lines is not None:
                            lines.append(line)
                        else:
                            text = line.strip()[:40].decode("utf-8", "replace")
                            yield SourceProblem(index, Problem(lineno, "garbage", f"text before the first game: {text!r}"))
                        continue
                    if line[:1] == b"[" and (
                        lines is None
                        or (not in_tags and not in_comment)
                        or (in_comment and prev_blank and _TAG.match(line))
                        or (in_tags and not good_tag and _TAG.match(line))  # after stray '[' lines
                    ):
                        if lines is not None:
                            yield GameChunk(game_id, index, inp.name, start, b"".join(lines), False)
                            game_id += 1
                            progress(raw.bytes_read - reported)
                            reported = raw.bytes_read
                        lines, start, in_tags, in_comment, prev_blank = [line], lineno, True, False, False
                        good_tag = _TAG.match(line) is not None
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
    digest.games = digest.ids = game_id - first_id


#: Bytes of a position file per block of lines (a worker's unit of work).
LINE_BLOCK_BYTES = 256 * 1024
#: A position file's line longer than this is no position: it is rejected as one line
#: (``line_too_long``, at its own line number) and its bytes are skipped, not parsed.
MAX_LINE_BYTES = 4 * LINE_BLOCK_BYTES
#: the reason of such a line (:data:`tuner.ingest.positions.LINE_REASONS`)
LINE_TOO_LONG = "line_too_long"


def _text_reader(stream: BinaryIO, encoding: str) -> Callable[[int], bytes]:
    """``read(n)`` of a decompressed stream as UTF-8 bytes (a UTF-16/32 file decoded)."""
    if encoding == "utf-8":
        return stream.read
    text = io.TextIOWrapper(stream, encoding=encoding, errors="replace", newline="\n")
    return lambda n: text.read(n).encode("utf-8")


def _blocks_of_file(index: int, inp: InputFile, first_id: int, digest: FileDigest,
                    progress: Callable[[int], None]) -> Iterator[LineChunk | SourceProblem]:
    """Blocks of whole lines of a position file, about :data:`LINE_BLOCK_BYTES` each; line
    ``k`` (1-based) takes game id ``first_id + k - 1``. A line longer than
    :data:`MAX_LINE_BYTES` is reported as ``line_too_long`` at its own number and skipped, so
    that the lines after it keep theirs. A stream that breaks off is reported as
    ``corrupt_stream`` (its last, partial line dropped) and ends the file."""
    lineno = 1  # of the next block's first line
    tail = b""
    skipping = False  # inside a line longer than MAX_LINE_BYTES, reported: its rest is dropped
    reported = 0
    with inp.path.open("rb") as fh:
        raw = _HashingReader(fh)
        try:
            with _decompressed(inp.path, raw) as stream:
                read = _text_reader(stream, inp.encoding)
                while data := read(LINE_BLOCK_BYTES):
                    if lineno == 1 and not tail and not skipping and data.startswith(_BOM):
                        data = data[3:]
                    if skipping:
                        end = data.find(b"\n")
                        if end < 0:
                            continue
                        data, skipping, lineno = data[end + 1:], False, lineno + 1
                    data = tail + data
                    cut = data.rfind(b"\n") + 1
                    if cut == 0:
                        if len(data) <= MAX_LINE_BYTES:
                            tail = data  # no line end yet
                        else:
                            yield SourceProblem(index, Problem(lineno, LINE_TOO_LONG,
                                                               f"more than {MAX_LINE_BYTES} bytes; skipped"))
                            tail, skipping = b"", True
                        continue
                    block, tail = data[:cut], data[cut:]
                    yield LineChunk(index, inp.name, lineno, first_id + lineno - 1, block)
                    lineno += block.count(b"\n")
                    progress(raw.bytes_read - reported)
                    reported = raw.bytes_read
        except _STREAM_ERRORS as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if lineno == 1:
                raise TunerError(f"{inp.path}:1: corrupt_stream before any position: {detail}") from None
            yield SourceProblem(index, Problem(lineno, "corrupt_stream", f"reading stopped: {detail}"))
            tail, skipping = b"", False
            raw.drain()
        if skipping:  # the file ends inside its long line
            lineno += 1
        if tail:
            yield LineChunk(index, inp.name, lineno, first_id + lineno - 1, tail)
            lineno += tail.count(b"\n") + 1
        if lineno == 1:
            raise TunerError(f"{inp.path}: empty once decompressed")
        raw.drain()
        progress(raw.bytes_read - reported)
    digest.sha256 = raw.sha256.hexdigest()
    digest.lines = digest.ids = lineno - 1


def iter_games(inputs: list[InputFile], digests: list[FileDigest],
               progress: Callable[[int], None] = lambda n: None) -> Iterator[GameChunk | LineChunk | SourceProblem]:
    """Game chunks and blocks of lines of all inputs in order (game ids counting from 0 over
    all files: one per game, one per line of a position file), with the problems that belong
    to no game; ``digests[i]`` is filled once file ``i`` is read. ``progress(n)`` is called
    with the number of (compressed) bytes newly read."""
    game_id = 0
    for index, (inp, digest) in enumerate(zip(inputs, digests, strict=True)):
        if inp.kind == "positions":
            yield from _blocks_of_file(index, inp, game_id, digest, progress)
        else:
            yield from _chunks_of_file(index, inp, game_id, digest, progress)
        game_id += digest.ids

