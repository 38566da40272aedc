"""One game's text to its verdict and moves; a batch of games to position rows.

A game chunk (the bytes of one game, cut by :mod:`tuner.ingest.sources`) is decoded, its tag
lines checked, and read by python-chess with :class:`GameVisitor`, which rejects a game at its
headers (variant, set-up position, ratings) before any move is parsed, records the moves of
the main line (variations are skipped), and notes the first SAN error and the termination
marker. :func:`process_batch` then replays the accepted games on the numba core
(:mod:`search.core.replay`) and returns the rows of the kept positions as a polars frame.

Reasons (the strings counted in the manifest):

* input problems that reject the game: ``bad_tag``, ``variant``, ``bad_fen``,
  ``non_standard_start``, ``illegal_move``, ``ambiguous_move``, ``invalid_move``,
  ``missing_result``, ``truncated`` (no termination marker before the end of the file),
  ``result_mismatch`` (termination marker contradicts the Result tag), ``non_utf8`` (when the
  policy is ``skip``), ``replay_mismatch`` (the core and python-chess disagree: a bug),
  ``parse_error`` (an unexpected exception while reading the game: a bug, but the run goes on);
* input problems that reject nothing: ``garbage`` (text outside any game),
  ``non_utf8`` (policy ``latin1``), ``corrupt_stream`` (reported by :mod:`tuner.ingest.sources`);
* filters that reject the game: ``too_short``, ``rating``, ``missing_elo`` (neither player
  qualifies);
* filters that drop single positions: ``opening``, ``rating``, ``missing_elo``,
  ``single_legal`` (and ``duplicate``, applied by the writer).
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import chess
import chess.pgn
import numpy as np
import polars as pl

from search.core.board import BOARD_WORDS, make_uci_key, uci_texts
from search.core.convert import MAX_FEN_COUNTER, from_chess
from tuner.ingest.filters import IngestConfig, parse_elo
from search.core.replay import replay
from tuner.ingest.schema import SCHEMA

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")

#: Variant tag values that mean standard chess (case-insensitive); lichess writes "From
#: Position" for standard games set up from a FEN.
STANDARD_VARIANTS = frozenset({"standard", "chess", "normal", "from position", "fromposition", ""})

#: Position filters in the order they are applied (a position is counted under the first).
DROP_REASONS = ("opening", "missing_elo", "rating", "single_legal", "duplicate")

_SAN_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (chess.IllegalMoveError, "illegal_move"),
    (chess.AmbiguousMoveError, "ambiguous_move"),
    (chess.InvalidMoveError, "invalid_move"),
)

class GameChunk(NamedTuple):
    """The bytes of one game as cut from an input file (sent to worker processes)."""

    game_id: int
    """0-based index of the game over all inputs, in reading order."""
    file_index: int
    """Index of the input file in the list given."""
    source: str
    """Name of the input file (the ``source`` column)."""
    line: int
    """1-based line of the game's first tag in its file."""
    data: bytes
    """The game's raw bytes (tag section, move text and anything up to the next game)."""
    at_eof: bool
    """Whether the file ended right after this game (a missing result means truncation)."""


class Problem(NamedTuple):
    """An input problem: where it is and why (``detail`` is a short free text)."""

    line: int
    reason: str
    detail: str


@dataclass
class GameOutcome:
    """What became of one game (sent back to the parent)."""

    game_id: int
    line: int
    reason: str | None = None
    """Why the game was rejected (``None``: kept)."""
    problems: list[Problem] = field(default_factory=list)
    plies: int = 0
    positions: int = 0
    """Rows written for this game before deduplication."""
    dropped: dict[str, int] = field(default_factory=dict)
    """Positions of the (kept) game dropped per filter reason."""


class _LineCountingIO(io.StringIO):
    """A text buffer that counts the lines python-chess has read (to locate errors)."""

    lines_read = 0

    # typeshed's StringIO inherits two readline signatures (bytes from _IOBase, str from
    # _TextIOBase), so any override is flagged
    def readline(self, size: int | None = -1, /) -> str:  # type: ignore[override]
        self.lines_read += 1
        return super().readline(-1 if size is None else size)


