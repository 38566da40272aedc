"""The boundary between Python and the numba core: FEN, python-chess boards, UCI moves.

Everything here validates its input and raises :class:`InvalidFenError` or
:class:`IllegalMoveError` (both ``ValueError``) with a one-line message naming the problem;
kernels never see an unchecked board.
"""

from __future__ import annotations

from collections.abc import Iterable

import chess
import numpy as np

from search.core.board import (
    BOARD_WORDS,
    CASTLING_RIGHTS,
    FLAG_CASTLE,
    FLAG_DOUBLE,
    FLAG_EP,
    NO_PIECE,
    NO_SQUARE,
    PIECE_SYMBOLS,
    W_CASTLE,
    W_EP,
    W_FULLMOVE,
    W_HALFMOVE,
    W_KEY,
    W_OCC,
    W_STM,
    compute_key,
    make_move,
    move_from,
    move_promo,
    move_to,
    move_uci_key,
    uci_key_of_text,
    uci_texts,
)
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.core.validate import InvalidBoardError, check_board, check_board_array

Board = np.ndarray
"""uint64[BOARD_WORDS]: a position as the numba core holds it (see :mod:`search.core.board`)."""
Move = int
"""A packed move (see :mod:`search.core.board`)."""

STARTING_FEN = chess.STARTING_FEN

_CASTLE_CHARS = {letter: right for right, letter, _, _, _ in CASTLING_RIGHTS}
_STATUS_MESSAGES = (
    (chess.STATUS_NO_WHITE_KING, "white has no king"),
    (chess.STATUS_NO_BLACK_KING, "black has no king"),
    (chess.STATUS_TOO_MANY_KINGS, "a side has more than one king"),
    (chess.STATUS_TOO_MANY_WHITE_PAWNS, "white has more than 8 pawns"),
    (chess.STATUS_TOO_MANY_BLACK_PAWNS, "black has more than 8 pawns"),
    (chess.STATUS_PAWNS_ON_BACKRANK, "a pawn stands on the first or last rank"),
    (chess.STATUS_TOO_MANY_WHITE_PIECES, "white has more than 16 pieces"),
    (chess.STATUS_TOO_MANY_BLACK_PIECES, "black has more than 16 pieces"),
    (chess.STATUS_BAD_CASTLING_RIGHTS, "castling rights without king and rook on their squares"),
    (chess.STATUS_INVALID_EP_SQUARE, "en-passant square without a pawn that just moved two squares"),
    (chess.STATUS_OPPOSITE_CHECK, "the side not to move is in check"),
    (chess.STATUS_TOO_MANY_CHECKERS, "the king is attacked by more than two pieces"),
    (chess.STATUS_IMPOSSIBLE_CHECK, "the checking pieces could not have given check together"),
)


class InvalidFenError(ValueError):
    """A FEN that is malformed or describes an impossible position."""


class IllegalMoveError(ValueError):
    """A move that is not legal (or not parseable) in the given position."""


def _parse_placement(field: str, fen: str) -> list[tuple[int, bool, int]]:
    ranks = field.split("/")
    if len(ranks) != 8:
        raise InvalidFenError(f"invalid FEN {fen!r}: placement has {len(ranks)} ranks, not 8")
    out = []
    for i, rank_text in enumerate(ranks):
        rank = 7 - i
        file = 0
        prev_digit = False
        for ch in rank_text:
            if ch in "0123456789":  # ASCII only: str.isdigit also accepts '²'
                if prev_digit or ch in "09":
                    raise InvalidFenError(f"invalid FEN {fen!r}: bad empty-square count in rank {rank + 1}")
                file += int(ch)
                prev_digit = True
            elif ch.lower() in PIECE_SYMBOLS:
                if file >= 8:
                    raise InvalidFenError(f"invalid FEN {fen!r}: rank {rank + 1} has more than 8 squares")
                out.append((rank * 8 + file, ch.isupper(), PIECE_SYMBOLS.index(ch.lower())))
                file += 1
                prev_digit = False
            else:
                raise InvalidFenError(f"invalid FEN {fen!r}: unknown piece {ch!r} in rank {rank + 1}")
        if file != 8:
            raise InvalidFenError(f"invalid FEN {fen!r}: rank {rank + 1} has {file} squares, not 8")
    return out


#: largest halfmove clock or fullmove number a FEN may give: the board stores the counters in
#: uint64 words that the kernels read as int64 and increment, and tools reading our FENs and
#: datasets often hold them in int32; no game comes near (the 75-move rule ends every game
#: within about 6,000 moves)
MAX_FEN_COUNTER = 2**31 - 1


def _parse_counter(text: str, name: str, fen: str, minimum: int) -> int:
    # ASCII digits only (str.isdigit accepts '²'), and at most 10 of them before int()
    if not (text.isascii() and text.isdigit()) or len(text) > 10 or not minimum <= int(text) <= MAX_FEN_COUNTER:
        raise InvalidFenError(f"invalid FEN {fen!r}: {name} {text[:20]!r} is not an integer "
                              f"between {minimum} and {MAX_FEN_COUNTER}")
    return int(text)


