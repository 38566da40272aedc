"""Position files: one position per line, with its result, score or move, to position rows.

The line formats read (the FEN has 4 to 6 fields; results are White's view, as a game's
result is, unless ``IngestConfig.results_view`` says the file gives the side to move's):

* ``FEN [1.0]``, ``[0.5]``, ``[0.0]``, or ``[1-0]``, ``[1/2-1/2]``, ``[0-1]``, the FEN possibly
  followed by ``;`` (Gedas Masaitis' texel-tuner, Ethereal's tuner); a number after the
  bracket is a search score in centipawns from the side to move's view (Ethereal's
  ``FEN [1.0] 35``); the bare result without brackets is read too;
* EPD: the FEN, then ``;``-terminated operations ``opcode operand...``: ``c9 "1-0"`` the result
  (the zurichess quiet-labeled set: ``FEN c9 "1/2-1/2";``), ``ce N`` a score in centipawns
  from the side to move's view (the EPD standard), ``pm``, ``sm`` or ``bm`` a move (SAN or
  UCI; the first of ``bm``'s list, ``pm`` before ``sm`` before ``bm``), ``hmvc``/``fmvn`` the
  counters when the FEN has none; other operations (``id``, ``am``, comments) are ignored;
* ``FEN | score | result``: bullet's text format (score in centipawns from White's view,
  result ``1.0``/``0.5``/``0.0`` from White's view).

Blank lines and lines starting with ``#`` or ``%`` are skipped. A line must carry at least one
label (result, score or move); a line without a result gets ``*`` (unknown, as an unfinished
game). Everything else about a line that cannot be used rejects that line alone, counted by
reason with its ``file:line``: ``bad_fen`` (the FEN's text), ``illegal_position`` (a position
the engine cannot search or python-chess finds impossible), ``bad_result``, ``bad_score``,
``bad_move`` (not SAN or UCI), ``illegal_move``, ``ambiguous_move``, ``no_label``,
``bad_line`` (a malformed operation or text the formats above do not have). A kept position
is dropped (counted, not reported) when it has one legal move (``single_legal``, as for games,
when that filter is on) or none (``no_legal_move``: the game is over, nothing to learn).

A block of lines is cut into FEN and label spans by :func:`tuner.ingest.line_fields.line_fields`
and its FENs parsed and checked at once by :func:`search.core.fen_batch.parse_fens` (both numba); each
distinct label text is read once in Python (:func:`parse_label`). A position's split is drawn
from its Zobrist key and the seed (:func:`hash_splits`), so the split does not depend on reading
order or chunking, and a position repeated in the file lands in one split.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from search.core.board import uci_texts
from search.core.fen_batch import AMBIGUOUS_MOVE, ILLEGAL_MOVE, NO_MOVE, move_specs, parse_fens
from tuner.ingest.filters import IngestConfig
from tuner.ingest.games import Problem
from tuner.ingest.line_fields import BULLET_LINE, SHORT_LINE, line_fields
from tuner.ingest.schema import SCHEMA

#: the column holding each row's split when it is decided per position (private to a run's
#: part files: -1 where the split goes by game)
SPLIT_COLUMN = "_split"

#: rejection reasons of lines, in the order the manifest lists them
LINE_REASONS = ("bad_fen", "illegal_position", "bad_result", "bad_score", "bad_move", "illegal_move",
                "ambiguous_move", "no_label", "bad_line", "line_too_long")
#: position filters of position files
LINE_DROP_REASONS = ("single_legal", "no_legal_move")

#: White's points (0, 1, 2 half points) of each result text; -1 for unknown (``*``)
_RESULTS: dict[bytes, int] = {
    b"1-0": 2, b"0-1": 0, b"1/2-1/2": 1, b"1/2": 1, b"*": -1,
    b"1.0": 2, b"0.5": 1, b"0.0": 0, b"1": 2, b"0": 0, b"1.00": 2, b"0.50": 1, b"0.00": 0,
}
#: result column text of White's half points 0, 1, 2 and of -1
RESULT_TEXT = {2: "1-0", 1: "1/2-1/2", 0: "0-1", -1: "*"}
_INT = re.compile(rb"[+-]?\d{1,9}\Z")
#: one EPD operation: opcode, operands (quoted strings or bare tokens), then ';' or the end
_OP = re.compile(rb'[ \t]*([A-Za-z][A-Za-z0-9_]*)((?:[ \t]+(?:"[^"]*"|[^\s;"]+))*)[ \t]*(?:;|\Z)')
_OPERAND = re.compile(rb'"([^"]*)"|([^\s;"]+)')
_MOVE_OPS = (b"pm", b"sm", b"bm")
#: largest |score| kept, centipawns (the column is int32; anything beyond is not a score)
MAX_SCORE = 1_000_000


class LineChunk(NamedTuple):
    """A block of whole lines of a position file (sent to worker processes)."""

    file_index: int
    """Index of the input file in the list given."""
    source: str
    """Name of the input file (the ``source`` column)."""
    line: int
    """1-based line number of the block's first line."""
    first_id: int
    """``game_id`` of the block's first line; line ``k`` of the block gets ``first_id + k``."""
    data: bytes
    """The lines (UTF-8 or ASCII), each ended by ``\\n`` except perhaps the file's last."""


