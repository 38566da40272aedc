"""Engine-vs-engine matches between two weight sets, with the numba search on both sides.

Each opening position is played twice, once with each engine as White (a *game pair*). Both
engines use the same search (:class:`search.tree.iterative.Searcher`: iterative deepening to a fixed
``depth``, until a ``nodes`` budget per move is spent, for ``movetime`` milliseconds a move, or
on a clock, ``tc`` = BASE+INC seconds per side) and differ only in their weights. On a clock
each engine plans a move from its time left and the game's ply as ``tuner uci`` does
(:meth:`search.tree.iterative.ClockPlanned.clock_plan`, keeping back :data:`TC_OVERHEAD`; an external
engine gets both clocks and increments in its ``go``); the time a move took on the wall clock
is taken from the mover's clock, which then gains the increment, and a side whose clock runs
out before it moves loses on time (a draw when the other side cannot mate). The engines
receive the game's history, so repetitions count in their search.

Either side may instead search probability-limited (a :class:`tuner.arena.players.PlsPlayer`,
``NAME@pls`` on the command line: :class:`search.pls.pls.PlsSearcher`, its ``depth`` counting
iterations), or be an external UCI or XBoard engine (:class:`tuner.arena.engines.EngineSpec`, e.g.
Stockfish with ``UCI_LimitStrength``): it plays the same openings with the same colour swaps
under the same limit (as a :class:`chess.engine.Limit`), and the games are scored the same way.
Its score for adjudication is the one of its last ``info`` line (XBoard: its last post). An
external engine that fails (cannot start, exits, exceeds ``engine_timeout``, answers an illegal
move) stops the match with a one-line :class:`tuner.arena.engines.EngineFailure`; no game is
scored as a forfeit unless ``forfeit`` is set (``tuner bench ladder``): then it loses that game
(termination ``forfeit: <kind>``) and a fresh process plays the next.
Each game pair starts the external engine once and sends ``ucinewgame`` before each game; with
``tuner uci`` as the external engine at ``Hash=1`` (the table size matches use) the games are
move for move those of the same weights played internally.

Game end, in this order (and a loss on time as soon as it happens):

* the usual rules (checked with python-chess): checkmate, stalemate, insufficient material,
  the fifty-move rule (100 plies without capture or pawn move) and threefold repetition, all
  applied as soon as they occur (as if claimed);
* adjudication, a *win* when the last ``2 x adjudicate_moves`` plies' scores (each engine's
  own search score after its move, converted to White's view) all exceed ``adjudicate_cp``
  for the same side: both engines agree, for ``adjudicate_moves`` moves each, that one side
  is that far ahead (mate scores count as beyond any margin);
* adjudication, a *draw* when ``max_plies`` plies have been played from the opening.

Statistics (:func:`summarize`): W/D/L and the score from A's view; the Elo difference
``-400 log10(1/s - 1)`` of the score ``s`` with a 95% interval from the *pentanomial* model:
game pairs are the independent unit (the two games of an opening are correlated), so the
standard error is that of the mean per-pair score (normal approximation, 1.96 standard
errors), and the interval's ends are converted to Elo. Games run in a process pool over game
pairs; each pair is played by fresh engines, so results do not depend on the number of workers.
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
import os
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import numpy as np

from search.core.board import W_KEY
from search.core.convert import from_fen, move_from_uci, move_to_uci, push
from search.core.input_limits import InputLimitError, read_capped
from search.evaluation.network import QuantizedNetwork
from tuner.config import help_field
from tuner.cores import check_workers, resolve_workers
from tuner.limits import DEFAULT_HASH_MB, HASH_MB, SearchLimits, check_limits, check_range
from tuner.arena.sprt import INCONCLUSIVE, Sprt
from tuner.arena.engines import DEFAULT_TIMEOUT, EngineFailure, EngineSpec, ExternalEngine
from tuner.arena.players import Engine, PlayPlayer, PlsPlayer, checked_player, load_kernels, new_engine
from search.tree.iterative import MAX_DEPTH, Iteration, TimePlan, tt_bits_for

#: the openings shipped with the repository
DEFAULT_OPENINGS = Path(__file__).resolve().parents[2] / "datasets" / "openings" / "openings.epd"
#: a mate score in the adjudication record, in centipawns: +-(MATE_CP + n) for a mate in n moves
MATE_CP = 100_000
#: what a numba engine on a clock (``--tc``) keeps back for the Python around its search (seconds)
TC_OVERHEAD = 0.005
#: the clock the ``--tc`` games are timed with (a test replaces it)
_clock = time.perf_counter

RESULT_POINTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


class OpeningsFileError(ValueError):
    """An openings file that cannot be used; the message is one line naming file and line."""


@dataclass(frozen=True, kw_only=True)
class MatchConfig(SearchLimits):
    """Settings of ``tuner bench match``: the limits of each move (:class:`tuner.limits.SearchLimits`:
    exactly one of depth, nodes, movetime, or instead a clock, ``tc``) and the match's own."""

    games: int = help_field(100, "number of games, even: each opening is played twice with colours swapped")
    openings: str | None = help_field(None, "openings file: EPD or FEN lines ('#' comments), or PGN (each "
                                            "game's mainline played to its end); "
                                            "None: datasets/openings/openings.epd", metavar="FILE")
    out: str | None = help_field(None, "PGN file for the games (also --pgn), written game pair by game pair; "
                                       "refused if it exists, unless --overwrite; None: "
                                       "results/match-<A>-vs-<B>.pgn, or -2, -3, ... when that exists",
                                 metavar="PGN")
    workers: int | None = help_field(None, "worker processes; None or 0: one per core")
    seed: int = help_field(0, "seed for choosing and ordering the openings")
    max_plies: int = help_field(400, "adjudicate a draw after this many plies from the opening")
    adjudicate_cp: int = help_field(1000, "win adjudication margin in centipawns (see below)")
    adjudicate_moves: int = help_field(4, "win adjudication: moves of each engine beyond the margin; 0: never")
    tc: str | None = help_field(None, "a clock per side, BASE+INC seconds (e.g. 10+0.1; BASE alone: no increment): "
                                      "each engine plans its move from its time left as 'tuner uci' does, and "
                                      "loses on time when it runs out; give --depth, --nodes, --movetime or --tc",
                                metavar="BASE+INC")
    engine_timeout: float = help_field(DEFAULT_TIMEOUT, "seconds an external --engine may take to start, or "
                                                        "beyond the move's limit, before the match stops with "
                                                        "an error (with --forfeit: it loses the game)", metavar="S")
    forfeit: bool = help_field(False, "an external engine that fails (cannot start, exits, exceeds "
                                      "--engine-timeout, answers an illegal move) loses that game and is restarted, "
                                      "instead of stopping the match")
    hash: int = help_field(DEFAULT_HASH_MB, "transposition table of each of movetuner's own players, in MiB (as "
                                            "tuner uci's Hash option, whose default it takes; an external --engine "
                                            "sets its own with --engine-options)", metavar="MB")

    def validate(self) -> None:
        if self.games < 2 or self.games % 2:
            raise ValueError(f"games must be a positive even number (openings are played in pairs), not {self.games}")
        if sum(x is not None for x in (self.depth, self.nodes, self.movetime, self.tc)) != 1:
            raise ValueError("give exactly one of --depth, --nodes and --movetime (bench match: or --tc)")
        check_limits(self.depth, self.nodes, self.movetime)
        if self.tc is not None:
            parse_tc(self.tc)
        if not self.engine_timeout > 0:
            raise ValueError(f"engine_timeout must be positive, not {self.engine_timeout}")
        check_workers(self.workers)
        check_range("hash", self.hash, HASH_MB, " MiB")
        if self.max_plies < 1:
            raise ValueError(f"max_plies must be positive, not {self.max_plies}")
        if self.adjudicate_cp < 1 or self.adjudicate_moves < 0:
            raise ValueError("adjudicate_cp must be positive and adjudicate_moves >= 0")


