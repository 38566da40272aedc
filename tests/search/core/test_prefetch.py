"""The cache prefetch of :mod:`search.core.prefetch`: compiled to the processor's prefetch
instruction, and changing no value."""

from __future__ import annotations

import numpy as np
from numba import njit

from search.core.prefetch import prefetch_row
from search.play.tables import new_table, tt_prefetch, tt_read, tt_write


@njit(cache=False)
def _prefetch_then_sum(a):  # type: ignore[no-untyped-def]
    total = np.int64(0)
    for i in range(a.shape[0]):
        prefetch_row(a, (i * 7) % a.shape[0])
        total += a[i, 0] + a[i, a.shape[1] - 1]
    return total


def test_a_prefetch_compiles_to_the_instruction_and_changes_no_value() -> None:
    a = np.arange(64 * 4, dtype=np.int64).reshape(64, 4)
    assert _prefetch_then_sum(a) == int(a[:, 0].sum() + a[:, -1].sum())
    asm = _prefetch_then_sum.inspect_asm(_prefetch_then_sum.signatures[0]).lower()
    assert "prefetch" in asm or "prfm" in asm  # x86-64 prefetcht0, AArch64 prfm
    prefetch_row(a, 3)  # the plain-Python body: nothing


@njit(cache=False)
def _probe_after_prefetch(tt, key):  # type: ignore[no-untyped-def]
    tt_prefetch(tt, key)
    return tt_read(tt, key)


def test_the_table_prefetch_leaves_entries_as_they_were() -> None:
    tt = new_table(6)
    key = np.uint64(0xDEADBEEF12345670)
    tt_write(tt, key, np.int32(0x12345), 6, 1, -4321, 99, 1)
    before = tt.copy()
    assert _probe_after_prefetch(tt, key) == tt_read(tt, key) == (True, 0x12345, 6, 1, -4321, 99)
    assert _probe_after_prefetch(tt, key ^ np.uint64(1 << 40))[0] is False
    assert np.array_equal(tt, before)
