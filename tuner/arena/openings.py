"""A large suite of balanced opening positions, built from public games or a Polyglot book
(``tuner bench openings``; issue 59: openings nobody tuned on, for confirmation matches).

Candidates:

* ``--from-pgn FILE...``: every game's mainline from the initial position (games with a
  ``FEN`` tag or another ``Variant`` are skipped at their headers, as are games whose first
  ``max_plies`` moves do not read); each game gives its position after a ply drawn at random
  (seeded) from ``min_plies..max_plies``, and, if that one is refused, the other plies of
  that range in a seeded order; at most one position per game, so no game's line dominates.
* ``--from-book BOOK.bin``: random walks through a Polyglot book (:mod:`chess.polyglot`),
  each move drawn by the book's weights, to a ply drawn from ``min_plies..max_plies``; a walk
  that leaves the book earlier is dropped.

A candidate is kept when it is not a position seen before (the first four EPD fields) nor one
of ``exclude`` (by default the shipped quick set, ``datasets/openings/openings.epd``), the game
is not over, material is level (pawn 1, knight 3, bishop 3, rook 5, queen 9, as
``bench/verify_openings.py`` checks the quick set), and the repository's own search
(:func:`search.tree.search_api.search`: alpha-beta to ``depth`` plies plus quiescence, the
``classic`` weights by default) scores it within ``margin`` centipawns of 0 for the side to
move. Candidates are tried in a seeded order until ``count`` are kept.

Output: the quick set's format (EPD lines with an ``id``, read by ``--openings``), each
line's ``id`` the moves that lead to it in SAN with move numbers (so every line can be
replayed and checked), ``ce`` the score in centipawns (side to move) and ``acd`` the depth;
comment lines at the top say how the file was made.
"""

from __future__ import annotations

import hashlib
import io
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot

from search.core.convert import from_fen
from search.core.input_limits import open_regular
from search.evaluation.evaluators import Evaluator
from search.tree.search_api import search
from tuner.config import help_field

#: material values of the level-material check, pawn units (as bench/verify_openings.py)
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}


class OpeningSourceError(ValueError):
    """A games file or book that cannot be read; the message is one line naming the file."""


@dataclass(frozen=True, kw_only=True)
class SuiteConfig:
    """Settings of ``tuner bench openings``."""

    count: int = help_field(3000, "positions to keep")
    min_plies: int = help_field(6, "fewest plies from the initial position")
    max_plies: int = help_field(12, "most plies from the initial position")
    margin: int = help_field(60, "largest absolute score kept, centipawns (side to move)")
    depth: int = help_field(4, "depth of the balance search, plies (plus quiescence)")
    weights: str = help_field("classic", "weights of the balance search (a built-in set or weights file)",
                              metavar="W")
    seed: int = help_field(0, "seed of the plies drawn and of the order candidates are tried in")

    def validate(self) -> None:
        if self.count < 1:
            raise ValueError(f"count must be positive, not {self.count}")
        if not 1 <= self.min_plies <= self.max_plies <= 200:
            raise ValueError(f"plies must satisfy 1 <= min_plies <= max_plies <= 200, not "
                             f"{self.min_plies}..{self.max_plies}")
        if self.margin < 0:
            raise ValueError(f"margin must not be negative, not {self.margin}")
        if not 1 <= self.depth <= 8:
            raise ValueError(f"depth must be 1 to 8, not {self.depth}")


@dataclass(frozen=True)
class Candidate:
    """A line from the initial position (``moves``) and where it came from (``source``,
    e.g. ``carlsen.pgn:game 12`` or ``book walk 7``)."""

    moves: tuple[chess.Move, ...]
    source: str


@dataclass(frozen=True)
class SuitePosition:
    """A kept position: its line, the board it leads to and its score (cp, side to move)."""

    candidate: Candidate
    board: chess.Board
    score_cp: float

    def epd_line(self, depth: int) -> str:
        """The file line: the position, ``id`` the SAN line, ``ce`` the score, ``acd`` the depth."""
        line = chess.Board().variation_san(list(self.candidate.moves))
        return self.board.epd(ce=int(round(self.score_cp)), acd=depth, id=line)


def material(board: chess.Board, color: chess.Color) -> int:
    """Sum of :data:`VALUES` over ``color``'s pieces, pawn units."""
    return sum(VALUES[p.piece_type] for p in board.piece_map().values() if p.color == color)


