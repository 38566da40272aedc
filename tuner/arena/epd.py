"""EPD test suites: parse them, let the engine answer each position, score and summarise.

Reading
-------
:func:`parse_epd` reads one position per line with python-chess
(:meth:`chess.Board.from_epd`). Blank lines and lines starting with ``#`` are skipped
silently; every other line that cannot be used becomes an :class:`EpdError`
(``file:line: reason``) in the returned problem list and is skipped. The operations used:

* ``bm`` (best moves) and ``am`` (moves to avoid): space-separated moves in SAN or UCI.
  python-chess parses both with :meth:`chess.Board.parse_san`, which also accepts fully
  specified coordinates (``e2e4``, ``e7e8q``, castling as ``e1g1``), so either notation works;
  the null move (``0000``, ``--``) is refused.
* ``c8``/``c9``: partial credit as the Strategic Test Suite (STS) writes it, ``c8`` the points
  and ``c9`` the moves in the same order (``c8 "10 5 3"; c9 "e4e5 d4d5 g1f3"``). ``c9`` may use
  UCI or SAN; when ``c9`` is absent, ``c7`` (where STS puts the same moves in SAN) is used.
  Points are integers from 0 to 10 and the best credited move must get 10.
* ``id``: the position's name; optional (``""`` when absent). Its *theme* is its prefix up to
  the first dot or digit (``tactic.fork.01`` -> ``tactic``, ``WAC.001`` -> ``WAC``), after
  dropping a leading tag with parentheses as STS writes it (``STS(v1.0) Undermine.001`` ->
  ``Undermine``).

python-chess parses an unquoted operand that is not a number as a move, so string operands
(``id``, ``c8``, ``c9``) must be quoted: ``id tactic.01`` is reported as an illegal move.
Positions must be valid for the engine (:func:`search.core.validate.check_board`) and have a legal
move.

Scoring (:func:`score_move`), at most :data:`MAX_POINTS` = 10 points per position
-----------------------------------------------------------------------------------
* a position with ``c8``/``c9`` gives the points ``c8`` lists for the engine's move if ``c9``
  lists it, else 0 (``bm``/``am`` are then ignored for scoring);
* otherwise a position with ``bm`` gives 10 if the move is one of ``bm`` (and, if ``am`` is
  present too, not one of ``am``), else 0;
* an ``am``-only position gives 10 if the move is not one of ``am``, else 0.

A position is *solved* when the move gets the maximum, 10 points.

Intervals (:func:`summarise`), 95 %
-----------------------------------
* solved fraction: the Wilson score interval (Wilson 1927; z = 1.96), defined for any number
  of positions >= 1;
* mean points: the normal interval mean +- 1.96 s / sqrt(n) from the sample standard deviation
  ``s`` (n - 1 in the denominator), clipped to [0, 10]; ``None`` for fewer than two positions.

Answering
---------
:func:`run_suite` asks the engine of ``tuner uci`` (:class:`search.tree.iterative.Searcher`: iterative
deepening with its move-ordering table, as many plies / nodes / milliseconds as the limits
say; or, for a :class:`tuner.arena.players.PlsPlayer`, the probability-limited
:class:`search.pls.pls.PlsSearcher`, ``depth`` counting its iterations) for each position, with the table cleared before each one (as after ``ucinewgame``), so
answers do not depend on the order or on how positions are split between worker processes.
Positions run in a process pool (spawned workers, which load the numba kernels from the disk
cache), in contiguous chunks; results come back in file order.
"""

from __future__ import annotations

import codecs
import concurrent.futures
import math
import multiprocessing
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import numpy as np

from search.core.convert import from_fen, move_to_uci
from search.core.input_limits import InputLimitError, read_capped
from tuner.errors import TunerError
from search.tree.iterative import MAX_DEPTH, Iteration, TimePlan, tt_bits_for
from tuner.arena.players import Engine, Searchable, checked_player, load_kernels, new_engine
from search.core.validate import check_board
from tuner.limits import SearchLimits
from tuner.limits import DEFAULT_HASH_MB

Uci = str
"""A move in UCI notation (castling as the king's two-square move)."""

