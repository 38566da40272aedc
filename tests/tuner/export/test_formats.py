"""Exports: the C header compiles and indexes correctly, the Rust module type-checks, JSON loads
back, and the text view round-trips to the same weights with one-line errors when damaged."""

from __future__ import annotations

import re
import shutil
import subprocess

import chess
import numpy as np
import pytest

from search.params.catalog import CATALOG_HASH, FEATURE_INDEX, N_FEATURES, PHASE_MAX
from search.params.weights import CatalogMigrationWarning, Weights, load_weights, save_weights
from search.params.weights_base import MAX_ABS_WEIGHT
from search.params.weights_text import TextFormatError, parse_text, tables, to_text
from tuner.cli import main as tuner_main
from tuner.export.formats import export, to_c, to_rust
from tests.conftest import REPO, without_compile_note


def random_weights(seed: int) -> Weights:
    rng = np.random.default_rng(seed)
    values = rng.integers(-5000, 5000, size=N_FEATURES).astype(np.int32)
    values[:3] = (MAX_ABS_WEIGHT, -MAX_ABS_WEIGHT, 0)  # the extremes a weights file may hold survive every format
    return Weights(values, {"name": "random", "seed": seed, "note": "has # and = and \"quotes\""})


@pytest.fixture(scope="module", params=["classic", "material", "gm", "random"])
def weights(request: pytest.FixtureRequest) -> Weights:
    return random_weights(7) if request.param == "random" else load_weights(request.param)


def test_tables_cover_the_catalogue_exactly_once() -> None:
    indices = sorted(i for t in tables() for i in t.indices)
    assert indices == list(range(N_FEATURES))
    idents = [t.ident for t in tables()]
    assert len(set(idents)) == len(idents)


def test_text_round_trips(weights: Weights) -> None:
    text = to_text(weights)
    back = parse_text(text)
    assert np.array_equal(back.values, weights.values)
    assert back.metadata == weights.metadata
    assert f"catalog_hash = {CATALOG_HASH}" in text and f"({'mg_sum * phase'}" in text


def test_text_shows_pst_as_grid_with_rank_8_on_top() -> None:
    w = load_weights("classic")
    lines = to_text(w).splitlines()
    k = lines.index("[mg.pst.knight]")
    rows = lines[k + 2:k + 10]
    assert [r.split()[0] for r in rows] == ["8", "7", "6", "5", "4", "3", "2", "1"]
    c3 = int(rows[8 - 3].split()[1 + 2])  # rank 3, file c
    assert c3 == w.values[FEATURE_INDEX["mg.pst.knight.c3"]]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("[mg.pst.knight]", "[mg.pst.unicorn]"), "unknown table"),
    (lambda t: t.replace("catalog_hash = ", "catalog_hash = 0"), "catalogue"),
    (lambda t: re.sub(r"\npawn +-?\d+", "\npawn 1e3", t, count=1), "must be an integer"),
    (lambda t: t.replace("mg.pawns.doubled = ", "mg.pawns.doubled = 1\nmg.pawns.doubled = "), "given twice"),
    (lambda t: "\n".join(line for line in t.splitlines() if not line.startswith("eg.pieces.tempo")), "no values for"),
    (lambda t: "\n".join(line for line in t.splitlines() if not line.startswith("4 ")), "expected row"),
    (lambda t: t.replace("\n1 ", "\n1 0 ", 1), "needs 8 values"),
    (lambda t: t.replace("metadata = {", "metadata = [", 1), "metadata"),
])
def test_text_errors_are_one_line_with_line_numbers(edit, message: str) -> None:  # type: ignore[no-untyped-def]
    text = edit(to_text(load_weights("classic")))
    with pytest.raises(TextFormatError) as err:
        parse_text(text, "w.txt")
    text_of = str(err.value)
    assert "\n" not in text_of and message in text_of and text_of.startswith("w.txt: line "), text_of


