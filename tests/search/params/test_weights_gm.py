"""The built-in ``gm`` weights (the recipe ``tuner/recipes/gm.toml`` run on the grandmaster games,
docs/quality.md): they load under the current catalogue with their provenance, pass the
evaluator's checks, keep plausible piece values, and (on grandmaster positions, where the GM
games are present) predict the played move better than ``classic``."""

from __future__ import annotations

import warnings

import chess
import numpy as np
import pytest
from tests.conftest import played_positions

from search.tree.search_api import move_match
from search.params.catalog import CATALOG_HASH, FEATURE_INDEX
from search.core.convert import from_chess, uci_key
from search.evaluation.validate import check_weights
from search.params.weights import load_weights, resolve

PIECES = ("pawn", "knight", "bishop", "rook", "queen")


def test_gm_loads_under_the_current_catalogue_with_its_provenance() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a migrated (old-catalogue) file would warn
        gm = load_weights("gm")
    check_weights(gm.values)
    assert '"catalog_hash": "' + CATALOG_HASH + '"' in resolve("gm").read_text()
    meta = gm.metadata
    assert meta["name"] == "gm" and meta["method"] == "mmto" and meta["recipe"] == "tuner/recipes/gm.toml"
    assert meta["config"]["loss"] == "softmax"
    assert 0.30 < meta["validation_top1"] < 0.5
    assert not np.array_equal(gm.values, load_weights("classic").values)
    # the attack and defence terms were learnt (classic has them at 0)
    assert any(gm.values[i] != 0 for n, i in FEATURE_INDEX.items() if ".attacks." in n or ".defends." in n)


@pytest.mark.parametrize("stage", ["mg", "eg"])
def test_gm_piece_values_are_ordered_and_plausible(stage: str) -> None:
    w = load_weights("gm").values
    pawn, knight, bishop, rook, queen = (int(w[FEATURE_INDEX[f"{stage}.material.{p}"]]) for p in PIECES)
    assert 50 <= pawn <= 200
    assert 2 * pawn < min(knight, bishop) and max(knight, bishop) < rook < queen
    assert 250 <= knight <= 450 and 250 <= bishop <= 450 and rook + pawn < queen


@pytest.mark.gm
def test_gm_predicts_grandmaster_moves_better_than_classic(gm_games: list[list[chess.Move]]) -> None:
    # about 10,000 positions of the GM collection (the tuning saw some of them: this guards the
    # shipped file against regressions; the held-out figure is bench/quality.py's)
    boards, moves, _ = played_positions(gm_games, 12_000)
    arr = np.stack([from_chess(b) for b in boards])
    played = np.array([uci_key(m.uci()) for m in moves], dtype=np.int32)
    credit = move_match(arr, played, np.stack([load_weights("classic").values, load_weights("gm").values]), 1)
    classic, gm = credit.mean(axis=1)
    assert len(boards) > 8000
    assert gm > classic + 0.01, (classic, gm)  # measured: 27.2 % and 29.0 %
