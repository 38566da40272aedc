"""The numba kernels of the compact position record (:mod:`tuner.ingest.compact`): FEN text to
the packed board fields, packed fields to FEN text, to the search's board arrays and to the
legal-move count, and the check of a record's board fields read from a file.

Private kernels on typed arrays only (no python-chess object, no exception inside); the
public wrappers in :mod:`tuner.ingest.compact` check shapes and dtypes, call them and turn
their error codes into one-line messages. Each kernel takes the record's board fields as
separate arrays (views of a structured array's fields work: numba reads any layout):

* ``occ`` uint64[n]: occupancy bitboard (bit k: square k, a1 = 0, h8 = 63);
* ``pieces`` uint8[n, 16]: the piece code of the k-th occupied square (ascending) in nibble
  k, the low nibble of byte k // 2 first; codes :data:`CODE_PAWN` .. :data:`CODE_KING`
  (the search's piece types), :data:`CODE_CASTLING_ROOK` (a rook that may still castle),
  plus :data:`CODE_BLACK` for Black; nibbles past the last piece are 0;
* ``stm_ep`` uint8[n]: bits 0-6 the en-passant square as the FEN gives it (64 for none),
  bit 7 the side to move (1 Black);
* ``halfmove``, ``fullmove`` uint16[n]: the FEN's counters.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.board import (BLACK_OO, BLACK_OOO, BOARD_WORDS, NO_SQUARE, W_CASTLE, W_EP, W_FULLMOVE, W_HALFMOVE,
                               W_KEY, W_OCC, W_STM, WHITE_OO, WHITE_OOO, compute_key)
from search.core.fen_batch import ascii_decimal
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves

#: piece codes of a nibble: the search's piece types 0..5 (pawn .. king), 6 a castling rook;
#: Black's have bit 3 set; 7 and 15 name no piece
CODE_PAWN, CODE_ROOK, CODE_KING, CODE_CASTLING_ROOK, CODE_BLACK = 0, 3, 5, 6, 8
#: the most pieces a record holds (32 nibbles)
MAX_PIECES = 32
#: the largest counter a record holds (uint16)
MAX_COUNTER = 65535
#: bytes of FEN text written per record (the longest FEN a record gives is about 110)
FEN_STRIDE = 128
#: ``stm_ep``'s side-to-move bit and en-passant mask
STM_BIT, EP_MASK = 0x80, 0x7F

#: :func:`_pack_fens`'s error codes (index into :data:`tuner.ingest.compact.PACK_ERRORS`)
PACK_TEXT, PACK_PIECES, PACK_CASTLING, PACK_HALFMOVE, PACK_FULLMOVE, PACK_EP = 1, 2, 3, 4, 5, 6
#: :func:`_check_boards`'s error codes (index into :data:`tuner.ingest.compact.CHECK_ERRORS`)
BAD_COUNT, BAD_CODE, BAD_TAIL, BAD_KINGS, BAD_CASTLING, BAD_EP, BAD_FULLMOVE = 1, 2, 3, 4, 5, 6, 7
#: :func:`_unpack_boards`'s error code of a castling right the search's boards cannot hold
BOARD_CHESS960 = 1

_SPACE, _TAB, _SLASH, _DASH = 32, 9, 47, 45
#: FEN letter of each piece code (index: code), ``?`` for the codes that name no piece
_CODE_CHARS = np.frombuffer(b"PNBRQKR?pnbrqkr?", dtype=np.uint8).copy()


@njit(cache=True)
def _letter_code(c: int) -> int:
    """The piece code of a FEN placement letter, -1 for another byte."""
    lower = c | 32
    t = -1
    if lower == 112:  # p
        t = 0
    elif lower == 110:  # n
        t = 1
    elif lower == 98:  # b
        t = 2
    elif lower == 114:  # r
        t = 3
    elif lower == 113:  # q
        t = 4
    elif lower == 107:  # k
        t = 5
    if t < 0:
        return -1
    return t if c < 97 else t | CODE_BLACK


@njit(cache=True)
def _counter(buf, a, b):  # type: ignore[no-untyped-def]
    """The decimal number in ``buf[a:b]``: -1 when it is not one (1 to 10 ASCII digits), -2
    when it is above :data:`MAX_COUNTER`."""
    value = ascii_decimal(buf, a, b)
    if value < 0:
        return -1
    if value > MAX_COUNTER:
        return -2
    return value


# long: numba kernel, the FEN's fields parsed in order, each with its error code
@njit(cache=True)
def _pack_one(buf, start, end, sq, fs, fe):  # type: ignore[no-untyped-def]
    """Parse the FEN ``buf[start:end]``: its squares' codes into ``sq`` (int64[64], -1
    empty); return ``(error, stm_ep, halfmove, fullmove)``."""
    n = 0
    p = start
    while p < end:
        while p < end and (buf[p] == _SPACE or buf[p] == _TAB):
            p += 1
        if p >= end:
            break
        if n == 6:
            return PACK_TEXT, 0, 0, 0
        fs[n] = p
        while p < end and buf[p] != _SPACE and buf[p] != _TAB:
            p += 1
        fe[n] = p
        n += 1
    if n < 4:
        return PACK_TEXT, 0, 0, 0
    for k in range(64):
        sq[k] = -1
    rank, file, count = 7, 0, 0
    for k in range(fs[0], fe[0]):
        c = int(buf[k])
        if c == _SLASH:
            if file != 8 or rank == 0:
                return PACK_TEXT, 0, 0, 0
            rank -= 1
            file = 0
        elif 49 <= c <= 56:
            file += c - 48
            if file > 8:
                return PACK_TEXT, 0, 0, 0
        else:
            code = _letter_code(c)
            if code < 0 or file >= 8:
                return PACK_TEXT, 0, 0, 0
            sq[rank * 8 + file] = code
            file += 1
            count += 1
    if rank != 0 or file != 8:
        return PACK_TEXT, 0, 0, 0
    if count > MAX_PIECES:
        return PACK_PIECES, 0, 0, 0
    if fe[1] - fs[1] != 1 or (buf[fs[1]] != 119 and buf[fs[1]] != 98):  # 'w', 'b'
        return PACK_TEXT, 0, 0, 0
    black = buf[fs[1]] == 98
    # castling: K/Q the outermost rook on that side of the king, A-H/a-h the rook on that file
    if not (fe[2] - fs[2] == 1 and buf[fs[2]] == _DASH):
        for k in range(fs[2], fe[2]):
            c = int(buf[k])
            colour = 0 if c < 97 else CODE_BLACK
            back = 0 if colour == 0 else 56
            lower = c | 32
            king = -1
            for f in range(8):
                if sq[back + f] == CODE_KING | colour:
                    king = f
            if king < 0:
                return PACK_CASTLING, 0, 0, 0
            rook = -1
            if lower == 107:  # k: the rightmost rook, right of the king
                for f in range(7, king, -1):
                    if rook < 0 and (sq[back + f] == CODE_ROOK | colour or sq[back + f] == CODE_CASTLING_ROOK | colour):
                        rook = f
            elif lower == 113:  # q: the leftmost rook, left of the king
                for f in range(king):
                    if rook < 0 and (sq[back + f] == CODE_ROOK | colour or sq[back + f] == CODE_CASTLING_ROOK | colour):
                        rook = f
            elif 97 <= lower <= 104:
                rook = lower - 97
            else:
                return PACK_TEXT, 0, 0, 0
            if rook < 0 or rook == king or sq[back + rook] != CODE_ROOK | colour:  # no rook there, or named twice
                return PACK_CASTLING, 0, 0, 0
            sq[back + rook] = CODE_CASTLING_ROOK | colour
    # en passant: on the sixth rank with White to move, the third with Black
    ep = NO_SQUARE
    if not (fe[3] - fs[3] == 1 and buf[fs[3]] == _DASH):
        if fe[3] - fs[3] != 2:
            return PACK_TEXT, 0, 0, 0
        f, r = int(buf[fs[3]]) - 97, int(buf[fs[3] + 1]) - 49
        if f < 0 or f > 7 or r < 0 or r > 7:
            return PACK_TEXT, 0, 0, 0
        if r != (2 if black else 5):
            return PACK_EP, 0, 0, 0
        ep = r * 8 + f
    half, full = 0, 1
    if n > 4:
        half = _counter(buf, fs[4], fe[4])
        if half == -2:
            return PACK_HALFMOVE, 0, 0, 0
        if half < 0:
            return PACK_TEXT, 0, 0, 0
    if n > 5:
        full = _counter(buf, fs[5], fe[5])
        if full == -2:
            return PACK_FULLMOVE, 0, 0, 0
        if full < 1:
            return PACK_TEXT, 0, 0, 0
    return 0, ep | (STM_BIT if black else 0), half, full


@njit(cache=True)
def _pack_fens(buf, starts, ends, occ, pieces, stm_ep, halfmove, fullmove, err):  # type: ignore[no-untyped-def]
    """Pack FEN ``i`` (``buf[starts[i]:ends[i]]``) into the board fields of record ``i``
    (zeroed), its error code (``PACK_*``, 0 when it fits) into ``err[i]``."""
    sq = np.full(64, -1, dtype=np.int64)
    fs = np.zeros(6, dtype=np.int64)
    fe = np.zeros(6, dtype=np.int64)
    for i in range(starts.shape[0]):
        e, se, half, full = _pack_one(buf, starts[i], ends[i], sq, fs, fe)
        err[i] = e
        if e != 0:
            continue
        bits = np.uint64(0)
        k = 0
        for s in range(64):
            if sq[s] >= 0:
                bits |= np.uint64(1) << np.uint64(s)
                pieces[i, k >> 1] |= np.uint8(sq[s] << (4 * (k & 1)))
                k += 1
        occ[i] = bits
        stm_ep[i] = se
        halfmove[i] = half
        fullmove[i] = full


@njit(cache=True)
def _squares(occ, row, sq):  # type: ignore[no-untyped-def]
    """The codes of a record's squares into ``sq`` (int64[64], -1 empty); return the number of
    pieces (more than :data:`MAX_PIECES`: the rest is not read)."""
    for s in range(64):
        sq[s] = -1
    k = 0
    for s in range(64):
        if (occ >> np.uint64(s)) & np.uint64(1):
            if k < MAX_PIECES:
                sq[s] = (int(row[k >> 1]) >> (4 * (k & 1))) & 15
            k += 1
    return k


@njit(cache=True)
def _check_one(occ, row, stm_ep, fullmove, sq):  # type: ignore[no-untyped-def]
    """The error code (``BAD_*``) of one record's board fields, 0 when they make a board."""
    n = _squares(occ, row, sq)
    if n > MAX_PIECES:
        return BAD_COUNT
    for k in range(n, MAX_PIECES):
        if (int(row[k >> 1]) >> (4 * (k & 1))) & 15:
            return BAD_TAIL
    kings = np.zeros(2, dtype=np.int64)
    king_sq = np.zeros(2, dtype=np.int64)
    for s in range(64):
        c = sq[s]
        if c < 0:
            continue
        if (c & 7) == 7:
            return BAD_CODE
        if (c & 7) == CODE_KING:
            kings[c >> 3] += 1
            king_sq[c >> 3] = s
    if kings[0] != 1 or kings[1] != 1:
        return BAD_KINGS
    for s in range(64):
        c = sq[s]
        if c >= 0 and (c & 7) == CODE_CASTLING_ROOK:
            colour = c >> 3
            back = 0 if colour == 0 else 56
            if s < back or s >= back + 8 or king_sq[colour] < back or king_sq[colour] >= back + 8:
                return BAD_CASTLING
    ep = int(stm_ep) & EP_MASK
    if ep != NO_SQUARE:
        black = (int(stm_ep) & STM_BIT) != 0
        if ep > 63 or (ep >> 3) != (2 if black else 5):
            return BAD_EP
    if fullmove == 0:
        return BAD_FULLMOVE
    return 0


