"""Alpha-beta with quiescence: plain-minimax oracle, PV-leaf contract, mates, draws, budget."""

from __future__ import annotations

import chess
import numpy as np
import pytest
from minimax_oracle import minimax, minimax_qab

from search.alphabeta import KIND_DRAW, KIND_EVAL, KIND_MATE, MATE
from search.api import move_indices, search, search_many, signed_features, sweep
from search.convert import from_chess, from_fen, legal_moves, move_to_chess, push, to_fen, uci_key
from search.evaluator import EVAL_SCALE, evaluate, features
from search.weights import load_weights

CLASSIC = load_weights("classic").values


@pytest.fixture(scope="module")
def positions(real_boards: list[chess.Board]) -> list[chess.Board]:
    return real_boards[5::11][:1000]


def test_quiescence_oracles_agree_on_every_root(positions: list[chess.Board]) -> None:
    # plain memoised minimax quiescence == textbook alpha-beta quiescence == the kernel at depth 0
    assert len(positions) == 1000
    for board in positions:
        b = from_chess(board)
        plain = minimax(b, 0, CLASSIC)
        assert minimax_qab(b, 0, CLASSIC) == plain, board.fen()
        assert search(b, 0, CLASSIC).score == plain, board.fen()


@pytest.mark.parametrize("depth", [1, 2])
def test_alphabeta_equals_plain_minimax(positions: list[chess.Board], depth: int) -> None:
    assert len(positions) == 1000
    for board in positions:
        b = from_chess(board)
        assert search(b, depth, CLASSIC).score == minimax_qab(b, depth, CLASSIC), board.fen()


def test_alphabeta_equals_minimax_with_random_weights(positions: list[chess.Board]) -> None:
    w = np.random.default_rng(11).integers(-200, 200, CLASSIC.shape[0]).astype(np.int32)
    for board in positions[:300]:
        b = from_chess(board)
        assert search(b, 2, w).score == minimax_qab(b, 2, w), board.fen()


def test_plain_minimax_agrees_at_depth_one_where_quiescence_trees_are_small(positions: list[chess.Board]) -> None:
    # the fully plain oracle at depth 1, on every 10th position (its cost is exponential in the
    # captures on the board; the stride is fixed, no position is skipped for being slow)
    for board in positions[::10]:
        b = from_chess(board)
        assert search(b, 1, CLASSIC).score == minimax(b, 1, CLASSIC), board.fen()


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_pv_leaf_evaluation_with_sign_is_the_score(positions: list[chess.Board], depth: int) -> None:
    for board in positions[: 1000 if depth < 3 else 150]:
        result = search(from_chess(board), depth, CLASSIC)
        replay = board.copy(stack=False)
        for m in result.pv:
            move = move_to_chess(m)
            assert move in replay.legal_moves
            replay.push(move)
        assert replay.fen(en_passant="fen") == to_fen(result.leaf)
        if result.kind == KIND_EVAL:
            assert result.leaf_sign * evaluate(result.leaf, CLASSIC) * EVAL_SCALE == result.score
            idx, val = result.leaf_features()
            assert int(np.dot(CLASSIC[idx].astype(np.int64), val)) == result.score


def test_batched_search_equals_single_searches(positions: list[chess.Board]) -> None:
    boards = np.stack([from_chess(b) for b in positions[:200]])
    batch = search_many(boards, 2, CLASSIC)
    for p in range(len(boards)):
        single = search(boards[p], 2, CLASSIC)
        assert batch.scores[p] == single.score
        assert tuple(batch.pv[p, : batch.pv_len[p]]) == single.pv
        assert np.array_equal(batch.leaves[p], single.leaf)
        assert batch.kinds[p] == single.kind


