"""A network trained by the registered methods through the shared driver (issue 24): ``tuner
tune --start network:...`` writes ``weights.mtnn``, resumes bit for bit, keeps the best
iteration, and methods that train linear weights only refuse a network in one line; the one
loader of both evaluator kinds (search/evaluation/evaluators.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from search.evaluation.evaluators import (evaluator_from_json, evaluator_to_json, kind_of, load_evaluator, new_network,
                               same_evaluator, save_evaluator)
from search.evaluation.network import NetworkFileError, QuantizedNetwork, read_network
from search.params.weights import WeightsFileError, load_weights
from tuner.cli import main
from tuner.uci import serve

NET = ["--method", "mmto", "--start", "network:16x8x8+classic", "--max-train", "300", "--max-validation", "100",
       "--inner-steps", "3", "--network-lr", "0.01", "--loss", "softmax", "--slope", "0.05", "--quiet"]


def _lines(run: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in json.loads(line).items() if not k.endswith("seconds")}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_mmto_trains_a_network_and_resume_equals_an_uninterrupted_run(sample_set: Path, tmp_path: Path) -> None:
    whole, part = tmp_path / "whole", tmp_path / "part"
    assert main(["tune", "--data", str(sample_set), "--out", str(whole), "--iterations", "3", "--keep", "last",
                 *NET]) == 0
    assert main(["tune", "--data", str(sample_set), "--out", str(part), "--iterations", "1", "--keep", "last",
                 *NET]) == 0
    assert main(["tune", "--resume", str(part), "--iterations", "3", "--quiet"]) == 0
    assert not (whole / "weights.json").exists()
    a, b = read_network(whole / "weights.mtnn"), read_network(part / "weights.mtnn")
    assert same_evaluator(a, b) and a.linear is not None
    assert _lines(part) == _lines(whole)
    state_whole = json.loads((whole / "state.json").read_text())
    state_part = json.loads((part / "state.json").read_text())
    assert state_part["extra"]["trainer"] == state_whole["extra"]["trainer"]  # Adam's moments, master parameters
    lines = _lines(whole)
    # the hybrid starts as its linear part (a zero output layer) and MMTO lowers the stored loss
    assert all(lines[i]["j_stored_last"] < lines[i]["j_stored_first"] for i in (1, 2, 3))
    start = load_evaluator("network:16x8x8+classic")
    assert isinstance(start, QuantizedNetwork) and not np.any(start.params["w4"])
    assert not same_evaluator(a, start)
    assert a.metadata["method"] == "mmto" and a.metadata["iteration"] == 3


def test_keep_best_writes_the_best_validation_network(sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "best"
    assert main(["tune", "--data", str(sample_set), "--out", str(run), "--iterations", "2", "--keep", "best",
                 *NET]) == 0
    lines = _lines(run)
    best = max(range(len(lines)), key=lambda i: (lines[i]["match_validation"], -i))
    kept = read_network(run / "weights.mtnn")
    assert kept.metadata["best_iteration"] == best
    state = json.loads((run / "state.json").read_text())
    assert same_evaluator(kept, evaluator_from_json(state["extra"]["driver"]["best_weights"], "best"))


def test_methods_that_train_linear_weights_refuse_a_network_in_one_line(sample_set: Path, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tune", "--data", str(sample_set), "--out", str(tmp_path / "ga"), "--method", "ga",
                 "--start", "network:16x8x8", "--generations", "1", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "a network evaluator" in err[0] and "ga trains linear" in err[0] and "mmto" in err[0]


def test_the_loader_reads_both_kinds_and_refuses_bad_specs_in_one_line(tmp_path: Path) -> None:
    lin = load_evaluator("classic")
    assert kind_of(lin) == "linear" and np.array_equal(lin, load_weights("classic").values)
    net = new_network("network:8x4x4/4@3")
    assert kind_of(net) == "network" and net.shape.buckets == "4" and net.linear is None
    assert not same_evaluator(net, new_network("network:8x4x4/4@4"))
    path = tmp_path / "renamed.bin"  # a network file is known by its magic bytes, not its name
    save_evaluator(path, net, {"name": "x"})
    back = load_evaluator(path)
    assert same_evaluator(back, net) and isinstance(back, QuantizedNetwork) and back.metadata == {"name": "x"}
    for ev in (lin, net):
        again = evaluator_from_json(json.loads(json.dumps(evaluator_to_json(ev))), "here")
        assert same_evaluator(again, ev)
    with pytest.raises(ValueError, match=r"network:H\[xH2xH3\]"):
        load_evaluator("network:8x4")
    direct = new_network("network:8@2")  # the direct form: no hidden layers
    assert direct.shape.direct and direct.params["w4"].shape == (1, 16)
    with pytest.raises(ValueError, match="buckets"):
        load_evaluator("network:8x4x4/9")
    with pytest.raises(WeightsFileError, match="no such weights file"):
        load_evaluator(tmp_path / "missing.json")
    damaged = tmp_path / "damaged.mtnn"
    damaged.write_bytes(path.read_bytes()[:-9])
    with pytest.raises(NetworkFileError, match="damaged.mtnn"):
        load_evaluator(damaged)
    with pytest.raises(ValueError, match="here"):
        evaluator_from_json({"network": "!!"}, "here")


def test_eval_match_and_uci_take_a_network(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    net_path = tmp_path / "hybrid.mtnn"
    save_evaluator(net_path, new_network("network:16x8x8+classic@5"), {})
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    assert main(["eval", fen, "--weights", str(net_path)]) == 0
    out = capsys.readouterr().out
    assert "a network 16x8x8" in out and "its part +0.00 cp" in out and "mg.pieces.tempo" in out
    assert main(["eval", fen, "--weights", "network:16x8x8@5"]) == 0
    assert "the linear part" not in capsys.readouterr().out
    pgn = tmp_path / "m.pgn"
    assert main(["bench", "match", "network:16x8x8+classic@5", "classic", "--games", "2", "--depth", "1",
                 "--out", str(pgn), "--json"]) == 0
    # the hybrid's output layer starts at zero: it plays exactly as its linear part, so the pair of games
    # (colours swapped over one opening) scores one point each
    assert pgn.read_text().count("[Event ") == 2
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["pentanomial"] == [0, 0, 1, 0, 0] and summary["score"] == 0.5  # the same game twice, mirrored
    stdin = io.StringIO(f"uci\nsetoption name Weights value {net_path}\nisready\nposition fen {fen}\ngo depth 2\nquit\n")
    stdout = io.StringIO()
    serve("classic", stdin=stdin, stdout=stdout)
    lines = stdout.getvalue().splitlines()
    assert f"info string weights {net_path} loaded" in lines and any(x.startswith("bestmove ") for x in lines)
