"""Where the FEN and the label of each line of a position file lie: one numba pass over a block.

Cutting 100,000 lines into fields in Python costs about as much as everything else of a
position file's ingestion together, so :func:`line_fields` finds, for every line of a block,
the byte spans of its FEN (the four FEN fields and the counters that follow them, if any) and
of the rest of the line (the label: result, score, operations), which
:mod:`tuner.ingest.positions` then reads (the FEN span goes straight to
:func:`search.core.fen_batch.parse_fens`; the label is read once per distinct text).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

#: kinds of a line
BLANK, FEN_LINE, BULLET_LINE, SHORT_LINE = 0, 1, 2, 3

_NL, _CR, _SPACE, _TAB, _SEMI, _BAR, _HASH, _PERCENT = 10, 13, 32, 9, 59, 124, 35, 37


@njit(cache=True, inline="always")
def _blank(c: int) -> bool:
    return c == _SPACE or c == _TAB or c == _CR


@njit(cache=True, inline="always")
def _digits(buf: np.ndarray, a: int, b: int) -> bool:
    if a >= b:
        return False
    for k in range(a, b):
        if buf[k] < 48 or buf[k] > 57:
            return False
    return True


@njit(cache=True)
def _fields_kernel(buf, kind, line, fen_s, fen_e, rest_s, rest_e, counters):  # type: ignore[no-untyped-def]
    """Fill the per-record arrays (records: lines that are not blank or comments); return the
    number of records and of lines."""
    n = 0
    k = 0
    p = 0
    size = buf.shape[0]
    while p < size:
        q = p
        while q < size and buf[q] != _NL:
            q += 1
        a, b = p, q
        p = q + 1
        k += 1
        while a < b and _blank(buf[a]):
            a += 1
        while b > a and _blank(buf[b - 1]):
            b -= 1
        if a == b or buf[a] == _HASH or buf[a] == _PERCENT:
            continue
        line[n] = k - 1
        counters[n] = 0
        bar = -1
        for j in range(a, b):
            if buf[j] == _BAR:
                bar = j
                break
        if bar >= 0:  # FEN | score | result
            e = bar
            while e > a and _blank(buf[e - 1]):
                e -= 1
            kind[n], fen_s[n], fen_e[n], rest_s[n], rest_e[n] = BULLET_LINE, a, e, bar, b
            n += 1
            continue
        # the four FEN fields
        j = a
        fields = 0
        end = a
        while j < b and fields < 4:
            while j < b and _blank(buf[j]):
                j += 1
            if j >= b:
                break
            while j < b and not _blank(buf[j]):
                j += 1
            end = j
            fields += 1
        if fields < 4:
            kind[n], fen_s[n], fen_e[n], rest_s[n], rest_e[n] = SHORT_LINE, a, b, b, b
            n += 1
            continue
        semi = buf[end - 1] == _SEMI
        if semi:
            end -= 1
        # up to two counters (digits, the last maybe ended by ';')
        while not semi and counters[n] < 2:
            t = j
            while t < b and _blank(buf[t]):
                t += 1
            u = t
            while u < b and not _blank(buf[u]):
                u += 1
            v = u - 1 if u > t and buf[u - 1] == _SEMI else u
            if not _digits(buf, t, v):
                break
            end = v
            j = u
            semi = v < u
            counters[n] += 1
        while j < b and (_blank(buf[j]) or buf[j] == _SEMI):
            j += 1
        kind[n], fen_s[n], fen_e[n], rest_s[n], rest_e[n] = FEN_LINE, a, end, j, b
        n += 1
    return n, k


@dataclass(frozen=True)
class LineFields:
    """The records (lines neither blank nor starting with ``#`` or ``%``) of a block.

    ``kind`` int8[n] (``FEN_LINE``, ``BULLET_LINE``: a ``|`` in the line, ``SHORT_LINE``: fewer
    than four fields); ``line`` int64[n] the 0-based line index in the block; ``fen_start``,
    ``fen_end``, ``rest_start``, ``rest_end`` int64[n] byte spans (the rest starts after the
    separating blanks and ``;``, at the ``|`` of a bullet line); ``counters`` int8[n] the number
    of FEN counters found after the four fields (0 to 2); ``lines``: lines in the block.
    """

    kind: np.ndarray
    line: np.ndarray
    fen_start: np.ndarray
    fen_end: np.ndarray
    rest_start: np.ndarray
    rest_end: np.ndarray
    counters: np.ndarray
    lines: int


def line_fields(data: bytes) -> LineFields:
    """Cut a block of lines (``\\n``-separated; ``\\r``, spaces and tabs around fields ignored)
    into the spans of :class:`LineFields`."""
    buf = np.frombuffer(data, dtype=np.uint8)
    cap = data.count(b"\n") + 1
    kind = np.zeros(cap, dtype=np.int8)
    counters = np.zeros(cap, dtype=np.int8)
    line, fen_s, fen_e, rest_s, rest_e = (np.zeros(cap, dtype=np.int64) for _ in range(5))
    n, lines = _fields_kernel(buf, kind, line, fen_s, fen_e, rest_s, rest_e, counters) if len(buf) else (0, 0)
    return LineFields(kind[:n], line[:n], fen_s[:n], fen_e[:n], rest_s[:n], rest_e[:n], counters[:n], int(lines))
