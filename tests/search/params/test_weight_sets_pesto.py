"""The ``pesto`` weight set (:func:`search.params.weight_sets.pesto_weights`, shipped as
``datasets/weights/pesto.json``) is PeSTO's published evaluation in this engine.

The oracle, :func:`pesto_eval`, is the Chess Programming Wiki's ``eval()`` written out in plain
Python, with the wiki's board (a8 = 0, White reading the printed tables as they stand, Black
through ``FLIP(sq) = sq ^ 56``), its ``gamephaseInc`` and its C integer division. The two
formulas are the same up to that division: the engine's phase is ``min(24, N + B + 2 R + 4 Q)``
as PeSTO's, and it keeps the numerator ``mg * phase + eg * (24 - phase)`` as its score in eval
units, so the numerators must be equal exactly and the centipawn scores differ by less than 1.
"""

from __future__ import annotations

import chess
import numpy as np
import pytest

from search.params.catalog import FEATURE_GROUPS, FEATURE_INDEX, PHASE_MAX, PHASE_WEIGHTS
from search.core.convert import from_chess
from search.evaluation.evaluation_api import EVAL_SCALE, evaluate_batch_units
from search.params.weight_sets import PESTO_EG_VALUES, PESTO_MG_VALUES, PESTO_TABLES, PUBLISHED_DIR, pesto_weights
from search.params.weights import BUILTIN_SETS, load_weights

PIECES = ("pawn", "knight", "bishop", "rook", "queen", "king")
#: the wiki's piece values, king included
MG_VALUE = (*PESTO_MG_VALUES, 0)
EG_VALUE = (*PESTO_EG_VALUES, 0)
#: the wiki's gamephaseInc, by piece type pawn .. king (its array repeats each for both colours)
GAMEPHASE_INC = (0, 1, 1, 2, 4, 0)
#: the sum of each printed table, from the two sources the tables were transcribed from
#: (Synthetica9/lunar pesto.c, rafid-dev/julius pesto_tables.h): a transcription fingerprint
PUBLISHED_SUMS = {"mg_pawn": 759, "eg_pawn": 2043, "mg_knight": -59, "eg_knight": -1018, "mg_bishop": 341,
                  "eg_bishop": -268, "mg_rook": 505, "eg_rook": 52, "mg_queen": 146, "eg_queen": 565,
                  "mg_king": -999, "eg_king": 176}


def _printed(text: str) -> list[int]:
    """A printed table as the wiki's flat array: index 0 is a8, 63 is h1."""
    return [int(v) for v in text.split()]


MG_PESTO = [_printed(PESTO_TABLES[p][0]) for p in PIECES]
EG_PESTO = [_printed(PESTO_TABLES[p][1]) for p in PIECES]


def _init_tables() -> tuple[list[list[int]], list[list[int]]]:
    """The wiki's init_tables(): 12 pieces (2 * type + colour, White 0, Black 1) x 64 squares."""
    mg_table = [[0] * 64 for _ in range(12)]
    eg_table = [[0] * 64 for _ in range(12)]
    for p in range(6):
        for sq in range(64):
            mg_table[2 * p][sq] = MG_VALUE[p] + MG_PESTO[p][sq]
            eg_table[2 * p][sq] = EG_VALUE[p] + EG_PESTO[p][sq]
            mg_table[2 * p + 1][sq] = MG_VALUE[p] + MG_PESTO[p][sq ^ 56]
            eg_table[2 * p + 1][sq] = EG_VALUE[p] + EG_PESTO[p][sq ^ 56]
    return mg_table, eg_table


MG_TABLE, EG_TABLE = _init_tables()


def pesto_eval(board: chess.Board) -> tuple[int, int]:
    """The wiki's eval() of ``board``: (the tapered numerator, the score it returns), side to
    move's view. Its board is indexed a8 = 0, so python-chess's square ``s`` is its ``s ^ 56``."""
    mg = [0, 0]
    eg = [0, 0]
    game_phase = 0
    for s, piece in board.piece_map().items():
        pc = 2 * (piece.piece_type - 1) + (0 if piece.color == chess.WHITE else 1)
        sq = s ^ 56
        mg[pc & 1] += MG_TABLE[pc][sq]
        eg[pc & 1] += EG_TABLE[pc][sq]
        game_phase += GAMEPHASE_INC[pc >> 1]
    side = 0 if board.turn == chess.WHITE else 1
    mg_score = mg[side] - mg[1 - side]
    eg_score = eg[side] - eg[1 - side]
    mg_phase = min(game_phase, 24)
    numerator = mg_score * mg_phase + eg_score * (24 - mg_phase)
    score = abs(numerator) // 24 * (1 if numerator >= 0 else -1)  # C's division truncates toward 0
    return numerator, score


def _units(boards: list[chess.Board]) -> np.ndarray:
    arrays = np.ascontiguousarray(np.stack([from_chess(b) for b in boards]))
    units: np.ndarray = evaluate_batch_units(arrays, pesto_weights().values)
    return units


def test_tables_are_the_published_ones() -> None:
    assert all(len(t) == 64 for t in MG_PESTO + EG_PESTO)
    sums = {f"{stage}_{p}": sum(tables[i]) for i, p in enumerate(PIECES)
            for stage, tables in (("mg", MG_PESTO), ("eg", EG_PESTO))}
    assert sums == PUBLISHED_SUMS
    # corners of the printed tables, as the wiki prints them (first and last entries)
    assert (MG_PESTO[1][0], MG_PESTO[1][63], EG_PESTO[0][8], MG_PESTO[5][63], EG_PESTO[5][0]) == (-167, -23, 178, 14, -74)
    assert MG_VALUE == (82, 337, 365, 477, 1025, 0) and EG_VALUE == (94, 281, 297, 512, 936, 0)


