"""The method registry and the shared driver: a toy method registered in a few lines runs
through the command line, resume included; Texel through the command line, its Adam state
surviving resume bit for bit; early stopping and the kept weights."""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from search.params.catalog import FEATURE_INDEX
from search.params.weights import load_weights
from tuner.cli import main
from tuner.config import help_field
from tuner.methods.registry import Method, methods, register, unregister
from tuner.training.training_data import TrainingData
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig


def _lines(run: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in json.loads(line).items() if not k.endswith("seconds")}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


# ------------------------------------------------------------------ a toy method, in a few lines


@dataclasses.dataclass(frozen=True, kw_only=True)
class ToyConfig:
    rounds: int = help_field(3, "rounds")
    bump: int = help_field(5, "centipawns added to the knight's value each round")


class ToyTrainer:
    """Adds ``bump`` to the middle-game knight each round; its state is the round count."""

    def __init__(self, common: TuneConfig, cfg: ToyConfig, data: TrainingData, w0: np.ndarray, ctx: RunContext) -> None:
        self.cfg, self.w, self.done = cfg, w0.copy(), 0

    def begin(self) -> dict[str, Any]:
        return {"knight": int(self.w[FEATURE_INDEX["mg.material.knight"]])}

    def restore(self, state: dict[str, Any]) -> None:
        self.w = np.array(state["w"], dtype=np.int32)

    def step(self, iteration: int) -> dict[str, Any]:
        self.w[FEATURE_INDEX["mg.material.knight"]] += self.cfg.bump
        return self.begin()

    def weights(self) -> np.ndarray:
        return self.w

    def state(self) -> dict[str, Any]:
        return {"w": [int(v) for v in self.w]}

    def finished(self) -> str | None:
        return None


@pytest.fixture()
def toy() -> Any:
    register(Method(name="toy", config=ToyConfig, trainer=ToyTrainer, summary="a toy", iterations="rounds",
                    unit="round", headline=("knight",)))
    yield
    unregister("toy")


def test_registry_lists_the_built_in_methods_first() -> None:
    assert list(methods())[:3] == ["mmto", "ga", "texel"]
    assert methods()["texel"].iterations == "epochs" and methods()["ga"].iterations == "generations"


