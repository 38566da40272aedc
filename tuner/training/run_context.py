"""Where a run's work happens, decided once: :class:`RunContext` (numba threads, the executor of
the heavy steps, the pacers of the kernel calls, the log and whether to draw progress bars).

The driver opens one for a run (:func:`open_run_context`, from the run's settings) and hands it
to the method's trainer; the trainer passes its parts on as plain values, so no setting travels
further down than the code that uses it, and nothing is found through a global. Code outside a
run (tests, benchmarks, ``tuner bench``) makes one with :meth:`RunContext.local`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tuner.cores import resolve_threads
from tuner.training.executor import DEFAULT_CHUNK, Executor, LocalExecutor, open_executor
from tuner.training.pacer import Pacer
from tuner.training.tune_config import TuneConfig


def _quiet(_message: str) -> None:
    pass


@dataclass
class RunContext:
    """A run's place to work.

    ``threads``: this process's numba threads for the run's kernels (the resolved count, >= 1);
    ``executor``: where the maps over chunks of positions run (this process or a Dask
    cluster); ``chunk``: positions per chunk of those maps; ``log``: one line of text to the
    console or the run's log; ``progress``: whether to draw progress bars.
    """

    threads: int
    executor: Executor
    log: Callable[[str], None] = print
    progress: bool = True
    chunk: int = DEFAULT_CHUNK
    _pacers: dict[str, Pacer] = field(default_factory=dict, repr=False)

    def pacer(self, what: str) -> Pacer:
        """The pacer of one kind of kernel call (``"sweep"``, ``"validation"``, ...): each kind
        keeps its own call size, since their costs per position differ (:class:`Pacer`)."""
        return self._pacers.setdefault(what, Pacer())

    @classmethod
    def local(cls, threads: int = 0, *, log: Callable[[str], None] = _quiet, progress: bool = False,
              chunk: int = DEFAULT_CHUNK) -> RunContext:
        """A context on this process alone with ``threads`` numba threads (0: every core it may
        use), quiet and without bars unless told: for tests, benchmarks and one-off calls."""
        n = resolve_threads(threads)
        return cls(n, LocalExecutor(n), log, progress, chunk)


@contextlib.contextmanager
def open_run_context(cfg: TuneConfig, *, log: Callable[[str], None] = print,
                     progress: bool = True) -> Iterator[RunContext]:
    """The context of a run with settings ``cfg`` (``threads``, ``executor``, ``scheduler``,
    ``workers``, ``chunk``), for the block; its executor (a Dask cluster it started, say) is
    closed after it."""
    executor = open_executor(cfg.executor, threads=cfg.threads, scheduler=cfg.scheduler, workers=cfg.workers,
                             chunk=cfg.chunk, log=log)
    try:
        yield RunContext(resolve_threads(cfg.threads), executor, log, progress, cfg.chunk)
    finally:
        executor.close()


__all__ = ["RunContext", "open_run_context"]
