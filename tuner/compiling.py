"""What numba's compilation costs a command: a one-line note when it starts, and a clock that
stops while it runs.

numba compiles a kernel the first time it is called (then loads it from its cache, see
:mod:`search.tree.kernel_cache`): tens of seconds that look like a hang and that are no part of what
a run measures. A listener on numba's ``numba:compile`` event (fired on a cache miss only, not
when a kernel is loaded from the cache) adds up the seconds spent compiling in this process and
calls the note set by :func:`compile_notes` at the first compilation.
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: the note a command prints when it waits for numba
COMPILING_NOTE = "compiling kernels (first run only)"
#: the clock (seconds) of the meter and of :func:`compile_clock`
_now = time.perf_counter


class CompileRefused(Exception):
    """A kernel would have compiled inside :func:`refuse_compiles` (``str()``: the kernel)."""


#: per thread: whether :func:`refuse_compiles` is active
_REFUSING = threading.local()


class _CompileMeter:
    """numba ``numba:compile`` listener: seconds of outermost compilations, first-compile hook,
    and the refusal of :func:`refuse_compiles`."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.count = 0  # outermost compilations started
        self.depth = 0  # compiling a kernel compiles the kernels it calls, each with its event
        self.started = 0.0
        self.kernel = ""  # the outermost kernel being compiled (module.name)
        self.on_first: Callable[[], None] | None = None
        self.lock = threading.Lock()

    def on_start(self, event: Any) -> None:
        with self.lock:
            self.depth += 1
            if self.depth > 1:
                return
            if getattr(_REFUSING, "on", False):  # counted as no compilation; on_end still follows
                self.started = _now()
                raise CompileRefused(_kernel_name(event) or "a kernel")
            self.count += 1
            self.started = _now()
            self.kernel = _kernel_name(event)
            hook, self.on_first = self.on_first, None
        if hook is not None:
            hook()

    def on_end(self, event: Any) -> None:
        with self.lock:
            self.depth -= 1
            if self.depth == 0:
                self.seconds += _now() - self.started


def _kernel_name(event: Any) -> str:
    """``module.name`` of the function a ``numba:compile`` event compiles ("" if unknown)."""
    func = getattr((getattr(event, "data", None) or {}).get("dispatcher"), "py_func", None)
    if func is None:
        return ""
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"


_METER: _CompileMeter | None = None


def _meter() -> _CompileMeter:
    """The process's listener, registered with numba on first use (this imports numba)."""
    global _METER
    if _METER is None:
        # numba is untyped: its event module as Any (and the listener class built by type())
        event: Any = importlib.import_module("numba.core.event")  # numba only when something compiles
        meter = _CompileMeter()
        listener = type("_Listener", (event.Listener,), {
            "on_start": lambda self, ev: meter.on_start(ev),
            "on_end": lambda self, ev: meter.on_end(ev),
        })
        event.register("numba:compile", listener())
        _METER = meter
    return _METER


def compile_seconds() -> float:
    """Seconds numba has spent compiling in this process since the first call (of this or
    :func:`compile_clock`), a compilation under way included."""
    meter = _meter()
    with meter.lock:
        return meter.seconds + (_now() - meter.started if meter.depth > 0 else 0.0)


def compile_count() -> int:
    """How many compilations (outermost: a kernel with the kernels it calls counts once) have
    started in this process since the first call of this module's functions; loading a kernel
    from numba's cache starts none."""
    meter = _meter()
    with meter.lock:
        return meter.count


def compile_clock() -> float:
    """``time.perf_counter()`` less :func:`compile_seconds`: the difference of two readings is
    the time between them without compilation (``iteration_seconds`` of a run, and so the
    tuning times of ``bench compare``)."""
    spent = compile_seconds()
    return _now() - spent


@contextmanager
def refuse_compiles() -> Iterator[None]:
    """Within the block, in this thread, a kernel call that would compile raises
    :class:`CompileRefused` instead, before numba starts (it compiles nothing; kernels found in
    numba's cache load as usual). numba lets a ``numba:compile`` listener's exception out of the
    dispatcher's call, and its compiler lock is released on the way. :mod:`tuner.compile_apart`
    uses it to compile in a child process what would otherwise hold this one's interpreter lock
    for a minute."""
    _meter()
    before = getattr(_REFUSING, "on", False)
    _REFUSING.on = True
    try:
        yield
    finally:
        _REFUSING.on = before


#: seconds between two "still compiling" lines while numba compiles
TICK_SECONDS = 15.0


def compiling_now() -> tuple[str, float, float] | None:
    """``(kernel, its seconds so far, all compilation seconds)`` while numba compiles, else None."""
    meter = _meter()
    with meter.lock:
        if meter.depth == 0:
            return None
        this = _now() - meter.started
        return meter.kernel, this, meter.seconds + this


@contextmanager
def compile_notes(prefix: str, text: str | None = None, stream: TextIO | None = None,
                  tick: float = TICK_SECONDS) -> Iterator[None]:
    """Print ``{prefix}: note: {text}`` (default :data:`COMPILING_NOTE`: ``compiling kernels
    (first run only)``) on ``stream`` (standard error) when numba first compiles inside the
    block: nothing when every kernel it needs is loaded from the cache or already compiled.
    While a compilation lasts, a line every ``tick`` seconds says which kernel compiles (its
    module names the stage: ``search.*`` the searches, ``objectives.*`` the losses) and for how
    long: a cold ``tune`` was silent for 107 s after the note (issue 58 item 15)."""
    meter = _meter()
    out = stream if stream is not None else sys.stderr
    message = text if text is not None else COMPILING_NOTE
    stop = threading.Event()

    def note() -> None:
        print(f"{prefix}: note: {message}", file=out, flush=True)

    def ticker() -> None:
        while not stop.wait(tick):
            now = compiling_now()
            if now is not None:
                kernel, _, total = now
                # one write of the whole line: another thread's progress lines cannot split it
                out.write(f"{prefix}: note: still compiling kernels, {total:.0f} s so far (now "
                          f"{kernel or 'a kernel'})\n")
                out.flush()

    meter.on_first = note
    thread = threading.Thread(target=ticker, name="compile-ticker", daemon=True)
    thread.start()
    try:
        yield
    finally:
        meter.on_first = None
        stop.set()
        thread.join()