class _Bad(Exception):
    """A line that cannot be used: its reason and a short detail."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def _text(raw: bytes, limit: int = 40) -> str:
    return raw[:limit].decode("utf-8", "replace")


def _result(token: bytes) -> int:
    """White's half points of a result token, -1 for ``*``; :class:`_Bad` otherwise."""
    code = _RESULTS.get(token)
    if code is not None:
        return code
    try:
        value = float(token)
    except ValueError:
        value = float("nan")
    if 0.0 < value < 1.0 and value != 0.5:
        raise _Bad("bad_result", f"result {_text(token)!r} is a probability, not a win, draw or loss")
    raise _Bad("bad_result", f"result {_text(token)!r} is not 1-0, 1/2-1/2, 0-1 (or 1.0, 0.5, 0.0)")


def _score(token: bytes) -> int:
    if not _INT.match(token) or abs(int(token)) > MAX_SCORE:
        raise _Bad("bad_score", f"score {_text(token)!r} is not an integer number of centipawns")
    return int(token)


class Label(NamedTuple):
    """What a line says besides its FEN."""

    result: int
    """White's half points (0, 1, 2) as the file gives them (or the mover's, see
    ``results_view``), -1 unknown."""
    score: int | None
    score_mover: bool
    """Whether ``score`` is from the side to move's view (else White's)."""
    move: str | None
    counters: bytes
    """Counters to append to a FEN that has none (from EPD's ``hmvc``/``fmvn``), else empty."""


def parse_label(kind: int, rest: bytes, counters: int) -> Label:
    """Read the text after a line's FEN (:mod:`tuner.ingest.line_fields` found where it starts:
    after the FEN's fields and counters and the blanks and ``;`` after them, or at the ``|``
    of a bullet line); ``counters``: how many counters the FEN had. Raise :class:`_Bad`."""
    if kind == BULLET_LINE:
        parts = rest.split(b"|")
        if len(parts) != 3:
            raise _Bad("bad_line", f"{len(parts)} '|'-separated fields, not 3 (FEN | score | result)")
        return Label(_result(parts[2].strip()), _score(parts[1].strip()), False, None, b"")
    if kind == SHORT_LINE:
        raise _Bad("bad_fen", f"expected a FEN of 4 to 6 fields, found {_text(rest)!r}")
    if not rest:
        raise _Bad("no_label", "no result, score or move after the FEN")
    if rest[:1] == b"[":
        close = rest.find(b"]")
        if close < 0:
            raise _Bad("bad_result", f"unclosed bracket {_text(rest)!r}")
        result = _result(rest[1:close].strip())
        after = rest[close + 1:].strip().rstrip(b";").strip()
        return Label(result, _score(after) if after else None, True, None, b"")
    bare = rest.rstrip(b"; \t")
    if bare in _RESULTS:
        return Label(_RESULTS[bare], None, True, None, b"")
    return _epd_operations(rest, counters)


def _epd_operations(text: bytes, counters: int) -> Label:
    ops: dict[bytes, list[bytes]] = {}
    pos = 0
    while pos < len(text):
        m = _OP.match(text, pos)
        if m is None or m.end() == pos:
            raise _Bad("bad_line", f"malformed EPD operation at {_text(text[pos:])!r}")
        ops.setdefault(m[1], [quoted + bare for quoted, bare in _OPERAND.findall(m[2])])
        pos = m.end()
        while pos < len(text) and text[pos] in b" \t;":
            pos += 1
    result = -1
    score = None
    move = None
    if b"c9" in ops:
        if len(ops[b"c9"]) != 1:
            raise _Bad("bad_result", "c9 must hold one result")
        result = _result(ops[b"c9"][0].strip())
    if b"ce" in ops:
        if len(ops[b"ce"]) != 1:
            raise _Bad("bad_score", "ce must hold one score")
        score = _score(ops[b"ce"][0])
    for op in _MOVE_OPS:
        if ops.get(op):
            move = ops[op][0].decode("ascii", "replace")
            break
    suffix = b""
    if counters == 0 and (b"hmvc" in ops or b"fmvn" in ops):
        half = ops.get(b"hmvc", [b"0"])
        full = ops.get(b"fmvn", [b"1"])
        if len(half) != 1 or len(full) != 1:
            raise _Bad("bad_fen", "hmvc and fmvn must hold one number each")
        suffix = b" " + half[0] + b" " + full[0]
    if b"c9" not in ops and score is None and move is None:
        raise _Bad("no_label", "no c9 result, ce score or pm/sm/bm move")
    return Label(result, score, True, move, suffix)


