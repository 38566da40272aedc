"""Replay parsed games on the numba core: legal-move counts, Zobrist keys and FEN text.

python-chess parses the SAN of a game (and so decides legality); what every kept position then
needs (its FEN, polyglot key and number of legal moves) costs python-chess around 150 us per
position, which would make a 7,400-game collection take minutes. This module replays the
already-validated moves of a batch of games in one private ``@njit`` kernel over plain arrays
and returns those three things for every ply; :func:`replay` is the validating wrapper.

The kernel's output equals python-chess's ``board.fen()`` (en-passant square written only when
an en-passant capture is legal), ``chess.polyglot.zobrist_hash(board)`` and
``board.legal_moves.count()``; ``tests/tuner/ingest/test_pipeline.py`` checks that against python-chess on
real games and random playouts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from search.core.board import (BOARD_WORDS, CASTLING_RIGHTS, FLAG_EP, NO_SQUARE, W_CASTLE, W_EP, W_FULLMOVE, W_HALFMOVE,
                          W_KEY, W_OCC, W_STM, make_move, make_uci_key, move_flag, move_uci_key)
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.core.validate import check_boards_array

#: Bytes reserved per FEN in the output buffer (the longest FEN is well under 100 characters).
FEN_STRIDE = 100

_PIECE_CHARS = np.frombuffer(b"PNBRQKpnbrqk", dtype=np.uint8).copy()
#: FEN letter (ASCII) and ``W_CASTLE`` bit of each castling right, in FEN order
_CASTLE_CHARS = np.array([ord(letter) for _, letter, _, _, _ in CASTLING_RIGHTS], dtype=np.uint8)
_CASTLE_BITS = np.array([right for right, _, _, _, _ in CASTLING_RIGHTS], dtype=np.int64)


@njit(cache=True)
def _write_int(buf: np.ndarray, pos: int, value: int) -> int:
    """Write the decimal digits of ``value`` (>= 0) at ``buf[pos:]``; return the new end."""
    if value == 0:
        buf[pos] = 48
        return pos + 1
    n = 0
    v = value
    while v > 0:
        n += 1
        v //= 10
    end = pos + n
    v = value
    for i in range(n):
        buf[end - 1 - i] = 48 + v % 10
        v //= 10
    return end


@njit(cache=True)
def _write_fen(b: np.ndarray, ep_legal: bool, chars: np.ndarray, buf: np.ndarray, pos: int) -> int:
    """Write the FEN of ``b`` at ``buf[pos:]`` as python-chess's ``Board.fen()`` does."""
    white = b[W_OCC]
    for rank in range(7, -1, -1):
        empty = 0
        for file in range(8):
            m = np.uint64(1) << np.uint64(rank * 8 + file)
            piece = -1
            for p in range(6):
                if b[p] & m:
                    piece = p
                    break
            if piece < 0:
                empty += 1
                continue
            if empty:
                buf[pos] = 48 + empty
                pos += 1
                empty = 0
            buf[pos] = chars[piece] if white & m else chars[piece + 6]
            pos += 1
        if empty:
            buf[pos] = 48 + empty
            pos += 1
        if rank:
            buf[pos] = 47  # '/'
            pos += 1
    buf[pos] = 32
    buf[pos + 1] = 119 if b[W_STM] == 0 else 98  # 'w' / 'b'
    buf[pos + 2] = 32
    pos += 3
    rights = np.int64(b[W_CASTLE])
    if rights == 0:
        buf[pos] = 45  # '-'
        pos += 1
    else:
        for r in range(len(_CASTLE_BITS)):
            if rights & _CASTLE_BITS[r]:
                buf[pos] = _CASTLE_CHARS[r]
                pos += 1
    buf[pos] = 32
    pos += 1
    ep = np.int64(b[W_EP])
    if ep_legal and ep != NO_SQUARE:
        buf[pos] = 97 + (ep & 7)
        buf[pos + 1] = 49 + (ep >> 3)
        pos += 2
    else:
        buf[pos] = 45
        pos += 1
    buf[pos] = 32
    pos = _write_int(buf, pos + 1, np.int64(b[W_HALFMOVE]))  # type: ignore[arg-type]
    buf[pos] = 32
    return _write_int(buf, pos + 1, np.int64(b[W_FULLMOVE]))  # type: ignore[arg-type]


