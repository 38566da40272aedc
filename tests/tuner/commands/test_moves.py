"""``tuner moves train|predict|measure``: what they write and print, and their errors in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from search.pls.move_model import BUILTIN_MOVE_MODELS, load_move_model
from tuner.cli import main

SMALL = ["--epochs", "1", "--l2", "0", "--max-train", "300", "--max-validation", "100", "--quiet"]


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_train_writes_a_model_that_predict_and_measure_read(sample_set: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "model.json"
    assert main(["moves", "train", "--data", str(sample_set), "--out", str(out), *SMALL, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["train_positions"] == 300 and summary["validation"]["positions"] == 100
    model = load_move_model(out)
    assert model.metadata["chosen_l2"] == 0.0 and model.metadata["train_positions"] == 300
    assert model.metadata["config"]["max_train"] == 300 and model.metadata["git_commit"] is not None

    assert main(["moves", "predict", "startpos", "--model", str(out), "--top", "3", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["legal_moves"] == 20 and len(shown["moves"]) == 3
    probs = [m["probability"] for m in shown["moves"]]
    assert probs == sorted(probs, reverse=True)

    assert main(["moves", "measure", "--model", str(out), "--data", str(sample_set), "--split", "validation",
                 "--json"]) == 0
    fig = json.loads(capsys.readouterr().out)
    assert 0 < fig["top1"] <= fig["top3"] <= 1 and fig["positions"] > 100


def test_predict_lists_the_builtin_model_s_moves(capsys: pytest.CaptureFixture[str]) -> None:
    gm = load_move_model("gm")
    assert BUILTIN_MOVE_MODELS["gm"].stat().st_size < 100_000 and np.any(gm.weights != 0)
    assert gm.metadata["train_positions"] > 400_000  # the GM train split
    assert main(["moves", "predict", "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("27 legal moves; the 10 most likely") and len(lines) == 11
    assert sum(float(line.split()[1].rstrip("%")) for line in lines[1:]) > 50  # the top ten carry most of it


def test_errors_are_one_line(sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    out.write_text("{}")
    assert "exists; pass --overwrite" in one_line_error(
        capsys, ["moves", "train", "--data", str(sample_set), "--out", str(out), *SMALL])
    assert "is a folder" in one_line_error(
        capsys, ["moves", "train", "--data", str(sample_set), "--out", str(tmp_path), *SMALL])
    assert "no such position-set folder" in one_line_error(
        capsys, ["moves", "train", "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "x.json"), *SMALL])
    assert "lr must be positive" in one_line_error(
        capsys, ["moves", "train", "--data", str(sample_set), "--out", str(tmp_path / "x.json"), "--lr", "0"])
    assert "not a move-model file" in one_line_error(capsys, ["moves", "predict", "startpos", "--model", str(out)])
    assert "no such move-model file" in one_line_error(
        capsys, ["moves", "measure", "--model", str(tmp_path / "x.json"), "--data", str(sample_set)])
    assert "invalid FEN 'not a fen'" in one_line_error(capsys, ["moves", "predict", "not a fen"])
    assert "no legal move" in one_line_error(capsys, ["moves", "predict", "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"])
    assert "--top must be >= 0" in one_line_error(capsys, ["moves", "predict", "startpos", "--top", "-1"])


def test_search_labels_are_the_engines_first_moves(sample_set: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from search.core.convert import move_to_uci
    from search.evaluation.evaluators import load_evaluator
    from search.pls.move_model import move_features
    from search.tree.search_api import search
    from tuner.moves.measure import choice_set, search_choice_set
    from tuner.training.position_set import load_positions

    pos = load_positions(sample_set, "train", limit=200, seed=1, progress=False)
    labelled, left_out = search_choice_set(pos, load_evaluator("gm"), 2)
    assert left_out == 0 and len(labelled) == 200
    mf = move_features(pos.boards)
    gm = load_evaluator("gm")
    for p in range(0, 200, 7):  # each label: the move a fresh search of that board plays first
        first = search(pos.boards[p], 2, gm).pv[0]
        assert move_to_uci(int(mf.moves[mf.pos_ptr[p] + labelled.played[p]])) == move_to_uci(first)
    played = choice_set(pos)
    agree = float(np.mean(labelled.played == played.played))
    assert 0.2 < agree < 0.8  # the engine's choice is often, not always, the grandmaster's

    for labels, positions in (("search", 300), ("both", 600)):
        out = tmp_path / f"{labels}.json"
        assert main(["moves", "train", "--data", str(sample_set), "--out", str(out), *SMALL, "--labels", labels,
                     "--label-depth", "1", "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["train_positions"] == positions and summary["validation"]["positions"] == 100
        assert load_move_model(out).metadata["labels"] == f"{labels} (gm, depth 1; 0 left out)"
    assert "--label-weights" in one_line_error(
        capsys, ["moves", "train", "--data", str(sample_set), "--out", str(tmp_path / "x.json"), *SMALL,
                 "--labels", "search", "--label-weights", str(tmp_path / "none.json")])
    assert "labels must be one of" in one_line_error(
        capsys, ["moves", "train", "--data", str(sample_set), "--out", str(tmp_path / "x.json"), "--labels", "x"])