def parse_tc(text: str) -> tuple[float, float]:
    """``"BASE+INC"`` (seconds; ``"BASE"``: no increment) -> ``(base, increment)``; a one-line
    ``ValueError`` unless the base is positive and the increment not negative."""
    base, sep, inc = text.strip().partition("+")
    try:
        clock = (float(base), float(inc) if sep else 0.0)
    except ValueError:
        raise ValueError(f"tc must be BASE+INC in seconds (e.g. 10+0.1), not {text[:30]!r}") from None
    if not (0 < clock[0] < 1e7 and 0 <= clock[1] < 1e7):
        raise ValueError(f"tc {text[:30]!r}: the base must be positive and the increment not negative")
    return clock


@dataclass(frozen=True)
class Opening:
    name: str
    fen: str


def load_openings(path: str | Path) -> list[Opening]:
    """Read an openings file, EPD or PGN; every position must be valid with at least one legal
    move (checked with python-chess), else one :class:`OpeningsFileError` line naming the file
    and line.

    * EPD: one position per line as EPD (with an optional ``id`` opcode naming it) or FEN;
      blank lines and ``#`` comments are skipped.
    * PGN (a ``.pgn`` name, or a first line that starts with ``[``): each game's mainline,
      played from its start (its ``FEN`` tag, else the initial position) to its last move,
      gives one opening, named by its ``Opening`` tag (else ``file:line``); a game with an
      illegal or unreadable move, or of another variant, is refused at the line it starts on.
    """
    path = Path(path)
    try:
        text = read_capped(path).decode("utf-8")
    except FileNotFoundError:
        raise OpeningsFileError(f"{path}: no such openings file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise OpeningsFileError(f"{path}: cannot read openings file ({exc.__class__.__name__})") from None
    except InputLimitError as exc:
        raise OpeningsFileError(str(exc)) from None
    lines = text.split("\n")  # newlines only: line numbers as editors count
    first = next((x.strip() for x in lines if x.strip() and not x.lstrip().startswith("#")), "")
    out = _pgn_openings(path, text) if path.suffix.lower() == ".pgn" or first.startswith("[") \
        else _epd_openings(path, lines)
    if not out:
        raise OpeningsFileError(f"{path}: no positions")
    return out


def _playable(path: Path, lineno: int, board: chess.Board) -> None:
    if not board.is_valid():
        raise OpeningsFileError(f"{path}: line {lineno}: impossible position ({board.status()!r})")
    if board.is_game_over():
        raise OpeningsFileError(f"{path}: line {lineno}: the game is already over in this position")
    try:  # the search's own rules too (its counters' range, the material promotions explain)
        from_fen(board.fen())
    except ValueError as exc:
        raise OpeningsFileError(f"{path}: line {lineno}: not a position the search plays ({exc})") from None


def _epd_openings(path: Path, lines: list[str]) -> list[Opening]:
    out: list[Opening] = []
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        try:
            if len(fields) == 6 and fields[4].isdigit() and fields[5].isdigit():
                board, ops = chess.Board(line), {}
            else:
                board = chess.Board()
                ops = board.set_epd(line)
        except ValueError as exc:
            raise OpeningsFileError(f"{path}: line {lineno}: not a FEN or EPD position ({exc})") from None
        _playable(path, lineno, board)
        name = ops.get("id")
        out.append(Opening(str(name) if name else f"{path.name}:{lineno}", board.fen()))
    return out


class _StrictGameBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """python-chess's game builder, raising on a bad move or tag instead of logging it."""

    def handle_error(self, error: Exception) -> None:
        raise error


def _pgn_openings(path: Path, text: str) -> list[Opening]:
    import io  # noqa: PLC0415

    out: list[Opening] = []
    handle = io.StringIO(text)
    number = 0
    while True:
        rest = text[handle.tell():]
        skipped = len(rest) - len(rest.lstrip())
        lineno = text.count("\n", 0, handle.tell() + skipped) + 1  # where the game starts
        try:
            game = chess.pgn.read_game(handle, Visitor=_StrictGameBuilder)
        except ValueError as exc:
            message = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            raise OpeningsFileError(f"{path}: line {lineno}: game {number + 1} cannot be read "
                                    f"({message[:120]})") from None
        if game is None:
            break
        number += 1
        board = game.end().board()
        if board.uci_variant != "chess":
            raise OpeningsFileError(f"{path}: line {lineno}: game {number} is not standard chess "
                                    f"({game.headers.get('Variant', '?')[:40]})")
        _playable(path, lineno, board)
        name = game.headers.get("Opening")
        out.append(Opening(name if name and name != "?" else f"{path.name}:{lineno}", board.fen()))
    return out


def openings_record(path: str | Path, seed: int) -> dict[str, object]:
    """What a match's summary records of its openings: ``openings`` (the file as given),
    ``openings_sha256`` (of its bytes: the same set under another name is the same set) and
    ``seed`` (which orders and chooses them, :func:`choose_openings`)."""
    import hashlib  # noqa: PLC0415

    data = read_capped(Path(path))
    return {"openings": str(path), "openings_sha256": hashlib.sha256(data).hexdigest(), "seed": int(seed)}


class ReusedSelectionError(ValueError):
    """A confirmation match on the openings and seed of the match that chose its candidate."""


def check_confirmation(chosen_by: str | Path, record: dict[str, object]) -> None:
    """Refuse a confirmation match (``record``: :func:`openings_record` of its openings and
    seed) that reuses the openings file and seed of the match that chose its candidate
    (``chosen_by``: that match's JSON summary, as ``tuner bench match --json`` prints it, or
    a file whose last line is that summary): a :class:`ReusedSelectionError` naming both. A
    summary without an openings record (made before matches recorded one) is refused too,
    as is a file that is not such a summary (one line naming the file)."""
    import json  # noqa: PLC0415

    path = Path(chosen_by)
    try:
        lines = [x for x in read_capped(path).decode("utf-8").splitlines() if x.strip()]
        doc = json.loads(lines[-1]) if lines else None
    except FileNotFoundError:
        raise ReusedSelectionError(f"{path}: no such match summary (--chosen-by)") from None
    except (OSError, UnicodeDecodeError, InputLimitError, ValueError) as exc:
        raise ReusedSelectionError(f"{path}: not a match summary's JSON line ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict) or "openings_sha256" not in doc or "seed" not in doc:
        raise ReusedSelectionError(f"{path}: the match summary records no openings and seed (--chosen-by needs "
                                   "the JSON line of 'tuner bench match --json')")
    if doc["openings_sha256"] == record["openings_sha256"] and doc["seed"] == record["seed"]:
        raise ReusedSelectionError(
            f"{path}: the candidate was chosen on these openings ({doc.get('openings')}) with seed {doc['seed']}; "
            f"confirm on another openings file or another --seed (docs/strength.md)")


def choose_openings(openings: Sequence[Opening], pairs: int, seed: int) -> list[Opening]:
    """``pairs`` openings in a seeded random order, without repeats until all have been used."""
    rng = random.Random(seed)
    chosen: list[Opening] = []
    while len(chosen) < pairs:
        batch = list(openings)
        rng.shuffle(batch)
        chosen.extend(batch[: pairs - len(chosen)])
    return chosen


# ---------------------------------------------------------------- playing


@dataclass(frozen=True)
class GameRecord:
    """One finished game: moves in UCI, per-move (score in White's view, depth), result."""

    round: str
    opening: Opening
    white: str  # "A" or "B"
    moves: tuple[str, ...]
    scores: tuple[tuple[int, int], ...]  # (centipawns, White's view; +-(100000 + n): mate in n moves), depth
    result: str
    termination: str

    @property
    def points_a(self) -> float:
        p = RESULT_POINTS[self.result]
        return p if self.white == "A" else 1.0 - p


#: a side of a match: an evaluator (linear weights or a network) for the exact search, a
#: :class:`~tuner.arena.players.PlayPlayer` for the playing search, a
#: :class:`~tuner.arena.players.PlsPlayer` for the probability-limited one, or an external UCI engine
Player = np.ndarray | QuantizedNetwork | PlsPlayer | PlayPlayer | EngineSpec


@dataclass(frozen=True)
class PairTask:
    index: int
    opening: Opening
    weights_a: Player
    weights_b: Player
    depth: int | None
    nodes: int | None
    max_plies: int
    adjudicate_cp: int
    adjudicate_moves: int
    movetime: int | None = None
    engine_timeout: float = DEFAULT_TIMEOUT
    #: a clock per side: (base, increment) in seconds (:func:`parse_tc`), or None
    tc: tuple[float, float] | None = None
    #: a failing external engine loses its game (:attr:`MatchConfig.forfeit`) instead of raising
    forfeit: bool = False
    #: the transposition table of each in-process player, MiB (:attr:`MatchConfig.hash`)
    hash_mb: int = DEFAULT_HASH_MB

    def limit(self, clocks: dict[bool, float] | None = None) -> chess.engine.Limit:
        """The search limit as python-chess gives it to an external engine; with :attr:`tc`,
        the clocks (seconds left, by colour: ``chess.WHITE``/``chess.BLACK``) and increments."""
        if self.tc is not None and clocks is not None:
            inc = self.tc[1]
            return chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                      white_inc=inc, black_inc=inc)
        return chess.engine.Limit(depth=self.depth, nodes=self.nodes,
                                  time=None if self.movetime is None else self.movetime / 1000)


def rules_end(board: chess.Board) -> tuple[str, str] | None:
    """(result, reason) if the usual rules end the game here, else None."""
    if board.is_checkmate():
        return ("0-1" if board.turn == chess.WHITE else "1-0"), "checkmate"
    if board.is_stalemate():
        return "1/2-1/2", "stalemate"
    if board.is_insufficient_material():
        return "1/2-1/2", "insufficient material"
    if board.halfmove_clock >= 100:
        return "1/2-1/2", "fifty-move rule"
    if board.is_repetition(3):
        return "1/2-1/2", "threefold repetition"
    return None


def white_cp(it: Iteration, white_to_move: bool) -> int:
    """The search's score in White's view, centipawns; a mate in n moves (n >= 1, either side)
    as +-(:data:`MATE_CP` + n)."""
    mate = it.mate_moves  # as the search reports it over UCI: "mate n", "mate -n"
    if mate is not None:
        cp = MATE_CP + max(1, abs(mate))
        cp = cp if mate > 0 else -cp
    else:
        cp = it.score_cp
    return cp if white_to_move else -cp


def play_game(task: PairTask, white: str, round_name: str,
              external: dict[str, ExternalEngine] | None = None) -> GameRecord:
    """Play one game from ``task.opening`` with engine ``white`` ("A" or "B") as White.

    Weights play with a fresh :class:`~search.tree.iterative.Searcher` (a :class:`PlsPlayer` with a
    fresh :class:`~search.pls.pls.PlsSearcher`); an :class:`EngineSpec` side plays
    with the running engine ``external[side]`` (a new game for it), or with one started for
    this game (and stored there, for the caller to close) when ``external`` does not hold it
    or holds one that failed. With ``task.forfeit`` an engine that cannot start loses the game
    at once (:func:`forfeit`)."""
    own: dict[str, ExternalEngine] = {}
    running_engines = external if external is not None else own
    try:
        engines: dict[str, Engine | ExternalEngine] = {}
        for side, player in (("A", task.weights_a), ("B", task.weights_b)):
            if isinstance(player, EngineSpec):
                running = running_engines.get(side)
                if running is None or running.failed:
                    if running is not None:
                        running.close()
                    try:
                        running = ExternalEngine(player, timeout=task.engine_timeout)
                    except EngineFailure as exc:
                        if not task.forfeit:
                            raise
                        return forfeit(task, white, round_name, side, (), (), exc)
                    running_engines[side] = running
                running.new_game()
                engines[side] = running
            else:
                load_kernels(player)  # not on the first move's clock
                engines[side] = new_engine(player, tt_bits_for(task.hash_mb))
        return play_with_engines(task, white, round_name, engines)
    finally:
        for engine in own.values():
            engine.close()


def forfeit(task: PairTask, white: str, round_name: str, side: str, moves: tuple[str, ...],
            scores: tuple[tuple[int, int], ...], failure: EngineFailure) -> GameRecord:
    """The game lost by ``side`` ("A" or "B") whose external engine failed (``failure``) after
    ``moves``: termination ``forfeit: <kind>``; the full message goes to stderr (one line)."""
    import sys  # noqa: PLC0415

    print(f"forfeit: game {round_name}: {failure}", file=sys.stderr, flush=True)
    result = "0-1" if side == white else "1-0"
    return GameRecord(round_name, task.opening, white, moves, scores, result, f"forfeit: {failure.kind}")


def play_with_engines(task: PairTask, white: str, round_name: str,
                      engines: dict[str, Engine | ExternalEngine]) -> GameRecord:
    """Play one game of ``task`` with the engines given for sides ``"A"`` and ``"B"`` (the
    players of ``task`` then only name the sides): :func:`play_game` with engines made by the
    caller, e.g. two searchers of one weight set that differ in their time management
    (``bench/clock.py``)."""
    black = "B" if white == "A" else "A"
    board = chess.Board(task.opening.fen)
    b = from_fen(task.opening.fen)
    keys: list[int] = []
    moves: list[str] = []
    scores: list[tuple[int, int]] = []
    window = 2 * task.adjudicate_moves
    max_depth = task.depth if task.depth is not None else MAX_DEPTH
    limit = task.limit()
    clocks = {chess.WHITE: task.tc[0], chess.BLACK: task.tc[0]} if task.tc is not None else None
    while True:
        end = rules_end(board)
        if end is not None:
            result, reason = end
            break
        if window and len(scores) >= window:
            recent = [cp for cp, _ in scores[-window:]]
            if all(cp >= task.adjudicate_cp for cp in recent) or all(cp <= -task.adjudicate_cp for cp in recent):
                result = "1-0" if recent[-1] > 0 else "0-1"
                reason = (f"adjudication: both engines scored beyond {task.adjudicate_cp} cp "
                          f"for {task.adjudicate_moves} moves")
                break
        if len(moves) >= task.max_plies:
            result, reason = "1/2-1/2", f"adjudication: draw after {task.max_plies} plies"
            break
        engine = engines[white if board.turn == chess.WHITE else black]
        started = _clock()
        if isinstance(engine, ExternalEngine):
            try:
                uci, cp, depth = engine.move(board, task.limit(clocks) if clocks else limit,
                                             f"game {round_name}, ply {len(moves) + 1}")
            except EngineFailure as exc:
                if not task.forfeit:
                    raise
                mover = white if board.turn == chess.WHITE else black
                return forfeit(task, white, round_name, mover, tuple(moves), tuple(scores), exc)
            m = move_from_uci(b, uci)
        else:
            plan = None
            if task.movetime is not None:
                plan = TimePlan.fixed(task.movetime / 1000)
            elif task.tc is not None and clocks is not None:
                plan = engine.clock_plan(clocks[board.turn], task.tc[1], board.ply(), None, TC_OVERHEAD)
            it = engine.think(b, keys, max_depth=max_depth, node_limit=task.nodes, plan=plan)
            if it is None or not it.pv:  # cannot happen: the rules above caught positions without moves
                raise RuntimeError(f"engine returned no move in {board.fen()}")
            m = it.pv[0]
            uci = move_to_uci(m)
            cp, depth = white_cp(it, board.turn == chess.WHITE), it.depth
        if task.tc is not None and clocks is not None:
            clocks[board.turn] -= _clock() - started
            if clocks[board.turn] < 0:
                result, reason = _flag(board)
                break
            clocks[board.turn] += task.tc[1]
        move = chess.Move.from_uci(uci)
        if not board.is_legal(move):  # python-chess is the rules oracle
            raise RuntimeError(f"engine played illegal move {uci} in {board.fen()}")
        scores.append((cp, depth))
        keys.append(int(b[W_KEY]))
        b = push(b, m)
        board.push(move)
        moves.append(uci)
    return GameRecord(round_name, task.opening, white, tuple(moves), tuple(scores), result, reason)


def _flag(board: chess.Board) -> tuple[str, str]:
    """(result, reason) when the side to move in ``board`` ran out of time before moving: a loss,
    or a draw when the other side has too little material to mate (FIDE Laws, 6.9)."""
    if board.has_insufficient_material(not board.turn):
        return "1/2-1/2", "time forfeit against insufficient material"
    return ("0-1" if board.turn == chess.WHITE else "1-0"), "loss on time"


def play_pair(task: PairTask) -> tuple[GameRecord, GameRecord]:
    """Both games of an opening: A as White, then B as White. An external engine is started
    once for the pair (and ended after it; again after a forfeit), with ``ucinewgame`` (XBoard:
    ``new``) before each game."""
    external: dict[str, ExternalEngine] = {}
    try:
        return (play_game(task, "A", f"{task.index + 1}.1", external),
                play_game(task, "B", f"{task.index + 1}.2", external))
    finally:
        for engine in external.values():
            engine.close()


# ---------------------------------------------------------------- statistics


def elo_of(score: float) -> float:
    """Elo difference of an expected score in (0, 1); +-inf at the ends."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no "-0" at an even score


@dataclass(frozen=True)
class MatchSummary:
    """Figures from A's point of view."""

    games: int
    wins: int
    draws: int
    losses: int
    score: float  # fraction of points, 0..1
    score_low: float
    score_high: float
    elo: float
    elo_low: float
    elo_high: float
    pentanomial: tuple[int, int, int, int, int]  # pairs scoring 0, 0.5, 1, 1.5, 2 points
    terminations: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        def finite(x: float) -> float | None:
            return round(x, 1) if math.isfinite(x) else None

        return {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "score": round(self.score, 4), "score_ci95": [round(self.score_low, 4), round(self.score_high, 4)],
            "elo": finite(self.elo), "elo_ci95": [finite(self.elo_low), finite(self.elo_high)],
            "pentanomial": list(self.pentanomial), "terminations": self.terminations,
        }


def pair_scores(pairs: Sequence[tuple[GameRecord, GameRecord]]) -> np.ndarray:
    """A's mean score in each game pair (an opening with both colours): float64[len(pairs)],
    each 0, 0.25, 0.5, 0.75 or 1 (the pentanomial outcomes the ratings' variance uses)."""
    return np.array([a.points_a + b.points_a for a, b in pairs], dtype=np.float64) / 2.0


def summarize(pairs: Sequence[tuple[GameRecord, GameRecord]]) -> MatchSummary:
    """W/D/L, score and Elo with a 95% interval (pentanomial, normal approximation)."""
    games = [g for pair in pairs for g in pair]
    points = [g.points_a for g in games]
    wins = sum(p == 1.0 for p in points)
    draws = sum(p == 0.5 for p in points)
    losses = sum(p == 0.0 for p in points)
    per_pair = pair_scores(pairs)
    n = len(per_pair)
    mean = float(per_pair.mean())
    se = float(per_pair.std(ddof=0)) / math.sqrt(n) if n else 0.0
    low, high = max(0.0, mean - 1.96 * se), min(1.0, mean + 1.96 * se)
    penta = Counter(int(round(4 * s)) for s in per_pair)  # 0..4 half points
    terminations = dict(sorted(Counter(g.termination for g in games).items()))
    return MatchSummary(len(games), wins, draws, losses, mean, low, high,
                        elo_of(mean), elo_of(low), elo_of(high),
                        (penta[0], penta[1], penta[2], penta[3], penta[4]), terminations)


def running_line(what: str, pairs: Sequence[tuple[GameRecord, GameRecord]], games: int, sprt: Sprt | None,
                 seconds: float) -> str:
    """A match's running line in a log (:class:`tuner.progress.RunningLog`): games finished in
    opening order out of ``games``, W/D/L from A's view, the Elo difference with its 95%
    interval (:func:`summarize`) and, with ``sprt``, the LLR and its bounds."""
    head = f"{what}: {2 * len(pairs)}/{games} games, {seconds:.0f} s"
    if not pairs:
        return head
    s = summarize(pairs)
    line = (f"{head}, W/D/L {s.wins}/{s.draws}/{s.losses}, Elo {s.elo:+.0f} "
            f"[{s.elo_low:+.0f}, {s.elo_high:+.0f}]")
    if sprt is not None:
        t = sprt.check(s.pentanomial)
        line += f", LLR {t.llr:.2f} ({t.lower:.2f}, {t.upper:.2f})"
    return line


# ---------------------------------------------------------------- PGN


def score_comment(cp: int, depth: int) -> str:
    """A move's comment as cutechess-cli writes it (``evalString``, ``MoveEvaluation::scoreText``),
    without the time: the mover's score in pawns with two decimals, signed when not zero
    (``+0.35``, ``0.00``, ``-1.20``), or a mate in n moves as ``+Mn`` / ``-Mn``; then ``/depth``.
    ``cp``: centipawns from the mover's view, mates as in :attr:`GameRecord.scores`."""
    if abs(cp) >= MATE_CP:
        shown = ("+M" if cp > 0 else "-M") + str(abs(cp) - MATE_CP)
    else:
        shown = ("+" if cp > 0 else "") + f"{cp / 100:.2f}"
    return f"{shown}/{depth}"


def pgn_tag_value(text: str) -> str:
    """``text`` safe between a PGN tag's quotes (python-chess 1.11 writes a value as it is, so a
    weights file's name could end the tag and add others): ``\\`` and ``"`` escaped by a
    backslash (PGN standard 8.1.1, as PGN readers unescape them; python-chess keeps the
    backslashes), and a control character, such as a newline, a space."""
    plain = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)
    return plain.replace("\\", "\\\\").replace('"', '\\"')


