"""The weight sets that ship with the package, defined here and written to ``search/data/``.

- ``material``: the catalogue's defaults (:func:`search.params.catalog.default_values`): piece values
  only (pawn 100, knight 320, bishop 330, rook 500, queen 900, the same in the middle and the
  end game), every other weight 0. The untrained start.
- ``classic``: hand-set values for every group. Piece-square tables are Tomasz
  Michniewski's "Simplified Evaluation Function" (Chess Programming Wiki), with an end-game
  king table and rank-based end-game pawn table; the other terms are round numbers of the
  usual sign and size. The ``attacks`` and ``defends`` groups are 0: their strongest
  cases (pawns and minors attacking bigger pieces) are already the ``pieces.threat_by_*``
  terms, and zeros keep ``classic``'s scores what they were before those groups existed.

``python -m search.params.weight_sets`` rewrites the JSON files; a test checks that they match.

Published evaluations, for comparisons (:data:`PUBLISHED`): not built in (no name loads them and
nothing uses them by default), written to ``datasets/weights/NAME.json`` of a source checkout
(:data:`PUBLISHED_DIR`) by the same command; a test checks those files too.

- ``pesto``: Ronald Friederich's "PeSTO's Evaluation Function" (Chess Programming Wiki,
  https://www.chessprogramming.org/PeSTO%27s_Evaluation_Function; the tables of his engines
  rofChade and PeSTO, Texel-tuned): piece values and twelve piece-square tables, tapered by the
  phase ``min(24, N + B + 2 R + 4 Q)``, which is this catalogue's phase; every other weight 0.
  PeSTO's square value is its piece value plus its table entry; here the piece value is the
  ``material.<piece>`` weight and the entry the ``pst.<piece>.<square>`` weight, which the
  evaluation adds (the king has no material term: its value is 0 in PeSTO). The tables below
  are as the wiki prints them, rank 8 first from White's view; White's a1..h8 square ``s``
  reads entry ``s ^ 56`` of that list, Black's reads entry ``s`` (the wiki's code indexes its
  board a8 = 0 and flips for Black), which is :func:`_table` and the catalogue's relative square.
  Transcribed from the wiki's code as two repositories carry it, which agree on every number:
  ``Synthetica9/lunar`` ``pesto.c`` (commit d4c6c2953950d19e432109afd5d93b3db6a1236c, the
  wiki's code verbatim) and ``rafid-dev/julius`` ``pesto_tables.h`` (commit
  8e640a016b14b02badc4d0835e043902efa08387). PeSTO returns ``(mg * phase + eg * (24 - phase)) / 24``
  in C integer division; this evaluator keeps the numerator (eval units), so its centipawn
  score differs from PeSTO's by less than 1 (``tests/search/params/test_weight_sets_pesto.py``). PeSTO the engine
  also has a tempo bonus that the wiki's function lacks; ``pieces.tempo`` is 0 here, as there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from search.params.catalog import (
    FEATURE_INDEX,
    MAX_MOBILITY,
    N_FEATURES,
    PIECE_NAMES,
    SQUARE_NAMES,
    default_values,
)
from search.params.weights import BUILTIN_DIR, Weights, save_weights

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

# PeSTO's evaluation (module docstring): piece values pawn .. queen (the king's is 0) and tables
# as the Chess Programming Wiki prints them, rank 8 first, files a..h, from White's view.
PESTO_MG_VALUES = (82, 337, 365, 477, 1025)
PESTO_EG_VALUES = (94, 281, 297, 512, 936)
_PESTO_MG_PAWN = """
   0    0    0    0    0    0    0    0
  98  134   61   95   68  126   34  -11
  -6    7   26   31   65   56   25  -20
 -14   13    6   21   23   12   17  -23
 -27   -2   -5   12   17    6   10  -25
 -26   -4   -4  -10    3    3   33  -12
 -35   -1  -20  -23  -15   24   38  -22
   0    0    0    0    0    0    0    0
