"""Where a run's heavy steps execute: this process's numba threads, or a Dask cluster.

Every heavy step of ``tuner tune`` is an embarrassingly parallel map over chunks of positions,
whose per-chunk results the caller reduces:

* MMTO's sweep of the training set (:func:`tuner.methods.mmto.sweep_kept`): per chunk, the
  partial sums of J_main and of the move-match, and the chunk's PV-leaf table, which stays
  where it was computed (``keep=True``); each update step then maps the objective's share of
  every kept table where it lives and folds the shares in chunk order (:meth:`Executor.reduce_kept`);
* Texel's refresh of the quiescence leaves (:func:`tuner.methods.texel.quiescence_leaves`): per chunk,
  one leaf row per position;
* move-match (:func:`tuner.training.paced.paced_move_match`: the GA's fitness on a generation's sample,
  one credit per individual and position; every method's validation move-match).

An :class:`Executor` runs a function on each chunk and yields the results **in chunk order**,
so that the caller reduces them in the same order whatever ran them: a Dask run gives
bit-identical weights and metrics to a local run with the same settings (the batch kernels'
results per position do not depend on how a batch is cut, :class:`tuner.training.paced.Pacer`; a
floating-point sum is reduced per chunk in chunk order by the caller).

* :class:`LocalExecutor` (``--executor local``, the default): the numba kernels' threads of
  this process; each chunk is searched in calls of about 0.4 s with a Ctrl-C check between them.
* :class:`DaskExecutor` (``--executor dask``): Dask's distributed scheduler, at ``--scheduler
  ADDR`` or on a :class:`distributed.LocalCluster` of ``--workers`` processes started for the
  run. Positions go to the workers once per run, as one task per chunk, and stay there; the
  weights go once per map call. A :class:`ChunkSource` (MMTO's training positions,
  :class:`tuner.training.training_data.TrainingChunks`) is shipped as descriptions instead (the
  chunk's row numbers in the position set) and each worker builds its chunks' arrays, so that
  neither this process nor the scheduler holds the positions: their memory does not grow with
  the training set. That needs the position set at the same path on every worker, checked first;
  otherwise this process builds the chunks one at a time and ships them as arrays, and says so.
  Because chunks and kept results (:class:`Kept`) are tasks with a lineage, a lost worker's
  share is recomputed on the others and the log says so; Ctrl-C cancels the outstanding tasks.
  ``distributed`` is imported only inside the class: the base install does not need it
  (``pip install 'movetuner[dask]'``). The protocol, its traffic and its measured costs:
  ``docs/dask.md`` and ``docs/scaling.md``.

A run opens its executor once, in its :class:`tuner.training.run_context.RunContext`, which the
driver hands to the method's trainer.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import itertools
import math
import os
import signal
import threading
import uuid
from collections.abc import Callable, Container, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from search.tree.search_api import threads
from tuner.cores import KEEP_NUMBA_THREADS, available_cores, resolve_threads, resolve_workers, thread_ceiling
from tuner.errors import TunerError, check_interrupt, one_line
from tuner.training.pacer import Pacer

#: positions per Dask task when the caller does not fix the chunk size (``TuneConfig.chunk``)
DEFAULT_CHUNK = 4096
#: seconds between two Ctrl-C checks while waiting for a Dask result
POLL_SECONDS = 0.2
#: seconds to wait for a scheduler's first worker when the executor opens
WORKERS_SECONDS = 60.0

EXECUTORS = ("local", "dask")

#: a chunk's output range (``a:z`` of the positions mapped over, or of ``rows`` when given) and
#: the function's result for it
Part = tuple[int, int, Any]


@runtime_checkable
class ChunkSource(Protocol):
    """Positions a map builds chunk by chunk instead of receiving them as arrays
    (:class:`tuner.training.training_data.TrainingChunks`: rows of a position set's file).

    ``part(a, z)`` describes positions ``a:z`` in a small picklable object (what a Dask task
    carries); its ``arrays()`` builds their arrays (one row per position, as a dataset of
    arrays would hold them) wherever it is called; ``problem()`` says why this process could
    not build them (the file missing here, say), or None.
    """

    def __len__(self) -> int: ...

    def part(self, a: int, z: int) -> ChunkSource: ...

    def arrays(self) -> tuple[np.ndarray, ...]: ...

    def problem(self) -> str | None: ...


#: what a map runs over: arrays with one row per position (the same length), or a source that
#: builds them chunk by chunk
Dataset = Sequence[np.ndarray] | ChunkSource


def dataset_length(dataset: Dataset) -> int:
    """The positions of a map's dataset."""
    return len(dataset) if isinstance(dataset, ChunkSource) else len(dataset[0])


def chunk_arrays(dataset: Dataset, a: int, z: int, rows: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """The arrays of positions ``a:z`` of ``dataset`` (``rows``: of the sorted selection ``rows``,
    positions ``rows[a:z]``), built here when ``dataset`` is a :class:`ChunkSource`."""
    if isinstance(dataset, ChunkSource):
        if rows is None:
            return dataset.part(a, z).arrays()
        lo, hi = int(rows[a]), int(rows[z - 1]) + 1
        return tuple(x[rows[a:z] - lo] for x in dataset.part(lo, hi).arrays())
    take = slice(a, z) if rows is None else rows[a:z]
    return tuple(x[take] for x in dataset)


class Executor(Protocol):
    """Runs a function over the chunks of a set of positions (see the module docstring)."""

    name: str

    def map_chunks(self, fn: Callable[..., Any], dataset: Dataset, *, size: int | None = None,
                   rows: np.ndarray | None = None, shared: dict[str, Any] | None = None,
                   pacer: Any = None, what: str = "work", keep: bool = False, **static: Any) -> Iterator[Part]:
        """Call ``fn(*chunk, pacer=..., **shared, **static)`` on consecutive chunks of ``size``
        positions of ``dataset`` (arrays with one row per position, the same length, or a
        :class:`ChunkSource` whose chunks are built where they are used; ``size`` None: the
        executor's choice) and yield ``(a, z, result)`` in chunk order.

        ``rows`` (sorted int64 indices), if given, restricts the map to those positions: each
        chunk receives only its selected rows, and ``a:z`` index ``rows``. ``shared`` arrays
        (the weights) go to the workers once per call; ``static`` values are small settings.
        ``fn`` must be a module-level function (a Dask worker imports it by name) that treats
        ``pacer`` as :func:`tuner.training.paced.paced_sweep` does.

        ``keep``: ``fn`` returns a pair ``(summary, kept)``; the summary comes back, the kept
        part stays where it was computed, and each chunk yields ``(a, z, (summary, handle))``
        for :meth:`map_kept`, :meth:`reduce_kept`, :meth:`fetch` and :meth:`release`.
        """
        ...

    def map_kept(self, fn: Callable[..., Any], handles: Sequence[Any], *, shared: dict[str, Any] | None = None,
                 what: str = "work", **static: Any) -> Iterator[Any]:
        """Call ``fn(kept, **shared, **static)`` on each kept result of ``handles`` (from
        :meth:`map_chunks` with ``keep=True``) where it lives, and yield the (small) results in
        the order of ``handles``."""
        ...

    def reduce_kept(self, fn: Callable[..., Any], handles: Sequence[Any], *, shared: dict[str, Any] | None = None,
                    what: str = "work", **static: Any) -> Any:
        """The left fold, in the order of ``handles``, of ``fn(kept, **shared, **static)`` over
        the kept results (:func:`fold`: floats, arrays and tuples of them added element by
        element): the same float64 sums whatever ran them and wherever the results live."""
        ...

    def fetch(self, handles: Sequence[Any]) -> list[Any]:
        """The kept results themselves, here (tests and benchmarks: they may be large)."""
        ...

    def release(self, handles: Sequence[Any]) -> None:
        """Free the kept results of ``handles`` (they must not be used afterwards)."""
        ...

    def close(self) -> None:
        """Release the executor's resources (a Dask client and the cluster it started)."""
        ...


def add_parts(a: Any, b: Any) -> Any:
    """``a + b`` for floats and float64 arrays, element by element for tuples of them."""
    if isinstance(a, tuple):
        return type(a)(*(add_parts(x, y) for x, y in zip(a, b))) if hasattr(a, "_fields") else \
            tuple(add_parts(x, y) for x, y in zip(a, b))
    return a + b


def fold(acc: Any, *parts: Any) -> Any:
    """``acc`` (None: nothing yet) plus each of ``parts`` in turn (:func:`add_parts`): the one
    reduction order of :meth:`Executor.reduce_kept`; folding a sequence in consecutive runs,
    each run starting from the previous run's result, gives the same bits as one fold."""
    for part in parts:
        acc = part if acc is None else add_parts(acc, part)
    return acc


def chunk_bounds(n: int, size: int) -> list[tuple[int, int]]:
    """``(a, z)`` ranges of ``size`` positions (the last one shorter) covering ``0..n``."""
    if size < 1:
        raise ValueError(f"chunk size must be positive, not {size}")
    return [(a, min(n, a + size)) for a in range(0, n, size)]


class LocalExecutor:
    """This process, with ``n_threads`` numba threads (:data:`~tuner.cores.KEEP_NUMBA_THREADS`, None:
    numba's current count, unchanged).

    Chunks run one after the other; ``fn`` gets the caller's ``pacer``, so each chunk is
    searched in calls of about ``pacer.target`` seconds with a Ctrl-C check between them.
    ``size`` None maps the whole set (or selection) as one chunk. Kept results stay in this
    process: a handle is the kept object itself.
    """

    name = "local"

    def __init__(self, n_threads: int | None = KEEP_NUMBA_THREADS) -> None:
        self.n_threads = n_threads

    def map_chunks(self, fn: Callable[..., Any], dataset: Dataset, *, size: int | None = None,
                   rows: np.ndarray | None = None, shared: dict[str, Any] | None = None,
                   pacer: Any = None, what: str = "work", keep: bool = False, **static: Any) -> Iterator[Part]:
        n = dataset_length(dataset) if rows is None else len(rows)
        for a, z in chunk_bounds(n, size or max(n, 1)):
            with threads(self.n_threads):
                result = fn(*chunk_arrays(dataset, a, z, rows), pacer=pacer, **(shared or {}), **static)
            yield a, z, result

    def map_kept(self, fn: Callable[..., Any], handles: Sequence[Any], *, shared: dict[str, Any] | None = None,
                 what: str = "work", **static: Any) -> Iterator[Any]:
        for kept in handles:
            check_interrupt()
            with threads(self.n_threads):
                yield fn(kept, **(shared or {}), **static)

    def reduce_kept(self, fn: Callable[..., Any], handles: Sequence[Any], *, shared: dict[str, Any] | None = None,
                    what: str = "work", **static: Any) -> Any:
        acc = None
        for part in self.map_kept(fn, handles, shared=shared, what=what, **static):
            acc = fold(acc, part)
        return acc

    def fetch(self, handles: Sequence[Any]) -> list[Any]:
        return list(handles)

    def release(self, handles: Sequence[Any]) -> None:
        pass

    def close(self) -> None:
        pass


# ----------------------------------------------------------------------------- Dask


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 (16 hex digits) of the Python sources of ``search``, ``objectives`` and ``tuner``:
    a Dask worker must run the same code as the driver, not merely the same version number."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[2]
    for package in ("search", "objectives", "tuner"):
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def worker_facts() -> dict[str, Any]:
    """What a worker runs (compared with the driver's when a Dask executor opens)."""
    from search.params.catalog import CATALOG_HASH  # noqa: PLC0415
    from tuner import __version__  # noqa: PLC0415

    return {"package_version": __version__, "catalog_hash": CATALOG_HASH, "code": code_fingerprint(),
            "numba_threads": thread_ceiling(), "pid": os.getpid()}


def _positions(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """A chunk of positions as a task's result: kept on a worker for the run."""
    return tuple(np.ascontiguousarray(x) for x in arrays)


def _build_positions(source: ChunkSource, n_threads: int | None) -> tuple[np.ndarray, ...]:
    """A chunk of positions built from its description (:class:`ChunkSource`) by the worker that
    keeps it for the run: a task, so that a lost worker's chunk is built again elsewhere."""
    with _TASK_LOCK, threads(n_threads):
        return tuple(np.ascontiguousarray(x) for x in source.arrays())


def _source_problem(source: ChunkSource) -> str | None:
    """Why this worker cannot build ``source``'s chunks (run on every worker), or None."""
    return source.problem()


def _same_dataset(a: Dataset, b: Dataset) -> bool:
    """Whether two datasets are the same objects (a source, or arrays one by one)."""
    if isinstance(a, ChunkSource) or isinstance(b, ChunkSource):
        return a is b
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _value(x: Any) -> Any:
    """A small value (the weights) as a task's result, fetched once by each worker."""
    return x


#: Dask configuration of the clusters the executor starts: no work stealing, so that each
#: chunk's task runs where its positions were sent (consecutive chunks on one worker) and a
#: chunk-ordered fold of kept results passes its running sum between workers once per worker,
#: not once per stolen chunk
NO_STEALING = {"distributed.scheduler.work-stealing": False}

#: one task at a time per worker process: numba's parallel kernels run their own threads, and
#: its default threading layer (workqueue) must not be entered from two threads at once
_TASK_LOCK = threading.Lock()


def _run_chunk(fn: Callable[..., Any], n_threads: int | None, chunk: tuple[np.ndarray, ...],
               local_rows: np.ndarray | None, shared: dict[str, Any], static: dict[str, Any]) -> Any:
    """A map's task on a worker: ``fn`` on the chunk (or its selected rows) in one call
    (a pacer that never cuts it: there is no Ctrl-C to check for on a worker), one task at a
    time per process whatever the worker's ``--nthreads``."""
    arrays = chunk if local_rows is None else tuple(x[local_rows] for x in chunk)
    with _TASK_LOCK, threads(n_threads):
        return fn(*arrays, pacer=Pacer(target=math.inf, first=1 << 62), **shared, **static)


def _item(pair: tuple[Any, Any], i: int) -> Any:
    """One half of a kept map's ``(summary, kept)`` result, taken where the pair lives."""
    return pair[i]


def _apply_kept(fn: Callable[..., Any], n_threads: int | None, kept: Any, shared: dict[str, Any],
                static: dict[str, Any]) -> Any:
    """A :meth:`DaskExecutor.map_kept` task: ``fn`` on a kept result, on the worker that holds it."""
    with _TASK_LOCK, threads(n_threads):
        return fn(kept, **shared, **static)


class Kept:
    """A result kept on a Dask worker (:meth:`DaskExecutor.map_chunks` with ``keep=True``): the
    future that holds it there. Its lineage (the chunk's positions and the map's shared values)
    stays with the scheduler, so a lost worker's kept results are recomputed on the others."""

    __slots__ = ("future",)

    def __init__(self, future: Any) -> None:
        self.future = future


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored inside the block (main thread only). Processes started in it keep
    ignoring it (an ignored signal stays ignored across exec, and Python then installs no
    KeyboardInterrupt handler), so Ctrl-C in a terminal, which signals the whole process
    group, reaches only the driver: it cancels the tasks and closes the cluster itself.
    A Ctrl-C while the block runs (the cluster's start, a few seconds) is lost."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _quiet_logs(*names: str) -> Iterator[None]:
    """The loggers ``names`` silenced (but for CRITICAL) inside the block."""
    import logging  # noqa: PLC0415

    loggers = [logging.getLogger(name) for name in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def lost_task(what: str, exc: BaseException) -> TunerError | None:
    """The one-line error for a Dask task (``what``: "task KEY", "game 12") that failed because
    the cluster lost it, not by its own error: every worker that ran it died (``KilledWorker``,
    after ``distributed.scheduler.allowed-failures`` tries), or the scheduler cancelled or lost
    it; None for an error the task raised itself (the caller handles it as a local run would)."""
    from distributed import KilledWorker  # noqa: PLC0415
    from distributed.client import FutureCancelledError  # noqa: PLC0415

    if isinstance(exc, KilledWorker):
        return TunerError(one_line(f"dask: {what} lost its worker too many times (every worker that ran it died; "
                                   f"distributed.scheduler.allowed-failures): {exc}"))
    if isinstance(exc, (FutureCancelledError, OSError)):
        return TunerError(one_line(f"dask: {what} was lost ({type(exc).__name__}: {exc}); is the scheduler still "
                                   "running?"))
    return None


def _nbytes(x: Any) -> int:
    if isinstance(x, np.ndarray):
        return int(x.nbytes)
    if isinstance(x, (tuple, list)):
        return sum(_nbytes(v) for v in x)
    if isinstance(x, dict):
        return sum(_nbytes(v) for v in x.values())
    if hasattr(x, "__dataclass_fields__"):
        return sum(_nbytes(getattr(x, f)) for f in x.__dataclass_fields__)
    return 8


class DaskExecutor:
    """Dask's distributed scheduler (see the module docstring).

    ``scheduler``: the address of a running scheduler (``tcp://host:8786``); empty: start a
    :class:`distributed.LocalCluster` of ``workers`` processes (0: one per core), one task at a
    time each, closed with the executor. ``n_threads``: numba threads per worker (0: for a
    LocalCluster, the cores divided among its workers; for a scheduler, all of a worker's
    cores). ``chunk``: positions per task when a map does not fix it. ``log``: one-line messages
    (the workers found, a lost worker). Every worker must run the same movetuner code as this
    process (checked on opening: package version, catalogue hash and source fingerprint).

    ``traffic`` counts the bytes this process shipped and received (arrays' ``nbytes``):
    ``positions`` (once per run per set), ``shared`` (the weights, per map call) and ``results``;
    ``between_workers``: the running sums a :meth:`reduce_kept` passes from one worker to the next.
    """

    name = "dask"

    def __init__(self, *, scheduler: str = "", workers: int = 0, n_threads: int = 0, chunk: int = DEFAULT_CHUNK,
                 log: Callable[[str], None] = print, connect_timeout: float = 30.0) -> None:
        try:
            # typed as Any: distributed's annotations are partial (Client, LocalCluster untyped)
            distributed: Any = importlib.import_module("distributed")
        except ImportError:
            raise TunerError("--executor dask needs Dask's distributed scheduler: "
                             "pip install 'movetuner[dask]' (or 'dask[distributed]')") from None
        import logging  # noqa: PLC0415

        self.log = log
        self.chunk = chunk
        self.cluster: Any = None
        cores = available_cores()
        if scheduler:
            try:
                self.client = distributed.Client(scheduler, timeout=connect_timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise TunerError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
            # 0: each worker keeps its own numba count (all of its cores)
            self.n_threads: int | None = n_threads or KEEP_NUMBA_THREADS
            where = f"scheduler {scheduler}"
        else:
            n = resolve_workers(workers)
            dask: Any = importlib.import_module("dask")
            with _sigint_ignored(), dask.config.set(NO_STEALING):  # the workers inherit SIGINT's
                # disposition: Ctrl-C is the driver's to handle (":0": the HTTP server on a free
                # port, rather than a warning when 8787 is taken)
                self.cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                        dashboard_address=":0", silence_logs=logging.ERROR)
            self.client = distributed.Client(self.cluster)
            self.n_threads = n_threads or max(1, cores // n)
            where = f"a LocalCluster of {n} worker processes ({self.client.scheduler.address})"
        try:
            facts = self._check_workers()
        except BaseException:
            self.close()
            raise
        self._datasets: dict[tuple[tuple[int, ...], int], tuple[Dataset, list[Any]]] = {}
        self._homes: dict[str, str] = {}  # a position chunk's key -> the worker it was sent to
        self._removals_seen = len(self._removals())
        self.traffic = {"positions": 0, "shared": 0, "results": 0, "between_workers": 0}
        nt = self.n_threads or "all cores"
        self.log(f"dask: {len(facts)} worker(s) at {where}, numba threads per worker: {nt}")

    # -- opening
    def _check_workers(self) -> dict[str, dict[str, Any]]:
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_SECONDS)
        except TimeoutError:
            raise TunerError(f"dask: no worker joined the scheduler {self.client.scheduler.address} within "
                             f"{WORKERS_SECONDS:.0f} s; start one with: dask worker ADDRESS") from None
        facts: dict[str, dict[str, Any]] = self.client.run(worker_facts)
        mine = worker_facts()
        for address, theirs in sorted(facts.items()):
            for key in ("package_version", "catalog_hash", "code"):
                if theirs.get(key) != mine[key]:
                    raise TunerError(f"dask worker {address} runs other movetuner code ({key} {theirs.get(key)} "
                                     f"here {mine[key]}): install the same version on every worker")
        return facts

    def worker_pids(self) -> dict[str, int]:
        """Each worker's address and process id."""
        return {a: int(f["pid"]) for a, f in self.client.run(worker_facts).items()}

    # -- the data
    def _ship(self, dataset: Dataset, size: int) -> list[Any]:
        """The futures of ``dataset``'s chunks of ``size`` positions, shipped on first use (the
        executor keeps a reference to the dataset, so its identity stays a valid key).

        Arrays are cut here and each chunk sent as a task's argument. A :class:`ChunkSource`'s
        chunks are built by the workers themselves, each from its description (the task carries
        the row numbers, not the positions: neither this process nor the scheduler holds them);
        if a worker cannot build them (the position set is not at the same path there), this
        process builds them one at a time and sends each as arrays, as above, saying so."""
        source = dataset if isinstance(dataset, ChunkSource) else None
        key = ((id(dataset),) if isinstance(dataset, ChunkSource) else tuple(id(x) for x in dataset), size)
        held = self._datasets.get(key)
        if held is not None and _same_dataset(held[0], dataset):
            return held[1]
        on_workers = source is not None and self._workers_build(source)
        token = uuid.uuid4().hex[:8]
        futures = []
        bounds = chunk_bounds(dataset_length(dataset), size)
        # consecutive chunks on the same worker (a preference: another takes them if it is
        # lost), so that a chunk-ordered fold of kept results crosses between workers rarely
        addresses = sorted(self.client.nthreads())
        for k, (a, z) in enumerate(bounds):
            where = [addresses[k * len(addresses) // len(bounds)]] if addresses else None
            if source is not None and on_workers:
                piece = source.part(a, z)
                self.traffic["positions"] += _nbytes(piece)
                args: tuple[Any, ...] = (_build_positions, piece, self.n_threads)
            else:
                part = [np.ascontiguousarray(x) for x in chunk_arrays(dataset, a, z)]
                self.traffic["positions"] += sum(x.nbytes for x in part)
                args = (_positions, *part)
            futures.append(self.client.submit(*args, key=f"positions-{token}-{k}", pure=False,
                                              workers=where, allow_other_workers=bool(where)))
            if where:
                self._homes[futures[-1].key] = where[0]
        self._datasets[key] = (dataset if isinstance(dataset, ChunkSource) else tuple(dataset), futures)
        return futures

    def _workers_build(self, source: ChunkSource) -> bool:
        """Whether every worker can build ``source``'s chunks; if not, say why (once per source)."""
        problems = {a: p for a, p in self.client.run(_source_problem, source.part(0, 0)).items() if p}
        for address, problem in sorted(problems.items())[:1]:
            self.log(f"dask: worker {address} cannot build the position chunks ({problem}); this process builds "
                     f"them one at a time and sends them instead")
        return not problems

    def map_chunks(self, fn: Callable[..., Any], dataset: Dataset, *, size: int | None = None,
                   rows: np.ndarray | None = None, shared: dict[str, Any] | None = None,
                   pacer: Any = None, what: str = "work", keep: bool = False, **static: Any) -> Iterator[Part]:
        size = size or self.chunk
        chunks = self._ship(dataset, size)
        token = uuid.uuid4().hex[:8]
        shared_f = self._share(shared, what, token)
        tasks: list[tuple[int, int, Any]] = []
        kept: list[Any] = []
        for k, (a, z) in enumerate(chunk_bounds(dataset_length(dataset), size)):
            if rows is None:
                out, local = (a, z), None
            else:
                i0, i1 = (int(i) for i in np.searchsorted(rows, [a, z]))
                if i0 == i1:
                    continue
                out, local = (i0, i1), np.asarray(rows[i0:i1], dtype=np.int64) - a
            home = self._homes.get(chunks[k].key) if keep else None  # a kept result stays with its chunk
            future = self.client.submit(_run_chunk, fn, self.n_threads, chunks[k], local, shared_f, static,
                                        key=f"{what}-{token}-{k}", pure=False, workers=[home] if home else None,
                                        allow_other_workers=bool(home))
            if keep:  # the summary comes here, the kept half stays on the worker
                kept.append(self.client.submit(_item, future, 1, key=f"{what}-kept-{token}-{k}", pure=False))
                future = self.client.submit(_item, future, 0, key=f"{what}-summary-{token}-{k}", pure=False)
            tasks.append((*out, future))
        keys = {f.key for *_, f in tasks} | {f.key for f in kept}
        done = False
        try:
            for k, (a, z, future) in enumerate(tasks):
                result = self._result(future)
                self.traffic["results"] += _nbytes(result)
                yield a, z, ((result, Kept(kept[k])) if keep else result)
            done = True
        finally:
            if self.client.status == "running":  # not after close(), when a forgotten map is collected
                # the results are the caller's now; the tasks not yet run are dropped (Ctrl-C, an
                # error). Kept results stay, and with them their lineage: the tasks are only
                # forgotten here, not cancelled, so that a lost worker's kept results can be rebuilt
                if not (keep and done):
                    self.client.cancel([f for *_, f in tasks] + kept + list(shared_f.values()))
                self.report_lost(what, keys | {f.key for f in shared_f.values()} | {f.key for f in chunks})

    def _share(self, shared: dict[str, Any] | None, what: str, token: str) -> dict[str, Any]:
        """Futures of a map's ``shared`` values (the weights), shipped once per call."""
        return {name: self.share(value, f"{what}-{name}-{token}") for name, value in (shared or {}).items()}

    def share(self, value: Any, key: str) -> Any:
        """A future holding ``value`` under ``key``, for tasks to take as an argument: shipped to
        the scheduler once, fetched once by each worker that needs it, and recomputed (it is a
        task with ``value`` as its argument, not scattered data) if a worker that held it is lost."""
        self.traffic["shared"] += _nbytes(value)
        return self.client.submit(_value, value, key=key, pure=False)

    def _apply(self, fn: Callable[..., Any], handles: Sequence[Any], shared: dict[str, Any] | None, what: str,
               static: dict[str, Any]) -> tuple[str, dict[str, Any], list[Any], list[str | None]]:
        """The tasks of ``fn`` on each kept result, each on a worker that holds it (one worker per
        result, the previous result's when it holds it too, so that runs of consecutive results
        share a worker), and those workers."""
        token = uuid.uuid4().hex[:8]
        shared_f = self._share(shared, what, token)
        holders = self.client.who_has([h.future for h in handles])
        where: list[str | None] = []
        for h in handles:
            options = sorted(holders.get(h.future.key) or ())
            where.append(where[-1] if where and where[-1] in options else (options[0] if options else None))
        parts = [self.client.submit(_apply_kept, fn, self.n_threads, h.future, shared_f, static,
                                    key=f"{what}-{token}-{k}", pure=False, workers=[at] if at else None,
                                    allow_other_workers=bool(at))
                 for k, (h, at) in enumerate(zip(handles, where))]
        return token, shared_f, parts, where

    def _settle(self, what: str, handles: Sequence[Any], temporary: list[Any]) -> None:
        """Drop a kept map's temporary tasks (done or not) and log the workers lost meanwhile."""
        if self.client.status == "running":
            self.client.cancel(temporary)
            self.report_lost(what, {f.key for f in temporary} | {h.future.key for h in handles})

    def map_kept(self, fn: Callable[..., Any], handles: Sequence[Any], *, shared: dict[str, Any] | None = None,
                 what: str = "work", **static: Any) -> Iterator[Any]:
        _, shared_f, parts, _ = self._apply(fn, handles, shared, what, static)
        try:
            for future in parts:
                result = self._result(future)
                self.traffic["results"] += _nbytes(result)
                yield result
        finally:
            self._settle(what, handles, parts + list(shared_f.values()))

    def reduce_kept(self, fn: Callable[..., Any], handles: Sequence[Any], *, shared: dict[str, Any] | None = None,
                    what: str = "work", **static: Any) -> Any:
        """Each kept result's part is computed where it lives; then :func:`fold` runs over them
        in order, one task per run of consecutive results on the same worker, each starting
        from the previous run's sum: only the running sum moves, once per change of worker
        (counted in ``traffic["between_workers"]``), and the driver receives the total."""
        token, shared_f, parts, places = self._apply(fn, handles, shared, what, static)
        runs: list[tuple[str | None, list[Any]]] = []
        for where, part in zip(places, parts):
            if runs and runs[-1][0] == where:
                runs[-1][1].append(part)
            else:
                runs.append((where, [part]))
        acc: Any = None
        folds = []
        for i, (where, run) in enumerate(runs):
            acc = self.client.submit(fold, acc, *run, key=f"{what}-fold-{token}-{i}", pure=False,
                                     workers=[where] if where else None, allow_other_workers=bool(where))
            folds.append(acc)
        try:
            result = self._result(acc) if acc is not None else None
            self.traffic["results"] += _nbytes(result)
            self.traffic["between_workers"] += (len(runs) - 1) * _nbytes(result)
            return result
        finally:
            self._settle(what, handles, parts + folds + list(shared_f.values()))

    def fetch(self, handles: Sequence[Any]) -> list[Any]:
        out = [self._result(h.future) for h in handles]
        self.traffic["results"] += sum(_nbytes(x) for x in out)
        return out

    def release(self, handles: Sequence[Any]) -> None:
        if self.client.status == "running":
            self.client.cancel([h.future for h in handles])

    def _result(self, future: Any) -> Any:
        """The future's result, checking for Ctrl-C first and every :data:`POLL_SECONDS` while
        waiting. (Not ``future.result(timeout=...)``: in distributed 2026.8 its timeout can race
        with the result and fail with an UnboundLocalError.)"""
        check_interrupt()
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        while not (future.done() or done.wait(POLL_SECONDS)):
            check_interrupt()
        try:
            return future.result()
        except Exception as exc:
            lost = lost_task(f"task {future.key}", exc)
            if lost is not None:
                raise lost from None
            raise

    # -- lost workers
    def _removals(self) -> list[dict[str, Any]]:
        return [msg for _, msg in self.client.get_events("all")
                if isinstance(msg, dict) and msg.get("action") == "remove-worker"]

    def report_lost(self, what: str, keys: Container[Any]) -> None:
        """Log the workers lost since the last check and how many of this map's tasks (and
        position chunks) the scheduler recomputed elsewhere."""
        removals = self._removals()
        for msg in removals[self._removals_seen:]:
            if msg.get("expected"):
                continue
            touched = {k for k in itertools.chain(msg.get("processing-tasks") or (), msg.get("lost-computed-tasks") or ())
                       if k in keys}
            self.log(f"dask: worker {msg.get('worker', '?')} was lost during {what}; {len(touched)} of its "
                     f"task(s) were recomputed on the other workers")
        self._removals_seen = len(removals)

    def close(self) -> None:
        client, cluster = getattr(self, "client", None), self.cluster
        self._datasets = {}
        self._homes = {}
        # quietly: a client whose scheduler is gone logs the reconnection that close() cancels
        # as an ERROR with a traceback, after the run's own one-line error
        with _quiet_logs("distributed", "distributed.client", "distributed.core"):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close()
        self.cluster = None


# ----------------------------------------------------------------------------- a run's executor


def open_executor(kind: str, *, threads: int, scheduler: str = "", workers: int = 0, chunk: int = DEFAULT_CHUNK,
                  log: Callable[[str], None] = print) -> Executor:
    """The executor ``kind`` names (:data:`EXECUTORS`): ``local``, this process with ``threads``
    numba threads (0: every core it may use, :func:`tuner.cores.resolve_threads`); ``dask``, a
    cluster (``scheduler``'s address, or ``workers`` local processes) whose workers each run
    ``threads`` threads (0: their default), in chunks of ``chunk`` positions. The caller closes
    it (a run does so through :func:`tuner.training.run_context.open_run_context`)."""
    if kind == "local":
        return LocalExecutor(resolve_threads(threads))
    if kind == "dask":
        return DaskExecutor(scheduler=scheduler, workers=workers, n_threads=threads, chunk=chunk, log=log)
    raise TunerError(f"executor must be one of {', '.join(EXECUTORS)}, not {kind!r}")


__all__ = ["DEFAULT_CHUNK", "EXECUTORS", "NO_STEALING", "ChunkSource", "DaskExecutor", "Dataset", "Executor", "Kept", "LocalExecutor", "add_parts", "chunk_arrays", "chunk_bounds",
           "dataset_length", "fold",
           "code_fingerprint", "lost_task", "open_executor", "worker_facts"]
