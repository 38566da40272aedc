"""Bit operations on 64-bit bitboards for numba kernels.

Bitboards are ``numpy.uint64``; square 0 is a1, 7 is h1, 63 is h8 (little-endian rank-file,
as python-chess). Mixing ``uint64`` with Python ints in numba silently promotes to float64,
so every constant a kernel combines with a bitboard is a ``numpy.uint64`` from here.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import config, njit, types
from numba.extending import intrinsic

U64 = np.uint64
ZERO = np.uint64(0)
ONE = np.uint64(1)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
FILE_A = np.uint64(0x0101010101010101)
FILE_H = np.uint64(0x8080808080808080)
RANK_1 = np.uint64(0x00000000000000FF)
RANK_2 = np.uint64(0x000000000000FF00)
RANK_7 = np.uint64(0x00FF000000000000)
RANK_8 = np.uint64(0xFF00000000000000)
LIGHT_SQUARES = np.uint64(0x55AA55AA55AA55AA)
DARK_SQUARES = np.uint64(0xAA55AA55AA55AA55)


@intrinsic
def _cttz(typingctx, x):  # type: ignore[no-untyped-def]
    """Count trailing zeros (LLVM ``cttz``); the argument must not be zero."""
    if x != types.uint64:
        return None
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return sig, codegen


@intrinsic
def _ctpop(typingctx, x):  # type: ignore[no-untyped-def]
    """Population count (LLVM ``ctpop``)."""
    if x != types.uint64:
        return None
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctpop(args[0])

    return sig, codegen


if getattr(config, "DISABLE_JIT"):  # plain-Python fallbacks so that the suite can run without the JIT

    def lsb(bb: np.uint64) -> int:
        """Index of the lowest set bit of a non-zero bitboard."""
        v = int(bb)
        return (v & -v).bit_length() - 1

    def popcount(bb: np.uint64) -> int:
        """Number of set bits."""
        return int(bb).bit_count()

else:

    @njit(cache=True, inline="always")
    def lsb(bb: np.uint64) -> int:
        """Index of the lowest set bit of a non-zero bitboard."""
        return np.int64(_cttz(bb))  # type: ignore[call-arg, return-value]

    @njit(cache=True, inline="always")
    def popcount(bb: np.uint64) -> int:
        """Number of set bits."""
        return np.int64(_ctpop(bb))  # type: ignore[call-arg, return-value]


@njit(cache=True, inline="always")
def bit(sq: int) -> np.uint64:
    """The bitboard with only square ``sq`` set."""
    return ONE << np.uint64(sq)


@njit(cache=True, inline="always")
def pop_lsb(bb: np.uint64) -> np.uint64:
    """``bb`` without its lowest set bit."""
    return bb & (bb - ONE)
