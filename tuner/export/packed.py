"""Paste-ready packed weights: every term's middle- and end-game weight as one ``S(mg, eg)``
pair, the form Texel-style tuners print (Ethereal's tuner, Gedas' texel-tuner) and engines in
that family evaluate with.

``tuner export WEIGHTS --format c-packed`` writes a C99 header with one ``static const
int32_t`` table per term of the catalogue (:data:`search.params.catalog.TERMS`), in catalogue order:
``MT_MATERIAL[5]`` over pawn..queen, ``MT_PST_KNIGHT[64]`` over a1..h8 (a rank per line),
``MT_PAWNS_DOUBLED`` for a term without labels, and so on; each entry is ``S(mg, eg)``.

Packing (Stockfish's ``make_score``, Ethereal's ``MakeScore``)::

    S(mg, eg)  = (int32)((uint32)eg << 16) + mg      eg in the upper half, mg in the lower
    MT_MG(s)   = (int16)(uint16)s                    MT_EG(s) = (int16)(uint16)((s + 0x8000) >> 16)

Sums of packed scores stay packed (adding ``S(a, b)`` and ``S(c, d)`` gives ``S(a + c, b +
d)``) as long as each half of the total stays within int16, so an engine sums its terms'
``count * S(mg, eg)`` and tapers once: ``MT_TAPER_PACKED(total, phase)``, in centipawns. The
header defines ``S`` only when the engine has not defined it first (``#ifndef S``), so an
engine's own packing macro, if it packs the same way, is used. Each weight must lie within
``-32767..32767`` (a half of the packed int32); other weights are refused in one line.
"""

from __future__ import annotations

import re

from search.params.catalog import CATALOG_HASH, PHASE_MAX, PHASE_WEIGHTS
from search.params.weights import Weights
from search.params.weights_text import SCORE_LINES, TERMS_LINES, Table, source_name, term_pairs
from tuner.export.c_lines import c_prologue

#: the largest magnitude of a weight in one half of a packed int32
PACKED_LIMIT = 32767
#: pairs per line in a table that is not a piece-square table
PER_LINE = 8


def packed_ident(t: Table) -> str:
    """The C name of a term's packed table, e.g. ``MT_PST_KNIGHT`` for ``pst.knight``."""
    return "MT_" + re.sub(r"[^A-Z0-9]+", "_", t.term.upper())


def _check(w: Weights) -> None:
    """Refuse weights that a packed half cannot hold, naming the first one."""
    for mg, eg in term_pairs():
        for t in (mg, eg):
            for label_index, i in enumerate(t.indices):
                v = int(w.values[i])
                if not -PACKED_LIMIT <= v <= PACKED_LIMIT:
                    label = f".{t.labels[label_index]}" if t.labels else ""
                    raise ValueError(f"c-packed: weight {t.name}{label} = {v} does not fit a packed half "
                                     f"(-{PACKED_LIMIT}..{PACKED_LIMIT}); export these weights with --format c")


def _pair(mg: int, eg: int) -> str:
    return f"S({mg:4d}, {eg:4d})"


def packed_tables(w: Weights) -> list[str]:
    """Every term's packed table (or constant) of ``w`` as C lines, in catalogue order."""
    values = w.values.tolist()
    lines: list[str] = []
    for mg, eg in term_pairs():
        ident = packed_ident(mg)
        pairs = [_pair(values[a], values[b]) for a, b in zip(mg.indices, eg.indices)]
        lines.append("")
        if not mg.labels:
            lines.append(f"static const int32_t {ident} MT_UNUSED = {pairs[0]};  /* {mg.term} */")
            continue
        order = "a1..h8" if mg.is_grid else ", ".join(mg.labels)
        lines.append(f"/* {mg.term} [{order}] */")
        lines.append(f"static const int32_t {ident}[{len(pairs)}] MT_UNUSED = {{")
        if mg.is_grid:
            lines += [f"    {', '.join(pairs[r * 8:(r + 1) * 8])},  /* rank {r + 1} */" for r in range(8)]
        else:
            lines += [f"    {', '.join(pairs[k:k + PER_LINE])}," for k in range(0, len(pairs), PER_LINE)]
        lines.append("};")
    return lines


def to_c_packed(w: Weights, name: str | None = None) -> str:
    """A C99 header of packed ``S(mg, eg)`` tables (module docstring); ``name`` heads it when
    the weights record none. Raises ValueError (one line) for a weight outside a packed half."""
    _check(w)
    guard = "MOVETUNER_PACKED_WEIGHTS_H"
    lines = [
        f"/* movetuner evaluation weights, packed S(mg, eg) pairs: {source_name(w, name)}",
        f" * feature catalogue {CATALOG_HASH}, PHASE_MAX = {PHASE_MAX}",
        " *",
        *(f" * {line}" for line in SCORE_LINES),
        " *",
        " * Each entry is S(mg, eg): a term's middle-game and end-game weight in centipawns, packed",
        " * into one int32 as Stockfish's make_score and Ethereal's MakeScore do (eg in the upper 16",
        " * bits, mg in the lower). Sum count * S(mg, eg) over the terms, then taper the packed total",
        " * once: MT_TAPER_PACKED(total, phase). Each half of the total must stay within int16.",
        " *",
        *(f" * {line}" for line in TERMS_LINES),
        " */",
        *c_prologue(guard),
        f'#define MT_CATALOG_HASH "{CATALOG_HASH}"',
        f"#define MT_PHASE_MAX {PHASE_MAX}",
        "",
        "/* a packed pair: the engine's own S, if it defines one first, is used instead */",
        "#ifndef S",
        "#define S(mg, eg) ((int32_t)((uint32_t)(int32_t)(eg) << 16) + (int32_t)(mg))",
        "#endif",
        "/* the middle-game and end-game halves of a packed score */",
        "#define MT_MG(s) ((int32_t)(int16_t)(uint16_t)(uint32_t)(s))",
        "#define MT_EG(s) ((int32_t)(int16_t)(uint16_t)(((uint32_t)(s) + 0x8000u) >> 16))",
        "/* tapered score in centipawns of a packed total */",
        "#define MT_TAPER_PACKED(s, phase) \\",
        "    ((MT_MG(s) * (phase) + MT_EG(s) * (MT_PHASE_MAX - (phase))) / MT_PHASE_MAX)",
        "",
        "/* game-phase weight per piece type: pawn, knight, bishop, rook, queen, king */",
        f"static const int32_t MT_PHASE_WEIGHTS[6] MT_UNUSED = {{{', '.join(map(str, PHASE_WEIGHTS))}}};",
    ]
    lines += packed_tables(w)
    lines += ["", f"#endif /* {guard} */", ""]
    return "\n".join(lines)
