"""The material and piece-square sums kept move by move (search/evaluation/material_pst.py): the table's
sums are the term walk's; the sums after every move of long random lines (castling both ways,
en passant, promotions to every piece, captures of promoted pieces) equal the whole board's;
the evaluation with given sums is the evaluation. (The batch kernels' searches, which use
them, are checked against recorded results by test_search_api_oracle.py.)"""

from __future__ import annotations

import chess
import numpy as np

from search.core.board import (BOARD_WORDS, FLAG_CASTLE, FLAG_EP, FLAG_NORMAL, NO_PIECE, W_STM, make_move, move_captured,
                          move_flag, move_promo)
from search.params.catalog import F_MATERIAL, F_PST, N_BASE
from search.core.convert import from_chess
from search.evaluation.feature_kernels import collect, evaluate_kernel, evaluate_psq_kernel, new_pawn_king_table
from search.evaluation.material_pst import PSQ_EG, PSQ_MG, PSQ_STM, new_psq_stack, new_psq_table, psq_move, psq_root, psq_sums
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.params.weights import load_weights

#: positions whose random lines soon castle, take en passant and promote
STARTS = (
    chess.STARTING_FEN,
    "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 8",
    "r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 1",
    "4k3/PPPP4/8/8/8/8/4pppp/4K3 b - - 0 1",
    "4k3/p1p1p1p1/8/1P1P1P1P/1p1p1p1p/8/P1P1P1P1/4K3 w - - 0 1",
)


def _psq_only(w: np.ndarray) -> np.ndarray:
    """``w`` with every weight but the material and piece-square ones zero."""
    out = np.zeros_like(w)
    for base in (0, N_BASE):
        out[base + F_MATERIAL: base + F_MATERIAL + 5] = w[base + F_MATERIAL: base + F_MATERIAL + 5]
        out[base + F_PST: base + F_PST + 384] = w[base + F_PST: base + F_PST + 384]
    return out


def _weights() -> list[np.ndarray]:
    gm = load_weights("gm").values
    rng = np.random.default_rng(11)
    return [gm, rng.integers(-500, 500, gm.shape[0]).astype(np.int32)]


def test_the_tables_sums_are_the_walks(real_boards: list[chess.Board]) -> None:
    for w in _weights():
        table = new_psq_table(w)
        only = _psq_only(w)
        sums = [psq_sums(table, from_chess(board)) for board in real_boards]
        assert sums == [tuple(collect(from_chess(board), only, None, None, None)) for board in real_boards]
        assert sum(mg != 0 for mg, _ in sums) > len(sums) // 2  # symmetric positions sum to 0


def test_sums_follow_every_kind_of_move() -> None:
    rng = np.random.default_rng(3)
    stack = new_psq_stack()
    moves = np.zeros(MAX_MOVES, dtype=np.int32)
    seen = {"castle": 0, "ep": 0, "promo": 0, "capture": 0}
    for w in _weights():
        table = new_psq_table(w)
        for fen in STARTS:
            for _ in range(12):
                boards = np.zeros((stack.shape[0], BOARD_WORDS), dtype=np.uint64)
                boards[0] = from_chess(chess.Board(fen))
                psq_root(table, stack, boards[0])
                for ply in range(stack.shape[0] - 1):
                    n = generate_moves(boards[ply], moves, ALL_MOVES)
                    if n == 0:
                        break
                    special = [int(x) for x in moves[:n] if move_flag(x) != FLAG_NORMAL or move_promo(x)]
                    m = int(moves[rng.integers(n)]) if not special or rng.random() < 0.3 else special[
                        rng.integers(len(special))]
                    seen["castle"] += move_flag(m) == FLAG_CASTLE
                    seen["ep"] += move_flag(m) == FLAG_EP
                    seen["promo"] += move_promo(m) != 0
                    seen["capture"] += move_captured(m) != NO_PIECE
                    make_move(boards[ply], boards[ply + 1], m)
                    psq_move(table, stack, ply, m)
                    want = psq_sums(table, boards[ply + 1])
                    assert (stack[ply + 1, PSQ_MG], stack[ply + 1, PSQ_EG]) == want, (fen, ply, m)
                    assert stack[ply + 1, PSQ_STM] == int(boards[ply + 1][W_STM])
    assert min(seen.values()) >= 30, seen


def test_the_evaluation_with_given_sums_is_the_evaluation(real_boards: list[chess.Board]) -> None:
    for w in _weights():
        table = new_psq_table(w)
        pk = new_pawn_king_table()
        scratch = np.zeros(4, dtype=np.int64)
        for board in real_boards:
            b = from_chess(board)
            want = evaluate_kernel(b, w, scratch)
            assert evaluate_psq_kernel(b, w, pk, psq_sums(table, b)) == want
            assert evaluate_psq_kernel(b, w, None, psq_sums(table, b)) == want
            mg, eg = psq_sums(table, b)
            assert evaluate_psq_kernel(b, w, pk, (mg + 1, eg + 1)) != want  # the sums are used