#: points of a fully solved position
MAX_POINTS = 10
#: the normal quantile of a two-sided 95 % interval
Z95 = 1.959963984540054
#: the suite that ships with the repository
DEFAULT_SUITE = Path(__file__).resolve().parents[2] / "datasets" / "epd" / "movetuner.epd"

_THEME_CUT = re.compile(r"[.0-9]")
_STS_TAG = re.compile(r"^\S*\([^)]*\)\s+")


#: largest EPD file read (the shipped suite is 6 kB; STS's 1,500 positions about 200 kB)
MAX_EPD_BYTES = 64 << 20


class EpdError(ValueError):
    """A line of an EPD file that cannot be used: ``file:line: reason`` on one line."""

    def __init__(self, where: str, line: int, reason: str) -> None:
        self.where = where
        self.line = line
        self.reason = " ".join(reason.split())
        super().__init__(f"{where}:{line}: {self.reason}")


@dataclass(frozen=True)
class EpdPosition:
    """One usable EPD line.

    ``bm``/``am``: best and avoided moves in UCI; ``credit``: UCI move -> points (0..10) from
    ``c8``/``c9``, empty when the line has none; ``line``: 1-based line number in its file.
    """

    id: str
    fen: str
    board: chess.Board
    bm: tuple[Uci, ...]
    am: tuple[Uci, ...]
    credit: dict[Uci, int]
    line: int

    @property
    def theme(self) -> str:
        return theme_of(self.id)


def theme_of(epd_id: str) -> str:
    """The id's prefix up to its first dot or digit (see the module docstring); ``(no id)``
    for an empty id."""
    text = _STS_TAG.sub("", epd_id.strip())
    prefix = _THEME_CUT.split(text, maxsplit=1)[0].strip(" -_:/(")
    return prefix or ("(no id)" if not epd_id.strip() else epd_id.strip())


# ---------------------------------------------------------------- parsing


def _moves(board: chess.Board, value: object, opcode: str) -> tuple[Uci, ...]:
    """UCI moves of an operand python-chess returned: a move, a list of moves, or a string of
    SAN/UCI tokens (a quoted operand). Raises ``ValueError`` naming the opcode."""
    if isinstance(value, chess.Move):
        moves = [value]
    elif isinstance(value, list):
        moves = list(value)
    elif isinstance(value, str):
        moves = []
        for token in value.replace(",", " ").split():
            try:
                moves.append(board.parse_san(token))
            except ValueError:
                raise ValueError(f"{opcode}: {token[:20]!r} is not a legal move (SAN or UCI)") from None
    else:
        raise ValueError(f"{opcode}: expected moves, got {value!r}"[:120])
    for move in moves:
        if not move:
            raise ValueError(f"{opcode}: the null move is not an answer")
    return tuple(move.uci() for move in moves)


def _points(value: object) -> list[int]:
    """The ``c8`` points: a quoted string of integers, or a single unquoted integer."""
    if isinstance(value, int):
        tokens = [str(value)]
    elif isinstance(value, str):
        tokens = value.replace(",", " ").split()
    else:
        raise ValueError(f"c8: expected integer points, got {value!r}"[:120])
    points = []
    for token in tokens:
        try:
            p = int(token)
        except ValueError:
            raise ValueError(f"c8: {token[:20]!r} is not an integer") from None
        if not 0 <= p <= MAX_POINTS:
            raise ValueError(f"c8: points must be between 0 and {MAX_POINTS}, not {p}")
        points.append(p)
    return points


def _credit(board: chess.Board, ops: dict[str, Any]) -> dict[Uci, int]:
    has_points = "c8" in ops
    moves_op = "c9" if "c9" in ops else ("c7" if "c7" in ops and has_points else None)
    if not has_points and moves_op is None:
        return {}
    if not has_points:
        raise ValueError("c9 without c8: the moves have no points")
    if moves_op is None:
        raise ValueError("c8 without c9 (or c7): the points have no moves")
    points = _points(ops["c8"])
    moves = _moves(board, ops[moves_op], moves_op)
    if len(points) != len(moves):
        raise ValueError(f"c8 has {len(points)} points but {moves_op} has {len(moves)} moves")
    if not moves:
        raise ValueError("c8 and c9 are empty")
    if len(set(moves)) != len(moves):
        raise ValueError(f"{moves_op} lists a move twice")
    if max(points) != MAX_POINTS:
        raise ValueError(f"c8: the best move must get {MAX_POINTS} points, not {max(points)}")
    return dict(zip(moves, points))


