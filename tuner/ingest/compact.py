"""The compact position record: one scored position in 40 bytes (issue 60 item 2).

A record holds everything a position set's row needs to be rebuilt exactly, but the columns
that describe where it came from (ratings, tags, source file): the board with side to move,
castling rights (Chess960's too), en passant and both counters, the move played, the score,
the game's result, the ply and the game. Little-endian, no padding:

======  =====  ===========  ===========================================================
offset  bytes  field        content
======  =====  ===========  ===========================================================
0       8      occupancy    uint64 bitboard of the occupied squares (bit k: square k, a1 = 0)
8       16     pieces       the piece code of the k-th occupied square (ascending) in
                            nibble k: byte k // 2, low nibble first; nibbles past the last
                            piece are 0. Codes: 0 pawn, 1 knight, 2 bishop, 3 rook,
                            4 queen, 5 king, 6 a rook with a castling right (Marlinformat's
                            "unmoved rook": castling is told by the rook, so any Chess960
                            right fits), + 8 for Black; 7 and 15 name no piece
24      1      stm_ep       bits 0-6 the en-passant square as the FEN gives it (64: none),
                            bit 7 the side to move (0 White, 1 Black)
25      1      flags        bits 0-1 the game's result, White's view (0 ``*``, 1 ``1-0``,
                            2 ``0-1``, 3 ``1/2-1/2``); bits 2-7 zero
26      2      halfmove     uint16 halfmove clock
28      2      fullmove     uint16 fullmove number (from 1)
30      2      move         uint16 the move played, UCI: from | to << 6 | promotion << 12
                            (1 knight .. 4 queen; the search's UCI key); 0 (a1a1): none
32      2      score        int16 centipawns, White's view; -32768: none. A mate in n moves
                            (``+-(MATE_CP + n)`` in a set) is ``+-(32000 - n)``, as the text
                            exports write it (:mod:`tuner.selfplay.export`), so centipawns
                            go to +-31000 and mates to 999 moves
34      2      ply          uint16 0-based ply of the position in its game
36      4      game_id      uint32 the position set's game id
======  =====  ===========  ===========================================================

Nothing is clamped: a value that does not fit (a counter or ply above 65535, a game id
outside 0 .. 2**32 - 1, more than 32 pieces, a score beyond the ranges above) is refused by a
one-line :class:`CompactError` naming the row. A record written from a FEN gives back the
same FEN, as python-chess's ``Board.fen()`` writes it (a position set's FENs are that text;
castling in X-FEN). The record's legal-move count and Zobrist key are not stored: readers
compute them from the board.

:func:`pack` builds records from columns and :func:`frame_of` gives a position set's frame
back (:data:`tuner.ingest.schema.SCHEMA`; the columns not stored are null); :func:`boards_of`
gives the search's board arrays without FEN text; :func:`record_of_board` and
:func:`board_of_record` are the plain python-chess versions (the tests' oracle, and the path
of Chess960 rows). The kernels are in :mod:`tuner.ingest.compact_kernels`, the chunked file in
:mod:`tuner.ingest.compact_file`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import chess
import chess.polyglot
import numpy as np
import polars as pl

from search.core.board import BOARD_WORDS, uci_keys_by_text, uci_texts
from search.core.validate import RULES, board_problems
from tuner.errors import TunerError
from tuner.ingest import compact_kernels as kernels
from tuner.ingest.schema import SCHEMA

#: bytes per record
RECORD_BYTES = 40
#: the record (see the module docstring for the layout)
RECORD_FIELDS = ("occupancy", "pieces", "stm_ep", "flags", "halfmove", "fullmove", "move", "score", "ply", "game_id")
RECORD_FORMATS = ("<u8", "16u1", "u1", "u1", "<u2", "<u2", "<u2", "<i2", "<u2", "<u4")
RECORD_OFFSETS = (0, 8, 24, 25, 26, 28, 30, 32, 34, 36)
RECORD = np.dtype({"names": list(RECORD_FIELDS), "formats": list(RECORD_FORMATS), "offsets": list(RECORD_OFFSETS),
                   "itemsize": RECORD_BYTES})
if RECORD.itemsize > 40:  # issue 60's bound; tests/tuner/ingest/test_compact.py checks it too
    raise AssertionError(f"a compact record is {RECORD.itemsize} bytes, more than 40")

#: ``score`` of a position without one
NO_SCORE = -32768
#: ``move`` of a position without one
NO_MOVE = 0
#: a mate in n moves in a position set's ``score`` column: +-(MATE_CP + n) (as
#: :data:`tuner.arena.match.MATE_CP`; a test checks they agree)
MATE_CP = 100_000
#: a mate in n moves in a record: +-(MATE_TEXT - n) (as :data:`tuner.selfplay.export.MATE_TEXT`)
MATE_TEXT = 32_000
#: the largest |centipawns| a record holds, and the longest mate (moves)
MAX_CP, MAX_MATE = MATE_TEXT - 1000, 999
#: the largest game id and ply a record holds
MAX_GAME_ID, MAX_PLY = 2**32 - 1, 2**16 - 1
#: result texts by their code in ``flags``
RESULTS = ("*", "1-0", "0-1", "1/2-1/2")
RESULT_MASK = 0x03
#: the highest UCI key (promotion field at most 4)
_MAX_UCI_KEY = 63 | 63 << 6 | 4 << 12

#: why a FEN cannot be packed (code of :func:`tuner.ingest.compact_kernels._pack_fens`)
PACK_ERRORS = ("", "not a FEN", "more than 32 pieces, which a record cannot hold",
               "a castling right without its rook on the back rank beside the king",
               f"halfmove clock above {kernels.MAX_COUNTER}, which a record cannot hold",
               f"fullmove number above {kernels.MAX_COUNTER}, which a record cannot hold",
               "en-passant square not on the third or sixth rank")
#: why a record's board fields make no board (code of ``_check_boards``)
CHECK_ERRORS = ("", "more than 32 occupied squares", "a piece code that names no piece (7 or 15)",
                "piece codes after the last piece are not zero", "not one king of each colour",
                "a castling rook off its back rank or without its king there",
                "an en-passant square that is not on the third or sixth rank", "fullmove number 0")

Label = Callable[[int], str]


class CompactError(TunerError):
    """A position that does not fit a compact record, or a record that is not one; the message
    is one line naming the file and row (or chunk and record)."""


def _row_label(i: int) -> str:
    return f"row {i}"


# --- columns to record fields --------------------------------------------------------------


def text_buffer(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``texts`` as one uint8 buffer with int64 start and end offsets (UTF-8; a text the kernels
    read as ASCII fails their checks if it is not)."""
    n = len(texts)
    data = "\n".join(texts).encode("utf-8", "surrogateescape")
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    if len(data) != int(lengths.sum()) + max(n - 1, 0):  # not ASCII: byte lengths differ
        lengths = np.fromiter((len(t.encode("utf-8", "surrogateescape")) for t in texts), dtype=np.int64, count=n)
    starts = np.zeros(n, dtype=np.int64)
    if n > 1:
        starts[1:] = np.cumsum(lengths[:-1] + 1)
    return np.frombuffer(data, dtype=np.uint8), starts, starts + lengths