def test_json_export_loads_back(weights: Weights, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "w.json"
    path.write_text(export(weights, "json"))
    back = load_weights(path)
    assert np.array_equal(back.values, weights.values) and back.metadata == weights.metadata


C_USER = """
#include "weights.h"
int knight_c3_mg(void) { return MT_MG_PST_KNIGHT[18]; }
int queen_eg(void) { return MT_EG_MATERIAL[4]; }
int tapered(int mg, int eg, int phase) { return MT_TAPER(mg, eg, phase); }
"""


CC = shutil.which("gcc") or shutil.which("cc")
#: what an engine's build may ask for; -Wunused-const-variable (=2) warns for every unused static
#: const, in headers too, and only when the file is compiled (not with -fsyntax-only)
STRICT = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wunused-const-variable"]


@pytest.mark.skipif(CC is None, reason="no C compiler (gcc or cc) on this machine")
def test_c_header_compiles_and_indexes(weights: Weights, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert CC is not None
    header = tmp_path / "weights.h"
    header.write_text(to_c(weights))
    (tmp_path / "user.c").write_text(C_USER)
    for source in (["-x", "c", "weights.h"], ["user.c"]):  # the header alone, and a file using three tables
        run = subprocess.run([CC, *STRICT, "-c", "-o", str(tmp_path / "o.o"), *source],
                             capture_output=True, text=True, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
    # compile and run a program printing entries, to check the order (a1..h8) and the values
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include "weights.h"\nint main(void) {\n'
                    '  printf("%d %d %d %d %d\\n", MT_MG_PST_KNIGHT[18], MT_EG_PST_KING[63], '
                    'MT_MG_MATERIAL[4], (int)MT_EG_PAWNS_DOUBLED, MT_PHASE_MAX);\n'
                    '  printf("%d %d\\n", MT_MG_ATTACKS_KNIGHT[3], MT_EG_DEFENDS_KING[0]);\n  return 0;\n}\n')
    exe = tmp_path / "main"
    build = subprocess.run([CC, *STRICT, "-o", str(exe), str(main)], capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    printed = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    v = weights.values
    names = ("mg.pst.knight.c3", "eg.pst.king.h8", "mg.material.queen", "eg.pawns.doubled")
    assert chess.C3 == 18 and chess.H8 == 63
    pairs = ("mg.attacks.knight.rook", "eg.defends.king.pawn")  # [target]: pawn, knight, bishop, rook, queen
    assert printed == [int(v[FEATURE_INDEX[n]]) for n in names] + [PHASE_MAX] + [int(v[FEATURE_INDEX[n]]) for n in pairs]


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
def test_rust_module_type_checks(weights: Weights, tmp_path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "weights.rs"
    source.write_text(to_rust(weights) + "\npub fn knight_c3() -> i32 { MG_PST_KNIGHT[18] + taper(1, 2, 3) }\n")
    run = subprocess.run(["rustc", "--crate-type", "lib", "--emit=metadata", "-D", "warnings",
                          "-o", str(tmp_path / "libweights.rmeta"), str(source)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
def test_rust_module_used_as_a_mod_gives_no_dead_code_warning(weights: Weights, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """issue 58 item 16: a binary with ``mod weights;`` reading one table got 92 dead-code warnings."""
    (tmp_path / "weights.rs").write_text(to_rust(weights))
    (tmp_path / "main.rs").write_text('mod weights;\nfn main() { println!("{}", weights::MG_PST_KNIGHT[18]); }\n')
    run = subprocess.run(["rustc", "--edition", "2021", "-D", "warnings", "-o", str(tmp_path / "main"), "main.rs"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0 and "warning" not in run.stderr, run.stderr
    printed = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, check=True).stdout
    assert int(printed) == int(weights.values[FEATURE_INDEX["mg.pst.knight.c3"]])


def test_every_export_states_hash_tapering_and_the_terms_it_assumes(weights: Weights) -> None:
    fits = bool((np.abs(weights.values) <= 32767).all())  # c-packed holds each weight in 16 bits
    for fmt in ("c", "rust", "text", *(("c-packed",) if fits else ())):
        text = export(weights, fmt)
        assert CATALOG_HASH in text
        assert f"(mg_sum * phase + eg_sum * ({PHASE_MAX} - phase)) / {PHASE_MAX}" in text
        flat = " ".join(re.sub(r"^\W+", "", line) for line in text.splitlines())  # comment markers off
        assert "These weights assume exactly the terms of movetuner's docs/features.md (feature catalogue " \
               f"{CATALOG_HASH}): they are right only for an engine that computes every one of those terms" in flat
        assert "Either implement those terms in your engine, or declare your own terms to movetuner" in flat


def test_exports_are_headed_by_the_weights_name_the_run_folder_or_the_file(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    unnamed = Weights(load_weights("classic").values, {"method": "mmto", "iteration": 3})
    run = tmp_path / "results" / "my-run"
    run.mkdir(parents=True)
    save_weights(run / "weights.json", unnamed)
    save_weights(tmp_path / "my-eval.json", unnamed)
    heads = {"c": "/* movetuner evaluation weights: ", "c-packed": "/* movetuner evaluation weights, packed "
             "S(mg, eg) pairs: ", "rust": "//! movetuner evaluation weights: ", "text": "# movetuner weights text view: "}
    for spec, name in ((run / "weights.json", "my-run"), (tmp_path / "my-eval.json", "my-eval.json"),
                       ("gm", "gm")):
        for fmt, head in heads.items():
            assert tuner_main(["export", str(spec), "--format", fmt]) == 0
            first = capsys.readouterr().out.splitlines()[0]
            assert first == head + name, first
    assert to_c(unnamed).startswith("/* movetuner evaluation weights: unnamed weights\n")  # no file, no name
    assert tuner_main(["export", str(run / "weights.json"), "--format", "text", "--out", str(tmp_path / "v.txt")]) == 0
    assert load_weights(tmp_path / "v.txt").metadata == unnamed.metadata  # the heading is not metadata


def test_cli_text_round_trip_through_files(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    text_file, json_file = tmp_path / "classic.txt", tmp_path / "classic.json"
    assert tuner_main(["export", "classic", "--format", "text", "--out", str(text_file)]) == 0
    assert tuner_main(["export", str(text_file), "--format", "json", "--out", str(json_file)]) == 0
    assert np.array_equal(load_weights(json_file).values, load_weights("classic").values)
    assert np.array_equal(load_weights(text_file).values, load_weights("classic").values)
    text_file.write_text(text_file.read_text().replace("\n8 ", "\n9 ", 1))
    assert tuner_main(["export", str(text_file)]) == 2
    err = without_compile_note(capsys.readouterr().err.strip())
    assert err.startswith("tuner export: error: ") and "line " in err and "\n" not in err


def test_text_lists_attack_and_defence_pairs_by_target() -> None:
    w = random_weights(3)
    lines = to_text(w).splitlines()
    assert "# ======== attacks ========" in lines and "# ======== defends ========" in lines
    k = lines.index("[eg.defends.queen]")
    rows = [line.split() for line in lines[k + 1:k + 6]]
    assert [r[0] for r in rows] == ["pawn", "knight", "bishop", "rook", "queen"]
    assert [int(r[1]) for r in rows] == [int(w.values[FEATURE_INDEX[f"eg.defends.queen.{t}"]])
                                         for t in ("pawn", "knight", "bishop", "rook", "queen")]


#: the text view of classic written before the attacks and defends groups (catalogue 26fcb341cd55f948)
LEGACY_TEXT = REPO / "tests" / "data" / "catalog_26fcb341cd55f948" / "classic.txt"


def test_a_text_view_of_the_earlier_catalogue_reads_back_migrated() -> None:
    with pytest.warns(CatalogMigrationWarning, match="earlier feature catalogue '26fcb341cd55f948'"):
        w = load_weights(LEGACY_TEXT)
    assert np.array_equal(w.values, load_weights("classic").values)  # classic's new terms are 0
    assert w.metadata["migrated_from_catalog"] == "26fcb341cd55f948" and w.metadata["name"] == "classic"
    assert "[mg.attacks.pawn]" not in LEGACY_TEXT.read_text()


def test_a_text_view_of_the_earlier_catalogue_cannot_give_the_new_tables() -> None:
    text = LEGACY_TEXT.read_text() + "\n[mg.attacks.pawn]\npawn 1\nknight 2\nbishop 3\nrook 4\nqueen 5\n"
    with pytest.raises(TextFormatError) as err:
        parse_text(text, "old.txt")
    assert str(err.value).startswith("old.txt: line 9: catalogue '26fcb341cd55f948' has no mg.attacks.pawn")
