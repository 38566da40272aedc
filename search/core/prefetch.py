"""A cache prefetch for numba kernels: :func:`prefetch_row` asks the processor to start loading
a row of a 2-d array (LLVM's ``llvm.prefetch``: a read, kept in every cache level), so that a
load a little later, after other work, finds it there. A hint only: it changes no value, and a
row index out of bounds is never read (the prefetch of an invalid address is dropped).

The playing search prefetches a child's transposition-table entry as soon as the child's key
is known (:func:`search.play.tables.tt_prefetch`).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload


def prefetch_row(a: Any, row: int) -> None:
    """Start loading row ``row`` of the 2-d array ``a`` into the cache (plain Python: nothing)."""


@intrinsic
def _prefetch_row(typingctx, arr, row):  # type: ignore[no-untyped-def]
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(row, types.Integer)):
        return None
    sig = types.void(arr, row)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        array_type, row_type = signature.args
        array = context.make_array(array_type)(context, builder, args[0])
        index = context.cast(builder, args[1], row_type, types.intp)
        zero = context.get_constant(types.intp, 0)
        ptr = cgutils.get_item_pointer(context, builder, array_type, array, [index, zero])  # type: ignore[no-untyped-call]
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")  # type: ignore[no-untyped-call]
        # (address, read = 0, locality 3: keep in every level, data cache = 1)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@overload(prefetch_row, inline="always")
def _prefetch_row_overload(a, row):  # type: ignore[no-untyped-def]
    if not (isinstance(a, types.Array) and a.ndim == 2 and isinstance(row, types.Integer)):
        return None

    def impl(a, row):  # type: ignore[no-untyped-def]
        _prefetch_row(a, row)  # type: ignore[call-arg]

    return impl


__all__ = ["prefetch_row"]
