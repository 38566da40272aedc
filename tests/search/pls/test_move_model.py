"""The move model (search/pls/move_model.py, search/pls/move_model_kernels.py): its features against the
plain-Python extractor of tests/oracles/move_features.py on positions of the shipped games and
on positions built for the rare cases, its probabilities over exactly python-chess's legal moves,
and its weights files."""

from __future__ import annotations

import json
from pathlib import Path

import chess
import numpy as np
import pytest

from search.core.convert import from_chess, move_to_uci
from search.pls.move_catalog import (GROUP_NAMES, GROUP_OFFSETS, GROUP_SIZES, GROUPS, MOVE_FEATURE_INDEX,
                                 MOVE_FEATURE_NAMES, N_GROUPS, N_MOVE_FEATURES)
from search.pls.move_model import (MoveModel, MoveModelFileError, dumps, load_move_model,
                               move_features, move_probabilities, predict, save_move_model, slot_scores)
from tests.oracles.move_features import reference_move_features

#: (what it pins, FEN) for features the sample games may not reach
SPECIAL = [
    ("promotions, with and without capture, and a check by the new queen", "1n2k3/P1P5/8/8/8/6p1/8/4K2R w K - 0 1"),
    ("black promotes: mirrored squares, underpromotions", "4k3/8/8/8/8/8/1p6/R3K3 b Q - 0 1"),
    ("en passant that uncovers a check", "8/8/8/1k1pP2R/8/8/8/4K3 w - d6 0 1"),
    ("castling whose rook gives check", "5k2/8/8/8/8/8/8/4K2R w K - 0 1"),
    ("double checks, discovered checks, a knight fork", "3qk2r/8/8/8/4N3/8/4R3/4K3 w - - 0 1"),
    ("in check: only evasions, a hanging king", "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1"),
    ("passed pawns, end game", "8/5pk1/8/1P6/P7/8/6K1/8 w - - 0 1"),
    ("Kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
]


def kernel_features(boards: list[chess.Board]) -> list[dict[str, list[int]]]:
    mf = move_features(np.stack([from_chess(b) for b in boards]))
    out = []
    for p in range(len(boards)):
        rows = range(mf.pos_ptr[p], mf.pos_ptr[p + 1])
        out.append({move_to_uci(int(mf.moves[r])): sorted(int(k) for k in mf.slots[r] if k >= 0) for r in rows})
    return out


def assert_agree(boards: list[chess.Board]) -> None:
    for board, fast in zip(boards, kernel_features(boards)):
        ref = reference_move_features(board)
        if ref != fast:
            uci = next(u for u in ref if ref[u] != fast.get(u))
            only_ref = [MOVE_FEATURE_NAMES[i] for i in set(ref[uci]) - set(fast.get(uci, []))]
            only_fast = [MOVE_FEATURE_NAMES[i] for i in set(fast.get(uci, [])) - set(ref[uci])]
            pytest.fail(f"{board.fen()} {uci}: reference only {only_ref}, kernel only {only_fast}")


def test_the_catalogue_tiles_its_groups() -> None:
    assert len(MOVE_FEATURE_NAMES) == N_MOVE_FEATURES == sum(GROUP_SIZES) == len(set(MOVE_FEATURE_NAMES))
    assert GROUP_OFFSETS[0] == 0 and len(GROUPS) == N_GROUPS
    for g, (name, labels) in enumerate(GROUPS):
        assert MOVE_FEATURE_NAMES[GROUP_OFFSETS[g]] == f"{name}.{labels[0]}"


def test_features_equal_the_reference_on_positions_of_the_shipped_games(real_boards: list[chess.Board]) -> None:
    # every 60th position of the 52 games (54 positions, about 1,700 moves; the reference is slow)
    assert_agree(real_boards[::60])


@pytest.mark.parametrize("what, fen", SPECIAL, ids=[w for w, _ in SPECIAL])
def test_features_equal_the_reference_on_the_rare_cases(what: str, fen: str) -> None:
    assert_agree([chess.Board(fen)])


def test_each_group_holds_at_most_one_feature_and_the_common_ones_always(real_boards: list[chess.Board]) -> None:
    mf = move_features(np.stack([from_chess(b) for b in real_boards[::10]]))
    for g in range(N_GROUPS):
        col = mf.slots[:, g]
        active = col[col >= 0]
        assert np.all((active >= GROUP_OFFSETS[g]) & (active < GROUP_OFFSETS[g] + GROUP_SIZES[g])), GROUP_NAMES[g]
    for always in ("piece_to", "piece_from", "see", "eval_change", "reply_capture", "exchange", "exchange_gap"):
        assert np.all(mf.slots[:, GROUP_NAMES.index(always)] >= 0), always
    # the best exchange value of each position sits in the first gap bucket
    gap = mf.slots[:, GROUP_NAMES.index("exchange_gap")]
    for p in range(len(mf.pos_ptr) - 1):
        assert (gap[mf.pos_ptr[p]:mf.pos_ptr[p + 1]] == MOVE_FEATURE_INDEX["exchange_gap.le0"]).any()


def _trained_like_model() -> MoveModel:
    """A model with varied weights (seeded), so that the probabilities differ between moves."""
    return MoveModel(np.random.default_rng(7).normal(0.0, 1.0, N_MOVE_FEATURES), {"name": "random"})


def test_probabilities_sum_to_one_over_exactly_the_legal_moves(real_boards: list[chess.Board]) -> None:
    boards = real_boards[::20] + [chess.Board(fen) for _, fen in SPECIAL]
    model = _trained_like_model()
    mp = move_probabilities(np.stack([from_chess(b) for b in boards]), model)
    mf = move_features(np.stack([from_chess(b) for b in boards]))
    np.testing.assert_array_equal(mp.pos_ptr, mf.pos_ptr)
    np.testing.assert_allclose(mp.scores, slot_scores(mf.slots, model.weights), rtol=0, atol=1e-9)
    for p, board in enumerate(boards):
        rows = slice(mp.pos_ptr[p], mp.pos_ptr[p + 1])
        assert sorted(move_to_uci(int(m)) for m in mp.moves[rows]) == sorted(m.uci() for m in board.legal_moves)
        probs = mp.probabilities[rows]
        assert np.all(probs > 0) and abs(probs.sum() - 1.0) < 1e-12
        scores = mp.scores[rows]
        expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
        np.testing.assert_allclose(probs, expected, rtol=1e-12)


def test_a_position_without_legal_moves_has_no_rows_and_predict_orders_by_probability() -> None:
    mated = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    mp = move_probabilities(from_chess(mated)[None, :], _trained_like_model())
    assert mp.pos_ptr.tolist() == [0, 0] and len(mp.moves) == 0
    ranked = predict(from_chess(chess.Board()), _trained_like_model())
    assert len(ranked) == 20 and abs(sum(p for _, p in ranked) - 1) < 1e-12
    assert [p for _, p in ranked] == sorted((p for _, p in ranked), reverse=True)
    uniform = predict(from_chess(chess.Board()), MoveModel.uniform())
    assert all(abs(p - 1 / 20) < 1e-15 for _, p in uniform)


def test_the_batch_does_not_depend_on_the_number_of_threads(real_boards: list[chess.Board]) -> None:
    arr = np.stack([from_chess(b) for b in real_boards[::7]])
    a = move_probabilities(arr, _trained_like_model(), n_threads=1)
    b = move_probabilities(arr, _trained_like_model(), n_threads=2)
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    np.testing.assert_array_equal(a.moves, b.moves)


def test_a_model_file_round_trips(tmp_path: Path) -> None:
    model = _trained_like_model()
    path = tmp_path / "m.json"
    save_move_model(path, model)
    back = load_move_model(path)
    np.testing.assert_allclose(back.weights, model.weights, rtol=1e-5)
    assert back.metadata == {"name": "random"}
    doc = json.loads(path.read_text())
    assert doc["kind"] == "movetuner-move-model" and list(doc["features"]) == list(MOVE_FEATURE_NAMES)
    assert not np.any(load_move_model("uniform").weights)


def _broken(tmp_path: Path, edit: object) -> str:
    doc = json.loads(dumps(_trained_like_model()))
    if callable(edit):
        edit(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc) if callable(edit) else str(edit))
    with pytest.raises(MoveModelFileError) as err:
        load_move_model(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    return message


def test_bad_model_files_are_refused_in_one_line_naming_the_place(tmp_path: Path) -> None:
    assert "line 1 column" in _broken(tmp_path, '{"kind": ')
    assert "not a move-model file" in _broken(tmp_path, lambda d: d.update(kind="movetuner-weights"))
    assert "schema_version" in _broken(tmp_path, lambda d: d.update(schema_version=2))
    assert "layout" in _broken(tmp_path, lambda d: d.update(layout_hash="0" * 16))
    assert "evaluation" in _broken(tmp_path, lambda d: d["evaluation"].update(hash="0" * 16))
    assert "'piece_to.pawn.e4'" in _broken(tmp_path, lambda d: d["features"].update({"piece_to.pawn.e4": "x"}))
    assert "not a finite number" in _broken(tmp_path, lambda d: d["features"].update({"castle.king_side": 1e400}))
    assert "unknown feature 'nope'" in _broken(tmp_path, lambda d: d["features"].update(nope=1.0))
    assert "missing feature 'castle.king_side'" in _broken(tmp_path, lambda d: d["features"].pop("castle.king_side"))
    with pytest.raises(MoveModelFileError, match="no such move-model file"):
        load_move_model(tmp_path / "absent.json")