#: labels already read, per (kind, counters) by text: files repeat a handful of label texts
_LABELS: dict[tuple[int, int], dict[bytes, Label | _Bad]] = {}
#: labels remembered at most per (kind, counters) (files with a score on every line repeat few)
_LABEL_CACHE = 1 << 14


def _labels(data: bytes, kind: int, counters: int, starts: list[int], ends: list[int]) -> list[Label | _Bad]:
    """The labels of the lines of one (kind, counters) whose label texts are
    ``data[starts[i]:ends[i]]``, each distinct text read once (:func:`parse_label`)."""
    cache = _LABELS.setdefault((kind, counters), {})
    get = cache.get
    out: list[Label | _Bad | None] = [get(data[a:z]) for a, z in zip(starts, ends, strict=True)]
    for i in [i for i, lab in enumerate(out) if lab is None]:
        text = data[starts[i]:ends[i]]
        try:
            label: Label | _Bad = parse_label(kind, text, counters)
        except _Bad as bad:
            label = bad
        if len(cache) < _LABEL_CACHE:
            cache[text] = label
        out[i] = label
    return [lab for lab in out if lab is not None]  # every None was replaced


def hash_splits(keys: np.ndarray, fractions: tuple[float, ...], seed: int) -> np.ndarray:
    """The split (0 train, 1 validation, 2 test; int8[n]) of each position by its Zobrist key:
    ``u = splitmix64(key ^ splitmix64(seed)) / 2**64`` falls into the fraction's interval."""
    with np.errstate(over="ignore"):
        x = np.asarray(keys, dtype=np.uint64) ^ _splitmix64(np.array([seed & (2**64 - 1)], dtype=np.uint64))[0]
        u = (_splitmix64(x) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    bounds = np.cumsum(fractions[:-1])
    return np.searchsorted(bounds, u, side="right").astype(np.int8)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """Vigna's splitmix64 finaliser on uint64 (wrapping arithmetic)."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: np.ndarray = z ^ (z >> np.uint64(31))
    return out


@dataclass
class LinesOutcome:
    """What became of a chunk of lines (sent back to the parent).

    ``records``: lines that were neither blank nor comments; ``rejected``/``dropped``: counts
    by reason; ``problems``: the rejected lines, in order; ``rows``: the kept positions as
    plain columns (workers never touch polars: :meth:`frame` builds the frame in the parent).
    """

    file_index: int
    records: int = 0
    valid: int = 0
    """Lines whose FEN was read and holds a valid position (whatever became of the line)."""
    rejected: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
    rows: dict[str, Any] = field(default_factory=dict)

    def frame(self, source: str) -> pl.DataFrame:
        """The rows with every column of :data:`tuner.ingest.schema.SCHEMA` and the split
        column, in line order."""
        n = len(self.rows.get("game_id", ()))
        if n == 0:
            return pl.DataFrame(schema={**SCHEMA, SPLIT_COLUMN: pl.Int8()})
        per_row = {name: pl.Series(name, self.rows[name], dtype=SCHEMA[name])
                   for name in ("game_id", "ply", "fen", "move", "stm", "result", "n_legal", "zobrist", "score",
                                "source_line")}
        nulls = {name: pl.Series(name, [None] * n, dtype=SCHEMA[name])
                 for name in ("white_elo", "black_elo", "mover_elo", "event", "date", "white", "black")}
        columns = {**per_row, **nulls, "source": pl.Series("source", [source] * n, dtype=pl.Utf8())}
        return pl.DataFrame([columns[name] for name in SCHEMA]).with_columns(
            pl.Series(SPLIT_COLUMN, self.rows[SPLIT_COLUMN], dtype=pl.Int8()))


def process_lines(chunk: LineChunk, config: IngestConfig) -> LinesOutcome:
    """Parse, check and filter a block of lines (the unit of work of a worker process)."""
    out = LinesOutcome(chunk.file_index)
    data = chunk.data
    fields = line_fields(data)
    out.records = n = len(fields.kind)
    found: list[Label | _Bad] = [_Bad("", "")] * n
    groups = fields.kind.astype(np.int64) * 3 + fields.counters
    for group in np.unique(groups).tolist():
        rows = np.flatnonzero(groups == group)
        for r, label in zip(rows.tolist(), _labels(data, group // 3, group % 3, fields.rest_start[rows].tolist(),
                                                    fields.rest_end[rows].tolist()), strict=True):
            found[r] = label
    for r, label in enumerate(found):
        if isinstance(label, _Bad):
            out.rejected[label.reason] += 1
            out.problems.append(Problem(chunk.line + int(fields.line[r]), label.reason, label.detail))
    index = [r for r, label in enumerate(found) if isinstance(label, Label)]
    labels = [label for label in found if isinstance(label, Label)]
    extra_of = [i for i, label in enumerate(labels) if label.counters]
    # FENs completed with hmvc/fmvn, appended to the buffer
    extra = [data[fields.fen_start[index[i]]:fields.fen_end[index[i]]] + labels[i].counters for i in extra_of]
    rows = np.asarray(index, dtype=np.int64)
    starts, ends = fields.fen_start[rows], fields.fen_end[rows]
    buf = data
    if extra:
        lengths = np.array([len(e) + 1 for e in extra], dtype=np.int64)
        at = len(data) + 1 + np.concatenate([[0], np.cumsum(lengths)[:-1]])
        starts[extra_of], ends[extra_of] = at, at + lengths - 1
        buf = data + b"\n" + b"\n".join(extra)
    _check_positions(chunk, config, buf, starts, ends, fields.line[rows], labels, out)
    out.problems.sort(key=lambda p: p.line)
    return out


def _check_positions(chunk: LineChunk, config: IngestConfig, buf: bytes, starts: np.ndarray, ends: np.ndarray,
                     line: np.ndarray, labels: list[Label], out: LinesOutcome) -> None:
    """Check the FENs (``buf[starts:ends]``) and moves of the lines (0-based ``line`` in the
    block) whose labels were read; fill ``out.rows`` with the kept ones."""
    specs, unreadable = move_specs([lab.move for lab in labels])
    batch = parse_fens(buf, starts, ends, specs)
    out.valid = int(batch.ok.sum())
    keep = batch.ok.copy()
    keep[unreadable] = False
    reject: list[tuple[int, str, str]] = []
    for i in np.flatnonzero(~batch.ok).tolist():
        reason = "bad_fen" if batch.bad_text[i] else "illegal_position"
        reject.append((i, reason, f"{batch.errors[i]}: {_text(buf[starts[i]:ends[i]], 90)!r}"))
    for i in unreadable:
        if batch.ok[i]:
            reject.append((i, "bad_move", f"move {labels[i].move!r} is not SAN or UCI"))
    for code, reason, what in ((ILLEGAL_MOVE, "illegal_move", "is not legal"),
                               (AMBIGUOUS_MOVE, "ambiguous_move", "fits several legal moves")):
        for i in np.flatnonzero(keep & (batch.moves == code)).tolist():
            keep[i] = False
            reject.append((i, reason, f"move {labels[i].move!r} {what} in {batch.fens[i]}"))
    for i, reason, detail in reject:
        out.rejected[reason] += 1
        out.problems.append(Problem(chunk.line + int(line[i]), reason, detail))
    none = keep & (batch.n_legal == 0)
    out.dropped["no_legal_move"] += int(none.sum())
    keep &= ~none
    if config.skip_single_legal:
        single = keep & (batch.n_legal == 1)
        out.dropped["single_legal"] += int(single.sum())
        keep &= ~single
    rows = np.flatnonzero(keep)
    kept = [labels[i] for i in rows.tolist()]
    stm = batch.stm[rows]
    black = stm == 1
    result = np.fromiter((lab.result for lab in kept), dtype=np.int64, count=len(kept))
    if config.results_view == "mover":
        result = np.where(black & (result >= 0), 2 - result, result)
    texts = uci_texts()
    at = line[rows]
    out.rows = {
        "game_id": chunk.first_id + at,
        "ply": batch.ply[rows],
        "fen": [batch.fens[i] for i in rows.tolist()],
        "move": [None if m == NO_MOVE else texts[m] for m in batch.moves[rows].tolist()],
        "stm": stm,
        "result": [RESULT_TEXT[r] for r in result.tolist()],
        "n_legal": batch.n_legal[rows],
        "zobrist": batch.keys[rows],
        "score": [None if lab.score is None else (-lab.score if lab.score_mover and b else lab.score)
                  for lab, b in zip(kept, black.tolist(), strict=True)],
        "source_line": chunk.line + at,
        SPLIT_COLUMN: hash_splits(batch.keys[rows], config.split, config.seed),
    }