def from_fen(fen: str) -> Board:
    """Parse a FEN (4 to 6 fields) into a board; raise :class:`InvalidFenError` if malformed or
    impossible (no king, pawns on the back rank, the side not to move in check, inconsistent
    castling rights or en-passant square, more pieces than promotions explain, ...: python-chess's
    ``status()`` and :func:`search.core.validate.check_board`)."""
    if not isinstance(fen, str):
        raise InvalidFenError(f"FEN must be a string, not {type(fen).__name__}")
    parts = fen.split()
    if not 4 <= len(parts) <= 6:
        raise InvalidFenError(f"invalid FEN {fen!r}: expected 4 to 6 fields, found {len(parts)}")
    placement, turn, castling, ep = parts[:4]
    b = np.zeros(BOARD_WORDS, dtype=np.uint64)
    for sq, white, pt in _parse_placement(placement, fen):
        m = np.uint64(1) << np.uint64(sq)
        b[pt] |= m
        b[W_OCC + (0 if white else 1)] |= m
    if turn not in ("w", "b"):
        raise InvalidFenError(f"invalid FEN {fen!r}: side to move {turn!r} is not 'w' or 'b'")
    b[W_STM] = 0 if turn == "w" else 1
    rights = 0
    if castling != "-":
        if len(set(castling)) != len(castling) or any(c not in _CASTLE_CHARS for c in castling):
            raise InvalidFenError(f"invalid FEN {fen!r}: castling field {castling!r}")
        for c in castling:
            rights |= _CASTLE_CHARS[c]
    b[W_CASTLE] = rights
    if ep == "-":
        b[W_EP] = NO_SQUARE
    else:
        try:
            b[W_EP] = chess.parse_square(ep)
        except ValueError:
            raise InvalidFenError(f"invalid FEN {fen!r}: en-passant square {ep!r}") from None
    b[W_HALFMOVE] = _parse_counter(parts[4], "halfmove clock", fen, 0) if len(parts) > 4 else 0
    b[W_FULLMOVE] = _parse_counter(parts[5], "fullmove number", fen, 1) if len(parts) > 5 else 1
    _check_possible(b, fen)
    b[W_KEY] = compute_key(b)
    return b


def status_problem(status: chess.Status) -> str | None:
    """The first problem of python-chess's ``status()`` that makes a position impossible here, in
    words (``"white has no king"``); ``None`` when it names none of them."""
    for flag, message in _STATUS_MESSAGES:
        if status & flag:
            return message
    return None


def _check_possible(b: Board, fen: str) -> None:
    problem = status_problem(to_chess(b).status())
    if problem is not None:
        raise InvalidFenError(f"impossible position in FEN {fen!r}: {problem}")
    try:
        check_board(b)  # the kernels' own rules, which add the material promotions can explain
    except InvalidBoardError as exc:
        raise InvalidFenError(f"impossible position in FEN {fen!r}: {str(exc).removeprefix('invalid board: ')}") from None


def to_fen(b: Board) -> str:
    """FEN of a board; the en-passant field is set after every double push (as python-chess's
    ``Board.fen(en_passant="fen")``), so FEN -> board -> FEN round-trips."""
    check_board_array(b)
    rows = []
    white = int(b[W_OCC])
    bbs = [int(b[p]) for p in range(6)]
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            m = 1 << (rank * 8 + file)
            sym = next((PIECE_SYMBOLS[p] for p in range(6) if bbs[p] & m), None)
            if sym is None:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += sym.upper() if white & m else sym
        if empty:
            row += str(empty)
        rows.append(row)
    rights = int(b[W_CASTLE])
    castling = "".join(c for c, bitv in _CASTLE_CHARS.items() if rights & bitv) or "-"
    ep = int(b[W_EP])
    ep_text = "-" if ep == NO_SQUARE else chess.square_name(ep)
    turn = "w" if int(b[W_STM]) == 0 else "b"
    return f"{'/'.join(rows)} {turn} {castling} {ep_text} {int(b[W_HALFMOVE])} {int(b[W_FULLMOVE])}"


def from_chess(board: chess.Board) -> Board:
    """Convert a python-chess board (standard chess) to the core's representation."""
    if board.chess960 or type(board).uci_variant != "chess":
        raise InvalidFenError("only standard chess is supported (got a variant or Chess960 board)")
    b = np.zeros(BOARD_WORDS, dtype=np.uint64)
    for pt in range(6):
        b[pt] = board.pieces_mask(pt + 1, chess.WHITE) | board.pieces_mask(pt + 1, chess.BLACK)
    b[W_OCC] = board.occupied_co[chess.WHITE]
    b[W_OCC + 1] = board.occupied_co[chess.BLACK]
    b[W_STM] = 0 if board.turn == chess.WHITE else 1
    cr = board.clean_castling_rights()
    rights = 0
    for right, _, _, _, rook in CASTLING_RIGHTS:
        if cr & chess.BB_SQUARES[rook]:
            rights |= right
    b[W_CASTLE] = rights
    b[W_EP] = NO_SQUARE if board.ep_square is None else board.ep_square
    b[W_HALFMOVE] = board.halfmove_clock
    b[W_FULLMOVE] = board.fullmove_number
    b[W_KEY] = compute_key(b)
    return b


