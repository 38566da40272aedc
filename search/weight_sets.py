"""The weight sets that ship with the package, defined here and written to ``search/data/``.

- ``material``: the catalogue's defaults (:func:`search.catalog.default_values`): piece values
  only (pawn 100, knight 320, bishop 330, rook 500, queen 900, the same in the middle and the
  end game), every other weight 0. The untrained start.
- ``classic``: hand-set values for every group. Piece-square tables are Tomasz
  Michniewski's "Simplified Evaluation Function" (Chess Programming Wiki), with an end-game
  king table and rank-based end-game pawn table; the other terms are round numbers of the
  usual sign and size. The ``attacks`` and ``defends`` groups are 0: their strongest
  cases (pawns and minors attacking bigger pieces) are already the ``pieces.threat_by_*``
  terms, and zeros keep ``classic``'s scores what they were before those groups existed.

``python -m search.weight_sets`` rewrites the JSON files; a test checks that they match.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from search.catalog import (
    FEATURE_INDEX,
    MAX_MOBILITY,
    N_FEATURES,
    SQUARE_NAMES,
    default_values,
)
from search.weights import BUILTIN_DIR, Weights, save_weights

# Tables as printed, rank 8 first, files a..h; index with _table() into a1..h8 order.
_PAWN_MG = """
  0   0   0   0   0   0   0   0
 50  50  50  50  50  50  50  50
 10  10  20  30  30  20  10  10
  5   5  10  25  25  10   5   5
  0   0   0  20  20   0   0   0
  5  -5 -10   0   0 -10  -5   5
  5  10  10 -20 -20  10  10   5
  0   0   0   0   0   0   0   0
"""
#: the end-game pawn table is by relative rank only (rank 1 .. rank 8), the same on every file
_PAWN_EG_BY_RANK = (0, 0, 5, 10, 20, 35, 60, 0)
_KNIGHT = """
-50 -40 -30 -30 -30 -30 -40 -50
-40 -20   0   0   0   0 -20 -40
-30   0  10  15  15  10   0 -30
-30   5  15  20  20  15   5 -30
-30   0  15  20  20  15   0 -30
-30   5  10  15  15  10   5 -30
-40 -20   0   5   5   0 -20 -40
-50 -40 -30 -30 -30 -30 -40 -50
"""
_BISHOP = """
-20 -10 -10 -10 -10 -10 -10 -20
-10   0   0   0   0   0   0 -10
-10   0   5  10  10   5   0 -10
-10   5   5  10  10   5   5 -10
-10   0  10  10  10  10   0 -10
-10  10  10  10  10  10  10 -10
-10   5   0   0   0   0   5 -10
-20 -10 -10 -10 -10 -10 -10 -20
"""
_ROOK = """
  0   0   0   0   0   0   0   0
  5  10  10  10  10  10  10   5
 -5   0   0   0   0   0   0  -5
 -5   0   0   0   0   0   0  -5
 -5   0   0   0   0   0   0  -5
 -5   0   0   0   0   0   0  -5
 -5   0   0   0   0   0   0  -5
  0   0   0   5   5   0   0   0
"""
_QUEEN = """
-20 -10 -10  -5  -5 -10 -10 -20
-10   0   0   0   0   0   0 -10
-10   0   5   5   5   5   0 -10
 -5   0   5   5   5   5   0  -5
  0   0   5   5   5   5   0  -5
-10   5   5   5   5   5   0 -10
-10   0   5   0   0   0   0 -10
-20 -10 -10  -5  -5 -10 -10 -20
"""
_KING_MG = """
-30 -40 -40 -50 -50 -40 -40 -30
-30 -40 -40 -50 -50 -40 -40 -30
-30 -40 -40 -50 -50 -40 -40 -30
-30 -40 -40 -50 -50 -40 -40 -30
-20 -30 -30 -40 -40 -30 -30 -20
-10 -20 -20 -20 -20 -20 -20 -10
 20  20   0   0   0   0  20  20
 20  30  10   0   0  10  30  20
