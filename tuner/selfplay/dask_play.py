"""Self-play games as the tasks of a Dask cluster (``tuner selfplay --executor dask``).

The cluster is opened as ``tuner tune`` opens it (:class:`tuner.training.executor.DaskExecutor`):
the workers of a running scheduler (``--scheduler tcp://host:8786``), or a
:class:`distributed.LocalCluster` of ``--workers`` processes started for the run (SIGINT ignored
in them: Ctrl-C is the driver's); every worker must run the same movetuner code (checked on
opening, naming a worker that differs); without ``distributed`` the run is refused with the
``pip install 'movetuner[dask]'`` line, before the folder is touched.

* **Tasks.** Each game is one task of the player (weights or a network, or an external engine's
  command), its number, its opening and the settings. The player goes with every game rather
  than once as a shared future: the scheduler places a task where its inputs are, so a player
  held by one worker would draw every game there (``docs/dask.md``); it is small beside a
  game's seconds of play. A worker makes
  its engine on its first game of the run (:func:`_play_task`: the numba kernels are loaded from
  the worker's cache, or compiled on a fresh worker, as the local pool's initializer does) and
  keeps it for the run's later games; one game at a time per worker process.
* **Window.** At most ``IN_FLIGHT_PER_WORKER`` (:mod:`tuner.selfplay.run`) games per worker thread
  are submitted ahead (the count of threads looked up again every :data:`WINDOW_SECONDS`, so
  workers that join are used), refilled as games finish: a million games are not a million
  futures, and an interrupt has only the window to cancel.
* **Streaming.** Finished games come back through :class:`distributed.as_completed` and go to
  the run's :class:`tuner.selfplay.run.Recorder` as they come (a journal part every
  ``FLUSH_GAMES`` games or ``FLUSH_SECONDS`` seconds), so Ctrl-C, a lost driver or a failed
  cluster loses only the games in flight and those not yet in a part; ``--resume`` plays them
  again, on either executor.
* **Determinism.** A game is a function of the player, the settings, its opening and its number
  only (:mod:`tuner.selfplay.game`); the openings are chosen from the seed before any game is
  submitted, and the set is built from the journal in game order. So the games and the split
  files are the same as a local run's, whatever the cluster, its number of workers and the
  order in which games finish.
* **Failures.** A lost worker's games are run again by the scheduler on the others (the same
  games), and the log says ``dask: worker ADDR was lost during selfplay; N of its task(s) were
  recomputed``; a game that every worker running it died on (``distributed.scheduler.
  allowed-failures``) or that the scheduler lost stops the run with one line naming the game,
  after the finished games are saved. An error of the game itself (an external engine that
  fails) stops it as in a local run.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tuner.arena.engines import EngineSpec
from tuner.arena.match import Opening
from tuner.arena.players import Searchable
from tuner.cores import resolve_workers
from tuner.errors import TunerError, one_line
from tuner.selfplay.config import SelfplayConfig
from tuner.selfplay.game import GameRecord, GameTask, Mover, play_game

#: seconds to reach ``--scheduler`` before the run is refused naming it
CONNECT_SECONDS = 30.0
#: seconds between two looks at the cluster's worker threads (the window's size) and at the
#: workers it lost
WINDOW_SECONDS = 5.0
#: the prefix of the run's task keys on the scheduler (its dashboard shows them by game)
KEY = "selfplay"


# ------------------------------------------------------------------ the worker side

#: one game at a time per worker process, whatever the worker's ``--nthreads``: the engine and
#: its tables are the process's
_LOCK = threading.Lock()
#: the worker's engine: the key of the player it was made from, and the engine
_ENGINE: tuple[str, Mover] | None = None


def _close_engine() -> None:
    global _ENGINE  # noqa: PLW0603  (one engine per worker process)
    if _ENGINE is not None:
        _ENGINE[1].close()
        _ENGINE = None


def _play_task(player: Searchable | EngineSpec, player_key: str, timeout: float, index: int, opening: Opening,
               config: SelfplayConfig) -> GameRecord:
    """A game's task on a worker: game ``index`` with the worker's engine for ``player``, made
    on the run's first game here (loading or compiling the numba kernels) and kept for the
    others (``player_key`` tells one run's player from another's)."""
    global _ENGINE  # noqa: PLW0603
    with _LOCK:
        if _ENGINE is None or _ENGINE[0] != player_key:
            if _ENGINE is None:
                atexit.register(_close_engine)  # an external engine's process ends with the worker
            _close_engine()
            _ENGINE = (player_key, Mover(player, timeout))
        return play_game(GameTask(index, opening, player, config), _ENGINE[1])


# ------------------------------------------------------------------ the driver side


def open_cluster(config: SelfplayConfig, log: Callable[[str], None]) -> Any:
    """The :class:`tuner.training.executor.DaskExecutor` of ``config``'s scheduler, or of a
    LocalCluster of ``config.workers`` processes (at most one per game); the caller closes it.
    A :class:`tuner.errors.TunerError` of one line when distributed is missing, the scheduler
    cannot be reached or a worker runs other code."""
    from tuner.training.executor import DaskExecutor  # noqa: PLC0415

    workers = 0 if config.scheduler else min(resolve_workers(config.workers), config.games)
    return DaskExecutor(scheduler=config.scheduler, workers=workers, n_threads=1, log=log,
                        connect_timeout=CONNECT_SECONDS)


class _Prefix:
    """The keys of this run's tasks (for :meth:`DaskExecutor.report_lost`), without a set of
    a million keys."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.startswith(self.prefix)