"""
_PESTO_EG_PAWN = """
   0    0    0    0    0    0    0    0
 178  173  158  134  147  132  165  187
  94  100   85   67   56   53   82   84
  32   24   13    5   -2    4   17   17
  13    9   -3   -7   -7   -8    3   -1
   4    7   -6    1    0   -5   -1   -8
  13    8    8   10   13    0    2   -7
   0    0    0    0    0    0    0    0
"""
_PESTO_MG_KNIGHT = """
-167  -89  -34  -49   61  -97  -15 -107
 -73  -41   72   36   23   62    7  -17
 -47   60   37   65   84  129   73   44
  -9   17   19   53   37   69   18   22
 -13    4   16   13   28   19   21   -8
 -23   -9   12   10   19   17   25  -16
 -29  -53  -12   -3   -1   18  -14  -19
-105  -21  -58  -33  -17  -28  -19  -23
"""
_PESTO_EG_KNIGHT = """
 -58  -38  -13  -28  -31  -27  -63  -99
 -25   -8  -25   -2   -9  -25  -24  -52
 -24  -20   10    9   -1   -9  -19  -41
 -17    3   22   22   22   11    8  -18
 -18   -6   16   25   16   17    4  -18
 -23   -3   -1   15   10   -3  -20  -22
 -42  -20  -10   -5   -2  -20  -23  -44
 -29  -51  -23  -15  -22  -18  -50  -64
"""
_PESTO_MG_BISHOP = """
 -29    4  -82  -37  -25  -42    7   -8
 -26   16  -18  -13   30   59   18  -47
 -16   37   43   40   35   50   37   -2
  -4    5   19   50   37   37    7   -2
  -6   13   13   26   34   12   10    4
   0   15   15   15   14   27   18   10
   4   15   16    0    7   21   33    1
 -33   -3  -14  -21  -13  -12  -39  -21
"""
_PESTO_EG_BISHOP = """
 -14  -21  -11   -8   -7   -9  -17  -24
  -8   -4    7  -12   -3  -13   -4  -14
   2   -8    0   -1   -2    6    0    4
  -3    9   12    9   14   10    3    2
  -6    3   13   19    7   10   -3   -9
 -12   -3    8   10   13    3   -7  -15
 -14  -18   -7   -1    4   -9  -15  -27
 -23   -9  -23   -5   -9  -16   -5  -17
"""
_PESTO_MG_ROOK = """
  32   42   32   51   63    9   31   43
  27   32   58   62   80   67   26   44
  -5   19   26   36   17   45   61   16
 -24  -11    7   26   24   35   -8  -20
 -36  -26  -12   -1    9   -7    6  -23
 -45  -25  -16  -17    3    0   -5  -33
 -44  -16  -20   -9   -1   11   -6  -71
 -19  -13    1   17   16    7  -37  -26
"""
_PESTO_EG_ROOK = """
  13   10   18   15   12   12    8    5
  11   13   13   11   -3    3    8    3
   7    7    7    5    4   -3   -5   -3
   4    3   13    1    2    1   -1    2
   3    5    8    4   -5   -6   -8  -11
  -4    0   -5   -1   -7  -12   -8  -16
  -6   -6    0    2   -9   -9  -11   -3
  -9    2    3   -1   -5  -13    4  -20
"""
_PESTO_MG_QUEEN = """
 -28    0   29   12   59   44   43   45
 -24  -39   -5    1  -16   57   28   54
 -13  -17    7    8   29   56   47   57
 -27  -27  -16  -16   -1   17   -2    1
  -9  -26   -9  -10   -2   -4    3   -3
 -14    2  -11   -2   -5    2   14    5
 -35   -8   11    2    8   15   -3    1
  -1  -18   -9   10  -15  -25  -31  -50
