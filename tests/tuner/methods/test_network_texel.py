"""Texel's method and distillation with a network evaluator (tuner/methods/network_texel.py): the
stored quiescence leaves reproduce the search's values, the gradient of E equals central finite
differences of E computed from the row scores, and through the command line the training error
falls, a resumed run ends bit for bit as an uninterrupted one, a teacher's values are learnt, and
bad teachers are refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from objectives.network_moves import network_objective, row_scores
from search.params.catalog import PHASE_MAX
from search.evaluation.evaluators import load_evaluator, same_evaluator
from search.evaluation.network import QuantizedNetwork, quantize, read_network
from search.tree.search_api import search_many
from tuner.cli import main
from tuner.methods.network_texel import leaf_table, quiescence_values
from tuner.training.position_set import load_positions

NET = ["--method", "texel", "--max-train", "300", "--max-validation", "100", "--steps", "5",
       "--network-lr", "0.01", "--k", "0.002", "--quiet"]


def _lines(run: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in json.loads(line).items() if not k.endswith("seconds")}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


def _net(spec: str, seed: int) -> QuantizedNetwork:
    """A network with every layer random (``spec``'s output layer starts at zero)."""
    net = load_evaluator(spec)
    assert isinstance(net, QuantizedNetwork)
    f = net.dequantize()
    rng = np.random.default_rng(seed)
    v = f.vector()
    v = np.clip(v + rng.normal(0.0, 0.05, v.shape) * np.maximum(np.abs(v).max(), 1.0), -f.limits_vector(),
                f.limits_vector())
    return quantize(f.with_vector(v), dict(net.metadata))


@pytest.fixture(scope="module")
def boards(sample_set: Path) -> np.ndarray:
    pos = load_positions(sample_set, "train", limit=120, seed=0, progress=False)
    return pos.boards


def test_stored_leaves_give_the_searchs_quiescence_values(boards: np.ndarray) -> None:
    net = _net("network:16x8x8+classic", seed=1)
    scores, kinds, leaves, pv_len, _ = quiescence_values(boards, net, budget=100_000, n_threads=1)
    assert np.array_equal(scores, search_many(boards, 0, net).scores)
    table = leaf_table(net, scores, kinds, leaves, pv_len, np.full(len(scores), 0.5))
    rows = row_scores(table, net.dequantize())
    # the float network at the stored leaves is the integer search's score up to quantization
    # (the bound of docs/network.md, generously: 4 cp) and exactly the verdict of a mate or draw
    verdict = table.sign == 0
    assert np.array_equal(rows[verdict], scores[verdict].astype(np.float64))
    assert np.max(np.abs(rows - scores)) <= 4 * PHASE_MAX


def test_the_gradient_of_e_equals_finite_differences(boards: np.ndarray) -> None:
    net = _net("network:16x8x8", seed=2)
    scores, kinds, leaves, pv_len, _ = quiescence_values(boards, net, budget=100_000, n_threads=1)
    results = np.random.default_rng(3).integers(0, 3, len(scores)) / 2.0
    table = leaf_table(net, scores, kinds, leaves, pv_len, results)
    k = 0.003
    f = net.dequantize()

    def e(vector: np.ndarray) -> float:  # E from the row scores, written out
        s = row_scores(table, f.with_vector(vector))
        sig = 1.0 / (1.0 + np.exp(-k / PHASE_MAX * s))
        return float(np.mean((results - sig) ** 2))

    o = network_objective(table, f, 1.0, mu=1.0, k_cp=k)
    v = f.vector()
    assert o.total == pytest.approx(e(v), rel=1e-9)
    rng = np.random.default_rng(4)
    checked = 0
    for i in rng.permutation(len(v)):
        if checked == 40:
            break
        h = 1e-4
        up, down = v.copy(), v.copy()
        up[i] += h
        down[i] -= h
        fd = (e(up) - e(down)) / (2 * h)
        if abs(fd) < 1e-9 and abs(o.gradient[i]) < 1e-9:
            continue  # an inactive unit: both zero
        assert o.gradient[i] == pytest.approx(fd, rel=1e-3, abs=1e-9), i
        checked += 1
    assert checked == 40


def test_texel_trains_a_network_and_resume_equals_an_uninterrupted_run(sample_set: Path, tmp_path: Path) -> None:
    whole, part = tmp_path / "whole", tmp_path / "part"
    common = ["--data", str(sample_set), "--start", "network:16x8x8+classic", "--keep", "last", *NET]
    assert main(["tune", "--out", str(whole), "--epochs", "3", *common]) == 0
    assert main(["tune", "--out", str(part), "--epochs", "1", *common]) == 0
    assert main(["tune", "--resume", str(part), "--epochs", "3", "--quiet"]) == 0
    a, b = read_network(whole / "weights.mtnn"), read_network(part / "weights.mtnn")
    assert same_evaluator(a, b) and a.linear is not None
    assert _lines(part) == _lines(whole)
    lines = _lines(whole)
    assert lines[3]["e_train"] < lines[0]["e_train"]
    assert a.metadata["method"] == "texel"


def test_a_scheduled_step_is_recorded_each_epoch_and_resumes_alike(sample_set: Path, tmp_path: Path) -> None:
    whole, part = tmp_path / "whole", tmp_path / "part"
    common = ["--data", str(sample_set), "--start", "network:16x8x8", "--keep", "last", *NET,
              "--network-lr-end", "0.001"]
    assert main(["tune", "--out", str(whole), "--epochs", "3", *common]) == 0
    assert [r["network_lr"] for r in _lines(whole)[1:]] == pytest.approx([0.01, 0.0055, 0.001])
    assert main(["tune", "--out", str(part), "--epochs", "1", *common]) == 0
    assert main(["tune", "--resume", str(part), "--epochs", "3", "--quiet"]) == 0
    assert _lines(part) == _lines(whole)
    assert same_evaluator(read_network(whole / "weights.mtnn"), read_network(part / "weights.mtnn"))


def test_distillation_learns_the_teachers_values(sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "distil"
    assert main(["tune", "--data", str(sample_set), "--out", str(run), "--start", "network:16x8x8", "--teacher", "gm",
                 "--epochs", "3", "--keep", "last", *NET, "--steps", "10", "--network-lr", "0.02"]) == 0
    lines = _lines(run)
    assert lines[3]["e_train"] < 0.5 * lines[0]["e_train"]
    # the network's quiescence values moved towards the teacher's
    pos = load_positions(sample_set, "train", limit=300, seed=0, progress=False)
    teacher = search_many(pos.boards, 0, load_evaluator("gm")).scores.astype(np.float64)
    before = search_many(pos.boards, 0, load_evaluator("network:16x8x8")).scores.astype(np.float64)
    after = search_many(pos.boards, 0, read_network(run / "weights.mtnn")).scores.astype(np.float64)
    assert np.mean(np.abs(after - teacher)) < 0.8 * np.mean(np.abs(before - teacher))


@pytest.mark.parametrize("start,teacher,message", [
    ("classic", "gm", "distils into a network"),
    ("network:16x8x8", "no-such-weights.json", "teacher"),
])
def test_bad_teachers_are_refused_in_one_line(sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             start: str, teacher: str, message: str) -> None:
    code = main(["tune", "--data", str(sample_set), "--out", str(tmp_path / "bad"), "--start", start,
                 "--teacher", teacher, *NET])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err