class GameVisitor(chess.pgn.BaseVisitor[None]):
    """A python-chess visitor that skips unwanted games at their headers and records moves.

    After :func:`chess.pgn.read_game` returns, ``reject`` holds a header reason or ``None``,
    ``error`` the first SAN problem, ``marker`` the termination marker, and ``frm``/``to``/
    ``promo`` the main-line moves (promotion in the core's numbering).
    """

    def __init__(self, config: IngestConfig, handle: _LineCountingIO, first_line: int) -> None:
        self.config = config
        self.handle = handle
        self.first_line = first_line
        self.headers: dict[str, str] = {}
        self.reject: Problem | None = None
        self.error: Problem | None = None
        self.marker: str | None = None
        self.start: chess.Board | None = None
        self.frm: list[int] = []
        self.to: list[int] = []
        self.promo: list[int] = []

    def _line(self) -> int:
        return self.first_line + max(self.handle.lines_read - 1, 0)

    def begin_headers(self) -> None:
        return None

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self.headers.setdefault(tagname, tagvalue)

    def end_headers(self) -> chess.pgn.SkipType | None:
        self.reject = self._check_headers()
        return chess.pgn.SKIP if self.reject is not None else None

    def _check_headers(self) -> Problem | None:
        line = self.first_line
        variant = self.headers.get("Variant")
        if variant is not None and variant.strip().lower() not in STANDARD_VARIANTS:
            return Problem(line, "variant", f"Variant {variant!r}")
        fen = self.headers.get("FEN")
        if fen is not None:
            try:
                board = chess.Board(fen)
            except ValueError as exc:
                return Problem(line, "bad_fen", f"FEN {fen!r}: {exc}")
            if not (board.halfmove_clock <= MAX_FEN_COUNTER and board.fullmove_number <= MAX_FEN_COUNTER):
                return Problem(line, "bad_fen", f"FEN {fen!r}: a move counter beyond {MAX_FEN_COUNTER}")
            if board.has_chess960_castling_rights():
                return Problem(line, "non_standard_start", f"Chess960 castling rights in FEN {fen!r}")
            if board.epd() != chess.Board().epd():
                if not self.config.allow_setup:
                    return Problem(line, "non_standard_start", f"set-up position {fen!r} (see --allow-setup)")
                if not board.is_valid():
                    return Problem(line, "bad_fen", f"impossible position in FEN {fen!r}")
        elos = (parse_elo(self.headers.get("WhiteElo")), parse_elo(self.headers.get("BlackElo")))
        if not any(self.config.side_passes(elo) for elo in elos):
            reason = "missing_elo" if elos == (None, None) else "rating"
            return Problem(line, reason, "neither player passes the rating filter")
        return None

    def visit_board(self, board: chess.Board) -> None:
        if self.start is None:
            self.start = board.copy(stack=False)

    def begin_variation(self) -> chess.pgn.SkipType:
        return chess.pgn.SKIP

    def visit_result(self, result: str) -> None:
        if self.marker is None:
            self.marker = result

    def begin_parse_san(self, board: chess.Board, san: str) -> chess.pgn.SkipType | None:
        # nothing after the first error or the termination marker is parsed
        return chess.pgn.SKIP if self.error is not None or self.marker is not None else None

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        if not move:  # a null move ("--", "Z0"): analysis notation, not a game
            if self.error is None:
                self.error = Problem(self._line(), "invalid_move", f"ply {len(self.frm)}: null move")
            return
        self.frm.append(move.from_square)
        self.to.append(move.to_square)
        self.promo.append(move.promotion - 1 if move.promotion else 0)

    def handle_error(self, error: Exception) -> None:
        if self.error is not None:
            return
        reason = next((name for cls, name in _SAN_ERRORS if isinstance(error, cls)), "invalid_move")
        ply = len(self.frm)
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        self.error = Problem(self._line(), reason, f"ply {ply}: {text}")


    def result(self) -> None:
        return None


@dataclass
class ParsedGame:
    """An accepted game's start, moves and tags (before the numba replay)."""

    outcome: GameOutcome
    source: str
    start: chess.Board
    frm: list[int]
    to: list[int]
    promo: list[int]
    marker: str
    headers: dict[str, str]


