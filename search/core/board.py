"""The board as a flat ``uint64`` array, packed moves, and copy-make.

A board is a ``numpy.ndarray`` of dtype ``uint64`` and shape ``(BOARD_WORDS,)``:

=========  =====================================================================
index      content
=========  =====================================================================
0..5       bitboards of pawns, knights, bishops, rooks, queens, kings (both colours)
6, 7       bitboards of all white / all black pieces
8          side to move (0 white, 1 black)
9          castling rights (bit 0 white O-O, 1 white O-O-O, 2 black O-O, 3 black O-O-O)
10         en-passant target square after a double push (64 when none), as in FEN
11         halfmove clock (plies since the last capture or pawn move)
12         fullmove number
13         Zobrist key (polyglot keys, equal to ``chess.polyglot.zobrist_hash``)
14, 15     unused (zero)
=========  =====================================================================

A batch of boards is a ``(n, BOARD_WORDS)`` array. Moves are packed into ``int32``:

==========  ============================================================
bits        field
==========  ============================================================
0..5        from square
6..11       to square (castling: the king's destination, as in UCI)
12..14      promotion piece type (0 none, else KNIGHT..QUEEN)
15..16      flag: 0 normal, 1 double pawn push, 2 en passant, 3 castling
17..19      moving piece type
20..22      captured piece type (NO_PIECE when none; PAWN for en passant)
==========  ============================================================
"""

from __future__ import annotations

import functools

import chess
import chess.polyglot
import numpy as np
from numba import njit

from search.core.attacks import (
    KING_ATTACKS,
    KNIGHT_ATTACKS,
    PAWN_ATTACKS,
    bishop_attacks,
    rook_attacks,
)
from search.core.bits import ONE, ZERO, bit, lsb
from search.core.types import BoardArray, Move, Square, UciKey

# piece types and colours
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 0, 1, 2, 3, 4, 5
NO_PIECE = 6
WHITE, BLACK = 0, 1
PIECE_SYMBOLS = "pnbrqk"

# board words
BOARD_WORDS = 16
W_OCC = 6  # + colour
W_STM = 8
W_CASTLE = 9
W_EP = 10
W_HALFMOVE = 11
W_FULLMOVE = 12
W_KEY = 13
NO_SQUARE = 64

# castling right bits
WHITE_OO, WHITE_OOO, BLACK_OO, BLACK_OOO = 1, 2, 4, 8
#: each castling right: (its bit in ``W_CASTLE``, FEN letter, colour, king's square, rook's
#: square), in FEN order ``KQkq``
CASTLING_RIGHTS = (
    (WHITE_OO, "K", 0, 4, 7),
    (WHITE_OOO, "Q", 0, 4, 0),
    (BLACK_OO, "k", 1, 60, 63),
    (BLACK_OOO, "q", 1, 60, 56),
)

# move fields
FLAG_NORMAL, FLAG_DOUBLE, FLAG_EP, FLAG_CASTLE = 0, 1, 2, 3
NULL_MOVE = 0


@njit(cache=True, inline="always")
def encode_move(frm: Square, to: Square, promo: int, flag: int, piece: int, captured: int) -> Move:
    return frm | (to << 6) | (promo << 12) | (flag << 15) | (piece << 17) | (captured << 20)


@njit(cache=True, inline="always")
def move_from(m: Move) -> int:
    return m & 63


@njit(cache=True, inline="always")
def move_to(m: Move) -> int:
    return (m >> 6) & 63


@njit(cache=True, inline="always")
def move_promo(m: Move) -> int:
    return (m >> 12) & 7


@njit(cache=True, inline="always")
def move_flag(m: Move) -> int:
    return (m >> 15) & 3


@njit(cache=True, inline="always")
def move_piece(m: Move) -> int:
    return (m >> 17) & 7


@njit(cache=True, inline="always")
def move_captured(m: Move) -> int:
    return (m >> 20) & 7



@njit(cache=True, inline="always")
def decode_move(m: Move) -> tuple[int, int, int, int, int, int]:
    """The fields of packed move ``m``: ``(from, to, promo, flag, piece, captured)``."""
    return move_from(m), move_to(m), move_promo(m), move_flag(m), move_piece(m), move_captured(m)

#: the low bits of a packed move that UCI notation carries: from, to and promotion
UCI_KEY_BITS = 15
UCI_KEY_MASK = (1 << UCI_KEY_BITS) - 1
#: UCI's promotion letter of each promotion field value (0 none, KNIGHT..QUEEN)
UCI_PROMOTIONS = ("", "n", "b", "r", "q")


