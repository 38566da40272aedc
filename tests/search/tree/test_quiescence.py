"""Static exchange evaluation (``search/tree/quiescence.py:see``) and the quiescence move set,
against plain exchange computations on python-chess boards.

The plain computation here is the recursive textbook definition (a side captures on the
square with its least valuable attacker or stops, whichever is better for it); the oracle's
:func:`minimax_oracle.see` is the iterative swap list. Both take pieces off a copied board, so
x-rays come from python-chess ``attackers`` on what is left. Rules, as the kernel states them:
piece values below, pins ignored, the least valuable attacker captures first (the lowest
square among equals), the moving pawn's own promotion counts, later pawn captures count as
pawns.
"""

from __future__ import annotations

import chess
import numpy as np
import pytest
from tests.oracles.minimax import quiescence_moves as oracle_quiescence_moves
from tests.oracles.minimax import see as swap_list_see

from search.core.convert import from_chess, legal_moves, move_from_chess, move_to_chess
from search.core.movegen import MAX_MOVES
from search.tree.quiescence import _wins_or_trades, quiescence_moves, see

#: the kernel's SEE piece values (``SEE_VALUE`` in search/tree/quiescence.py), as data
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900,
          chess.KING: 20000}


def _gain_from_here(board: chess.Board, square: chess.Square, side: chess.Color) -> int:
    """What ``side`` wins by going on with the exchange on ``square`` (0 if it stops)."""
    attackers = board.attackers(side, square)
    if not attackers:
        return 0
    frm = min(attackers, key=lambda s: (board.piece_type_at(s), s))
    victim = board.piece_type_at(square)
    assert victim is not None
    piece = board.remove_piece_at(frm)
    board.set_piece_at(square, piece)
    return max(0, VALUES[victim] - _gain_from_here(board, square, not side))


def exchange_value(board: chess.Board, move: chess.Move) -> int:
    """SEE of ``move`` by the recursive definition (centipawns, mover's view)."""
    b = board.copy(stack=False)
    mover = b.remove_piece_at(move.from_square)
    assert mover is not None
    if board.is_en_passant(move):
        b.remove_piece_at(chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square)))
        won = VALUES[chess.PAWN]
    else:
        victim = b.piece_type_at(move.to_square)
        won = VALUES[victim] if victim else 0
    if move.promotion:
        won += VALUES[move.promotion] - VALUES[chess.PAWN]
        mover = chess.Piece(move.promotion, mover.color)
    b.set_piece_at(move.to_square, mover)
    return won - _gain_from_here(b, move.to_square, not mover.color)


def kernel_see(board: chess.Board, move: chess.Move) -> int:
    b = from_chess(board)
    return int(see(b, move_from_chess(b, move), np.zeros(40, dtype=np.int64)))