def to_pgn(game: GameRecord, names: dict[str, str], event: str, time_control: str = "-") -> chess.pgn.Game:
    """The game as python-chess PGN: engines named by their weights, the opening (with ``FEN``
    and ``SetUp`` unless it is the initial position), result, termination reason and
    ``TimeControl`` (PGN standard 9.6: ``BASE+INC`` in seconds, ``-`` for none: a depth, node
    or move-time limit, which ``event`` names) in the headers, each move commented with the
    mover's score and depth (:func:`score_comment`, cutechess's convention)."""
    pgn = chess.pgn.Game()
    pgn.setup(chess.Board(game.opening.fen))
    pgn.headers["Event"] = pgn_tag_value(event)  # names and the opening's come from the user's files
    pgn.headers["Site"] = "movetuner"
    pgn.headers["Date"] = "????.??.??"
    pgn.headers["Round"] = game.round
    pgn.headers["White"] = pgn_tag_value(names[game.white])
    pgn.headers["Black"] = pgn_tag_value(names["B" if game.white == "A" else "A"])
    pgn.headers["Result"] = game.result
    pgn.headers["Opening"] = pgn_tag_value(game.opening.name)
    pgn.headers["Termination"] = pgn_tag_value(game.termination)
    pgn.headers["TimeControl"] = pgn_tag_value(time_control)
    pgn.headers["PlyCount"] = str(len(game.moves))
    node: chess.pgn.GameNode = pgn
    white_moves = chess.Board(game.opening.fen).turn == chess.WHITE
    for uci, (cp, depth) in zip(game.moves, game.scores):
        node = node.add_variation(chess.Move.from_uci(uci))
        node.comment = score_comment(cp if white_moves else -cp, depth)
        white_moves = not white_moves
    return pgn


