"""Progress that suits its stream: a tqdm bar on a terminal, plain lines in a log.

tqdm redraws its bar with carriage returns and, for nested bars, ``ESC [A`` (cursor up): fine
on a terminal, garbage in a log file or a CI console. :func:`progress_bar` takes tqdm's
arguments and returns a tqdm bar when the stream is a terminal, else a :class:`PlainProgress`
that writes one line now and then (``search: 190/1900 pos (10 %), 12 s``): when a tenth more
of the total is done and :data:`MIN_SECONDS` have passed since the last line, or
:data:`MAX_SECONDS` have passed whatever the progress. A loop that ends within
:data:`MIN_SECONDS` writes nothing.

:class:`RunningLog` adds the figures of a long measurement (a match's W/D/L, Elo and SPRT, an
EPD suite's solved positions) as a line every :func:`log_seconds` seconds, on a terminal (above
the bar) and in a log alike.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import Any, Generic, TextIO, TypeAlias, TypeVar, overload

from tqdm import tqdm

T = TypeVar("T")

#: seconds between two lines at least (a tenth more of the total done)
MIN_SECONDS = 5.0
#: seconds without a line at most, whatever the progress (an unknown total, a slow tenth)
MAX_SECONDS = 30.0


class PlainProgress(Generic[T]):
    """The part of tqdm's interface the commands use (iteration, ``update``, ``set_postfix``,
    ``write``, ``n``, ``close``, ``with``), writing plain lines to ``file``."""

    def __init__(self, iterable: Iterable[T] | None = None, *, total: float | None = None, desc: str | None = None,
                 unit: str = "it", initial: float = 0, file: TextIO | None = None,
                 max_seconds: float = MAX_SECONDS) -> None:
        if total is None and isinstance(iterable, Sized):
            total = len(iterable)
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc or "", unit
        self.n = initial
        self.file = file
        self.max_seconds = max_seconds
        self.postfix = ""
        self._start = self._last = time.monotonic()
        self._tenth = self._tenths()
        self._lines = 0
        self._last_n = initial
        self._last_postfix = ""
        self._closed = False

    def _tenths(self) -> int:
        return int(10 * self.n / self.total) if self.total else 0

    def _line(self, now: float) -> None:
        done = f"{self.n:g}/{self.total:g} {self.unit}" if self.total else f"{self.n:g} {self.unit}"
        if self.total:
            done += f" ({100 * self.n / self.total:.0f} %)"
        head = f"{self.desc}: " if self.desc else ""
        tail = f", {self.postfix}" if self.postfix else ""
        print(f"{head}{done}, {now - self._start:.0f} s{tail}", file=self.file or sys.stderr, flush=True)
        self._last, self._tenth, self._lines, self._last_n = now, self._tenths(), self._lines + 1, self.n
        self._last_postfix = self.postfix

    def update(self, n: float = 1) -> None:
        self.n += n
        now = time.monotonic()
        since = now - self._last
        if (since >= MIN_SECONDS and self._tenths() > self._tenth) or since >= self.max_seconds:
            self._line(now)

    def tick(self) -> None:
        """A line if ``max_seconds`` passed since the last one, progress or not: for a loop
        that wakes often but finishes items seldom (self-play's games)."""
        now = time.monotonic()
        if now - self._last >= self.max_seconds:
            self._line(now)

    def set_postfix(self, ordered_dict: dict[str, Any] | None = None, **kwargs: Any) -> None:
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def write(self, s: str, file: TextIO | None = None) -> None:
        print(s, file=file or self.file or sys.stderr, flush=True)

    def close(self) -> None:
        """End with a line when lines were written (the last one then says where it ended),
        unless the last line written already says it, figures and postfix (``search: 1900/1900
        pos (100 %)`` came twice: issue 58 item 15)."""
        if not self._closed and self._lines and (self.n, self.postfix) != (self._last_n, self._last_postfix):
            self._line(time.monotonic())
        self._closed = True

    def __iter__(self) -> Iterator[T]:
        if self.iterable is None:
            raise TypeError("this progress has no iterable")
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __enter__(self) -> PlainProgress[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@overload
def progress_bar(iterable: Iterable[T], *, disable: bool | None = False, file: TextIO | None = None,
                 desc: str | None = None, unit: str = "it", total: float | None = None, initial: float = 0,
                 **tqdm_options: Any) -> tqdm[T] | PlainProgress[T]: ...


@overload
def progress_bar(iterable: None = None, *, disable: bool | None = False, file: TextIO | None = None,
                 desc: str | None = None, unit: str = "it", total: float | None = None, initial: float = 0,
                 **tqdm_options: Any) -> tqdm[Any] | PlainProgress[Any]: ...


def progress_bar(iterable: Iterable[T] | None = None, *, disable: bool | None = False, file: TextIO | None = None,
                 desc: str | None = None, unit: str = "it", total: float | None = None, initial: float = 0,
                 log_seconds: float = MAX_SECONDS,
                 **tqdm_options: Any) -> tqdm[T] | PlainProgress[T] | tqdm[Any] | PlainProgress[Any]:
    """``tqdm(iterable, ...)`` on a terminal; :class:`PlainProgress` when ``file`` (standard
    error) is not one. ``disable``: as tqdm's (``None``: only on a terminal, no lines in a
    log); ``log_seconds``: the longest wait between two plain lines (:meth:`PlainProgress.tick`);
    the other tqdm options (``leave``, ``unit_scale``, ...) apply to the bar only."""
    stream = file if file is not None else sys.stderr
    tty = bool(getattr(stream, "isatty", lambda: False)())
    if disable or tty or disable is None:
        return tqdm(iterable, disable=disable, file=file, desc=desc, unit=unit, total=total, initial=initial,
                    **tqdm_options)
    return PlainProgress(iterable, total=total, desc=desc, unit=unit, initial=initial, file=file,
                         max_seconds=log_seconds)


#: seconds between two lines of a :class:`RunningLog` (the environment variable
#: :data:`LOG_SECONDS_VARIABLE` overrides it)
LOG_SECONDS = 30.0
#: the environment variable that sets the running lines' interval in seconds (tests set a small one)
LOG_SECONDS_VARIABLE = "MOVETUNER_LOG_SECONDS"


def log_seconds() -> float:
    """Seconds between two running lines: ``$MOVETUNER_LOG_SECONDS`` when it is a positive
    number, else :data:`LOG_SECONDS`."""
    try:
        value = float(os.environ.get(LOG_SECONDS_VARIABLE, ""))
    except ValueError:
        return LOG_SECONDS
    return value if 0 < value < 1e9 else LOG_SECONDS


class RunningLog:
    """A line from ``describe()`` every ``seconds`` (default :func:`log_seconds`) while the
    ``with`` block runs, written by ``write`` (e.g. a tqdm bar's ``write``, which keeps the bar
    whole; default: standard error), from a daemon thread: the lines come even while a long
    game or position is under way. ``describe`` must be safe to call from that thread (read
    figures that the main thread replaces whole, or take a lock)."""

    def __init__(self, describe: Callable[[], str], *, seconds: float | None = None,
                 write: Callable[[str], object] | None = None) -> None:
        self.describe = describe
        self.seconds = log_seconds() if seconds is None else seconds
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="running-log", daemon=True)
        self.lines = 0

    def _run(self) -> None:
        while not self._stop.wait(self.seconds):
            self.write(self.describe())
            self.lines += 1

    def __enter__(self) -> RunningLog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


#: what :func:`progress_bar` returns
Progress: TypeAlias = "tqdm[Any] | PlainProgress[Any]"