@pytest.mark.parametrize("depth", [1, 2])
def test_sweep_scores_are_child_searches_and_leaves_match(positions: list[chess.Board], depth: int) -> None:
    boards = np.stack([from_chess(b) for b in positions[:60]])
    sw = sweep(boards, depth, CLASSIC)
    for p in range(len(boards)):
        rows = range(sw.pos_ptr[p], sw.pos_ptr[p + 1])
        assert len(rows) == positions[p].legal_moves.count()
        for r in rows:
            child = push(boards[p], int(sw.moves[r]))
            expected = -search(child, depth - 1, CLASSIC, history=[int(boards[p][13])]).score
            assert sw.scores[r] == expected
            if sw.kinds[r] == KIND_EVAL:
                assert sw.signs[r] * evaluate(sw.leaves[r], CLASSIC) * EVAL_SCALE == sw.scores[r]


MATE_IN_1 = [
    ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "d1d8"),
    ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4", "f3f7"),
    ("k7/8/1K6/8/8/8/8/6Q1 w - - 0 1", "g1g8"),  # Kc7, Qg3 and Qh2 stalemate instead
]
# found by brute force with python-chess; the test re-proves that each is exactly mate in 2
MATE_IN_2 = [
    "8/6p1/8/5Q2/8/3K4/8/2k5 w - - 0 1",
    "8/8/8/8/K4p2/8/5Q2/k7 w - - 0 1",
    "5R2/8/8/8/8/5K2/8/4k3 w - - 0 1",
    "8/8/8/5K2/8/1p5k/1R6/8 w - - 0 1",
]


def _has_mate_in_1(board: chess.Board) -> bool:
    for move in list(board.legal_moves):
        board.push(move)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return True
    return False


def _is_mate_in_2(board: chess.Board) -> bool:
    if _has_mate_in_1(board):
        return False
    for move in list(board.legal_moves):
        board.push(move)
        replies = list(board.legal_moves)
        forced = bool(replies)
        for reply in replies:
            board.push(reply)
            forced = forced and _has_mate_in_1(board)
            board.pop()
        board.pop()
        if forced:
            return True
    return False


@pytest.mark.parametrize(("fen", "mating_move"), MATE_IN_1)
def test_mate_in_one_is_found(fen: str, mating_move: str) -> None:
    result = search(from_fen(fen), 1, CLASSIC)
    assert result.kind == KIND_MATE and result.score == MATE - 1 and result.mate_in == 1
    assert result.pv_uci() == [mating_move]


@pytest.mark.parametrize("fen", MATE_IN_2)
def test_mate_in_two_is_found(fen: str) -> None:
    board = chess.Board(fen)
    assert _is_mate_in_2(board)
    result = search(from_fen(fen), 3, CLASSIC)
    assert result.kind == KIND_MATE and result.mate_in == 3
    for move in result.pv_uci():
        board.push_uci(move)
    assert board.is_checkmate()


def test_being_mated_scores_negative_mate() -> None:
    # black to move is mated already: no legal move, in check
    result = search(from_fen("k6R/8/1K6/8/8/8/8/8 b - - 0 1"), 2, CLASSIC)
    assert result.score == -MATE and result.kind == KIND_MATE and result.pv == ()


def test_stalemate_scores_zero() -> None:
    result = search(from_fen("k7/8/1Q6/8/8/8/8/7K b - - 0 1"), 2, CLASSIC)
    assert result.score == 0 and result.kind == KIND_DRAW and result.pv == ()


def test_stalemating_move_is_avoided_when_winning() -> None:
    # white queen up; Qb6 and Qc7 stalemate, anything sensible keeps a winning score
    result = search(from_fen("k7/8/8/2Q5/8/8/8/7K w - - 0 1"), 2, CLASSIC)
    assert result.score > 500 * EVAL_SCALE and result.pv_uci()[0] not in ("c5b6", "c5c7")


