"""Hostile input (issue 45): every string that reaches generated code is escaped, and every bad
file or value a command is given is refused in one line (exit code 2, no traceback).

Each case is named after what it sends. Small files are made in ``tmp_path``; large ones are
generated there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from search.weights import Weights, load_weights, save_weights
from search.weights_text import comment_text
from tuner.cli import main as tuner_main
from tuner.export.formats import export
from tests.conftest import without_compile_note

CC = shutil.which("gcc") or shutil.which("cc")
RUSTC = shutil.which("rustc")
#: -trigraphs: a trigraph such as ??/ (a backslash) must not reach the header either
C_FLAGS = ["-std=c99", "-pedantic", "-trigraphs", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c"]

# ------------------------------------------------------------------ injection into exports

HOSTILE_NAMES = {
    "comment-end-include": "*/ #include </etc/passwd>",
    "newline-directive": "x\n#error injected\n",
    "carriage-return": "x\r#error injected",
    "quote-backslash": 'a "b" \\',
    "trailing-backslash": "ends in a splice \\",
    "trigraph": "??/\n#error after a trigraph splice",
    "comment-open": "/* nested",
    "non-ascii": "\u00e9l\u00e8ve \u2028 \u0000 \x7f",
    "rust-doc": "x\n}\npub fn injected() {}\n//",
}


def _hostile_weights(name: str, description: str = "") -> Weights:
    return Weights(load_weights("classic").values, {"name": name, "description": description})


@pytest.mark.parametrize("case", sorted(HOSTILE_NAMES))
@pytest.mark.parametrize("fmt", ["c", "c-packed", "rust", "text"])
def test_a_hostile_name_is_one_escaped_comment_line(case: str, fmt: str) -> None:
    name = HOSTILE_NAMES[case]
    text = export(_hostile_weights(name), fmt)
    benign = export(_hostile_weights("plain"), fmt)
    first, rest = text.split("\n", 1)
    def body(t: str) -> list[str]:  # the text view's metadata line holds the name as JSON
        return [line for line in t.split("\n")[1:] if not line.startswith("metadata = ")]
    assert body(text) == body(benign)  # nothing but the heading changed: no line injected
    heading = first.split(": ", 1)[1]
    assert heading == comment_text(name) and json.loads(heading) == name  # the exact name, quoted
    assert first.isascii() and first.isprintable()
    assert not any(bad in heading for bad in ("*/", "/*", "??")) and not heading.endswith("\\")


def test_plain_names_stay_as_they_are() -> None:
    for name in ("classic", "my-run", "results/x.json", "gm (2024-05-01, 403,104 positions)"):
        assert comment_text(name) == name


def test_the_text_view_of_a_hostile_name_reads_back_the_same_weights_and_metadata(tmp_path: Path) -> None:
    w = _hostile_weights("\n[mg.material]\npawn 1\n", "x\ny")
    (tmp_path / "w.txt").write_text(export(w, "text"))
    back = load_weights(tmp_path / "w.txt")
    assert (back.values == w.values).all() and back.metadata == w.metadata


@pytest.mark.skipif(CC is None, reason="no C compiler (gcc or cc) on this machine")
@pytest.mark.parametrize("fmt", ["c", "c-packed"])
def test_c_exports_of_hostile_names_compile(fmt: str, tmp_path: Path) -> None:
    for case, name in sorted(HOSTILE_NAMES.items()):
        header = tmp_path / f"{case}.h"
        header.write_text(export(_hostile_weights(name), fmt), encoding="utf-8")
        build = subprocess.run([str(CC), *C_FLAGS, str(header)], capture_output=True, text=True)
        assert build.returncode == 0, (case, build.stderr[:2000])


@pytest.mark.skipif(RUSTC is None, reason="no Rust compiler (rustc) on this machine")
def test_rust_exports_of_hostile_names_compile(tmp_path: Path) -> None:
    source = tmp_path / "lib.rs"
    for case, name in sorted(HOSTILE_NAMES.items()):
        module = export(_hostile_weights(name), "rust").replace("//!", "//", -1)  # inner docs: crate root only
        source.write_text(f"#![allow(dead_code)]\nmod weights {{\n{module}}}\n", encoding="utf-8")
        build = subprocess.run([str(RUSTC), "--edition", "2021", "--crate-type", "lib", "--emit", "metadata",
                                "-o", str(tmp_path / "lib.rmeta"), str(source)], capture_output=True, text=True)
        assert build.returncode == 0, (case, build.stderr[:2000])
        assert "fn injected" not in source.read_text().split("//")[0]


def test_a_hostile_network_name_and_description_are_escaped() -> None:
    from search.network import FloatNetwork, NetworkShape, quantize  # noqa: PLC0415
    from tuner.export.network_c import to_c_network  # noqa: PLC0415

    q = quantize(FloatNetwork.initial(NetworkShape(h=32, h2=16, h3=8), seed=1))
    benign = to_c_network(replace(q, metadata={"name": "n", "description": "d"}))
    for name in HOSTILE_NAMES.values():
        header = to_c_network(replace(q, metadata={"name": name, "description": name}))
        assert len(header.splitlines()) == len(benign.splitlines())
        assert header.splitlines()[0] == f"/* movetuner network: {comment_text(name)}"
        assert f" * {comment_text(name)}" in header.splitlines()


@pytest.mark.skipif(CC is None, reason="no C compiler (gcc or cc) on this machine")
def test_the_cli_export_of_a_hostile_file_name_compiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "evil */\n#include <stdio.h>\n.json"
    save_weights(spec, Weights(load_weights("classic").values, {}))
    out = tmp_path / "w.h"
    assert tuner_main(["export", str(spec), "--format", "c", "--out", str(out)]) == 0
    assert out.read_text().splitlines()[0] == f"/* movetuner evaluation weights: {comment_text(spec.name)}"
    build = subprocess.run([str(CC), *C_FLAGS, str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[:2000]


# ------------------------------------------------------------------ the command line's refusals


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``tuner ARGV`` in this process; assert exit code 2 and exactly one line on standard
    error (compile notes aside), without a traceback; return that line."""
    code = tuner_main(argv)
    err = without_compile_note(capsys.readouterr().err).strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def sample_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "set"
    assert tuner_main(["ingest", "--sample", "--out", str(out), "--workers", "1"]) == 0
    return out


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("fmt", ["json", "c", "text"])
def test_export_never_writes_over_its_input(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = tmp_path / "W.txt"
    assert tuner_main(["export", "classic", "--format", "text", "--out", str(w)]) == 0
    before = w.read_bytes()
    for extra in ([], ["--overwrite"]):
        err = refused(["export", str(w), "--format", fmt, "--out", str(w), *extra], capsys)
        assert f"{w}: --out names an input of the command" in err
    (tmp_path / "link.txt").symlink_to(w)
    refused(["export", str(tmp_path / "link.txt"), "--format", fmt, "--out", str(w), "--overwrite"], capsys)
    assert w.read_bytes() == before


def test_export_refuses_an_existing_out_without_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval.h"
    out.write_text("my own header\n")
    assert refused(["export", "classic", "--format", "c", "--out", str(out)], capsys) == \
        f"tuner export: error: {out}: exists; pass --overwrite to replace it"
    assert out.read_text() == "my own header\n"
    assert tuner_main(["export", "classic", "--format", "c", "--out", str(out), "--overwrite"]) == 0
    assert out.read_text().startswith("/* movetuner evaluation weights: classic\n")
    assert [p.name for p in tmp_path.iterdir()] == ["eval.h"]  # no temporary file left beside it


def test_a_network_export_never_writes_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from search.weights import BUILTIN_DIR  # noqa: PLC0415

    net = tmp_path / "n.mtnn"
    net.write_bytes((BUILTIN_DIR / "gm-nn.mtnn").read_bytes())
    refused(["export", str(net), "--format", "mtnn", "--out", str(net), "--overwrite"], capsys)
    assert net.read_bytes() == (BUILTIN_DIR / "gm-nn.mtnn").read_bytes()


def test_bench_match_refuses_an_existing_pgn_before_playing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pgn = tmp_path / "games.pgn"
    pgn.write_text("[Event \"mine\"]\n\n*\n")
    err = refused(["bench", "match", "classic", "material", "--games", "2", "--depth", "1", "--workers", "1",
                   "--out", str(pgn)], capsys)
    assert err == f"tuner bench: error: {pgn}: exists; pass --overwrite to replace it"
    assert pgn.read_text() == "[Event \"mine\"]\n\n*\n"
    weights = tmp_path / "w.json"
    save_weights(weights, load_weights("classic"))
    refused(["bench", "match", str(weights), "material", "--games", "2", "--depth", "1", "--out", str(weights),
             "--overwrite"], capsys)


def test_bench_epd_refuses_an_existing_json_and_its_own_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "s.epd"
    suite.write_text('4k3/8/8/8/8/8/8/4K2R w K - 0 1 bm O-O; id "castle";\n')
    out = tmp_path / "answers.json"
    out.write_text("{}\n")
    assert refused(["bench", "epd", str(suite), "--weights", "classic", "--depth", "1", "--out", str(out)],
                   capsys).endswith(f"{out}: exists; pass --overwrite to replace it")
    refused(["bench", "epd", str(suite), "--weights", "classic", "--depth", "1", "--out", str(suite), "--overwrite"],
            capsys)
    assert out.read_text() == "{}\n" and suite.read_text().startswith("4k3/")


def test_an_ingest_that_keeps_no_position_leaves_the_old_set(sample_set: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    illegal = tmp_path / "illegal.pgn"
    illegal.write_text('[Event "x"]\n[Result "1-0"]\n\n1. e4 e5 2. Ke3 1-0\n')
    before = _tree(sample_set)
    err = refused(["ingest", str(illegal), "--out", str(sample_set), "--workers", "1"], capsys)
    assert err == (f"tuner ingest: error: {illegal}: no position kept (1 game(s) or line(s) read, 1 rejected; first "
                   f"problem at line 4: illegal_move); {sample_set} was left as it was")
    err = refused(["ingest", "--sample", "--out", str(sample_set), "--min-elo", "4000", "--missing-elo", "drop",
                   "--workers", "1"], capsys)
    assert "no position kept" in err
    assert _tree(sample_set) == before