def decode(data: bytes, first_line: int) -> tuple[str, Problem | None]:
    """Decode a game as UTF-8 (a leading BOM dropped), else as Latin-1 with a ``non_utf8``
    problem at the line of the first offending byte."""
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        byte = data[exc.start:exc.start + 1].hex()
        return data.decode("latin-1"), Problem(line, "non_utf8", f"byte 0x{byte} is not UTF-8")


def _tag_section(text: str, first_line: int) -> tuple[int, Problem | None]:
    """Offset where the move text starts (after the leading tag lines), and the first
    malformed tag line, if any."""
    offset = 0
    line = first_line
    while text.startswith("[", offset):
        end = text.find("\n", offset)
        end = len(text) if end < 0 else end + 1
        if not chess.pgn.TAG_REGEX.match(text[offset:end]):
            return offset, Problem(line, "bad_tag", f"malformed tag {text[offset:end].strip()[:60]!r}")
        offset, line = end, line + 1
    return offset, None


#: One token of move text. Everything python-chess understands is named; anything else is
#: ``bad`` (python-chess would silently skip it, so a corrupt move such as ``Ke9`` would pass
#: unnoticed and the rest of the game would be played from the wrong position).
_TOKEN = re.compile(r"""
     (?P<space>\s+)
    |(?P<comment>\{[^}]*\}?)
    |(?P<rest>;[^\n]*)
    |(?P<escape>^%[^\n]*)
    |(?P<result>1-0|0-1|1/2-1/2|\*)
    |(?P<move>(?:[NBKRQ]?[a-h]?[1-8]?[\-x]?[a-h][1-8](?:=?[NBRQKnbrqk])?|O-O-O|O-O|0-0-0|0-0
               |[PNBRQK]?@[a-h][1-8]|--|Z0|0000|@@@@)(?:[+\#]|e\.p\.)*[!?]*
               |\$\d+|[!?]{1,2})
    |(?P<number>\d+\.*)
    |(?P<open>\()
    |(?P<close>\))
    |(?P<bad>\S+)
    """, re.MULTILINE | re.VERBOSE)


def _scan_movetext(text: str, offset: int) -> tuple[int, int]:
    """Scan ``text[offset:]``: the offset of the first unreadable token before the game's
    termination marker, and of the first token after it (-1 when there is none)."""
    depth = 0
    ended = False
    for m in _TOKEN.finditer(text, offset):
        kind = m.lastgroup
        if kind in ("space", "comment", "rest", "escape"):
            continue
        if ended:
            return -1, m.start()
        if kind == "bad":
            return m.start(), -1
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(depth - 1, 0)
        elif kind == "result" and depth == 0:
            ended = True
    return -1, -1


