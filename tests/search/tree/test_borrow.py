"""Borrowed views (search/tree/borrow.py): the same memory as the owner's array, no owner of their
own (so numba counts no references to them), inside tuples too, and nothing else changed."""

from __future__ import annotations

import numpy as np
import pytest
from numba import config, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from search.tree.borrow import borrowed

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
