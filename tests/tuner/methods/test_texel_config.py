"""tuner.methods.texel_config: which positions value training keeps, and their targets
lam * sigma(K score) + (1 - lam) * result."""

from __future__ import annotations

import math

import chess
import numpy as np
import pytest
from tests.conftest import played_positions

from search.core.quiet import tactical_flags
from tuner.errors import TunerError
from tuner.methods.texel_config import TexelConfig, uses_scores, value_positions, value_targets
from tuner.training.positions import Positions, from_boards


@pytest.fixture(scope="module")
def base(real_games: list[list[chess.Move]]) -> Positions:
    boards, moves, ids = played_positions(real_games, 600, min_ply=8)
    return from_boards(boards, moves, ids)


def _with(pos: Positions, results: np.ndarray | None, scores: np.ndarray | None) -> Positions:
    return Positions(pos.boards, pos.played, pos.game_ids, pos.labels, results, scores)


def test_targets_mix_the_scores_sigmoid_and_the_results(base: Positions) -> None:
    rng = np.random.default_rng(1)
    results = rng.choice([0.0, 0.5, 1.0], size=len(base))
    scores = rng.normal(0, 300, size=len(base))
    pos = _with(base, results, scores)
    k = 0.004
    sig = 1.0 / (1.0 + np.exp(-k * scores))
    for lam in (0.0, 0.3, 1.0):
        got = value_targets(pos, TexelConfig(lam=lam), k)
        assert np.allclose(got, lam * sig + (1 - lam) * results, rtol=0, atol=1e-12)


def test_a_set_without_scores_is_fitted_to_its_results_whatever_lam(base: Positions) -> None:
    results = np.full(len(base), 0.5)
    pos = _with(base, results, None)
    assert not uses_scores(pos, TexelConfig(lam=1.0))
    assert np.array_equal(value_targets(pos, TexelConfig(lam=1.0), 0.004), results)
    all_nan = _with(base, results, np.full(len(base), np.nan))
    assert not uses_scores(all_nan, TexelConfig(lam=0.5))


def test_quiet_filter_drops_checks_tactical_moves_and_big_scores(base: Positions) -> None:
    scores = np.zeros(len(base))
    scores[::7] = 5000.0
    results = np.full(len(base), 1.0)
    results[::11] = np.nan  # unfinished
    pos = _with(base, results, scores)
    check, tactical = tactical_flags(base.boards, base.played)
    kept, dropped = value_positions(pos, TexelConfig(lam=0.5, score_cap=2000), "training")
    unfinished = ~np.isfinite(results)
    big = np.abs(scores) > 2000
    want = ~unfinished & ~check & ~tactical & ~big
    assert len(kept) == int(want.sum())
    assert dropped["unfinished"] == int(unfinished.sum())
    assert dropped["in_check"] == int((~unfinished & check).sum())
    assert dropped["tactical_move"] == int((~unfinished & ~check & tactical).sum())
    assert dropped["score_cap"] == int((~unfinished & ~check & ~tactical & big).sum())
    assert dropped["tactical_move"] > 0 and dropped["score_cap"] > 0
    everything, none = value_positions(pos, TexelConfig(lam=0.5, quiet_only=False), "training")
    assert len(everything) == int((~unfinished).sum()) and set(none) == {"unfinished"}


def test_lam_one_needs_no_results_and_results_are_needed_otherwise(base: Positions) -> None:
    scores = np.full(len(base), 20.0)
    kept, dropped = value_positions(_with(base, None, scores), TexelConfig(lam=1.0, quiet_only=False), "training")
    assert len(kept) == len(base) and not dropped
    with pytest.raises(TunerError, match="no game results"):
        value_positions(_with(base, None, scores), TexelConfig(lam=0.5), "training")


@pytest.mark.parametrize("bad", [{"lam": 1.5}, {"lam": -0.1}, {"score_cap": 0}, {"l2_start": -1.0},
                                 {"network_lr_end": -0.001}, {"network_lr_end": float("nan")}])
def test_settings_out_of_range_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        TexelConfig(**bad).validate()  # type: ignore[arg-type]


def test_the_network_step_falls_along_a_half_cosine_over_the_epochs() -> None:
    cfg = TexelConfig(epochs=5, network_lr=0.004, network_lr_end=0.0004)
    got = [cfg.network_lr_of(e) for e in range(1, 6)]
    want = [0.0004 + 0.0036 * (1 + math.cos(math.pi * (e - 1) / 4)) / 2 for e in range(1, 6)]
    assert got == pytest.approx(want, rel=1e-12)
    assert got[0] == 0.004 and got[2] == pytest.approx(0.0022) and got[4] == pytest.approx(0.0004)
    assert all(a > b for a, b in zip(got, got[1:]))
    # the first epoch's step whatever the epochs (a run resumed to more epochs begins alike); none past the end
    assert TexelConfig(epochs=1, network_lr=0.004, network_lr_end=0.0004).network_lr_of(1) == 0.004
    assert cfg.network_lr_of(9) == pytest.approx(0.0004)
    # without a schedule, network_lr throughout
    assert {TexelConfig(epochs=5, network_lr=0.004).network_lr_of(e) for e in range(1, 6)} == {0.004}