def _next_batch(ac: Any, timeout: float) -> list[Any]:
    """The futures ``ac`` (an :class:`distributed.as_completed`) has finished, waiting up to
    ``timeout`` seconds for one (a wait Ctrl-C interrupts; as_completed puts a future in its
    queue before it notifies its condition, so none is missed between the look and the wait)."""
    with ac.thread_condition:
        if not ac.has_ready():
            ac.thread_condition.wait(timeout)
    return list(ac.next_batch(block=False))


# the run's pieces (the cluster, the games, the recorder, the player, the folder for the messages)
def play_on_dask(executor: Any, todo: list[GameTask], recorder: Any, config: SelfplayConfig,
                 player: Searchable | EngineSpec, timeout: float, folder: Path, *, in_flight: int,
                 wake: float) -> None:
    """Play ``todo`` on ``executor``'s cluster (see the module docstring), handing each finished
    game to ``recorder`` (:class:`tuner.selfplay.run.Recorder`); close the executor. Ctrl-C and
    the cluster's failures end it as :meth:`Recorder.stopped` says, the finished games saved.
    ``in_flight``: games submitted ahead per worker thread; ``wake``: seconds between two looks
    for Ctrl-C (and progress lines) while no game finishes."""
    # typed as Any: distributed's annotations are partial (as_completed untyped)
    distributed: Any = importlib.import_module("distributed")
    from tuner.training.executor import lost_task  # noqa: PLC0415

    client = executor.client
    token = uuid.uuid4().hex[:8]
    prefix = _Prefix(f"{KEY}-{token}-")
    futures: dict[Any, int] = {}  # the games in flight: future -> game number
    pending = iter(todo)
    window, looked = 0, -WINDOW_SECONDS

    def refill() -> None:
        nonlocal window, looked
        if time.monotonic() - looked >= WINDOW_SECONDS:
            window, looked = in_flight * max(1, sum(client.nthreads().values())), time.monotonic()
            executor.report_lost(KEY, prefix)
        while len(futures) < window:
            task = next(pending, None)
            if task is None:
                return
            # the player goes with each game, not as a shared future (module docstring, Tasks)
            future = client.submit(_play_task, player, player_key, timeout, task.index, task.opening, task.config,
                                   key=f"{KEY}-{token}-game-{task.index}", pure=False)
            futures[future] = task.index
            ac.add(future)

    try:
        player_key = f"{KEY}-{token}-player"
        ac = distributed.as_completed(loop=client.loop)
        refill()
        while futures:
            finished = _next_batch(ac, wake)
            recorder.tick()
            for future in finished:  # one at a time: a game that failed does not lose the others
                index = futures.pop(future)
                try:
                    record = future.result()
                except Exception as exc:
                    lost = lost_task(f"game {index}", exc)
                    if lost is not None:
                        raise lost from None
                    raise
                recorder.add([record])
            refill()
        executor.report_lost(KEY, prefix)
    except BaseException as exc:
        if client.status == "running":
            with contextlib.suppress(Exception):  # a scheduler gone: nothing left to cancel
                client.cancel(list(futures))
        recorder.close()
        executor.close()
        if isinstance(exc, OSError):  # the scheduler lost (distributed's CommClosedError is an OSError)
            exc = TunerError(one_line(f"dask: lost the scheduler ({type(exc).__name__}: {exc})"))
        stop = recorder.stopped(exc, folder)
        if stop is not None:
            raise stop from None
        raise
    recorder.close()
    executor.close()


def log_to(stream: Any) -> Callable[[str], None]:
    """The cluster's messages (its workers, a lost worker) as lines of ``stream``."""
    return lambda message: print(one_line(message), file=stream)


__all__ = ["CONNECT_SECONDS", "open_cluster", "play_on_dask"]