@njit(cache=True)
def _check_boards(occ, pieces, stm_ep, fullmove, err):  # type: ignore[no-untyped-def]
    """``err[i]``: the error code of record ``i``'s board fields (0: they make a board)."""
    sq = np.full(64, -1, dtype=np.int64)
    for i in range(occ.shape[0]):
        err[i] = _check_one(occ[i], pieces[i], stm_ep[i], fullmove[i], sq)


@njit(cache=True)
def _write_number(value, out, p):  # type: ignore[no-untyped-def]
    """Write ``value`` (>= 0) in decimal at ``out[p:]``; return the position after it."""
    digits = np.zeros(10, dtype=np.uint8)
    n = 0
    while True:
        digits[n] = 48 + value % 10
        n += 1
        value //= 10
        if value == 0:
            break
    for k in range(n):
        out[p + k] = digits[n - 1 - k]
    return p + n


# long: numba kernel, the six FEN fields written in order
@njit(cache=True)
def _write_fen(sq, stm_ep, half, full, out, chars):  # type: ignore[no-untyped-def]
    """Write the FEN of a checked record (its squares' codes ``sq``) into ``out`` as
    python-chess's ``Board.fen()`` writes it (castling in X-FEN: ``K``/``Q`` for the outermost
    rook on its side of the king, else the rook's file); return its length."""
    p = 0
    for rank in range(7, -1, -1):
        empty = 0
        for file in range(8):
            c = sq[rank * 8 + file]
            if c < 0:
                empty += 1
                continue
            if empty:
                out[p] = 48 + empty
                p += 1
                empty = 0
            out[p] = chars[c]
            p += 1
        if empty:
            out[p] = 48 + empty
            p += 1
        if rank:
            out[p] = _SLASH
            p += 1
    out[p] = _SPACE
    out[p + 1] = 98 if int(stm_ep) & STM_BIT else 119
    out[p + 2] = _SPACE
    p += 3
    first = p
    for colour in range(2):
        back = 0 if colour == 0 else 56
        rook = CODE_ROOK | (colour << 3)
        castling = CODE_CASTLING_ROOK | (colour << 3)
        king = -1
        for f in range(8):
            if sq[back + f] == CODE_KING | (colour << 3):
                king = f
        for f in range(7, -1, -1):  # python-chess scans the rights from h to a
            if sq[back + f] != castling:
                continue
            a_side = f < king
            by_file = False
            for g in range(8):
                if g != f and (sq[back + g] == rook or sq[back + g] == castling) and (g < f) == a_side:
                    by_file = True
            ch = 97 + f if by_file else (113 if a_side else 107)
            out[p] = ch - 32 if colour == 0 else ch
            p += 1
    if p == first:
        out[p] = _DASH
        p += 1
    out[p] = _SPACE
    p += 1
    ep = int(stm_ep) & EP_MASK
    if ep == NO_SQUARE:
        out[p] = _DASH
        p += 1
    else:
        out[p] = 97 + (ep & 7)
        out[p + 1] = 49 + (ep >> 3)
        p += 2
    out[p] = _SPACE
    p = _write_number(int(half), out, p + 1)
    out[p] = _SPACE
    return _write_number(int(full), out, p + 1)


