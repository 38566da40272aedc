"""Alpha-beta with quiescence: an independent oracle (tests/oracles/minimax.py), PV-leaf contract,
mates, draws, budget."""

from __future__ import annotations

import chess
import chess.polyglot
import numpy as np
import pytest
from tests.oracles.minimax import MATE as ORACLE_MATE
from tests.oracles.minimax import MAX_PLY as ORACLE_MAX_PLY
from tests.oracles.minimax import Oracle

from search.tree.alphabeta import KIND_DRAW, KIND_EVAL, KIND_MATE, MATE, MAX_PLY
from search.tree.search_api import move_indices, search, search_many, signed_features, sweep
from search.core.convert import from_chess, from_fen, legal_moves, move_to_chess, push, to_fen, uci_key
from search.evaluation.evaluation_api import EVAL_SCALE, evaluate, features
from search.evaluation.feature_kernels import evaluate_batch_kernel
from search.params.weights import load_weights

CLASSIC = load_weights("classic").values


@pytest.fixture(scope="module")
def positions(real_boards: list[chess.Board]) -> list[chess.Board]:
    return real_boards[5::11][:1000]


KIND_NAMES = {KIND_EVAL: "eval", KIND_MATE: "mate", KIND_DRAW: "draw"}
RANDOM_W = np.random.default_rng(11).integers(-200, 200, CLASSIC.shape[0]).astype(np.int32)


@pytest.fixture(scope="module")
def oracles() -> dict[str, Oracle]:
    # one per weight vector: each caches the static scores it has computed
    return {"classic": Oracle(CLASSIC), "random": Oracle(RANDOM_W)}


def assert_search_equals_oracle(oracle: Oracle, board: chess.Board, depth: int, w: np.ndarray,
                                history: list[int] | None = None) -> None:
    """The kernel's score is the oracle's value and its PV an optimal line ending as its kind says."""
    result = search(from_chess(board), depth, w, history=history or ())
    assert not result.budget_exhausted
    assert result.score == oracle.value(board, depth), board.fen()
    end = oracle.check_line(board, depth, result.score, [move_to_chess(m) for m in result.pv])
    assert KIND_NAMES[result.kind] == end, board.fen()


def test_oracle_constants_are_the_kernels() -> None:
    # the oracle states them as data; a change in the kernel must be made there too
    assert (ORACLE_MATE, ORACLE_MAX_PLY) == (MATE, MAX_PLY)


def test_oracle_static_score_is_the_kernels_evaluation(real_boards: list[chess.Board],
                                                      oracles: dict[str, Oracle]) -> None:
    # w . phi of the reference extractor, in eval units, is the kernel's integer score
    boards = real_boards[::5]
    assert len(boards) == 646
    packed = np.stack([from_chess(board) for board in boards])
    for name, w in (("classic", CLASSIC), ("random", RANDOM_W)):
        units = evaluate_batch_kernel(packed, w)  # int64 eval units
        for board, kernel in zip(boards, units):
            assert oracles[name].static(board) == kernel, board.fen()


def test_oracle_alphabeta_equals_its_plain_minimax(real_boards: list[chess.Board],
                                                  oracles: dict[str, Oracle]) -> None:
    # the oracle's own check: full-window alpha-beta == plain minimax; plain minimax is
    # exponential in the captures on the board, so only the real positions with few pieces
    oracle = oracles["classic"]
    endings = [b for b in real_boards[7::13] if chess.popcount(b.occupied) <= 18]
    assert len(endings) == 35
    for board in endings:
        assert oracle.minimax(board, 0) == oracle.value(board, 0), board.fen()
    for board in endings:
        if chess.popcount(board.occupied) <= 14:
            assert oracle.minimax(board, 1) == oracle.value(board, 1), board.fen()
    for _, fen, depth in RULE_POSITIONS:
        board = chess.Board(fen)
        assert oracle.minimax(board, depth) == oracle.value(board, depth), fen


@pytest.mark.parametrize(("depth", "stride"), [(0, 1), (1, 6), (2, 16)])
def test_alphabeta_equals_the_independent_oracle(positions: list[chess.Board], oracles: dict[str, Oracle],
                                                 depth: int, stride: int) -> None:
    # python-chess rules, the reference extractor and a from-scratch SEE against the kernel:
    # equal scores, and every PV an optimal line of the oracle's tree
    assert len(positions) == 294
    for board in positions[::stride]:
        assert_search_equals_oracle(oracles["classic"], board, depth, CLASSIC)


def test_alphabeta_equals_the_oracle_with_random_weights(positions: list[chess.Board],
                                                         oracles: dict[str, Oracle]) -> None:
    for board in positions[1::12]:
        assert_search_equals_oracle(oracles["random"], board, 1, RANDOM_W)
    for board in positions[2::48]:
        assert_search_equals_oracle(oracles["random"], board, 2, RANDOM_W)


# (game index in the shipped file, first ply, last ply): stretches where the game's own
# history decides searches, the moves repeating positions played before
REPEATING_STRETCHES = [
    (2, 44, 47),  # Paulsen - Morphy, New York 1857
    (21, 77, 78),  # Botvinnik - Capablanca, AVRO 1938
    (22, 69, 85),  # Averbakh - Kotov, Zurich 1953
    (39, 55, 56),  # Kasparov - Portisch, Niksic 1983
]


