"""Limits on what an input file may hold, shared by the loaders of weights, networks and move
models (:mod:`search.params.weights`, :mod:`search.evaluation.network`, :mod:`search.pls.move_model`) and the run
folders' JSON.

* :func:`read_capped` reads at most a size limit: a huge file given as weights is refused in
  one line instead of filling the memory (``MemoryError``); it opens with :func:`open_regular`,
  which refuses what is not a regular file (a FIFO with no writer would block for ever,
  ``/dev/zero`` never ends) with :class:`NotRegularFileError`.
* :func:`loads_json` parses JSON nested at most :data:`MAX_JSON_DEPTH` levels, checked before
  parsing by an iterative scan: ``[[[[...`` 100,000 deep is refused in one line instead of
  Python's ``RecursionError`` (in the parser, or later in whatever walks the document).

Both raise :class:`InputLimitError` (a ``ValueError``), whose one-line message names the file
(and for JSON the line and column); each loader turns it into its own error class.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, BinaryIO

#: largest weights, move-model or run-folder JSON file read (a weights file is about 30 kB)
MAX_TEXT_BYTES = 64 << 20
#: largest network file read (the largest shape allowed with 4 king buckets is about 130 MB)
MAX_NETWORK_BYTES = 512 << 20
#: deepest nesting of a JSON document read (the files movetuner writes nest 4 levels)
MAX_JSON_DEPTH = 64

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.S)


class InputLimitError(ValueError):
    """An input beyond a limit of this module; the message is one line naming the file."""


class NotRegularFileError(OSError):
    """An input that is not a regular file (a FIFO, a device, a socket); ``str()`` is one line
    naming the file."""

    def __init__(self, path: str | Path, mode: int) -> None:
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "special")
        super().__init__(errno.EINVAL, f"not a regular file: {kind}", str(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` (links followed) open for binary reading if it is a regular file; a folder
    raises :class:`IsADirectoryError` as ``open`` does, anything else that is no regular file
    :class:`NotRegularFileError`, without blocking: a FIFO is opened non-blocking to be looked
    at, so one with no writer is refused at once. Other ``OSError`` as ``open`` raises them."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: str | Path, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of ``path``, refused (:class:`InputLimitError`) once more than ``limit`` are
    read; OSError as ``open`` raises it, :class:`NotRegularFileError` for what is not a regular
    file (:func:`open_regular`)."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise InputLimitError(f"{path}: larger than {limit >> 20} MB, too large for this kind of file")
    return data


def check_json_depth(text: str, where: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse (:class:`InputLimitError`) JSON text whose arrays and objects nest deeper than
    ``limit``, naming the line and column where it does; brackets inside strings do not count.
    Iterative: any depth is scanned without recursion."""
    depth = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                line = text.count("\n", 0, m.start()) + 1
                column = m.start() - text.rfind("\n", 0, m.start())
                raise InputLimitError(f"{where}: JSON nested deeper than {limit} levels at line {line} "
                                      f"column {column}")
        elif token in "]}":
            depth -= 1


def loads_json(text: str, where: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)`` after :func:`check_json_depth`; ``json.JSONDecodeError`` as
    ``json.loads`` raises it, :class:`InputLimitError` for a number Python will not convert."""
    check_json_depth(text, where, limit)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer of more than 4,300 digits (sys.get_int_max_str_digits)
        raise InputLimitError(f"{where}: a number with too many digits ({str(exc).split(':')[0]})") from None


__all__ = ["InputLimitError", "MAX_JSON_DEPTH", "MAX_NETWORK_BYTES", "MAX_TEXT_BYTES", "NotRegularFileError",
           "check_json_depth", "loads_json", "open_regular", "read_capped"]