def parse_game(chunk: GameChunk, config: IngestConfig) -> tuple[GameOutcome, ParsedGame | None]:
    """Read one game chunk: its verdict and, when it passed, its moves for the replay.

    A game is rejected for the first of: a malformed tag, a header reason (variant, set-up
    position, ratings), a SAN error, an unreadable token, a missing termination marker
    (``truncated`` when the file ends there), a result contradicting the Result tag, fewer
    plies than ``config.min_plies``. Text after the termination marker is reported as
    ``garbage`` and does not reject the game.
    """
    outcome = GameOutcome(chunk.game_id, chunk.line)
    text, problem = decode(chunk.data, chunk.line)
    if problem is not None:
        outcome.problems.append(problem)
        if config.non_utf8 == "skip":
            outcome.reason = "non_utf8"
            return outcome, None
    text = text.replace("\r\n", "\n")

    def line_of(offset: int) -> int:
        return chunk.line + text.count("\n", 0, offset)

    moves_at, problem = _tag_section(text, chunk.line)
    if problem is not None:
        outcome.problems.append(problem)
        outcome.reason = problem.reason
        return outcome, None
    handle = _LineCountingIO(text)
    visitor = GameVisitor(config, handle, chunk.line)
    chess.pgn.read_game(handle, Visitor=lambda: visitor)
    outcome.plies = len(visitor.frm)
    bad_at, after_at = _scan_movetext(text, moves_at)
    verdict = visitor.reject or visitor.error
    if verdict is None and bad_at >= 0:
        token = text[bad_at:bad_at + 20].split()[0]
        verdict = Problem(line_of(bad_at), "invalid_move", f"unreadable move text {token!r}")
    if verdict is None and visitor.marker is None:
        reason = "truncated" if chunk.at_eof else "missing_result"
        verdict = Problem(chunk.line, reason, "the move text has no result (termination marker)")
    if verdict is None:
        tag = visitor.headers.get("Result", "").strip()
        if tag in RESULTS and tag != visitor.marker:
            verdict = Problem(chunk.line, "result_mismatch", f"Result tag {tag} but the moves end with {visitor.marker}")
    if after_at >= 0 and (visitor.reject is not None or visitor.marker is not None):
        token = text[after_at:after_at + 40].split("\n")[0].strip()
        outcome.problems.append(Problem(line_of(after_at), "garbage", f"text after the game: {token!r}"))
    if verdict is not None:
        outcome.reason = verdict.reason
        if verdict.reason not in ("rating", "missing_elo"):
            outcome.problems.insert(0, verdict)
        return outcome, None
    if outcome.plies < config.min_plies:
        outcome.reason = "too_short"
        return outcome, None
    assert visitor.start is not None and visitor.marker is not None
    return outcome, ParsedGame(outcome, chunk.source, visitor.start, visitor.frm, visitor.to,
                               visitor.promo, visitor.marker, visitor.headers)


@dataclass
class IngestedBatch:
    """A batch of games as ingested: the outcome of every game, in order, and the rows of its kept positions
    (sorted by game and ply, not yet deduplicated) as plain columns: workers send these back
    and never touch polars (so that they can be forked safely); :meth:`frame` builds the
    polars frame in the parent."""

    outcomes: list[GameOutcome]
    games: dict[str, list[Any]]
    """Per accepted game: ``game_id``, ratings, result, tags, ``source``, ``source_line``."""
    rows: dict[str, Any]
    """Per kept position: ``game`` (index into ``games``), ``ply``, ``fen``, ``move``, ``stm``,
    ``n_legal``, ``zobrist``."""

    def frame(self) -> pl.DataFrame:
        """The rows with every column of :data:`tuner.ingest.schema.SCHEMA`, in file order."""
        meta_names = ("game_id", "white_elo", "black_elo", "result", "event", "date", "white", "black",
                      "source", "source_line")
        per_game = pl.DataFrame(self.games, schema={k: SCHEMA[k] for k in meta_names})
        row_names = ("ply", "fen", "move", "stm", "n_legal", "zobrist")
        rows = pl.DataFrame({k: self.rows[k] for k in row_names}, schema={k: SCHEMA[k] for k in row_names})
        meta = per_game[pl.Series(self.rows["game"], dtype=pl.Int64)]
        frame = pl.concat([rows, meta], how="horizontal").with_columns(
            mover_elo=pl.when(pl.col("stm") == 0).then(pl.col("white_elo")).otherwise(pl.col("black_elo")),
            score=pl.lit(None, dtype=SCHEMA["score"]),
        )
        return frame.select(list(SCHEMA))


@functools.cache
def _starting_board() -> np.ndarray:
    return from_chess(chess.Board())


def _start_board(game: ParsedGame) -> np.ndarray:
    return from_chess(game.start) if "FEN" in game.headers else _starting_board()


