"""Domain type aliases for signatures: squares, bitboards, scores, packed moves and their arrays.

The aliases name what an ``int`` or an array means, as python-chess does with ``Square`` and
``Bitboard``; they are plain aliases (no ``NewType``), so they cost nothing at run time and numba
kernels can take the same values. The layouts are those of :mod:`search.core.board`.
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

#: a square index, 0 (a1) .. 63 (h8); 64 (``board.NO_SQUARE``) for none
Square: TypeAlias = int
#: a set of squares, bit ``sq`` set for square ``sq`` (a1 = bit 0)
Bitboard: TypeAlias = int
#: a search score in eval units (centipawns x ``PHASE_MAX``) from the side to move's point of
#: view; mate scores near ``search.tree.alphabeta.MATE``
Score: TypeAlias = int
#: a packed move (``int32`` layout of :mod:`search.core.board`: from, to, promotion, flag, piece, captured)
Move: TypeAlias = int
#: the 15 low bits of a packed move: from, to and promotion, all that UCI notation carries
UciKey: TypeAlias = int

#: one board, ``uint64`` of shape ``(BOARD_WORDS,)``, or a batch ``(n, BOARD_WORDS)``
BoardArray: TypeAlias = npt.NDArray[np.uint64]
#: bitboards, ``uint64`` of any shape (tables of square sets)
BitboardArray: TypeAlias = npt.NDArray[np.uint64]
#: packed moves, ``int32`` of shape ``(n,)``
MoveArray: TypeAlias = npt.NDArray[np.int32]
#: UCI keys of moves, ``int32`` of shape ``(n,)``
UciKeyArray: TypeAlias = npt.NDArray[np.int32]
#: search scores in eval units (as :data:`Score`), ``int64`` of shape ``(n,)``
ScoreArray: TypeAlias = npt.NDArray[np.int64]
#: a weight vector, ``int32`` of shape ``(N_FEATURES,)`` (or rows ``(n, N_FEATURES)``), centipawns
WeightArray: TypeAlias = npt.NDArray[np.int32]
#: CSR feature indices (``int32``) and row offsets (``int64``)
IndexArray: TypeAlias = npt.NDArray[np.int32]
OffsetArray: TypeAlias = npt.NDArray[np.int64]
#: CSR feature values (integer coefficients), ``int32``
ValueArray: TypeAlias = npt.NDArray[np.int32]

__all__ = [
    "Bitboard",
    "BitboardArray",
    "BoardArray",
    "IndexArray",
    "Move",
    "MoveArray",
    "OffsetArray",
    "Score",
    "ScoreArray",
    "Square",
    "UciKey",
    "UciKeyArray",
    "ValueArray",
    "WeightArray",
]