"""
_PESTO_EG_QUEEN = """
  -9   22   22   27   27   19   10   20
 -17   20   32   41   58   25   30    0
 -20    6    9   49   47   35   19    9
   3   22   24   45   57   40   57   36
 -18   28   19   47   31   34   39   23
 -16  -27   15    6    9   17   10    5
 -22  -23  -30  -16  -16  -23  -36  -32
 -33  -28  -22  -43   -5  -32  -20  -41
"""
_PESTO_MG_KING = """
 -65   23   16  -15  -56  -34    2   13
  29   -1  -20   -7   -8   -4  -38  -29
  -9   24    2  -16  -20    6   22  -22
 -17  -20  -12  -27  -30  -25  -14  -36
 -49   -1  -27  -39  -46  -44  -33  -51
 -14  -14  -22  -46  -44  -30  -15  -27
   1    7   -8  -64  -43  -16    9    8
 -15   36   12  -54    8  -28   24   14
"""
_PESTO_EG_KING = """
 -74  -35  -18  -18  -11   15    4  -17
 -12   17   14   17   17   38   23   11
  10   17   23   15   20   45   44   13
  -8   22   24   27   26   33   26    3
 -18   -4   21   24   27   23    9  -11
 -19   -3   11   21   23   16    7   -9
 -27  -11    4   13   14    4   -5  -17
 -53  -34  -21  -11  -28  -14  -24  -43
"""
#: PeSTO's printed tables by piece: (middle game, end game)
PESTO_TABLES: dict[str, tuple[str, str]] = {
    "pawn": (_PESTO_MG_PAWN, _PESTO_EG_PAWN), "knight": (_PESTO_MG_KNIGHT, _PESTO_EG_KNIGHT),
    "bishop": (_PESTO_MG_BISHOP, _PESTO_EG_BISHOP), "rook": (_PESTO_MG_ROOK, _PESTO_EG_ROOK),
    "queen": (_PESTO_MG_QUEEN, _PESTO_EG_QUEEN), "king": (_PESTO_MG_KING, _PESTO_EG_KING),
}


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


def pesto_weights() -> Weights:
    """PeSTO's evaluation (module docstring): material and piece-square tables, every other
    weight 0."""
    w = np.zeros(N_FEATURES, dtype=np.int32)
    for piece, mg, eg in zip(PIECE_NAMES[:5], PESTO_MG_VALUES, PESTO_EG_VALUES):
        _set(w, f"material.{piece}", mg, eg)
    for piece, (mg_text, eg_text) in PESTO_TABLES.items():
        for sq, mg, eg in zip(SQUARE_NAMES, _table(mg_text), _table(eg_text)):
            _set(w, f"pst.{piece}.{sq}", mg, eg)
    return Weights(w, {"name": "pesto",
                       "description": "PeSTO's Evaluation Function (Ronald Friederich, Chess Programming Wiki): "
                                      "material and piece-square tables only, every other weight 0",
                       "source": "https://www.chessprogramming.org/PeSTO%27s_Evaluation_Function, as carried by "
                                 "Synthetica9/lunar pesto.c and rafid-dev/julius pesto_tables.h"})


BUILDERS: dict[str, Callable[[], Weights]] = {"material": material_weights, "classic": classic_weights}
#: published evaluations for comparisons, by name: not built in, written to :data:`PUBLISHED_DIR`
PUBLISHED: dict[str, Callable[[], Weights]] = {"pesto": pesto_weights}
#: where :data:`PUBLISHED` sets are written: ``datasets/weights/`` of a source checkout
PUBLISHED_DIR = Path(__file__).resolve().parents[2] / "datasets" / "weights"


def write_builtin_files() -> None:
    for name, build in BUILDERS.items():
        save_weights(BUILTIN_DIR / f"{name}.json", build())


def write_published_files(folder: Path = PUBLISHED_DIR) -> None:
    """Write each :data:`PUBLISHED` set to ``folder / NAME.json``."""
    for name, build in PUBLISHED.items():
        save_weights(folder / f"{name}.json", build())


if __name__ == "__main__":
    write_builtin_files()
    write_published_files()