"""
_KING_EG = """
-50 -40 -30 -20 -20 -30 -40 -50
-30 -20 -10   0   0 -10 -20 -30
-30 -10  20  30  30  20 -10 -30
-30 -10  30  40  40  30 -10 -30
-30 -10  30  40  40  30 -10 -30
-30 -10  20  30  30  20 -10 -30
-30 -30   0   0   0   0 -30 -30
-50 -30 -30 -30 -30 -30 -30 -50
"""

# (term, middle-game value, end-game value) for the scalar terms of the classic set
_CLASSIC_TERMS: tuple[tuple[str, int, int], ...] = (
    ("pawns.doubled", -10, -20),
    ("pawns.isolated", -10, -15),
    ("pawns.backward", -8, -10),
    ("pawns.phalanx", 5, 5),
    ("pawns.supported", 5, 8),
    ("king.shield1", 15, 0),
    ("king.shield2", 8, 0),
    ("king.open_file", -20, 0),
    ("king.semiopen_file", -10, 0),
    ("pieces.bishop_pair", 30, 50),
    ("pieces.rook_open_file", 25, 10),
    ("pieces.rook_semiopen_file", 12, 5),
    ("pieces.rook_seventh", 10, 20),
    ("pieces.knight_outpost", 20, 10),
    ("pieces.threat_by_pawn", 30, 25),
    ("pieces.threat_by_minor", 25, 20),
    ("pieces.threat_by_rook", 25, 20),
    ("pieces.tempo", 15, 5),
)
_PASSED = ((5, 10), (10, 20), (15, 35), (25, 60), (40, 90), (60, 130))  # rank2 .. rank7
_PASSED_FREE = ((0, 0), (0, 5), (5, 10), (10, 20), (15, 35), (25, 50))
_MOBILITY = {"knight": (4, 4, 4), "bishop": (5, 5, 6), "rook": (2, 4, 7), "queen": (1, 2, 13)}
_ZONE_ATTACKERS = {"pawn": 5, "knight": 10, "bishop": 10, "rook": 15, "queen": 20}
_ZONE_COUNT = (0, 10, 30, 60, 90)  # 1 .. 5+ attackers


def _rank_table(by_rank: tuple[int, ...]) -> list[int]:
    """A table that depends on the rank only, as 64 values in a1..h8 order."""
    return [by_rank[sq // 8] for sq in range(64)]


def _table(text: str) -> list[int]:
    """A printed table (rank 8 first) as 64 values in a1..h8 order."""
    rows = [[int(v) for v in line.split()] for line in text.strip().splitlines()]
    assert len(rows) == 8 and all(len(r) == 8 for r in rows)
    return [rows[7 - sq // 8][sq % 8] for sq in range(64)]


def _set(w: npt.NDArray[np.int32], name: str, mg: int, eg: int) -> None:
    w[FEATURE_INDEX["mg." + name]] = mg
    w[FEATURE_INDEX["eg." + name]] = eg


def material_weights() -> Weights:
    w = np.array(default_values(), dtype=np.int32)
    return Weights(w, {"name": "material", "description": "piece values only; the untrained start"})


def classic_weights() -> Weights:
    w = np.zeros(N_FEATURES, dtype=np.int32)
    for piece, (mg, eg) in {"pawn": (90, 110), "knight": (320, 300), "bishop": (330, 320),
                             "rook": (480, 540), "queen": (950, 950)}.items():
        _set(w, f"material.{piece}", mg, eg)
    tables = {"pawn": (_table(_PAWN_MG), _rank_table(_PAWN_EG_BY_RANK)), "knight": (_table(_KNIGHT),) * 2,
              "bishop": (_table(_BISHOP),) * 2, "rook": (_table(_ROOK),) * 2, "queen": (_table(_QUEEN),) * 2,
              "king": (_table(_KING_MG), _table(_KING_EG))}
    for piece, (mg_table, eg_table) in tables.items():
        for sq, mg, eg in zip(SQUARE_NAMES, mg_table, eg_table):
            _set(w, f"pst.{piece}.{sq}", mg, eg)
    for term, mg, eg in _CLASSIC_TERMS:
        _set(w, term, mg, eg)
    for r, ((pm, pe), (fm, fe)) in enumerate(zip(_PASSED, _PASSED_FREE), start=2):
        _set(w, f"pawns.passed.rank{r}", pm, pe)
        _set(w, f"pawns.passed_free.rank{r}", fm, fe)
    for piece, (mg_step, eg_step, centre) in _MOBILITY.items():
        for m in range(MAX_MOBILITY[piece] + 1):
            _set(w, f"mobility.{piece}.{m}", mg_step * (m - centre), eg_step * (m - centre))
    for piece, value in _ZONE_ATTACKERS.items():
        _set(w, f"king.zone_attackers.{piece}", value, 0)
    for n, value in enumerate(_ZONE_COUNT, start=1):
        _set(w, f"king.zone_attack_count.{n}", value, 0)
    return Weights(w, {"name": "classic",
                       "description": "hand-set values for every group; PSTs from the Simplified "
                                      "Evaluation Function (Chess Programming Wiki)"})


BUILDERS: dict[str, Callable[[], Weights]] = {"material": material_weights, "classic": classic_weights}


def write_builtin_files() -> None:
    for name, build in BUILDERS.items():
        save_weights(BUILTIN_DIR / f"{name}.json", build())


if __name__ == "__main__":
    write_builtin_files()
