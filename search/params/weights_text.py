"""The text view of a weights file: piece-square tables as 8x8 grids, every other term as
``label value`` rows, readable by people and read back by :func:`search.params.weights.load_weights`.

Its tables come from the catalogue (:data:`search.params.catalog.TERMS`): each base term is one
named table (a term with labels, e.g. ``material`` over pawn..queen or ``pst.knight`` over
a1..h8) or one named constant (a term without labels, e.g. ``pawns.doubled``), once for the
middle game (``mg``) and once for the end game (``eg``). :data:`SCORE_LINES` state how the
score is computed from them, :data:`TERMS_LINES` that the weights assume exactly these terms;
the C and Rust exports (:mod:`tuner.export.formats`) use the same tables and lines.

:func:`to_text` writes the view; :func:`parse_text` reads it back into the same
:class:`~search.params.weights.Weights` (values and metadata), with one-line
:class:`TextFormatError` messages ``WHERE: line N: ...``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from search.params.catalog import (
    ALL_TERMS,
    CATALOG_HASH,
    FEATURE_INDEX,
    N_FEATURES,
    PHASE_FORMULA,
    PHASE_MAX,
    PLUGIN,
    SQUARE_NAMES,
    STAGES,
)
from search.core.input_limits import InputLimitError, loads_json
from search.params.weights_base import Weights, WeightsFileError, MAX_ABS_WEIGHT, catalogue_names, warn_migrated, weight_range_problem

SCORE_LINES = (
    f"phase  = min({PHASE_MAX}, {PHASE_FORMULA}), counting both colours' pieces of each type (PNBRQK)",
    "mg_sum = sum over all terms of MG weight * x, eg_sum likewise with the EG weights, where x is the",
    "         term's count for the side to move minus the count for the other side",
    f"score  = (mg_sum * phase + eg_sum * ({PHASE_MAX} - phase)) / {PHASE_MAX} centipawns, side to move's view",
    "Terms are defined exactly in docs/features.md of movetuner; arrays are indexed by the labels",
    "listed with them (piece-square tables: a1, b1, ..., h8 from the side's own point of view,",
    "i.e. a black piece on square s counts for square s ^ 56).",
)

#: what every export says about the terms its weights assume: they are right only for an
#: engine that computes exactly these terms
TERMS_LINES = (
    "These weights assume exactly the terms of movetuner's docs/features.md (feature catalogue",
    f"{CATALOG_HASH}): they are right only for an engine that computes every one of those terms",
    "exactly as defined there. Either implement those terms in your engine, or declare your own",
    "terms to movetuner (docs/own-terms.md: a term plug-in, --terms FILE), tune them on your",
    "data and export again.",
) + ((f"With the terms of plug-in {PLUGIN.name!r} ({PLUGIN.path}), group {PLUGIN.group}: your engine computes",
      "them as that file's count() does.") if PLUGIN is not None else ())


class TextFormatError(WeightsFileError):
    """A text view that cannot be read back; the message is one line naming the line."""


@dataclass(frozen=True)
class Table:
    """One exported array or constant: a base term in one stage.

    ``name`` is the catalogue name (``mg.pst.knight``); ``labels`` the catalogue labels (empty
    for a constant); ``indices`` the feature indices of its entries, in label order.
    """

    stage: str
    group: str
    term: str
    labels: tuple[str, ...]
    indices: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"{self.stage}.{self.term}"

    @property
    def ident(self) -> str:
        """Upper-case identifier, e.g. ``MG_PST_KNIGHT``."""
        return re.sub(r"[^A-Z0-9]+", "_", self.name.upper())

    @property
    def is_grid(self) -> bool:
        return self.labels == SQUARE_NAMES


def tables() -> list[Table]:
    """Every base term in both stages, in catalogue order (all mg tables, then all eg)."""
    out: list[Table] = []
    for stage in STAGES:
        for term in ALL_TERMS:
            indices = tuple(FEATURE_INDEX[n] for n in term.feature_names(stage))
            out.append(Table(stage, term.group, term.name, term.labels, indices))
    assert sum(len(t.indices) for t in out) == N_FEATURES
    return out


def term_pairs() -> Iterator[tuple[Table, Table]]:
    """(mg, eg) tables of each term, in catalogue order."""
    all_tables = tables()
    half = len(all_tables) // 2
    return zip(all_tables[:half], all_tables[half:])


#: what a name may hold to appear verbatim in a generated comment: printable ASCII but ``\\``
_PLAIN_TEXT = re.compile(r"[ -\[\]-~]*")


def comment_text(text: str) -> str:
    """``text`` made safe inside one line of a generated comment (C ``/* */`` and ``//``, Rust
    ``//!``, the text view's ``#``): itself when it is printable ASCII without ``\\``, ``*/``,
    ``/*`` or ``??`` (a trigraph); otherwise a JSON string of it (in quotes, ASCII only, every
    control character escaped) with each ``*`` written ``\\u002a`` and each ``?`` ``\\u003f``,
    so that no newline, comment start or end, line splice or trigraph reaches the file, and
    reading the quoted JSON gives the text back exactly."""
    if _PLAIN_TEXT.fullmatch(text) and not any(bad in text for bad in ("*/", "/*", "??")):
        return text
    return json.dumps(text, ensure_ascii=True).replace("*", "\\u002a").replace("?", "\\u003f")


def source_name(w: Weights, fallback: str | None = None) -> str:
    """The weights' name for a heading: ``metadata["name"]``, else ``fallback`` (e.g. the
    file's or run folder's name), else ``unnamed weights``; safe in a comment line
    (:func:`comment_text`)."""
    name = w.metadata.get("name") or fallback
    return comment_text(str(name)) if name else "unnamed weights"


def grid_rows(values: list[int]) -> list[list[int]]:
    """Rows of 8 values in a1..h8 order (rank 1 first, as stored)."""
    return [values[r * 8:(r + 1) * 8] for r in range(8)]


# ---------------------------------------------------------------- text view


_TEXT_MAGIC = "movetuner weights text view"
_FILES = "abcdefgh"


def to_text(w: Weights, name: str | None = None) -> str:
    """The human-readable view: ``[stage.term]`` sections, PSTs as 8x8 grids (rank 8 on top),
    headed by the weights' name (:func:`source_name` with ``name`` as the fallback).

    Format (read back by :func:`parse_text`): ``#`` starts a comment; ``key = value`` lines
    give ``catalog_hash``, ``phase_max``, ``metadata`` (one-line JSON) and every term without
    labels; a ``[stage.term]`` header opens a term with labels, followed by one
    ``label value`` row per label, or for a piece-square table 8 rows ``<rank> v_a .. v_h``
    for ranks 8 down to 1.
    """
    values = w.values.tolist()
    out = [
        f"# {_TEXT_MAGIC}: {source_name(w, name)}",
        *(f"# {line}" for line in SCORE_LINES),
        "#",
        *(f"# {line}" for line in TERMS_LINES),
        f"catalog_hash = {CATALOG_HASH}",
        f"phase_max = {PHASE_MAX}",
        f"metadata = {json.dumps(w.metadata, sort_keys=True)}",
    ]
    group = None
    for mg, eg in term_pairs():
        if mg.group != group:
            group = mg.group
            out += ["", f"# ======== {group} ========"]
        if not mg.labels:
            out += ["", *(f"{t.name} = {values[t.indices[0]]}" for t in (mg, eg))]
            continue
        for t in (mg, eg):
            out += ["", f"[{t.name}]"]
            vals = [values[i] for i in t.indices]
            if t.is_grid:
                out.append("#  " + "".join(f"{f:>6}" for f in _FILES))
                rows = grid_rows(vals)
                for r in range(7, -1, -1):
                    out.append(f"{r + 1}  " + "".join(f"{v:6d}" for v in rows[r]))
            else:
                width = max(len(label) for label in t.labels)
                out += [f"{label:<{width}} {v:6d}" for label, v in zip(t.labels, vals)]
    return "\n".join(out) + "\n"


def _int(text: str, lineno: int, what: str) -> int:
    if not re.fullmatch(r"[+-]?\d+", text):
        raise TextFormatError(f"line {lineno}: {what} must be an integer, not {text!r}")
    if len(text) > 20:  # beyond any weight, and beyond what int() converts past 4,300 digits
        raise TextFormatError(f"line {lineno}: {what} = {text[:12]}... ({len(text)} digits) "
                              f"{weight_range_problem(2 * MAX_ABS_WEIGHT)}")
    value = int(text)
    problem = weight_range_problem(value)
    if problem:
        raise TextFormatError(f"line {lineno}: {what} = {value} {problem}")
    return value


def parse_text(text: str, where: str = "<text>") -> Weights:
    """Read a text view written by :func:`to_text` back into weights.

    Every feature must be given exactly once; phase_max must match this version's, and the
    catalogue hash too, or name a legacy catalogue: a view of one is migrated as
    :func:`search.params.weights.load_weights` migrates JSON files (its features keep their values,
    those added since are 0, ``metadata["migrated_from_catalog"]`` and a one-line
    :class:`~search.params.weights.CatalogMigrationWarning` record it). Raises
    :class:`TextFormatError` with a one-line message ``WHERE: line N: ...``.
    """
    try:
        w, old_hash = _parse_text(text)
    except TextFormatError as exc:
        raise TextFormatError(f"{where}: {exc}") from None
    if old_hash is not None:
        warn_migrated(where, old_hash)
    return w


def _parse_text(text: str) -> tuple[Weights, str | None]:
    """The weights of a text view, and the legacy catalogue hash it was migrated from (or None)."""
    reader = _TextReader()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        reader.read_line(lineno, raw)
    return reader.finish()


class _TextReader:
    """One pass over a text view's lines: the open ``[table]`` section and the rows it still
    expects, the header settings, the values given so far (each feature once) and, for a view of
    a legacy catalogue, the feature indices it gives."""

    def __init__(self) -> None:
        self.by_name = {t.name: t for t in tables()}
        self.values = np.zeros(N_FEATURES, dtype=np.int64)
        self.seen = np.zeros(N_FEATURES, dtype=bool)
        self.header: dict[str, tuple[str, int]] = {}
        self.section: Table | None = None
        self.rows: list[str] = []  # labels (or ranks) still expected in the open section
        self.section_line = 0
        self.legacy: list[int] | None = None
        self.lineno = 0

    def read_line(self, lineno: int, raw: str) -> None:
        self.lineno = lineno
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("metadata") else raw.strip()
        if not line:
            return
        if line.startswith("["):
            self._open_section(line)
        elif "=" in line:
            self._close_section()
            self.section = None
            key, _, value = (part.strip() for part in line.partition("="))
            self._setting(key, value)
        else:
            self._row(line)

    def _close_section(self) -> None:
        if self.section is not None and self.rows:
            raise TextFormatError(f"line {self.section_line}: [{self.section.name}] is missing row {self.rows[0]!r}")

    def _assign(self, index: int, value: int, name: str) -> None:
        if self.seen[index]:
            raise TextFormatError(f"line {self.lineno}: {name} is given twice")
        self.seen[index] = True
        self.values[index] = value

    def _open_section(self, line: str) -> None:
        self._close_section()
        m = re.fullmatch(r"\[\s*([\w.]+)\s*\]", line)
        if not m or m.group(1) not in self.by_name or not self.by_name[m.group(1)].labels:
            raise TextFormatError(f"line {self.lineno}: unknown table {line!r}")
        section = self.section = self.by_name[m.group(1)]
        self.section_line = self.lineno
        self.rows = [str(r) for r in range(8, 0, -1)] if section.is_grid else list(section.labels)

    def _setting(self, key: str, value: str) -> None:
        lineno = self.lineno
        if key in ("catalog_hash", "phase_max", "metadata"):
            if key in self.header:
                raise TextFormatError(f"line {lineno}: {key} is given twice")
            self.header[key] = (value, lineno)
            if key == "catalog_hash" and value != CATALOG_HASH:
                try:
                    names = catalogue_names(value, f"line {lineno}")
                except WeightsFileError as exc:
                    raise TextFormatError(str(exc)) from None
                self.legacy = [FEATURE_INDEX[n] for n in names]
            if key == "phase_max" and value != str(PHASE_MAX):
                raise TextFormatError(f"line {lineno}: phase_max is {value!r}, this version uses {PHASE_MAX}")
            return
        t = self.by_name.get(key)
        if t is None or t.labels:
            raise TextFormatError(f"line {lineno}: unknown setting or constant {key!r}")
        self._assign(t.indices[0], _int(value, lineno, key), key)

    def _row(self, line: str) -> None:
        lineno, section = self.lineno, self.section
        if section is None:
            raise TextFormatError(f"line {lineno}: row {line!r} outside a [table]")
        fields = line.split()
        if not self.rows:
            raise TextFormatError(f"line {lineno}: [{section.name}] has an extra row {line!r}")
        expected = self.rows.pop(0)
        if fields[0] != expected:
            raise TextFormatError(f"line {lineno}: expected row {expected!r} of [{section.name}], found {fields[0]!r}")
        if section.is_grid:
            if len(fields) != 9:
                raise TextFormatError(f"line {lineno}: rank {expected} of [{section.name}] needs 8 values, "
                                      f"found {len(fields) - 1}")
            rank = int(expected) - 1
            for f, cell in enumerate(fields[1:]):
                name = f"{section.name}.{_FILES[f]}{rank + 1}"
                self._assign(section.indices[rank * 8 + f], _int(cell, lineno, name), name)
        else:
            if len(fields) != 2:
                raise TextFormatError(f"line {lineno}: row {expected!r} of [{section.name}] needs one value")
            name = f"{section.name}.{expected}"
            self._assign(section.indices[section.labels.index(expected)], _int(fields[1], lineno, name), name)

    def finish(self) -> tuple[Weights, str | None]:
        """The weights once every line was read: the header complete, every feature the
        catalogue (or the legacy one) has given, the metadata a JSON object."""
        self._close_section()
        for key in ("catalog_hash", "phase_max"):
            if key not in self.header:
                raise TextFormatError(f"line {self.lineno}: no '{key} = ...' line (not a movetuner text view?)")
        self._check_complete()
        metadata = self._metadata()
        if self.legacy is not None:
            old = self.header["catalog_hash"][0]
            return Weights(self.values.astype(np.int32), {**metadata, "migrated_from_catalog": old}), old
        return Weights(self.values.astype(np.int32), metadata), None

    def _check_complete(self) -> None:
        seen = self.seen
        required = np.ones(N_FEATURES, dtype=bool)
        if self.legacy is not None:  # the tables added since are absent (0), and must be
            required[:] = False
            required[self.legacy] = True
            extra = [t.name for t in self.by_name.values() if (seen & ~required)[list(t.indices)].any()]
            if extra:
                old, at = self.header["catalog_hash"]
                raise TextFormatError(f"line {at}: catalogue {old!r} has no {extra[0]} (a view of it cannot give it)")
        if not (seen | ~required).all():
            missing = [t.name for t in self.by_name.values() if not (seen | ~required)[list(t.indices)].all()]
            raise TextFormatError(f"line {self.lineno}: no values for {missing[0]}"
                                  + (f" and {len(missing) - 1} more tables" if len(missing) > 1 else ""))

    def _metadata(self) -> dict[str, Any]:
        if "metadata" not in self.header:
            return {}
        value, at = self.header["metadata"]
        try:
            metadata = loads_json(value, f"line {at}: metadata")
        except InputLimitError as exc:
            raise TextFormatError(str(exc)) from None
        except json.JSONDecodeError as exc:
            raise TextFormatError(f"line {at}: metadata is not valid one-line JSON ({exc.msg})") from None
        if not isinstance(metadata, dict):
            raise TextFormatError(f"line {at}: metadata must be a JSON object")
        return metadata