def test_a_registered_toy_method_runs_through_the_cli_with_resume(toy: Any, sample_set: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # the registry feeds --help, --method, the TOML table and --resume
    with pytest.raises(SystemExit):
        main(["tune", "--help"])
    assert "toy: a toy" in capsys.readouterr().out
    common = ["--data", str(sample_set), "--max-validation", "100", "--quiet", "--keep", "last"]
    whole = tmp_path / "whole"
    assert main(["tune", "--method", "toy", "--out", str(whole), "--rounds", "4", "--bump", "7", *common]) == 0
    knight = [r["knight"] for r in _lines(whole)]
    assert knight == [320, 327, 334, 341, 348]  # material's knight, then +7 a round
    assert tomllib.loads((whole / "config.toml").read_text())["toy"] == {"rounds": 4, "bump": 7}
    assert int(load_weights(whole / "weights.json").values[FEATURE_INDEX["mg.material.knight"]]) == 348

    part = tmp_path / "part"
    assert main(["tune", "--method", "toy", "--out", str(part), "--rounds", "2", "--bump", "7", *common]) == 0
    assert main(["tune", "--resume", str(part), "--rounds", "4", "--quiet"]) == 0
    assert _lines(part) == _lines(whole)
    kept_part, kept_whole = load_weights(part / "weights.json"), load_weights(whole / "weights.json")
    assert np.array_equal(kept_part.values, kept_whole.values)
    assert kept_part.metadata["iteration"] == kept_whole.metadata["iteration"] == 4
    # an option of another method is refused, and so is a table of an unknown one
    assert main(["tune", "--method", "toy", "--out", str(tmp_path / "x"), "--inner-steps", "3", *common]) == 2
    assert "--inner-steps is an option of --method mmto" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("method = 'toy'\n[nosuch]\nx = 1\n")
    assert main(["tune", "--config", str(bad), "--out", str(tmp_path / "y")]) == 2
    assert "unknown table(s) [nosuch]" in capsys.readouterr().err


def test_the_progress_lines_name_the_unit_whole(toy: Any, sample_set: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # off a terminal the driver's bar prints plain lines: "toy: 2/2 round (100 %)", not "roun"
    monkeypatch.setattr("tuner.progress.MIN_SECONDS", 0.0)  # a line at each tenth, however quick
    assert main(["tune", "--method", "toy", "--out", str(tmp_path / "run"), "--data", str(sample_set),
                 "--rounds", "2", "--max-validation", "100"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"toy: 2/2 round \(100 %\)", err), err


def test_early_stop_and_kept_weights(toy: Any, sample_set: Path, tmp_path: Path) -> None:
    # the toy moves the knight away from useful values: validation move-match stops improving,
    # so the run stops after 'early_stop' rounds without a gain and keeps the best round's weights
    run = tmp_path / "run"
    assert main(["tune", "--method", "toy", "--out", str(run), "--data", str(sample_set), "--rounds", "20",
                 "--bump", "400", "--early-stop", "2", "--max-validation", "200", "--quiet"]) == 0
    lines = _lines(run)
    best = max(range(len(lines)), key=lambda i: (lines[i]["match_validation"], -i))
    assert len(lines) == best + 3  # two rounds without a gain after the best, then the stop
    kept = load_weights(run / "weights.json")
    assert kept.metadata["best_iteration"] == best
    assert int(kept.values[FEATURE_INDEX["mg.material.knight"]]) == lines[best]["knight"]


# ------------------------------------------------------------------ Texel through the command line


# the sample's famous games are full of winning sacrifices: material alone anticorrelates with
# their results (K cannot be fitted from the 'material' weights), so these runs start from classic
TEXEL_DATA = ["--method", "texel", "--start", "classic", "--max-train", "800", "--max-validation", "200",
              "--train", "material,pst", "--quiet"]
TEXEL = [*TEXEL_DATA, "--steps", "5", "--lr", "2"]


def test_texel_resume_equals_an_uninterrupted_run_bit_for_bit(sample_set: Path, tmp_path: Path) -> None:
    whole, part = tmp_path / "whole", tmp_path / "part"
    assert main(["tune", "--data", str(sample_set), "--out", str(whole), "--epochs", "4", *TEXEL]) == 0
    assert main(["tune", "--data", str(sample_set), "--out", str(part), "--epochs", "2", *TEXEL]) == 0
    assert main(["tune", "--resume", str(part), "--epochs", "4", "--quiet"]) == 0
    assert _lines(part) == _lines(whole)
    state_whole = json.loads((whole / "state.json").read_text())
    state_part = json.loads((part / "state.json").read_text())
    assert state_part["extra"]["trainer"] == state_whole["extra"]["trainer"]  # Adam's m, v, t; master weights
    lines = _lines(whole)
    assert lines[0]["k"] > 0 and all(r["k"] == lines[0]["k"] for r in lines)
    assert lines[-1]["e_train"] < lines[0]["e_train"]
    assert {"e_train", "e_validation", "match_validation", "updates"} <= lines[1].keys()


def test_texel_keeps_the_epoch_of_least_validation_error(sample_set: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "t"
    args = [a for a in TEXEL if a != "--quiet"]
    assert main(["tune", "--data", str(sample_set), "--out", str(run), "--epochs", "4", *args]) == 0
    lines = _lines(run)
    by_error = min(range(len(lines)), key=lambda i: (lines[i]["e_validation"], i))
    by_match = max(range(len(lines)), key=lambda i: (lines[i]["match_validation"], -i))
    assert by_error != by_match  # this run tells the two criteria apart
    kept = load_weights(run / "weights.json")
    assert kept.metadata["best_iteration"] == by_error and kept.metadata["best_by"] == "e_validation"
    assert kept.metadata["match_validation"] == lines[by_error]["match_validation"]
    last = lines[-1]
    assert last["best_iteration"] == by_error and last["best_e_validation"] == lines[by_error]["e_validation"]
    assert last["best_validation"] == lines[by_error]["match_validation"]  # the kept epoch's move-match
    assert f"kept the weights of epoch {by_error} (best e_validation" in capsys.readouterr().err


def test_texel_resumes_a_checkpoint_kept_by_move_match(sample_set: Path, tmp_path: Path) -> None:
    # a checkpoint written before Texel kept by its validation error (driver state version 1)
    part = tmp_path / "part"
    assert main(["tune", "--data", str(sample_set), "--out", str(part), "--epochs", "2", *TEXEL]) == 0
    state = json.loads((part / "state.json").read_text())
    driver = state["extra"]["driver"]
    lines = _lines(part)
    old_best = max(range(len(lines)), key=lambda i: (lines[i]["match_validation"], -i))
    for key in ("best_match", "best_by", "lower_is_better"):
        del driver[key]
    driver.update(version=1, best_validation=lines[old_best]["match_validation"], best_iteration=old_best)
    (part / "state.json").write_text(json.dumps(state))
    assert main(["tune", "--resume", str(part), "--epochs", "4", "--quiet"]) == 0
    kept = load_weights(part / "weights.json")
    assert kept.metadata["best_by"] == "e_validation"
    error = [r["e_validation"] for r in _lines(part)]
    candidates = [old_best, 3, 4]  # the old kept epoch, then the resumed ones
    assert kept.metadata["best_iteration"] == min(candidates, key=lambda i: (error[i], i))


def test_texel_refuses_a_k_it_cannot_fit_with_one_line(sample_set: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    args = [a for a in TEXEL if a != "classic"]
    args[args.index("--start") + 1:args.index("--start") + 1] = ["material"]
    assert main(["tune", "--data", str(sample_set), "--out", str(tmp_path / "r"), "--epochs", "1", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot fit K on the start weights" in err[0] and "give --k" in err[0]
    assert main(["tune", "--data", str(sample_set), "--out", str(tmp_path / "r"), "--epochs", "1", "--k", "0.004",
                 "--overwrite", *args]) == 0


def test_texel_mini_batches_and_sgd_run(sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "mb"
    assert main(["tune", "--data", str(sample_set), "--out", str(run), "--epochs", "2", "--batch-size", "256",
                 *TEXEL]) == 0
    lines = _lines(run)
    # one mini-batch per 256 positions of finished games that are quiet (Texel's default filter)
    n = lines[0]["train_positions"]
    assert 256 * 2 < n < 800 and lines[0]["left_out"] > 0
    assert lines[1]["updates"] == -(-n // 256)
    sgd = tmp_path / "sgd"
    assert main(["tune", "--data", str(sample_set), "--out", str(sgd), "--epochs", "1", "--optimizer", "sgd",
                 "--lr", "1e6", "--momentum", "0.5", *TEXEL_DATA]) == 0
    assert _lines(sgd)[1]["e_train"] < _lines(sgd)[0]["e_train"]