def parse_epd_line(text: str, where: str = "<epd>", line: int = 1) -> EpdPosition:
    """One EPD line (not blank, not a comment) to a position; :class:`EpdError` otherwise."""
    try:
        board, ops = chess.Board.from_epd(text.strip())
    except (ValueError, AssertionError, IndexError) as exc:  # python-chess's parser on bad input
        raise EpdError(where, line, f"cannot parse: {exc}") from None
    try:
        check_board(from_fen(board.fen()))
        if not board.is_valid():
            raise ValueError(f"invalid position ({board.status()!r})")
        if not any(board.legal_moves):
            raise ValueError("the side to move has no legal move (checkmate or stalemate)")
        bm = _moves(board, ops["bm"], "bm") if "bm" in ops else ()
        am = _moves(board, ops["am"], "am") if "am" in ops else ()
        if "bm" in ops and not bm:
            raise ValueError("bm without a move")
        if "am" in ops and not am:
            raise ValueError("am without a move")
        if set(bm) & set(am):
            raise ValueError(f"{sorted(set(bm) & set(am))[0]} is both in bm and am")
        credit = _credit(board, ops)
        if not bm and not am and not credit:
            raise ValueError("nothing to score: no bm, am or c8/c9")
    except ValueError as exc:
        raise EpdError(where, line, str(exc)) from None
    raw_id = ops.get("id")
    epd_id = "" if raw_id is None else (raw_id.uci() if isinstance(raw_id, chess.Move) else str(raw_id))
    return EpdPosition(epd_id, board.fen(), board, bm, am, credit, line)


def parse_epd_text(text: str, where: str = "<epd>") -> tuple[list[EpdPosition], list[EpdError]]:
    """Every line of ``text``: the usable positions and the problems of the others, both in
    line order. Blank lines and ``#`` comments are neither. Lines end at ``\n`` (``\r\n`` too)
    only: a form feed or U+2028 inside a line does not end it and shift the next lines' numbers,
    as ``str.splitlines`` would."""
    positions: list[EpdPosition] = []
    problems: list[EpdError] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            positions.append(parse_epd_line(stripped, where, number))
        except EpdError as exc:
            problems.append(exc)
    return positions, problems


#: byte-order marks of the encodings decoded besides UTF-8, longest first (the UTF-32 LE mark
#: starts with the UTF-16 LE one): those ``tuner ingest`` decodes (:mod:`tuner.ingest.sources`)
_OTHER_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_epd(data: bytes, where: str) -> str:
    """The text of an EPD file's bytes as ``tuner ingest`` reads text: UTF-16 or UTF-32 with a
    byte-order mark decoded, else UTF-8 (a UTF-8 mark dropped; bad bytes replaced, each line
    then reported by the parser). UTF-16 without a mark (NUL bytes) is a one-line
    :class:`TunerError` naming ``where`` and the line, as ingest's."""
    for bom, encoding in _OTHER_BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise TunerError(f"{where}:{line}: NUL bytes: UTF-16 text without a byte-order mark? Convert it to UTF-8 "
                         "(or add the mark)")
    return data.decode("utf-8-sig", errors="replace")


def parse_epd(path: str | Path) -> tuple[list[EpdPosition], list[EpdError]]:
    """Read an EPD file (UTF-8, or UTF-16/32 with a byte-order mark: :func:`decode_epd`):
    ``(positions, problems)``, see :func:`parse_epd_text`.

    Raises ``OSError`` when the file cannot be read, :class:`TunerError` when it is larger
    than :data:`MAX_EPD_BYTES` (``/dev/zero`` given as a suite) or UTF-16 without a mark.
    """
    path = Path(path)
    try:
        data = read_capped(path, MAX_EPD_BYTES)
    except InputLimitError as exc:
        raise TunerError(str(exc)) from None
    return parse_epd_text(decode_epd(data, str(path)), str(path))


# ---------------------------------------------------------------- scoring