@njit(cache=True, inline="always")
def make_uci_key(frm: Square, to: Square, promo: int) -> UciKey:
    """The UCI key of a move (from, to, promotion as in a packed move's low 15 bits): the one
    definition that packed moves (:func:`move_uci_key`), UCI text (:func:`uci_texts`,
    :func:`uci_key_of_text`) and the replay of from/to/promotion columns all go through."""
    return frm | (to << 6) | (promo << 12)


@njit(cache=True, inline="always")
def move_uci_key(m: Move) -> UciKey:
    """The UCI key of packed move ``m`` (:func:`make_uci_key` of its from, to and promotion)."""
    return m & UCI_KEY_MASK


@functools.cache
def uci_texts() -> tuple[str, ...]:
    """UCI text of every UCI key, indexed by the key (``uci_texts()[make_uci_key(12, 28, 0)]`` is
    ``"e2e4"``; castling is the king's two-square move). Keys with a promotion field above 4
    are not in the table."""
    texts = [""] * (make_uci_key(0, 0, len(UCI_PROMOTIONS) - 1) + (1 << 12))
    for promo, letter in enumerate(UCI_PROMOTIONS):
        for frm in range(64):
            for to in range(64):
                texts[make_uci_key(frm, to, promo)] = chess.SQUARE_NAMES[frm] + chess.SQUARE_NAMES[to] + letter
    return tuple(texts)


@functools.cache
def uci_keys_by_text() -> dict[str, int]:
    """The inverse of :func:`uci_texts`: UCI text (lower case) -> UCI key."""
    return {text: key for key, text in enumerate(uci_texts()) if text}


def uci_key_of_text(text: str) -> int | None:
    """The UCI key of a UCI move text such as ``e2e4`` or ``e7e8q``; ``None`` when ``text`` is not
    one (no board: legality is a question for the position)."""
    return uci_keys_by_text().get(text)


# --- Zobrist keys: polyglot's 781 numbers, laid out for our piece and colour indices -------
_RND = np.array(chess.polyglot.POLYGLOT_RANDOM_ARRAY, dtype=np.uint64)
#: ``[colour, piece type, square]``; polyglot's piece index is 2 * type + (1 if white).
Z_PIECE = np.zeros((2, 6, 64), dtype=np.uint64)
for _c in range(2):
    for _p in range(6):
        Z_PIECE[_c, _p] = _RND[64 * (2 * _p + (1 - _c)) : 64 * (2 * _p + (1 - _c)) + 64]
#: key of each castling-rights mask (0..15)
Z_CASTLE = np.zeros(16, dtype=np.uint64)
for _m in range(16):
    for _b in range(4):
        if _m >> _b & 1:
            Z_CASTLE[_m] ^= _RND[768 + _b]
Z_EP_FILE = _RND[772:780].copy()
Z_WHITE_TO_MOVE = _RND[780]

#: castling rights kept when a piece moves from or to each square
CASTLE_KEEP = np.full(64, 15, dtype=np.uint64)
CASTLE_KEEP[0] = 15 & ~WHITE_OOO
CASTLE_KEEP[4] = 15 & ~(WHITE_OO | WHITE_OOO)
CASTLE_KEEP[7] = 15 & ~WHITE_OO
CASTLE_KEEP[56] = 15 & ~BLACK_OOO
CASTLE_KEEP[60] = 15 & ~(BLACK_OO | BLACK_OOO)
CASTLE_KEEP[63] = 15 & ~BLACK_OO


@njit(cache=True, inline="always")
def side_to_move(b: np.ndarray) -> int:
    return np.int64(b[W_STM])  # type: ignore[return-value]


@njit(cache=True, inline="always")
def occupancy(b: np.ndarray) -> np.uint64:
    return b[W_OCC] | b[W_OCC + 1]  # type: ignore[no-any-return]


@njit(cache=True, inline="always")
def pieces(b: np.ndarray, colour: int, ptype: int) -> np.uint64:
    return b[ptype] & b[W_OCC + colour]  # type: ignore[no-any-return]


@njit(cache=True)
def piece_at(b: np.ndarray, sq: int) -> int:
    """Piece type on ``sq`` or NO_PIECE."""
    m = bit(sq)
    for p in range(6):
        if b[p] & m:
            return p
    return NO_PIECE


