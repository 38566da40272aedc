"""Hostile input (issue 45): every string that reaches generated code is escaped, and every bad
file or value a command is given is refused in one line (exit code 2, no traceback).

Each case is named after what it sends. Small files are made in ``tmp_path``; large ones are
generated there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from search.params.weights import Weights, load_weights, save_weights
from search.params.weights_text import comment_text
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
    from search.evaluation.network import FloatNetwork, NetworkShape, quantize  # noqa: PLC0415
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


def test_an_out_that_is_a_device_or_pipe_is_refused_even_with_overwrite(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The probe's ``tuner export classic --out /dev/full --overwrite`` renamed its temporary file
    over the device, which left /dev/full a regular file (and a later test that writes to it a
    file, not a full disk); a FIFO, or a link to /dev/null, is refused as a device is."""
    import os  # noqa: PLC0415
    import stat  # noqa: PLC0415

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    for out in (fifo, link):
        err = refused(["export", "classic", "--format", "json", "--out", str(out), "--overwrite"], capsys)
        assert err == (f"tuner export: error: {out}: not a regular file (a device, pipe or socket); --out names the "
                       "file to write (- for standard output)")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null", "pipe"]


def test_a_network_export_never_writes_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from search.params.weights import BUILTIN_DIR  # noqa: PLC0415

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
    err = refused(["ingest", str(illegal), "--out", str(sample_set), "--workers", "1", "--overwrite"], capsys)
    assert err == (f"tuner ingest: error: {illegal}: no position kept (1 game(s) read, 1 rejected; first "
                   f"problem at line 4: illegal_move); {sample_set} was left as it was")
    err = refused(["ingest", "--sample", "--out", str(sample_set), "--min-elo", "4000", "--missing-elo", "drop",
                   "--workers", "1", "--overwrite"], capsys)
    assert "no position kept" in err
    assert _tree(sample_set) == before


# ------------------------------------------------------------------ values and files that raised a traceback


def _classic_doc() -> dict:  # type: ignore[type-arg]
    return json.loads((Path(__file__).resolve().parents[2] / "search" / "data" / "classic.json").read_text())


def _write_deep_json(path: Path, depth: int = 100_000) -> Path:
    path.write_text('{"schema": "movetuner-weights", "metadata": ' + '{"a": ' * depth + "1" + "}" * depth + "}")
    return path


