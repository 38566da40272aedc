"""MMTO through the probability-limited search (``[mmto] pls_threshold``): the sweep MMTO stores is
:func:`search.pls.pls.pls_sweep`'s (its played scores, and the stored leaves reproduce the searched
objective), threshold 1 is the depth-1 sweep, a short run lowers J, the TOML setting is read and
checked, and a network start is refused in one line."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest
from tests.conftest import played_positions

from objectives.mmto import loss_and_gradient
from search.evaluation.evaluation_api import EVAL_SCALE
from search.pls.move_model import load_move_model
from search.pls.pls import pls_sweep
from search.params.weights import load_weights
from tuner.config import load_toml
from tuner.errors import TunerError
from tuner.methods.mmto import search_training_set, train_mmto
from tuner.methods.mmto_config import MmtoConfig, refusing_pls
from tuner.training.positions import check_played, from_boards
from tuner.training.run_folder import RunDir
from tuner.training.training_data import TrainingData
from tuner.training.tune_config import TuneConfig

THRESHOLD = 1 / 32


@pytest.fixture(scope="module")
def small_set(real_games: list[list[chess.Move]]) -> TrainingData:
    boards, moves, ids = played_positions(real_games, 300)
    pos = from_boards(boards, moves, ids)
    ids_arr = np.array(ids)
    train = pos.subset(np.flatnonzero(ids_arr % 5 != 0))
    return TrainingData(train, pos.subset(np.flatnonzero(ids_arr % 5 == 0)), check_played(train))


def _search(data: TrainingData, w: np.ndarray, threshold: float, depth: int = 1):  # type: ignore[no-untyped-def]
    return search_training_set(data.train, data.train_played_index, w, depth=depth, budget=100_000, slope=0.02,
                               window=0.0, n_threads=2, progress=False, pls_threshold=threshold)


def test_mmto_stores_the_pls_sweep(small_set: TrainingData) -> None:
    w = load_weights("classic").values
    summary = _search(small_set, w, THRESHOLD)
    sw = pls_sweep(small_set.train.boards, THRESHOLD, w, load_move_model("gm"))
    assert np.array_equal(summary.played_scores, sw.scores[sw.pos_ptr[:-1] + small_set.train_played_index])
    assert summary.nodes == int(sw.nodes.sum())
    t = summary.table
    offset, indptr, indices, values = t.tapered()
    j, _ = loss_and_gradient(t.pos_ptr, t.played, offset, indptr, indices, values, w, 0.02, EVAL_SCALE)
    assert j == pytest.approx(summary.j_main, rel=1e-12)  # the stored leaves are the searched ones
    # threshold 1: every child by quiescence, the depth-1 sweep; a lower one searches more
    one, depth1 = _search(small_set, w, 1.0), _search(small_set, w, 0.0)
    assert np.array_equal(one.played_scores, depth1.played_scores) and one.j_main == depth1.j_main
    assert summary.nodes > depth1.nodes


def test_a_short_pls_run_lowers_the_objective(small_set: TrainingData, tmp_path: Path) -> None:
    run = RunDir(tmp_path / "pls")
    run.create("")
    cfg = MmtoConfig(iterations=1, patience=5, pls_threshold=THRESHOLD)
    train_mmto(TuneConfig(data="-", out="-"), cfg, small_set, run, load_weights("material").values, progress=False,
               log=lambda _m: None)
    metrics = run.read_metrics()
    assert [r["iteration"] for r in metrics] == [0, 1] and metrics[-1]["j_main"] < metrics[0]["j_main"]


def test_the_toml_setting_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "tune.toml"
    path.write_text("[mmto]\npls_threshold = 0.03125\npls_model = \"uniform\"\n")
    cfg = load_toml(MmtoConfig, path, "mmto")
    assert (cfg.pls_threshold, cfg.pls_model) == (0.03125, "uniform")
    path.write_text("[mmto]\npls_threshold = 2.0\n")
    with pytest.raises(TunerError, match="tune.toml: pls_threshold must be a probability"):
        load_toml(MmtoConfig, path, "mmto")


def test_a_network_start_is_refused_in_one_line() -> None:
    make = refusing_pls(lambda *args: "network trainer")
    assert make(None, MmtoConfig(), None, None, None) == "network trainer"
    with pytest.raises(TunerError, match="takes linear weights, not a network") as err:
        make(None, MmtoConfig(pls_threshold=THRESHOLD), None, None, None)
    assert "\n" not in str(err.value)


def test_tune_refuses_a_network_start_with_pls_before_loading_the_positions(
        sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.cli import main  # noqa: PLC0415

    argv = ["tune", "--method", "mmto", "--data", str(sample_set), "--out", str(tmp_path / "run"),
            "--start", "network:8x8x8", "--max-train", "50", "--max-validation", "20", "--iterations", "1"]
    assert main([*argv, "--pls-threshold", str(THRESHOLD)]) == 2
    err = capsys.readouterr().err
    assert "takes linear weights, not a network start" in err
    assert "training and" not in err  # refused before the positions were loaded (their count is logged)
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
