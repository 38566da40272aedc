"""Paste-ready packed weights (``tuner export --format c-packed``, tuner/export/packed.py): a small
C engine stub that includes the output and reads every table compiles with every warning an
error and prints a checksum equal to the one computed here from the weights by feature name;
packed totals taper as the comment says; an engine's own S macro is honoured; weights that do
not fit a packed half are refused in one line."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from search.params.catalog import FEATURE_INDEX, N_FEATURES, PIECE_NAMES, TERMS
from search.params.weights import Weights, load_weights, save_weights
from tuner.cli import main as tuner_main
from tuner.export.formats import export

CC = shutil.which("gcc") or shutil.which("cc")
CXX = shutil.which("g++") or shutil.which("c++")
STRICT = ["-Wall", "-Wextra", "-Werror", "-Wunused-const-variable"]
#: an engine's own packing macro, as Ethereal defines it (evaluate.h)
ETHEREAL_S = "#define MakeScore(mg, eg) ((int)((unsigned int)(eg) << 16) + (mg))\n#define S(mg, eg) (MakeScore((mg), (eg)))\n"


def fitting_random(seed: int) -> Weights:
    """Random weights within a packed half, with its extremes in two piece-square entries."""
    values = np.random.default_rng(seed).integers(-2000, 2001, size=N_FEATURES).astype(np.int32)
    values[FEATURE_INDEX["mg.pst.queen.d4"]] = 32767
    values[FEATURE_INDEX["eg.pst.queen.d4"]] = -32767
    return Weights(values, {"name": "random"})


@pytest.fixture(scope="module", params=["classic", "gm", "random"])
def weights(request: pytest.FixtureRequest) -> Weights:
    return fitting_random(5) if request.param == "random" else load_weights(request.param)


def ident(term_name: str) -> str:
    return "MT_" + re.sub(r"[^A-Z0-9]+", "_", term_name.upper())


def stub_source(include_first: str = "") -> str:
    """An engine stub that reads every entry of every table, each weighted by its place, and
    sums the tapered packed total of a material count."""
    body = []
    for t, term in enumerate(TERMS):
        k = 1000 * (t + 1)
        if term.labels:
            body.append(f"    for (i = 0; i < {len(term.labels)}; i++) sum += mix({ident(term.name)}[i], {k} + i);")
        else:
            body.append(f"    sum += mix({ident(term.name)}, {k});")
    return (f"#include <stdio.h>\n#include <stdint.h>\n{include_first}#include \"eval_weights.h\"\n\n"
            "static int64_t mix(int32_t s, int64_t k) { return k * (3 * (int64_t)MT_MG(s) + 5 * (int64_t)MT_EG(s)); }\n\n"
            "int main(void)\n{\n    int64_t sum = 0;\n    int32_t total = 0;\n    int i;\n"
            + "\n".join(body) + "\n"
            "    for (i = 0; i < 5; i++) total += (i + 1) * MT_MATERIAL[i];\n"
            "    printf(\"%lld %d %d %d\\n\", (long long)sum, (int)MT_TAPER_PACKED(total, 10), "
            "(int)MT_PHASE_WEIGHTS[4], MT_PHASE_MAX);\n    return 0;\n}\n")


def python_checksum(w: Weights) -> list[int]:
    """What the stub prints, from the weights by feature name."""
    v = {name: int(w.values[i]) for name, i in FEATURE_INDEX.items()}
    total = 0
    for t, term in enumerate(TERMS):
        names = [f".{label}" for label in term.labels] or [""]
        for i, suffix in enumerate(names):
            total += (1000 * (t + 1) + i) * (3 * v[f"mg.{term.name}{suffix}"] + 5 * v[f"eg.{term.name}{suffix}"])
    mg = sum((i + 1) * v[f"mg.material.{p}"] for i, p in enumerate(PIECE_NAMES[:5]))
    eg = sum((i + 1) * v[f"eg.material.{p}"] for i, p in enumerate(PIECE_NAMES[:5]))
    n = mg * 10 + eg * 14
    tapered = abs(n) // 24 * (1 if n >= 0 else -1)  # C's division truncates towards zero
    return [total, tapered, 4, 24]


@pytest.mark.skipif(CC is None, reason="no C compiler (gcc or cc) on this machine")
@pytest.mark.parametrize("own_s", [False, True], ids=["header-S", "engine-S"])
def test_an_engine_stub_using_every_table_prints_the_python_checksum(weights: Weights, own_s: bool,
                                                                     tmp_path: Path) -> None:
    assert CC is not None
    (tmp_path / "eval_weights.h").write_text(export(weights, "c-packed"))
    (tmp_path / "engine.c").write_text(stub_source(ETHEREAL_S if own_s else ""))
    build = subprocess.run([CC, "-std=c99", "-pedantic", *STRICT, "-o", "engine", "engine.c"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr[:4000]
    printed = subprocess.run([str(tmp_path / "engine")], capture_output=True, text=True, check=True).stdout.split()
    assert [int(x) for x in printed] == python_checksum(weights)


@pytest.mark.skipif(CC is None, reason="no C compiler (gcc or cc) on this machine")
def test_the_packed_header_alone_compiles_as_c_and_cpp(tmp_path: Path) -> None:
    (tmp_path / "eval_weights.h").write_text(export(load_weights("gm"), "c-packed"))
    compilers = [(CC, ["-x", "c", "-std=c99", "-pedantic"])] + ([(CXX, ["-x", "c++", "-std=c++17"])] if CXX else [])
    for compiler, lang in compilers:
        build = subprocess.run([str(compiler), *lang, *STRICT, "-c", "-o", "o.o", "eval_weights.h"],
                               capture_output=True, text=True, cwd=tmp_path)
        assert build.returncode == 0, build.stderr[:4000]


def test_the_tables_follow_the_catalogue_as_texel_tuners_print_them() -> None:
    text = export(load_weights("classic"), "c-packed")
    assert "#ifndef S\n#define S(mg, eg) ((int32_t)((uint32_t)(int32_t)(eg) << 16) + (int32_t)(mg))\n#endif" in text
    positions = [text.index(f"{ident(term.name)}{'[' if term.labels else ' '}") for term in TERMS]
    assert positions == sorted(positions)  # catalogue order
    w = load_weights("classic").by_name()
    assert f"S({w['mg.material.pawn']:4d}, {w['eg.material.pawn']:4d})" in text
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if "MT_PST_KNIGHT[64]" in line)
    rank1, rank8 = lines[k + 1], lines[k + 8]
    assert rank1.endswith("/* rank 1 */") and rank8.endswith("/* rank 8 */")
    cells = re.findall(r"S\(\s*(-?\d+),\s*(-?\d+)\)", rank1)
    assert [(int(a), int(b)) for a, b in cells] == [(w[f"mg.pst.knight.{f}1"], w[f"eg.pst.knight.{f}1"]) for f in "abcdefgh"]


def test_weights_beyond_a_packed_half_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = load_weights("classic").values.copy()
    values[FEATURE_INDEX["eg.mobility.queen.27"]] = -40000
    save_weights(tmp_path / "big.json", Weights(values, {"name": "big"}))
    assert tuner_main(["export", str(tmp_path / "big.json"), "--format", "c-packed", "--out", str(tmp_path / "o.h")]) == 2
    err = capsys.readouterr().err
    assert err == ("tuner export: error: c-packed: weight eg.mobility.queen.27 = -40000 does not fit a packed half "
                   "(-32767..32767); export these weights with --format c\n")
    assert not (tmp_path / "o.h").exists()
