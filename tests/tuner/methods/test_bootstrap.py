"""What the search-bootstrapping methods share (tuner/methods/bootstrap.py): ``tuner tune --method
rootstrap|treestrap-mm|treestrap-ab|tdleaf`` end to end on the shipped sample (self-play games
saved as PGN, the position-set source, determinism, resume, and staged training (``--stages``),
also with MMTO), and the cap on each search's step."""

from __future__ import annotations

import json
from pathlib import Path

import chess.pgn
import numpy as np
import pytest

import tuner.training.driver

from search.params.catalog import N_FEATURES
from search.params.weights import load_weights
from tuner.cli import main
from tuner.methods.bootstrap import capped_step
from tuner.training.weight_masks import mask_of

METHODS = ("rootstrap", "treestrap-mm", "treestrap-ab", "tdleaf")
TIMING = {"iteration_seconds", "validation_seconds", "train_seconds", "search_seconds", "update_seconds"}


def tune(sample_set: Path, run: Path, method: str, *extra: str) -> int:
    return main(["tune", "--method", method, "--data", str(sample_set), "--out", str(run), "--quiet",
                 "--max-validation", "40", "--threads", "1", *extra])


def metrics(run: Path) -> list[dict]:  # type: ignore[type-arg]
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in d.items() if k not in TIMING} for d in lines]


def weights(run: Path) -> np.ndarray:
    return load_weights(run / "weights.json").values


# from classic weights: with material alone every opening position scores 0 and TD-Leaf's
# differences are all 0 in a game drawn by the ply limit
SELFPLAY = ("--iterations", "2", "--games", "1", "--max-plies", "12", "--search-depth", "2", "--keep", "last",
            "--start", "classic")


@pytest.mark.parametrize("method", METHODS)
def test_selfplay_learns_saves_pgn_and_is_deterministic(sample_set: Path, tmp_path: Path, method: str) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert tune(sample_set, a, method, *SELFPLAY) == 0
    assert tune(sample_set, b, method, *SELFPLAY) == 0
    assert np.array_equal(weights(a), weights(b))
    assert metrics(a) == metrics(b)
    rows = metrics(a)
    assert [r["iteration"] for r in rows] == [0, 1, 2]
    assert rows[1]["searches"] == 12 and rows[1]["games"] == 1
    master = json.loads((a / "state.json").read_text())["extra"]["trainer"]["master"]
    assert not np.array_equal(master, load_weights("classic").values)  # it learnt something
    for it in (1, 2):
        with (a / "selfplay" / f"iter-{it:04d}.pgn").open() as fh:
            game = chess.pgn.read_game(fh)
        assert game is not None and not game.errors
        assert len(list(game.mainline_moves())) == 12
        assert game.headers["Result"] == "1/2-1/2"  # drawn by the ply limit


@pytest.mark.parametrize("method", METHODS)
def test_resume_ends_where_an_uninterrupted_run_ends(sample_set: Path, tmp_path: Path, method: str) -> None:
    full, cut = tmp_path / "full", tmp_path / "cut"
    args = ("--games", "1", "--max-plies", "10", "--search-depth", "1", "--keep", "last")
    assert tune(sample_set, full, method, "--iterations", "3", *args) == 0
    assert tune(sample_set, cut, method, "--iterations", "1", *args) == 0
    assert main(["tune", "--resume", str(cut), "--iterations", "3", "--quiet"]) == 0
    assert np.array_equal(weights(full), weights(cut))
    assert metrics(full) == metrics(cut)
    state_full = json.loads((full / "state.json").read_text())["extra"]["trainer"]["master"]
    state_cut = json.loads((cut / "state.json").read_text())["extra"]["trainer"]["master"]
    assert state_full == state_cut


@pytest.mark.parametrize("method", METHODS)
def test_positions_source(sample_set: Path, tmp_path: Path, method: str) -> None:
    run = tmp_path / "run"
    assert tune(sample_set, run, method, "--source", "positions", "--positions", "30", "--iterations", "1",
                "--search-depth", "1", "--keep", "last") == 0
    row = metrics(run)[1]
    assert row["searches"] >= 30
    if method == "tdleaf":  # whole games, walked in order
        assert row["games"] >= 1 and row["plies"] == row["searches"]
    assert not (run / "selfplay").exists()