def score_move(position: EpdPosition, uci: Uci) -> int:
    """Points (0..10) of the move ``uci`` in ``position``; the rule is in the module docstring."""
    if position.credit:
        return position.credit.get(uci, 0)
    if position.bm:
        return MAX_POINTS if uci in position.bm and uci not in position.am else 0
    return 0 if uci in position.am else MAX_POINTS


# ---------------------------------------------------------------- engine


@dataclass(frozen=True)
class Answer:
    """The engine's answer to one position: its move (UCI), the depth of the last completed
    iteration, its score (``score_cp``: centipawns, side to move's view, ``None`` for a mate
    score; ``mate``: moves to mate as UCI reports them, negative when mated, else ``None``),
    the nodes searched and the seconds taken."""

    move: Uci
    depth: int
    score_cp: int | None
    mate: int | None
    nodes: int
    seconds: float


def _tt_bits() -> int:
    """The table size ``tuner uci`` uses by default (its ``Hash`` option)."""
    return tt_bits_for(DEFAULT_HASH_MB)


def engine_answer(searcher: Engine, fen: str, limits: SearchLimits) -> Answer:
    """The engine's move in ``fen`` under ``limits``: the one call into :mod:`tuner.uci`.

    As ``tuner uci`` after ``ucinewgame`` / ``position fen`` / ``go``: the table is cleared, the
    position has no history, ``movetime`` becomes a fixed time plan (:meth:`TimePlan.fixed`:
    deepen until then; no move overhead).
    """
    board = from_fen(fen)
    searcher.clear()
    searcher.rearm()
    plan = None
    if limits.movetime is not None:
        seconds = limits.movetime / 1000
        plan = TimePlan.fixed(seconds)
    start = time.perf_counter()
    it: Iteration | None = searcher.think(board, [], max_depth=limits.depth or MAX_DEPTH,
                                          node_limit=limits.nodes, plan=plan)
    seconds = time.perf_counter() - start
    if it is None or not it.pv:  # cannot happen: the parser keeps only positions with a legal move
        raise RuntimeError(f"the engine returned no move in {fen}")
    mate = it.mate_moves
    return Answer(move_to_uci(it.pv[0]), it.depth, it.score_cp if mate is None else None, mate, it.total_nodes,
                  seconds)


def _new_searcher(player: Searchable) -> Engine:
    """An engine with its kernel loaded (as ``tuner uci`` warms up before the first ``go``), so
    that loading it from numba's cache does not eat the first position's ``movetime``."""
    load_kernels(player)
    return new_engine(player, _tt_bits())


def _answer_chunk(weights: Searchable, limits: SearchLimits, fens: Sequence[str]) -> list[Answer]:
    """Answers for consecutive positions with one engine (a worker's task)."""
    searcher = _new_searcher(weights)
    return [engine_answer(searcher, fen, limits) for fen in fens]


@dataclass(frozen=True)
class PositionResult:
    """A position, the engine's answer and its points."""

    position: EpdPosition
    answer: Answer
    points: int

    @property
    def solved(self) -> bool:
        return self.points == MAX_POINTS

    def to_json(self) -> dict[str, Any]:
        p, a = self.position, self.answer
        return {"id": p.id, "line": p.line, "theme": p.theme, "fen": p.fen, "move": a.move,
                "san": p.board.san(chess.Move.from_uci(a.move)), "points": self.points, "solved": self.solved,
                "bm": list(p.bm), "am": list(p.am), "credit": dict(p.credit), "depth": a.depth,
                "score_cp": a.score_cp, "mate": a.mate, "nodes": a.nodes, "seconds": round(a.seconds, 4)}


def process_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of ``workers`` processes for :func:`run_suite`, to share between weight sets (each
    worker loads the kernels once). Spawned, as in :mod:`tuner.arena.match`: workers start clean (no
    inherited numba threads or locks) and load the kernels from numba's on-disk cache."""
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def _chunks(n: int, workers: int) -> list[range]:
    """Contiguous index ranges: about four per worker, so that a slow chunk does not leave the
    others idle for long."""
    size = max(1, math.ceil(n / (4 * workers)))
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


