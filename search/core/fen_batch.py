"""Many FENs at once: text to checked boards, with what a position set stores of each.

:func:`search.core.convert.from_fen` reads one FEN and checks it with python-chess (~40 us); a file of
millions of positions needs the same verdicts two orders of magnitude faster. This module
parses a batch of FEN texts in one private ``@njit`` kernel over a byte buffer, checks the
boards with the vectorised rules of :func:`search.core.validate.board_problems` plus python-chess's
two check rules that those do not cover (more than two checkers, a check no last move could
have given), and then, for every valid board, computes in a second kernel its polyglot key,
its number of legal moves, its FEN as python-chess's ``Board.fen()`` writes it, and the legal
move a given UCI or SAN text names.

A FEN is accepted exactly when :func:`search.core.convert.from_fen` accepts it (4 to 6 fields,
ASCII digits, standard castling letters, counters within ``MAX_FEN_COUNTER``, a position the
kernels may search and python-chess's ``status()`` finds valid); ``tests/search/core/test_fen_batch.py``
checks that, the boards, keys, counts and FENs against python-chess on real positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from search.core.attacks import LINE
from search.core.bits import ZERO, bit, lsb, pop_lsb, popcount
from search.core.board import (BOARD_WORDS, FLAG_CASTLE, FLAG_EP, KING, NO_SQUARE, W_CASTLE, W_EP, W_FULLMOVE,
                          W_HALFMOVE, W_KEY, W_OCC, W_STM, Z_CASTLE, Z_PIECE, Z_WHITE_TO_MOVE, attackers_to, ep_key,
                          is_attacked, move_flag, move_from, move_piece, move_promo, move_to, move_uci_key,
                          uci_key_of_text)
from search.core.convert import MAX_FEN_COUNTER
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.core.replay import FEN_STRIDE, _PIECE_CHARS, _write_fen
from search.core.validate import RULES, board_problems

#: messages of the parse errors (code = index; 0: no error)
FEN_ERRORS = (
    "",
    "expected 4 to 6 fields",
    "the placement does not have 8 ranks",
    "bad empty-square count in the placement",
    "unknown piece letter in the placement",
    "a rank of the placement does not have 8 squares",
    "side to move is not 'w' or 'b'",
    "bad castling field",
    "bad en-passant square",
    f"halfmove clock is not an integer between 0 and {MAX_FEN_COUNTER}",
    f"fullmove number is not an integer between 1 and {MAX_FEN_COUNTER}",
)
#: messages of python-chess's check rules (code = index; 0: no error)
CHECK_ERRORS = ("", "the king is attacked by more than two pieces",
                "the checking pieces could not have given check together")

#: what :func:`find_moves` answers instead of a UCI key
NO_MOVE, ILLEGAL_MOVE, AMBIGUOUS_MOVE = -1, -2, -3
#: kinds of a move text (:class:`MoveSpecs`)
MOVE_NONE, MOVE_UCI, MOVE_SAN, MOVE_OO, MOVE_OOO = 0, 1, 2, 3, 4

_SPACE, _TAB, _SLASH = 32, 9, 47
#: byte -> piece type (0..5), -1 for bytes that are no piece letter; colour by case
_PIECE_OF_BYTE = np.full(256, -1, dtype=np.int64)
for _i, _c in enumerate("pnbrqk"):
    _PIECE_OF_BYTE[ord(_c)] = _i
    _PIECE_OF_BYTE[ord(_c.upper())] = _i
#: byte -> castling-right bit (``W_CASTLE``), 0 for other bytes
_CASTLE_OF_BYTE = np.zeros(256, dtype=np.int64)
for _c, _v in (("K", 1), ("Q", 2), ("k", 4), ("q", 8)):
    _CASTLE_OF_BYTE[ord(_c)] = _v


@njit(cache=True, inline="always")
def _is_space(c: int) -> bool:
    return c == _SPACE or c == _TAB


@njit(cache=True)
def ascii_decimal(buf: np.ndarray, p: int, end: int) -> int:
    """The decimal number in ``buf[p:end]`` (1 to 10 ASCII digits), or -1 when it is not one."""
    if end - p < 1 or end - p > 10:
        return -1
    value = 0
    for k in range(p, end):
        c = int(buf[k])
        if c < 48 or c > 57:
            return -1
        value = value * 10 + (c - 48)
    return value


@njit(cache=True)
def _counter(buf: np.ndarray, p: int, end: int, minimum: int) -> int:
    """The decimal counter in ``buf[p:end]`` (at most 10 ASCII digits, ``minimum`` ..
    ``MAX_FEN_COUNTER``), or -1."""
    value = ascii_decimal(buf, p, end)
    if value < minimum or value > MAX_FEN_COUNTER:
        return -1
    return value


# long: numba kernel, the six FEN fields parsed in order in one pass over the bytes, each check with its error code
@njit(cache=True)
def _parse_one(buf, start, end, b, piece_of, castle_of):  # type: ignore[no-untyped-def]
    """Parse the FEN in ``buf[start:end]`` into the zeroed board ``b``; the error code
    (:data:`FEN_ERRORS`), 0 when it parsed. The key is left at 0."""
    # the fields, as [first, last) pairs
    fs = np.zeros(7, dtype=np.int64)
    fe = np.zeros(7, dtype=np.int64)
    n = 0
    p = start
    while p < end:
        while p < end and _is_space(buf[p]):
            p += 1
        if p >= end:
            break
        if n == 6:
            return 1
        fs[n] = p
        while p < end and not _is_space(buf[p]):
            p += 1
        fe[n] = p
        n += 1
    if n < 4:
        return 1
    # placement
    rank = 7
    file = 0
    prev_digit = False
    for k in range(fs[0], fe[0]):
        c = int(buf[k])
        if c == _SLASH:
            if file != 8:
                return 5
            if rank == 0:
                return 2
            rank -= 1
            file = 0
            prev_digit = False
        elif c >= 49 and c <= 56:
            if prev_digit:
                return 3
            file += c - 48
            if file > 8:
                return 5
            prev_digit = True
        elif c == 48 or c == 57:
            return 3
        else:
            pt = piece_of[c]
            if pt < 0:
                return 4
            if file >= 8:
                return 5
            m = bit(rank * 8 + file)
            b[pt] |= m
            if c < 97:  # upper case: white
                b[W_OCC] |= m
            else:
                b[W_OCC + 1] |= m
            file += 1
            prev_digit = False
    if rank != 0:
        return 2
    if file != 8:
        return 5
    # side to move
    if fe[1] - fs[1] != 1 or (buf[fs[1]] != 119 and buf[fs[1]] != 98):  # 'w', 'b'
        return 6
    b[W_STM] = np.uint64(0 if buf[fs[1]] == 119 else 1)
    # castling
    rights = 0
    if not (fe[2] - fs[2] == 1 and buf[fs[2]] == 45):  # '-'
        if fe[2] - fs[2] > 4:
            return 7
        for k in range(fs[2], fe[2]):
            r = castle_of[buf[k]]
            if r == 0 or rights & r:
                return 7
            rights |= r
    b[W_CASTLE] = np.uint64(rights)
    # en passant
    if fe[3] - fs[3] == 1 and buf[fs[3]] == 45:
        b[W_EP] = np.uint64(NO_SQUARE)
    else:
        if fe[3] - fs[3] != 2:
            return 8
        f, r = int(buf[fs[3]]), int(buf[fs[3] + 1])
        if f < 97 or f > 104 or r < 49 or r > 56:
            return 8
        b[W_EP] = np.uint64((r - 49) * 8 + (f - 97))
    half, full = 0, 1
    if n > 4:
        half = _counter(buf, fs[4], fe[4], 0)
        if half < 0:
            return 9
    if n > 5:
        full = _counter(buf, fs[5], fe[5], 1)
        if full < 0:
            return 10
    b[W_HALFMOVE] = np.uint64(half)
    b[W_FULLMOVE] = np.uint64(full)
    return 0


@njit(cache=True)
def _parse_kernel(buf, starts, ends, piece_of, castle_of, boards, err):  # type: ignore[no-untyped-def]
    """Parse FEN ``i`` (``buf[starts[i]:ends[i]]``) into ``boards[i]`` (zeroed), its error
    code into ``err[i]`` (int8)."""
    for i in range(starts.shape[0]):
        err[i] = _parse_one(buf, starts[i], ends[i], boards[i], piece_of, castle_of)


@njit(cache=True)
def _check_code(b):  # type: ignore[no-untyped-def]
    """python-chess's ``STATUS_TOO_MANY_CHECKERS`` (1) and ``STATUS_IMPOSSIBLE_CHECK`` (2) of a
    board that passed :func:`search.core.validate.board_problems`; 0 when neither applies."""
    us = int(b[W_STM])
    them = 1 - us
    own = b[W_OCC + us]
    occ = b[W_OCC] | b[W_OCC + 1]
    ksq = lsb(b[KING] & own)
    checkers = attackers_to(b, ksq, occ) & b[W_OCC + them]
    n = popcount(checkers)
    if n == 0:
        return 0
    if n > 2:
        return 1
    ep = int(b[W_EP])
    first = lsb(checkers)
    if ep != NO_SQUARE:
        pushed_to = ep ^ 8
        pushed_from = ep ^ 24
        before = (occ & ~bit(pushed_to)) | bit(pushed_from)
        if n > 1 or (first != pushed_to and is_attacked(b, ksq, them, before)):
            return 2
        return 0
    if n == 2 and LINE[first, lsb(pop_lsb(checkers))] & bit(ksq):
        return 2
    return 0


@njit(cache=True)
def _key(b):  # type: ignore[no-untyped-def]
    """:func:`search.core.board.compute_key` (polyglot), visiting only the occupied squares."""
    key = ZERO
    for c in range(2):
        for p in range(6):
            bb = b[p] & b[W_OCC + c]
            while bb:
                key ^= Z_PIECE[c, p, lsb(bb)]
                bb = pop_lsb(bb)
    key ^= Z_CASTLE[int(b[W_CASTLE])] ^ ep_key(b)
    if b[W_STM] == ZERO:
        key ^= Z_WHITE_TO_MOVE
    return key


# many parameters: a numba kernel takes arrays and scalars (no dataclass in nopython mode); the inputs and one output
# array per column
@njit(cache=True)
def _analyse_kernel(boards, todo, kinds, uci, piece, from_file, from_rank, to, promo,  # type: ignore[no-untyped-def]
                    chars, check, keys, n_legal, fen_buf, fen_len, found):
    """For each board ``i`` with ``todo[i]``: python-chess's check rules into ``check[i]``;
    when they pass, the key (also written into ``boards[i, W_KEY]``), the legal-move count,
    the FEN and the legal move the move spec ``i`` names (:func:`find_moves`'s codes)."""
    moves = np.zeros(MAX_MOVES, dtype=np.int32)
    for i in range(boards.shape[0]):
        if not todo[i]:
            continue
        b = boards[i]
        check[i] = _check_code(b)
        if check[i] != 0:
            continue
        key = _key(b)
        b[W_KEY] = key
        keys[i] = key
        n = generate_moves(b, moves, ALL_MOVES)
        n_legal[i] = n
        ep_legal = False
        kind = kinds[i]
        hit = NO_MOVE
        for k in range(n):
            m = moves[k]
            flag = move_flag(m)
            if flag == FLAG_EP:
                ep_legal = True
            if kind == MOVE_NONE:
                continue
            if kind == MOVE_UCI:
                ok = move_uci_key(m) == uci[i]
            elif kind == MOVE_OO or kind == MOVE_OOO:
                ok = flag == FLAG_CASTLE and ((move_to(m) & 7) == 6) == (kind == MOVE_OO)
            else:
                ok = (move_piece(m) == piece[i] and move_to(m) == to[i] and move_promo(m) == promo[i]
                      and flag != FLAG_CASTLE
                      and (from_file[i] < 0 or (move_from(m) & 7) == from_file[i])
                      and (from_rank[i] < 0 or (move_from(m) >> 3) == from_rank[i]))
            if ok:
                hit = AMBIGUOUS_MOVE if hit >= 0 else int(move_uci_key(m))
        if kind != MOVE_NONE and hit == NO_MOVE:
            hit = ILLEGAL_MOVE
        found[i] = hit
        fen_len[i] = _write_fen(b, ep_legal, chars, fen_buf[i], 0)


@dataclass(frozen=True)
class MoveSpecs:
    """Move texts of a batch parsed without a board (:func:`move_specs`), one entry per FEN.

    ``kind`` int8[n] (``MOVE_NONE``, ``MOVE_UCI``, ``MOVE_SAN``, ``MOVE_OO``, ``MOVE_OOO``);
    ``uci`` int32[n] the UCI key (``MOVE_UCI``); for SAN: ``piece`` int8[n] the moving piece type
    (0 pawn .. 5 king), ``from_file``/``from_rank`` int8[n] the disambiguation (-1: none),
    ``to`` int8[n] the destination square, ``promo`` int8[n] the promotion (0 none, 1 knight ..
    4 queen).
    """

    kind: np.ndarray
    uci: np.ndarray
    piece: np.ndarray
    from_file: np.ndarray
    from_rank: np.ndarray
    to: np.ndarray
    promo: np.ndarray


#: SAN as python-chess's ``SAN_REGEX`` reads it (piece, from file, from rank, to, promotion),
#: with annotation glyphs allowed after the check sign
_SAN = re.compile(r"^([NBKRQ])?([a-h])?([1-8])?[\-x]?([a-h][1-8])(=?[nbrqkNBRQK])?[+#]?[!?]*\Z")
_CASTLE = re.compile(r"^(?:O-O-O|0-0-0|O-O|0-0)[+#]?[!?]*\Z")
_PROMO = {"n": 1, "b": 2, "r": 3, "q": 4}


def move_specs(texts: list[str | None]) -> tuple[MoveSpecs, list[int]]:
    """Parse move texts (UCI such as ``e2e4``/``e7e8q``, or SAN such as ``Nf3``, ``exd5``,
    ``e8=Q+``, ``O-O``; ``None``: no move) without a board; also return the indices of the
    texts that are neither (their kind is ``MOVE_NONE``)."""
    n = len(texts)
    kind = np.zeros(n, dtype=np.int8)
    uci = np.zeros(n, dtype=np.int32)
    piece = np.zeros(n, dtype=np.int8)
    from_file = np.full(n, -1, dtype=np.int8)
    from_rank = np.full(n, -1, dtype=np.int8)
    to = np.zeros(n, dtype=np.int8)
    promo = np.zeros(n, dtype=np.int8)
    bad = []
    for i, text in enumerate(texts):
        if text is None:
            continue
        key = uci_key_of_text(text)
        if key is not None:
            kind[i], uci[i] = MOVE_UCI, key
            continue
        if _CASTLE.match(text):
            kind[i] = MOVE_OOO if text.count("-") == 2 else MOVE_OO
            continue
        m = _SAN.match(text)
        if m is None or (m[5] and m[5][-1].lower() == "k"):
            bad.append(i)
            continue
        kind[i] = MOVE_SAN
        piece[i] = "PNBRQK".index(m[1]) if m[1] else 0
        if m[2]:
            from_file[i] = ord(m[2]) - 97
        if m[3]:
            from_rank[i] = int(m[3]) - 1
        to[i] = (int(m[4][1]) - 1) * 8 + ord(m[4][0]) - 97
        if m[5]:
            promo[i] = _PROMO[m[5][-1].lower()]
        if piece[i] == 0 and from_file[i] < 0 and from_rank[i] < 0:
            from_file[i] = to[i] & 7  # a pawn move without a file is a push (as python-chess)
    return MoveSpecs(kind, uci, piece, from_file, from_rank, to, promo), bad


@dataclass(frozen=True)
class FenBatch:
    """What :func:`parse_fens` found for each of ``n`` FEN texts.

    Attributes
    ----------
    boards : uint64[n, BOARD_WORDS]
        The boards (key included) where ``ok``; other rows are not boards to use.
    ok : bool[n]
        Whether the FEN parsed and describes a valid position (the move is checked apart).
    errors : list[str | None]
        Why each FEN was refused (``"bad FEN: ..."`` or ``"impossible position: ..."``), else None.
    bad_text : bool[n]
        Whether the refusal is about the text (else about the position).
    keys : uint64[n]
        Polyglot Zobrist keys (0 where not ``ok``).
    n_legal : int32[n]
        Legal moves (0 where not ``ok``).
    stm : int8[n]
        Side to move, 0 white, 1 black.
    ply : int32[n]
        ``2 (fullmove - 1) + stm``: the ply of the position as its counters give it.
    fens : list[str | None]
        Each valid position's FEN as python-chess's ``Board.fen()`` writes it.
    moves : int64[n]
        The UCI key of the legal move each move text names, or ``NO_MOVE`` (no text),
        ``ILLEGAL_MOVE`` (no legal move fits), ``AMBIGUOUS_MOVE`` (several do).
    """

    boards: np.ndarray
    ok: np.ndarray
    errors: list[str | None]
    bad_text: np.ndarray
    keys: np.ndarray
    n_legal: np.ndarray
    stm: np.ndarray
    ply: np.ndarray
    fens: list[str | None]
    moves: np.ndarray


def parse_fens(buf: bytes, starts: np.ndarray, ends: np.ndarray, specs: MoveSpecs | None = None) -> FenBatch:
    """Parse and check the FENs ``buf[starts[i]:ends[i]]`` (ASCII; fields separated by spaces
    or tabs), and find the legal move each of ``specs`` names (see :class:`FenBatch`).

    Parameters
    ----------
    buf : the texts, one buffer.
    starts, ends : int64[n], byte offsets into ``buf`` (``0 <= start <= end <= len(buf)``).
    specs : move texts from :func:`move_specs` (default: none).
    """
    data = np.frombuffer(buf, dtype=np.uint8)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    n = len(starts)
    if ends.shape != (n,) or (n and (starts.min() < 0 or ends.max() > len(data) or np.any(ends < starts))):
        raise ValueError("starts and ends must be int64[n] offsets with 0 <= start <= end <= len(buf)")
    if specs is None:
        specs, _ = move_specs([None] * n)
    if len(specs.kind) != n:
        raise ValueError("one move spec per FEN")
    boards = np.zeros((n, BOARD_WORDS), dtype=np.uint64)
    err = np.zeros(n, dtype=np.int8)
    if n:
        _parse_kernel(data, starts, ends, _PIECE_OF_BYTE, _CASTLE_OF_BYTE, boards, err)
    rule = np.where(err == 0, board_problems(boards) if n else np.zeros(0, np.int8), 0)
    todo = (err == 0) & (rule == 0)
    check = np.zeros(n, dtype=np.int8)
    keys = np.zeros(n, dtype=np.uint64)
    n_legal = np.zeros(n, dtype=np.int32)
    fen_buf = np.zeros((n, FEN_STRIDE), dtype=np.uint8)
    fen_len = np.zeros(n, dtype=np.int32)
    moves = np.full(n, NO_MOVE, dtype=np.int64)
    if todo.any():
        _analyse_kernel(boards, todo, specs.kind, specs.uci, specs.piece, specs.from_file, specs.from_rank,
                        specs.to, specs.promo, _PIECE_CHARS, check, keys, n_legal, fen_buf, fen_len, moves)
    ok = todo & (check == 0)
    errors: list[str | None] = [None] * n
    for i in np.flatnonzero(~ok).tolist():
        if err[i]:
            errors[i] = f"bad FEN: {FEN_ERRORS[err[i]]}"
        elif rule[i]:
            errors[i] = f"impossible position: {RULES[rule[i] - 1]}"
        else:
            errors[i] = f"impossible position: {CHECK_ERRORS[check[i]]}"
    raw = fen_buf.tobytes()
    fens: list[str | None] = [None] * n
    for i in np.flatnonzero(ok).tolist():
        a = i * FEN_STRIDE
        fens[i] = raw[a:a + int(fen_len[i])].decode("ascii")
    stm = boards[:, W_STM].astype(np.int8)
    ply = (2 * (boards[:, W_FULLMOVE].astype(np.int64) - 1) + stm).clip(0, 2**31 - 1).astype(np.int32)
    return FenBatch(boards=boards, ok=ok, errors=errors, bad_text=err != 0, keys=keys, n_legal=n_legal,
                    stm=stm, ply=ply, fens=fens, moves=moves)


__all__ = ["AMBIGUOUS_MOVE", "CHECK_ERRORS", "FEN_ERRORS", "FenBatch", "ILLEGAL_MOVE", "MoveSpecs", "NO_MOVE",
           "move_specs", "parse_fens"]
