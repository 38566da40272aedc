"""The network's C export (tuner/export/network_c.py, tuner/export/c/mtnn_eval.h, docs/network.md): the
header compiles as C99 with every warning an error, and its forward pass gives exactly the
numba kernels' scores on 1,000 positions of the shipped games, from scratch and updated piece
by piece, for both kinds of king buckets, on random networks whose values reach every clamp;
the command line writes it and the binary file, and refuses what it cannot export in one line."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import chess
import numpy as np
import pytest

from search.params.catalog import CATALOG_HASH
from search.core.convert import from_chess
from search.evaluation.evaluators import load_evaluator
from search.evaluation.network import FloatNetwork, NetworkShape, QuantizedNetwork, quantize, read_network, write_network
from search.evaluation.network_kernels import (QA, QB, accumulators_batch_kernel, network_evaluate_batch_kernel,
                                    network_parts_batch_kernel)
from search.params.weights import load_weights
from tuner.cli import main as tuner_main
from tuner.export.network_c import to_c_network

CC = shutil.which("gcc") or shutil.which("cc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (gcc or cc) on this machine")
FLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wunused-const-variable"]
SHAPES = {"none": NetworkShape(h=32, h2=16, h3=8), "4": NetworkShape(h=32, h2=16, h3=8, buckets="4"),
          "direct": NetworkShape(h=32, h2=0, h3=0), "direct-4": NetworkShape(h=32, h2=0, h3=0, buckets="4"),
          "o4": NetworkShape(h=32, h2=16, h3=8, buckets="4", outputs=4),
          "direct-o8": NetworkShape(h=32, h2=0, h3=0, outputs=8)}

#: a program that reads FENs (one a line) and prints, per line, the score from scratch and the
#: score of accumulators carried over from the previous line's position, updated square by
#: square with mtnn_add and mtnn_sub (refreshed when the perspective's king bucket changes), or
#: "error" for a FEN the parser refuses
MAIN_C = r"""
#include <stdio.h>
#include <string.h>
#include "net.h"

static void update(mtnn_accumulators *acc, const mtnn_position *from, const mtnn_position *to)
{
    int persp, sq;
    for (persp = 0; persp < 2; persp++) {
        int bucket = mtnn_bucket(persp, mtnn_king_square(to, persp));
        if (bucket != mtnn_bucket(persp, mtnn_king_square(from, persp))) {
            mtnn_refresh(acc, to, persp);
            continue;
        }
        for (sq = 0; sq < 64; sq++) {
            int a = from->piece[sq], b = to->piece[sq];
            if (a == b)
                continue;
            if (a != MTNN_EMPTY)
                mtnn_sub(acc->v[persp], mtnn_input(persp, a / 6, a % 6, sq, bucket));
            if (b != MTNN_EMPTY)
                mtnn_add(acc->v[persp], mtnn_input(persp, b / 6, b % 6, sq, bucket));
        }
    }
}

