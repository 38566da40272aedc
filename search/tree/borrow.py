"""Views of arrays without a reference count, for the search's inner loop.

numba counts references to every array a kernel holds: taking an array out of a tuple (the
search workspace), or a row of one (``boards[ply]``), increments its owner's count and drops
it again afterwards, each an atomic (``lock``-prefixed) instruction, dozens per node in the
search (what that cost, measured: ``docs/scaling.md``). A *borrowed* view is the same array (data, shape, strides) with no owner: numba's
reference counting skips it (its ``NRT_incref``/``NRT_decref`` test for a null owner first),
and so do the views taken from it.

The owner must outlive the view: borrow only arrays that the caller holds for the whole call
(a kernel's arguments, or arrays it allocated), and never return a borrowed view to Python
(it would have no owner there).
"""

from __future__ import annotations

from typing import Any

from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic, overload


@intrinsic
def _borrowed_array(typingctx, arr):  # type: ignore[no-untyped-def]
    """``arr`` without its owner (meminfo and parent null): no reference counting."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aryty = signature.args[0]
        src = context.make_array(aryty)(context, builder, value=args[0])
        dst = context.make_array(aryty)(context, builder)
        dst.meminfo = cgutils.get_null_value(dst.meminfo.type)  # type: ignore[no-untyped-call]
        dst.parent = cgutils.get_null_value(dst.parent.type)  # type: ignore[no-untyped-call]
        dst.nitems = src.nitems
        dst.itemsize = src.itemsize
        dst.data = src.data
        dst.shape = src.shape
        dst.strides = src.strides
        return dst._getvalue()

    return arr(arr), codegen


def borrowed(x: Any) -> Any:
    """``x`` with every array in it (``x`` itself, or the items of a tuple, nested tuples
    too) replaced by a borrowed view (module docstring); anything else as it is. With the JIT
    disabled, ``x`` itself."""
    return x


if not getattr(config, "DISABLE_JIT"):

    @overload(borrowed, inline="always")
    def _borrowed_overload(x):  # type: ignore[no-untyped-def]
        if isinstance(x, types.Array):
            return lambda x: _borrowed_array(x)  # type: ignore[call-arg]
        if isinstance(x, types.BaseTuple) and len(x) > 0:
            # each item borrowed, as a tuple of len(x) items written out
            items = "".join(f"borrowed(x[{i}]), " for i in range(len(x)))
            scope: dict[str, Any] = {"borrowed": borrowed}
            exec(f"def impl(x):\n    return ({items})\n", scope)  # noqa: S102 (code built above)
            return scope["impl"]
        return lambda x: x