def test_fifty_move_rule_draws() -> None:
    # a rook up, but every move that is not a capture or pawn move reaches halfmove 100
    board = from_fen("8/8/8/4k3/8/8/4K3/R7 w - - 99 80")
    result = search(board, 1, CLASSIC)
    assert result.score == 0 and result.kind == KIND_DRAW
    assert search(from_fen("8/8/8/4k3/8/8/4K3/R7 w - - 98 80"), 1, CLASSIC).score > 0


def test_repetition_from_game_history_draws() -> None:
    start = from_fen("8/8/8/4k3/8/8/4K3/R7 w - - 0 1")
    # Ke2-e1, Ke5-e4, Ke1-e2, Ke4-e5 returns to the start; searching from after Ke2-e1 Ke5-e4
    # Ke1-e2, the move Ke4-e5 repeats the start position (in the history)
    seq = ["e2e1", "e5e4", "e1e2"]
    history = [int(start[13])]
    b = start
    for uci in seq:
        from search.convert import move_from_uci

        b = push(b, move_from_uci(b, uci))
        history.append(int(b[13]))
    result = search(b, 1, CLASSIC, history=history[:-1])
    # black is a rook down: repeating (score 0) is black's best
    assert result.score == 0 and result.pv_uci() == ["e4e5"] and result.kind == KIND_DRAW


def test_node_budget_stops_the_search_and_keeps_the_contract(positions: list[chess.Board]) -> None:
    for board in positions[:50]:
        b = from_chess(board)
        result = search(b, 3, CLASSIC, budget=10)
        assert result.budget_exhausted and result.nodes <= 10 + 64 * 40
        if result.kind == KIND_EVAL:
            assert result.leaf_sign * evaluate(result.leaf, CLASSIC) * EVAL_SCALE == result.score


def test_bad_arguments_are_refused() -> None:
    b = from_fen(chess.STARTING_FEN)
    with pytest.raises(ValueError, match="depth"):
        search(b, -1, CLASSIC)
    with pytest.raises(ValueError, match="budget"):
        search(b, 1, CLASSIC, budget=0)
    with pytest.raises(ValueError, match="sweep depth"):
        sweep(b[None, :], 0, CLASSIC)


def test_signed_leaf_features_reproduce_sweep_scores(positions: list[chess.Board]) -> None:
    boards = np.stack([from_chess(b) for b in positions[:80]])
    sw = sweep(boards, 1, CLASSIC)
    signs = np.where(sw.kinds == KIND_EVAL, sw.signs, 0).astype(np.int8)
    indptr, indices, values = signed_features(sw.leaves, signs)
    assert indices.dtype == np.int16 and values.dtype == np.int16
    for r in range(len(sw.moves)):
        row = slice(indptr[r], indptr[r + 1])
        if signs[r] == 0:
            assert indptr[r] == indptr[r + 1]
            continue
        ref_idx, ref_val = features(sw.leaves[r])
        assert np.array_equal(indices[row], ref_idx) and np.array_equal(values[row], signs[r] * ref_val)
        assert int(np.dot(CLASSIC[indices[row]].astype(np.int64), values[row].astype(np.int64))) == sw.scores[r]


def test_move_indices_find_the_played_move_in_sweep_order(positions: list[chess.Board]) -> None:
    boards = np.stack([from_chess(b) for b in positions[:300]])
    rng = np.random.default_rng(3)
    chosen = [list(b.legal_moves)[rng.integers(b.legal_moves.count())] for b in positions[:300]]
    keys = np.array([uci_key(m.uci()) for m in chosen], dtype=np.int32)
    idx = move_indices(boards, keys)
    for p, move in enumerate(chosen):
        assert move_to_chess(int(legal_moves(boards[p])[idx[p]])) == move
    # a move that is not legal in its position is reported as -1
    start = from_fen(chess.STARTING_FEN)[None, :]
    assert move_indices(start, np.array([uci_key("e2e5")], dtype=np.int32))[0] == -1
    assert move_indices(start, np.array([uci_key("e2e4")], dtype=np.int32))[0] >= 0
