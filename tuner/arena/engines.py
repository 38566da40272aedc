"""External UCI and XBoard engines as match opponents, through python-chess's :mod:`chess.engine`.

An :class:`EngineSpec` names an engine: its command line (split as a POSIX shell would,
:func:`shlex.split`), its protocol (``uci``, or ``xboard``: CECP protocol version 2, driven by
:class:`chess.engine.XBoardProtocol`, which needs the engine's ``ping`` and ``setboard``
features; its options are the ``feature option="..."`` ones and ``memory``/``cores``) and the
options to set (``--engine-options "Skill Level=0"``,
``UCI_LimitStrength=true,UCI_Elo=1500``; python-chess checks names and values against the
engine's ``option`` lines). :class:`ExternalEngine` runs one engine process
(:meth:`chess.engine.SimpleEngine.popen_uci` or ``popen_xboard``) and plays moves for :mod:`tuner.arena.match`: the
position goes to the engine as ``position fen <opening> moves ...`` (the game's history, so
the engine sees repetitions; an XBoard engine gets ``new``, ``force``, ``setboard`` and the
moves), each game starts with ``ucinewgame`` (XBoard: ``new``), and the search limit is the
match's ``--depth``, ``--nodes`` or ``--movetime``, or its clock, as a :class:`chess.engine.Limit`
(XBoard: ``sd``, ``nps``+``st``, ``st``, or ``level`` with ``time``/``otim``).

Failures never hang the match and are never scored: every exchange with the engine has a
time limit (``engine_timeout`` seconds to start and answer ``uci``/``isready``, and that much
beyond ``movetime`` for each move, also for ``depth``/``nodes`` searches that python-chess
alone would wait for forever). An engine that cannot start, rejects an option, exceeds the
time limit, exits mid-game or answers without a legal move raises :class:`EngineFailure`, a
one-line :class:`~tuner.errors.TunerError` naming the engine, the game and the ply, with its
:attr:`EngineFailure.kind`; the engine process is killed. By default the match then stops (a
forfeit would turn a broken set-up into a rating); with the match's ``forfeit`` setting (used by
``tuner bench ladder``) the failing engine loses that game and a fresh process plays the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import chess
import chess.engine

from tuner.errors import TunerError

#: a mate score as :mod:`tuner.arena.match` records it, in centipawns
MATE_CP = 100_000
#: seconds an engine may take to start, or beyond the move's own time limit, by default
DEFAULT_TIMEOUT = 60.0


#: the protocols an external engine may speak
PROTOCOLS = ("uci", "xboard")


class EngineFailure(TunerError):
    """An external engine that cannot be used; the message is one line naming it. ``kind``
    says what happened, short enough for a game's termination: ``cannot start``, ``no move in
    time``, ``exited``, ``illegal move`` or ``engine error``."""

    def __init__(self, message: str, kind: str = "engine error") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class EngineSpec:
    """An external engine: ``command`` (argv), ``options`` (option name, value as text) in
    the order given, ``label``, the name it plays under (the command as given, then the
    options in parentheses), and ``protocol``, one of :data:`PROTOCOLS`."""

    command: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    label: str = ""
    protocol: str = "uci"

    @property
    def name(self) -> str:
        return self.label or " ".join(self.command)


def parse_options(text: str) -> tuple[tuple[str, str], ...]:
    """``"Name=Value,Name2=Value2"`` to ``(("Name", "Value"), ("Name2", "Value2"))``. Names
    may hold spaces (``Skill Level=0``); a value cannot hold a comma. ``ValueError`` (one line)
    for an item without ``=`` or with an empty name, or a name given twice."""
    options: list[tuple[str, str]] = []
    for item in text.split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise ValueError(f"engine option {item.strip()!r}: expected Name=Value")
        if any(n.lower() == name.lower() for n, _ in options):
            raise ValueError(f"engine option {name!r} given twice")
        options.append((name, value))
    return tuple(options)


def engine_specs(commands: list[str] | None, options: list[str] | None,
                 protocols: list[str] | None = None) -> list[EngineSpec]:
    """The engines of ``--engine CMD`` (repeatable), ``--engine-options`` and
    ``--engine-protocol`` (each given once: for every engine; or once per ``--engine``, in the
    same order). ``ValueError`` (one line) for an empty command, unbalanced quotes, a count
    mismatch, an unknown protocol or malformed options."""
    commands = commands or []
    options = options or []
    protocols = protocols or []
    for flag, given in (("--engine-options", options), ("--engine-protocol", protocols)):
        if given and not commands:
            raise ValueError(f"{flag} without --engine")
        if len(given) not in (0, 1, len(commands)):
            raise ValueError(f"{flag} given {len(given)} times for {len(commands)} engines: "
                             "give it once (for every engine) or once per --engine")
    for protocol in protocols:
        if protocol not in PROTOCOLS:
            raise ValueError(f"--engine-protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    specs = []
    for i, command in enumerate(commands):
        try:
            argv = tuple(shlex.split(command))
        except ValueError as exc:
            raise ValueError(f"--engine {command!r}: {exc}") from None
        if not argv:
            raise ValueError("--engine: empty command")
        text = options[0] if len(options) == 1 else (options[i] if options else "")
        opts = parse_options(text)
        label = command.strip() + (f" ({','.join(f'{n}={v}' for n, v in opts)})" if opts else "")
        protocol = protocols[0] if len(protocols) == 1 else (protocols[i] if protocols else "uci")
        specs.append(EngineSpec(argv, opts, label, protocol))
    return specs


def white_cp(info: chess.engine.InfoDict) -> int:
    """The engine's reported score in White's view, in centipawns; a mate in n moves as
    +-(:data:`MATE_CP` + n); 0 when the engine reported no score."""
    score = info.get("score")
    if score is None:
        return 0
    cp = score.white().score(mate_score=10**7)
    if cp is None:  # cannot happen with mate_score given
        return 0
    if abs(cp) >= 10**6:
        moves = max(1, abs(score.white().mate() or 0))
        return MATE_CP + moves if cp > 0 else -(MATE_CP + moves)
    return int(cp)


class ExternalEngine:
    """One running UCI or XBoard engine (a context manager: the process ends on exit).

    ``timeout``: seconds allowed to start (``uci``/``isready``, XBoard's ``protover 2`` and
    ``ping``, setting the options) and, per move, beyond the limit's own time. Raises
    :class:`EngineFailure` when it cannot start. :attr:`failed` is set once a move failed
    (the process is then gone).
    """

    def __init__(self, spec: EngineSpec, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.spec = spec
        self.timeout = float(timeout)
        self.failed = False
        self._game: object = object()
        xboard = spec.protocol == "xboard"
        if spec.protocol not in PROTOCOLS:
            raise EngineFailure(f"engine {spec.name!r}: unknown protocol {spec.protocol!r} "
                                f"(expected one of {', '.join(PROTOCOLS)})", "cannot start")
        popen = chess.engine.SimpleEngine.popen_xboard if xboard else chess.engine.SimpleEngine.popen_uci
        _quiet_closed_loop_warning()
        if xboard:
            _quiet_engine_log()
        try:
            self.engine = popen(list(spec.command), timeout=self.timeout)
        except TimeoutError:  # asyncio and concurrent.futures raise the builtin since 3.11 (an OSError: first)
            hello = "'feature done=1'" if xboard else "'uciok'"
            raise EngineFailure(f"engine {spec.name!r}: no {hello} within {self.timeout:g} s of starting",
                                "cannot start") from None
        except OSError as exc:
            raise EngineFailure(f"engine {spec.name!r}: cannot start {spec.command[0]!r} "
                                f"({exc.strerror or exc.__class__.__name__})", "cannot start") from None
        except chess.engine.EngineError as exc:  # EngineTerminatedError included: it exited at once
            raise EngineFailure(f"engine {spec.name!r}: failed to start ({_one_line(exc)})", "cannot start") from None
        try:
            if spec.options:
                self.engine.configure({name: value for name, value in spec.options})
            self.engine.ping()
        except TimeoutError:  # asyncio and concurrent.futures raise the builtin since 3.11
            self.close()
            answer = "'pong'" if xboard else "'readyok'"
            raise EngineFailure(f"engine {spec.name!r}: no {answer} within {self.timeout:g} s", "cannot start") from None
        except chess.engine.EngineError as exc:
            self.close()
            raise EngineFailure(f"engine {spec.name!r}: {_one_line(exc)}", "cannot start") from None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """End the engine: ``quit`` when it is responsive, else kill it."""
        with contextlib.suppress(Exception):  # already dead, or hung: the transport is closed below
            self.engine.quit()
        self.engine.close()

    def new_game(self) -> None:
        """The next :meth:`move` starts a new game (python-chess sends ``ucinewgame``; XBoard: ``new``)."""
        self._game = object()

    def move(self, board: chess.Board, limit: chess.engine.Limit, where: str) -> tuple[str, int, int]:
        """The engine's move in ``board`` (python-chess board with the game's moves on its
        stack): ``(uci, White's view score in cp, depth)`` from its last ``info`` line (depth
        0 when not reported). ``where`` names the game and ply in error messages."""
        clock = limit.white_clock if board.turn == chess.WHITE else limit.black_clock
        seconds = self.timeout + (limit.time or 0.0) + max(clock or 0.0, 0.0)  # a clock: all of it at most
        name = self.spec.name
        # SimpleEngine.play has no time limit for depth/nodes searches: bound it here
        coro = asyncio.wait_for(self.engine.protocol.play(board, limit, game=self._game, info=chess.engine.INFO_SCORE),
                                seconds)
        future = asyncio.run_coroutine_threadsafe(coro, self.engine.protocol.loop)
        try:
            result = future.result()
        except TimeoutError:  # asyncio and concurrent.futures raise the builtin since 3.11
            self._fail()
            raise EngineFailure(f"engine {name!r}: no move within {seconds:g} s ({where})", "no move in time") from None
        except chess.engine.EngineTerminatedError:
            code = self._returncode()
            self._fail()
            raise EngineFailure(f"engine {name!r}: exited during the game ({where}"
                                + (f", exit code {code})" if code is not None else ")"), "exited") from None
        except chess.engine.EngineError as exc:
            self._fail()
            raise EngineFailure(f"engine {name!r}: {_one_line(exc)} ({where})") from None
        move = result.move
        if move is None or move not in board.legal_moves:
            self._fail()
            raise EngineFailure(f"engine {name!r}: no legal move ({move.uci() if move else 'none'}) in "
                                f"{board.fen()} ({where})", "illegal move")
        return move.uci(), white_cp(result.info), int(result.info.get("depth", 0))

    def _fail(self) -> None:
        self.failed = True
        self.engine.close()

    def _returncode(self) -> int | None:
        try:
            return self.engine.returncode.result(timeout=2.0)
        except Exception:  # noqa: BLE001
            return None


def _quiet_engine_log() -> None:
    """XBoard engines print free text (Sjeng its material and hash after each move), which
    python-chess logs as a warning per line: hundreds per game on stderr, drowning the running
    lines. Unless the user configured python-chess's logger, only its errors are shown."""
    import logging  # noqa: PLC0415

    log = logging.getLogger("chess.engine")
    if log.level == logging.NOTSET:
        log.setLevel(logging.ERROR)


class _ClosedLoopFilter:
    """Drops asyncio's warning "Loop ... that handles pid N is closed" (issue 58 item 17)."""

    def filter(self, record: object) -> bool:
        return not str(getattr(record, "msg", "")).startswith("Loop %r that handles pid %r is closed")


_CLOSED_LOOP_FILTER = _ClosedLoopFilter()


def _quiet_closed_loop_warning() -> None:
    """An engine that timed out (at its start or during a game) is killed and its event loop
    closed at once; when the process then exits, asyncio's child watcher thread (which reaps it
    all the same: no zombie is left) finds the loop closed and logs a warning on stderr, a stray
    line in the middle of the match's output. That one message is dropped; every other asyncio
    message stays."""
    import logging  # noqa: PLC0415

    log = logging.getLogger("asyncio")
    if _CLOSED_LOOP_FILTER not in log.filters:
        log.addFilter(_CLOSED_LOOP_FILTER)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or exc.__class__.__name__
