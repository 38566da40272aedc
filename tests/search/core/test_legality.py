"""``is_legal`` (one move's legality, for the table's move) against membership in the generator's
list (itself checked by perft and python-chess) and against python-chess, on the shipped games'
positions and on positions made for the special moves: each board's own moves, the moves of
other positions, and every move with one field of its encoding altered."""

from __future__ import annotations

import chess
import numpy as np

from search.core.board import FLAG_CASTLE, FLAG_EP, decode_move, encode_move
from search.core.convert import from_chess, legal_moves, move_to_chess
from search.core.legality import is_legal

SPECIAL = [
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",  # castling either way
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "r3k2r/8/8/8/8/8/6b1/R3K2R w KQkq - 0 1",  # the bishop on g2 covers f1: no O-O
    "r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1",  # one right each
    "r3k2r/8/8/8/1q6/8/8/R3K2R w KQkq - 0 1",  # the queen on b4 checks: no castling
    "r3k2r/8/8/8/8/8/8/RN2K1NR w KQkq - 0 1",  # pieces in the way
    "rn2k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",  # b8 blocked: no O-O-O for black
    "r3k2r/8/8/8/8/5q2/8/R3K2R w KQkq - 0 1",  # the queen on f3 covers f1 and d1
    "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",  # en passant
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1",  # en passant along a rank (illegal: pins the king)
    "8/8/8/1k6/3pP3/8/8/4K2B b - e3 0 1",  # en passant pinned along a diagonal
    "8/2k5/8/3pP3/8/8/8/4K3 w - d6 0 1",
    "4k3/8/8/8/3Pp3/8/2K5/8 b - d3 0 1",
    "8/2P1k3/8/8/8/8/8/4K3 w - - 0 1",  # promotions
    "3r4/2P1k3/8/8/8/8/8/4K3 w - - 0 1",  # a capture that promotes
    "4k3/8/8/8/1b6/8/3P4/4K3 w - - 0 1",  # a pinned pawn
    "4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1",  # a pinned knight
    "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1",  # in check: the king takes or steps
    "4k3/8/8/8/8/2n5/8/R3K3 w Q - 0 1",  # a knight's check: no castling, blocks do not help
    "4k3/8/8/8/8/8/8/r3K2R w K - 0 1",  # double threats along the first rank
    "4k3/8/8/8/4r3/8/8/R3K2R w KQ - 0 1",  # a rook's check along the e-file
    "k7/8/8/8/8/8/6p1/4K2R b K - 0 1",  # black promotes on a rook's square
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2",  # double pushes, an ep square with no taker
]


def _variants(m: int) -> list[int]:
    """``m`` with one field of its encoding (promotion, flag, piece, captured piece, from, to) set
    to each other value it can hold, and with a stray high bit."""
    frm, to, promo, flag, pt, cap = decode_move(m)
    out = [m | (1 << 23), -m]
    out += [encode_move(frm, to, p, flag, pt, cap) for p in range(8) if p != promo]
    out += [encode_move(frm, to, promo, f, pt, cap) for f in range(4) if f != flag]
    out += [encode_move(frm, to, promo, flag, p, cap) for p in range(8) if p != pt]
    out += [encode_move(frm, to, promo, flag, pt, c) for c in range(8) if c != cap]
    out += [encode_move(frm, t, promo, flag, pt, cap) for t in (to ^ 1, to ^ 8, to ^ 16, to ^ 9)]
    out += [encode_move(f, to, promo, flag, pt, cap) for f in (frm ^ 1, frm ^ 8)]
    return out


def _check(board: chess.Board, others: list[int]) -> tuple[int, int]:
    """Every candidate on ``board``: its own moves, ``others`` and the variants of both; return
    how many were legal and how many were not."""
    b = from_chess(board)
    own = [int(m) for m in legal_moves(b)]
    legal = set(own)
    cands = set(own) | set(others)
    for m in own + others:
        cands.update(_variants(m))
    cands.add(0)
    yes = no = 0
    for m in sorted(cands):
        got = is_legal(b, np.int32(m))
        assert got == (m in legal), (board.fen(), m, decode_move(m) if m > 0 else m)
        if got:
            assert move_to_chess(m) in board.legal_moves, (board.fen(), m)
            yes += 1
        else:
            no += 1
    return yes, no


def test_is_legal_equals_the_generator_on_the_shipped_games(real_boards: list[chess.Board]) -> None:
    yes = no = 0
    boards = real_boards[::7]
    moves = [[int(m) for m in legal_moves(from_chess(board))] for board in boards]
    for k, board in enumerate(boards):
        # the moves of a few other positions: the nearby ones of the same game, and one far away
        others = [m for j in (k - 2, k - 1, k + 1, k + 2, k + len(boards) // 2) for m in moves[j % len(boards)]]
        y, n = _check(board, others)
        yes += y
        no += n
    assert yes > 10_000 and no > 100_000


def test_is_legal_equals_the_generator_on_the_special_moves() -> None:
    boards = [chess.Board(fen) for fen in SPECIAL]
    every = [int(m) for board in boards for m in legal_moves(from_chess(board))]
    castles = eps = 0
    for board in boards:
        _check(board, every)
        for m in legal_moves(from_chess(board)):
            flag = decode_move(int(m))[3]
            castles += flag == FLAG_CASTLE
            eps += flag == FLAG_EP
    assert castles >= 6 and eps >= 4  # the special moves are there to be checked


def test_is_legal_refuses_castling_through_an_attacked_square_and_a_pinned_en_passant() -> None:
    # hand-written cases, each against python-chess's verdict
    cases = [
        ("r3k2r/8/8/8/8/5q2/8/R3K2R w KQkq - 0 1", "e1g1", False),  # f1 attacked
        ("r3k2r/8/8/8/8/5q2/8/R3K2R w KQkq - 0 1", "e1c1", False),  # d1 attacked
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1", True),
        ("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1", "e5d6", False),  # ep exposes the king along the rank
        ("8/2k5/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", True),
    ]
    for fen, uci, want in cases:
        board = chess.Board(fen)
        assert (chess.Move.from_uci(uci) in board.legal_moves) == want
        b = from_chess(board)
        frm, to = chess.parse_square(uci[:2]), chess.parse_square(uci[2:4])
        flag = FLAG_CASTLE if uci in ("e1g1", "e1c1") else FLAG_EP
        m = encode_move(frm, to, 0, flag, 5 if flag == FLAG_CASTLE else 0, 6 if flag == FLAG_CASTLE else 0)
        assert is_legal(b, np.int32(m)) == want, (fen, uci)
