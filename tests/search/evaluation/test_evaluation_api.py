"""The numba evaluator: score == w . phi, colour symmetry, batching, catalogue integrity."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from search.params.catalog import CATALOG_HASH, FEATURE_GROUPS, FEATURE_NAMES, N_BASE, N_FEATURES, PHASE_MAX, group_mask
from search.core.convert import from_chess, from_fen
from search.evaluation.evaluation_api import evaluate, evaluate_batch, features, features_batch
from search.evaluation.feature_kernels import phase_of
from search.params.weights import load_weights


@pytest.fixture(scope="module")
def sample_boards(real_boards: list[chess.Board]) -> list[chess.Board]:
    return real_boards[::4]  # 808 positions spread over the games


@pytest.fixture(scope="module")
def random_weights() -> np.ndarray:
    return np.random.default_rng(7).integers(-300, 300, N_FEATURES).astype(np.int32)


# base terms per group, counted from docs/features.md
DOC_TERMS = {
    "material": 5,  # pawn, knight, bishop, rook, queen
    "pst": 6 * 64,  # six piece types x 64 squares
    "pawns": 3 + 6 + 6 + 2,  # doubled, isolated, backward; passed and passed_free rank2..7; phalanx, supported
    "mobility": 9 + 14 + 15 + 28,  # knight 0..8, bishop 0..13, rook 0..14, queen 0..27
    "king": 4 + 5 + 5,  # shield1, shield2, open_file, semiopen_file; zone_attackers x5; zone_attack_count.1..5
    "pieces": 9,  # bishop_pair, rook_open/semiopen_file, rook_seventh, knight_outpost, 3 threats, tempo
    "attacks": 6 * 5,  # attacker pawn..king x target pawn..queen
    "defends": 6 * 5,  # defender pawn..king x target pawn..queen
}


def test_catalogue_names_are_unique_and_split_in_two_stages() -> None:
    assert N_BASE == sum(DOC_TERMS.values()) == 555
    assert len(set(FEATURE_NAMES)) == N_FEATURES == 2 * N_BASE
    assert all(n.startswith("mg.") for n in FEATURE_NAMES[:N_BASE])
    assert all(n.startswith("eg.") for n in FEATURE_NAMES[N_BASE:])
    assert [n[3:] for n in FEATURE_NAMES[:N_BASE]] == [n[3:] for n in FEATURE_NAMES[N_BASE:]]
    assert len(CATALOG_HASH) == 16
    assert list(dict.fromkeys(FEATURE_GROUPS)) == list(DOC_TERMS)  # group of each feature, in order
    for group, n in DOC_TERMS.items():
        assert sum(group_mask([group])) == 2 * n, group
    with pytest.raises(ValueError, match="unknown feature group"):
        group_mask(["materiel"])


def test_score_is_dot_product_of_weights_and_features(sample_boards, random_weights) -> None:  # type: ignore[no-untyped-def]
    for board in sample_boards:
        b = from_chess(board)
        idx, val = features(b)
        assert np.all(np.diff(idx) > 0) and np.all(val != 0)
        dot = int(np.dot(random_weights[idx].astype(np.int64), val.astype(np.int64)))
        assert evaluate(b, random_weights) == dot / PHASE_MAX


def test_mirrored_position_has_same_features_and_score(sample_boards, random_weights) -> None:  # type: ignore[no-untyped-def]
    for board in sample_boards:
        b, m = from_chess(board), from_chess(board.mirror())
        i1, v1 = features(b)
        i2, v2 = features(m)
        assert np.array_equal(i1, i2) and np.array_equal(v1, v2), board.fen()
        assert evaluate(b, random_weights) == evaluate(m, random_weights)


def test_values_are_tapered_by_phase(sample_boards) -> None:  # type: ignore[no-untyped-def]
    for board in sample_boards[:500]:
        b = from_chess(board)
        phase = phase_of(b)
        idx, val = features(b)
        mg = {i: v for i, v in zip(idx, val) if i < N_BASE}
        eg = {i - N_BASE: v for i, v in zip(idx, val) if i >= N_BASE}
        if 0 < phase < PHASE_MAX:
            assert mg.keys() == eg.keys()
            for i in mg:
                assert mg[i] * (PHASE_MAX - phase) == eg[i] * phase
        elif phase == PHASE_MAX:
            assert not eg
        else:
            assert not mg


def test_batch_kernels_equal_single_position_calls(sample_boards, random_weights) -> None:  # type: ignore[no-untyped-def]
    boards = np.stack([from_chess(b) for b in sample_boards[:400]])
    indptr, indices, values = features_batch(boards)
    scores = evaluate_batch(boards, random_weights)
    for p in range(len(boards)):
        idx, val = features(boards[p])
        assert np.array_equal(indices[indptr[p]:indptr[p + 1]], idx)
        assert np.array_equal(values[indptr[p]:indptr[p + 1]], val)
        assert scores[p] == evaluate(boards[p], random_weights)


def test_material_weights_score_material_balance() -> None:
    w = load_weights("material").values
    # white is a knight up, black to move: -320 cp for black
    b = from_fen("rnbqkb1r/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1")
    assert evaluate(b, w) == -320.0


def test_weights_of_wrong_shape_are_refused() -> None:
    with pytest.raises(ValueError, match="shape"):
        evaluate(from_fen(chess.STARTING_FEN), np.zeros(5, dtype=np.int32))
    with pytest.raises(ValueError, match="integers"):
        evaluate(from_fen(chess.STARTING_FEN), np.zeros(N_FEATURES))