# many parameters: a numba kernel takes arrays and scalars (no dataclass in nopython mode); the games' moves and one
# output array per column
@njit(cache=True)
def _replay_kernel(starts, offsets, frm, to, promo, want_fen, chars,  # type: ignore[no-untyped-def]
                   n_legal, keys, stm, fen_buf, fen_len, bad_ply):
    """Replay every game; fill per-ply outputs; ``bad_ply[g]`` = first ply not found (or -1).

    starts uint64[G, BOARD_WORDS]; offsets int64[G + 1]; frm/to/promo int32[P] (promo: 0 or the
    core's KNIGHT..QUEEN); want_fen bool[P]; outputs n_legal int32[P], keys uint64[P],
    stm int8[P], fen_buf uint8[P, FEN_STRIDE], fen_len int32[P], bad_ply int64[G].
    """
    moves = np.zeros(MAX_MOVES, dtype=np.int32)
    cur = np.zeros(BOARD_WORDS, dtype=np.uint64)
    nxt = np.zeros(BOARD_WORDS, dtype=np.uint64)
    for g in range(starts.shape[0]):
        for w in range(BOARD_WORDS):
            cur[w] = starts[g, w]
        bad_ply[g] = -1
        for i in range(offsets[g], offsets[g + 1]):
            n = generate_moves(cur, moves, ALL_MOVES)
            n_legal[i] = n
            keys[i] = cur[W_KEY]
            stm[i] = np.int8(cur[W_STM])
            found = -1
            ep_legal = False
            played = make_uci_key(frm[i], to[i], promo[i])
            for k in range(n):
                m = moves[k]
                if move_flag(m) == FLAG_EP:
                    ep_legal = True
                if move_uci_key(m) == played:
                    found = m
            if found < 0:
                bad_ply[g] = i - offsets[g]
                break
            if want_fen[i]:
                fen_len[i] = _write_fen(cur, ep_legal, chars, fen_buf[i], 0)
            make_move(cur, nxt, found)
            cur, nxt = nxt, cur


@dataclass(frozen=True)
class Replay:
    """Per-ply results of :func:`replay` (``P`` = total plies of the batch).

    Attributes
    ----------
    n_legal : int32[P]
        Legal moves in the position before the ply's move.
    keys : uint64[P]
        Polyglot Zobrist key of that position.
    stm : int8[P]
        Side to move (0 white, 1 black).
    fens : list[str | None]
        FEN of the position where ``want_fen`` was set, else ``None``.
    bad_ply : int64[G]
        Per game, the first ply whose move the core could not find among the legal moves
        (-1 when the whole game replayed; a mismatch means the core and python-chess disagree).
    """

    n_legal: np.ndarray
    keys: np.ndarray
    stm: np.ndarray
    fens: list[str | None]
    bad_ply: np.ndarray


def replay(starts: np.ndarray, offsets: np.ndarray, frm: np.ndarray, to: np.ndarray,
           promo: np.ndarray, want_fen: np.ndarray) -> Replay:
    """Replay a batch of games on the numba core.

    Parameters
    ----------
    starts : uint64[G, BOARD_WORDS]
        Initial position of each game (:func:`search.core.convert.from_chess`); another array
        raises :class:`search.core.validate.InvalidBoardError`.
    offsets : int64[G + 1]
        Game ``g``'s plies are ``offsets[g]:offsets[g + 1]`` of the per-ply arrays.
    frm, to : int32[P]
        From and to squares (0 = a1 .. 63 = h8) of each ply's move; castling as the king's move.
    promo : int32[P]
        Promotion piece in the core's numbering (0 none, 1 knight .. 4 queen).
    want_fen : bool[P]
        Plies whose position's FEN is wanted.
    """
    starts = np.ascontiguousarray(check_boards_array(starts))
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    frm, to, promo = (np.ascontiguousarray(a, dtype=np.int32) for a in (frm, to, promo))
    want_fen = np.ascontiguousarray(want_fen, dtype=np.bool_)
    n_games = starts.shape[0]
    n_plies = frm.shape[0]
    if offsets.shape != (n_games + 1,) or offsets[0] != 0 or offsets[-1] != n_plies or np.any(np.diff(offsets) < 0):
        raise ValueError("offsets must be a non-decreasing int64[G + 1] from 0 to the number of plies")
    if not (to.shape == promo.shape == want_fen.shape == (n_plies,)):
        raise ValueError("frm, to, promo and want_fen must all have one entry per ply")
    if n_plies and (frm.min() < 0 or frm.max() > 63 or to.min() < 0 or to.max() > 63
                    or promo.min() < 0 or promo.max() > 4):
        raise ValueError("squares must be in 0..63 and promotions in 0..4")
    n_legal = np.zeros(n_plies, dtype=np.int32)
    keys = np.zeros(n_plies, dtype=np.uint64)
    stm = np.zeros(n_plies, dtype=np.int8)
    fen_buf = np.zeros((n_plies, FEN_STRIDE), dtype=np.uint8)
    fen_len = np.zeros(n_plies, dtype=np.int32)
    bad_ply = np.full(n_games, -1, dtype=np.int64)
    if n_games:
        _replay_kernel(starts, offsets, frm, to, promo, want_fen, _PIECE_CHARS,
                       n_legal, keys, stm, fen_buf, fen_len, bad_ply)
    raw = fen_buf.tobytes()
    fens: list[str | None] = [None] * n_plies
    for i in np.flatnonzero(fen_len).tolist():
        start = i * FEN_STRIDE
        fens[i] = raw[start:start + int(fen_len[i])].decode("ascii")
    return Replay(n_legal=n_legal, keys=keys, stm=stm, fens=fens, bad_ply=bad_ply)