@njit(cache=True)
def colour_at(b: np.ndarray, sq: int) -> int:
    """0 white, 1 black, -1 empty."""
    m = bit(sq)
    if b[W_OCC] & m:
        return 0
    if b[W_OCC + 1] & m:
        return 1
    return -1


@njit(cache=True)
def attackers_to(b: np.ndarray, sq: int, occ: np.uint64) -> np.uint64:
    """Pieces of both colours attacking ``sq`` with occupancy ``occ``."""
    rq = b[ROOK] | b[QUEEN]
    bq = b[BISHOP] | b[QUEEN]
    return (  # type: ignore[no-any-return]
        (PAWN_ATTACKS[BLACK, sq] & b[PAWN] & b[W_OCC + WHITE])
        | (PAWN_ATTACKS[WHITE, sq] & b[PAWN] & b[W_OCC + BLACK])
        | (KNIGHT_ATTACKS[sq] & b[KNIGHT])
        | (KING_ATTACKS[sq] & b[KING])
        | (rook_attacks(sq, occ) & rq)
        | (bishop_attacks(sq, occ) & bq)
    )


@njit(cache=True)
def is_attacked(b: np.ndarray, sq: int, by: int, occ: np.uint64) -> bool:
    """Whether colour ``by`` attacks ``sq`` given occupancy ``occ``."""
    them = b[W_OCC + by]
    if PAWN_ATTACKS[1 - by, sq] & b[PAWN] & them:
        return True
    if KNIGHT_ATTACKS[sq] & b[KNIGHT] & them:
        return True
    if KING_ATTACKS[sq] & b[KING] & them:
        return True
    if rook_attacks(sq, occ) & (b[ROOK] | b[QUEEN]) & them:
        return True
    if bishop_attacks(sq, occ) & (b[BISHOP] | b[QUEEN]) & them:
        return True
    return False


@njit(cache=True)
def king_square(b: np.ndarray, colour: int) -> int:
    return lsb(b[KING] & b[W_OCC + colour])


@njit(cache=True)
def in_check(b: np.ndarray) -> bool:
    """Whether the side to move is in check."""
    us = np.int64(b[W_STM])
    return is_attacked(b, king_square(b, us), 1 - us, occupancy(b))  # type: ignore[arg-type]


@njit(cache=True)
def gives_check(b: np.ndarray, m: Move) -> bool:
    """Whether the legal move ``m`` checks the opponent once played on ``b``, found without
    playing it: the king of the side not to move attacked, after the move, by the mover's pieces
    (the moved piece on its new square as its new type, discovered lines, the rook of a
    castling, the pawn an en-passant capture removes). Equal to ``in_check`` of the board
    after the move (``tests/search/core/test_board_gives_check.py``)."""
    us = np.int64(b[W_STM])
    them = 1 - us
    frm, to, promo, flag, pt, cap = decode_move(m)
    ksq = king_square(b, them)  # type: ignore[arg-type]
    bfrom = bit(frm)
    bto = bit(to)
    own = b[W_OCC + us]
    occ = ((own | b[W_OCC + them]) ^ bfrom) | bto
    newpt = pt if promo == 0 else promo
    # the mover's pieces by type after the move (the piece moved counts on ``to`` as ``newpt``)
    pawns = b[PAWN] & own & ~bfrom
    knights = b[KNIGHT] & own & ~bfrom
    diagonal = (b[BISHOP] | b[QUEEN]) & own & ~bfrom
    straight = (b[ROOK] | b[QUEEN]) & own & ~bfrom
    if newpt == PAWN:
        pawns |= bto
    elif newpt == KNIGHT:
        knights |= bto
    elif newpt == BISHOP:
        diagonal |= bto
    elif newpt == ROOK:
        straight |= bto
    elif newpt == QUEEN:
        diagonal |= bto
        straight |= bto
    if flag == FLAG_EP:
        occ ^= bit(to - 8 if us == WHITE else to + 8)
    elif flag == FLAG_CASTLE:
        rf, rt = (frm + 3, frm + 1) if to == frm + 2 else (frm - 4, frm - 1)
        occ ^= bit(rf) | bit(rt)
        straight = (straight & ~bit(rf)) | bit(rt)
    return bool((PAWN_ATTACKS[them, ksq] & pawns) | (KNIGHT_ATTACKS[ksq] & knights)
                | (bishop_attacks(ksq, occ) & diagonal) | (rook_attacks(ksq, occ) & straight))


