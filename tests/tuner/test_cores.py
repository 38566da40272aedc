"""The one rule for thread and worker-process requests (:mod:`tuner.cores`): 0 or None asks for
one per usable core, a positive count is taken as given up to its ceiling."""

from __future__ import annotations

import os

import numba
import pytest

from search.tree.search_api import threads
from tuner.cores import (
    ALL_CORES,
    KEEP_NUMBA_THREADS,
    MAX_WORKERS,
    available_cores,
    check_threads,
    check_workers,
    resolve_threads,
    resolve_workers,
    thread_ceiling,
)


def test_available_cores_is_the_affinity_set() -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert available_cores() == cores


def test_the_thread_ceiling_is_numbas() -> None:
    assert thread_ceiling() == numba.config.NUMBA_NUM_THREADS


def test_all_cores_means_the_usable_cores_up_to_the_ceiling() -> None:
    expected = min(available_cores(), thread_ceiling())
    assert resolve_threads(ALL_CORES) == resolve_threads(None) == expected
    assert resolve_threads(1) == 1
    assert resolve_threads(thread_ceiling()) == thread_ceiling()


def test_all_cores_does_not_depend_on_numbas_current_setting() -> None:
    with threads(1):
        assert resolve_threads(ALL_CORES) == min(available_cores(), thread_ceiling())


def test_keep_numba_threads_leaves_the_count_unchanged() -> None:
    with threads(1):
        with threads(KEEP_NUMBA_THREADS):
            assert numba.get_num_threads() == 1


@pytest.mark.parametrize("bad", [-1, 10**6])
def test_a_thread_request_beyond_the_range_is_one_line(bad: int) -> None:
    with pytest.raises(ValueError, match=rf"^--threads must be from 0 \(all cores\) to {thread_ceiling()}, not {bad}$"):
        check_threads(bad, "--threads")
    with pytest.raises(ValueError, match="^threads must be from 0"):
        resolve_threads(bad)


def test_worker_requests() -> None:
    assert resolve_workers(None) == resolve_workers(ALL_CORES) == available_cores()
    assert resolve_workers(3) == 3
    assert check_workers(None) is None and check_workers(MAX_WORKERS) == MAX_WORKERS
    for bad in (-1, MAX_WORKERS + 1):
        with pytest.raises(ValueError, match=rf"^workers must be from 0 \(one per core\) to {MAX_WORKERS}, not {bad}$"):
            resolve_workers(bad)


def test_the_configs_check_workers_by_the_same_rule() -> None:
    from tuner.arena.match import MatchConfig  # noqa: PLC0415
    from tuner.selfplay.config import SelfplayConfig  # noqa: PLC0415
    from tuner.training.tune_config import TuneConfig  # noqa: PLC0415

    for config in (MatchConfig(games=2, nodes=5, workers=-1), SelfplayConfig(nodes=5, workers=-1),
                   TuneConfig(workers=-1)):
        with pytest.raises(ValueError, match=rf"^workers must be from 0 \(one per core\) to {MAX_WORKERS}, not -1$"):
            config.validate()
