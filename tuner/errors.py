"""Errors the command line reports as one line, without a traceback, and Ctrl-C as one of them.

Ctrl-C and the numba kernels
----------------------------
Python runs a signal handler in the main thread the next time it executes Python code, and
a running numba kernel calls back into Python (``_numba_unpickle``, to rebuild its constants).
The default SIGINT handler raises :class:`KeyboardInterrupt` there, inside the call, and the
kernel's call then fails with ``SystemError: CPUDispatcher(...) returned a result
with an exception set`` instead of the interrupt. Long runs therefore defer Ctrl-C: inside
:class:`DeferredSigint` the handler only records the request, and the run calls
:func:`check_interrupt` between kernel calls (each kept short), which raises
:class:`Interrupted` at a point where nothing is half-done.
"""

from __future__ import annotations

import contextlib
import re
import signal
import threading
import unicodedata
from collections.abc import Iterator
from types import FrameType, TracebackType
from typing import Any


#: Unicode categories written as escapes by :func:`one_line`: control characters (C0, DEL, C1:
#: line breaks, ANSI escape sequences), format characters (bidirectional overrides), line and
#: paragraph separators, and lone surrogates (the bytes of a file name that is not UTF-8)
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


#: the longest run of non-blank characters :func:`one_line` prints whole (a FEN, a path, a JSON
#: value), and the longest line; longer ones keep their two ends around an ellipsis
MAX_RUN, MAX_LINE = 200, 1000
_LONG_RUN = re.compile(r"\S{%d,}" % (MAX_RUN + 1))


def _cut(text: str, keep: int) -> str:
    """``text`` as its first and last ``keep // 2`` characters around ``…[N characters]…``."""
    half = keep // 2
    return f"{text[:half]}…[{len(text):,} characters]…{text[-half:]}"


def one_line(text: object) -> str:
    """``text`` (a message, or a file name or line of an input file printed in one) as one line
    that cannot forge another: every control character, line or paragraph separator, format
    character and lone surrogate is written as its Python escape (``\\n``, ``\\x1b``,
    ``\\u2028``, ``\\udcff``); the rest, non-ASCII letters included, is left as it is. An
    echoed huge input does not flood the terminal: a run of more than :data:`MAX_RUN`
    non-blank characters keeps its first and last 100 around ``…[N characters]…``, and a line
    still longer than :data:`MAX_LINE` its first and last 500. Every line the command line
    prints that may hold a user's file name or file content goes through it (:mod:`tuner.cli`
    for errors and notes, ingest's problem lines)."""
    text = str(text)
    if len(text) > MAX_RUN:
        text = _LONG_RUN.sub(lambda m: _cut(m.group(), MAX_RUN), text)
        if len(text) > MAX_LINE:
            text = _cut(text, MAX_LINE)
    if text.isprintable() and text.isascii():  # the common case: nothing to look at
        return text
    return "".join(_escape(ch) if unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch for ch in text)


class TunerError(Exception):
    """A user-facing failure: bad input, a missing file, a corrupt weights file.

    The message is one line and names the file and place where that is known.
    """


class Interrupted(Exception):
    """Ctrl-C, turned into an orderly stop: the command line prints the one-line message and
    exits with code 130."""

    def __init__(self, message: str = "interrupted") -> None:
        super().__init__(message)


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C: a :class:`KeyboardInterrupt`, or the ``SystemError`` a numba
    kernel's call raises when a KeyboardInterrupt was raised inside it (see the module
    docstring)."""
    if isinstance(exc, (KeyboardInterrupt, Interrupted)):
        return True
    return isinstance(exc, SystemError) and isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt)


#: the active DeferredSigint blocks, innermost last
_ACTIVE: list[DeferredSigint] = []


class DeferredSigint:
    """Within the block, Ctrl-C (SIGINT) only sets :attr:`requested`; :func:`check_interrupt`
    raises :class:`Interrupted` once it is set. The previous handler is restored on exit.

    Outside the main thread (where Python cannot install signal handlers) the block changes
    nothing, and :func:`check_interrupt` never raises.
    """

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True

    def __enter__(self) -> DeferredSigint:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        _ACTIVE.append(self)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _ACTIVE.remove(self)
        if self._installed:
            previous = self._previous if self._previous is not None else signal.default_int_handler
            signal.signal(signal.SIGINT, previous)
            self._installed = False


def check_interrupt() -> None:
    """Raise :class:`Interrupted` if Ctrl-C was pressed inside an active
    :class:`DeferredSigint` block; call it between kernel calls."""
    if any(block.requested for block in _ACTIVE):
        raise Interrupted()


class SigtermAsCtrlC:
    """SIGTERM (``kill PID``, ``timeout``, a batch system's or a service manager's stop) handled as
    Ctrl-C: the handler passes it to whatever handles SIGINT at that moment, so a command that
    defers Ctrl-C (:class:`DeferredSigint`) stops at its next :func:`check_interrupt` and saves
    what it has, and elsewhere Python's handler raises :class:`KeyboardInterrupt`. Without it
    Python dies at once on SIGTERM, with no clean-up: self-play lost the games not yet written
    to a part, and the pool's semaphores were reported leaked. A SIGINT that is ignored (a job
    started in the background of a script inherits it so) does not make SIGTERM ignored:
    KeyboardInterrupt then. :attr:`received` says whether one came (the command line's exit
    code is then 143, 128 + SIGTERM, not Ctrl-C's 130)."""

    def __init__(self) -> None:
        self.received = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = True
        current = signal.getsignal(signal.SIGINT)
        if callable(current):
            current(signal.SIGINT, frame)
        else:  # SIG_IGN or SIG_DFL (or one set outside Python): stop all the same
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[SigtermAsCtrlC]:
        """The handler for the block (main thread only: elsewhere the block changes nothing);
        the previous one restored after it."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.signal(signal.SIGTERM, self.handle)
        try:
            yield self
        finally:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
