"""MMTO through the search: the PV-leaf gradient against finite differences of J, the stored
leaves against fresh searches, the constraint and L1 in real updates, resume and threads."""

from __future__ import annotations

import json

import chess
import numpy as np
import pytest
from tests.conftest import played_positions

from tuner.training.optim.grid import grid_adjacent_step
from objectives.leaf_table import objective_compact
from objectives.mmto import loss_and_gradient, objective, sweep_loss
from search.tree.search_api import sweep
from search.params.catalog import FEATURE_NAMES, select
from search.evaluation.evaluation_api import EVAL_SCALE
from search.params.weights import load_weights
from tuner.training.positions import check_played, from_boards
from tuner.methods.mmto import MmtoConfig, masks_of, search_training_set, train_mmto
from tuner.training.run_folder import RunDir
from tuner.training.training_data import TrainingData, load_training_data
from tuner.training.tune_config import TuneConfig


@pytest.fixture(scope="module")
def small_set(real_games: list[list[chess.Move]]) -> TrainingData:
    boards, moves, ids = played_positions(real_games, 900)
    pos = from_boards(boards, moves, ids)
    ids_arr = np.array(ids)
    train = pos.subset(np.flatnonzero(ids_arr % 5 != 0))
    val = pos.subset(np.flatnonzero(ids_arr % 5 == 0))
    return TrainingData(train, val, check_played(train))


def table_of(data: TrainingData, w: np.ndarray, *, window: float = 0.0, slope: float = 0.02, n: int | None = None):  # type: ignore[no-untyped-def]
    pos = data.train if n is None else data.train.subset(np.arange(n))
    index = data.train_played_index[: len(pos)]
    return search_training_set(pos, index, w, depth=1, budget=100_000, slope=slope, window=window,
                               n_threads=2, progress=False)


def test_stored_leaves_reproduce_the_searched_objective(small_set: TrainingData) -> None:
    w = load_weights("classic").values
    summary = table_of(small_set, w)
    t = summary.table
    offset, indptr, indices, values = t.tapered()
    j, _ = loss_and_gradient(t.pos_ptr, t.played, offset, indptr, indices, values, w, 0.02, EVAL_SCALE)
    assert j == pytest.approx(summary.j_main, rel=1e-12)
    # the compact table the updates use gives the same objective and gradient, bit for bit
    ref = objective(t.pos_ptr, t.played, offset, indptr, indices, values, w, 0.02, EVAL_SCALE)
    got = objective_compact(t.leaves, w, 0.02, EVAL_SCALE)
    assert got.total == ref.total and np.array_equal(got.gradient, ref.gradient) and np.any(got.gradient)
    assert t.nbytes * 5 < sum(a.nbytes for a in (t.pos_ptr, t.played, offset, indptr, indices, values))
    # and a window keeps the played move of every position
    windowed = table_of(small_set, w, window=100.0).table
    assert windowed.leaves.rows < t.leaves.rows
    assert np.all(windowed.played >= windowed.pos_ptr[:-1]) and np.all(windowed.played < windowed.pos_ptr[1:])


def test_pv_leaf_gradient_equals_finite_differences_where_pvs_do_not_change(small_set: TrainingData) -> None:
    # integer weights: scale classic by 64 and the slope by 1/64, so that a unit step is 1/64 cp
    scale = 64
    n = 60
    w = load_weights("classic").values.astype(np.int64) * scale
    slope = 0.02 / scale
    boards = small_set.train.boards[:n]
    base = sweep(boards, 1, w.astype(np.int32))
    summary = table_of(small_set, w.astype(np.int32), slope=slope, n=n)
    t = summary.table
    offset, indptr, indices, values = t.tapered()
    _, grad = loss_and_gradient(t.pos_ptr, t.played, offset, indptr, indices, values,
                                w.astype(np.int32), slope, EVAL_SCALE)
    rows = base.pos_ptr[:-1] + small_set.train_played_index[:n]
    candidates = np.flatnonzero(grad != 0)
    candidates = candidates[np.argsort(-np.abs(grad[candidates]), kind="stable")][:40]
    for i in candidates:
        # J over the positions none of whose PV leaves change when weight i moves by -1 or +1
        # (fresh sweeps) is differentiable in w_i: its central difference must equal the
        # gradient from the stored leaves of those same positions
        sweeps = {}
        changed = np.zeros(n, dtype=bool)
        for d in (+1, -1):
            e = w.copy()
            e[i] += d
            sweeps[d] = sw = sweep(boards, 1, e.astype(np.int32))
            row_changed = np.any(sw.leaves != base.leaves, axis=1) | (sw.kinds != base.kinds)
            changed |= np.add.reduceat(row_changed.astype(np.int64), base.pos_ptr[:-1]) > 0
        assert np.count_nonzero(changed) <= n // 4, f"feature {i}: {np.count_nonzero(changed)} of {n} changed"
        keep_rows = np.where(changed, -1, rows)
        fd = (sweep_loss(sweeps[1].pos_ptr, keep_rows, sweeps[1].scores, slope, EVAL_SCALE)
              - sweep_loss(sweeps[-1].pos_ptr, keep_rows, sweeps[-1].scores, slope, EVAL_SCALE)) / 2
        played = np.where(changed, -1, t.played)
        _, g = loss_and_gradient(t.pos_ptr, played, offset, indptr, indices, values,
                                 w.astype(np.int32), slope, EVAL_SCALE)
        assert fd == pytest.approx(g[i], rel=1e-4, abs=1e-12), f"feature {i}"
    assert len(candidates) == 40


