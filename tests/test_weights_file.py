"""Weights files: round trip, shipped sets, and one-line errors for every kind of bad file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from search.catalog import FEATURE_NAMES, N_FEATURES
from search.weight_sets import BUILDERS
from search.weights import Weights, WeightsFileError, dumps, load_weights, save_weights


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    values = np.random.default_rng(1).integers(-1000, 1000, N_FEATURES).astype(np.int32)
    save_weights(tmp_path / "w.json", Weights(values, {"method": "test", "seed": 3}))
    back = load_weights(tmp_path / "w.json")
    assert np.array_equal(back.values, values)
    assert back.metadata == {"method": "test", "seed": 3}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_shipped_weight_files_match_their_definitions(name: str) -> None:
    assert np.array_equal(load_weights(name).values, BUILDERS[name]().values)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(text)
    return path


def _doc() -> dict:  # type: ignore[type-arg]
    return json.loads(dumps(BUILDERS["classic"]()))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(catalog_hash="0123456789abcdef"), "catalogue '0123456789abcdef'"),
        (lambda d: d["weights"].update({"mg.material.pawn": 100.5}), "'mg.material.pawn' is 100.5, not an integer"),
        (lambda d: d["weights"].update({"mg.material.pawn": "100"}), "not an integer"),
        (lambda d: d["weights"].update({"mg.material.pawn": True}), "not an integer"),
        (lambda d: d["weights"].pop("eg.pieces.tempo"), "missing weight 'eg.pieces.tempo'"),
        (lambda d: d["weights"].update({"mg.material.king": 1}), "unknown feature 'mg.material.king'"),
        (lambda d: d.update(schema_version=99), "unsupported schema_version 99"),
        (lambda d: d.update(schema="other"), "not a weights file"),
    ],
)
def test_bad_weights_files_give_one_line_errors(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    doc = _doc()
    mutate(doc)
    path = _write(tmp_path, json.dumps(doc))
    with pytest.raises(WeightsFileError, match=message) as info:
        load_weights(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_truncated_file_is_reported_with_its_position(tmp_path: Path) -> None:
    text = dumps(BUILDERS["material"]())
    path = _write(tmp_path, text[: len(text) // 2])
    with pytest.raises(WeightsFileError, match=r"not valid JSON at line \d+ column \d+.*truncated"):
        load_weights(path)


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(WeightsFileError, match="no such weights file"):
        load_weights(tmp_path / "nope.json")


def test_eval_command_lists_top_features() -> None:
    proc = subprocess.run([sys.executable, "-m", "tuner", "eval",
                           "rnbqkb1r/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1", "--weights", "material"],
                          capture_output=True, text=True, check=True)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("score -320.00 cp for black")
    assert "mg.material.knight" in proc.stdout


def test_eval_command_reports_corrupt_weights_in_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"schema": "movetuner-weights", "schema_version": 1, "weights": {')
    proc = subprocess.run([sys.executable, "-m", "tuner", "eval", "startpos", "--weights", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr and str(path) in proc.stderr


def test_feature_names_in_file_follow_catalogue_order() -> None:
    assert list(json.loads(dumps(BUILDERS["material"]()))["weights"]) == list(FEATURE_NAMES)
