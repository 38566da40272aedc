"""The board check at the boundary of the numba core.

Every public function of :mod:`search` that takes a board runs it once per call, before any
kernel sees the arrays; kernels trust their input and do not check it again (numba does not
bounds-check, so an unchecked board can crash the process instead of raising). Weights and
evaluators are checked by :mod:`search.evaluation.validate`.

* :func:`check_board` / :func:`check_boards` raise :class:`InvalidBoardError` with a one-line
  message unless every board is a position the kernels can search: the layout of
  :mod:`search.core.board`, one king each, the side not to move not in check, no pawn on the first
  or last rank, castling and en-passant words consistent with the pieces, and material that
  promotions can explain (see :func:`board_problems` for the list).

The batch check is vectorised numpy (no kernel: numpy bounds-checks, so the check itself can
never crash on garbage), a small cost next to any search of the same boards (measured by
``python bench/validate.py``, ``bench/README.md``). One board is checked in plain Python integers
(:func:`board_problem`), which is also the reference the vectorised check is tested against.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from search.core.attacks import (
    ANTI_EX,
    DIAG_EX,
    FILE_A_ATTACKS,
    FILE_B_MUL,
    FILE_GATHER_MUL,
    FILL_UP,
    KING_ATTACKS,
    KNIGHT_ATTACKS,
    PAWN_ATTACKS,
    RANK_EX,
)
from search.core.bits import FILE_A
from search.core.board import PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING  # noqa: I001  (piece types in their order)
from search.core.board import BOARD_WORDS, CASTLING_RIGHTS, NO_SQUARE, W_CASTLE, W_EP, W_OCC, W_STM
from search.core.types import BoardArray

__all__ = [
    "InvalidBoardError",
    "board_problem",
    "board_problems",
    "check_board",
    "check_board_array",
    "check_boards_array",
    "check_boards",
]


class InvalidBoardError(ValueError):
    """A board array the kernels must not see: wrong type, dtype or shape, or a position that
    breaks the layout or the rules the kernels rely on."""


# -------------------------------------------------------------------------------- boards

if hasattr(np, "bitwise_count"):  # numpy >= 2.0

    def _popcount(x: np.ndarray) -> np.ndarray:
        counts: npt.NDArray[np.int64] = np.bitwise_count(x).astype(np.int64)
        return counts

else:  # pragma: no cover - numpy 1.26
    _BYTE_COUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)

    def _popcount(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.uint64)
        counts: npt.NDArray[np.int64] = _BYTE_COUNT[x.view(np.uint8)].reshape(*x.shape, 8).sum(axis=-1)
        return counts


_U1 = np.uint64(1)
_BACK_RANKS = np.uint64(0xFF000000000000FF)
_COLOURS = ("white", "black")
_CASTLING = tuple((right, king, rook, colour) for right, _, colour, king, rook in CASTLING_RIGHTS)
#: pieces each side starts with, by type (pawns aside): any more must be promoted pawns
_START_COUNT = ((KNIGHT, 2), (BISHOP, 2), (ROOK, 2), (QUEEN, 1))

#: the rules of :func:`board_problems`, in the order they are tested (code = index + 1)
RULES = (
    "white and black pieces overlap",
    "piece bitboards overlap or do not add up to the colour bitboards",
    "white must have exactly one king",
    "black must have exactly one king",
    "side to move must be 0 (white) or 1 (black)",
    "a pawn stands on the first or last rank",
    "a side has more than 8 pawns",
    "a side has more pieces than promotions of its missing pawns explain",
    "castling rights must be a 4-bit mask",
    "castling rights without king and rook on their squares",
    "en-passant square must be 64 (none) or the square behind a pawn that just moved two squares",
    "the side not to move is in check",
)


def _square_of(single_bits: np.ndarray) -> np.ndarray:
    """Square index of each one-bit bitboard (64 for an empty one)."""
    return _popcount(single_bits - _U1) if single_bits.size else np.zeros(0, dtype=np.int64)


_U58 = np.uint64(58)


def _line_attacks(mask: np.ndarray, file: np.ndarray, occ: np.ndarray) -> np.ndarray:
    """:func:`search.core.attacks.rook_attacks` and its kin, vectorised (uint64 arrays wrap as the
    kernels' products do)."""
    attacks: npt.NDArray[np.uint64] = FILL_UP[file, (((occ & mask) * FILE_B_MUL) >> _U58).astype(np.int64)] & mask
    return attacks


def _rook_attacks(sq: np.ndarray, occ: np.ndarray) -> np.ndarray:
    f = sq & 7
    idx = ((((occ >> f.astype(np.uint64)) & FILE_A) * FILE_GATHER_MUL) >> _U58).astype(np.int64)
    file_attacks = FILE_A_ATTACKS[sq >> 3, idx] << f.astype(np.uint64)
    attacks: npt.NDArray[np.uint64] = _line_attacks(RANK_EX[sq], f, occ) | file_attacks
    return attacks


def _bishop_attacks(sq: np.ndarray, occ: np.ndarray) -> np.ndarray:
    f = sq & 7
    attacks: npt.NDArray[np.uint64] = _line_attacks(DIAG_EX[sq], f, occ) | _line_attacks(ANTI_EX[sq], f, occ)
    return attacks


def board_problems(boards: np.ndarray) -> np.ndarray:
    """For each board of ``boards`` (uint64[n, BOARD_WORDS]), 0 when the kernels may search it,
    else ``k`` >= 1: the first rule ``RULES[k - 1]`` it breaks. int8[n].

    The rules are what the kernels rely on never to index out of their tables or their move
    buffers (``MAX_MOVES``): disjoint piece and colour bitboards, one king each (there is
    always a king square), a side to move of 0 or 1, no pawn on the first or last rank (a
    push from there would leave the board), castling rights only with king and rook at home and
    an en-passant square only behind a pawn that just moved two squares (else castling or en
    passant would conjure or erase pieces), the side not to move not in check (else the king
    could be captured), and material that promotions can explain: at most 8 pawns and no more
    extra knights, bishops, rooks and queens than missing pawns. That last rule keeps every
    position reachable by play within the proven maximum of 218 legal moves for chess material
    (so move lists fit ``MAX_MOVES = 256``) and bounds the feature counts (:data:`MAX_TERM_COUNT`).
    The Zobrist key, the counters and the unused words are not checked (no kernel indexes with them).
    """
    boards = np.asarray(boards)
    if boards.dtype != np.uint64 or boards.ndim != 2 or boards.shape[1] != BOARD_WORDS:
        raise InvalidBoardError(f"boards must be uint64 of shape (n, {BOARD_WORDS}), not {boards.dtype} {boards.shape}")
    code = np.zeros(len(boards), dtype=np.int8)
    for a in range(0, len(boards), _CHUNK):
        code[a:a + _CHUNK] = _chunk_problems(boards[a:a + _CHUNK])
    return code


#: boards checked at once: the temporaries of a chunk (64 KiB each) stay in the cache and are
#: reused by the allocator, and the memory stays bounded for millions of boards
_CHUNK = 8192


def _chunk_problems(boards: np.ndarray) -> np.ndarray:
    """:func:`board_problems` of a non-empty chunk."""
    n = boards.shape[0]
    code = np.zeros(n, dtype=np.int8)
    bad: list[np.ndarray] = []  # one mask per rule, in RULES order
    # one contiguous row per word: a column of the (n, 16) array would drag every row through
    # the cache at each use
    words = np.ascontiguousarray(boards[:, : W_EP + 1].T)
    white, black = words[W_OCC], words[W_OCC + 1]
    occ = white | black
    bad.append((white & black) != 0)
    union = words[0] | words[1] | words[2] | words[3] | words[4] | words[5]
    bits = sum(_popcount(words[p]) for p in range(6))
    bad.append((union != occ) | (bits != _popcount(union)))
    kings = words[KING]
    bad.append(_popcount(kings & white) != 1)
    bad.append(_popcount(kings & black) != 1)
    stm_word = words[W_STM]
    bad.append(stm_word > 1)
    pawns = words[PAWN]
    bad.append((pawns & _BACK_RANKS) != 0)
    too_many_pawns = np.zeros(n, dtype=bool)
    unexplained = np.zeros(n, dtype=bool)
    for side in (white, black):
        n_pawns = _popcount(pawns & side)
        too_many_pawns |= n_pawns > 8
        extra = sum(np.maximum(_popcount(words[p] & side) - start, 0) for p, start in _START_COUNT)
        unexplained |= extra > 8 - n_pawns
    bad.append(too_many_pawns)
    bad.append(unexplained)
    castle = words[W_CASTLE]
    bad.append(castle > 15)
    castle_bad = np.zeros(n, dtype=bool)
    for right, king_sq, rsq, colour in _CASTLING:
        side = white if colour == 0 else black
        king_home = ((kings & side) >> np.uint64(king_sq)) & _U1
        rook_home = ((words[ROOK] & side) >> np.uint64(rsq)) & _U1
        castle_bad |= ((castle & np.uint64(right)) != 0) & ((king_home & rook_home) == 0)
    bad.append(castle_bad)
    stm = np.where(stm_word > 1, 0, stm_word).astype(np.int64)
    ep = words[W_EP]
    has_ep = ep != NO_SQUARE
    ep_sq = np.where(ep < 64, ep, 0).astype(np.int64)
    # white to move: ep on rank 6, a black pawn on rank 5 in front of it, ep and rank 7 empty
    ahead = np.where(stm == 0, ep_sq - 8, ep_sq + 8)  # the pawn that moved
    behind = np.where(stm == 0, ep_sq + 8, ep_sq - 8)  # the square it came from
    on_rank = np.where(stm == 0, (ep_sq >> 3) == 5, (ep_sq >> 3) == 2)
    ahead, behind = np.clip(ahead, 0, 63).astype(np.uint64), np.clip(behind, 0, 63).astype(np.uint64)
    them = np.where(stm == 0, black, white)
    pushed = ((pawns & them) >> ahead) & _U1
    empty = ((occ >> ep_sq.astype(np.uint64)) | (occ >> behind)) & _U1
    bad.append(has_ep & ((ep >= 64) | ~on_rank | (pushed == 0) | (empty != 0)))
    # the king of the side not to move, attacked by the side to move
    us = np.where(stm == 0, white, black)
    one_king = _popcount(kings & them) == 1
    ksq = np.where(one_king, _square_of(np.where(one_king, kings & them, _U1)), 0)
    attackers = (
        (PAWN_ATTACKS[1 - stm, ksq] & pawns)
        | (KNIGHT_ATTACKS[ksq] & words[KNIGHT])
        | (KING_ATTACKS[ksq] & kings)
        | (_rook_attacks(ksq, occ) & (words[ROOK] | words[QUEEN]))
        | (_bishop_attacks(ksq, occ) & (words[BISHOP] | words[QUEEN]))
    ) & us
    bad.append(one_king & (attackers != 0))
    for k in range(len(bad) - 1, -1, -1):  # the first rule broken wins
        code[bad[k]] = k + 1
    return code


_M64 = (1 << 64) - 1
_KNIGHT_LIST = KNIGHT_ATTACKS.tolist()
_KING_LIST = KING_ATTACKS.tolist()
_PAWN_LIST = PAWN_ATTACKS.tolist()
#: the kindergarten tables (:mod:`search.core.attacks`) as Python integers
_RANK_EX, _DIAG_EX, _ANTI_EX = RANK_EX.tolist(), DIAG_EX.tolist(), ANTI_EX.tolist()
_FILL_UP, _FILE_A_ATTACKS = FILL_UP.tolist(), FILE_A_ATTACKS.tolist()
_B_MUL, _GATHER_MUL, _FILE_A = int(FILE_B_MUL), int(FILE_GATHER_MUL), int(FILE_A)


def _line(mask: int, file: int, occ: int) -> int:
    return int(_FILL_UP[file][(((occ & mask) * _B_MUL) & _M64) >> 58] & mask)


def _rook(sq: int, occ: int) -> int:
    f = sq & 7
    file_attacks = int(_FILE_A_ATTACKS[sq >> 3][((((occ >> f) & _FILE_A) * _GATHER_MUL) & _M64) >> 58])
    return _line(_RANK_EX[sq], f, occ) | (file_attacks << f)


def _bishop(sq: int, occ: int) -> int:
    return _line(_DIAG_EX[sq], sq & 7, occ) | _line(_ANTI_EX[sq], sq & 7, occ)


def board_problem(b: np.ndarray) -> int:
    """:func:`board_problems` of one board (uint64[BOARD_WORDS]) in plain Python integers: the
    fast path for single boards, and the reference the vectorised version is tested against."""
    w: list[int] = b.tolist()
    white, black = w[W_OCC], w[W_OCC + 1]
    occ = white | black
    if white & black:
        return 1
    union = w[0] | w[1] | w[2] | w[3] | w[4] | w[5]
    if union != occ or sum(x.bit_count() for x in w[:6]) != union.bit_count():
        return 2
    kings, pawns = w[KING], w[PAWN]
    if (kings & white).bit_count() != 1:
        return 3
    if (kings & black).bit_count() != 1:
        return 4
    stm = w[W_STM]
    if stm > 1:
        return 5
    if pawns & int(_BACK_RANKS):
        return 6
    if any((pawns & side).bit_count() > 8 for side in (white, black)):
        return 7
    for side in (white, black):
        extra = sum(max((w[p] & side).bit_count() - start, 0) for p, start in _START_COUNT)
        if extra > 8 - (pawns & side).bit_count():
            return 8
    castle = w[W_CASTLE]
    if castle > 15:
        return 9
    for right, ksq, rsq, colour in _CASTLING:
        side = w[W_OCC + colour]
        if castle & right and not ((kings & side) >> ksq & 1 and (w[ROOK] & side) >> rsq & 1):
            return 10
    us, them = (white, black) if stm == 0 else (black, white)
    ep = w[W_EP]
    if ep != NO_SQUARE:
        if ep >= 64 or (ep >> 3) != (5 if stm == 0 else 2):
            return 11
        ahead, behind = (ep - 8, ep + 8) if stm == 0 else (ep + 8, ep - 8)
        if not ((pawns & them) >> ahead & 1) or occ & ((1 << ep) | (1 << behind)):
            return 11
    ksq = (kings & them).bit_length() - 1
    attackers = (
        (_PAWN_LIST[1 - stm][ksq] & pawns)
        | (_KNIGHT_LIST[ksq] & w[KNIGHT])
        | (_KING_LIST[ksq] & kings)
        | (_rook(ksq, occ) & (w[ROOK] | w[QUEEN]))
        | (_bishop(ksq, occ) & (w[BISHOP] | w[QUEEN]))
    )
    if attackers & us:
        return 12
    return 0


def _describe(b: np.ndarray, code: int) -> str:
    """The message of rule ``code`` for one board, with its details."""
    words = [int(x) for x in b]
    if code in (3, 4):
        colour = code - 3
        n = (words[KING] & words[W_OCC + colour]).bit_count()
        return f"{_COLOURS[colour]} has {n} kings, not 1"
    if code == 5:
        return f"side to move is {words[W_STM]}, not 0 (white) or 1 (black)"
    if code in (7, 8):
        for colour in (0, 1):
            side = words[W_OCC + colour]
            n_pawns = (words[PAWN] & side).bit_count()
            extra = sum(max((words[p] & side).bit_count() - start, 0) for p, start in _START_COUNT)
            if code == 7 and n_pawns > 8:
                return f"{_COLOURS[colour]} has {n_pawns} pawns, more than 8"
            if code == 8 and extra > 8 - n_pawns:
                return (f"{_COLOURS[colour]} has {extra} pieces beyond the starting set but only "
                        f"{8 - n_pawns} missing pawns to have promoted")
    if code == 9:
        return f"castling rights {words[W_CASTLE]} are not a 4-bit mask"
    if code == 11:
        return f"en-passant square {words[W_EP]} is not 64 (none) or the square behind a pawn that just moved two squares"
    return RULES[code - 1]


def check_boards_array(boards: object) -> BoardArray:
    """The array form of a batch of boards only (uint64[n, BOARD_WORDS]); :func:`check_boards`
    checks the rules too. Raises :class:`InvalidBoardError`."""
    if isinstance(boards, np.ndarray):
        arr = boards
    else:
        try:
            arr = np.asarray(boards)
        except (TypeError, ValueError, OverflowError):
            raise InvalidBoardError(f"boards must be a uint64 array of shape (n, {BOARD_WORDS}), "
                                    f"not {type(boards).__name__}") from None
    if arr.dtype != np.uint64 or arr.ndim != 2 or arr.shape[1] != BOARD_WORDS:
        raise InvalidBoardError(f"boards must be uint64 of shape (n, {BOARD_WORDS}), not {arr.dtype} {arr.shape}"
                                "; build them with search.core.convert")
    return arr


def check_boards(boards: object) -> np.ndarray:
    """Validate a batch of boards (uint64[n, BOARD_WORDS], ``n`` >= 0): every row must pass
    :func:`board_problems`. Returns a C-contiguous array (the input itself when it already is);
    raises :class:`InvalidBoardError` naming the first bad row and the rule it breaks."""
    arr = check_boards_array(boards)
    codes = board_problems(arr)
    if codes.any():
        rows = np.flatnonzero(codes)
        first = int(rows[0])
        raise InvalidBoardError(f"board {first} of {len(arr)} is invalid ({len(rows)} invalid in all): "
                                f"{_describe(arr[first], int(codes[first]))}")
    return np.ascontiguousarray(arr)


def check_board_array(b: object) -> BoardArray:
    """The array form of one board only (uint64[BOARD_WORDS]), for conversions that read any
    board; :func:`check_board` checks the rules too. Raises :class:`InvalidBoardError`."""
    if not isinstance(b, np.ndarray) or b.dtype != np.uint64 or b.shape != (BOARD_WORDS,):
        what = f"{b.dtype} {b.shape}" if isinstance(b, np.ndarray) else type(b).__name__
        raise InvalidBoardError(f"a board must be a uint64 array of shape ({BOARD_WORDS},), not {what}"
                                "; build one with search.core.convert")
    return b


def check_board(b: object) -> BoardArray:
    """Validate one board (uint64[BOARD_WORDS]) by the rules of :func:`board_problems`. Returns
    it C-contiguous; raises :class:`InvalidBoardError` with a one-line message."""
    b = check_board_array(b)
    code = board_problem(b)
    if code:
        raise InvalidBoardError(f"invalid board: {_describe(b, code)}")
    return np.ascontiguousarray(b)