def test_constraint_holds_after_every_update_step(small_set: TrainingData) -> None:
    common = TuneConfig(data="-", out="-")
    cfg = MmtoConfig(step=3)
    masks = masks_of(common, cfg)
    assert len(masks.constrained) == 1
    constrained = masks.constrained[0]
    assert constrained.sum() == 5 and not np.any(masks.l1 & constrained)
    w = load_weights("material").values
    total = int(w[constrained].sum())
    t = table_of(small_set, w, window=300.0).table
    for _ in range(32):
        grad = objective_compact(t.leaves, w, 0.02, EVAL_SCALE).gradient
        out = grid_adjacent_step(w, grad, step=3, trainable=masks.trainable, l1=cfg.l1, l1_mask=masks.l1,
                                 constrained=masks.constrained)
        assert int(out.weights[constrained].sum()) == total
        # the sum is held by moving, not by standing still: the two lowest derivatives pair
        # with the two highest (one step each way), the median weight stays
        moved = (out.weights - w)[constrained]
        assert sorted(moved.tolist()) == [-3, -3, 0, 3, 3], grad[constrained]
        assert moved[np.argsort(grad[constrained])[2]] == 0
        w = out.weights


def test_each_constraint_entry_holds_its_own_sum(small_set: TrainingData, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # middle- and end-game material, each pinned to its own start sum (the end-game scale
    # cannot drift while the middle game's is held), through whole runs of both losses
    common = TuneConfig(data="-", out="-")
    w0 = load_weights("material").values
    mg = np.array([n.startswith("mg.material") for n in FEATURE_NAMES])
    eg = np.array([n.startswith("eg.material") for n in FEATURE_NAMES])
    for loss in ("sigmoid", "softmax"):
        cfg = MmtoConfig(iterations=2, patience=5, loss=loss, constraint=("mg.material", "eg.material"))
        assert [g.sum() for g in masks_of(common, cfg).constrained] == [5, 5]
        w, metrics = _run(tmp_path, f"two-{loss}", small_set, common, cfg, w0)
        assert int(w[mg].sum()) == int(w0[mg].sum()) and int(w[eg].sum()) == int(w0[eg].sum())
        assert not np.array_equal(w[eg], w0[eg])  # held by pairs of moves, not by freezing
        assert all(r["constraint_residual"] == 0 for r in metrics)
        assert metrics[-1]["j_main"] < metrics[0]["j_main"]
    with pytest.raises(ValueError, match="twice"):
        MmtoConfig(constraint=("material", "mg.material")).validate()


def test_result_term_is_reported_fitted_and_resumed(sample_set, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # the ingested sample carries the games' results (the module's small set does not)
    common = TuneConfig(data=str(sample_set), out="-", start="classic", max_train=600, max_validation=200)
    data = load_training_data(common, progress=False)
    assert np.isfinite(data.train.results).mean() > 0.9
    w0 = load_weights("classic").values
    cfg = MmtoConfig(iterations=2, patience=5, loss="softmax", result_weight=4.0)
    full_w, full = _run(tmp_path, "hyb", data, common, cfg, w0)
    k = full[0]["k"]
    assert 0.0 < k < 0.05 and all(r["k"] == k for r in full)  # small on brilliancies, but fitted
    assert all(0.0 < r["j_result"] < 0.5 for r in full)
    assert full[0]["j"] == pytest.approx(full[0]["j_main"] + 4.0 * full[0]["j_result"] + full[0]["j_l1"])
    _run(tmp_path, "hyb-split", data, common, MmtoConfig(iterations=1, patience=5, loss="softmax",
                                                          result_weight=4.0), w0)
    split_w, split = _run(tmp_path, "hyb-split", data, common, cfg, w0, resume=True)
    assert np.array_equal(full_w, split_w) and _strip_seconds(full) == _strip_seconds(split)


def _run(tmp_path, name, data, common, cfg, w0, resume=False):  # type: ignore[no-untyped-def]
    run = RunDir(tmp_path / name)
    if not resume:
        run.create("")
    ckpt = run.load() if resume else None
    w = train_mmto(common, cfg, data, run, w0, resume=ckpt, progress=False, log=lambda _m: None)
    return w, run.read_metrics()


def _strip_seconds(records: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    return [{k: v for k, v in r.items() if not k.endswith("_seconds")} for r in records]


def test_training_lowers_j_and_resume_equals_an_uninterrupted_run(small_set: TrainingData, tmp_path) -> None:  # type: ignore[no-untyped-def]
    common = TuneConfig(data="-", out="-")
    w0 = load_weights("material").values
    full_w, full = _run(tmp_path, "full", small_set, common, MmtoConfig(iterations=3, patience=5), w0)
    assert [r["iteration"] for r in full] == [0, 1, 2, 3]
    assert full[-1]["j_main"] < full[0]["j_main"]
    assert full[-1]["match_train"] > full[0]["match_train"]
    assert all(r["constraint_residual"] == 0 for r in full)
    # interrupted after iteration 1 (its checkpoint written), then resumed to 3
    _run(tmp_path, "split", small_set, common, MmtoConfig(iterations=1, patience=5), w0)
    split_w, split = _run(tmp_path, "split", small_set, common, MmtoConfig(iterations=3, patience=5), w0, resume=True)
    assert np.array_equal(full_w, split_w)
    assert _strip_seconds(full) == _strip_seconds(split)
    saved = json.loads((tmp_path / "split" / "weights.json").read_text())
    assert saved["metadata"]["iteration"] == 3 and saved["metadata"]["method"] == "mmto"


def test_l1_drives_weights_the_data_never_uses_to_zero(small_set: TrainingData, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a pawn can never stand on its first rank: pst.pawn.a1..h1 have no feature value anywhere
    never = np.array(select(["mg.pst.pawn"])) & np.array([n.endswith(("1", "8")) for n in FEATURE_NAMES])
    assert never.sum() == 16
    w0 = load_weights("material").values.copy()
    w0[never] = 5
    common = TuneConfig(data="-", out="-", train=("pst",))
    w, metrics = _run(tmp_path, "l1", small_set, common, MmtoConfig(iterations=1, inner_steps=8, step=1), w0)
    assert np.all(w[never] == 0)
    # without L1 they keep their values (no gradient ever reaches them)
    w_free, _ = _run(tmp_path, "nol1", small_set, common, MmtoConfig(iterations=1, inner_steps=8, l1=0.0), w0)
    assert np.all(w_free[never] == 5)
    # frozen groups never move; the trained group did
    pst = np.array(select(["pst"]))
    assert np.array_equal(w[~pst], w0[~pst])
    assert np.count_nonzero(w[pst & ~never] != w0[pst & ~never]) > 300


def test_result_does_not_depend_on_the_thread_count(small_set: TrainingData, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w0 = load_weights("material").values
    cfg = MmtoConfig(iterations=1, inner_steps=4)
    w1, m1 = _run(tmp_path, "t1", small_set, TuneConfig(data="-", out="-", threads=1), cfg, w0)
    w2, m2 = _run(tmp_path, "t2", small_set, TuneConfig(data="-", out="-", threads=2), cfg, w0)
    assert np.array_equal(w1, w2) and _strip_seconds(m1) == _strip_seconds(m2)


def test_adam_option_lowers_the_objective_holds_constraints_and_resumes(small_set: TrainingData, tmp_path) -> None:  # type: ignore[no-untyped-def]
    common = TuneConfig(data="-", out="-")
    w0 = load_weights("material").values
    cfg = MmtoConfig(iterations=3, patience=5, loss="softmax", optimizer="adam", lr=2.0, inner_steps=16,
                     constraint=("mg.material", "eg.material"))
    full_w, full = _run(tmp_path, "adam", small_set, common, cfg, w0)
    assert full[-1]["j_main"] < full[0]["j_main"]
    assert not np.array_equal(full_w, w0)
    # the master weights hold each sum exactly; the rounded ones within half a unit a weight
    assert all(abs(r["constraint_residual"]) <= 2 for r in full)
    _run(tmp_path, "adam-split", small_set, common, MmtoConfig(**{**cfg.__dict__, "iterations": 1}), w0)
    split_w, split = _run(tmp_path, "adam-split", small_set, common, cfg, w0, resume=True)
    assert np.array_equal(full_w, split_w) and _strip_seconds(full) == _strip_seconds(split)


def test_value_target_mixes_scores_and_results_as_texel_does() -> None:
    from tuner.training.positions import Positions  # noqa: PLC0415
    from tuner.training.training_data import ValueTarget  # noqa: PLC0415

    small = from_boards([chess.Board()] * 4, [chess.Move.from_uci("e2e4")] * 4, [0, 1, 2, 3])
    results = np.array([1.0, 0.0, 0.5, np.nan])
    scores = np.array([100.0, np.nan, -200.0, 0.0])
    pos = Positions(small.boards, small.played, small.game_ids, small.labels, results, scores)
    sig = lambda x: 1.0 / (1.0 + np.exp(-0.004 * x))  # noqa: E731
    np.testing.assert_allclose(ValueTarget(1.0, 0.004).targets(pos), [sig(100), np.nan, sig(-200), 0.5])
    np.testing.assert_allclose(ValueTarget(0.25, 0.004).targets(pos),
                               [0.25 * sig(100) + 0.75, 0.0, 0.25 * sig(-200) + 0.375, np.nan])
    unscored = Positions(small.boards, small.played, small.game_ids, small.labels, results, None)
    np.testing.assert_allclose(ValueTarget(0.25, 0.004).targets(unscored), results)
    assert np.isnan(ValueTarget(1.0, 0.004).targets(unscored)).all()
    with pytest.raises(ValueError, match="result_k"):
        MmtoConfig(result_weight=1.0, result_lam=1.0).validate()
    with pytest.raises(ValueError, match="result_lam"):
        MmtoConfig(result_weight=1.0, result_k=0.004, result_lam=1.5).validate()


def test_result_term_on_search_scores_is_the_squared_error_to_their_sigmoid(small_set: TrainingData,
                                                                           tmp_path) -> None:  # type: ignore[no-untyped-def]
    # GM moves with self-play values: every training position carries a search score (here
    # its depth-2 value under gm, centipawns, mover's view) and the move term keeps its moves
    from tuner.training.positions import Positions  # noqa: PLC0415

    train = small_set.train.subset(np.arange(300))
    index = small_set.train_played_index[:300]
    gm = load_weights("gm").values
    deep = sweep(train.boards, 2, gm)
    value = np.array([deep.scores[a:z].max() for a, z in zip(deep.pos_ptr[:-1], deep.pos_ptr[1:])]) / EVAL_SCALE
    scored = Positions(train.boards, train.played, train.game_ids, train.labels, None, value)
    data = TrainingData(scored, small_set.validation, index)
    w0 = load_weights("classic").values
    k = 0.004
    cfg = MmtoConfig(iterations=1, patience=5, loss="softmax", result_weight=2.0, result_k=k, result_lam=1.0)
    _, metrics = _run(tmp_path, "values", data, TuneConfig(data="-", out="-"), cfg, w0)
    # the independent figure: each played move's depth-1 score under the start weights
    sw = sweep(train.boards, 1, w0)
    played = sw.scores[sw.pos_ptr[:-1] + index] / EVAL_SCALE
    def sigma(x: np.ndarray) -> np.ndarray:  # without overflow at mate scores
        return 0.5 * (1.0 + np.tanh(0.5 * x))

    want = np.mean((sigma(k * value) - sigma(k * played)) ** 2)
    assert metrics[0]["k"] == k and metrics[0]["j_result"] == pytest.approx(want, rel=1e-9)
    assert metrics[0]["j"] == pytest.approx(metrics[0]["j_main"] + 2.0 * want + metrics[0]["j_l1"])
    # the term pulls the weights toward the values: weighted 100 times more, it ends lower
    heavy = MmtoConfig(iterations=1, patience=5, loss="softmax", result_weight=200.0, result_k=k, result_lam=1.0)
    _, heavy_metrics = _run(tmp_path, "values-heavy", data, TuneConfig(data="-", out="-"), heavy, w0)
    assert heavy_metrics[0]["j_result"] == metrics[0]["j_result"]
    assert heavy_metrics[1]["j_result"] < min(metrics[1]["j_result"], metrics[0]["j_result"])