def move_keys(moves: Sequence[str | None], label: Label = _row_label) -> np.ndarray:
    """uint16 UCI keys of UCI move texts (None: :data:`NO_MOVE`); a :class:`CompactError` for
    the first text that is not a UCI move."""
    keys = uci_keys_by_text()
    out = np.zeros(len(moves), dtype=np.uint16)
    for i, text in enumerate(moves):
        if text is not None:
            key = keys.get(text)
            if key is None:
                raise CompactError(f"{label(i)}: move {text!r} is not a UCI move")
            out[i] = key
    return out


def score_codes(scores: np.ndarray, nulls: np.ndarray | None = None, label: Label = _row_label) -> np.ndarray:
    """int16 record scores of scores in a position set's convention (int, White's view,
    centipawns; ``+-(MATE_CP + n)`` a mate in n moves; ``nulls``: none); a
    :class:`CompactError` for the first that does not fit."""
    s = np.asarray(scores, dtype=np.int64)
    null = np.zeros(len(s), dtype=bool) if nulls is None else np.asarray(nulls, dtype=bool)
    mag = np.abs(s)
    mate = mag > MATE_CP
    moves = mag - MATE_CP
    fits = null | (mag <= MAX_CP) | (mate & (moves <= MAX_MATE))
    if not fits.all():
        i = int(np.flatnonzero(~fits)[0])
        raise CompactError(f"{label(i)}: score {int(s[i])} does not fit a compact record (centipawns to "
                           f"+-{MAX_CP}, mates +-({MATE_CP} + n) to {MAX_MATE} moves)")
    out = np.where(mate, np.sign(s) * (MATE_TEXT - moves), s)
    return np.where(null, NO_SCORE, out).astype(np.int16)


