"""Limits on what an input file may hold, shared by the loaders of weights, networks and move
models (:mod:`search.params.weights`, :mod:`search.evaluation.network`, :mod:`search.pls.move_model`) and the run
folders' JSON.

* :func:`read_capped` reads at most a size limit: ``/dev/zero`` or a huge file given as weights
  is refused in one line instead of filling the memory (``MemoryError``).
* :func:`loads_json` parses JSON nested at most :data:`MAX_JSON_DEPTH` levels, checked before
  parsing by an iterative scan: ``[[[[...`` 100,000 deep is refused in one line instead of
  Python's ``RecursionError`` (in the parser, or later in whatever walks the document).

Both raise :class:`InputLimitError` (a ``ValueError``), whose one-line message names the file
(and for JSON the line and column); each loader turns it into its own error class.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

#: largest weights, move-model or run-folder JSON file read (a weights file is about 30 kB)
MAX_TEXT_BYTES = 64 << 20
#: largest network file read (the largest shape allowed with 4 king buckets is about 130 MB)
MAX_NETWORK_BYTES = 512 << 20
#: deepest nesting of a JSON document read (the files movetuner writes nest 4 levels)
MAX_JSON_DEPTH = 64

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.S)


class InputLimitError(ValueError):
    """An input beyond a limit of this module; the message is one line naming the file."""


def read_capped(path: str | Path, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of ``path``, refused (:class:`InputLimitError`) once more than ``limit`` are
    read; OSError as ``open`` raises it."""
    with open(path, "rb") as fh:
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


__all__ = ["InputLimitError", "MAX_JSON_DEPTH", "MAX_NETWORK_BYTES", "MAX_TEXT_BYTES", "check_json_depth",
           "loads_json", "read_capped"]