def run_suite(positions: Sequence[EpdPosition], weights: Searchable, limits: SearchLimits, workers: int = 1, *,
              pool: concurrent.futures.Executor | None = None,
              progress: Callable[[int], object] | None = None,
              on_result: Callable[[PositionResult], object] | None = None) -> list[PositionResult]:
    """The engine's answer to every position with ``weights`` (an evaluator, or a
    :class:`~tuner.arena.players.PlsPlayer`), scored, in the order given.

    ``workers`` processes (1: in this process), from ``pool`` when given (see
    :func:`process_pool`), else from a pool made for this call; ``progress`` is called with the
    number of positions just answered, ``on_result`` with each scored answer as it comes (in the
    order answered, e.g. for a running count of solved positions). Raises ``ValueError`` for invalid limits, weights or
    workers.
    """
    limits.validate()
    w = checked_player(weights)
    if workers < 1:
        raise ValueError(f"workers must be positive, not {workers}")
    fens = [p.fen for p in positions]
    answers: list[Answer | None] = [None] * len(fens)

    def answered(i: int, answer: Answer) -> None:
        answers[i] = answer
        if on_result is not None:
            on_result(PositionResult(positions[i], answer, score_move(positions[i], answer.move)))

    chunks = _chunks(len(fens), workers)
    if workers == 1 or len(chunks) <= 1:
        searcher = _new_searcher(w)
        for i, fen in enumerate(fens):
            answered(i, engine_answer(searcher, fen, limits))
            if progress:
                progress(1)
    else:
        executor = pool if pool is not None else process_pool(min(workers, len(chunks)))
        try:
            futures = {executor.submit(_answer_chunk, w, limits, [fens[i] for i in chunk]): chunk for chunk in chunks}
            for fut in concurrent.futures.as_completed(futures):
                chunk = futures[fut]
                for i, answer in zip(chunk, fut.result()):
                    answered(i, answer)
                if progress:
                    progress(len(chunk))
        finally:
            if pool is None:
                executor.shutdown(cancel_futures=True)
    return [PositionResult(p, a, score_move(p, a.move)) for p, a in zip(positions, answers) if a is not None]


def running_line(name: str, done: Sequence[PositionResult], total: int, seconds: float) -> str:
    """A suite's running line in a log (:class:`tuner.progress.RunningLog`): positions answered
    out of ``total``, how many of them are solved, and their points."""
    solved = sum(r.solved for r in done)
    points = sum(r.points for r in done)
    return (f"epd {name}: {len(done)}/{total} positions, solved {solved}/{len(done)}, "
            f"points {points}/{MAX_POINTS * len(done)}, {seconds:.0f} s")


# ---------------------------------------------------------------- statistics


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of a binomial proportion; ``None`` for ``n == 0``."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float] | np.ndarray, low: float = 0.0, high: float = MAX_POINTS,
                  z: float = Z95) -> tuple[float, float] | None:
    """Normal interval of the mean from the sample standard deviation, clipped to
    ``[low, high]``; ``None`` for fewer than two values. (Also the move-match's interval, on
    the per-position credits in [0, 1]: :mod:`tuner.arena.movematch`.)"""
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    if n < 2:
        return None
    mean = float(v.mean())
    half = z * float(v.std(ddof=1)) / math.sqrt(n)
    return max(float(low), mean - half), min(float(high), mean + half)


def _figures(results: Sequence[PositionResult]) -> dict[str, Any]:
    n = len(results)
    solved = sum(r.solved for r in results)
    points = [r.points for r in results]
    wilson = wilson_interval(solved, n)
    normal = mean_interval(points)
    return {
        "positions": n,
        "solved": solved,
        "solved_fraction": solved / n if n else None,
        "solved_ci95": [round(x, 4) for x in wilson] if wilson else None,
        "points": sum(points),
        "max_points": MAX_POINTS * n,
        "mean_points": sum(points) / n if n else None,
        "mean_points_ci95": [round(x, 4) for x in normal] if normal else None,
    }


def summarise(results: Sequence[PositionResult]) -> dict[str, Any]:
    """Solved count and points over all positions and per theme (themes in order of first
    appearance), with 95 % intervals (Wilson for the solved fraction, normal from the sample
    standard deviation for the mean points)."""
    themes: dict[str, list[PositionResult]] = {}
    for r in results:
        themes.setdefault(r.position.theme, []).append(r)
    return {**_figures(results), "themes": {t: _figures(rs) for t, rs in themes.items()}}
