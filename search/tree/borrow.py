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

A *stack reference* (:func:`stack_ref`, read back by :func:`load_ref`) passes a whole bundle to a
recursive kernel as one pointer. numba passes a tuple of arrays by value, every field of every
array an argument of its own (a workspace of 40 arrays: about 350 words written at each call);
the reference is one word. :func:`load_ref` reads each array of the bundle as a borrowed view
whose missing owner the compiler can see (a constant null, not a loaded one), so the views cost
no reference counting, and the arrays a kernel never reads are never loaded. Measured alone (a
recursive function reading two of 42 arrays, 2**21 calls): 114 ns a call with the tuple, 1.5 ns
with the reference. The reference points into the frame of the function that took it: take it
in a kernel that calls the recursion and outlives it, never return it, and put in the bundle
only arrays, tuples of them and plain values (anything else that numba counts references to is
refused: its owner would be lost).
"""

from __future__ import annotations

from typing import Any

import llvmlite.ir as ir
from numba import config, types
from numba.core import cgutils, datamodel, ir_utils
from numba.core import ir as numba_ir
from numba.core.errors import TypingError
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


_MODELS: Any = getattr(datamodel, "default_manager")
#: numba's own step of its alias analysis (``numba.core.ir_utils``), which the two below extend
_ADD_ALIAS: Any = getattr(ir_utils, "_add_alias")


def _items(ty: types.Type) -> tuple[types.Type, ...]:
    """The item types of tuple type ``ty``."""
    return tuple(getattr(ty, "types"))


def _refusal(ty: types.Type) -> str:
    """Why bundle type ``ty`` cannot go by :func:`stack_ref` ('' when it can)."""
    if isinstance(ty, types.BaseTuple):
        return next((r for r in map(_refusal, _items(ty)) if r), "")
    if isinstance(ty, types.Array) or not _MODELS[ty].contains_nrt_meminfo():
        return ""
    return f"stack_ref: {ty} is reference-counted and not an array"


_I32 = ir.IntType(32)


def _load_borrowed(context: Any, builder: Any, ptr: Any, ty: types.Type) -> Any:
    """Load the value of type ``ty`` at ``ptr`` field by field, each array with a null owner."""
    llty = context.get_value_type(ty)
    if isinstance(ty, types.BaseTuple):
        val = ir.Constant(llty, ir.Undefined)
        for i, item in enumerate(_items(ty)):
            at = builder.gep(ptr, [ir.Constant(_I32, 0), ir.Constant(_I32, i)], inbounds=True)
            val = builder.insert_value(val, _load_borrowed(context, builder, at, item), i)
        return val
    val = builder.load(ptr)
    if isinstance(ty, types.Array):  # fields 0 and 1: meminfo and parent
        val = builder.insert_value(val, ir.Constant(llty.elements[0], None), 0)
        val = builder.insert_value(val, ir.Constant(llty.elements[1], None), 1)
    return val


def _aliases_its_reference(lhs: str, args: Any, alias_map: Any, arg_aliases: Any) -> None:
    """numba's alias analysis: :func:`load_ref`'s result aliases its reference (an argument of
    the kernel). Without it numba takes the loaded bundle for a fresh local, and its dead-code
    pass drops every write into an array of it that the function does not read again
    (``stats[k] += 1``). The two are plain intrinsics, not inlined overloads, for the same
    reason: numba's analysis walks the blocks once, in order, and an inlined call's blocks come
    after the code that uses its result."""
    _ADD_ALIAS(lhs, args[0].name, alias_map, arg_aliases)


def _unpacking_aliases(instr: Any, args: Any, typemap: Any, func_ir: Any, alias_map: Any, arg_aliases: Any) -> None:
    """numba's alias analysis: ``a, b = t`` (``exhaust_iter``) makes the unpacked tuple alias
    ``t``, as ``t[0]`` does (numba follows the index, not the unpacking), so that the items of a
    loaded bundle alias the kernel's argument. More aliases only keep more code alive."""
    value = getattr(instr, "value", None)
    if isinstance(value, numba_ir.Expr) and value.op == "exhaust_iter":
        _ADD_ALIAS(instr.target.name, value.value.name, alias_map, arg_aliases)


stack_ref: Any
load_ref: Any

if getattr(config, "DISABLE_JIT"):

    def stack_ref(x: Any) -> Any:
        """A reference to bundle ``x`` in the caller's frame (module docstring); without the JIT, ``x``."""
        return x

    def load_ref(p: Any) -> Any:
        """The bundle :func:`stack_ref` refers to, its arrays borrowed; without the JIT, ``p``."""
        return p

else:

    @intrinsic
    def stack_ref(typingctx, x):  # type: ignore[no-untyped-def]
        """A reference to bundle ``x`` (a tuple of arrays, nested tuples and plain values), kept
        in the frame of the calling kernel (module docstring); :func:`load_ref` reads it."""
        refusal = _refusal(x)
        if refusal:
            raise TypingError(refusal)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            slot = cgutils.alloca_once_value(builder, args[0])  # type: ignore[no-untyped-call]
            return builder.bitcast(slot, context.get_value_type(signature.return_type))

        return types.CPointer(x)(x), codegen  # type: ignore[no-untyped-call]

    @intrinsic
    def load_ref(typingctx, p):  # type: ignore[no-untyped-def]
        """The bundle :func:`stack_ref` refers to, every array in it a borrowed view."""
        if not isinstance(p, types.CPointer):
            return None

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            ty = signature.return_type
            at = builder.bitcast(args[0], context.get_value_type(ty).as_pointer())
            return _load_borrowed(context, builder, at, ty)

        return p.dtype(p), codegen

    ir_utils.alias_func_extensions[("load_ref", __name__)] = _aliases_its_reference
    if numba_ir.Assign not in ir_utils.alias_analysis_extensions:
        ir_utils.alias_analysis_extensions[numba_ir.Assign] = _unpacking_aliases
