"""``tuner tune`` end to end on the shipped sample: config files, resume, Ctrl-C, bad input."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import tuner.methods.mmto
from search.params.catalog import FEATURE_INDEX
from search.params.weights import load_weights
from tuner.cli import main


def _metrics(run: Path) -> list[dict]:  # type: ignore[type-arg]
    return [{k: v for k, v in json.loads(line).items() if not k.endswith("seconds")}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


FAST = ["--max-train", "600", "--max-validation", "200", "--inner-steps", "8", "--quiet"]


def test_mmto_run_writes_config_metrics_and_weights(sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert main(["tune", "--method", "mmto", "--data", str(sample_set), "--out", str(run), "--iterations", "2",
                 "--step", "2", *FAST]) == 0
    config = tomllib.loads((run / "config.toml").read_text())
    assert config["method"] == "mmto" and config["mmto"]["iterations"] == 2 and config["mmto"]["step"] == 2
    records = _metrics(run)
    assert [r["iteration"] for r in records] == [0, 1, 2]
    for key in ("j", "j_main", "j_l1", "match_train", "match_validation", "best_validation"):
        assert all(isinstance(r[key], float) for r in records), key
    assert records[-1]["j_main"] < records[0]["j_main"]
    w = load_weights(run / "weights.json")
    assert w.metadata["method"] == "mmto" and w.metadata["iteration"] == 2
    assert w.metadata["config"]["step"] == 2 and w.metadata["catalog_hash"]
    mg = [int(w.values[FEATURE_INDEX[f"mg.material.{p}"]]) for p in ("pawn", "knight", "bishop", "rook", "queen")]
    assert sum(mg) == 100 + 320 + 330 + 500 + 900  # the constraint

    # the written config reproduces the run from scratch
    again = tmp_path / "again"
    assert main(["tune", "--config", str(run / "config.toml"), "--out", str(again), "--quiet"]) == 0
    assert _metrics(again) == records
    # --overwrite replaces a finished run (the README's main command can be run twice)
    assert main(["tune", "--config", str(run / "config.toml"), "--out", str(again), "--quiet", "--overwrite"]) == 0
    assert _metrics(again) == records


def test_ctrl_c_keeps_the_last_iteration_and_resume_finishes_the_same(sample_set: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    full = tmp_path / "full"
    assert main(["tune", "--data", str(sample_set), "--out", str(full), "--iterations", "3", *FAST]) == 0

    real_update = tuner.methods.mmto.update
    calls = {"n": 0}

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real_update(*args, **kwargs)

    cut = tmp_path / "cut"
    monkeypatch.setattr(tuner.methods.mmto, "update", interrupted)
    assert main(["tune", "--data", str(sample_set), "--out", str(cut), "--iterations", "3", *FAST]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert load_weights(cut / "weights.json").metadata["iteration"] == 1
    monkeypatch.setattr(tuner.methods.mmto, "update", real_update)
    # a second start into the same folder is refused: it must be resumed
    assert main(["tune", "--data", str(sample_set), "--out", str(cut), *FAST]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["tune", "--resume", str(cut), "--quiet"]) == 0
    assert _metrics(cut) == _metrics(full)
    assert load_weights(cut / "weights.json").values.tolist() == load_weights(full / "weights.json").values.tolist()


def test_a_run_on_a_relative_data_path_resumes_from_another_folder(sample_set: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """issue 58 item 17: config.toml kept --data as given (relative), so --resume from another
    working folder could not find the set; it is recorded absolute."""
    monkeypatch.chdir(sample_set.parent)
    run = tmp_path / "run"
    assert main(["tune", "--data", sample_set.name, "--out", str(run), "--iterations", "1", *FAST]) == 0
    assert tomllib.loads((run / "config.toml").read_text())["data"] == str(sample_set)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    assert main(["tune", "--resume", str(run), "--iterations", "2"]) == 0
    assert [r["iteration"] for r in _metrics(run)] == [0, 1, 2]
    # and it says where it resumes (issue 58 item 15)
    assert f"{run}: resuming mmto after iteration 1 of 2 (its weights and optimizer state in state.json); 1 to go" \
        in capsys.readouterr().err


@pytest.mark.parametrize("text", ["", "\n# nothing\n", "data = 'x'\n"])
def test_resume_with_an_empty_config_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    text: str) -> None:
    """issue 58 item 17: an empty config.toml on --resume gave "`: not the position set ...`"."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.toml").write_text(text)
    assert main(["tune", "--resume", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tuner tune: error: {run / 'config.toml'}: names no method (the file is empty or not the one "
                   "tuner tune wrote); cannot resume without the run's settings"]


def test_ga_run_from_the_command_line(sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "ga"
    assert main(["tune", "--method", "ga", "--data", str(sample_set), "--out", str(run), "--generations", "2",
                 "--population", "6", "--sample", "50", "--train", "material,pieces", "--encoding", "bits",
                 "--max-validation", "100", "--quiet"]) == 0
    records = _metrics(run)
    assert [r["generation"] for r in records] == [0, 1, 2]
    assert {"fitness_best", "fitness_mean", "fitness_std", "match_validation", "best_validation"} <= records[1].keys()
    assert load_weights(run / "weights.json").metadata["method"] == "ga"


@pytest.mark.parametrize(("argv", "message"), [
    (["--data", "{missing}", "--out", "{run}"], "no such position-set folder"),
    (["--data", "{set}", "--out", "{run}", "--train", "materiel"], "names no feature"),
    (["--data", "{set}", "--out", "{run}", "--start", "{missing}"], "no such weights file"),
    (["--data", "{set}", "--out", "{run}", "--method", "ga", "--iterations", "3"], "--iterations is an option of --method mmto"),
    (["--data", "{set}", "--out", "{run}", "--slope", "-1"], "slope"),
    (["--data", "{set}", "--out", "{run}", "--l1-on", "material", "--constraint", "mg.material"], "must not name"),
    (["--resume", "{run}"], "not a run folder"),
    (["--data", "{set}"], "pass --out"),
])
def test_bad_input_is_a_one_line_error(sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      argv: list[str], message: str) -> None:
    subs = {"missing": str(tmp_path / "missing"), "run": str(tmp_path / "run"), "set": str(sample_set)}
    assert main(["tune", *[a.format(**subs) for a in argv], "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in err[0]


def test_a_broken_config_file_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("method = 'mmto'\n[mmto]\nstep = 'big'\n")
    assert main(["tune", "--config", str(bad), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "step" in err and len(err.strip().splitlines()) == 1


def test_data_and_out_alone_run_the_shipped_recipe(sample_set: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.commands.tune import DEFAULT_RECIPE, configs_from_toml

    recipe = tomllib.loads(DEFAULT_RECIPE.read_text())
    common, methods = configs_from_toml(DEFAULT_RECIPE)  # every key of the recipe is a real setting
    run = tmp_path / "run"
    capsys.readouterr()
    assert main(["tune", "--data", str(sample_set), "--out", str(run), "--iterations", "1",
                 *[a for a in FAST if a != "--quiet"]]) == 0
    # the console says which recipe runs, and what it sets; and, at the end, that so few
    # positions make a demonstration, not weights to play with
    err = capsys.readouterr().err.splitlines()
    first = err[0]
    assert err[-1].startswith("note: 600 training positions are a demonstration") and str(run) in err[-1]
    assert first.startswith(f"recipe gm (tuner/recipes/gm.toml): {recipe['method']} from {recipe['start']}, ")
    # the banner gives the values the run uses: a flag's own (issue 58 item 14: it said the
    # recipe's "iterations 10" when --iterations 1 was given), saying so when it differs
    flags = {"iterations": 1, "inner_steps": 8, "max_validation": 200}
    for key, value in [*recipe[common.method].items(), ("max_validation", recipe["max_validation"])]:
        shown = ",".join(map(str, value)) if isinstance(value, list) else str(value)
        if key in flags and flags[key] != value:
            assert f"{key} {flags[key]} (flag; recipe {shown})" in first, key
        else:
            assert f"{key} {shown}," in first or f"{key} {shown} (" in first, key
    config = tomllib.loads((run / "config.toml").read_text())
    assert config["method"] == recipe["method"] == common.method
    assert config["start"] == recipe["start"]
    for key, value in recipe[common.method].items():
        expected = {"iterations": 1, "inner_steps": 8}.get(key, value)  # flags override the recipe
        assert config[common.method][key] == expected, key
    # naming a method (or a config file) leaves the recipe out: the method's own defaults
    plain = tmp_path / "plain"
    assert main(["tune", "--method", "mmto", "--data", str(sample_set), "--out", str(plain), "--iterations", "1",
                 *FAST]) == 0
    assert tomllib.loads((plain / "config.toml").read_text())["mmto"]["loss"] == "sigmoid"
    assert "recipe gm" not in capsys.readouterr().err


def test_tune_help_shows_the_recipes_values(capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.commands.tune import DEFAULT_RECIPE

    recipe = tomllib.loads(DEFAULT_RECIPE.read_text())
    with pytest.raises(SystemExit):
        main(["tune", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    assert "Without --method and --config, the recipe gm (tuner/recipes/gm.toml) runs" in text
    start = text.rsplit("--start WEIGHTS", 1)[1].split("--train", 1)[0]
    assert f"(default: material; recipe gm: {recipe['start']})" in start
    loss = text.rsplit("--loss LOSS", 1)[1].split(" --", 1)[0]
    assert f"recipe gm: {recipe['mmto']['loss']})" in loss


def test_the_demonstration_note_names_small_runs_only(tmp_path: Path) -> None:
    from tuner.commands.tune import DEMONSTRATION_POSITIONS, small_data_note
    from tuner.training.run_folder import RunDir

    run = RunDir(tmp_path / "r")
    assert small_data_note(DEMONSTRATION_POSITIONS, run, "gm") is None
    note = small_data_note(DEMONSTRATION_POSITIONS - 1, run, "gm")
    # the hint measures against the run's own start (issue 58 item 14: it said classic after gm)
    assert note is not None and "demonstration" in note and f"tuner bench match {run.weights_path} gm --depth 2" in note
