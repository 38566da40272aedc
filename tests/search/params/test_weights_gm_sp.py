"""The built-in ``gm-sp`` weights (the recipe ``tuner/recipes/gm-sp.toml`` run on ``gm``'s own games
with the playing search, docs/selfplay.md): they load by name under the current catalogue with
their provenance, pass the evaluator's checks, keep plausible piece values, stay near ``gm`` (Texel
from ``gm``, one epoch kept) while differing from it, and the recipe they name runs."""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest

from search.evaluation.validate import check_weights
from search.params.catalog import CATALOG_HASH, FEATURE_INDEX
from search.params.weights import BUILTIN_SETS, load_weights, resolve
from tuner.methods.texel_config import TexelConfig

ROOT = Path(__file__).resolve().parents[3]
PIECES = ("pawn", "knight", "bishop", "rook", "queen")


def test_gm_sp_loads_by_name_under_the_current_catalogue_with_its_provenance() -> None:
    assert "gm-sp" in BUILTIN_SETS
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a migrated (old-catalogue) file would warn
        w = load_weights("gm-sp")
    check_weights(w.values)
    assert '"catalog_hash": "' + CATALOG_HASH + '"' in resolve("gm-sp").read_text()
    meta = w.metadata
    assert meta["name"] == "gm-sp" and meta["method"] == "texel" and meta["recipe"] == "tuner/recipes/gm-sp.toml"
    assert meta["config"]["start"] == "gm" and meta["config"]["lam"] == 1.0
    assert meta["selfplay"] == {"player": "gm@play", "games": 9000, "seed": 11, "nodes": 5000, "positions": 1108803}
    assert "+74.1" in meta["description"] and "gnuchess-book.epd" in meta["description"]


def test_the_recipe_is_the_run_behind_the_file() -> None:
    recipe = tomllib.loads((ROOT / "tuner" / "recipes" / "gm-sp.toml").read_text())
    config = load_weights("gm-sp").metadata["config"]
    assert recipe["method"] == config["method"] == "texel" and recipe["start"] == config["start"]
    for key, value in recipe["texel"].items():
        assert config[key] == value, key
    TexelConfig(**recipe["texel"])  # the recipe's settings are valid


@pytest.mark.parametrize("stage", ["mg", "eg"])
def test_gm_sp_piece_values_are_ordered_and_plausible(stage: str) -> None:
    w = load_weights("gm-sp").values
    pawn, knight, bishop, rook, queen = (int(w[FEATURE_INDEX[f"{stage}.material.{p}"]]) for p in PIECES)
    assert 50 <= pawn <= 200
    assert 2 * pawn < min(knight, bishop) and max(knight, bishop) < rook < queen
    assert 250 <= knight <= 450 and 250 <= bishop <= 450 and rook + pawn < queen


def test_gm_sp_is_gm_refined_not_replaced() -> None:
    gm, sp = load_weights("gm").values.astype(np.int64), load_weights("gm-sp").values.astype(np.int64)
    changed = np.flatnonzero(gm != sp)
    assert len(changed) > 100  # Texel moved many weights
    assert np.abs(gm - sp).max() < 200  # one epoch from gm: no weight far from where it started