def describe_limit(config: MatchConfig) -> str:
    """A match's limit in words, as the summaries and PGN events give it."""
    if config.depth is not None:
        return f"depth {config.depth}"
    if config.nodes is not None:
        return f"{config.nodes} nodes per move"
    if config.tc is not None:
        base, inc = parse_tc(config.tc)
        return f"clock {base:g} s + {inc:g} s per side"
    return f"{config.movetime} ms per move"


def pgn_time_control(tc: str | None) -> str:
    """The ``TimeControl`` tag of a match: ``BASE+INC`` seconds for a clock (:func:`parse_tc`),
    ``-`` (none) for a depth, node or move-time limit."""
    if tc is None:
        return "-"
    base, inc = parse_tc(tc)
    return f"{base:g}+{inc:g}"


class PgnWriter:
    """Writes a match's games to a PGN file as they finish, so that a stopped or killed match
    keeps the games finished before it: each game pair is appended and flushed to the disk
    when it and every pair before it (in opening order) are done (:func:`run_match`'s
    ``on_pair``), so the file always holds a prefix of the final one.

    The file is made with the first pair, so a match that fails before any game is finished
    leaves no file (and an existing one as it was); making it refuses an existing file
    (``FileExistsError``) unless ``overwrite``, which empties it first. Callers check with
    :func:`tuner.outputs.check_output` before any work."""

    def __init__(self, path: str | Path, names: dict[str, str], event: str, *, time_control: str = "-",
                 overwrite: bool = False, append: bool = False) -> None:
        self.path = Path(path)
        self.names, self.event, self.time_control = names, event, time_control
        self.overwrite = overwrite
        #: add to the file (made by an earlier writer of the same command, e.g. the ladder's
        #: previous opponent) instead of making it
        self.append = append
        self._fd = -1
        self._separate = False  # the file already holds games: a blank line before the first
        self.games = 0

    def add_pair(self, index: int, pair: tuple[GameRecord, GameRecord]) -> None:
        """Append both games of a pair (``index``: its place in opening order, unused) in one
        write, then sync: a process killed meanwhile leaves the file's games whole."""
        if self._fd < 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.append:
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
            else:
                flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if self.overwrite else os.O_EXCL)
            self._fd = os.open(self.path, flags, 0o644)
            self._separate = self.append and os.fstat(self._fd).st_size > 0
        text = "".join(("\n" if self.games + k or self._separate else "") + str(to_pgn(game, self.names, self.event,
                                                                                      self.time_control)) + "\n"
                       for k, game in enumerate(pair))
        data = text.encode("utf-8")
        while data:
            data = data[os.write(self._fd, data):]
        os.fsync(self._fd)
        self.games += len(pair)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> PgnWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------- driver


