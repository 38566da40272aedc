"""The fast subset of the kernel tests that ``tests/search/test_kernels_as_python.py`` runs with
``NUMBA_DISABLE_JIT=1``, so that every kernel it reaches runs as plain Python (numba's
decorators then return the functions unchanged) and is checked that way too.

Not collected by a plain ``pytest`` run (the file name does not start with ``test_``): the
compiled kernels are checked by the full tests this subset borrows from (``test_perft``,
``test_movegen_oracle``, ``test_reference_features``, ``test_search``, ``test_see``), on more
positions. Every check here compares against an independent computation (python-chess, the
published perft counts, the reference extractor, the minimax oracle, the plain exchange).
"""

from __future__ import annotations

import chess
import numpy as np
import pytest
from tests.oracles.minimax import Oracle
from tests.search.core.test_movegen import assert_legal_moves_equal, assert_zobrist_follows
from tests.search.core.test_perft import EDGE_CASES, PERFT_POSITIONS, python_chess_divide
from tests.search.evaluation.test_feature_kernels import assert_agree
from tests.search.tree.test_alphabeta import CLASSIC, RULE_POSITIONS, assert_search_equals_oracle
from tests.search.tree.test_quiescence import (
    TEXTBOOK,
    assert_quiescence_moves_equal_the_oracle,
    captures_and_promotions,
    exchange_value,
    kernel_see,
)

from tests.search.pls.test_move_model import SPECIAL
from tests.search.pls.test_move_model import assert_agree as assert_move_features_agree

from search.core.convert import from_chess, from_fen
from search.evaluation.feature_kernels import evaluate_batch_kernel
from search.core.perft import divide, perft
from search.tree.search_api import search_many


def test_the_kernels_run_as_plain_python() -> None:
    # the subset means nothing if numba compiled the kernels after all
    from search.core.movegen import generate_moves

    assert not hasattr(generate_moves, "py_func"), "NUMBA_DISABLE_JIT=1 was not in effect"


@pytest.mark.parametrize("name", PERFT_POSITIONS)
def test_perft_equals_the_published_counts(name: str) -> None:
    fen, counts = PERFT_POSITIONS[name]
    board = from_fen(fen)
    assert [perft(board, d) for d in (1, 2, 3)] == counts[:3]
    assert perft(board, 2, bulk=False) == counts[1]


@pytest.mark.parametrize("name", EDGE_CASES)
def test_divide_equals_python_chess_on_edge_cases(name: str) -> None:
    fen = EDGE_CASES[name]
    assert divide(from_fen(fen), 2) == python_chess_divide(chess.Board(fen), 2)


def test_legal_moves_and_keys_equal_python_chess_on_real_positions(real_boards: list[chess.Board],
                                                                  real_games: list[list[chess.Move]]) -> None:
    assert_legal_moves_equal(real_boards[::10])
    assert assert_zobrist_follows(real_games[:2]) == len(real_games[0]) + len(real_games[1])


def test_features_and_scores_equal_the_reference_on_real_positions(real_boards: list[chess.Board]) -> None:
    oracle = Oracle(CLASSIC)
    boards = real_boards[::20]
    units = evaluate_batch_kernel(np.stack([from_chess(board) for board in boards]), CLASSIC)
    for board, score in zip(boards, units):
        assert_agree(board)
        assert score == oracle.static(board), board.fen()


def test_search_equals_the_oracle_on_real_positions(real_boards: list[chess.Board]) -> None:
    oracle = Oracle(CLASSIC)
    for board in real_boards[5::200]:
        for depth in (1, 2):
            assert_search_equals_oracle(oracle, board, depth, CLASSIC)


def test_batch_search_equals_the_oracle_on_real_positions(real_boards: list[chess.Board]) -> None:
    # the batch kernel's evaluator state: pawn-king table, score cache, and the material and
    # piece-square sums kept move by move (search/evaluation/material_pst.py)
    oracle = Oracle(CLASSIC)
    boards = real_boards[7::300]
    result = search_many(np.stack([from_chess(board) for board in boards]), 2, CLASSIC)
    assert [int(s) for s in result.scores] == [oracle.value(board, 2) for board in boards]


@pytest.mark.parametrize(("what", "fen", "depth"), RULE_POSITIONS, ids=[r[0] for r in RULE_POSITIONS])
def test_rule_positions_equal_the_oracle(what: str, fen: str, depth: int) -> None:
    assert_search_equals_oracle(Oracle(CLASSIC), chess.Board(fen), depth, CLASSIC)


@pytest.mark.parametrize(("what", "fen", "uci", "value"), TEXTBOOK, ids=[t[0] for t in TEXTBOOK])
def test_see_gives_the_textbook_values(what: str, fen: str, uci: str, value: int) -> None:
    assert kernel_see(chess.Board(fen), chess.Move.from_uci(uci)) == value


def test_see_and_quiescence_moves_equal_the_exchange_on_real_positions(real_boards: list[chess.Board]) -> None:
    captures = captures_and_promotions(real_boards[::10])
    assert len(captures) > 500
    for board, move, value in captures:
        assert value == exchange_value(board, move), (board.fen(), move.uci())
    assert assert_quiescence_moves_equal_the_oracle(real_boards[::10]) >= 5


def test_move_model_features_equal_the_reference(real_boards: list[chess.Board]) -> None:
    assert_move_features_agree([chess.Board(fen) for _, fen in SPECIAL[:5]] + real_boards[1000:1002])