@pytest.mark.parametrize("argv", [
    ["ingest", "--sample", "--out", "{tmp}/s", "--seed", "-1"],
    ["tune", "--data", "{data}", "--out", "{tmp}/r", "--method", "mmto", "--seed", "-1"],
    ["moves", "train", "--data", "{data}", "--out", "{tmp}/m.json", "--seed", "-1"],
    ["moves", "measure", "--data", "{data}", "--seed", "-1"],
    ["bench", "move-match", "--weights", "classic", "--data", "{data}", "--seed", "-1"],
    ["bench", "compare", "classic", "--data", "{data}", "--games", "0", "--seed", "-5", "--out", "{tmp}/c"],
    ["ingest", "--sample", "--out", "{tmp}/s", "--seed", "99999999999999999999999"],
    ["selfplay", "gm", "--out", "{tmp}/sp", "--seed", "-1"],
], ids=["ingest", "tune", "moves-train", "moves-measure", "move-match", "compare", "huge", "selfplay"])
def test_a_negative_or_huge_seed_is_refused(argv: list[str], sample_set: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    err = refused([a.format(tmp=tmp_path, data=sample_set) for a in argv], capsys)
    assert "seed must be an integer from 0 to 9223372036854775807" in err


def test_a_negative_seed_in_a_tune_configuration_is_refused(sample_set: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text('method = "mmto"\nseed = -1\n')
    assert refused(["tune", "--config", str(config), "--data", str(sample_set), "--out", str(tmp_path / "r")],
                   capsys).endswith(f"{config}: seed must be an integer from 0 to 9223372036854775807, not -1")


@pytest.mark.parametrize("content, message", [
    (bytes(range(256)) * 4, "not valid TOML: not UTF-8 text"),
    (("a = " + "[" * 100_000 + "]" * 100_000 + "\n").encode(), "not valid TOML: arrays or tables nested too deeply"),
], ids=["binary", "deep"])
@pytest.mark.parametrize("command", ["tune", "ingest", "selfplay"])
def test_a_configuration_that_is_not_toml_is_refused(command: str, content: bytes, message: str, sample_set: Path,
                                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_bytes(content)
    rest = {"tune": ["--data", str(sample_set)], "ingest": ["--sample"], "selfplay": ["gm"]}[command]
    assert refused([command, "--config", str(config), *rest, "--out", str(tmp_path / "o")], capsys).endswith(
        f"{config}: {message}")


WEIGHT_COMMANDS = {
    "export": ["export", "{w}"],
    "eval": ["eval", "startpos", "--weights", "{w}"],
    "tune": ["tune", "--data", "{data}", "--out", "{tmp}/r", "--method", "mmto", "--start", "{w}"],
    "match": ["bench", "match", "{w}", "classic", "--games", "2", "--depth", "1", "--out", "{tmp}/g.pgn"],
    "move-match": ["bench", "move-match", "--weights", "{w}", "--data", "{data}"],
    "selfplay": ["selfplay", "{w}", "--out", "{tmp}/sp", "--games", "2"],
}


def _bad_weights(kind: str, tmp_path: Path) -> tuple[Path, str]:
    """A weights file of ``kind`` and what its refusal says."""
    doc = _classic_doc()
    path = tmp_path / f"{kind}.json"
    if kind == "deep-object":
        return _write_deep_json(path), "JSON nested deeper than 64 levels at line 1 column"
    if kind == "deep-array":
        path.write_text("[" * 100_000 + "]" * 100_000)
        return path, "JSON nested deeper than 64 levels at line 1 column 65"
    if kind == "beyond-range":
        doc["weights"]["mg.material.pawn"] = 300_000
        path.write_text(json.dumps(doc))
        return path, "weight 'mg.material.pawn' = 300000 is beyond the evaluator's limit +-262144"
    if kind == "many-digits":
        path.write_text(re.sub(r'"mg.material.pawn": -?\d+', '"mg.material.pawn": ' + "9" * 5000, json.dumps(doc)))
        return path, "a number with too many digits"
    if kind == "text-beyond-range":
        path = tmp_path / "w.txt"
        text = export(load_weights("classic"), "text")
        path.write_text(re.sub(r"(?m)^mg\.pawns\.doubled = .*$", "mg.pawns.doubled = -262145", text))
        return path, "mg.pawns.doubled = -262145 is beyond the evaluator's limit +-262144"
    if kind == "too-large":
        with path.open("wb") as fh:
            fh.truncate((64 << 20) + 1)  # sparse: nothing written to the disk
        return path, "larger than 64 MB, too large for this kind of file"
    raise AssertionError(kind)


@pytest.mark.parametrize("command", sorted(WEIGHT_COMMANDS))
@pytest.mark.parametrize("kind", ["deep-object", "deep-array", "beyond-range", "many-digits", "text-beyond-range",
                                  "too-large"])
def test_bad_weights_are_refused_by_every_command(kind: str, command: str, sample_set: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path, message = _bad_weights(kind, tmp_path)
    err = refused([a.format(w=path, tmp=tmp_path, data=sample_set) for a in WEIGHT_COMMANDS[command]], capsys)
    assert str(path) in err and message in err


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_dev_zero_as_weights_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(["export", "/dev/zero"], capsys) == \
        "tuner export: error: /dev/zero: not a regular file: a character device"


def test_a_deep_move_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write_deep_json(tmp_path / "model.json")
    assert "JSON nested deeper than 64 levels" in refused(["moves", "predict", "startpos", "--model", str(path)], capsys)


def test_a_missing_pls_model_is_refused_before_training(sample_set: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.json"
    assert refused(["tune", "--data", str(sample_set), "--out", str(tmp_path / "r"), "--method", "mmto",
                    "--pls-threshold", "0.03125", "--pls-model", str(missing)], capsys) == \
        f"tuner tune: error: {missing}: no such move-model file"
    assert not (tmp_path / "r").exists()


def _network_with(tmp_path: Path, name: str, header: dict | None = None,  # type: ignore[type-arg]
                  patch: tuple[int, bytes] | None = None) -> Path:
    """The built-in network with its header's keys replaced by ``header`` and bytes ``patch``
    (offset from the end of its arrays, bytes) written over, its CRC made right again."""
    import struct  # noqa: PLC0415
    import zlib  # noqa: PLC0415

    from search.params.weights import BUILTIN_DIR  # noqa: PLC0415

    data = (BUILTIN_DIR / "gm-nn.mtnn").read_bytes()
    version, head_len = struct.unpack("<II", data[4:12])
    head = json.loads(data[12:12 + head_len])
    rest = bytearray(data[12 + head_len:-4])
    if patch is not None:
        offset, raw = patch
        rest[len(rest) - offset:len(rest) - offset + len(raw)] = raw
    new_head = json.dumps({**head, **(header or {})}).encode()
    body = data[:4] + struct.pack("<II", version, len(new_head)) + new_head + bytes(rest)
    path = tmp_path / f"{name}.mtnn"
    path.write_bytes(body + struct.pack("<I", zlib.crc32(body)))
    return path


def _bad_network(kind: str, tmp_path: Path) -> tuple[Path, str]:
    import struct  # noqa: PLC0415

    from search.params.catalog import N_FEATURES  # noqa: PLC0415

    linear_bytes = 4 * N_FEATURES  # the built-in network is a hybrid: its linear weights come last
    cases: dict[str, tuple[dict | None, tuple[int, bytes] | None, str]] = {  # type: ignore[type-arg]
        "linear-not-object": ({"linear": "x"}, None, "the header's linear must be null or an object, not str"),
        "metadata-list": ({"metadata": [1, 2]}, None, "the header's metadata must be an object, not list"),
        "metadata-string": ({"metadata": "abc"}, None, "the header's metadata must be an object, not str"),
        "deep-header": ({"metadata": json.loads("{\"a\": " * 70 + "1" + "}" * 70)}, None,
                        "header: JSON nested deeper than 64 levels"),
        "linear-2.1e9": (None, (linear_bytes, struct.pack("<i", 2_100_000_000)),
                         "a linear weight = 2100000000 is beyond the evaluator's limit +-262144"),
        "b4-huge": (None, (linear_bytes + 8, struct.pack("<q", 2**62)), "array b4 holds 4611686018427387904, beyond"),
    }
    header, patch, message = cases[kind]
    return _network_with(tmp_path, kind, header, patch), message


@pytest.mark.parametrize("command", ["export", "eval"])
@pytest.mark.parametrize("kind", ["linear-not-object", "metadata-list", "metadata-string", "deep-header",
                                  "linear-2.1e9", "b4-huge"])
def test_a_malformed_network_file_is_refused(kind: str, command: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path, message = _bad_network(kind, tmp_path)
    argv = ["export", str(path)] if command == "export" else ["eval", "startpos", "--weights", str(path)]
    err = refused(argv, capsys)
    assert str(path) in err and message in err


def _tuner_process(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os  # noqa: PLC0415
    import sys  # noqa: PLC0415

    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-m", "tuner", *argv], capture_output=True, text=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root), **(env or {})}, timeout=300)


@pytest.mark.parametrize("how", ["--terms", "environment"])
@pytest.mark.parametrize("kind", ["builtin-group", "garbage", "name-with-newline"])
def test_a_bad_term_plugin_is_one_line(kind: str, how: str, tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "rook_behind_passer.py"
    path = tmp_path / "terms.py"
    source = example.read_text()
    if kind == "builtin-group":
        source, message = re.sub(r'(?m)^GROUP = .*$', 'GROUP = "material"', source), \
            "GROUP 'material' is a built-in group; choose another name"
    elif kind == "name-with-newline":
        source, message = re.sub(r'(?m)^NAME = .*$', 'NAME = "x\\\\n"', source), "NAME must be a name of letters"
    else:
        source, message = "garbage\n", "importing the plug-in failed: NameError: name 'garbage' is not defined"
    path.write_text(source)
    argv = ["eval", "startpos", "--weights", "classic"]
    proc = _tuner_process(["--terms", str(path), *argv] if how == "--terms" else argv,
                          None if how == "--terms" else {"MOVETUNER_TERMS": str(path)})
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0] == f"tuner: error: {path}: {message}" or (message in lines[0] and str(path) in lines[0])


@pytest.mark.parametrize("command", ["move-match", "tune"])
def test_a_deep_manifest_is_refused(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d"
    data.mkdir()
    _write_deep_json(data / "manifest.json")
    argv = (["bench", "move-match", "--weights", "classic", "--data", str(data)] if command == "move-match" else
            ["tune", "--method", "mmto", "--data", str(data), "--out", str(tmp_path / "r")])
    assert f"{data / 'manifest.json'}: JSON nested deeper than 64 levels" in refused(argv, capsys)


# ------------------------------------------------------------------ resume


def test_resume_refuses_a_rebuilt_data_set_and_names_an_ignored_out(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import SAMPLE_PGN  # noqa: PLC0415

    data, run, other = tmp_path / "d", tmp_path / "run", tmp_path / "other"
    assert tuner_main(["ingest", "--sample", "--out", str(data), "--workers", "1"]) == 0
    sha = json.loads((data / "manifest.json").read_text())["inputs"][0]["sha256"]
    fast = ["--max-train", "300", "--max-validation", "100", "--inner-steps", "2", "--quiet"]
    assert tuner_main(["tune", "--method", "mmto", "--data", str(data), "--out", str(run), "--iterations", "1",
                       *fast]) == 0
    recorded = json.loads((run / "data.json").read_text())
    assert recorded["inputs"] == [{"name": "famous-games.pgn", "sha256": sha}]
    capsys.readouterr()

    # --out with --resume is ignored, and the resume says so
    assert tuner_main(["tune", "--resume", str(run), "--iterations", "2", "--out", str(other), "--quiet"]) == 0
    err = without_compile_note(capsys.readouterr().err).strip()
    assert err == (f"tuner tune: note: --out {other} is ignored: a resumed run writes into its own folder, {run}")
    assert not other.exists() and load_weights(run / "weights.json").metadata["iteration"] == 2

    # the set rebuilt from other games: the resume is refused, the run left as it was
    fewer = tmp_path / "fewer.pgn"
    fewer.write_text(SAMPLE_PGN.read_text(encoding="utf-8").split("\n\n[Event ")[0] + "\n")
    assert tuner_main(["ingest", str(fewer), "--out", str(data), "--workers", "1", "--overwrite"]) == 0
    capsys.readouterr()
    before = (run / "state.json").read_bytes()
    new_sha = json.loads((data / "manifest.json").read_text())["inputs"][0]["sha256"]
    assert refused(["tune", "--resume", str(run), "--iterations", "3", "--quiet"], capsys) == (
        f"tuner tune: error: {data}: not the position set {run} started on (its inputs were famous-games.pgn "
        f"{sha[:12]}, now fewer.pgn {new_sha[:12]} (name, SHA-256)); resume with the set it started on, or "
        "start a new run")
    # the same games with another split seed are another set too
    assert tuner_main(["ingest", "--sample", "--out", str(data), "--workers", "1", "--seed", "7", "--overwrite"]) == 0
    capsys.readouterr()
    assert "its ingest setting seed was 0, now 7" in refused(["tune", "--resume", str(run), "--iterations", "3"], capsys)
    assert (run / "state.json").read_bytes() == before
    # rebuilt as it was: the resume continues
    assert tuner_main(["ingest", "--sample", "--out", str(data), "--workers", "1", "--overwrite"]) == 0
    assert tuner_main(["tune", "--resume", str(run), "--iterations", "3", "--quiet"]) == 0
    assert load_weights(run / "weights.json").metadata["iteration"] == 3


@pytest.mark.parametrize("name", ["state.json", "metrics.jsonl", "weights.json"])
def test_a_deep_checkpoint_or_metrics_line_is_refused_on_resume(name: str, sample_set: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.toml").write_text(f'method = "mmto"\ndata = "{sample_set}"\nout = "{run}"\n')
    _write_deep_json(run / "state.json")
    if name == "metrics.jsonl":
        (run / "state.json").unlink()
        (run / "metrics.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n" + '{"iteration": 0}\n')
    if name == "weights.json":  # the checkpoint lost: the weights' iteration tells whether work would be lost
        (run / "state.json").rename(run / "weights.json")
    err = refused(["tune", "--resume", str(run)], capsys)
    assert f"{run / name}" in err or f"{run / 'state.json'}: missing, but weights.json" in err


# ------------------------------------------------------------------ wrong answers: line numbers


FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


@pytest.mark.parametrize("long_at_end", [False, True], ids=["long-line-inside", "long-line-last"])
def test_a_position_line_over_a_megabyte_is_one_rejected_line(long_at_end: bool, tmp_path: Path) -> None:
    import io  # noqa: PLC0415

    from tuner.ingest import ingest  # noqa: PLC0415
    from tuner.ingest.sources import MAX_LINE_BYTES  # noqa: PLC0415

    long_line = f"{FEN} [0.5] " + "x" * (MAX_LINE_BYTES + 500_000)
    lines = [f"{FEN} [0.5]", "4k3/8/8/8/8/8/8/4K2R w K - 0 1 [1.0]", long_line, "not a position",
             "4k3/8/8/8/8/8/8/3QK3 w - - 0 1 [1.0]"]
    if long_at_end:
        lines = [line for line in lines if line is not long_line] + [long_line]
    path = tmp_path / "long.epd"
    path.write_text("\n".join(lines) + ("" if long_at_end else "\n"))
    log = io.StringIO()
    manifest = ingest([path], tmp_path / "set", workers=1, progress=False, log=log)
    assert manifest["lines"]["read"] == 5 and manifest["lines"]["kept"] == 3
    assert manifest["lines"]["rejected_by_reason"] == {"bad_fen": 1, "line_too_long": 1}
    long_no, bad_no = (lines.index(long_line) + 1, lines.index("not a position") + 1)
    printed = log.getvalue()
    assert f"{path}:{long_no}: line_too_long: more than {MAX_LINE_BYTES} bytes; skipped" in printed
    assert f"{path}:{bad_no}: bad_fen" in printed


def test_epd_suite_lines_are_numbered_by_newlines_only(tmp_path: Path) -> None:
    from tuner.arena.epd import parse_epd  # noqa: PLC0415

    epd = "4k3/8/8/8/8/8/8/4K2R w K -"
    path = tmp_path / "s.epd"
    long_id = "y" * 1_500_000
    path.write_text(f'{epd} bm O-O; id "form\x0cfeed \u2028 separator";\r\nnot a position\n{epd} bm O-O; id "{long_id}";\n')
    positions, problems = parse_epd(path)
    assert [p.line for p in positions] == [1, 3] and [p.line for p in problems] == [2]


def test_an_epd_suite_larger_than_the_limit_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.arena.epd import MAX_EPD_BYTES  # noqa: PLC0415

    path = tmp_path / "huge.epd"
    with path.open("wb") as fh:
        fh.truncate(MAX_EPD_BYTES + 1)
    assert refused(["bench", "epd", str(path), "--weights", "classic", "--depth", "1"], capsys) == \
        f"tuner bench: error: {path}: larger than 64 MB, too large for this kind of file"


# ------------------------------------------------------------------ siblings found by trying


INPUT_FILE_COMMANDS = {
    "tune-config": ["tune", "--config", "{f}", "--data", "{data}", "--out", "{tmp}/r"],
    "ingest-config": ["ingest", "--config", "{f}", "--sample", "--out", "{tmp}/s"],
    "openings": ["bench", "match", "classic", "material", "--games", "2", "--depth", "1", "--openings", "{f}",
                 "--out", "{tmp}/g.pgn"],
    "epd-suite": ["bench", "epd", "{f}", "--weights", "classic", "--depth", "1"],
    "move-model": ["moves", "predict", "startpos", "--model", "{f}"],
}


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
@pytest.mark.parametrize("name", sorted(INPUT_FILE_COMMANDS))
def test_dev_zero_as_any_input_file_is_one_line(name: str, sample_set: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.format(f="/dev/zero", data=sample_set, tmp=tmp_path) for a in INPUT_FILE_COMMANDS[name]]
    err = refused(argv, capsys)
    assert err.endswith("/dev/zero: not a regular file: a character device") or \
        err.endswith("/dev/zero: cannot read (not a regular file: a character device)")


#: every command reading a file as an input, the file as {f} (or {w})
FIFO_COMMANDS = {**INPUT_FILE_COMMANDS, **{f"weights-{c}": a for c, a in WEIGHT_COMMANDS.items()},
                 "ingest": ["ingest", "{f}", "--out", "{tmp}/d"],
                 # probe findings (issue 58 re-run): these two waited for a writer for ever
                 "openings-from-pgn": ["bench", "openings", "--from-pgn", "{f}", "--out", "{tmp}/o.epd", "--count", "2",
                                       "--depth", "1"],
                 "openings-from-book": ["bench", "openings", "--from-book", "{f}", "--out", "{tmp}/o.epd", "--count",
                                        "2", "--depth", "1"]}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("name", sorted(FIFO_COMMANDS))
def test_a_fifo_with_no_writer_as_any_input_is_refused_not_waited_on(name: str, sample_set: Path,
                                                                     tmp_path: Path) -> None:
    # issue 58 item 10: opening a FIFO with no writer blocked for ever; a hang fails by the timeout
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    argv = [a.format(f=fifo, w=fifo, data=sample_set, tmp=tmp_path) for a in FIFO_COMMANDS[name]]
    r = subprocess.run([sys.executable, "-m", "tuner", *argv],
                       capture_output=True, text=True, timeout=300)
    err = without_compile_note(r.stderr).strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"{fifo}: " in err and "not a regular file: a FIFO" in err


SPLIT_COMMANDS = {
    "convert": ["convert", "{set}", "{tmp}/c", "--to", "compact"],
    "merge": ["merge", "{set}", "{data}", "--out", "{tmp}/m", "--no-progress"],
    "move-match": ["bench", "move-match", "--weights", "material", "--data", "{set}", "--split", "train",
                   "--max-positions", "10", "--threads", "1"],
    "convert-file": ["convert", "{set}/train.parquet", "{tmp}/c.mtpos"],
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("name", sorted(SPLIT_COMMANDS))
def test_a_fifo_as_a_split_file_of_a_position_set_is_refused_not_waited_on(name: str, sample_set: Path,
                                                                           tmp_path: Path) -> None:
    """Probe finding (issue 58 re-run): ``tuner convert`` of a set whose train.parquet is a FIFO
    waited for ever in polars."""
    bad = tmp_path / "set"
    shutil.copytree(sample_set, bad)
    (bad / "train.parquet").unlink()
    os.mkfifo(bad / "train.parquet")
    argv = [a.format(set=bad, data=sample_set, tmp=tmp_path) for a in SPLIT_COMMANDS[name]]
    r = subprocess.run([sys.executable, "-m", "tuner", *argv], capture_output=True, text=True, timeout=300)
    err = without_compile_note(r.stderr).strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.endswith(f"{bad / 'train.parquet'}: not a regular file: a FIFO"), err


def test_perft_refuses_a_depth_beyond_the_search(capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(["perft", "startpos", "99999"], capsys) == \
        "tuner perft: error: depth must be from 0 to 64 (the search's deepest ply), not 99999"


def test_tune_refuses_its_position_set_as_the_run_folder(sample_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _tree(sample_set)
    assert refused(["tune", "--method", "mmto", "--data", str(sample_set), "--out", f"{sample_set}/"], capsys) == \
        f"tuner tune: error: {sample_set}/: --out names the position set of --data; a run needs a folder of its own"
    assert _tree(sample_set) == before


def test_a_hostile_weights_file_name_stays_inside_its_pgn_tag(tmp_path: Path) -> None:
    import chess.pgn  # noqa: PLC0415

    weights = tmp_path / 'ev"il\n[Result "0-1"]\\.json'
    save_weights(weights, load_weights("classic"))
    pgn = tmp_path / "games.pgn"
    assert tuner_main(["bench", "match", str(weights), "material", "--games", "2", "--depth", "1", "--workers", "1",
                       "--out", str(pgn)]) == 0
    tags = [line for line in pgn.read_text().splitlines() if line.startswith("[")]
    assert all(re.fullmatch(r'\[[A-Za-z]+ "([^"\\]|\\.)*"\]', t) for t in tags), tags
    assert sum(t.startswith("[Result ") for t in tags) == 2  # one per game: none injected
    white = next(t for t in tags if t.startswith("[White "))
    assert white == '[White "' + str(weights).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"]'
    with pgn.open() as fh:
        games = [chess.pgn.read_game(fh), chess.pgn.read_game(fh)]
    assert all(g is not None and not g.errors and g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)


@pytest.mark.parametrize("argv", [["export", "{bad}"], ["eval", "startpos", "--weights", "{bad}"],
                                  ["ingest", "{bad}", "--out", "{tmp}/s"]], ids=["export", "eval", "ingest"])
def test_an_error_naming_a_file_with_a_line_break_is_one_line(argv: list[str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "no\nsuch\r.json"
    err = refused([a.format(bad=bad, tmp=tmp_path) for a in argv], capsys)
    assert str(bad).replace("\r", "\\r").replace("\n", "\\n") in err


@pytest.mark.parametrize("argv, message", [
    (["bench", "move-match", "--weights", "classic", "--data", "{data}", "--threads", "1000000"],
     "--threads must be from 0 (all cores) to"),
    (["bench", "move-match", "--weights", "classic", "--data", "{data}", "--depth", "1000"],
     "--depth must be between 1 and 63, not 1000"),
    (["bench", "compare", "classic", "--data", "{data}", "--games", "0", "--threads", "1000000", "--out", "{tmp}/c"],
     "--threads must be from 0 (all cores) to"),
    (["bench", "compare", "classic", "--data", "{data}", "--games", "0", "--move-match-depth", "99", "--out", "{tmp}/c"],
     "--move-match-depth must be between 1 and 63, not 99"),
], ids=["move-match-threads", "move-match-depth", "compare-threads", "compare-depth"])
def test_sweep_options_beyond_the_kernels_are_one_line(argv: list[str], message: str, sample_set: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert message in refused([a.format(data=sample_set, tmp=tmp_path) for a in argv], capsys)


@pytest.mark.parametrize("limit, message", [
    (["--nodes", "99999999999999999999"], "nodes must be between 1 and 4611686018427387904"),
    (["--movetime", "99999999999999999999"], "movetime must be between 1 and 2147483647 ms"),
], ids=["nodes", "movetime"])
def test_a_move_limit_beyond_the_search_is_one_line(limit: list[str], message: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(["bench", "match", "classic", "material", "--games", "2", *limit, "--out", str(tmp_path / "g.pgn")],
                  capsys)
    assert message in err and not (tmp_path / "g.pgn").exists()


@pytest.mark.parametrize("argv, message", [
    (["ingest", "--sample", "--out", "{tmp}/s", "--workers", "99999999999999999999"],
     "workers must be from 0 (one per core) to 1024, not 99999999999999999999"),
    (["tune", "--data", "{data}", "--out", "{tmp}/r", "--method", "ga", "--population", "99999999999999999999"],
     "population must be at most 10000, not 99999999999999999999"),
    (["tune", "--data", "{data}", "--out", "{tmp}/r", "--method", "mmto", "--iterations", "1", "--step", "1000000000",
      "--max-train", "200", "--max-validation", "50", "--inner-steps", "1", "--quiet"],
     "mmto: a grid step of 1000000000 took a weight to"),
    (["tune", "--data", "{data}", "--out", "{tmp}/r", "--method", "ga", "--mutation-sigma", "1e300"],
     "mutation_sigma must be at most the evaluator's limit 262144, not 1e+300"),
], ids=["ingest-workers", "ga-population", "mmto-step", "ga-sigma"])
def test_huge_counts_and_steps_are_one_line(argv: list[str], message: str, sample_set: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert message in refused([a.format(data=sample_set, tmp=tmp_path) for a in argv], capsys)


def test_bench_plot_leaves_out_metric_values_that_are_not_numbers(tmp_path: Path) -> None:
    from tuner.arena.plots import plot_metrics  # noqa: PLC0415

    records = [{"iteration": 0, "j": [1, 2], "match_validation": {"a": 1}, "best_validation": "x"},
               {"iteration": 1, "j": 2.5, "match_validation": 0.3, "best_validation": True}]
    out = plot_metrics(records, "mmto", tmp_path / "m.png", "hostile")  # raised TypeError: unhashable type
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_position_set_with_null_fens_is_one_line(sample_set: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import polars as pl  # noqa: PLC0415

    data = tmp_path / "d"
    shutil.copytree(sample_set, data)
    frame = pl.read_parquet(data / "test.parquet")
    frame.with_columns(pl.when(pl.arange(0, frame.height) >= 3).then(pl.col("fen")).otherwise(None).alias("fen")) \
        .write_parquet(data / "test.parquet")
    assert refused(["bench", "move-match", "--weights", "classic", "--data", str(data)], capsys) == (
        f"tuner bench: error: {data / 'test.parquet'}: column fen is null in 3 row(s), the first at row 0; "
        "rebuild the set with tuner ingest")  # was AttributeError: 'NoneType' object has no attribute 'encode'


def test_moves_train_never_writes_over_its_position_set(sample_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _tree(sample_set)
    for name in ("manifest.json", "train.parquet"):
        err = refused(["moves", "train", "--data", str(sample_set), "--out", str(sample_set / name), "--overwrite"],
                      capsys)
        assert err == (f"tuner moves: error: {sample_set / name}: --out names an input of the command "
                       f"({sample_set / name}); write to another file")
    assert _tree(sample_set) == before  # the manifest was replaced by a move model


def test_tune_overwrite_refuses_a_start_file_it_would_delete(sample_set: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    save_weights(run / "weights.json", load_weights("classic"))
    before = (run / "weights.json").read_bytes()
    err = refused(["tune", "--method", "mmto", "--data", str(sample_set), "--out", str(run), "--start",
                   str(run / "weights.json"), "--overwrite", "--iterations", "0", "--quiet"], capsys)
    assert err.endswith(f"is a file of the run --overwrite replaces in {run}; copy it elsewhere first, or choose "
                        "another --out")
    assert (run / "weights.json").read_bytes() == before


# ------------------------------------------------------------------ bench compare and bench plot outputs


def _no_temporary_files(folder: Path) -> bool:
    return not any(p.name.startswith(".") and p.name.endswith(".tmp") for p in folder.rglob("*"))


def test_bench_compare_refuses_the_data_folder_as_its_out(sample_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _tree(sample_set)
    message = refused(["bench", "compare", "classic", "material", "--data", str(sample_set), "--max-positions", "20",
                       "--games", "0", "--out", str(sample_set)], capsys)
    assert message.endswith("is the --data position set; --out names another folder")
    assert _tree(sample_set) == before


def test_bench_compare_refuses_existing_outputs_without_overwrite(sample_set: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp"
    quick = ["bench", "compare", "classic", "material", "--data", str(sample_set), "--max-positions", "20",
             "--threads", "1", "--out", str(out)]
    assert tuner_main([*quick, "--games", "0"]) == 0
    capsys.readouterr()
    before = _tree(out)
    assert refused([*quick, "--games", "0"], capsys) == \
        f"tuner bench: error: {out / 'compare.json'}: exists; pass --overwrite to replace it (or choose another --out)"
    (out / "compare.json").unlink()
    assert "compare.png: exists" in refused([*quick, "--games", "0"], capsys)
    (out / "compare.json").write_bytes(before["compare.json"])
    assert _tree(out) == before
    games = out / "games"
    games.mkdir()
    (games / "mine.pgn").write_text("[Event \"mine\"]\n\n*\n")
    (out / "compare.json").unlink()
    (out / "compare.png").unlink()
    assert refused([*quick, "--games", "2", "--depth", "1"], capsys).endswith(  # before any game is played
        f"{games / 'mine.pgn'}: exists; pass --overwrite to replace it (or choose another --out)")
    assert [p.name for p in out.iterdir()] == ["games"]
    for bad in ([*quick[:-1], str(games / "mine.pgn"), "--games", "0"],):
        assert "is not a folder; --out names the folder to write into" in refused(bad, capsys)
    assert tuner_main([*quick, "--games", "0", "--overwrite"]) == 0
    assert (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and _no_temporary_files(out)


def test_bench_plot_refuses_existing_pngs_without_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    save_weights(run / "weights.json", Weights(load_weights("classic").values, {"method": "texel"}))
    (run / "config.toml").write_text('method = "texel"\nstart = "classic"\n')
    (run / "metrics.jsonl").write_text("".join(json.dumps({"iteration": i, "loss": 0.1 / (i + 1)}) + "\n"
                                               for i in range(3)))
    plots = run / "plots"
    plots.mkdir()
    (plots / "pst.png").write_bytes(b"mine")
    assert refused(["bench", "plot", str(run)], capsys) == \
        f"tuner bench: error: {plots / 'pst.png'}: exists; pass --overwrite to replace it (or choose another --out)"
    assert (plots / "pst.png").read_bytes() == b"mine" and not (plots / "metrics.png").exists()
    other = tmp_path / "elsewhere"
    assert tuner_main(["bench", "plot", str(run), "--out", str(other)]) == 0
    assert sorted(p.name for p in other.iterdir()) == ["metrics.png", "pst.png"]
    assert "is not a folder" in refused(["bench", "plot", str(run), "--out", str(run / "weights.json")], capsys)
    assert tuner_main(["bench", "plot", str(run), "--overwrite"]) == 0
    assert (plots / "pst.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and _no_temporary_files(plots)


# ------------------------------------------------------------------ usage errors: one line, not argparse's usage block


@pytest.mark.parametrize("argv, line", [
    (["tune", "--bogus"], "tuner tune: error: unrecognized arguments: --bogus"),
    (["tune", "--method", "texel", "--lam", "x"], "tuner tune: error: argument --lam: "),
    (["tune", "--data"], "tuner tune: error: argument --data: expected one argument"),
    (["bench", "match", "classic", "material", "--games", "x"], "tuner bench match: error: argument --games: "),
    (["bench", "plot"], "tuner bench plot: error: the following arguments are required: RUN"),
    (["moves", "train"], "tuner moves train: error: the following arguments are required: --data, --out"),
    (["frob"], "tuner: error: argument COMMAND: invalid choice: 'frob'"),
    (["export", "classic", "--format", "cobol"], "tuner export: error: argument --format"),
    (["selfplay", "gm", "--games", "1e3"], "tuner selfplay: error: argument --games: "),
    (["tune", "--x\n\x1b[31mtuner:\u2028fake"], "tuner tune: error: unrecognized arguments: "
                                                 "--x\\n\\x1b[31mtuner:\\u2028fake"),
], ids=["unknown-option", "bad-float", "missing-value", "subcommand-bad-int", "missing-positional", "missing-required",
        "unknown-command", "bad-choice", "selfplay-bad-int", "control-characters"])
def test_a_usage_error_is_one_line_naming_the_command_and_option(argv: list[str], line: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(argv, capsys)
    command = line.split(": error: ")[0]
    assert err.startswith(line) and err.endswith(f"({command} --help lists the options)"), err
    assert "usage:" not in err and err.isprintable()


def test_help_still_prints_the_usage_block(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        tuner_main(["bench", "match", "--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("usage: tuner bench match [-h]")


# ------------------------------------------------------------------ move-model weights beyond the limit


def _move_model_with(tmp_path: Path, value: float | str) -> Path:
    from search.pls.move_model import BUILTIN_MOVE_MODELS  # noqa: PLC0415

    text = BUILTIN_MOVE_MODELS["gm"].read_text()
    path = tmp_path / "model.json"
    path.write_text(re.sub(r'"castle\.king_side": [-0-9.e]+', f'"castle.king_side": {value}', text, count=1))
    return path


@pytest.mark.parametrize("value, message", [
    ("1e300", "feature 'castle.king_side' = 1e+300 is beyond the move model's limit +-10000 (log-odds)"),
    ("-10000.5", "feature 'castle.king_side' = -10000.5 is beyond the move model's limit +-10000 (log-odds)"),
    ("1e400", "feature 'castle.king_side' is inf, not a finite number"),
    ("NaN", "feature 'castle.king_side' is nan, not a finite number"),
    ("-Infinity", "feature 'castle.king_side' is -inf, not a finite number"),
], ids=["huge", "just-beyond", "overflow", "nan", "minus-infinity"])
@pytest.mark.parametrize("command", ["predict", "epd", "tune"])
def test_a_move_model_beyond_the_limit_is_refused(value: str, message: str, command: str, sample_set: Path,
                                                  tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _move_model_with(tmp_path, value)
    suite = tmp_path / "s.epd"
    suite.write_text('4k3/8/8/8/8/8/8/4K2R w K - bm O-O; id "castle";\n')
    argv = {"predict": ["moves", "predict", "startpos", "--model", str(model)],
            "epd": ["bench", "epd", str(suite), "--weights", "classic", "--depth", "1", "--search", "pls",
                    "--move-model", str(model)],
            "tune": ["tune", "--method", "mmto", "--data", str(sample_set), "--out", str(tmp_path / "r"),
                     "--pls-threshold", "0.03125", "--pls-model", str(model)]}[command]
    assert refused(argv, capsys).endswith(f"{model}: {message}")
    assert not (tmp_path / "r").exists()


def test_the_limit_itself_is_a_usable_move_model(tmp_path: Path) -> None:
    from search.core.convert import from_fen  # noqa: PLC0415
    from search.pls.move_model import MAX_ABS_MOVE_WEIGHT, MoveModel, load_move_model, predict  # noqa: PLC0415

    model = load_move_model(_move_model_with(tmp_path, str(-MAX_ABS_MOVE_WEIGHT)))
    board = from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    moves = dict(predict(board, model))
    assert all(0.0 <= p <= 1.0 for p in moves.values()) and moves.get("e1g1", 0.0) < 1e-9
    with pytest.raises(ValueError, match="beyond the limit"):
        MoveModel(model.weights * 2)


# ------------------------------------------------------------------ position sets with values outside their columns' domain


def _set_with(sample_set: Path, tmp_path: Path, column: str, value: object, rows: tuple[int, ...] = (5, 9)) -> Path:
    """A copy of the sample set whose test split holds ``value`` in ``column`` at ``rows``."""
    import polars as pl  # noqa: PLC0415

    from tuner.ingest.schema import SCHEMA  # noqa: PLC0415

    data = tmp_path / "d"
    shutil.copytree(sample_set, data)
    frame = pl.read_parquet(data / "test.parquet")
    hit = pl.int_range(0, frame.height).is_in(list(rows))
    frame.with_columns(pl.when(hit).then(pl.lit(value, dtype=SCHEMA[column])).otherwise(pl.col(column)).alias(column)) \
        .write_parquet(data / "test.parquet")
    return data


@pytest.mark.parametrize("column, value, what", [
    ("stm", 7, "0 (White to move) or 1 (Black)"),
    ("stm", -1, "0 (White to move) or 1 (Black)"),
    ("result", "2-0", "1-0, 0-1, 1/2-1/2 or *"),
    ("result", "5", "1-0, 0-1, 1/2-1/2 or *"),
    ("result", "1-0\n\x1b[2J", "1-0, 0-1, 1/2-1/2 or *"),
    ("ply", -3, "a ply from 0"),
], ids=["stm-7", "stm-negative", "result-2-0", "result-5", "result-control", "ply-negative"])
@pytest.mark.parametrize("command", ["move-match", "texel"])
def test_a_position_set_with_a_bad_value_is_one_line(column: str, value: object, what: str, command: str,
                                                      sample_set: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = _set_with(sample_set, tmp_path, column, value)
    argv = (["bench", "move-match", "--weights", "classic", "--data", str(data)] if command == "move-match" else
            ["tune", "--method", "texel", "--data", str(data), "--out", str(tmp_path / "r"), "--epochs", "1",
             "--max-train", "200", "--max-validation", "50", "--quiet"])
    if command == "texel":  # the bad rows in the split the run reads first
        (data / "test.parquet").rename(data / "t"), (data / "train.parquet").rename(data / "test.parquet")
        (data / "t").rename(data / "train.parquet")
    err = refused(argv, capsys)
    split = "test" if command == "move-match" else "train"
    from tuner.errors import one_line  # noqa: PLC0415

    assert f"{data / f'{split}.parquet'}: column {column} holds {one_line(repr(value))} at row 5 (2 bad row(s)); " \
           f"it must be {what}; rebuild the set with tuner ingest" in err, err


def test_a_side_to_move_that_contradicts_the_fen_is_one_line(sample_set: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import polars as pl  # noqa: PLC0415

    data = tmp_path / "d"
    shutil.copytree(sample_set, data)
    frame = pl.read_parquet(data / "test.parquet")
    frame.with_columns(pl.when(pl.int_range(0, frame.height) == 4).then(1 - pl.col("stm")).otherwise(pl.col("stm"))
                       .alias("stm")).write_parquet(data / "test.parquet")
    row = frame.row(4, named=True)
    err = refused(["bench", "move-match", "--weights", "classic", "--data", str(data)], capsys)
    side = "White" if row["stm"] == 0 else "Black"
    assert err.endswith(f"{data / 'test.parquet'}: game {row['game_id']} ply {row['ply']}: column stm is "
                        f"{1 - row['stm']} but its FEN has {side} to move (1 such row(s)); rebuild the set with "
                        "tuner ingest"), err


# ------------------------------------------------------------------ file names and contents that would forge log lines

FORGING_NAME = "evil\n\x1b[31mtuner ingest: error: forged\r\u2028.pgn"


def test_ingest_problem_lines_escape_a_hostile_file_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import SAMPLE_PGN  # noqa: PLC0415

    from tuner.errors import one_line  # noqa: PLC0415

    evil = tmp_path / FORGING_NAME
    evil.write_text('[Event "x"]\n[Result "1-0"]\n\n1. e4 e5 2. Ke3 1-0\n')
    out = tmp_path / "o\nwrote elsewhere"
    assert tuner_main(["ingest", str(SAMPLE_PGN), str(evil), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    captured = capsys.readouterr()
    err = without_compile_note(captured.err).strip().splitlines()
    assert err == [f"{one_line(evil)}:4: illegal_move: ply 2: illegal san: 'Ke3' in "
                   "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"], err
    assert "\\x1b[31mtuner ingest: error: forged\\r\\u2028.pgn:4" in err[0]
    assert captured.out.splitlines()[-1].startswith(f"wrote {str(tmp_path)}/o\\nwrote elsewhere in ")
    # the refusal of a set it keeps nothing of names the file escaped too
    line = refused(["ingest", str(evil), "--out", str(tmp_path / "none"), "--workers", "1", "--no-progress"], capsys)
    assert line.startswith(f"tuner ingest: error: {one_line(evil)}: no position kept")


def test_epd_skipped_lines_escape_their_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "s\x1b]0;title\x07.epd"
    suite.write_text('4k3/8/8/8/8/8/8/4K2R w K - bm O-O; id "castle";\n'
                     'not a position \x1b[2J\x1b[H tuner bench: forged\u2028line\n')
    assert tuner_main(["bench", "epd", str(suite), "--weights", "classic", "--depth", "1", "--workers", "1"]) == 0
    captured = capsys.readouterr()
    err = without_compile_note(captured.err).strip().splitlines()
    assert len(err) == 1 and err[0].startswith("skipped ") and err[0].isprintable(), err
    assert err[0].startswith(f"skipped {tmp_path}/s\\x1b]0;title\\x07.epd:2: cannot parse: ") and "\\x1b[2J" in err[0], err
    assert all(line.isprintable() for line in captured.out.splitlines())


def test_one_line_escapes_what_forges_and_keeps_the_rest() -> None:
    from tuner.errors import one_line  # noqa: PLC0415

    assert one_line("plain/path é ± ünïcode.pgn") == "plain/path é ± ünïcode.pgn"
    assert one_line("a\nb\r\tc\x00\x1b[0m\x7f\x85\u2028\u2029\u202e\udcff") == \
        "a\\nb\\r\\tc\\x00\\x1b[0m\\x7f\\x85\\u2028\\u2029\\u202e\\udcff"


# ------------------------------------------------------------------ tune: odd values of the newest options


@pytest.mark.parametrize("extra, message", [
    (["--lam", "-1"], "lam must be between 0 and 1, not -1.0"),
    (["--lam", "nan"], "lam must be a finite number, not nan"),
    (["--lam", "1e400"], "lam must be a finite number, not inf"),
    (["--score-cap", "-5"], "score_cap must be positive, not -5"),
    (["--score-cap", "inf"], "argument --score-cap: "),
    (["--k", "1e300"], "k must be at most 1 per centipawn (the usual K is near 0.005), not 1e+300"),
    (["--k", "nan"], "k must be a finite number, not nan"),
    (["--steps", "99999999999999999999"], "steps must be at most 1,000,000 an epoch, not 99999999999999999999"),
    (["--budget", "99999999999999999999"], "budget must be from 1 to 4611686018427387904, not 99999999999999999999"),
    (["--executor", "dask", "--workers", "99999999999999999999"], "workers must be from 0 (one per core) to 1024"),
    (["--verify", "3"], "--verify takes an even number of games from 0 to 100,000, not 3"),
    (["--verify", "-2"], "--verify takes an even number of games from 0 to 100,000, not -2"),
    (["--verify", "99999999999999999998"], "--verify takes an even number of games from 0 to 100,000, not 9999"),
], ids=["lam-negative", "lam-nan", "lam-overflow", "score-cap-negative", "score-cap-inf", "k-huge", "k-nan",
        "steps-huge", "budget-huge", "dask-workers-huge", "verify-odd", "verify-negative", "verify-huge"])
def test_odd_texel_and_tune_values_are_one_line(extra: list[str], message: str, sample_set: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(["tune", "--method", "texel", "--data", str(sample_set), "--out", str(tmp_path / "r"),
                   "--epochs", "1", "--quiet", *extra], capsys)
    assert message in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("extra", [["--start", "classic", "--l2-start", "1e300"], ["--k", "0.01", "--l2", "1e300", "--l2-on", "material"]],
                         ids=["l2-start-huge", "l2-huge"])
def test_a_diverging_texel_run_is_one_line(extra: list[str], sample_set: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Was ``ValueError: cannot store NaN or infinite values`` (the optimizer's moments
    overflowed) after numpy's overflow warnings."""
    run = tmp_path / "r"
    err = refused(["tune", "--method", "texel", "--data", str(sample_set), "--out", str(run), "--epochs", "2",
                   "--max-train", "300", "--max-validation", "50", "--quiet", *extra], capsys)
    assert "became NaN or infinite" in err and "lower --lr or the regularisation strengths" in err, err
    state = json.loads((run / "state.json").read_text())
    assert len((run / "metrics.jsonl").read_text().splitlines()) == state["iteration"] + 1  # the diverged epoch in neither


# ------------------------------------------------------------------ selfplay: odd values, engines that fail, its own folder


@pytest.mark.parametrize("extra, message", [
    (["--games", "99999999999999999999"], "games must be from 1 to 1,000,000, not 99999999999999999999"),
    (["--start-tries", "99999", "--start-margin", "0"], "start_tries must be at most 10,000"),
    (["--random-plies", "5000"], "random_plies at most 1,000"),
], ids=["games-huge", "start-tries-huge", "random-plies-huge"])
def test_selfplay_counts_that_would_hang_are_one_line(extra: list[str], message: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Were a run that never started (a million futures made up front) or a start drawn for ever."""
    assert message in refused(["selfplay", "gm", "--out", str(tmp_path / "sp"), "--nodes", "100", *extra], capsys)
    assert not (tmp_path / "sp").exists()


def test_selfplay_with_an_engine_that_cannot_start_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was ``BrokenProcessPool`` and the workers' tracebacks."""
    missing = tmp_path / "no-engine"
    assert refused(["selfplay", "--engine", str(missing), "--out", str(tmp_path / "sp"), "--games", "2", "--nodes",
                    "100"], capsys) == \
        f"tuner selfplay: error: engine '{missing}': cannot start '{missing}' (No such file or directory)"
    assert not (tmp_path / "sp").exists()


@pytest.mark.parametrize("inside", ["", "train.parquet", "games/x.txt"], ids=["the-folder", "a-set-file", "deeper"])
def test_selfplay_refuses_an_export_into_its_own_folder_before_playing(inside: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sp"
    export = out / inside if inside else out
    err = refused(["selfplay", "gm", "--out", str(out), "--games", "2", "--nodes", "100", "--export", str(export),
                   "--overwrite"], capsys)
    assert err == (f"tuner selfplay: error: {export}: --export names the self-play folder {out} or a file in it "
                   "(which --overwrite clears); write it elsewhere")
    assert not out.exists()  # refused before a game was played


def test_a_selfplay_worker_that_dies_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import concurrent.futures.process  # noqa: PLC0415

    def broken(*args: object, **kwargs: object) -> int:
        raise concurrent.futures.process.BrokenProcessPool("A process in the process pool was terminated abruptly")

    original = concurrent.futures.Future.result
    monkeypatch.setattr(concurrent.futures.Future, "result", lambda self, timeout=None: broken())
    try:
        err = refused(["selfplay", "gm", "--out", str(tmp_path / "sp"), "--games", "2", "--nodes", "100",
                       "--workers", "1", "--no-progress"], capsys)
    finally:
        monkeypatch.setattr(concurrent.futures.Future, "result", original)
    assert err == (f"tuner selfplay: error: a self-play worker process ended abruptly (0 games saved in "
                   f"{tmp_path / 'sp'}; --resume goes on)")


@pytest.fixture(scope="module")
def selfplay_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("selfplay") / "sp"
    assert tuner_main(["selfplay", "gm", "--out", str(out), "--games", "2", "--nodes", "100", "--workers", "1",
                       "--no-progress"]) == 0
    return out


def test_a_resumed_selfplay_run_takes_its_own_settings(selfplay_folder: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``--resume --games N`` alone goes on with the settings the run was started with (it was
    refused for every option left at its default, e.g. the seed); an option given that differs
    is still refused."""
    out = tmp_path / "sp"
    shutil.copytree(selfplay_folder, out)
    assert "other settings (nodes)" in refused(["selfplay", "gm", "--out", str(out), "--resume", "--games", "3",
                                                "--nodes", "200", "--no-progress"], capsys)
    assert tuner_main(["selfplay", "gm", "--out", str(out), "--resume", "--games", "3", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "3 games" in printed and "1 games played now" in printed, printed
    config = json.loads((out / "selfplay.json").read_text())["config"]
    assert (config["games"], config["nodes"], config["workers"]) == (3, 100, 1)


@pytest.mark.parametrize("damage, message", [
    ("settings-deep", "selfplay.json: JSON nested deeper than 64 levels at line 1 column 65"),
    ("part-deep", "part-00000.json: JSON nested deeper than 64 levels at line 1 column 65; remove it and its "
                  ".parquet to replay its games"),
    ("part-games-not-a-list", "part-00000.json: not a readable self-play part (TypeError: "),
    ("part-summary-without-result", "part-00000.json: not a readable self-play part (TypeError: a game's result is "
                                    "None)"),
    ("part-result-2-0", "part-00000.json: not a readable self-play part (ValueError: game 0: a value out of range)"),
    ("part-game-1e30", "part-00000.json: not a readable self-play part (ValueError: game 10000000000000000000000000"
                       "00000: a value out of range)"),
], ids=["settings-deep", "part-deep", "part-games-not-a-list", "part-summary-without-result", "part-result-2-0",
        "part-game-1e30"])
def test_a_damaged_selfplay_folder_is_one_line_on_resume(damage: str, message: str, selfplay_folder: Path,
                                                         tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Were RecursionError and KeyError tracebacks."""
    out = tmp_path / "sp"
    shutil.copytree(selfplay_folder, out)
    part = out / "games" / "part-00000.json"
    deep = "[" * 100_000 + "]" * 100_000
    summary = json.loads(part.read_text())["games"][0]
    text = {"settings-deep": deep, "part-deep": deep, "part-games-not-a-list": '{"games": 5}',
            "part-summary-without-result": json.dumps({"games": [{**summary, "result": None}]}),
            "part-result-2-0": json.dumps({"games": [{**summary, "game": 0, "result": "2-0"}]}),
            # probe finding (issue 58 re-run): a game numbered past any run was counted as played
            "part-game-1e30": json.dumps({"games": [{**summary, "game": 10**30}]})}[damage]
    (out / "selfplay.json" if damage == "settings-deep" else part).write_text(text)
    err = refused(["selfplay", "gm", "--out", str(out), "--resume", "--games", "4", "--nodes", "100", "--workers", "1",
                   "--no-progress"], capsys)
    assert message in err, err


@pytest.mark.parametrize("argv", [
    ["bench", "epd", "{suite}", "--weights", "classic", "--depth", "1", "--workers", "99999999999999999999"],
    ["bench", "compare", "classic", "--data", "{data}", "--games", "0", "--workers", "99999999999999999999",
     "--out", "{tmp}/c"],
], ids=["epd", "compare"])
def test_a_huge_worker_count_is_one_line(argv: list[str], sample_set: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Was ``OverflowError: Python int too large to convert to C int`` from the process pool."""
    suite = tmp_path / "s.epd"
    suite.write_text('4k3/8/8/8/8/8/8/4K2R w K - bm O-O; id "castle";\n')
    assert refused([a.format(suite=suite, data=sample_set, tmp=tmp_path) for a in argv], capsys).endswith(
        "workers must be from 0 (one per core) to 1024, not 99999999999999999999")


def test_a_last_selfplay_part_that_cannot_be_written_stops_the_pool_and_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Probe finding (issue 58 re-run): a self-play folder whose part could not be written when
    the last games were saved (after the loop: a damaged games/ folder on --resume) left the
    pool running; the interpreter's exit then printed an ``OSError: [Errno 9] Bad file
    descriptor`` traceback from the pool's feeder thread after the error line."""
    import tuner.selfplay.run as run  # noqa: PLC0415

    stopped: list[object] = []
    original_stop = run._stop_pool
    monkeypatch.setattr(run, "_stop_pool", lambda pool: (stopped.append(pool), original_stop(pool)))

    def close(self: run.Recorder) -> None:
        raise OSError(21, "Is a directory", str(tmp_path / "sp" / "games" / ".part-00000.parquet.tmp"))

    monkeypatch.setattr(run.Recorder, "close", close)
    err = refused(["selfplay", "material", "--out", str(tmp_path / "sp"), "--games", "2", "--nodes", "60",
                   "--workers", "1", "--max-plies", "20", "--no-progress"], capsys)
    assert err.endswith(".part-00000.parquet.tmp: Is a directory"), err
    assert len(stopped) == 1
    assert not any(p.is_alive() for p in (getattr(stopped[0], "_processes", None) or {}).values())
