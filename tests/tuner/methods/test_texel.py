"""Texel's method over the search: quiescence leaves, the gradient against finite differences of
fresh searches, and a synthetic recovery of known weights from results made by sigma(K q)."""

from __future__ import annotations

import chess
import numpy as np
import pytest
from tests.conftest import played_positions

from objectives.texel import loss, loss_and_gradient, scores
from search.tree.search_api import search_many
from search.params.catalog import FEATURE_INDEX, N_FEATURES
from search.evaluation.evaluation_api import EVAL_SCALE
from search.params.weights import load_weights
from tuner.training.positions import Positions, check_played, from_boards
from tuner.methods.texel import TexelConfig, TexelTrainer, quiescence_leaves
from tuner.training.training_data import TrainingData
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig

PIECES = ("knight", "bishop", "rook", "queen")


@pytest.fixture(scope="module")
def positions(real_games: list[list[chess.Move]]) -> Positions:
    boards, moves, ids = played_positions(real_games, 2000, min_ply=8)
    return from_boards(boards, moves, ids)


def test_leaf_rows_reproduce_the_quiescence_scores(positions: Positions) -> None:
    w = load_weights("classic").values
    lv = quiescence_leaves(positions.boards, w, budget=100_000, n_threads=1)
    q = scores(lv.offset, lv.indptr, lv.indices, lv.values, w)
    searched = search_many(positions.boards, 0, w).scores
    assert np.array_equal(q.astype(np.int64), searched)
    assert np.count_nonzero(lv.offset) < len(positions)  # nearly every row is a leaf evaluation


def _rows_of(lv) -> list[tuple[int, bytes, bytes]]:  # type: ignore[no-untyped-def]
    return [(int(lv.offset[r]), lv.indices[lv.indptr[r]:lv.indptr[r + 1]].tobytes(),
             lv.values[lv.indptr[r]:lv.indptr[r + 1]].tobytes()) for r in range(len(lv.offset))]


def test_gradient_equals_finite_differences_of_fresh_searches(positions: Positions) -> None:
    # E over the positions whose quiescence leaf stays the same when weight i moves by -1 and
    # +1 (fresh searches each time) is differentiable there: its central difference must equal
    # the gradient computed from the stored leaves of those positions. The results are a fixed
    # pseudo-random draw: the identity holds for any targets.
    w = load_weights("classic").values
    results = np.random.default_rng(0).choice([0.0, 0.5, 1.0], size=len(positions))
    k = 0.006
    lv = quiescence_leaves(positions.boards, w, budget=100_000, n_threads=1)
    base = _rows_of(lv)
    names = ("mg.material.knight", "eg.material.rook", "mg.pst.knight.f3", "eg.pst.king.e2",
             "mg.material.bishop", "eg.material.pawn", "mg.mobility.knight.4", "eg.pawns.doubled")
    for name in names:
        i = FEATURE_INDEX[name]
        fresh = {}
        for h in (-1, 1):
            wh = w.copy()
            wh[i] += h
            fresh[h] = (wh, quiescence_leaves(positions.boards, wh, budget=100_000, n_threads=1))
        same = np.array([a == b == c for a, b, c in zip(base, _rows_of(fresh[-1][1]), _rows_of(fresh[1][1]))])
        rows = np.flatnonzero(same)
        assert len(rows) >= 0.9 * len(positions), name
        e = {h: loss(f.offset, f.indptr, f.indices, f.values, results, wh, k, EVAL_SCALE, rows=rows)
             for h, (wh, f) in fresh.items()}
        _, grad = loss_and_gradient(lv.offset, lv.indptr, lv.indices, lv.values, results, w, k, EVAL_SCALE, rows=rows)
        assert grad[i] != 0.0, name
        assert (e[1] - e[-1]) / 2 == pytest.approx(grad[i], rel=1e-4), name


def _scored(positions: Positions) -> tuple[np.ndarray, Positions, np.ndarray, list[str]]:
    """The self-play case: every position carries a score (its quiescence value under classic,
    centipawns, side to move's view) and no result. Returns classic's weights, those positions,
    a start with the middle- and end-game values of N, B, R, Q at 500, and those weights' names."""
    truth = load_weights("classic").values
    lv = quiescence_leaves(positions.boards, truth, budget=100_000, n_threads=2)
    q = scores(lv.offset, lv.indptr, lv.indices, lv.values, truth) / EVAL_SCALE
    pos = Positions(positions.boards, positions.played, positions.game_ids, positions.labels, None, q)
    start = truth.copy()
    names = [f"{s}.material.{p}" for s in ("mg", "eg") for p in PIECES]
    for n in names:
        start[FEATURE_INDEX[n]] = 500
    return truth, pos, start, names


@pytest.mark.parametrize("target", ["results", "scores"])
def test_recovers_piece_values_from_results_or_scores(positions: Positions, target: str) -> None:
    # targets made by known weights w* = classic: results R = sigma(K q(w*)) (continuous), or the
    # scores q(w*) themselves with lam = 1 (the self-play case); training only the middle- and
    # end-game values of N, B, R, Q from 500 each must bring them back within 10 % (the leaves
    # move as the values do)
    truth, scored, start, names = _scored(positions)
    k = 0.004
    pos = scored
    if target == "results":
        assert scored.scores is not None
        results = 1.0 / (1.0 + np.exp(-np.clip(k * scored.scores, -50.0, 50.0)))
        pos = Positions(scored.boards, scored.played, scored.game_ids, scored.labels, results)
    half = len(positions) // 2
    train, val = pos.subset(np.arange(half)), pos.subset(np.arange(half, len(pos)))
    data = TrainingData(train, val, check_played(train))
    common = TuneConfig(data="-", out="-", method="texel", train=tuple(names), threads=2)
    cfg = TexelConfig(epochs=6, lr=8.0, steps=60, k=k, lam=1.0 if target == "scores" else 0.0)
    trainer = TexelTrainer(common, cfg, data, start, RunContext.local(common.threads))
    first = trainer.begin()
    assert first["left_out"] > 0  # the quiet filter took checks and captures out
    for it in range(1, cfg.epochs + 1):
        last = trainer.step(it)
    got = trainer.weights()
    assert last["e_train"] < first["e_train"] / 20
    for n in names:
        want = int(truth[FEATURE_INDEX[n]])
        assert abs(int(got[FEATURE_INDEX[n]]) / want - 1) <= 0.10, (n, int(got[FEATURE_INDEX[n]]), want)
    untouched = np.ones(N_FEATURES, dtype=bool)
    untouched[[FEATURE_INDEX[n] for n in names]] = False
    assert np.array_equal(got[untouched], truth[untouched])


def test_l2_start_holds_the_weights_near_their_start(positions: Positions) -> None:
    # the same pull as above but with a strong l2_start: the values barely leave 500
    _, pos, start, names = _scored(positions)
    data = TrainingData(pos, pos.subset(np.arange(0)), check_played(pos))
    common = TuneConfig(data="-", out="-", method="texel", train=tuple(names), threads=2)
    moved = {}
    for l2 in (0.0, 1.0):
        cfg = TexelConfig(epochs=2, lr=8.0, steps=30, k=0.004, lam=1.0, l2_start=l2)
        trainer = TexelTrainer(common, cfg, data, start, RunContext.local(common.threads))
        trainer.begin()
        for it in (1, 2):
            trainer.step(it)
        moved[l2] = max(abs(int(trainer.weights()[FEATURE_INDEX[n]]) - 500) for n in names)
    assert moved[0.0] > 100
    assert moved[1.0] < moved[0.0] / 5
