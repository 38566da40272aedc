"""The built-in ``nnue`` network (the recipe ``tuner/recipes/nnue.toml`` run on self-play data,
docs/network.md "A pure network trained on self-play"): it loads by name with its provenance, the
recipe holds the settings that made it, it is a pure network (no linear part), its integer
scores are the plain-numpy reference's on the shipped games, and it plays sound chess (sign
and size of its scores in plain positions)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import chess
import numpy as np

from tests.oracles.network_reference import quantized_score

from search.core.convert import from_chess, from_fen, move_to_uci
from search.evaluation.evaluators import load_evaluator
from search.evaluation.network import NetworkShape, QuantizedNetwork
from search.evaluation.network_kernels import network_evaluate_batch_kernel
from search.tree.search_api import search

ROOT = Path(__file__).resolve().parents[3]


def nnue() -> QuantizedNetwork:
    q = load_evaluator("nnue")
    assert isinstance(q, QuantizedNetwork)
    return q


def test_nnue_loads_by_name_with_its_provenance_and_recipe() -> None:
    q = nnue()
    assert q.shape == NetworkShape(h=128, h2=0, h3=0, buckets="none") and q.shape.direct
    assert q.linear is None
    meta = q.metadata
    assert meta["name"] == "nnue" and meta["method"] == "texel" and meta["recipe"] == "tuner/recipes/nnue.toml"
    recipe = tomllib.loads((ROOT / meta["recipe"]).read_text())
    cfg = meta["config"]
    assert cfg["start"] == recipe["start"] == "network:128"
    assert (cfg["keep"], cfg["max_validation"]) == (recipe["keep"], recipe["max_validation"])
    assert {k: cfg.get(k) for k in recipe["texel"]} == recipe["texel"]
    assert cfg["stream"] == "on"  # 33 M training rows, read a window of chunks at a time
    # kept on validation: the best epoch's figures are the ones recorded
    assert meta["kept"] == "best" and meta["best_by"] == "e_validation"
    assert 1 <= meta["best_iteration"] <= recipe["texel"]["epochs"]
    assert meta["validation_positions"] == 20000 and 0 < meta["validation_e"] < 0.01


def test_nnue_scores_are_the_references_on_the_shipped_games(real_boards: list[chess.Board]) -> None:
    q = nnue()
    boards = real_boards[::6]
    arr = np.stack([from_chess(b) for b in boards])
    got = network_evaluate_batch_kernel(arr, q.kernel_args())
    ref = np.array([quantized_score(b, q.params, q.shape.bucket_table) for b in boards])
    assert np.array_equal(got, ref)
    assert len(set(got.tolist())) > len(boards) // 4  # a trained evaluation, not a constant


def test_nnue_values_material_and_plays_the_obvious_move() -> None:
    q = nnue()
    start = network_evaluate_batch_kernel(from_fen(chess.STARTING_FEN)[None], q.kernel_args())[0]
    up_queen = network_evaluate_batch_kernel(
        from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")[None], q.kernel_args())[0]
    down_queen = network_evaluate_batch_kernel(
        from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1")[None], q.kernel_args())[0]
    assert abs(start) < 24 * 60  # the start is about level (eval units: 24 a centipawn)
    assert up_queen > 24 * 500 and down_queen < -24 * 500
    # a free queen is taken
    r = search(from_fen("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1"), 2, q)
    assert move_to_uci(int(r.pv[0])) == "d2d5" and r.score > 24 * 500
