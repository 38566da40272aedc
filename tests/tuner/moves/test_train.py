"""Training the move model (tuner/moves/train.py): a tiny run on positions of the shipped games
learns a planted preference, chooses by the validation split, and is reproducible; a run on some
feature groups leaves the others at 0."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from objectives.move_choice import MoveChoiceSet
from search.core.convert import from_chess
from search.pls.move_catalog import (GROUP_INDEX, GROUP_NAMES, GROUP_OFFSETS, GROUP_SIZES, MOVE_FEATURE_INDEX,
                                     N_MOVE_FEATURES, PREMOVE_GROUPS)
from search.pls.move_model import move_features, slot_scores
from tuner.moves.measure import figures
from tuner.moves.train import MoveTrainConfig, fit, group_indices, restricted

#: the planted chooser: these features' weights, every other 0 (ties broken by the first move)
PLANTED = {"capture.pawn.knight": 6.0, "castle.king_side": 5.0, "check.queen": 4.0, "piece_to.knight.f3": 3.0,
           "piece_to.pawn.d4": 2.5, "see.capture.ge500": 2.0, "see.quiet.le-500": -6.0, "promotion.queen": 5.0}


def planted_set(boards: list[chess.Board]) -> tuple[MoveChoiceSet, np.ndarray]:
    """The positions with the planted chooser's move as the played one."""
    mf = move_features(np.stack([from_chess(b) for b in boards]))
    w = np.zeros(N_MOVE_FEATURES)
    for name, value in PLANTED.items():
        w[MOVE_FEATURE_INDEX[name]] = value
    w += np.random.default_rng(0).normal(0, 0.5, N_MOVE_FEATURES)  # every feature matters a little
    scores = slot_scores(mf.slots, w)
    played = np.array([int(np.argmax(scores[a:z])) for a, z in zip(mf.pos_ptr[:-1], mf.pos_ptr[1:])], dtype=np.int64)
    return MoveChoiceSet(mf.pos_ptr, played, mf.slots), w


@pytest.fixture(scope="module")
def planted(real_boards: list[chess.Board]) -> tuple[MoveChoiceSet, MoveChoiceSet, np.ndarray]:
    boards = [b for b in real_boards if b.legal_moves.count() > 1]
    train, w = planted_set(boards[:2400])
    validation, _ = planted_set(boards[2400:])
    return train, validation, w


def test_a_tiny_run_learns_a_planted_preference(planted: tuple[MoveChoiceSet, MoveChoiceSet, np.ndarray]) -> None:
    train, validation, truth = planted
    start = figures(validation, np.zeros(N_MOVE_FEATURES))
    cfg = MoveTrainConfig(epochs=12, batch_size=256, lr=0.1, l2=(0.0, 0.1))
    lines: list[str] = []
    w, l2, epoch, fig, history = fit(train, validation, cfg, log=lines.append)
    assert len(history) == len(lines) == 24
    assert l2 == 0.0  # the strong L2 shrinks the planted weights: worse on validation
    assert round(fig.loss, 5) == min(h["loss"] for h in history) and fig.loss < 0.5 * start.loss
    assert figures(validation, truth).top1 == 1.0
    assert fig.top1 > 0.6 > 0.1 > start.top1 and fig.top3 > 0.85  # from 4 % to about 71 %
    # the learnt weights carry the planted preferences' signs
    for name, value in PLANTED.items():
        assert w[MOVE_FEATURE_INDEX[name]] * np.sign(value) > 0.5, name


def test_the_run_is_reproducible_whatever_the_threads(planted: tuple[MoveChoiceSet, MoveChoiceSet, np.ndarray]) -> None:
    train, validation, _ = planted
    one = fit(train, validation, MoveTrainConfig(epochs=1, batch_size=512, l2=(0.0,), threads=1))
    two = fit(train, validation, MoveTrainConfig(epochs=1, batch_size=512, l2=(0.0,), threads=2))
    np.testing.assert_array_equal(one[0], two[0])


def test_bad_settings_are_refused() -> None:
    for bad in ({"epochs": 0}, {"lr": 0.0}, {"l2": ()}, {"l2": (-1.0,)}, {"max_train": -1}, {"groups": ("pieces",)}):
        with pytest.raises(ValueError):
            MoveTrainConfig(**bad).validate()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown feature group 'pieces': one of premove, piece_to"):
        group_indices(("castle", "pieces"))


def test_a_run_on_some_groups_leaves_the_others_at_zero(planted: tuple[MoveChoiceSet, MoveChoiceSet, np.ndarray]) -> None:
    """``groups``: only the named groups (``premove`` stands for PREMOVE_GROUPS) learn; the others'
    weights stay 0, and the planted preferences in the kept groups are still learnt."""
    assert group_indices(("premove", "check")) == sorted(GROUP_INDEX[g] for g in (*PREMOVE_GROUPS, "check"))
    assert group_indices(()) == list(range(len(GROUP_NAMES)))
    train, validation, _ = planted
    keep = ("premove",)
    cut = restricted(train, keep)
    assert restricted(train, ()) is train
    w, *_ = fit(cut, restricted(validation, keep), MoveTrainConfig(epochs=4, batch_size=256, lr=0.1, l2=(0.0,)))
    inside = np.zeros(N_MOVE_FEATURES, dtype=bool)
    for g in PREMOVE_GROUPS:
        inside[GROUP_OFFSETS[GROUP_INDEX[g]]:GROUP_OFFSETS[GROUP_INDEX[g]] + GROUP_SIZES[GROUP_INDEX[g]]] = True
    assert not np.any(w[~inside]) and np.count_nonzero(w[inside]) > 100
    for name in ("capture.pawn.knight", "castle.king_side", "piece_to.knight.f3", "see.quiet.le-500"):
        assert w[MOVE_FEATURE_INDEX[name]] * np.sign(PLANTED[name]) > 0.5, name
    assert w[MOVE_FEATURE_INDEX["check.queen"]] == 0.0