int main(void)
{
    char line[512];
    mtnn_position prev, pos;
    mtnn_accumulators acc;
    int have_prev = 0, sq, pieces;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (mtnn_parse_fen(line, &pos) != 0) {
            printf("error\n");
            continue;
        }
        if (have_prev) {
            update(&acc, &prev, &pos);
        } else {
            mtnn_refresh(&acc, &pos, 0);
            mtnn_refresh(&acc, &pos, 1);
        }
        for (sq = 0, pieces = 0; sq < 64; sq++)
            pieces += pos.piece[sq] != MTNN_EMPTY;
        printf("%lld %lld\n", (long long)mtnn_evaluate(&pos), (long long)mtnn_forward(&acc, pos.stm, pieces));
        prev = pos;
        have_prev = 1;
    }
    return 0;
}
"""


def perturbed_network(shape: NetworkShape, seed: int, extreme: bool = False) -> QuantizedNetwork:
    """A random network whose accumulators and hidden sums fall below 0, inside the clipped
    range and above it: the initial network plus noise (``extreme``: every parameter at its
    clamp, random signs), then clamped and quantized."""
    f = FloatNetwork.initial(shape, seed=seed)
    rng = np.random.default_rng(seed + 1000)
    if extreme:
        lim = f.with_vector(f.limits_vector()).params
        params = {k: lim[k] * rng.choice([-1.0, 1.0], size=v.shape) for k, v in f.params.items()}
    else:
        noise = {"w1": 0.15, "b1": 0.6, "w2": 0.25, "b2": 0.6, "w3": 0.4, "b3": 0.6, "w4": 60.0, "b4": 100.0}
        params = {k: v + rng.normal(0.0, noise[k], v.shape) for k, v in f.params.items()}
        params["w1"].flat[rng.integers(0, params["w1"].size, 50)] = 100.0  # beyond the clamp
    return quantize(replace(f, params=params))


def hidden_sums(acc: np.ndarray, stm: np.ndarray, q: QuantizedNetwork) -> tuple[np.ndarray, np.ndarray]:
    """z2 and z3 (docs/network.md) of each position, for checking which clamps are reached."""
    p = {k: v.astype(np.int64) for k, v in q.params.items()}
    own = acc[np.arange(len(acc)), stm]
    other = acc[np.arange(len(acc)), 1 - stm]
    x = np.concatenate([np.clip(own, 0, QA), np.clip(other, 0, QA)], axis=1).astype(np.int64)
    z2 = p["b2"] + x @ p["w2"]
    z3 = p["b3"] + np.minimum(np.maximum(z2, 0) // QB, QA) @ p["w3"]
    return z2, z3


@pytest.fixture(scope="module")
def thousand_boards(real_boards: list[chess.Board]) -> list[chess.Board]:
    boards = real_boards[::3][:1000]
    assert len(boards) == 1000
    return boards


def compile_main(header: str, folder: Path) -> Path:
    assert CC is not None
    (folder / "net.h").write_text(header)
    (folder / "main.c").write_text(MAIN_C)
    exe = folder / "net_main"
    build = subprocess.run([CC, *FLAGS, "-O1", "-o", str(exe), "main.c"], capture_output=True, text=True, cwd=folder)
    assert build.returncode == 0, build.stderr[:4000]
    return exe


def c_scores(exe: Path, fens: list[str]) -> list[str]:
    run = subprocess.run([str(exe)], input="\n".join(fens) + "\n", capture_output=True, text=True, check=True)
    return run.stdout.splitlines()


@needs_cc
@pytest.mark.parametrize("kind", ["noise", "extreme"])
@pytest.mark.parametrize("buckets", list(SHAPES))
def test_the_c_forward_pass_gives_exactly_the_kernels_scores_on_1000_positions(
        buckets: str, kind: str, thousand_boards: list[chess.Board], tmp_path: Path) -> None:
    q = perturbed_network(SHAPES[buckets], seed=11, extreme=kind == "extreme")
    arr = np.stack([from_chess(b) for b in thousand_boards])
    expected = network_evaluate_batch_kernel(arr, q.kernel_args())
    # the positions and the network reach every branch of the arithmetic
    acc = accumulators_batch_kernel(arr, q.kernel_args()).astype(np.int64)
    stm = np.array([0 if b.turn == chess.WHITE else 1 for b in thousand_boards])
    sums = [(acc, QA)]
    if not q.shape.direct:
        z2, z3 = hidden_sums(acc, stm, q)
        sums += [(z2, QA * QB), (z3, QA * QB)]
    for z, top in sums:
        assert (z < 0).any() and (z > top).any(), (kind, int(z.min()), int(z.max()))
    if kind == "noise":
        assert ((acc > 0) & (acc < QA)).any()
        assert q.shape.direct or ((z2 > 0) & (z2 < QA * QB)).any()
        assert len(set(expected.tolist())) > 500 and (expected < 0).any() and (expected > 0).any()
    if q.shape.buckets == "4":
        kings = {(b.king(chess.WHITE), b.king(chess.BLACK)) for b in thousand_boards}
        assert len({SHAPES["4"].bucket_table[w] for w, _ in kings}) >= 3
    if q.shape.outputs > 1:  # the positions use most of the output buckets
        pieces = np.array([len(b.piece_map()) for b in thousand_boards])
        assert len(set(((pieces - 2) * q.shape.outputs // 32).tolist())) >= q.shape.outputs - 2
    exe = compile_main(to_c_network(q, "test"), tmp_path)
    lines = c_scores(exe, [b.fen() for b in thousand_boards])
    got = np.array([[int(v) for v in line.split()] for line in lines])
    assert got.shape == (1000, 2)
    assert np.array_equal(got[:, 0], expected), np.flatnonzero(got[:, 0] != expected)[:5]
    assert np.array_equal(got[:, 1], expected), np.flatnonzero(got[:, 1] != expected)[:5]


@needs_cc
def test_the_c_fen_reader_refuses_malformed_placements(tmp_path: Path) -> None:
    exe = compile_main(to_c_network(perturbed_network(SHAPES["none"], seed=2), None), tmp_path)
    bad = ["", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
           "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",  # no side to move
           "8/8/8/8/8/8/8/8 w - - 0 1",  # no kings
           "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",  # nine on a rank
           "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",  # seven ranks
           "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/8 w KQkq - 0 1",  # nine ranks
           "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",  # not a piece
           "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR wb - - 0 1"]
    good = [chess.STARTING_FEN, "4k3/8/8/8/8/8/8/4K3 b - - 0 1"]
    out = c_scores(exe, bad + good)
    assert out[:len(bad)] == ["error"] * len(bad)
    assert all(line != "error" for line in out[len(bad):])


@needs_cc
def test_a_hybrid_network_exports_its_network_part_and_says_the_linear_terms_must_be_added(
        real_boards: list[chess.Board], tmp_path: Path) -> None:
    f = FloatNetwork.initial(SHAPES["4"], seed=4, linear=load_weights("classic").values)
    q = quantize(f)
    header = to_c_network(q, None)
    assert "#define MTNN_HAS_LINEAR 1" in header and "HYBRID NETWORK" in header and CATALOG_HASH in header
    assert "the linear terms must be added" in header and "docs/features.md" in header
    assert "MT_MG_MATERIAL[5]" in header and "MT_EG_PST_KING[64]" in header
    boards = real_boards[::16]
    arr = np.stack([from_chess(b) for b in boards])
    parts = network_parts_batch_kernel(arr, q.kernel_args())
    assert not np.array_equal(parts, network_evaluate_batch_kernel(arr, q.kernel_args()))
    exe = compile_main(header, tmp_path)
    got = [int(line.split()[0]) for line in c_scores(exe, [b.fen() for b in boards])]
    assert got == parts.tolist()


@needs_cc
def test_a_file_that_includes_the_header_and_uses_nothing_compiles_cleanly(tmp_path: Path) -> None:
    for linear in (None, load_weights("gm").values):
        (tmp_path / "net.h").write_text(to_c_network(quantize(FloatNetwork.initial(SHAPES["none"], seed=1,
                                                                                     linear=linear)), None))
        (tmp_path / "other.c").write_text('#include "net.h"\nint other(void);\nint other(void) { return MTNN_H; }\n')
        for source, extra in (("other.c", []), ("net.h", ["-x", "c"])):
            build = subprocess.run([str(CC), *FLAGS, *extra, "-c", "-o", str(tmp_path / "o.o"), source],
                                   capture_output=True, text=True, cwd=tmp_path)
            assert build.returncode == 0, build.stderr[:4000]


def test_the_header_names_the_network_and_states_its_shape_and_layout() -> None:
    q = perturbed_network(SHAPES["4"], seed=3)
    header = to_c_network(q, "from-the-file.mtnn")
    assert header.startswith("/* movetuner network: from-the-file.mtnn\n")
    named = to_c_network(replace(q, metadata={"name": "gm-nn", "description": "distilled */ then tuned"}), "x")
    assert named.startswith("/* movetuner network: gm-nn\n") and r'"distilled \u002a/ then tuned"' in named
    for line in ("#define MTNN_H 32", "#define MTNN_H2 16", "#define MTNN_H3 8", "#define MTNN_N_BUCKETS 4",
                 "#define MTNN_N_INPUTS 3072", "#define MTNN_QA 255", "#define MTNN_QB 64", "#define MTNN_QO 64",
                 "#define MTNN_PHASE_MAX 24", f'#define MTNN_LAYOUT_HASH "{q.layout_hash()}"',
                 "#define MTNN_HAS_LINEAR 0"):
        assert line in header.splitlines()
    assert "{ /* 1601: bucket 2, own knight b1 */" in header  # ((2 * 2 + 0) * 6 + 1) * 64 + 1


@needs_cc
def test_the_built_in_gm_nn_exports_by_name_and_its_c_pass_gives_the_kernels_network_part(
        thousand_boards: list[chess.Board], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no file called gm-nn here: the name is the built-in network's
    assert tuner_main(["export", "gm-nn", "--out", "gm_nn.h"]) == 0
    q = load_evaluator("gm-nn")
    assert isinstance(q, QuantizedNetwork)
    header = (tmp_path / "gm_nn.h").read_text()
    assert header == to_c_network(q, "gm-nn") and "HYBRID NETWORK" in header
    arr = np.stack([from_chess(b) for b in thousand_boards])
    parts = network_parts_batch_kernel(arr, q.kernel_args())
    exe = compile_main(header, tmp_path)
    got = [int(line.split()[0]) for line in c_scores(exe, [b.fen() for b in thousand_boards])]
    assert got == parts.tolist()


@needs_cc
def test_the_built_in_nnue_exports_by_name_and_its_c_pass_alone_gives_the_engines_scores(
        thousand_boards: list[chess.Board], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the pure network: the header is all an engine author needs (no linear terms)
    monkeypatch.chdir(tmp_path)
    assert tuner_main(["export", "nnue", "--out", "nnue.h"]) == 0
    q = load_evaluator("nnue")
    assert isinstance(q, QuantizedNetwork) and q.linear is None and q.shape.direct
    header = (tmp_path / "nnue.h").read_text()
    assert header == to_c_network(q, "nnue") and "HYBRID NETWORK" not in header
    arr = np.stack([from_chess(b) for b in thousand_boards])
    expected = network_evaluate_batch_kernel(arr, q.kernel_args())
    exe = compile_main(header, tmp_path)
    got = np.array([[int(v) for v in line.split()] for line in c_scores(exe, [b.fen() for b in thousand_boards])])
    assert np.array_equal(got[:, 0], expected) and np.array_equal(got[:, 1], expected)
    assert len(set(expected.tolist())) > 300


def test_cli_writes_the_header_and_the_binary_file(tmp_path: Path) -> None:
    q = perturbed_network(SHAPES["none"], seed=5)
    folder = tmp_path / "my-run"
    folder.mkdir()
    src = folder / "network.mtnn"
    write_network(src, q)
    assert tuner_main(["export", str(src), "--out", str(tmp_path / "net.h")]) == 0  # c by default
    header = (tmp_path / "net.h").read_text()
    assert header == to_c_network(q, "my-run") and header.startswith("/* movetuner network: my-run\n")
    assert tuner_main(["export", str(src), "--format", "mtnn", "--out", str(tmp_path / "copy.mtnn")]) == 0
    assert (tmp_path / "copy.mtnn").read_bytes() == src.read_bytes()
    back = read_network(tmp_path / "copy.mtnn")
    assert all(np.array_equal(back.params[k], q.params[k]) for k in q.params)


@pytest.mark.parametrize(("args", "message"), [
    (["{net}", "--format", "json"], "a network file exports as --format c or mtnn, not json"),
    (["{net}", "--format", "c-packed"], "a network file exports as --format c or mtnn, not c-packed"),
    (["classic", "--format", "mtnn"], "--format mtnn is for network files"),
    (["{bad}", "--format", "c"], "corrupt (CRC-32 mismatch"),
])
def test_cli_refuses_in_one_line(args: list[str], message: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    net, bad = tmp_path / "n.mtnn", tmp_path / "bad.mtnn"
    write_network(net, perturbed_network(SHAPES["none"], seed=6))
    data = bytearray(net.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    assert tuner_main(["export", *(a.format(net=net, bad=bad) for a in args), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tuner export: error: ") and message in err, err
    assert not (tmp_path / "o").exists()