def interrupt_after(monkeypatch: pytest.MonkeyPatch, iterations: int) -> None:
    """Make the next run stop like Ctrl-C while validating iteration ``iterations + 1``."""
    real = tuner.training.driver.validation_credits
    calls = {"n": 0}

    def validate(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == iterations + 2:  # iteration 0 is validated too
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(tuner.training.driver, "validation_credits", validate)


def test_staged_treestrap_trains_material_first_then_everything(sample_set: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    whole, run = tmp_path / "whole", tmp_path / "staged"
    start = load_weights("material").values
    # static node values (not quiescence leaves): in 16 plies from an opening every quiescence
    # value already equals its search value, so the default rule would have nothing to learn
    args = ("--iterations", "2", "--games", "1", "--max-plies", "16", "--search-depth", "2", "--keep", "last",
            "--stages", "material;all", "--max-step", "5", "--no-quiet-leaves")
    assert tune(sample_set, whole, "treestrap-ab", *args) == 0
    with monkeypatch.context() as m:
        interrupt_after(m, 1)
        assert tune(sample_set, run, "treestrap-ab", *args) == 130
    after1 = weights(run)
    material = mask_of(("material",), "train")
    assert not np.array_equal(after1[material], start[material])
    assert np.array_equal(after1[~material], start[~material])  # stage 1: material only
    state = json.loads((run / "state.json").read_text())["extra"]["stage"]
    assert state["index"] == 0 and state["groups"] == ["material"]
    # resume into stage 2: the same as the run made in one go
    assert main(["tune", "--resume", str(run), "--quiet"]) == 0
    after2 = weights(run)
    assert not np.array_equal(after2[~material], start[~material])
    assert [r.get("stage") for r in metrics(run)[1:]] == [1, 2]
    assert np.array_equal(weights(whole), after2)
    assert metrics(whole) == metrics(run)


def test_stages_work_with_mmto_and_resume_inside_a_stage(sample_set: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    full, cut = tmp_path / "full", tmp_path / "cut"
    args = ("--iterations", "4", "--max-train", "100", "--inner-steps", "2", "--stages", "material;material,pst",
            "--keep", "last")
    start = load_weights("material").values
    assert tune(sample_set, full, "mmto", *args) == 0
    rows = metrics(full)
    assert [r.get("stage") for r in rows[1:]] == [1, 1, 2, 2]
    pst = mask_of(("pst",), "train")
    with monkeypatch.context() as m:
        interrupt_after(m, 3)
        assert tune(sample_set, cut, "mmto", *args) == 130
    assert not np.array_equal(weights(cut)[pst], start[pst])  # stage 2 (iteration 3) trained the tables
    assert main(["tune", "--resume", str(cut), "--quiet"]) == 0
    assert np.array_equal(weights(full), weights(cut))
    assert metrics(full) == metrics(cut)


def test_bad_stages_are_one_line_errors(sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for stages, message in (("material;;all", "stage 2 is empty"), ("material;nonsense", "stages: stage 2")):
        assert tune(sample_set, tmp_path / "x", "rootstrap", "--stages", stages) != 0
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err


def test_n_features_matches_the_state(sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "r"
    assert tune(sample_set, run, "rootstrap", "--iterations", "1", "--games", "1", "--max-plies", "4",
                "--search-depth", "1") == 0
    master = json.loads((run / "state.json").read_text())["extra"]["trainer"]["master"]
    assert len(master) == N_FEATURES


def test_the_cap_bounds_every_weight_per_search() -> None:
    direction = np.zeros(N_FEATURES)
    direction[:4] = [1000.0, -1000.0, 0.5, -0.5]
    step = capped_step(direction, 0.01, np.ones(N_FEATURES, dtype=bool), 2.0)
    assert step[:4].tolist() == [2.0, -2.0, 0.005, -0.005]