@njit(cache=True)
def _unpack_fens(occ, pieces, stm_ep, halfmove, fullmove, chars, fen_buf, fen_len):  # type: ignore[no-untyped-def]
    """The FEN of each checked record ``i`` into ``fen_buf[i]``, its length into ``fen_len[i]``."""
    sq = np.full(64, -1, dtype=np.int64)
    for i in range(occ.shape[0]):
        _squares(occ[i], pieces[i], sq)
        fen_len[i] = _write_fen(sq, stm_ep[i], halfmove[i], fullmove[i], fen_buf[i], chars)


@njit(cache=True)
def _unpack_boards(occ, pieces, stm_ep, halfmove, fullmove, boards, err):  # type: ignore[no-untyped-def]
    """Each checked record ``i`` as the search's board ``boards[i]`` (zeroed; its Zobrist key
    included), or ``err[i] = BOARD_CHESS960`` when a castling rook is not on a corner with its
    king on e1/e8 (a right the search's boards cannot hold)."""
    sq = np.full(64, -1, dtype=np.int64)
    for i in range(occ.shape[0]):
        _squares(occ[i], pieces[i], sq)
        b = boards[i]
        rights = 0
        for s in range(64):
            c = sq[s]
            if c < 0:
                continue
            colour = c >> 3
            t = c & 7
            if t == CODE_CASTLING_ROOK:
                t = CODE_ROOK
                if s == 7 and sq[4] == CODE_KING:
                    rights |= WHITE_OO
                elif s == 0 and sq[4] == CODE_KING:
                    rights |= WHITE_OOO
                elif s == 63 and sq[60] == CODE_KING | CODE_BLACK:
                    rights |= BLACK_OO
                elif s == 56 and sq[60] == CODE_KING | CODE_BLACK:
                    rights |= BLACK_OOO
                else:
                    err[i] = BOARD_CHESS960
            m = np.uint64(1) << np.uint64(s)
            b[t] |= m
            b[W_OCC + colour] |= m
        b[W_STM] = np.uint64(1 if int(stm_ep[i]) & STM_BIT else 0)
        b[W_CASTLE] = np.uint64(rights)
        b[W_EP] = np.uint64(int(stm_ep[i]) & EP_MASK)
        b[W_HALFMOVE] = np.uint64(halfmove[i])
        b[W_FULLMOVE] = np.uint64(fullmove[i])
        if err[i] == 0:
            b[W_KEY] = compute_key(b)


@njit(cache=True)
def _count_legal(boards, todo, n_legal):  # type: ignore[no-untyped-def]
    """``n_legal[i]``: the legal moves of board ``i`` where ``todo[i]``."""
    moves = np.zeros(MAX_MOVES, dtype=np.int32)
    for i in range(boards.shape[0]):
        if todo[i]:
            n_legal[i] = generate_moves(boards[i], moves, ALL_MOVES)


__all__ = ["BOARD_WORDS", "CODE_BLACK", "CODE_CASTLING_ROOK", "FEN_STRIDE", "MAX_COUNTER", "MAX_PIECES"]
