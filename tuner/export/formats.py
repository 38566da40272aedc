"""Export weights for other engines: JSON, a C header, packed ``S(mg, eg)`` C tables
(:mod:`tuner.export.packed`), a Rust module, and a text view.

Every format is derived from the feature catalogue (:data:`search.params.catalog.TERMS`), never
from hand-kept offsets: each base term becomes one named array (a term with labels, e.g.
``material`` over pawn..queen or ``pst.knight`` over a1..h8) or one named constant (a term
without labels, e.g. ``pawns.doubled``), once for the middle game (``mg``) and once for the
end game (``eg``). Each export states in a comment the catalogue hash, ``PHASE_MAX`` and how
the score is computed:

    phase  = min(24, N + B + 2 R + 4 Q)             (both colours' pieces: catalog.PHASE_WEIGHTS)
    mg_sum = sum over terms of mg_weight * x         (x: the term's own count minus the enemy's,
    eg_sum = sum over terms of eg_weight * x          from the side to move's view)
    score  = (mg_sum * phase + eg_sum * (24 - phase)) / 24   centipawns, side to move's view

with the exact definition of every term in ``docs/features.md``; every export also says plainly
that the weights assume exactly those terms (:data:`search.params.weights_text.TERMS_LINES`). Each is
headed by the weights' name: ``metadata["name"]``, or the file's or run folder's name
(:func:`display_name`).

The C headers compile cleanly as C99 under ``-Wall -Wextra -Wunused-const-variable``: a table
an engine does not read is marked ``MT_UNUSED`` (GCC and Clang's ``unused`` attribute).

The text view is :mod:`search.params.weights_text` (its tables and score lines are these exports'
too), so that :func:`search.params.weights.load_weights`, the one loader of every command, reads it
back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from search.params.catalog import CATALOG_HASH, PHASE_MAX, PHASE_WEIGHTS
from search.params.weights import Weights, dumps
from search.params.weights_text import SCORE_LINES, TERMS_LINES, grid_rows, source_name, term_pairs, to_text
from tuner.export.c_lines import c_prologue

FORMATS = ("json", "c", "c-packed", "rust", "text")


def display_name(metadata: dict[str, Any], spec: str | Path | None = None) -> str | None:
    """The name an export's heading gives weights loaded from ``spec``: ``metadata["name"]``,
    else for a file the name of its run folder (``results/mine/weights.json`` -> ``mine``) or
    its own name (``my-eval.json``); None when there is none (a heading then says ``unnamed
    weights``)."""
    name = metadata.get("name")
    if name:
        return str(name)
    if spec is None:
        return None
    path = Path(spec)
    if not path.is_file():
        return None
    path = path.resolve()
    if path.stem in ("weights", "network") and path.parent.name:
        return path.parent.name
    return path.name


@dataclass(frozen=True)
class _Spelling:
    """How a target language writes the tables: format strings over ``ident`` (upper case),
    ``name`` (catalogue name), ``value``, ``n`` (entries), ``order`` (the labels) and ``rank``."""

    constant: str
    array_open: str
    array_close: str
    rank_comment: str


_C = _Spelling(
    constant="static const int32_t MT_{ident} MT_UNUSED = {value};  /* {name} */",
    array_open="/* {name} [{order}] */\nstatic const int32_t MT_{ident}[{n}] MT_UNUSED = {{",
    array_close="}};",
    rank_comment="/* rank {rank} */",
)
_RUST = _Spelling(
    constant="/// {name}\npub const {ident}: i32 = {value};",
    array_open="/// {name} [{order}]\npub const {ident}: [i32; {n}] = [",
    array_close="];",
    rank_comment="// rank {rank}",
)


def _tables_in(w: Weights, spelling: _Spelling) -> list[str]:
    """Every (mg, eg) pair of tables of ``w``, in catalogue order, as ``spelling`` writes them:
    a blank line before each pair, piece-square tables one rank (a1..h8 order) per line."""
    values = w.values.tolist()
    lines: list[str] = []
    for mg, eg in term_pairs():
        lines.append("")
        for t in (mg, eg):
            vals = [values[i] for i in t.indices]
            if not t.labels:
                lines += spelling.constant.format(ident=t.ident, name=t.name, value=vals[0]).split("\n")
                continue
            order = "a1..h8" if t.is_grid else ", ".join(t.labels)
            lines += spelling.array_open.format(ident=t.ident, name=t.name, n=len(vals), order=order).split("\n")
            if t.is_grid:
                lines += [f"    {', '.join(f'{v:5d}' for v in row)},  {spelling.rank_comment.format(rank=r + 1)}"
                          for r, row in enumerate(grid_rows(vals))]
            else:
                lines.append(f"    {', '.join(f'{v:5d}' for v in vals)},")
            lines.append(spelling.array_close.format())
    return lines


def c_tables(w: Weights) -> list[str]:
    """The C lines of every table of ``w`` (``MT_<STAGE>_<TERM>``, ``MT_UNUSED``): the body of
    :func:`to_c`, also written into a hybrid network's header."""
    return _tables_in(w, _C)