class _OpeningLine(chess.pgn.BaseVisitor["tuple[dict[str, str], list[chess.Move], bool]"]):
    """Reads a game's headers and first ``plies`` mainline moves; the rest of the move text is
    tokenised but not parsed (null moves stand in), and a game with a ``FEN`` tag or another
    variant is skipped at its headers."""

    def __init__(self, plies: int) -> None:
        self.plies = plies
        self.headers: dict[str, str] = {}
        self.moves: list[chess.Move] = []
        self.usable = True

    def begin_game(self) -> None:
        self.headers, self.moves, self.usable = {}, [], True

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self.headers[tagname] = tagvalue

    def end_headers(self) -> chess.pgn.SkipType | None:
        variant = self.headers.get("Variant", "standard").lower()
        if "FEN" in self.headers or variant not in ("standard", "chess", "normal", ""):
            self.usable = False
            return chess.pgn.SKIP
        return None

    def begin_variation(self) -> chess.pgn.SkipType | None:
        return chess.pgn.SKIP

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        if not self.usable or len(board.move_stack) >= self.plies:
            return chess.Move.null()
        return board.parse_san(san)

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        if self.usable and len(self.moves) < self.plies and move:
            self.moves.append(move)

    def handle_error(self, error: Exception) -> None:
        self.usable = False

    def result(self) -> tuple[dict[str, str], list[chess.Move], bool]:
        return self.headers, self.moves, self.usable


