"""A network for other engines: ``tuner export NET.mtnn --format c`` writes one C99 header
holding the network's integer parameters and movetuner's reference forward pass.

The header (a single file, nothing else to compile) has, in order:

* a comment naming the network, its shape and layout hash, and what an engine needs (pieces
  on squares only; for a *hybrid* network also the linear evaluator's terms, below);
* ``#define`` constants: ``MTNN_H``, ``MTNN_H2``, ``MTNN_H3``, ``MTNN_N_BUCKETS``,
  ``MTNN_N_OUTPUTS`` (output buckets by the number of pieces), ``MTNN_N_INPUTS``, ``MTNN_QA``, ``MTNN_QB``, ``MTNN_QO``, ``MTNN_PHASE_MAX``,
  ``MTNN_LAYOUT_HASH``, ``MTNN_HAS_LINEAR``;
* the parameters as ``static const`` arrays in the layout of the ``.mtnn`` file
  (``docs/network.md``): ``MTNN_BUCKETS[64]``, ``MTNN_W1[MTNN_N_INPUTS][MTNN_H]``, ``MTNN_B1``,
  ``MTNN_W2[2 * MTNN_H][MTNN_H2]``, ``MTNN_B2``, ``MTNN_W3[MTNN_H2][MTNN_H3]``, ``MTNN_B3``,
  ``MTNN_W4[MTNN_N_OUTPUTS][...]``, ``MTNN_B4[MTNN_N_OUTPUTS]`` (int16, int32 and int64 as in
  the file);
* for a hybrid network, its linear weights as the tables of ``tuner export --format c``
  (``MT_MG_MATERIAL`` ...);
* the forward pass, the package's ``tuner/export/c/mtnn_eval.h`` verbatim: ``static inline``
  functions that compute accumulators from scratch or move by move and the score exactly as
  :mod:`search.evaluation.network_kernels` does (a test compiles it and compares 1,000 positions' scores).

Hybrid networks: their linear part needs the whole feature catalogue of ``docs/features.md``
in C, which movetuner does not ship in C; the header computes the network's part exactly and
says plainly that the linear terms' score must be added (with the catalogue hash and the
weights). The ``.mtnn`` file itself is the documented binary format (``--format mtnn`` writes
it again, validated).
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from search.params.catalog import CATALOG_HASH, PHASE_MAX, PIECE_NAMES, SQUARE_NAMES
from search.evaluation.network import QuantizedNetwork
from search.evaluation.network_kernels import PSQ_INPUTS, QA, QB, QO
from search.params.weights import Weights
from search.params.weights_text import TERMS_LINES, comment_text
from tuner.export.c_lines import c_prologue
from tuner.export.formats import c_tables

#: values per line in the parameter arrays
PER_LINE = 16
#: the include guard of the header
GUARD = "MOVETUNER_NETWORK_H"


def eval_source() -> str:
    """The reference forward pass (``tuner/export/c/mtnn_eval.h``, package data)."""
    return resources.files("tuner.export").joinpath("c/mtnn_eval.h").read_text(encoding="utf-8")


def _values(row: np.ndarray, indent: str) -> list[str]:
    """Lines of at most :data:`PER_LINE` comma-separated integers."""
    vals = [str(v) for v in row.tolist()]
    return [indent + ", ".join(vals[k:k + PER_LINE]) + "," for k in range(0, len(vals), PER_LINE)]


def _vector(ctype: str, name: str, size: str, values: np.ndarray, comment: str) -> list[str]:
    return [f"/* {comment} */", f"static const {ctype} {name}[{size}] MT_UNUSED = {{",
            *_values(values, "    "), "};"]


def _matrix(ctype: str, name: str, rows: str, cols: str, values: np.ndarray, comment: str,
            row_names: list[str]) -> list[str]:
    lines = [f"/* {comment} */", f"static const {ctype} {name}[{rows}][{cols}] MT_UNUSED = {{"]
    for row, row_name in zip(values, row_names):
        lines.append(f"    {{ /* {row_name} */")
        lines += _values(row, "        ")
        lines.append("    },")
    lines.append("};")
    return lines


def input_names(n_buckets: int) -> list[str]:
    """What each W1 row is: ``bucket b, own|their <piece> <square>`` (``docs/network.md``)."""
    return [f"{i}: bucket {i // PSQ_INPUTS}, {('own', 'their')[i // 384 % 2]} "
            f"{PIECE_NAMES[i // 64 % 6]} {SQUARE_NAMES[i % 64]}" for i in range(n_buckets * PSQ_INPUTS)]


def _heading(net: QuantizedNetwork, name: str | None) -> list[str]:
    shape = net.shape
    title = comment_text(str(net.metadata.get("name") or name or "unnamed network"))
    lines = [
        f"/* movetuner network: {title}",
        (f" * shape: H = {shape.h} accumulator entries per side, no hidden layers (the direct form: "
         "a squared clipped ReLU),") if shape.direct else
        (f" * shape: H = {shape.h} accumulator entries per side, hidden layers H2 = {shape.h2} and "
         f"H3 = {shape.h3},"),
        f" *        king buckets \"{shape.buckets}\" ({shape.n_buckets} x 768 = {shape.n_inputs} inputs per side), "
        f"{shape.outputs} output bucket{'s' if shape.outputs > 1 else ''} by the number of pieces; "
        f"layout hash {net.layout_hash()}",
    ]
    description = net.metadata.get("description")
    if description:
        lines.append(f" * {comment_text(str(description))}")
    lines += [
        " *",
        " * One C99 header, nothing else to compile: the network's integer parameters (MTNN_W1 ..",
        " * MTNN_B4, in the layout and scales of movetuner's docs/network.md) and movetuner's reference",
        " * forward pass (mtnn_refresh, mtnn_add, mtnn_sub, mtnn_forward, mtnn_evaluate, mtnn_parse_fen,",
        " * all static inline), which computes exactly the scores of movetuner's search, in eval units",
        f" * (1/{PHASE_MAX} centipawn) from the side to move's view. Include it in the one source file that",
        " * evaluates: each file that includes it holds its own copy of the tables.",
        " *",
        " * The network's inputs are the pieces on their squares (docs/network.md, \"Inputs\"): an engine",
        " * needs nothing else from its position to compute it.",
    ]
    if net.linear is not None:
        lines += [
            " *",
            " * HYBRID NETWORK: movetuner's score of a position is this network's part PLUS the linear",
            " * evaluator's score, in eval units:",
            f" *     score = mtnn_evaluate(pos) + mg_sum * phase + eg_sum * ({PHASE_MAX} - phase)",
            " * with phase, mg_sum and eg_sum as docs/features.md defines them, over the linear weights",
            " * MT_MG_* and MT_EG_* of this header. The C code here computes the network's part only;",
            " * the linear terms must be added by the engine.",
            *(f" * {line}" for line in TERMS_LINES),
        ]
    lines.append(" */")
    return lines


def _hidden_layers(net: QuantizedNetwork) -> list[str]:
    """The tables of the hidden layers W2, b2, W3, b3 (none in the direct form)."""
    shape, p = net.shape, net.params
    return [
        *_matrix("int16_t", "MTNN_W2", "2 * MTNN_H", "MTNN_H2", p["w2"],
                 f"W2: a row per input of the layer (the side to move's accumulator, then the other's); scale {QB}",
                 [f"{'stm' if j < shape.h else 'other'} {j % shape.h}" for j in range(2 * shape.h)]),
        "",
        *_vector("int32_t", "MTNN_B2", "MTNN_H2", p["b2"], f"b2; scale {QA} * {QB}"),
        "",
        *_matrix("int16_t", "MTNN_W3", "MTNN_H2", "MTNN_H3", p["w3"], f"W3: a row per unit of H2; scale {QB}",
                 [f"h2 {j}" for j in range(shape.h2)]),
        "",
        *_vector("int32_t", "MTNN_B3", "MTNN_H3", p["b3"], f"b3; scale {QA} * {QB}"),
        "",
    ]


def to_c_network(net: QuantizedNetwork, name: str | None = None) -> str:
    """The C99 header of ``net`` (module docstring); ``name`` heads it when the network's
    metadata records none (e.g. the file's name)."""
    shape, p = net.shape, net.params
    lines = _heading(net, name) + [
        *c_prologue(GUARD),
        f'#define MTNN_LAYOUT_HASH "{net.layout_hash()}"',
        f"#define MTNN_H {shape.h}",
        f"#define MTNN_H2 {shape.h2}",
        f"#define MTNN_H3 {shape.h3}",
        f"#define MTNN_N_BUCKETS {shape.n_buckets}",
        f"#define MTNN_N_OUTPUTS {shape.outputs}",
        f"#define MTNN_N_INPUTS {shape.n_inputs}",
        f"#define MTNN_QA {QA}",
        f"#define MTNN_QB {QB}",
        f"#define MTNN_QO {QO}",
        f"#define MTNN_PHASE_MAX {PHASE_MAX}",
        f"#define MTNN_HAS_LINEAR {int(net.linear is not None)}",
        f"#define MTNN_DIRECT {int(shape.direct)}",
        "",
    ]
    buckets = shape.bucket_table
    lines += [
        "/* king bucket of each own-king square, a1..h8 (from Black's view: its king's square ^ 56) */",
        "static const int8_t MTNN_BUCKETS[64] MT_UNUSED = {",
        *(f"    {', '.join(str(v) for v in buckets[r * 8:(r + 1) * 8])},  /* rank {r + 1} */" for r in range(8)),
        "};",
        "",
        *_matrix("int16_t", "MTNN_W1", "MTNN_N_INPUTS", "MTNN_H", p["w1"],
                 "W1: first layer, a row per input ((bucket * 2 + own/their) * 6 + type) * 64 + square; "
                 f"scale {QA}", input_names(shape.n_buckets)),
        "",
        *_vector("int16_t", "MTNN_B1", "MTNN_H", p["b1"], f"b1: the accumulator's bias; scale {QA}"),
        "",
        *(_hidden_layers(net) if not shape.direct else []),
        *_matrix("int32_t", "MTNN_W4", "MTNN_N_OUTPUTS", "2 * MTNN_H" if shape.direct else "MTNN_H3", p["w4"],
                 ("W4: the output layer over x^2 (the side to move's accumulator, then the other's), a row per "
                  if shape.direct else "W4: the output layer, a row per ") + f"output bucket; scale {QO}",
                 [f"output bucket {o}" for o in range(shape.outputs)]),
        "",
        f"/* b4: the output's bias, one per output bucket; scale {QA} * {QO} */",
        "static const int64_t MTNN_B4[MTNN_N_OUTPUTS] MT_UNUSED = {",
        *_values(np.array([f"INT64_C({int(v)})" for v in p["b4"]]), "    "),
        "};",
    ]
    if net.linear is not None:
        lines += ["", f"/* the linear part: weights over the feature catalogue {CATALOG_HASH} (docs/features.md), "
                      "the tables of `tuner export --format c` */",
                  *c_tables(Weights(net.linear))]
    lines += ["", eval_source().rstrip("\n"), "", f"#endif /* {GUARD} */", ""]
    return "\n".join(lines)
