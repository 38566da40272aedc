"""tuner.ordered_pool: results in the order the jobs went out, whatever the workers."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tuner.errors import TunerError
from tuner.ordered_pool import IN_FLIGHT_PER_WORKER, ordered_map


def _slow_square(x: int) -> tuple[int, int]:
    """Early jobs take longest, so that a pool would finish them last."""
    time.sleep(0.002 * max(0, 20 - x))
    return x * x, os.getpid()


def _fails_at(x: int, bad: int) -> int:
    if x == bad:
        raise ValueError(f"job {x} failed")
    return x


def _dies_at(x: int, bad: int) -> int:
    if x == bad:
        os._exit(3)
    return x


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_results_come_in_job_order_and_the_jobs_are_read_as_needed(workers: int) -> None:
    read: list[int] = []

    def items() -> Iterator[int]:
        for x in range(40):
            read.append(x)
            yield x

    results = []
    for x, (value, pid) in ordered_map(_slow_square, items(), workers, args=lambda x: (x,)):
        # never more than the jobs in flight read ahead of the results consumed
        assert len(read) - len(results) <= IN_FLIGHT_PER_WORKER * workers + 1
        assert value == x * x  # each item comes back with its own result
        results.append((value, pid))
    assert [v for v, _ in results] == [x * x for x in range(40)]
    pids = {pid for _, pid in results}
    assert (pids == {os.getpid()}) if workers == 1 else (os.getpid() not in pids and len(pids) <= workers)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_job_error_reaches_the_caller_as_raised(workers: int) -> None:
    with pytest.raises(ValueError, match="job 5 failed"):
        list(ordered_map(_fails_at, range(12), workers, args=lambda x: (x, 5)))


def test_a_dead_worker_is_one_line_naming_what_died() -> None:
    with pytest.raises(TunerError, match=r"^a merge worker died \(.*\); rerun with --workers 1 to see why$"):
        list(ordered_map(_dies_at, range(12), 2, args=lambda x: (x, 4), failure="a merge worker died"))