def _position_filters(games: list[ParsedGame], offsets: np.ndarray, config: IngestConfig) -> np.ndarray:
    """Per ply of the batch, whether the opening and rating filters keep its position; fills
    each game's ``outcome.dropped`` with the counts of those two filters."""
    want = np.zeros(int(offsets[-1]), dtype=np.bool_)
    for g, game in enumerate(games):
        white_elo = parse_elo(game.headers.get("WhiteElo"))
        black_elo = parse_elo(game.headers.get("BlackElo"))
        ply = np.arange(len(game.frm))
        mover_black = (ply & 1) ^ int(game.start.turn == chess.BLACK)
        passes = (config.side_passes(white_elo), config.side_passes(black_elo))
        book = ply < config.skip_plies
        want[offsets[g]:offsets[g + 1]] = ~book & np.where(mover_black == 1, passes[1], passes[0])
        dropped = dict.fromkeys(DROP_REASONS, 0)
        dropped["opening"] = int(book.sum())
        for side, elo in ((0, white_elo), (1, black_elo)):
            if not passes[side]:
                dropped[config.side_reason(elo)] += int(((mover_black == side) & ~book).sum())
        game.outcome.dropped = dropped
    return want


def process_batch(chunks: list[GameChunk], config: IngestConfig) -> IngestedBatch:
    """Parse, filter and replay a batch of games (the unit of work of a worker process)."""
    outcomes: list[GameOutcome] = []
    games: list[ParsedGame] = []
    for chunk in chunks:
        try:
            outcome, game = parse_game(chunk, config)
        except Exception as exc:  # noqa: BLE001  python-chess or a bug choking on odd input: skip the game
            outcome, game = GameOutcome(chunk.game_id, chunk.line, reason="parse_error"), None
            detail = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:120]
            outcome.problems.append(Problem(chunk.line, "parse_error", detail))
        outcomes.append(outcome)
        if game is not None:
            games.append(game)
    offsets = np.zeros(len(games) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(g.frm) for g in games])
    n_plies = int(offsets[-1])
    want = _position_filters(games, offsets, config)
    starts = np.stack([_start_board(g) for g in games]) if games else np.zeros((0, BOARD_WORDS), np.uint64)
    frm, to, promo = (np.fromiter((x for g in games for x in getattr(g, name)), dtype=np.int32, count=n_plies)
                      for name in ("frm", "to", "promo"))
    rep = replay(starts, offsets, frm, to, promo, want)

    keep = want.copy()
    for g in np.flatnonzero(rep.bad_ply >= 0).tolist():
        outcome = games[g].outcome
        outcome.reason = "replay_mismatch"
        outcome.problems.insert(0, Problem(outcome.line, "replay_mismatch",
                                           f"ply {int(rep.bad_ply[g])}: the core found no such legal move"))
        outcome.dropped = {}
        keep[offsets[g]:offsets[g + 1]] = False
    game_of_ply = np.repeat(np.arange(len(games)), np.diff(offsets))
    if config.skip_single_legal:
        single = keep & (rep.n_legal == 1)
        keep &= ~single
        for g, count in enumerate(np.bincount(game_of_ply[single], minlength=len(games)).tolist()):
            if games[g].outcome.reason is None:
                games[g].outcome.dropped["single_legal"] = count
    positions = np.flatnonzero(keep)
    game_index = game_of_ply[positions]
    for g, count in enumerate(np.bincount(game_index, minlength=len(games)).tolist()):
        games[g].outcome.positions = count
    fens = rep.fens
    texts = uci_texts()
    rows = {
        "game": game_index.astype(np.int64),
        "ply": (positions - offsets[game_index]).astype(np.int32),
        "fen": [fens[p] for p in positions.tolist()],
        "move": [texts[make_uci_key(f, t, k)]
                 for f, t, k in zip(frm[positions].tolist(), to[positions].tolist(), promo[positions].tolist())],
        "stm": rep.stm[positions],
        "n_legal": rep.n_legal[positions],
        "zobrist": rep.keys[positions],
    }
    meta: dict[str, list[Any]] = {
        "game_id": [g.outcome.game_id for g in games],
        "white_elo": [parse_elo(g.headers.get("WhiteElo")) for g in games],
        "black_elo": [parse_elo(g.headers.get("BlackElo")) for g in games],
        "result": [g.marker for g in games],
        "event": [g.headers.get("Event") for g in games],
        "date": [g.headers.get("Date") for g in games],
        "white": [g.headers.get("White") for g in games],
        "black": [g.headers.get("Black") for g in games],
        "source": [g.source for g in games],
        "source_line": [g.outcome.line for g in games],
    }
    return IngestedBatch(outcomes, meta, rows)