def scores_of(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scores (int64, the position set's convention) and the null mask of record scores."""
    c = np.asarray(codes, dtype=np.int64)
    mag = np.abs(c)
    out = np.where(mag > MAX_CP, np.sign(c) * (MATE_CP + MATE_TEXT - mag), c)
    null = c == NO_SCORE
    return np.where(null, 0, out), null


_RESULT_CODE = {text: code for code, text in enumerate(RESULTS)}


def result_codes(results: Sequence[str], label: Label = _row_label) -> np.ndarray:
    """uint8 result codes of result texts (``1-0``, ``0-1``, ``1/2-1/2``, ``*``)."""
    out = np.zeros(len(results), dtype=np.uint8)
    for i, text in enumerate(results):
        code = _RESULT_CODE.get(text)
        if code is None:
            raise CompactError(f"{label(i)}: result {text!r} is not 1-0, 0-1, 1/2-1/2 or *")
        out[i] = code
    return out


def pack(fens: Sequence[str], *, moves: np.ndarray, scores: np.ndarray, results: np.ndarray, plies: np.ndarray,
         game_ids: np.ndarray, label: Label = _row_label) -> np.ndarray:
    """Records of positions given column by column.

    Parameters
    ----------
    fens : FEN texts (4 to 6 fields; castling in X-FEN or Shredder-FEN for Chess960).
    moves : uint16[n] UCI keys (:func:`move_keys`), :data:`NO_MOVE` for none.
    scores : int16[n] record scores (:func:`score_codes`).
    results : uint8[n] result codes (:func:`result_codes`).
    plies, game_ids : integer[n]; 0 .. :data:`MAX_PLY` and 0 .. :data:`MAX_GAME_ID`.
    label : the text naming row ``i`` in an error (``FILE: row i (game g, ply p)``).

    Raises
    ------
    CompactError
        One line naming the first row that does not fit (or whose FEN is not one).
    """
    n = len(fens)
    plies = np.asarray(plies, dtype=np.int64)
    game_ids = np.asarray(game_ids, dtype=np.int64)
    if not all(len(a) == n for a in (moves, scores, results, plies, game_ids)):
        raise ValueError("one move, score, result, ply and game id per FEN")
    for values, top, what in ((plies, MAX_PLY, "ply"), (game_ids, MAX_GAME_ID, "game id")):
        bad = np.flatnonzero((values < 0) | (values > top))
        if len(bad):
            i = int(bad[0])
            raise CompactError(f"{label(i)}: {what} {int(values[i])} does not fit a compact record (0 to {top})")
    rec = np.zeros(n, dtype=RECORD)
    if n:
        buf, starts, ends = text_buffer(fens)
        err = np.zeros(n, dtype=np.int8)
        kernels._pack_fens(buf, starts, ends, rec["occupancy"], rec["pieces"], rec["stm_ep"], rec["halfmove"],
                           rec["fullmove"], err)
        bad = np.flatnonzero(err)
        if len(bad):
            i = int(bad[0])
            raise CompactError(f"{label(i)}: FEN {fens[i]!r}: {PACK_ERRORS[err[i]]}")
    rec["move"] = moves
    rec["score"] = scores
    rec["flags"] = results
    rec["ply"] = plies
    rec["game_id"] = game_ids
    return rec


def pack_frame(frame: pl.DataFrame, label: Label = _row_label) -> np.ndarray:
    """Records of a position set's rows (columns ``fen``, ``move``, ``score``, ``result``,
    ``ply``, ``game_id`` of :data:`tuner.ingest.schema.SCHEMA`)."""
    ids = frame["game_id"].to_numpy()
    plies = frame["ply"].to_numpy()

    def where(i: int) -> str:
        return f"{label(i)} (game {int(ids[i])}, ply {int(plies[i])})"

    score = frame["score"]
    return pack(frame["fen"].to_list(), moves=move_keys(frame["move"].to_list(), where),
                scores=score_codes(score.fill_null(0).to_numpy(), score.is_null().to_numpy(), where),
                results=result_codes(frame["result"].to_list(), where), plies=plies, game_ids=ids, label=where)


# --- records back ----------------------------------------------------------------------------


def problems(records: np.ndarray) -> np.ndarray:
    """int8[n]: for each record, 0 when it is one this module writes, else a code: 1 ..
    ``len(CHECK_ERRORS) - 1`` from :data:`CHECK_ERRORS`, then :data:`FIELD_ERRORS` in order."""
    rec = _records(records)
    err = np.zeros(len(rec), dtype=np.int8)
    if len(rec):
        kernels._check_boards(rec["occupancy"], rec["pieces"], rec["stm_ep"], rec["fullmove"], err)
    base = len(CHECK_ERRORS)
    move = rec["move"].astype(np.int64)
    checks = (
        (rec["flags"] & ~np.uint8(RESULT_MASK)) != 0,
        (rec["score"] != NO_SCORE) & (np.abs(rec["score"].astype(np.int64)) >= MATE_TEXT),
        (move != NO_MOVE) & ((move > _MAX_UCI_KEY) | ((move & 63) == ((move >> 6) & 63))),
    )
    for k, bad in enumerate(checks):
        err = np.where((err == 0) & bad, base + k, err).astype(np.int8)
    return err


#: why a record's other fields are not ones this module writes (codes after :data:`CHECK_ERRORS`)
FIELD_ERRORS = ("reserved bits of the flags byte are set", f"a score beyond +-{MATE_TEXT - 1}",
                "a move that is no UCI move")


def problem_text(code: int) -> str:
    """The text of a :func:`problems` code."""
    return CHECK_ERRORS[code] if code < len(CHECK_ERRORS) else FIELD_ERRORS[code - len(CHECK_ERRORS)]


def _records(records: np.ndarray) -> np.ndarray:
    if not isinstance(records, np.ndarray) or records.dtype != RECORD or records.ndim != 1:
        raise ValueError("records must be a 1-D array of dtype tuner.ingest.compact.RECORD")
    return records


def fens_of(records: np.ndarray) -> list[str]:
    """The FEN of each (checked) record, as python-chess's ``Board.fen()`` writes it."""
    rec = _records(records)
    n = len(rec)
    if not n:
        return []
    buf = np.zeros((n, kernels.FEN_STRIDE), dtype=np.uint8)
    lengths = np.zeros(n, dtype=np.int32)
    kernels._unpack_fens(rec["occupancy"], rec["pieces"], rec["stm_ep"], rec["halfmove"], rec["fullmove"],
                         kernels._CODE_CHARS, buf, lengths)
    raw = buf.tobytes()
    stride = kernels.FEN_STRIDE
    return [raw[i * stride:i * stride + int(k)].decode("ascii") for i, k in enumerate(lengths.tolist())]


def boards_of(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The search's boards (uint64[n, BOARD_WORDS], :mod:`search.core.board`, Zobrist key
    included) of checked records, and bool[n]: whether each is one (False for a Chess960
    castling right, which those boards cannot hold; that row is then not a board to use)."""
    rec = _records(records)
    n = len(rec)
    boards = np.zeros((n, BOARD_WORDS), dtype=np.uint64)
    err = np.zeros(n, dtype=np.int8)
    if n:
        kernels._unpack_boards(rec["occupancy"], rec["pieces"], rec["stm_ep"], rec["halfmove"], rec["fullmove"],
                               boards, err)
    return boards, err == 0


def checked_boards(records: np.ndarray, label: Label = _row_label) -> tuple[np.ndarray, np.ndarray]:
    """:func:`boards_of`, each usable board checked by the rules the search's kernels rely on
    (:func:`search.core.validate.board_problems`: a record no writer makes, such as a pawn on
    the last rank, must not reach move generation); a :class:`CompactError` names the first
    that breaks one."""
    boards, usable = boards_of(records)
    if len(boards):
        codes = np.where(usable, board_problems(boards), 0)
        bad = np.flatnonzero(codes)
        if len(bad):
            i = int(bad[0])
            raise CompactError(f"{label(i)}: impossible position: {RULES[int(codes[i]) - 1]} ({len(bad)} such row(s))")
    return boards, usable


def legal_counts(boards: np.ndarray, ok: np.ndarray | None = None) -> np.ndarray:
    """int32[n]: the legal moves of each board (0 where not ``ok``); the boards must pass
    :func:`search.core.validate.board_problems` (:func:`checked_boards`)."""
    n = len(boards)
    out = np.zeros(n, dtype=np.int32)
    todo = np.ones(n, dtype=np.bool_) if ok is None else np.ascontiguousarray(ok, dtype=np.bool_)
    if n:
        kernels._count_legal(np.ascontiguousarray(boards, dtype=np.uint64), todo, out)
    return out


def moves_of(records: np.ndarray) -> list[str | None]:
    """The UCI text of each record's move (None where it has none)."""
    texts = uci_texts()
    return [None if k == NO_MOVE else texts[k] for k in _records(records)["move"].tolist()]


def results_of(records: np.ndarray) -> list[str]:
    """The result text of each record."""
    return [RESULTS[k] for k in (_records(records)["flags"] & RESULT_MASK).tolist()]


def stm_of(records: np.ndarray) -> np.ndarray:
    """int8[n]: the side to move (0 White, 1 Black)."""
    return (_records(records)["stm_ep"] >> 7).astype(np.int8)


#: columns :func:`frame_of` computes (the others are null)
STORED = ("game_id", "ply", "fen", "move", "stm", "result", "score", "n_legal", "zobrist")


def frame_of(records: np.ndarray, columns: Sequence[str] | None = None, label: Label = _row_label) -> pl.DataFrame:
    """The rows of checked records as a position set's frame: the columns of
    :data:`tuner.ingest.schema.SCHEMA` (or ``columns`` of them, in that order), those a record
    does not hold (ratings, tags, source) null, ``n_legal`` and ``zobrist`` computed from the
    board (Chess960 rows through python-chess; an impossible position is refused naming the
    row by ``label``, :func:`checked_boards`)."""
    rec = _records(records)
    wanted = list(SCHEMA) if columns is None else list(columns)
    n = len(rec)
    data: dict[str, pl.Series] = {}
    fens: list[str] | None = None
    if "n_legal" in wanted or "zobrist" in wanted:
        boards, ok = checked_boards(rec, label)
        n_legal = legal_counts(boards, ok)
        keys = boards[:, 13].copy() if n else np.zeros(0, dtype=np.uint64)  # W_KEY
        if not ok.all():  # Chess960 rights: python-chess's count and key
            fens = fens_of(rec)
            for i in np.flatnonzero(~ok).tolist():
                board = chess.Board(fens[i], chess960=True)
                n_legal[i] = board.legal_moves.count()
                keys[i] = chess.polyglot.zobrist_hash(board)
        data["n_legal"] = pl.Series("n_legal", n_legal, dtype=pl.Int32())
        data["zobrist"] = pl.Series("zobrist", keys, dtype=pl.UInt64())
    for name in wanted:
        if name in data:
            continue
        dtype = SCHEMA[name]
        if name == "game_id":
            data[name] = pl.Series(name, rec["game_id"].astype(np.int64), dtype=dtype)
        elif name == "ply":
            data[name] = pl.Series(name, rec["ply"].astype(np.int32), dtype=dtype)
        elif name == "fen":
            data[name] = pl.Series(name, fens if fens is not None else fens_of(rec), dtype=dtype)
        elif name == "move":
            data[name] = pl.Series(name, moves_of(rec), dtype=dtype)
        elif name == "stm":
            data[name] = pl.Series(name, stm_of(rec), dtype=dtype)
        elif name == "result":
            data[name] = pl.Series(name, results_of(rec), dtype=dtype)
        elif name == "score":
            values, null = scores_of(rec["score"])
            series = pl.Series(name, values.astype(np.int32), dtype=dtype)
            data[name] = series.scatter(np.flatnonzero(null), None) if null.any() else series
        else:
            data[name] = pl.Series(name, [None] * n, dtype=dtype)
    return pl.DataFrame([data[name] for name in wanted])


@dataclass(frozen=True)
class TrainingArrays:
    """What training takes of records, without FEN text (:func:`training_arrays`).

    ``boards`` uint64[n, BOARD_WORDS] the search's boards, key included
    (:mod:`search.core.board`); ``usable`` bool[n], False for a board with a Chess960 castling
    right (those boards cannot hold one; its row is not a board to use); ``played`` int32[n]
    the played move's UCI key, -1 where none (:data:`tuner.training.positions.NO_PLAYED_MOVE`);
    ``game_ids`` int64[n]; ``plies`` int32[n]; ``results`` float64[n] the game's result from the
    side to move's view (1, 0.5, 0; NaN for ``*``); ``scores`` float64[n] the score from the side
    to move's view in centipawns (a mate ``+-(MATE_CP + n)``), NaN where none.
    """

    boards: np.ndarray
    usable: np.ndarray
    played: np.ndarray
    game_ids: np.ndarray
    plies: np.ndarray
    results: np.ndarray
    scores: np.ndarray


#: White's points by result code (``*``: NaN)
_WHITE_POINTS = np.array([np.nan, 1.0, 0.0, 0.5])


def training_arrays(records: np.ndarray, label: Label = _row_label, *, check: bool = True) -> TrainingArrays:
    """The arrays training builds from a split (:class:`TrainingArrays`) from checked records,
    straight from the packed boards: no FEN is written or parsed (an impossible position is
    refused naming the row by ``label``, :func:`checked_boards`; ``check=False`` skips that
    check, for records whose boards passed it before)."""
    rec = _records(records)
    boards, usable = checked_boards(rec, label) if check else boards_of(rec)
    black = (rec["stm_ep"] & kernels.STM_BIT) != 0
    white = _WHITE_POINTS[rec["flags"] & RESULT_MASK]
    values, null = scores_of(rec["score"])
    scores = np.where(null, np.nan, np.where(black, -values, values).astype(np.float64))
    played = rec["move"].astype(np.int32)
    return TrainingArrays(boards=boards, usable=usable, played=np.where(played == NO_MOVE, -1, played).astype(np.int32),
                          game_ids=rec["game_id"].astype(np.int64), plies=rec["ply"].astype(np.int32),
                          results=np.where(black, 1.0 - white, white), scores=scores)


# --- the python-chess versions ---------------------------------------------------------------


def record_of_board(board: chess.Board, *, move: chess.Move | None = None, score: int | None = None,
                    result: str = "*", ply: int = 0, game_id: int = 0) -> np.ndarray:
    """One record (shape ``(1,)``) of a python-chess board, in plain Python: the oracle of
    :func:`pack`. The en-passant square is the one ``board.fen()`` writes (only when a legal
    capture exists); a Chess960 board's castling rights are its rooks."""
    rec = np.zeros(1, dtype=RECORD)
    occ = int(board.occupied)
    if bin(occ).count("1") > kernels.MAX_PIECES:
        raise CompactError(f"{board.fen()}: {PACK_ERRORS[kernels.PACK_PIECES]}")
    if board.halfmove_clock > kernels.MAX_COUNTER or board.fullmove_number > kernels.MAX_COUNTER:
        raise CompactError(f"{board.fen()}: a counter above {kernels.MAX_COUNTER}, which a record cannot hold")
    castling = int(board.clean_castling_rights())
    nibbles = []
    for sq in chess.SquareSet(occ):
        piece = board.piece_at(sq)
        assert piece is not None
        code = kernels.CODE_CASTLING_ROOK if castling >> sq & 1 else piece.piece_type - 1
        nibbles.append(code | (0 if piece.color == chess.WHITE else kernels.CODE_BLACK))
    for k, code in enumerate(nibbles):
        rec["pieces"][0, k >> 1] |= code << (4 * (k & 1))
    rec["occupancy"] = occ
    ep = board.ep_square if board.has_legal_en_passant() else None
    rec["stm_ep"] = (64 if ep is None else ep) | (0 if board.turn == chess.WHITE else kernels.STM_BIT)
    rec["flags"] = result_codes([result])[0]
    rec["halfmove"] = board.halfmove_clock
    rec["fullmove"] = board.fullmove_number
    rec["move"] = NO_MOVE if move is None else move_keys([move.uci()])[0]
    rec["score"] = NO_SCORE if score is None else score_codes(np.array([score]))[0]
    rec["ply"] = ply
    rec["game_id"] = game_id
    return rec


def board_of_record(record: np.ndarray) -> chess.Board:
    """The python-chess board of one record, in plain Python (the oracle of :func:`fens_of`;
    a board with a castling right that is not a standard one is a Chess960 board)."""
    r = record.reshape(-1)[0]
    occ, raw = int(r["occupancy"]), bytes(r["pieces"])
    board = chess.Board(None)
    castling = 0
    for k, sq in enumerate(chess.SquareSet(occ)):
        code = raw[k >> 1] >> (4 * (k & 1)) & 15
        colour = chess.WHITE if code < kernels.CODE_BLACK else chess.BLACK
        kind = code & 7
        if kind == kernels.CODE_CASTLING_ROOK:
            castling |= chess.BB_SQUARES[sq]
            kind = kernels.CODE_ROOK
        board.set_piece_at(sq, chess.Piece(kind + 1, colour))
    stm_ep = int(r["stm_ep"])
    board.turn = chess.BLACK if stm_ep & kernels.STM_BIT else chess.WHITE
    ep = stm_ep & kernels.EP_MASK
    board.ep_square = None if ep == 64 else ep
    board.castling_rights = castling
    if castling & ~(chess.BB_A1 | chess.BB_H1 | chess.BB_A8 | chess.BB_H8) or (
            castling & chess.BB_RANK_1 and board.king(chess.WHITE) != chess.E1) or (
            castling & chess.BB_RANK_8 and board.king(chess.BLACK) != chess.E8):
        board.chess960 = True
    board.halfmove_clock = int(r["halfmove"])
    board.fullmove_number = int(r["fullmove"])
    return board


__all__ = ["CHECK_ERRORS", "FIELD_ERRORS", "MATE_CP", "MATE_TEXT", "NO_MOVE", "NO_SCORE", "RECORD", "RECORD_BYTES",
           "RESULTS", "CompactError", "TrainingArrays", "board_of_record", "boards_of", "checked_boards", "fens_of",
           "frame_of", "legal_counts", "move_keys", "moves_of", "pack", "pack_frame", "problem_text", "problems",
           "record_of_board", "result_codes", "results_of", "score_codes", "scores_of", "stm_of", "training_arrays"]