def _pool_context() -> multiprocessing.context.BaseContext:
    # spawn: workers start clean (no inherited numba threads or locks); they load the kernels
    # from numba's on-disk cache
    return multiprocessing.get_context("spawn")


def _checked(player: Player) -> Player:
    return player if isinstance(player, EngineSpec) else checked_player(player)


def run_match(weights_a: Player, weights_b: Player, openings: Sequence[Opening], config: MatchConfig,
              progress: Callable[[int], object] | None = None, *,
              pool: concurrent.futures.Executor | None = None,
              sprt: Sprt | None = None,
              on_pair: Callable[[int, tuple[GameRecord, GameRecord]], object] | None = None,
              ) -> list[tuple[GameRecord, GameRecord]]:
    """Play ``config.games`` games (``games / 2`` openings, each with both colour assignments).

    Each side is weights (int32[N_FEATURES]) for the numba search or an external engine
    (:class:`~tuner.arena.engines.EngineSpec`). ``progress`` is called with the number of games just
    finished. ``pool``: worker processes to use instead of a pool made for this call (spawned,
    like :func:`tuner.arena.epd.process_pool`: several matches then load the kernels once). Returns
    the game pairs in opening order, identical for any number of workers (with deterministic
    engines and no ``movetime``). Raises
    :class:`~tuner.arena.engines.EngineFailure` when an external engine fails.

    ``sprt``: stop early, as soon as the test (:class:`tuner.arena.sprt.Sprt`, A tested against B)
    crosses a bound. The test is checked on the game pairs in opening order, after each pair
    whose predecessors are all finished, so the pairs returned (those up to the one that
    crossed, or all ``games / 2``) do not depend on the number of workers either; pairs
    finished beyond that point are dropped, those not started are cancelled.

    ``on_pair``: called with ``(index, pair)`` for each game pair in opening order, as soon as
    it and every pair before it are finished, and never for a pair beyond the one where the
    SPRT stopped (e.g. :meth:`PgnWriter.add_pair`, a running log): the pairs it sees are
    always a prefix of those returned.
    """
    config.validate()
    wa, wb = _checked(weights_a), _checked(weights_b)
    chosen = choose_openings(openings, config.games // 2, config.seed)
    tc = parse_tc(config.tc) if config.tc is not None else None
    tasks = [PairTask(i, op, wa, wb, config.depth, config.nodes, config.max_plies, config.adjudicate_cp,
                      config.adjudicate_moves, config.movetime, config.engine_timeout, tc, config.forfeit, config.hash)
             for i, op in enumerate(chosen)]
    workers = min(resolve_workers(config.workers), len(tasks))
    results = _Prefix(len(tasks), sprt, on_pair)
    if pool is not None and workers > 1:
        _collect(pool, tasks, results, progress)
    elif workers <= 1:
        for t in tasks:
            stop = results.add(t.index, play_pair(t))
            if progress:
                progress(2)
            if stop:
                break
    else:
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as own:
            _collect(own, tasks, results, progress)
    return results.played()


class _Prefix:
    """The game pairs of a match as they finish, and the SPRT checked on the longest run of
    finished pairs from the first one (the pairs in opening order)."""

    def __init__(self, n: int, sprt: Sprt | None,
                 on_pair: Callable[[int, tuple[GameRecord, GameRecord]], object] | None = None) -> None:
        self.on_pair = on_pair
        self.pairs: list[tuple[GameRecord, GameRecord] | None] = [None] * n
        self.sprt = sprt
        self.ready = 0  # pairs[:ready] are all finished and checked
        self.stopped_at: int | None = None
        self.pentanomial = np.zeros(5, dtype=np.int64)

    def add(self, index: int, pair: tuple[GameRecord, GameRecord]) -> bool:
        """Store a finished pair; True once the test has crossed a bound (stop playing)."""
        self.pairs[index] = pair
        while self.stopped_at is None and self.ready < len(self.pairs) and self.pairs[self.ready] is not None:
            done = self.pairs[self.ready]
            assert done is not None
            self.ready += 1
            if self.on_pair is not None:
                self.on_pair(self.ready - 1, done)
            if self.sprt is not None:
                self.pentanomial[int(round(2 * (done[0].points_a + done[1].points_a)))] += 1
                if self.sprt.check(self.pentanomial).decision != INCONCLUSIVE:
                    self.stopped_at = self.ready
        return self.stopped_at is not None

    def played(self) -> list[tuple[GameRecord, GameRecord]]:
        """The pairs in opening order: up to the one where the test stopped, else all."""
        kept = self.pairs if self.stopped_at is None else self.pairs[:self.stopped_at]
        return [p for p in kept if p is not None]


def _collect(pool: concurrent.futures.Executor, tasks: Sequence[PairTask], results: _Prefix,
             progress: Callable[[int], object] | None) -> None:
    """Play ``tasks`` in ``pool``, storing each pair at its index; on an error, or when the
    SPRT stops the match, the pairs not yet started are cancelled (those under way end:
    external engines time out) and the error is raised."""
    futures = {pool.submit(play_pair, t): t.index for t in tasks}
    try:
        for fut in concurrent.futures.as_completed(futures):
            stop = results.add(futures[fut], fut.result())
            if progress:
                progress(2)
            if stop:
                break
    except BaseException:
        for fut in futures:
            fut.cancel()
        concurrent.futures.wait(futures)
        raise
    for fut in futures:
        fut.cancel()
    concurrent.futures.wait(futures)


def player_stem(text: str) -> str:
    """A short file-name part for a player: a built-in set's name, a weights file's stem, or for
    a run folder's ``weights.json`` the run folder's name (``results/run-7/weights.json`` ->
    ``run-7``); reduced to file-name characters."""
    path = Path(text)
    name = path.parent.name if path.name == "weights.json" and path.parent.name else (path.stem or text)
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def default_pgn_path(name_a: str, name_b: str, *, free: bool = False) -> Path:
    """``results/match-<A>-vs-<B>.pgn``, the names by :func:`player_stem`; with ``free``, the
    first of ``match-<A>-vs-<B>.pgn``, ``match-<A>-vs-<B>-2.pgn``, ``-3``, ... that does not
    exist (a rerun never replaces an earlier match's games)."""
    path = Path("results") / f"match-{player_stem(name_a)}-vs-{player_stem(name_b)}.pgn"
    k = 2
    while free and path.exists():
        path = path.with_name(f"match-{player_stem(name_a)}-vs-{player_stem(name_b)}-{k}.pgn")
        k += 1
    return path