def to_chess(b: Board) -> chess.Board:
    """Convert a core board to a python-chess board (no move history)."""
    check_board_array(b)
    board = chess.Board(None)
    for pt, name in enumerate(("pawns", "knights", "bishops", "rooks", "queens", "kings")):
        setattr(board, name, int(b[pt]))
    board.occupied_co[chess.WHITE] = int(b[W_OCC])
    board.occupied_co[chess.BLACK] = int(b[W_OCC + 1])
    board.occupied = int(b[W_OCC]) | int(b[W_OCC + 1])
    board.promoted = 0
    board.turn = int(b[W_STM]) == 0
    rights = int(b[W_CASTLE])
    cr = 0
    for right, _, _, _, rook in CASTLING_RIGHTS:
        if rights & right:
            cr |= chess.BB_SQUARES[rook]
    board.castling_rights = cr
    ep = int(b[W_EP])
    board.ep_square = None if ep == NO_SQUARE else ep
    board.halfmove_clock = int(b[W_HALFMOVE])
    board.fullmove_number = int(b[W_FULLMOVE])
    board.clear_stack()
    return board


def legal_moves(b: Board) -> np.ndarray:
    """All legal moves of ``b`` as packed ``int32`` (order as generated); an invalid board
    raises :class:`search.core.validate.InvalidBoardError`."""
    return _legal_moves(check_board(b))


def _legal_moves(b: Board) -> np.ndarray:
    """:func:`legal_moves` of a board already checked."""
    out = np.zeros(MAX_MOVES, dtype=np.int32)
    n = generate_moves(b, out, ALL_MOVES)
    return out[:n].copy()


def move_to_uci(m: Move) -> str:
    """UCI text of a packed move (castling as the king's two-square move)."""
    return uci_texts()[move_uci_key(m)]


def move_to_chess(m: Move) -> chess.Move:
    promo = move_promo(m)
    return chess.Move(move_from(m), move_to(m), promo + 1 if promo else None)


def move_from_uci(b: Board, uci: str) -> Move:
    """The packed legal move of ``b`` written ``uci``; :class:`IllegalMoveError` otherwise."""
    for m in legal_moves(b):  # checks the board
        if move_to_uci(int(m)) == uci:
            return int(m)
    raise IllegalMoveError(f"illegal move {uci!r} in {to_fen(b)}")


def uci_key(uci: str) -> int:
    """The UCI key of a move (:func:`search.core.board.make_uci_key`: from/to/promotion bits of a
    packed move) written ``uci`` (e.g. ``e2e4``, ``e7e8q``, castling as the king's move),
    without a board; raise :class:`IllegalMoveError` when the text is not a UCI move. Legality
    is checked where the key is matched against a position's legal moves."""
    key = uci_key_of_text(uci.strip()) if isinstance(uci, str) else None
    if key is None:
        raise IllegalMoveError(f"not a UCI move: {uci!r}")
    return key


def move_from_chess(b: Board, move: chess.Move) -> Move:
    return move_from_uci(b, move.uci())


def push(b: Board, m: Move) -> Board:
    """The board after the packed legal move ``m`` (a new array). An invalid board raises
    :class:`search.core.validate.InvalidBoardError`, a move that is not one of its legal moves
    :class:`IllegalMoveError` (the kernel would read its tables out of bounds)."""
    b = check_board(b)
    if not isinstance(m, (int, np.integer)) or int(m) not in _legal_moves(b):
        raise IllegalMoveError(f"{m!r} is not a legal packed move in {to_fen(b)}")
    return _push(b, int(m))


def _push(b: Board, m: Move) -> Board:
    """:func:`push` of a checked board and one of its legal moves."""
    out = np.empty(BOARD_WORDS, dtype=np.uint64)
    make_move(b, out, m)
    return out


def play_uci(b: Board, moves: Iterable[str]) -> Board:
    """Play a sequence of UCI moves, checking each."""
    for uci in moves:
        b = _push(b, move_from_uci(b, uci))  # move_from_uci checked the board and the move
    return b


def zobrist(b: Board) -> int:
    return int(b[W_KEY])


__all__ = [
    "Board",
    "FLAG_CASTLE",
    "FLAG_DOUBLE",
    "FLAG_EP",
    "IllegalMoveError",
    "InvalidFenError",
    "Move",
    "NO_PIECE",
    "STARTING_FEN",
    "from_chess",
    "from_fen",
    "legal_moves",
    "move_from_chess",
    "move_from_uci",
    "move_to_chess",
    "move_to_uci",
    "play_uci",
    "push",
    "status_problem",
    "to_chess",
    "to_fen",
    "uci_key",
    "zobrist",
]
