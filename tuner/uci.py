"""A UCI engine over the numba search: the protocol only.

:class:`UciEngine` speaks the protocol (``uci``, ``isready``, ``ucinewgame``, ``setoption``
``Weights``/``Hash``/``Threads``/``MoveOverhead``/``TimePlan``/``Search``/``MoveModel``/``PlsStart``/``PlsModelAbove``/
``PlsLeafModel``, declared in the table
:data:`OPTIONS`, ``position``, ``go``, ``stop``, ``quit``) and plays with the playing search
:class:`search.play.searcher.PlaySearcher` (selective alpha-beta: ``docs/search.md``), with
``Search exact`` the exact search training uses (:class:`search.tree.iterative.Searcher`, full-width
iterative deepening; ``depth`` is its old name), or with ``Search pls`` the probability-limited :class:`search.pls.pls.PlsSearcher` (Giraffe's search,
Lai 2015: iteration ``d`` searches while the path's probability under the move model
``MoveModel`` stays above ``PlsStart * 4**-(d - 1)``, so ``go depth D`` is D such iterations;
the model splits the probability at nodes whose path probability is above ``PlsModelAbove``, the
cheap pre-move model ``PlsLeafModel`` (or a static prior) below;
``nodes``, ``movetime`` and the clock limit it as they limit the depth-limited search). Searches run in a worker thread;
the kernel releases the GIL (``nogil=True``), so the reader stays responsive. Time management,
which must never lose on time (e.g. at 10 s + 0.1 s), turns the limits into a
:class:`search.tree.iterative.TimePlan` (:meth:`GoLimits.plan`), its clock started when ``go``
arrives:

* ``movetime T``: search until T minus the move overhead (at most a tenth of T), starting
  iterations until then; the one running at the deadline is aborted;
* a clock: a *soft* limit (with ``movestogo``, the time left minus the move overhead, / moves
  to go, + 3/4 of the increment; without it, by the option ``TimePlan``: ``ply``, a share that
  grows with the game's ply, :func:`search.tree.iterative.soft_by_ply`, or ``thirty``, 30
  moves to go; with the depth-limited search scaled by the best move's stability,
  :class:`search.tree.iterative.MoveStability`) after which no
  iteration starts, nor one predicted to end after the *hard* limit (3 x soft, at most a third
  of the time left minus the move overhead), the deadline at which the running iteration is
  aborted. A side to move without its clock (``go wtime 1000`` with Black to move) plays on
  the other side's, and clock parameters without any time (``go movestogo 5``) search
  ``movetime`` :data:`MISSING_CLOCK_MOVETIME_MS`, each with an ``info string`` saying so;
* ``nodes N``: the iterations share N nodes; a last ``info nodes`` line reports every node
  searched (N when it ran out) when the iteration that exhausted them was discarded;
* ``mate N``: the playing search deepens until it finds a mate in N moves or fewer, at most to
  ``4N + 8`` plies (:meth:`GoLimits.play_max_depth`); the exact search's iterations go up to
  ``2N - 1`` plies, ending early at a mate;
* ``stop`` aborts the running iteration (:meth:`search.tree.iterative.Searcher.abort`).

With the playing search, an iteration cut by a limit or ``stop`` gives the best root move that
raised the root's alpha before the cut (``score ... lowerbound``), else the previous iteration's.
With the exact search, an iteration cut by a limit or ``stop`` still gives the move
when the first of its root moves (the previous iteration's best) has been searched in full:
the best of the root moves searched in full is played and reported with ``score ...
lowerbound``; otherwise it is discarded (:mod:`search.tree.iterative`); the probability-limited
search discards it. After each iteration an ``info`` line gives its depth,
score, nodes, nps, time (milliseconds since ``go``) and principal variation, and for the playing
search ``seldepth`` (the deepest ply reached, quiescence included; the other kernels do not
measure it).

A ``go`` that arrives while a search runs stops that search first (it answers its
``bestmove``), then starts: every ``go`` gets exactly one ``bestmove``, in order.

The numba kernels load in a background thread from the first command on (after the answer
to ``uci``), and again after an option that changes the evaluator kind or the search. On a cold numba cache (the first run after an install or an update)
loading means compiling, for up to a minute: in a child process (:mod:`tuner.compile_apart`),
which fills numba's cache on the other core and keeps this process's interpreter free (``quit``
ends it), then they load from the cache; the handshake never waits for the compiling (``uci`` and
``isready`` are answered at once, ``position`` is read by python-chess until the kernels that
convert it are loaded), and a ``go`` with a time limit (``movetime``, a clock) that arrives
before the kernels are ready is answered by :func:`tuner.quickmove.quick_move`, a plain-Python
search within half of that limit (the other half is left to loading the kernels), with an ``info string`` saying so; a ``go`` without one
(``depth``, ``nodes``, ``mate``, ``infinite``) says that the kernels compile and waits for
them, or plays the quick search's move at ``stop``. While the kernels load from the cache
(no compiling, about 0.7 s), ``isready`` waits for them (up to 5 s), so that a match runner's
first ``go`` gets the numba search, and a timed ``go`` waits for them up to a quarter of its time. Once loaded, every
``go`` uses the numba search. ``tuner warmup`` compiles them ahead.

Malformed or unknown commands are answered with ``info string ...``, never a crash. Every
``go`` ends in a ``bestmove`` (``go infinite``, or a ``go`` without any limit, after
``stop``): a limit out of range or not an integer is replaced by the nearest valid one
(``depth 0`` searches depth 1, ``movetime -5`` one millisecond), as Stockfish does, with an
``info string`` saying so. A rejected ``position`` says why in an ``info string`` and keeps a
position to play from (issue 58): with a valid FEN (or ``startpos``) and an illegal move, the
position after the legal moves before it; otherwise (a bad FEN, no kings, a malformed line) the
last valid position. ``bestmove 0000`` (the null move) answers only a position without legal
moves (checkmate, stalemate), or one python-chess accepted while the kernels loaded that the
search's own rules refuse at ``go``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO, TypeVar

import chess

from search.core.board import W_FULLMOVE, W_KEY, W_STM
from search.core.convert import (MAX_FEN_COUNTER, STARTING_FEN, Board, IllegalMoveError, InvalidFenError, from_fen, legal_moves,
                            move_from_uci, move_to_uci, push, status_problem, to_chess)
from search.tree.iterative import MAX_DEPTH, UNLIMITED, ClockPlanned, Iteration, TimePlan, tt_bits_for
from tuner.limits import DEFAULT_HASH_MB, DEPTH, HASH_MB, MAX_MOVETIME
from search.evaluation.evaluators import Evaluator, checked_evaluator, load_evaluator
from search.pls.move_model import MoveModel, load_move_model
from search.pls.pls import LEAF_MODEL_PLAY, MODEL_ABOVE_PLAY, START, STATIC_PRIOR, check_model_above, load_leaf_model
from tuner.arena.players import (DEFAULT_MOVE_MODEL, DEFAULT_SEARCH, SEARCH_CHOICES, Engine, PlsPlayer, Searchable,
                                 as_player, check_search, new_engine)
from search.play.searcher import PlaySearcher
from search.core.validate import check_board
from tuner import __version__
from tuner.compile_apart import KernelChild, load_engine_kernels
from tuner.compiling import CompileRefused, compile_count, refuse_compiles
from tuner.quickmove import QuickResult, quick_move
from tuner.quickmove import uci_score as quick_score

_M = TypeVar("_M")  # a move: the search's packed int or python-chess's Move

ENGINE_NAME = f"movetuner {__version__}"
ENGINE_AUTHOR = "the movetuner authors"
#: the ``Hash`` option's default and range (megabytes of transposition table; :mod:`tuner.limits`)
MIN_HASH_MB, MAX_HASH_MB = HASH_MB
#: the ``Threads`` option's default and range (Lazy SMP threads of the playing search)
DEFAULT_THREADS = 1
MAX_THREADS = 64
#: the ``MultiPV`` option's highest value (lines of the playing search)
MAX_MULTIPV = 64
#: the ``MoveOverhead`` option's default and range (milliseconds kept back from each move's time)
DEFAULT_OVERHEAD_MS = 30
MIN_OVERHEAD_MS = 0
MAX_OVERHEAD_MS = 5000
#: the ``TimePlan`` option's values (how a clock without ``movestogo`` allots its moves: by the
#: game's ply, :func:`search.tree.iterative.soft_by_ply`, or a thirtieth of the time left) and
#: its default, the search's own (:attr:`search.tree.iterative.ClockPlanned.plan_by_ply`)
TIME_PLANS = ("ply", "thirty")
DEFAULT_TIME_PLAN = "ply" if ClockPlanned.plan_by_ply else "thirty"
#: what a ``go`` with clock parameters but no time for either side searches (milliseconds)
MISSING_CLOCK_MOVETIME_MS = 1000
#: longest time a ``go`` parameter may give (milliseconds): the longest movetime of any search
MAX_MS = MAX_MOVETIME
#: what a ``go`` without a time limit says before waiting for the kernels to compile
COMPILING_INFO = ("compiling search kernels (first run only, up to a minute; "
                  "'tuner warmup' compiles them ahead)")
#: what a timed ``go`` says when the quick search answers it
QUICK_INFO = ("search kernels still compiling (first run only; 'tuner warmup' compiles them ahead): "
              "this move comes from a quick python-chess search")
#: what a timed ``go`` says when the quick search answers it while the kernels load from the cache
QUICK_LOADING_INFO = "search kernels still loading: this move comes from a quick python-chess search"
UNPLAYABLE_INFO = "the search cannot play this position: this move comes from a quick python-chess search"
#: the share of a timed ``go``'s soft limit it waits for kernels that load from the cache
_LOAD_WAIT_SHARE = 0.25
#: the share of a timed ``go``'s soft limit the quick search thinks (the rest of the interpreter's
#: time goes to the compilation: the numba search takes over sooner)
_QUICK_SHARE = 0.5
#: how long ``isready`` waits, at most, for kernels that load from numba's cache (seconds; they take
#: about 0.7 s on a warm cache, python-chess waits 10 s for ``readyok``)
_READY_LOAD_WAIT = 5.0
#: how long a stopped ``go`` without a time limit lets the quick search think (seconds)
_STOPPED_QUICK_SECONDS = 0.05


@dataclass(frozen=True, kw_only=True)
class UciOption:
    """One UCI option, a row of :data:`OPTIONS`: what the answer to ``uci`` declares and how
    ``setoption`` sets it."""

    #: its name as declared; ``setoption`` matches it ignoring case and spaces
    name: str
    #: its UCI type: ``"string"``, ``"spin"`` (an integer in ``[min, max]``), ``"combo"`` (one of
    #: ``vars``), ``"check"`` (``true`` or ``false``) or ``"button"`` (no value: an action)
    type: str
    #: the default declared; None for the engine's current value (``Weights``: what it plays with)
    default: str | None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()
    #: ``(engine, value)``: takes a value (a spin's already an integer in range, a combo's one of
    #: :attr:`vars` in lower case), or raises a one-line ``ValueError`` saying why not, which
    #: ``setoption`` answers in an ``info string``, keeping the current value
    set: Callable[[UciEngine, Any], None]
    #: ``engine``: the current value, which a refused ``setoption`` keeps (said in its ``info string``)
    current: Callable[[UciEngine], object]
    #: what it does
    doc: str

    @property
    def key(self) -> str:
        """The name as ``setoption`` matches it: lower case, no spaces."""
        return self.name.lower().replace(" ", "")

    def declaration(self, current: str) -> str:
        """The ``option name ...`` line of the answer to ``uci`` (``current``: the default when
        :attr:`default` is None)."""
        if self.type == "button":
            return f"option name {self.name} type button"
        line = f"option name {self.name} type {self.type} default {current if self.default is None else self.default}"
        if self.type == "spin":
            line += f" min {self.min} max {self.max}"
        return line + "".join(f" var {v}" for v in self.vars)



@dataclass(frozen=True, kw_only=True)
class GoLimits:
    """Parsed ``go`` parameters; times in milliseconds."""

    depth: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    wtime: int | None = None
    btime: int | None = None
    winc: int = 0
    binc: int = 0
    movestogo: int | None = None
    mate: int | None = None
    infinite: bool = False
    #: ``searchmoves``: the root moves to search, as UCI text (empty: all)
    searchmoves: tuple[str, ...] = ()
    #: ``go ponder``: search until ``ponderhit`` (then with the other limits) or ``stop``
    ponder: bool = False

    def max_depth(self) -> int:
        """The deepest iteration: ``depth``, and for ``mate N`` at most ``2N - 1`` plies (a mate
        in N moves is found by a full-width search of that depth)."""
        depth = self.depth if self.depth is not None else MAX_DEPTH
        return depth if self.mate is None else max(1, min(depth, 2 * self.mate - 1))

    def play_max_depth(self) -> int:
        """The deepest iteration of the playing search: ``depth``, and for ``mate N`` at most
        ``4N + 8`` (it reduces and prunes, so a mate in N may first show at more than ``2N - 1``
        plies; without a mate the search still ends)."""
        depth = self.depth if self.depth is not None else MAX_DEPTH
        return depth if self.mate is None else max(1, min(depth, 4 * self.mate + 8, MAX_DEPTH))

    def unbounded(self) -> bool:
        """Whether nothing ends the search but ``stop`` (``go infinite``, ``go ponder``, or no
        limit at all)."""
        return self.infinite or self.ponder or (self.depth is None and self.nodes is None and self.movetime is None
                                 and self.mate is None and self.wtime is None and self.btime is None)

    def for_side(self, white_to_move: bool) -> tuple[GoLimits, str | None]:
        """These limits with a clock for the side to move when the GUI gave none (and a note
        saying so): the other side's time when it is given, else (clock parameters without
        any time) ``movetime`` :data:`MISSING_CLOCK_MOVETIME_MS` unless another limit binds."""
        own, other = (self.wtime, self.btime) if white_to_move else (self.btime, self.wtime)
        if own is not None or self.infinite or self.ponder or self.movetime is not None:
            return self, None
        mine, theirs = ("wtime", "btime") if white_to_move else ("btime", "wtime")
        side = "White" if white_to_move else "Black"
        if other is not None:
            filled = replace(self, wtime=other) if white_to_move else replace(self, btime=other)
            return filled, f"go: no {mine} for {side} to move; using {theirs} {other} as its clock"
        clock_given = self.movestogo is not None or self.winc > 0 or self.binc > 0
        if clock_given and self.depth is None and self.nodes is None and self.mate is None:
            return (replace(self, movetime=MISSING_CLOCK_MOVETIME_MS),
                    f"go: no wtime or btime; searching movetime {MISSING_CLOCK_MOVETIME_MS}")
        return self, None

    def plan(self, white_to_move: bool, overhead_ms: int, ply: int | None = None) -> TimePlan | None:
        """The time plan for the side to move, or ``None`` for a search without a clock; on a
        clock without ``movestogo`` the move's share follows the game's ``ply`` when given
        (:func:`search.tree.iterative.soft_by_ply`)."""
        if self.movetime is not None:
            margin = min(overhead_ms, self.movetime // 10)
            return TimePlan.fixed(max(self.movetime - margin, 1) / 1000)
        left = self.wtime if white_to_move else self.btime
        if left is None:
            return None
        inc = self.winc if white_to_move else self.binc
        return TimePlan.for_clock(left / 1000, inc / 1000, self.movestogo, overhead_ms / 1000, ply)


#: ``go`` parameters with an integer value: (lowest valid value, highest valid value, value used
#: when it is missing or not an integer; ``None``: ignore the parameter). Out-of-range values are
#: clamped to the nearest valid one. A clock may be negative when the GUI's clock overran.
_INT_PARAMS: dict[str, tuple[int | None, int, int | None]] = {
    "depth": (*DEPTH, 1),
    "nodes": (1, UNLIMITED, 1),
    "movetime": (1, MAX_MS, 1),
    "wtime": (None, MAX_MS, 0),
    "btime": (None, MAX_MS, 0),
    "winc": (0, MAX_MS, 0),
    "binc": (0, MAX_MS, 0),
    "movestogo": (1, 1000, None),
    "mate": (1, MAX_DEPTH // 2, None),
}
_FLAGS = ("infinite", "ponder", "searchmoves")


def parse_threshold(text: str) -> float:
    """A ``PlsStart`` value: a probability in (0, 1] as a decimal (``0.03125``) or a fraction
    (``1/32``); one-line ``ValueError`` otherwise."""
    num, sep, den = text.strip().partition("/")
    try:
        value = float(num) / float(den) if sep else float(num)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{text[:20]!r} is not a number or a fraction") from None
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{text[:20]!r} is not a probability in (0, 1]")
    return value


def parse_go(tokens: Sequence[str]) -> tuple[GoLimits, list[str]]:
    """``go`` tokens (after the word ``go``) to limits, plus notes for the GUI.

    Never raises: as Stockfish does, a value out of range is clamped to the nearest valid one
    (``depth 0`` -> 1, ``nodes 0`` -> 1, ``movetime -5`` -> 1), a missing or non-integer value
    is replaced by the lowest valid one (``depth abc`` -> 1; a missing clock counts as 0 ms)
    and an unknown word is ignored, each with a note. ``searchmoves`` takes the words after it
    up to the next parameter (checked against the position when the search starts:
    :func:`root_moves`). ``ponder`` sets :attr:`GoLimits.ponder`.
    """
    values: dict[str, int] = {}
    infinite = ponder = False
    notes: list[str] = []
    searchmoves: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _INT_PARAMS:
            low, high, fallback = _INT_PARAMS[tok]
            text = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1] not in _INT_PARAMS \
                and tokens[i + 1] not in _FLAGS else None
            i += 1 if text is None else 2
            try:
                value = int(text) if text is not None else None
            except ValueError:
                value = None
            if value is None:
                problem = "needs a value" if text is None else f"value {text[:20]!r} is not an integer"
                if fallback is None:
                    notes.append(f"go: {tok} {problem}; ignored")
                    continue
                notes.append(f"go: {tok} {problem}; using {tok} {fallback}")
                value = fallback
            elif (low is not None and value < low) or value > high:
                clamped = high if value > high or low is None else low
                notes.append(f"go: {tok} {text[:20] if text else value} is out of range; using {tok} {clamped}")
                value = clamped
            values[tok] = value
        elif tok == "infinite":
            infinite = True
            i += 1
        elif tok == "ponder":
            ponder = True
            i += 1
        elif tok == "searchmoves":
            i += 1
            while i < len(tokens) and tokens[i] not in _INT_PARAMS and tokens[i] not in _FLAGS:
                searchmoves.append(tokens[i])
                i += 1
            if not searchmoves:
                notes.append("go: searchmoves names no move; searching all moves")
        else:
            notes.append(f"go: unknown parameter {tok[:20]!r} ignored")
            i += 1
    limits = GoLimits(depth=values.get("depth"), nodes=values.get("nodes"), movetime=values.get("movetime"),
                      wtime=values.get("wtime"), btime=values.get("btime"), winc=values.get("winc", 0),
                      binc=values.get("binc", 0), movestogo=values.get("movestogo"), mate=values.get("mate"),
                      infinite=infinite, searchmoves=tuple(searchmoves), ponder=ponder)
    return limits, notes


def root_moves(texts: Sequence[str], legal: dict[str, _M]) -> tuple[list[_M], list[str]]:
    """The moves of ``go searchmoves`` (UCI ``texts``) among a position's ``legal`` moves (by
    their UCI text), in the order given and once each, and notes for the GUI: each word that is
    not a legal move is ignored; when none is, every move is searched (an empty list)."""
    chosen: list[_M] = []
    notes = []
    for text in texts:
        move = legal.get(text)
        if move is None:
            notes.append(f"go: searchmoves: {text[:20]!r} is not a legal move here; ignored")
        elif move not in chosen:
            chosen.append(move)
    if texts and not chosen:
        notes.append("go: searchmoves names no legal move; searching all moves")
    return chosen, notes


class UciEngine:
    """The protocol state machine. Feed lines to :meth:`handle`; output goes to ``out``."""

    #: whether kernels missing from numba's cache compile in a child process (:mod:`tuner.compile_apart`);
    #: ``MOVETUNER_COMPILE_IN_CHILD=0`` compiles them in the engine's process, as before (for
    #: ``bench/coldstart.py --in-process``)
    compile_in_child = os.environ.get("MOVETUNER_COMPILE_IN_CHILD", "1").strip() != "0"

    def __init__(self, weights: Evaluator, weights_name: str = "classic", *, out: TextIO | None = None) -> None:
        self._out = out if out is not None else sys.stdout
        self._out_lock = threading.Lock()
        self.weights_name = weights_name
        self.weights = checked_evaluator(weights)
        self.hash_mb = DEFAULT_HASH_MB
        self.threads = DEFAULT_THREADS
        self.overhead_ms = DEFAULT_OVERHEAD_MS
        #: the ``TimePlan`` option: how a clock without ``movestogo`` allots its moves
        self.time_plan = DEFAULT_TIME_PLAN
        #: the ``Search``, ``MoveModel``, ``PlsStart``, ``PlsModelAbove`` and ``PlsLeafModel``
        #: options (the models loaded when first used)
        self.search = DEFAULT_SEARCH
        self.move_model_name = DEFAULT_MOVE_MODEL
        self.move_model: MoveModel | None = None
        self.pls_start = START
        self.pls_model_above = MODEL_ABOVE_PLAY
        self.leaf_model_name = LEAF_MODEL_PLAY
        self.leaf_model: MoveModel | str | None = LEAF_MODEL_PLAY  # a spec until loaded
        self._engine: Engine | None = None  # made by the first search (see searcher)
        #: the position ``go`` searches, as the search holds it and as python-chess does: the
        #: search's board is ``None`` while :attr:`_pending` (fen, moves) waits for the kernels
        #: that convert it; both are ``None`` after a rejected ``position`` (then
        #: :attr:`position_error` says why and ``go`` answers the null move)
        self.board: Board | None = None
        self.history: list[int] = []
        self.chess_board: chess.Board | None = chess.Board()
        self._pending: tuple[str, list[str]] | None = (STARTING_FEN, [])
        self.position_error: str | None = None
        self._worker: threading.Thread | None = None
        self._stop = threading.Event()
        self._busy = threading.Event()  # set from go until just before its bestmove
        #: the ``go ponder`` being searched: its words without ``ponder`` (None: not pondering),
        #: what ``ponderhit`` searches with its clock; and, while ``ponderhit`` ends the pondering
        #: search, set so that it ends without a ``bestmove`` (the search that follows gives it)
        self._ponder_go: list[str] | None = None
        self._ponder_hit = threading.Event()
        self.ponder = False  # the Ponder option: GUIs ask for it before they send go ponder
        self.multipv = 1  # the MultiPV option: lines the playing search reports at each depth
        self._told_compiling = False  # whether a go said COMPILING_INFO for the running warm-up
        self._pls_warm = False  # whether the probability-limited search's kernel was warmed up
        #: set once the kernels that convert a position are loaded; whether they load from the cache
        self._boundary = threading.Event()
        self._warm_count = compile_count()  # compilations before the running warm-up started
        self._apart = threading.Event()  # set while a child process compiles the kernels
        self._child = KernelChild()
        #: started by the first command (after answering ``uci``: the handshake does not share
        #: the interpreter with numba)
        self._warmup = threading.Thread(target=self._warm_up, kwargs={"boundary": True}, name="uci-warmup",
                                        daemon=True)

    @property
    def searcher(self) -> Engine:
        """The engine of the current options, made on first use (in the search thread: making
        one runs a kernel)."""
        if self._engine is None:
            self._engine = new_engine(self._player(), tt_bits_for(self.hash_mb), threads=self.threads)
        return self._engine

    def _player(self) -> Searchable:
        """The player of the current options (the leaf model loaded on first use)."""
        player = as_player(self.weights, self.search, self.move_model, self.pls_start, self.pls_model_above,
                           self.leaf_model)
        if isinstance(player, PlsPlayer):
            self.leaf_model = player.leaf_model
        return player

    def kernels_loading(self) -> bool:
        """Whether the background thread still loads (or compiles) kernels."""
        return self._warmup.is_alive()

    def start_warm_up(self) -> None:
        """Start loading the kernels in the background (once; every command but ``uci`` does it
        first, ``uci`` after its answer)."""
        with self._out_lock:
            if self._warmup.ident is None:
                self._warm_count = compile_count()
                self._warmup.start()

    # -------------------------------------------------------- output
    def send(self, line: str) -> None:
        with self._out_lock:
            self._out.write(line + "\n")
            self._out.flush()

    def info(self, message: str) -> None:
        self.send("info string " + " ".join(message.split()))

    # -------------------------------------------------------- input
    def handle(self, line: str) -> bool:
        """Process one input line; return ``False`` after ``quit``."""
        tokens = line.split()
        if not tokens:
            return True
        cmd, args = tokens[0], tokens[1:]
        handler = self._COMMANDS.get(cmd)
        if cmd not in ("uci", "quit"):
            self.start_warm_up()
        if handler is None:
            self.info(f"unknown command {line.strip()[:80]!r}")
            return True
        try:
            return handler(self, args) is not False
        except Exception as exc:  # never crash on input; say what went wrong
            self.info(f"error in {cmd}: {exc.__class__.__name__}: {exc}")
            return True
        finally:
            if cmd != "quit":
                self.start_warm_up()

    def run(self, stream: TextIO) -> None:
        """Read commands until ``quit`` or end of input."""
        while True:
            line = stream.readline()
            if not line:
                self._cmd_quit([])
                return
            if not self.handle(line):
                return

    # -------------------------------------------------------- commands
    def _cmd_uci(self, args: list[str]) -> None:
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {ENGINE_AUTHOR}")
        for option in OPTIONS:
            self.send(option.declaration(self.weights_name))
        self.send("uciok")

    def _rebuild(self, *, evaluator_changed: bool = False) -> None:
        """A new engine for the current options (its table empty: as after ``ucinewgame``), made
        by the next search; a new search kind or evaluator loads (or compiles) its kernels in the
        background, as at the start."""
        if self.search == "pls" and self.move_model is None:
            self.move_model = load_move_model(self.move_model_name)
        self._engine = None
        if evaluator_changed or (self.search == "pls" and not self._pls_warm):
            self._pls_warm = self._pls_warm or self.search == "pls"
            self._warm_count = compile_count()
            self._told_compiling = False
            self.start_warm_up()  # the first one, if no command started it yet
            self._warmup = threading.Thread(target=self._warm_up, args=(self._warmup,), name="uci-warmup-more",
                                            daemon=True)
            self._warmup.start()

    def _compiling(self) -> bool:
        """Whether numba compiled (or compiles) something since the running warm-up started, here
        or in the child of :mod:`tuner.compile_apart`."""
        return self._apart.is_set() or compile_count() > self._warm_count

    def _cmd_isready(self, args: list[str]) -> None:
        """``readyok`` once the kernels have loaded from numba's cache (up to
        :data:`_READY_LOAD_WAIT`), at once while they compile: a match runner that waits for
        ``readyok`` before its first ``go`` then gets the numba search on move one (at 100 ms a
        move, the quick search answered the first move of each engine process and lost games)."""
        self._wait_for_load(time.perf_counter() + _READY_LOAD_WAIT)
        self.send("readyok")

    def _searching(self) -> bool:
        """Whether a search has not yet answered ``bestmove``."""
        return self._busy.is_set()

    def _stop_before(self, cmd: str) -> None:
        """``cmd`` changes what the next search plays (the position, an option, the game): a
        search still running is stopped first and answers its ``bestmove``, as before a ``go``,
        so that the command is never lost and the next ``go`` searches what it said."""
        if self._searching():
            self.info(f"{cmd} while searching: the search stops first")
            self._cmd_stop([])

    def _cmd_ucinewgame(self, args: list[str]) -> None:
        self._stop_before("ucinewgame")
        if self._engine is not None:
            self._engine.clear()

    def _cmd_setoption(self, args: list[str]) -> None:
        self._stop_before("setoption")
        if not args or args[0] != "name":
            self.info("setoption: expected 'setoption name <id> [value <x>]'")
            return
        rest = args[1:]
        if "value" in rest:
            k = rest.index("value")
            name, value = " ".join(rest[:k]), " ".join(rest[k + 1:])
        else:
            name, value = " ".join(rest), ""
        option = _OPTION_BY_KEY.get(name.lower().replace(" ", ""))
        if option is None:
            self.info(f"setoption: unknown option {name!r}")
            return
        if option.type == "combo":
            choice = value.strip().lower()
            if choice not in option.vars:
                self._refuse_option(option, f"{value[:20]!r} is not one of {', '.join(option.vars)}")
                return
            self._set_option(option, choice)
            return
        if option.type == "button":
            self._set_option(option, None)
            return
        if option.type == "check":
            flag = value.strip().lower()
            if flag not in ("true", "false"):
                self._refuse_option(option, f"{value[:20]!r} is not true or false")
                return
            self._set_option(option, flag == "true")
            return
        if option.type != "spin":
            self._set_option(option, value)
            return
        try:
            number = int(value)
        except ValueError:
            self._refuse_option(option, f"value {value!r} is not an integer")
            return
        assert option.min is not None and option.max is not None
        if not option.min <= number <= option.max:
            self._refuse_option(option, f"value {number} is not between {option.min} and {option.max}")
            return
        self._set_option(option, number)

    def _set_option(self, option: UciOption, value: object) -> None:
        """Give ``option`` its checked ``value``; a refusal is said, the current value kept."""
        try:
            option.set(self, value)
        except ValueError as exc:
            self._refuse_option(option, str(exc))

    def _refuse_option(self, option: UciOption, reason: str) -> None:
        self.info(f"setoption {option.name}: {reason}; keeping {option.current(self)}")

    # -------------------------------------------------------- options (the setters of OPTIONS)
    def _set_weights(self, value: str) -> None:
        if not value:
            raise ValueError("no value given")
        self.weights = checked_evaluator(load_evaluator(value))
        self.weights_name = value
        self._rebuild(evaluator_changed=True)
        self.info(f"weights {value} loaded")

    def _clear_hash(self, _: None) -> None:
        """The ``Clear Hash`` button: forget the table (and the history), as ``ucinewgame``."""
        if self._engine is not None:
            self._engine.clear()

    def _set_multipv(self, lines: int) -> None:
        self.multipv = lines

    def _set_ponder(self, on: bool) -> None:
        self.ponder = on  # nothing to change: the GUI decides when to send go ponder

    def _set_hash(self, megabytes: int) -> None:
        self.hash_mb = megabytes
        self._rebuild()

    def _set_threads(self, threads: int) -> None:
        self.threads = threads
        if threads > 1 and self.search != "play":
            self.info(f"Threads {threads}: only the playing search (Search play) uses more than one thread")
        self._rebuild()

    def _set_overhead(self, milliseconds: int) -> None:
        self.overhead_ms = milliseconds

    def _set_time_plan(self, value: str) -> None:
        self.time_plan = value

    def _set_search(self, value: str) -> None:
        self.search = check_search(value.strip().lower())
        self._rebuild()

    def _set_move_model(self, value: str) -> None:
        self.move_model = load_move_model(value or DEFAULT_MOVE_MODEL)
        self.move_model_name = value or DEFAULT_MOVE_MODEL
        self._rebuild()
        self.info(f"move model {self.move_model_name} loaded")

    def _set_pls_start(self, value: str) -> None:
        self.pls_start = parse_threshold(value)
        self._rebuild()

    def _set_pls_leaf_model(self, value: str) -> None:
        spec = value.strip() or LEAF_MODEL_PLAY
        self.leaf_model = load_leaf_model(spec)
        self.leaf_model_name = spec
        self._rebuild()

    def _set_pls_model_above(self, value: str) -> None:
        text = value.strip()
        self.pls_model_above = check_model_above(0.0 if text in ("0", "0.0") else parse_threshold(text))
        self._rebuild()

    def _reject_position(self, reason: str) -> None:
        """Forget the position (``go`` answers ``bestmove 0000`` until a valid one) and say why:
        only when no valid position was ever given, or the search's rules refuse one that
        python-chess accepted (:meth:`_keep_position`)."""
        self.board, self.history, self.position_error = None, [], reason
        self.chess_board, self._pending = None, None
        self.info(f"position: {reason}; no position until a valid one arrives (go answers bestmove 0000)")

    def _cmd_position(self, args: list[str]) -> None:
        self._stop_before("position")
        if not args or args[0] not in ("startpos", "fen"):
            self._keep_position("expected 'position startpos|fen <fen> [moves ...]'", None, [])
            return
        if "moves" in args:
            k = args.index("moves")
            spec, moves = args[:k], args[k + 1:]
        else:
            spec, moves = args, []
        if spec[0] == "startpos":
            if len(spec) > 1:
                self._keep_position(f"unexpected {' '.join(spec[1:])[:80]!r} after startpos", None, [])
                return
            fen = STARTING_FEN
        else:
            fen = " ".join(spec[1:])
        try:
            self._set_position(fen, moves)
        except Exception as exc:  # a ValueError names the problem; anything else is our bug, but still no crash
            self._keep_position(str(exc) if isinstance(exc, ValueError) else f"{exc.__class__.__name__}: {exc}",
                                fen, moves)

    def _set_position(self, fen: str, moves: Sequence[str]) -> None:
        """Make ``fen`` with ``moves`` the position; a ``ValueError`` (nothing changed) when the
        rules refuse it."""
        # the search's board when its kernels are loaded, else python-chess's until the search
        # converts it (the rules are the same; the messages say the same problems): never waiting
        # for the kernels, or the next command (a timed go) would be read late
        if self._boundary.is_set():
            board, history = _core_position(fen, moves)
            self.board, self.history, self._pending, self.chess_board = board, history, None, None
            if self._warmup.is_alive():  # the quick search may play: python-chess's board, with the game
                try:
                    self.chess_board = _chess_position(fen, moves)
                except ValueError:  # (then made from the search's board, without the game's moves)
                    pass
        else:
            self.chess_board = _chess_position(fen, moves)
            self.board, self.history, self._pending = None, [], (fen, list(moves))
        self.position_error = None

    def _keep_position(self, reason: str, fen: str | None, moves: Sequence[str]) -> None:
        """A ``position`` line the rules refuse (issue 58): play on from the position after the
        legal moves before the first illegal one when its FEN is valid, else keep the last valid
        position, and say which in an ``info string``; no position at all (``go`` answers
        ``bestmove 0000``) only when there was none before.

        Where python-chess's rules take what the search's refuse (a counter past 2^31 - 1,
        castling written as the king taking its rook, more pieces than promotions explain), the
        search takes the FEN with its counters cut to its range and the moves as python-chess
        reads them; failing that (the material), the position is kept as python-chess's board
        and each ``go`` on it is answered by the quick python-chess search."""
        prefix = _legal_prefix(fen, moves) if fen is not None else None
        if prefix is not None:
            assert fen is not None
            whole = len(prefix) == len(moves)
            for candidate in dict.fromkeys((fen, _counters_in_range(fen))):
                try:
                    self._set_position(candidate, prefix)
                except Exception:  # noqa: BLE001 - python-chess accepted what the search refuses: try on
                    continue
                if whole:
                    self.info(f"position: {reason}; read as {' '.join([candidate.strip(), *(['moves', *prefix] if prefix else [])])[:200]!r}")
                else:
                    self.info(f"position: {reason}; playing from the position after its {len(prefix)} legal "
                              f"move{'s' if len(prefix) != 1 else ''} before that")
                return
            try:
                cboard = _chess_position(fen, prefix)
            except ValueError:
                pass
            else:  # the search cannot play it at all: python-chess's board, the quick search
                self.board, self.history, self._pending, self.chess_board = None, [], None, cboard
                self.position_error = None
                self.info(f"position: {reason}; the search cannot play this position: its moves come from the quick "
                          "python-chess search")
                return
        if self.board is None and self._pending is None and self.chess_board is None:
            self._reject_position(reason)
            return
        self.info(f"position: {reason}; keeping the last valid position")

    def _cmd_go(self, args: list[str]) -> None:
        received = time.perf_counter()  # the clock runs from here, through stopping a search
        # one bestmove per go, in order: a running search is stopped and answers first (also one
        # that has just cleared its busy flag and not yet written its bestmove)
        self._cmd_stop([])
        limits, notes = parse_go(args)
        self._ponder_go = [a for a in args if a != "ponder"] if limits.ponder else None
        board = None if self.board is None else self.board.copy()
        cboard = None if self.chess_board is None else self.chess_board.copy()
        white = cboard.turn == chess.WHITE if cboard is not None else board is None or int(board[W_STM]) == 0
        limits, clock_note = limits.for_side(white)
        for note in [*notes, clock_note] if clock_note else notes:
            self.info(note)
        if board is None and self._pending is None and cboard is None:
            self.info(f"go: no valid position ({self.position_error}); answering the null move")
        self._stop.clear()
        if self._engine is not None:
            self._engine.rearm()
        self._busy.set()
        position = _Position(board, list(self.history), cboard, self._pending)
        self._worker = threading.Thread(target=self._search, args=(position, limits, received),
                                        name="uci-search", daemon=True)
        self._worker.start()

    def _cmd_stop(self, args: list[str]) -> None:
        self._stop.set()
        worker = self._worker
        while worker is not None and worker.is_alive():
            engine = self._engine  # None while the search thread makes it
            if engine is not None:
                engine.abort()  # repeated: the kernel resets its counter when an iteration starts
            worker.join(timeout=0.002)

    def _cmd_quit(self, args: list[str]) -> bool:
        self._cmd_stop([])
        self._child.stop()
        return False

    def _cmd_ponderhit(self, args: list[str]) -> None:
        """The opponent played the move pondered on: the pondering search ends without an
        answer and the same ``go`` is searched again with its limits, the clock running from
        now; the table keeps what the pondering found, so the new search's first iterations
        are quick."""
        words = self._ponder_go
        if words is None or not self._busy.is_set():
            self.info("ponderhit: no search is pondering; ignored")
            return
        self._ponder_hit.set()
        try:
            self._cmd_stop([])
        finally:
            self._ponder_hit.clear()
        self._cmd_go(words)

    def _answer(self, line: str) -> None:
        """Send a search's ``bestmove`` ``line`` and mark the engine idle, unless ``ponderhit``
        ended this (pondering) search: the search that follows answers its ``go``."""
        if self._ponder_hit.is_set():
            return
        self._busy.clear()  # the GUI may send the next command as soon as it reads bestmove
        self.send(line)

    def _cmd_debug(self, args: list[str]) -> None:
        pass

    _COMMANDS: dict[str, Callable[[UciEngine, list[str]], bool | None]] = {
        "uci": _cmd_uci,
        "isready": _cmd_isready,
        "ucinewgame": _cmd_ucinewgame,
        "setoption": _cmd_setoption,
        "position": _cmd_position,
        "go": _cmd_go,
        "stop": _cmd_stop,
        "quit": _cmd_quit,
        "ponderhit": _cmd_ponderhit,
        "debug": _cmd_debug,
    }

    # -------------------------------------------------------- search thread
    def _warm_up(self, after: threading.Thread | None = None, *, boundary: bool = False) -> None:
        """Load (or compile) the numba kernels of a ``go`` before the first one (after the
        warm-up ``after``, still running or not); with ``boundary`` first those that convert a
        ``position`` (then :attr:`_boundary` is set). Kernels missing from numba's cache are
        compiled in a child process (:mod:`tuner.compile_apart`; :attr:`_apart` set meanwhile),
        then loaded from the cache; if the child fails, here (``info string`` says why)."""
        if after is not None:
            after.join()
        player = self._player()
        on_boundary = self._boundary.set if boundary else None
        if self.compile_in_child:
            try:
                with _collector_paused(), refuse_compiles():
                    load_engine_kernels(player, on_boundary=on_boundary)
                return
            except CompileRefused:
                self._apart.set()
                try:
                    problem = self._child.compile(player)
                finally:
                    self._apart.clear()
                if problem is not None:
                    self.info(f"{problem}; compiling in the engine's process instead")
        with _collector_paused():
            load_engine_kernels(player, on_boundary=on_boundary)

    def _kernels_ready(self, limits: GoLimits, plan: TimePlan | None, start: float) -> bool:
        """Whether this ``go`` searches with the kernels (loaded now, or within the wait the
        module docstring gives) rather than with the quick search."""
        warm = self._warmup
        if not warm.is_alive():
            return True
        if plan is None:  # no time limit: wait for the kernels, or until stop
            while warm.is_alive() and not self._stop.is_set():
                if self._compiling():  # (not while they load from the cache)
                    with self._out_lock:
                        say, self._told_compiling = not self._told_compiling, True
                    if say:
                        self.info(COMPILING_INFO)
                warm.join(0.01)
            return not warm.is_alive()
        return self._wait_for_load(start + _LOAD_WAIT_SHARE * plan.soft, stoppable=True)

    def _wait_for_load(self, until: float, *, stoppable: bool = False) -> bool:
        """Wait while the kernels load from numba's cache, up to ``until`` (``perf_counter``
        seconds): not while they compile, nor, when ``stoppable``, once ``stop`` came. Whether
        they are loaded."""
        warm = self._warmup
        while warm.is_alive():
            if self._compiling() or (stoppable and self._stop.is_set()) or time.perf_counter() >= until:
                return False
            warm.join(0.005)
        return True

    def _answer_quick(self, board: chess.Board | None, limits: GoLimits, plan: TimePlan | None, start: float,
                      note: str | None = None) -> None:
        """Answer this ``go`` with the quick search on ``board`` (:meth:`_quick`)."""
        answer = self._quick(board, limits, plan, start, note=note)
        if limits.unbounded():
            self._stop.wait()  # UCI: in infinite mode, answer only after stop
        self._answer(answer)

    def _searchmoves(self, texts: Sequence[str], legal: dict[str, _M]) -> list[_M]:
        """:func:`root_moves` of ``go searchmoves``, its notes sent as ``info string``."""
        only, notes = root_moves(texts, legal)
        for text in notes:
            self.info(text)
        return only

    def _quick(self, board: chess.Board | None, limits: GoLimits, plan: TimePlan | None, start: float,
               note: str | None = None) -> str:
        """The ``bestmove`` line of the quick search (:mod:`tuner.quickmove`) on ``board``, within
        half of ``plan``'s soft limit (a stopped search without a plan: a few hundredths of a
        second)."""
        self.info(note if note is not None else QUICK_INFO if self._compiling() else QUICK_LOADING_INFO)
        if board is None:
            return "bestmove 0000"
        if plan is not None and not self._stop.is_set():
            deadline, stop = start + _QUICK_SHARE * plan.soft, self._stop
        else:
            deadline, stop = time.perf_counter() + _STOPPED_QUICK_SECONDS, None

        def report(r: QuickResult) -> None:
            ms = max(1, int(1000 * (time.perf_counter() - start)))
            bound = " lowerbound" if r.partial else ""
            self.send(f"info depth {r.depth} score {quick_score(r.score)}{bound} nodes {r.nodes} "
                      f"nps {int(r.nodes * 1000 / ms)} time {ms} pv {' '.join(m.uci() for m in r.pv)}")

        only = self._searchmoves(limits.searchmoves, {m.uci(): m for m in board.legal_moves})
        result = quick_move(board, deadline, stop=stop, max_depth=limits.max_depth(), on_depth=report,
                            root_moves=only)
        if result is None:
            return "bestmove 0000"
        answer = f"bestmove {result.move.uci()}"
        return answer + (f" ponder {result.pv[1].uci()}" if len(result.pv) > 1 else "")

    def plan(self, position: _Position, limits: GoLimits, white_to_move: bool) -> TimePlan | None:
        """The time plan of a ``go`` with ``limits`` at ``position`` (``None``: no time limit):
        :meth:`GoLimits.plan` with the move overhead, and on a clock the game's ply when the
        ``TimePlan`` option is ``ply``."""
        if limits.infinite or limits.ponder:
            return None
        return limits.plan(white_to_move, self.overhead_ms, _game_ply(position) if self.time_plan == "ply" else None)

    def _search(self, position: _Position, limits: GoLimits, start: float) -> None:
        """Search ``position`` and answer ``bestmove``; ``start``: when ``go`` arrived
        (``time.perf_counter``)."""
        cboard = position.chess_board
        white = cboard.turn == chess.WHITE if cboard is not None else \
            position.board is None or int(position.board[W_STM]) == 0
        plan = self.plan(position, limits, white)
        has_position = position.board is not None or position.pending is not None
        if position.board is None and position.pending is None and cboard is not None:
            self._answer_quick(cboard, limits, plan, start, note=UNPLAYABLE_INFO)  # python-chess's board only
            return
        if has_position and not self._kernels_ready(limits, plan, start):
            if cboard is None and position.board is not None:
                cboard = to_chess(position.board)
            answer = self._quick(cboard, limits, plan, start)
            if limits.unbounded():
                self._stop.wait()  # UCI: in infinite mode, answer only after stop
            self._answer(answer)
            return
        board, history = position.board, position.history
        if board is None and position.pending is not None:
            try:
                board, history = _core_position(*position.pending)
                self.board, self.history, self._pending, self.chess_board = board, history, None, None
            except Exception as exc:  # noqa: BLE001 - python-chess accepted what the search's rules refuse
                self._pending = None
                self._keep_position(str(exc), *position.pending)
                if self.board is None:  # not even with its counters cut: python-chess's board, the quick search
                    self._answer_quick(self.chess_board if self.chess_board is not None else cboard, limits, plan,
                                       start, note=UNPLAYABLE_INFO)
                    return
                board, history = self.board, list(self.history)
        waited = time.perf_counter() - start  # the clock was running while the kernel loaded
        if plan is not None:
            plan = replace(plan, soft=max(plan.soft - waited, 0.0), hard=max(plan.hard - waited, 0.001))
        max_depth = limits.max_depth()

        def counts(nodes: int) -> str:
            ms = max(1, int(1000 * (time.perf_counter() - start)))
            return f"nodes {nodes} nps {int(nodes * 1000 / ms)} time {ms}"

        def report(it: Iteration) -> None:
            sel = f" seldepth {it.seldepth}" if it.seldepth else ""
            sel += f" multipv {it.multipv}" if self.multipv > 1 else ""
            self.send(f"info depth {it.depth}{sel} score {it.uci_score()} {counts(it.total_nodes)} "
                      f"pv {' '.join(move_to_uci(m) for m in it.pv)}")

        best = None
        only: list[int] = []
        if board is not None and limits.searchmoves:
            only = self._searchmoves(limits.searchmoves, {move_to_uci(int(m)): int(m) for m in legal_moves(board)})
        try:
            if board is not None:
                searcher = self.searcher
                if self._stop.is_set():
                    searcher.abort()  # a stop that came while the engine was made
                if only and not isinstance(searcher, PlaySearcher):
                    self.info(f"go: searchmoves: the {self.search} search searches every root move; only the "
                              "play search keeps to searchmoves")
                    only = []
                if self.multipv > 1 and not isinstance(searcher, PlaySearcher):
                    self.info(f"go: MultiPV {self.multipv}: the {self.search} search gives one line; only the "
                              "play search gives several")
                if isinstance(searcher, PlaySearcher):
                    # go mate N: the selective search deepens until it finds a mate in N or fewer
                    best = searcher.think(board, history, max_depth=limits.play_max_depth(), node_limit=limits.nodes,
                                          plan=plan, on_iteration=report, mate_moves=limits.mate, root_moves=only,
                                          multipv=self.multipv)
                else:
                    best = searcher.think(board, history, max_depth=max_depth, node_limit=limits.nodes,
                                          plan=plan, on_iteration=report)
                if best is not None and searcher.searched_nodes > best.total_nodes:
                    self.send(f"info {counts(searcher.searched_nodes)}")  # with the discarded iteration
        except Exception as exc:  # keep the protocol alive: report and fall back to a legal move
            self.info(f"search failed: {exc.__class__.__name__}: {exc}")
        if limits.unbounded():
            self._stop.wait()  # UCI: in infinite mode, answer only after stop
        pv = best.pv if best is not None else ()
        if not pv and board is not None:
            legal = only or legal_moves(board)
            pv = (int(legal[0]),) if len(legal) else ()
        answer = "bestmove " + (move_to_uci(pv[0]) if pv else "0000")
        if len(pv) > 1:
            answer += f" ponder {move_to_uci(pv[1])}"
        self._answer(answer)


@dataclass(frozen=True)
class _Position:
    """What a ``go`` searches: the search's board and the keys of the positions before it (or
    ``None`` while ``pending``, the ``position`` command's FEN and moves, waits for the kernels
    that convert it), and python-chess's board (``None``: make it from the search's)."""

    board: Board | None
    history: list[int]
    chess_board: chess.Board | None
    pending: tuple[str, list[str]] | None


def _game_ply(position: _Position) -> int | None:
    """The game's ply at ``position`` (0 before White's first move) from its FEN's move number,
    side to move and the moves after it; ``None`` when unknown (no position yet, or a FEN whose
    counters do not parse)."""
    if position.chess_board is not None:
        return position.chess_board.ply()
    if position.board is not None:
        return max(0, 2 * (int(position.board[W_FULLMOVE]) - 1) + int(position.board[W_STM]))
    if position.pending is not None:
        fen, moves = position.pending
        fields = fen.split()
        try:
            fullmove = int(fields[5]) if len(fields) > 5 else 1
        except ValueError:
            return None
        return max(0, 2 * (fullmove - 1) + (len(fields) > 1 and fields[1] == "b")) + len(moves)
    return None


#: the engine's options, in the order the answer to ``uci`` declares them
OPTIONS: tuple[UciOption, ...] = (
    UciOption(name="Weights", type="string", default=None,
              set=UciEngine._set_weights, current=lambda e: e.weights_name,
              doc="the evaluator: a built-in weights name, a weights file or a .mtnn network"),
    UciOption(name="Hash", type="spin", default=str(DEFAULT_HASH_MB), min=MIN_HASH_MB, max=MAX_HASH_MB,
              set=UciEngine._set_hash, current=lambda e: e.hash_mb,
              doc="the transposition table's size in megabytes (a new, empty table)"),
    UciOption(name="Threads", type="spin", default=str(DEFAULT_THREADS), min=1, max=MAX_THREADS,
              set=UciEngine._set_threads, current=lambda e: e.threads,
              doc="threads of the playing search (Lazy SMP over one table; not deterministic above 1)"),
    UciOption(name="Clear Hash", type="button", default="", set=UciEngine._clear_hash, current=lambda e: "",
              doc="forget the transposition table and the move-ordering history (as ucinewgame)"),
    UciOption(name="MultiPV", type="spin", default="1", min=1, max=MAX_MULTIPV, set=UciEngine._set_multipv,
              current=lambda e: e.multipv,
              doc="lines the playing search reports at each depth (info ... multipv N), ranked by score; "
                  "the move played is line 1's"),
    UciOption(name="Ponder", type="check", default="false", set=UciEngine._set_ponder,
              current=lambda e: str(e.ponder).lower(),
              doc="whether the GUI may let the engine think on the opponent's time (go ponder, ponderhit)"),
    UciOption(name="MoveOverhead", type="spin", default=str(DEFAULT_OVERHEAD_MS), min=MIN_OVERHEAD_MS,
              max=MAX_OVERHEAD_MS, set=UciEngine._set_overhead, current=lambda e: e.overhead_ms,
              doc="milliseconds kept back from each move's time for the GUI and the connection"),
    UciOption(name="TimePlan", type="combo", default=DEFAULT_TIME_PLAN, vars=TIME_PLANS,
              set=UciEngine._set_time_plan, current=lambda e: e.time_plan,
              doc="how a clock without movestogo allots its moves: ply (a share of the time left that grows "
                  "with the game's ply, Stockfish 16's optimum time) or thirty (a thirtieth of the time left)"),
    UciOption(name="Search", type="combo", default=DEFAULT_SEARCH, vars=SEARCH_CHOICES,
              set=UciEngine._set_search, current=lambda e: e.search,
              doc="the search: play (selective alpha-beta, the default), exact (the full-width alpha-beta "
                  "training uses; depth is its old name) or pls (probability-limited)"),
    UciOption(name="MoveModel", type="string", default=DEFAULT_MOVE_MODEL,
              set=UciEngine._set_move_model, current=lambda e: e.move_model_name,
              doc="the move-probability model of the pls search (a built-in name or a file)"),
    UciOption(name="PlsStart", type="string", default=str(START),
              set=UciEngine._set_pls_start, current=lambda e: e.pls_start,
              doc="the pls search's first threshold, a probability in (0, 1]"),
    UciOption(name="PlsModelAbove", type="string", default=str(MODEL_ABOVE_PLAY),
              set=UciEngine._set_pls_model_above, current=lambda e: e.pls_model_above,
              doc="the pls search evaluates its move model at nodes whose path probability is above this "
                  "(0: everywhere, 1: nowhere), its leaf model below"),
    UciOption(name="PlsLeafModel", type="string", default=LEAF_MODEL_PLAY,
              set=UciEngine._set_pls_leaf_model, current=lambda e: e.leaf_model_name,
              doc=f"what splits the pls search's probability below PlsModelAbove: a pre-move model (a built-in "
                  f"name or a file) or {STATIC_PRIOR} (a static prior)"),
)
_OPTION_BY_KEY = {option.key: option for option in OPTIONS}


def _core_position(fen: str, moves: Sequence[str]) -> tuple[Board, list[int]]:
    """The search's board after ``moves`` (UCI) from ``fen``, and the keys of the positions
    before it; one-line ``ValueError`` naming the problem."""
    board = check_board(from_fen(fen))
    history: list[int] = []
    for uci in moves:
        m = move_from_uci(board, uci)
        history.append(int(board[W_KEY]))
        board = push(board, m)
    return board, history


def _legal_prefix(fen: str, moves: Sequence[str]) -> list[str] | None:
    """The moves of ``moves`` (UCI) legal from ``fen`` up to the first that is not, or ``None``
    when ``fen`` itself is not a valid position (python-chess's rules)."""
    try:
        board = _chess_position(fen, [])
    except ValueError:
        return None
    out: list[str] = []
    for uci in moves:
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            break
        if not move or move.uci() != uci or not board.is_legal(move):
            break
        move = board.parse_uci(uci)  # castling written as the king taking its rook: the king's move
        board.push(move)
        out.append(move.uci())
    return out


def _counters_in_range(fen: str) -> str:
    """``fen`` with a halfmove clock or fullmove number beyond the search's range (0 or 1 to
    2^31 - 1: :data:`search.core.convert.MAX_FEN_COUNTER`) cut to it; other fields as given."""
    fields = fen.split()
    for i, low in ((4, 0), (5, 1)):
        if len(fields) > i and fields[i].isascii() and fields[i].isdigit():
            fields[i] = str(min(max(int(fields[i][:30]), low), MAX_FEN_COUNTER))
    return " ".join(fields)


def _chess_position(fen: str, moves: Sequence[str]) -> chess.Board:
    """:func:`_core_position`'s position as python-chess's board, without numba (its checks:
    python-chess's ``status()``, and the search's own that need no kernel)."""
    parts = fen.split()
    if not 4 <= len(parts) <= 6:
        raise InvalidFenError(f"invalid FEN {fen!r}: expected 4 to 6 fields, found {len(parts)}")
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise InvalidFenError(f"invalid FEN {fen!r}: {exc}") from None
    if not board.is_valid():
        raise InvalidFenError(f"impossible position in FEN {fen!r}: {status_problem(board.status()) or repr(board.status())}")
    for uci in moves:
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            move = chess.Move.null()
        if not move or move.uci() != uci or not board.is_legal(move):
            raise IllegalMoveError(f"illegal move {uci!r} in {board.fen(en_passant='fen')}")
        board.push(move)
    return board


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while numba compiles or loads kernels, then freeze
    what exists (:func:`gc.freeze`: later collections skip it).

    Compiling or loading creates hundreds of thousands of objects; with the collector on, its
    full collections over them stop every thread for a tenth of a second or more (the quick
    search's late answers to ``go movetime 100``), and the engine's later collections would scan
    them all again. Frozen, they are never scanned (nor freed: compilation's garbage cycles stay
    in memory). What it costs and what collecting only the young generations did instead:
    ``docs/commands.md``, ``tuner uci``.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def serve(weights_spec: str = "classic", stdin: TextIO | None = None, stdout: TextIO | None = None) -> bool:
    """Run the engine on ``stdin``/``stdout`` until ``quit`` or end of input; return whether
    kernels still compile in the background (the caller may then end the process without
    waiting for them).

    Raises ``ValueError`` (:class:`~search.params.weights.WeightsFileError`,
    :class:`~search.evaluation.network.NetworkFileError`) if ``weights_spec`` cannot be loaded.
    """
    engine = UciEngine(checked_evaluator(load_evaluator(weights_spec)), weights_spec, out=stdout)
    gc.freeze()  # the imports' objects: the engine's collections never scan them (see _collector_paused)
    engine.run(stdin if stdin is not None else sys.stdin)
    return engine.kernels_loading()