@njit(cache=True, inline="always")
def ep_key(b: np.ndarray) -> np.uint64:
    """Polyglot's en-passant term: the file of the ep square, only when a pawn of the side to
    move stands beside the pawn that just made the double push (legality irrelevant)."""
    ep = np.int64(b[W_EP])
    if ep == NO_SQUARE:
        return ZERO
    us = np.int64(b[W_STM])
    # squares from which a pawn of the side to move attacks the ep square
    if PAWN_ATTACKS[1 - us, ep] & b[PAWN] & b[W_OCC + us]:
        return Z_EP_FILE[ep & 7]  # type: ignore[no-any-return]
    return ZERO


@njit(cache=True)
def compute_key(b: np.ndarray) -> np.uint64:
    """The Zobrist key computed from scratch (the incremental one must equal it)."""
    key = ZERO
    for c in range(2):
        for p in range(6):
            bb = b[p] & b[W_OCC + c]
            sq = 0
            while bb:
                if bb & ONE:
                    key ^= Z_PIECE[c, p, sq]
                bb >>= ONE
                sq += 1
    key ^= Z_CASTLE[np.int64(b[W_CASTLE])]
    key ^= ep_key(b)
    if b[W_STM] == ZERO:
        key ^= Z_WHITE_TO_MOVE
    return key  # type: ignore[no-any-return]


@njit(cache=True)
def make_move(src: BoardArray, dst: BoardArray, m: Move) -> None:
    """Copy ``src`` into ``dst`` with the (legal, packed) move ``m`` played; keys incremental.

    ``src`` and ``dst`` are distinct ``uint64`` arrays of shape ``(BOARD_WORDS,)``.
    """
    for i in range(BOARD_WORDS):
        dst[i] = src[i]
    us = np.int64(src[W_STM])
    them = 1 - us
    frm, to, promo, flag, pt, cap = decode_move(m)
    key = src[W_KEY] ^ ep_key(src)
    bfrom = bit(frm)
    bto = bit(to)
    if flag == FLAG_EP:
        capsq = to - 8 if us == WHITE else to + 8
        bc = bit(capsq)
        dst[PAWN] ^= bc
        dst[W_OCC + them] ^= bc
        key ^= Z_PIECE[them, PAWN, capsq]
    elif cap != NO_PIECE:
        dst[cap] ^= bto
        dst[W_OCC + them] ^= bto
        key ^= Z_PIECE[them, cap, to]
    newpt = pt if promo == 0 else promo
    dst[pt] ^= bfrom
    dst[newpt] ^= bto
    dst[W_OCC + us] ^= bfrom | bto
    key ^= Z_PIECE[us, pt, frm] ^ Z_PIECE[us, newpt, to]
    if flag == FLAG_CASTLE:
        if to == frm + 2:  # king side
            rf, rt = frm + 3, frm + 1
        else:
            rf, rt = frm - 4, frm - 1
        rb = bit(rf) | bit(rt)
        dst[ROOK] ^= rb
        dst[W_OCC + us] ^= rb
        key ^= Z_PIECE[us, ROOK, rf] ^ Z_PIECE[us, ROOK, rt]
    old_c = src[W_CASTLE]
    new_c = old_c & CASTLE_KEEP[frm] & CASTLE_KEEP[to]
    if new_c != old_c:
        key ^= Z_CASTLE[np.int64(old_c)] ^ Z_CASTLE[np.int64(new_c)]
        dst[W_CASTLE] = new_c
    dst[W_EP] = np.uint64((frm + to) >> 1) if flag == FLAG_DOUBLE else np.uint64(NO_SQUARE)
    if pt == PAWN or cap != NO_PIECE:
        dst[W_HALFMOVE] = ZERO
    else:
        dst[W_HALFMOVE] = src[W_HALFMOVE] + ONE
    if us == BLACK:
        dst[W_FULLMOVE] = src[W_FULLMOVE] + ONE
    dst[W_STM] = np.uint64(them)
    key ^= Z_WHITE_TO_MOVE
    dst[W_KEY] = key ^ ep_key(dst)


@njit(cache=True)
def make_null_move(src: np.ndarray, dst: np.ndarray) -> None:
    """Pass the move to the opponent (clears en passant); used by the search, never legal chess."""
    for i in range(BOARD_WORDS):
        dst[i] = src[i]
    key = src[W_KEY] ^ ep_key(src)
    dst[W_EP] = np.uint64(NO_SQUARE)
    dst[W_STM] = np.uint64(1 - np.int64(src[W_STM]))
    dst[W_HALFMOVE] = src[W_HALFMOVE] + ONE
    dst[W_KEY] = key ^ Z_WHITE_TO_MOVE
