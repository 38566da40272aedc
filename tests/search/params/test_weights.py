"""Weights files: round trip, shipped sets, and one-line errors for every kind of bad file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from search.params.catalog import CATALOG_HASH, FEATURE_NAMES, N_FEATURES, catalog_hash, legacy_feature_names
from search.params.weight_sets import BUILDERS
from search.params.weights import CatalogMigrationWarning, Weights, WeightsFileError, dumps, load_weights, save_weights
from tests.conftest import REPO


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


# ---------------------------------------------------------------- files of the earlier catalogue

#: ``search/data/classic.json`` and its text view as written before the attacks and defends
#: groups (catalogue 26fcb341cd55f948, 990 features), kept verbatim
LEGACY_DIR = REPO / "tests" / "data" / "catalog_26fcb341cd55f948"
LEGACY_HASH = "26fcb341cd55f948"


def test_a_file_of_the_earlier_catalogue_loads_each_weight_by_name_and_the_new_ones_as_zero() -> None:
    path = LEGACY_DIR / "classic.json"
    old = json.loads(path.read_text())
    assert old["catalog_hash"] == LEGACY_HASH and len(old["weights"]) == 990
    with pytest.warns(CatalogMigrationWarning) as caught:
        w = load_weights(path)
    (message,) = [str(c.message) for c in caught]
    assert message.startswith(f"{path}: made for the earlier feature catalogue '{LEGACY_HASH}'")
    assert "attacks and defends" in message and "\n" not in message
    by_name = w.by_name()
    assert all(by_name[name] == value for name, value in old["weights"].items())
    added = [name for name in FEATURE_NAMES if name not in old["weights"]]
    assert len(added) == 2 * 2 * 6 * 5 and all(n.split(".")[1] in ("attacks", "defends") for n in added)
    assert all(by_name[name] == 0 for name in added)
    assert w.metadata == {**old["metadata"], "migrated_from_catalog": LEGACY_HASH}
    # classic gave the new terms 0, so the migrated file is today's classic
    assert np.array_equal(w.values, BUILDERS["classic"]().values)


def test_a_migrated_file_is_saved_under_the_current_catalogue(tmp_path: Path) -> None:
    with pytest.warns(CatalogMigrationWarning):
        w = load_weights(LEGACY_DIR / "classic.json")
    save_weights(tmp_path / "new.json", w)
    assert json.loads((tmp_path / "new.json").read_text())["catalog_hash"] == CATALOG_HASH != LEGACY_HASH
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second migration
        assert np.array_equal(load_weights(tmp_path / "new.json").values, w.values)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["weights"].update({"mg.attacks.pawn.knight": 5}),
         f"unknown feature 'mg.attacks.pawn.knight' in catalogue '{LEGACY_HASH}'"),
        (lambda d: d["weights"].pop("eg.pieces.tempo"), "missing weight 'eg.pieces.tempo'"),
        (lambda d: d.update(catalog_hash=LEGACY_HASH[::-1]), f"catalogue '{LEGACY_HASH[::-1]}'"),
    ],
)
def test_bad_files_of_the_earlier_catalogue_are_refused_in_one_line(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads((LEGACY_DIR / "classic.json").read_text())
    mutate(doc)
    path = _write(tmp_path, json.dumps(doc))
    with pytest.raises(WeightsFileError, match=re.escape(message)) as info:
        load_weights(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_an_unknown_catalogue_is_refused_naming_the_file_and_the_readable_ones(tmp_path: Path) -> None:
    doc = _doc()
    doc["catalog_hash"] = "feedfacecafebeef"
    path = _write(tmp_path, json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "tuner", "eval", "startpos", "--weights", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert str(path) in proc.stderr and "'feedfacecafebeef'" in proc.stderr
    assert CATALOG_HASH in proc.stderr and LEGACY_HASH in proc.stderr


def test_the_command_line_uses_an_old_file_with_one_note_line() -> None:
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    old = subprocess.run([sys.executable, "-m", "tuner", "eval", fen, "--weights", str(LEGACY_DIR / "classic.json")],
                         capture_output=True, text=True, check=True)
    new = subprocess.run([sys.executable, "-m", "tuner", "eval", fen, "--weights", "classic"],
                         capture_output=True, text=True, check=True)
    assert old.stdout == new.stdout and new.stderr == ""
    lines = old.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tuner eval: note: {LEGACY_DIR / 'classic.json'}: made for the "
                                                   f"earlier feature catalogue '{LEGACY_HASH}'")


def test_the_legacy_catalogue_is_the_old_files_names_in_their_order() -> None:
    old = json.loads((LEGACY_DIR / "classic.json").read_text())
    names = legacy_feature_names(LEGACY_HASH)
    assert names is not None and list(old["weights"]) == list(names)
    assert catalog_hash(names) == LEGACY_HASH and legacy_feature_names(CATALOG_HASH) is None