def test_the_phase_is_pestos() -> None:
    assert PHASE_MAX == 24 and PHASE_WEIGHTS == GAMEPHASE_INC


def test_shipped_file_matches_its_definition_and_is_not_built_in() -> None:
    shipped = load_weights(PUBLISHED_DIR / "pesto.json")
    assert np.array_equal(shipped.values, pesto_weights().values)
    assert shipped.metadata["name"] == "pesto"
    assert "pesto" not in BUILTIN_SETS


def test_only_material_and_piece_square_weights_are_set() -> None:
    w = pesto_weights().values
    assert {FEATURE_GROUPS[i] for i in np.flatnonzero(w)} == {"material", "pst"}
    for piece, mg, eg in zip(PIECES, PESTO_MG_VALUES, PESTO_EG_VALUES):
        assert (w[FEATURE_INDEX[f"mg.material.{piece}"]], w[FEATURE_INDEX[f"eg.material.{piece}"]]) == (mg, eg)
    # the piece-square weights are the table entries alone: the material weight is added on top
    assert w[FEATURE_INDEX["mg.pst.pawn.a7"]] == 98 and w[FEATURE_INDEX["eg.pst.pawn.h7"]] == 187
    assert w[FEATURE_INDEX["mg.pst.knight.a8"]] == -167 and w[FEATURE_INDEX["mg.pst.king.g1"]] == 24


def test_white_knight_on_e4_and_black_knight_on_e5_are_worth_the_same() -> None:
    white = chess.Board("4k3/8/8/8/4N3/8/8/4K3 w - - 0 1")
    black = white.mirror()  # Black knight on e5, Black to move, kings swapped
    assert black.piece_at(chess.E5) == chess.Piece(chess.KNIGHT, chess.BLACK)
    # phase 1; the kings cancel; the knight: mg 337 + 28, eg 281 + 16 (rank 4, e-file, as printed)
    expected = (337 + 28) * 1 + (281 + 16) * 23
    assert pesto_eval(white)[0] == pesto_eval(black)[0] == expected
    assert list(_units([white, black])) == [expected, expected]
    # the side not to move sees it negated
    other = chess.Board("4k3/8/8/8/4N3/8/8/4K3 b - - 0 1")
    assert pesto_eval(other)[0] == _units([other])[0] == -expected


def test_a_pawn_about_to_promote_gets_the_big_row() -> None:
    # the printed second row (98, 134, ...) is rank 7 for White and rank 2 for Black
    white = chess.Board("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    black = chess.Board("4k3/8/8/8/8/8/p7/4K3 b - - 0 1")
    assert list(_units([white, black])) == [24 * (94 + 178)] * 2  # phase 0: end game only
    assert pesto_eval(white)[0] == pesto_eval(black)[0] == 24 * (94 + 178)


#: positions the games do not reach: more than 24 phase (an early promotion; PeSTO caps it),
#: bare kings and pawns (phase 0), Black to move with a queen against rooks
EXTRA_FENS = (
    "rnbqkbnr/pppppppp/8/8/8/8/QPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/QPPPPPPP/RNBQKBNR b KQkq - 0 1",
    "8/5k2/1p4p1/p1p2p1p/P1P2P1P/1P4P1/5K2/8 b - - 0 40",
    "3r2k1/5ppp/8/8/2q5/8/5PPP/3RR1K1 b - - 0 30",
)


def test_evaluation_equals_plain_pesto_on_the_sample_games(real_boards: list[chess.Board]) -> None:
    boards = real_boards + [chess.Board(f) for f in EXTRA_FENS]
    units = _units(boards)
    oracle = [pesto_eval(b) for b in boards]
    numerators = np.array([n for n, _ in oracle], dtype=np.int64)
    mismatch = np.flatnonzero(units != numerators)
    assert mismatch.size == 0, [(boards[i].fen(), int(units[i]), int(numerators[i])) for i in mismatch[:5]]
    # PeSTO's score is the numerator divided by 24 in C; the engine's, in centipawns, is not rounded
    centipawns = units / EVAL_SCALE
    scores = np.array([s for _, s in oracle], dtype=np.float64)
    assert np.all(np.abs(centipawns - scores) < 1)
    assert np.array_equal(np.trunc(centipawns), scores)
    # the positions span the taper: the start, the end game, and a phase past 24
    phases = [min(24, sum(GAMEPHASE_INC[p.piece_type - 1] for p in b.piece_map().values())) for b in boards]
    assert max(phases) == 24 and min(phases) <= 2 and len(set(phases)) >= 20
    assert sum(GAMEPHASE_INC[p.piece_type - 1] for p in boards[-4].piece_map().values()) == 28


@pytest.mark.parametrize("fen", EXTRA_FENS[:2])
def test_a_phase_past_24_counts_as_24(fen: str) -> None:
    board = chess.Board(fen)
    numerator, _ = pesto_eval(board)
    assert _units([board])[0] == numerator
    # with the phase capped at 24, the end-game tables have no weight: recompute from mg alone
    mg = sum((1 if p.color == board.turn else -1) * MG_TABLE[2 * (p.piece_type - 1) + (p.color == chess.BLACK)][s ^ 56]
             for s, p in board.piece_map().items())
    assert numerator == 24 * mg