# (what it pins, FEN, move, SEE worked out by hand with the values above)
TEXTBOOK = [
    ("rook takes a pawn defended by a pawn", "4k3/8/3p4/4p3/8/8/8/4RK2 w - - 0 1", "e1e5", -400),
    # Chess Programming Wiki, "SEE - The Swap Algorithm": Rxe5 wins an undefended pawn ...
    ("CPW: Rxe5 wins the pawn", "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5", 100),
    # ... and Nxe5 Nxe5 Rxe5 Bxe5 Qxe5 Qxe5: queens behind rook and bishop join as x-rays
    ("CPW: Nxe5 loses the exchange sequence", "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1",
     "d3e5", -200),
    ("doubled rooks: the x-ray rook wins the pawn", "4r2k/8/8/4p3/8/8/4R3/4R1K1 w - - 0 1", "e2e5", 100),
    ("the same rook alone loses itself", "4r2k/8/8/4p3/8/8/4R3/6K1 w - - 0 1", "e2e5", -400),
    ("queen behind the capturing bishop", "3r3k/8/8/3n4/2B5/1Q6/8/6K1 w - - 0 1", "c4d5", 300),
    ("en passant, undefended", "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 100),
    ("en passant, defended by a pawn", "4k3/2p5/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 0),
    ("en passant uncovers a rook on the captured pawn's file", "3r3k/8/8/3pP3/8/8/8/3R2K1 w - d6 0 1",
     "e5d6", 100),
    ("en passant, the rook recaptures for nothing", "3r3k/8/8/3pP3/8/8/8/6K1 w - d6 0 1", "e5d6", 0),
    ("queen promotion, undefended", "7k/P7/8/8/8/8/8/6K1 w - - 0 1", "a7a8q", 800),
    ("queen promotion into a rook's file", "1r5k/P7/8/8/8/8/8/6K1 w - - 0 1", "a7a8q", -100),
    ("the king recaptures a lone rook", "8/8/4k3/4p3/8/8/8/4RK2 w - - 0 1", "e1e5", -400),
    ("the king may not recapture a defended rook", "8/8/4k3/4p3/8/8/1B6/4RK2 w - - 0 1", "e1e5", 100),
    ("pawn takes a queen defended by a pawn", "4k3/8/2p5/3q4/4P3/8/8/4K3 w - - 0 1", "e4d5", 800),
    ("capture promoting to a queen, recaptured by a knight", "1r5k/P2n4/8/8/8/8/8/6K1 w - - 0 1", "a7b8q", 400),
]
@pytest.mark.parametrize(("what", "fen", "uci", "value"), TEXTBOOK, ids=[t[0] for t in TEXTBOOK])
def test_plain_exchanges_give_the_textbook_values(what: str, fen: str, uci: str, value: int) -> None:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert move in board.legal_moves
    assert exchange_value(board, move) == swap_list_see(board, move) == value


@pytest.mark.parametrize(("what", "fen", "uci", "value"), TEXTBOOK, ids=[t[0] for t in TEXTBOOK])
def test_kernel_see_gives_the_textbook_values(what: str, fen: str, uci: str, value: int) -> None:
    # two of these (a pawn takes a defended queen; a promotion recaptured) caught the kernel
    # stopping once the sign was decided, returning a bound instead of the value
    assert kernel_see(chess.Board(fen), chess.Move.from_uci(uci)) == value


def captures_and_promotions(boards: list[chess.Board]) -> list[tuple[chess.Board, chess.Move, int]]:
    """(board, move, kernel SEE) of every capture and promotion of ``boards``."""
    out = []
    gain = np.zeros(40, dtype=np.int64)
    for board in boards:
        b = from_chess(board)
        for m in legal_moves(b):
            move = move_to_chess(int(m))
            if board.is_capture(move) or move.promotion:
                out.append((board, move, int(see(b, int(m), gain))))
    return out


@pytest.fixture(scope="module")
def real_captures(real_boards: list[chess.Board]) -> list[tuple[chess.Board, chess.Move, int]]:
    return captures_and_promotions(real_boards[::3])


def test_kernel_see_equals_the_exchange_on_real_positions(
        real_captures: list[tuple[chess.Board, chess.Move, int]]) -> None:
    # quiescence drops the captures with SEE < 0, so the sign is what the search uses; the
    # value is the kernel's contract too
    assert len(real_captures) > 2000
    assert sum(board.is_en_passant(move) for board, move, _ in real_captures) >= 1
    assert sum(move.promotion is not None for _, move, _ in real_captures) >= 10
    losing = deep = 0
    for board, move, value in real_captures:
        plain = exchange_value(board, move)
        assert swap_list_see(board, move) == plain, (board.fen(), move.uci())
        assert value == plain, (board.fen(), move.uci(), value, plain)
        losing += plain < 0
        # exchanges where a recapture is answered again (x-rays and batteries at work)
        b = board.copy(stack=False)
        b.push(move)
        deep += len(b.attackers(b.turn, move.to_square)) >= 1 and len(b.attackers(not b.turn, move.to_square)) >= 1
    assert losing > 100 and deep > 100


def test_captures_of_a_piece_worth_the_capturer_need_no_exchange(
        real_captures: list[tuple[chess.Board, chess.Move, int]]) -> None:
    # quiescence keeps them without computing SEE: SEE >= 0 holds for each, recaptured or not
    kept = 0
    for board, move, value in real_captures:
        if _wins_or_trades(move_from_chess(from_chess(board), move)):
            assert value >= 0, (board.fen(), move.uci(), value)
            kept += 1
    assert 0.2 * len(real_captures) < kept < len(real_captures)  # 578 of 2,264 when written


def assert_quiescence_moves_equal_the_oracle(boards: list[chess.Board]) -> int:
    """The kernel's quiescence moves are the oracle's at each board; returns how many boards
    were in check. Not in check: queen promotions and captures with SEE >= 0; in check: every
    evasion."""
    out = np.zeros(MAX_MOVES, dtype=np.int32)
    gain = np.zeros(40, dtype=np.int64)
    checks = 0
    for board in boards:
        n = quiescence_moves(from_chess(board), out, board.is_check(), gain)
        assert sorted(move_to_chess(int(m)).uci() for m in out[:n]) == \
            sorted(m.uci() for m in oracle_quiescence_moves(board)), board.fen()
        checks += board.is_check()
    return checks


def test_quiescence_moves_equal_the_oracle_on_real_positions(real_boards: list[chess.Board]) -> None:
    assert assert_quiescence_moves_equal_the_oracle(real_boards[::3]) >= 30
