"""Borrowed views (search/tree/borrow.py): the same memory as the owner's array, no owner of their
own (so numba counts no references to them), inside tuples too, and nothing else changed; and the
stack reference a recursive kernel takes its bundle by (every write through it lands)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from numba import config, njit, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic
from numba.typed import List

from search.tree.borrow import borrowed, load_ref, stack_ref

compiled_only = pytest.mark.skipif(bool(getattr(config, "DISABLE_JIT")), reason="borrowing is a compiled-code matter")


@intrinsic
def _has_owner(typingctx, arr):  # type: ignore[no-untyped-def]
    """Whether the array's meminfo (its owner, what numba reference-counts) is set."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        a = context.make_array(signature.args[0])(context, builder, value=args[0])
        return builder.not_(cgutils.is_null(builder, a.meminfo))

    return types.boolean(arr), codegen


@njit
def _write_through(a):  # type: ignore[no-untyped-def]
    v = borrowed(a)
    row = v[1]
    row[2] = 7
    return _has_owner(a), _has_owner(v), _has_owner(row), v.shape[0], v.shape[1], v[1, 2]


@njit
def _tuple_owners(t):  # type: ignore[no-untyped-def]
    b = borrowed(t)
    return (_has_owner(t[0]), _has_owner(b[0]), _has_owner(b[1][0]), b[1][1], b[2] is None, b[0].sum(),
            b[1][0][1])


@compiled_only
def test_a_borrowed_view_is_the_same_memory_without_an_owner() -> None:
    a = np.zeros((3, 4), dtype=np.int64)
    owner, view_owner, row_owner, rows, cols, value = _write_through(a)
    assert owner and not view_owner and not row_owner  # a row of a borrowed view has none either
    assert (rows, cols, value) == (3, 4, 7) and a[1, 2] == 7  # written through to the owner's memory


@compiled_only
def test_a_tuple_is_borrowed_item_by_item_nested_ones_too() -> None:
    t = (np.arange(5, dtype=np.int64), (np.arange(3, dtype=np.uint64) + np.uint64(10), 42), None)
    owner, first, nested, number, none, total, value = _tuple_owners(t)
    assert owner and not first and not nested
    assert (number, none, total, value) == (42, True, 10, 11)  # other items as they were


def test_without_the_jit_borrowing_is_the_identity() -> None:
    a = np.ones(3)
    assert borrowed(a) is a and borrowed((a, 1))[0] is a


class _Bundle(NamedTuple):
    counts: np.ndarray
    rows: np.ndarray


@njit
def _count_down(ctx, d):  # type: ignore[no-untyped-def]
    """Each level writes through the loaded bundle (by attribute, by index, after an unpacking)
    and writes nothing it reads again: numba's dead-code pass must keep every write."""
    bundle, nested, extra = load_ref(ctx)
    bundle.counts[d] = 10 * d + nested[0][0]
    nested[1][d % 2, 0] += 1
    if d > 0:
        _count_down(ctx, d - 1)
    return bundle.rows[0, 1] + extra, _has_owner(bundle.counts), _has_owner(nested[1])


@njit
def _by_reference(bundle, nested, extra):  # type: ignore[no-untyped-def]
    ctx = stack_ref((bundle, nested, extra))  # owned arrays: the loaded views own nothing all the same
    return _count_down(ctx, np.int64(5))


@compiled_only
def test_a_bundle_by_reference_reads_and_writes_its_arrays_at_every_depth() -> None:
    bundle = _Bundle(np.zeros(8, dtype=np.int64), np.arange(6, dtype=np.int64).reshape(2, 3))
    nested = (np.full(2, 3, dtype=np.int16), np.zeros((2, 2), dtype=np.int32))
    value, counts_owner, nested_owner = _by_reference(bundle, nested, 100)
    assert value == 101 and not counts_owner and not nested_owner  # read back; loaded views own nothing
    assert bundle.counts.tolist() == [3, 13, 23, 33, 43, 53, 0, 0]  # every level's write landed
    assert nested[1][:, 0].tolist() == [3, 3] and nested[1][:, 1].tolist() == [0, 0]


@njit
def _refer_to(x):  # type: ignore[no-untyped-def]
    ctx = stack_ref((x, np.zeros(1)))
    return load_ref(ctx)[1][0]


@compiled_only
def test_a_bundle_holding_a_reference_counted_object_other_than_an_array_is_refused() -> None:
    with pytest.raises(TypingError, match="reference-counted and not an array"):
        _refer_to(List([1, 2]))


def test_without_the_jit_a_reference_is_the_bundle_itself_and_with_it_an_intrinsic() -> None:
    t = (np.ones(2), 3)
    if getattr(config, "DISABLE_JIT"):
        assert load_ref(stack_ref(t)) is t
    else:  # plain intrinsics, not inlined overloads (search.tree.borrow says why)
        assert type(stack_ref).__name__ == type(load_ref).__name__ == "_Intrinsic"