def to_c(w: Weights, name: str | None = None) -> str:
    """A C header (C99): one ``static const int32_t`` array or constant per table."""
    guard = "MOVETUNER_WEIGHTS_H"
    lines = [
        f"/* movetuner evaluation weights: {source_name(w, name)}",
        f" * feature catalogue {CATALOG_HASH}, PHASE_MAX = {PHASE_MAX}",
        " *",
        *(f" * {line}" for line in SCORE_LINES),
        " *",
        *(f" * {line}" for line in TERMS_LINES),
        " */",
        *c_prologue(guard),
        f'#define MT_CATALOG_HASH "{CATALOG_HASH}"',
        f"#define MT_PHASE_MAX {PHASE_MAX}",
        "/* tapered score in centipawns from the middle- and end-game sums */",
        "#define MT_TAPER(mg_sum, eg_sum, phase) \\",
        "    (((mg_sum) * (phase) + (eg_sum) * (MT_PHASE_MAX - (phase))) / MT_PHASE_MAX)",
        "",
        "/* game-phase weight per piece type: pawn, knight, bishop, rook, queen, king */",
        f"static const int32_t MT_PHASE_WEIGHTS[6] MT_UNUSED = {{{', '.join(map(str, PHASE_WEIGHTS))}}};",
    ]
    lines += c_tables(w)
    lines += ["", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def to_rust(w: Weights, name: str | None = None) -> str:
    """A Rust module: one ``pub const`` array (``[i32; n]``) or ``i32`` per table, under
    ``#![allow(dead_code)]`` (the C header's ``MT_UNUSED``: a binary that declares it as a ``mod``
    and reads a few tables gets no warning for the rest)."""
    lines = [
        f"//! movetuner evaluation weights: {source_name(w, name)}",
        f"//! feature catalogue {CATALOG_HASH}, PHASE_MAX = {PHASE_MAX}",
        "//!",
        *(f"//! {line}" for line in SCORE_LINES),
        "//!",
        *(f"//! {line}" for line in TERMS_LINES),
        "",
        "// an engine reads some tables only: no dead-code warning for the others when used as a `mod`",
        "#![allow(dead_code)]",
        "",
        f'pub const CATALOG_HASH: &str = "{CATALOG_HASH}";',
        f"pub const PHASE_MAX: i32 = {PHASE_MAX};",
        "/// game-phase weight per piece type: pawn, knight, bishop, rook, queen, king",
        f"pub const PHASE_WEIGHTS: [i32; 6] = [{', '.join(map(str, PHASE_WEIGHTS))}];",
        "",
        "/// Tapered score in centipawns from the middle- and end-game sums.",
        "pub const fn taper(mg_sum: i32, eg_sum: i32, phase: i32) -> i32 {",
        "    (mg_sum * phase + eg_sum * (PHASE_MAX - phase)) / PHASE_MAX",
        "}",
    ]
    lines += _tables_in(w, _RUST)
    return "\n".join(lines) + "\n"


def _json(w: Weights, name: str | None = None) -> str:
    return dumps(w)


def _c_packed(w: Weights, name: str | None = None) -> str:
    from tuner.export.packed import to_c_packed  # noqa: PLC0415 (a module of its own, loaded when used)

    return to_c_packed(w, name)


#: each format's writer: ``(weights, fallback name) -> text``
EXPORTERS: dict[str, Callable[[Weights, str | None], str]] = {
    "json": _json, "c": to_c, "c-packed": _c_packed, "rust": to_rust, "text": to_text}


def export(w: Weights, fmt: str, name: str | None = None) -> str:
    """``w`` in format ``fmt`` (one of :data:`FORMATS`), as text; ``name`` heads it when the
    weights record none (:func:`display_name`)."""
    if fmt not in EXPORTERS:
        raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")
    return EXPORTERS[fmt](w, name)