def test_repetitions_of_game_history_equal_the_oracle(real_games: list[list[chess.Move]],
                                                      oracles: dict[str, Oracle]) -> None:
    # the oracle sees the history as the board's move stack (python-chess is_repetition), the
    # kernel as Zobrist keys
    assert [len(real_games[g]) for g, _, _ in REPEATING_STRETCHES] == [56, 81, 102, 69]
    draws = 0
    for g, first, last in REPEATING_STRETCHES:
        board = chess.Board()
        keys = []
        for ply, move in enumerate(real_games[g][: last + 1]):
            if ply >= first:
                for depth in (1, 2):
                    assert_search_equals_oracle(oracles["classic"], board, depth, CLASSIC, history=keys)
                    draws += search(from_chess(board), depth, CLASSIC, history=keys).kind == KIND_DRAW
            keys.append(chess.polyglot.zobrist_hash(board))
            board.push(move)
    assert draws >= 10


@pytest.mark.xfail(strict=True, reason="the kernel's repetition key is polyglot's, which counts an en-passant "
                   "square whenever a pawn stands next to it, even when the capture is illegal; FIDE (and "
                   "python-chess) count the position as the same")
def test_repetition_of_a_position_whose_en_passant_capture_was_illegal(oracles: dict[str, Oracle]) -> None:
    # after ...d7-d5 the e5 pawn may not take en passant (pinned by the e8 rook); Nc3 Nf6 Nb1,
    # and ...Ng8 repeats that position: a draw for Black, a queen down
    board = chess.Board("4r1nk/8/8/3pP3/8/8/8/QN2K3 w - d6 0 2")
    assert not board.has_legal_en_passant()
    keys = []
    for uci in ("b1c3", "g8f6", "c3b1"):
        keys.append(chess.polyglot.zobrist_hash(board))
        board.push_uci(uci)
    assert oracles["classic"].value(board, 1) == 0
    assert_search_equals_oracle(oracles["classic"], board, 1, CLASSIC, history=keys)


# (what it pins, FEN, depth): positions where one rule of the tree decides the score; each
# was checked to change the oracle's value when that rule is changed in the oracle
RULE_POSITIONS = [
    ("mate in one", "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 1),
    ("the queen mates, two moves stalemate", "k7/8/1K6/8/8/8/8/6Q1 w - - 0 1", 2),
    ("mate in two", "8/8/8/8/K4p2/8/5Q2/k7 w - - 0 1", 3),
    ("mated at the root", "k6R/8/1K6/8/8/8/8/8 b - - 0 1", 2),
    ("mated at the root in quiescence", "k6R/8/1K6/8/8/8/8/8 b - - 0 1", 0),
    ("a capture mates inside quiescence", "3r2k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 0),
    ("stalemate at the root", "k7/8/1Q6/8/8/8/8/7K b - - 0 1", 2),
    ("quiescence does not see stalemate", "k7/8/1Q6/8/8/8/8/7K b - - 0 1", 0),
    ("stalemating moves avoided", "k7/8/8/2Q5/8/8/8/7K w - - 0 1", 2),
    ("fifty-move rule", "8/8/8/4k3/8/8/4K3/R7 w - - 99 80", 1),
    ("one ply before the fifty-move rule", "8/8/8/4k3/8/8/4K3/R7 w - - 98 80", 2),
    ("mate on the hundredth halfmove still mates", "7k/5Q2/6K1/8/8/8/8/8 w - - 99 80", 1),
    # quiescence move set: SEE < 0 dropped even though the defender is pinned (Rxd5, Nxd5 is illegal)
    ("SEE ignores pins", "4k3/4n3/8/3p4/8/8/8/3RR1K1 w - - 0 1", 0),
    # exd6 e.p. has SEE 0 (cxd6), kept; the c7 pawn is pinned, so it wins a pawn
    ("SEE 0 is searched", "2k5/2p5/8/3pP3/8/8/8/2R3K1 w - d6 0 1", 0),
    ("SEE sees the x-ray rook", "4r2k/8/8/4p3/8/8/4R3/4R1K1 w - - 0 1", 0),
    ("quiet queen promotion in quiescence", "7k/P7/8/8/8/8/8/6K1 w - - 0 1", 0),
    ("no under-promotion in quiescence (e8=N+ would fork)", "8/4P1k1/3q4/8/8/8/8/7K w - - 0 1", 0),
]


@pytest.mark.parametrize(("what", "fen", "depth"), RULE_POSITIONS, ids=[r[0] for r in RULE_POSITIONS])
def test_rule_positions_equal_the_oracle(what: str, fen: str, depth: int, oracles: dict[str, Oracle]) -> None:
    for d in (depth, depth + 1):
        assert_search_equals_oracle(oracles["classic"], chess.Board(fen), d, CLASSIC)


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
        from search.core.convert import move_from_uci

        b = push(b, move_from_uci(b, uci))
        history.append(int(b[13]))
    result = search(b, 1, CLASSIC, history=history[:-1])
    # black is a rook down: repeating (score 0) is black's best
    assert result.score == 0 and result.pv_uci() == ["e4e5"] and result.kind == KIND_DRAW


def test_node_budget_stops_the_search_and_keeps_the_contract(positions: list[chess.Board]) -> None:
    for board in positions[:50]:
        b = from_chess(board)
        result = search(b, 3, CLASSIC, budget=10)
        # the nodes past the budget are scored statically and not counted (issue 28: go nodes N
        # searched more than N, up to 340 nodes more at N = 200,000)
        assert result.budget_exhausted and result.nodes == 10
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
    i = int(move_indices(start, np.array([uci_key("e2e4")], dtype=np.int32))[0])
    assert 0 <= i and move_to_chess(int(legal_moves(start[0])[i])) == chess.Move.from_uci("e2e4")