def pgn_lines(path: str | Path, max_plies: int) -> Iterator[tuple[int, list[chess.Move]]]:
    """(game number from 1, its first ``max_plies`` moves) of every usable game of a PGN file
    (see :class:`_OpeningLine`); :class:`OpeningSourceError` (one line) when the file cannot be
    opened."""
    path = Path(path)
    try:  # a FIFO or a device is refused, never waited on or read without end
        handle = io.TextIOWrapper(open_regular(path), encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise OpeningSourceError(f"{path}: no such games file") from None
    except OSError as exc:
        raise OpeningSourceError(f"{path}: cannot read games file ({exc.strerror or exc.__class__.__name__})") from None
    with handle:
        number = 0
        while True:
            try:
                read = chess.pgn.read_game(handle, Visitor=lambda: _OpeningLine(max_plies))
            except (UnicodeDecodeError, OSError) as exc:
                raise OpeningSourceError(f"{path}: cannot read games file, game {number + 1} "
                                         f"({exc.__class__.__name__})") from None
            if read is None:
                return
            number += 1
            _, moves, usable = read
            if usable:
                yield number, moves


def pgn_candidates(paths: Sequence[str | Path], config: SuiteConfig,
                   rng: random.Random) -> Iterator[list[Candidate]]:
    """For every usable game of ``paths`` (in file order) reaching ``min_plies``, its
    candidates in the order they are tried: a ply drawn from the range first, then the others
    in a random order (see the module docstring)."""
    for path in paths:
        name = Path(path).name
        for number, moves in pgn_lines(path, config.max_plies):
            plies = list(range(config.min_plies, min(config.max_plies, len(moves)) + 1))
            if not plies:
                continue
            rng.shuffle(plies)
            yield [Candidate(tuple(moves[:n]), f"{name}:game {number}") for n in plies]


def book_candidates(path: str | Path, config: SuiteConfig, rng: random.Random, walks: int) -> list[list[Candidate]]:
    """``walks`` random walks through the Polyglot book at ``path``, each to a ply drawn from
    the range (moves drawn by the book's weights); walks that leave the book are dropped.
    :class:`OpeningSourceError` (one line) for a file that cannot be read as a book."""
    path = Path(path)
    out: list[list[Candidate]] = []
    try:
        open_regular(path).close()  # a FIFO or a device is refused, never waited on
        with chess.polyglot.open_reader(path) as book:
            for walk in range(walks):
                target = rng.randint(config.min_plies, config.max_plies)
                board = chess.Board()
                while len(board.move_stack) < target:
                    try:
                        entry = book.weighted_choice(board, random=rng)
                    except IndexError:
                        break
                    if entry.move not in board.legal_moves:  # a corrupt entry: leave the walk
                        break
                    board.push(entry.move)
                if len(board.move_stack) == target:
                    out.append([Candidate(tuple(board.move_stack), f"{path.name}:walk {walk + 1}")])
    except FileNotFoundError:
        raise OpeningSourceError(f"{path}: no such Polyglot book") from None
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc.__class__.__name__
        raise OpeningSourceError(f"{path}: cannot read as a Polyglot book ({why})") from None
    return out


def position_key(board: chess.Board) -> str:
    """What makes two positions the same: the first four EPD fields."""
    return board.epd()


def build_suite(groups: Iterable[Sequence[Candidate]], config: SuiteConfig, weights: Evaluator, *,
                exclude: Iterable[str] = (), rng: random.Random | None = None,
                progress: Callable[[int, int], object] | None = None) -> list[SuitePosition]:
    """Keep at most one candidate of each group (a game's plies, or a book walk), trying the
    groups in a seeded random order and each group's candidates in order, until ``config.count``
    are kept (module docstring). ``exclude``: position keys (:func:`position_key`) never kept.
    ``progress(kept, tried)`` is called after each group."""
    config.validate()
    rng = rng if rng is not None else random.Random(config.seed)
    order = list(groups)
    rng.shuffle(order)
    seen = set(exclude)
    kept: list[SuitePosition] = []
    tried = 0
    for group in order:
        if len(kept) >= config.count:
            break
        tried += 1
        for candidate in group:
            board = chess.Board()
            for move in candidate.moves:
                board.push(move)
            key = position_key(board)
            if key in seen:
                continue
            seen.add(key)
            if board.is_game_over() or material(board, chess.WHITE) != material(board, chess.BLACK):
                continue
            score = search(from_fen(f"{key} 0 1"), config.depth, weights).score_cp
            if abs(score) <= config.margin:
                kept.append(SuitePosition(candidate, board, float(score)))
                break
        if progress is not None:
            progress(len(kept), tried)
    return kept


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, hex (the header records each source's)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def suite_text(positions: Sequence[SuitePosition], config: SuiteConfig, sources: Sequence[str | Path],
               command: str) -> str:
    """The suite file: header comments (what it is, how it was made, its sources with their
    sha256), then one EPD line per position (:meth:`SuitePosition.epd_line`)."""
    head = [
        f"# movetuner match openings: {len(positions)} balanced positions after {config.min_plies} to "
        f"{config.max_plies} plies, level material,",
        f"# each scored within {config.margin} cp of 0 (side to move) by the repository's search with the "
        f"'{config.weights}' weights at depth {config.depth}",
        "# (plus quiescence); no two are the same position, none is in the shipped quick set unless asked.",
        "# id: the moves from the initial position; ce: the score (cp, side to move); acd: the depth.",
        f"# made by: {command}",
        f"# seed {config.seed}; sources:",
        *(f"#   {Path(s).name} sha256 {file_sha256(s)}" for s in sources),
    ]
    return "\n".join(head + [p.epd_line(config.depth) for p in positions]) + "\n"


def verify_suite(path: str | Path, config: SuiteConfig, weights: Evaluator, *, exclude: Iterable[str] = (),
                 sample: int | None = None, seed: int = 0) -> tuple[int, list[str]]:
    """Re-check a suite file written by :func:`suite_text` against ``config`` (its plies,
    margin and depth): every position line (or a seeded ``sample`` of them) must be reached by
    the moves of its ``id`` from the initial position, in ``min_plies..max_plies`` plies, with
    level material, not over, none of ``exclude`` and no position twice (checked on all lines),
    and the search must give it ``ce`` (rounded) within ``margin``. Returns (positions in the
    file, failures as ``line N: reason``)."""
    lines = [(n, x.strip()) for n, x in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1)
             if x.strip() and not x.lstrip().startswith("#")]
    failures: list[str] = []
    seen: dict[str, int] = {}
    excluded = set(exclude)
    parsed: list[tuple[int, chess.Board, dict[str, object]]] = []
    for n, line in lines:
        board = chess.Board()
        try:
            ops: dict[str, object] = dict(board.set_epd(line))
        except ValueError as exc:
            failures.append(f"line {n}: not EPD ({exc})")
            continue
        key = position_key(board)
        if key in seen:
            failures.append(f"line {n}: same position as line {seen[key]}")
        seen.setdefault(key, n)
        if key in excluded:
            failures.append(f"line {n}: a position of the excluded set")
        parsed.append((n, board, ops))
    if sample is not None and sample < len(parsed):
        parsed = sorted(random.Random(seed).sample(parsed, sample), key=lambda t: t[0])
    for n, board, ops in parsed:
        played = chess.Board()
        try:
            for token in str(ops.get("id", "")).split():
                if not token.endswith("."):
                    played.push_san(token)
        except ValueError as exc:
            failures.append(f"line {n}: id moves do not play ({exc})")
            continue
        plies = len(played.move_stack)
        if position_key(played) != position_key(board):
            failures.append(f"line {n}: the id's moves lead to {played.epd()}")
        if not config.min_plies <= plies <= config.max_plies:
            failures.append(f"line {n}: {plies} plies, not {config.min_plies}..{config.max_plies}")
        if board.is_game_over() or material(board, chess.WHITE) != material(board, chess.BLACK):
            failures.append(f"line {n}: over, or material not level")
        cp = search(from_fen(f"{position_key(board)} 0 1"), config.depth, weights).score_cp
        if abs(cp) > config.margin or ops.get("ce") != int(round(cp)):
            failures.append(f"line {n}: search gives {cp:+.1f} cp, the file ce {ops.get('ce')}, margin {config.margin}")
    return len(lines), failures


__all__ = ["Candidate", "OpeningSourceError", "SuiteConfig", "SuitePosition", "book_candidates", "build_suite",
           "material", "pgn_candidates", "pgn_lines", "position_key", "suite_text", "verify_suite"]
