"""The batch FEN parser (search.core.fen_batch) against search.core.convert.from_fen and python-chess as
oracles: the same verdict on every text, the same boards and keys, python-chess's FEN and
legal-move counts, and the moves that UCI and SAN texts name."""

from __future__ import annotations

import random

import chess
import chess.pgn
import chess.polyglot
import numpy as np
import pytest
from tests.conftest import SAMPLE_PGN

from search.core.convert import InvalidFenError, from_fen
from search.core.fen_batch import AMBIGUOUS_MOVE, ILLEGAL_MOVE, NO_MOVE, move_specs, parse_fens
from search.core.board import uci_texts


def sample_positions() -> list[tuple[chess.Board, chess.Move]]:
    """Every position of the shipped sample games with the move played in it."""
    out = []
    with SAMPLE_PGN.open(encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            board = game.board()
            for move in game.mainline_moves():
                out.append((board.copy(stack=False), move))
                board.push(move)
    return out


def batch(texts: list[str], moves: list[str | None] | None = None):  # type: ignore[no-untyped-def]
    buf = "\n".join(texts).encode("ascii")
    lengths = np.array([len(t) + 1 for t in texts], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    specs, bad = move_specs(moves if moves is not None else [None] * len(texts))
    assert not bad
    return parse_fens(buf, starts, starts + lengths - 1, specs)


def oracle_accepts(fen: str) -> bool:
    try:
        from_fen(fen)
    except InvalidFenError:
        return False
    return True


# FENs that break one rule each (from_fen's own error cases and python-chess's check rules)
TRICKY = [
    "", "8/8/8 w - -", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",
    "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/08/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR ww KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkz - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w qkQK - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq z9 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq E3 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2147483648",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2147483647",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 00000000000 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 5",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\tw\tKQkq\t-",
    "8/8/8/8/8/8/8/K7 w - - 0 1", "k7/8/8/8/8/8/8/KK6 w - - 0 1", "kP6/8/8/8/8/8/8/K7 w - - 0 1",
    "k6R/8/8/8/8/8/8/K7 w - - 0 1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3 0 1",
    "rnbqkbnr/pppp1ppp/8/8/4p3/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1",
    "QQQQQQQQ/QQQQQQQQ/8/8/8/8/8/K6k w - - 0 1",
    "4k3/8/8/8/8/8/PPPPPPPP/QQQQKQQQ w - - 0 1",
    # three checkers; two checkers on one line with the king; a discovered double check
    "4k3/8/3N1N2/8/4R3/8/8/4K3 b - - 0 1", "4k3/8/8/4R3/8/8/4R3/4K3 b - - 0 1",
    "4k3/8/5N2/8/4R3/8/8/4K3 b - - 0 1", "4R3/8/8/4k3/8/8/8/4R2K b - - 0 1",
    # a check that the en-passant pawn's push could not have given, and one it could
    "8/8/8/2k5/3Pp3/8/8/3KR3 b - d3 0 1", "8/8/8/2k5/3P4/8/8/3K4 b - d3 0 1",
    "4k3/8/8/8/3pP3/8/8/R3K3 b Q e3 0 1", "r3k3/8/8/8/3pP3/8/8/4K3 b q e3 0 1",
    "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1", "8/8/8/8/k2Pp3/8/8/3K3B b - d3 0 1",
    "8/8/8/8/k2P4/8/8/R2K4 b - d3 0 1", "8/8/8/8/3P4/4k3/8/2BK4 b - d3 0 1",
]


def test_verdicts_match_from_fen_on_tricky_texts() -> None:
    result = batch(TRICKY)
    messages = " | ".join(e for e in result.errors if e)
    assert "more than two pieces" in messages and "could not have given check together" in messages
    for i, fen in enumerate(TRICKY):
        assert bool(result.ok[i]) == oracle_accepts(fen), (fen, result.errors[i])
        assert (result.errors[i] is None) == bool(result.ok[i])


def mutate(fen: str, rng: random.Random) -> str:
    """One seeded edit of a FEN: a character replaced, dropped or duplicated."""
    i = rng.randrange(len(fen))
    c = rng.choice("pnbrqkPNBRQK12345678/ wb-KQkqace36x0")
    return rng.choice([fen[:i] + c + fen[i + 1:], fen[:i] + fen[i + 1:], fen[:i] + fen[i] + fen[i:]])


def test_verdicts_match_from_fen_on_edited_sample_positions() -> None:
    rng = random.Random(7)
    fens = [board.fen() for board, _ in sample_positions()[::3]]
    texts = [mutate(f, rng) for f in fens for _ in range(2)]
    result = batch(texts)
    agree = [bool(result.ok[i]) == oracle_accepts(t) for i, t in enumerate(texts)]
    assert all(agree), [t for t, a in zip(texts, agree) if not a][:5]
    assert 0 < result.ok.sum() < len(texts)  # the edits make both kinds


def test_boards_keys_counts_and_fens_match_python_chess() -> None:
    positions = sample_positions()
    texts = [board.fen(en_passant="fen") for board, _ in positions]
    epd = [board.epd() for board, _ in positions[:200]]  # 4 fields: counters default to 0 and 1
    result = batch(texts + epd)
    assert result.ok.all()
    for i, (board, _) in enumerate(positions):
        assert np.array_equal(result.boards[i], from_fen(texts[i]))
        assert int(result.keys[i]) == chess.polyglot.zobrist_hash(board)
        assert result.n_legal[i] == board.legal_moves.count()
        assert result.fens[i] == board.fen()
        assert result.stm[i] == (0 if board.turn else 1)
        assert result.ply[i] == board.ply()
    for j, (board, _) in enumerate(positions[:200]):
        assert result.fens[len(texts) + j] == chess.Board(board.epd()).fen()


def test_moves_in_uci_and_san_are_found() -> None:
    positions = sample_positions()[::2]
    texts = [board.fen() for board, _ in positions]
    uci = batch(texts, [move.uci() for _, move in positions])
    san = batch(texts, [board.san(move) for board, move in positions])
    expected = [move.uci() for _, move in positions]
    assert [uci_texts()[k] for k in uci.moves] == expected
    assert [uci_texts()[k] for k in san.moves] == expected


def test_illegal_ambiguous_and_absent_moves() -> None:
    start = chess.STARTING_FEN
    knights = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1"  # Nd2 is ambiguous, Nbd2 is not
    texts = [start, start, start, start, knights, knights, start, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"]
    moves: list[str | None] = [None, "e2e5", "Nf6", "e4", "Nd2", "Nbd2", "O-O", "O-O-O"]
    result = batch(texts, moves)
    assert result.moves[0] == NO_MOVE
    assert result.moves[1] == ILLEGAL_MOVE and result.moves[2] == ILLEGAL_MOVE
    assert uci_texts()[result.moves[3]] == "e2e4"
    assert result.moves[4] == AMBIGUOUS_MOVE
    assert uci_texts()[result.moves[5]] == "b1d2"
    assert result.moves[6] == ILLEGAL_MOVE
    assert uci_texts()[result.moves[7]] == "e1c1"


def test_unreadable_move_texts_are_reported() -> None:
    _, bad = move_specs(["e4", "Nf3+", "exd8=Q#", "O-O-O", "Zz9", "e8=K", "0000", None])
    assert bad == [4, 5, 6]


@pytest.mark.parametrize("bad", [(-1, 3), (0, 10**6), (5, 2)])
def test_bad_offsets_are_refused(bad: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="offsets"):
        parse_fens(b"abc", np.array([bad[0]]), np.array([bad[1]]))
