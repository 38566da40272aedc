"""The numba extractor against the plain-Python reference (tests/oracles/reference_features.py),
and both against hand-counted terms of docs/features.md on positions built for each corner."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest

from tests.oracles.reference_features import colour_counts, reference_features, reference_phase
from search.params.catalog import BASE_NAMES, N_BASE, PHASE_MAX
from search.core.convert import from_chess
from search.evaluation.evaluation_api import features
from search.evaluation.feature_kernels import phase_of


def numba_features(board: chess.Board) -> tuple[list[int], list[int]]:
    idx, val = features(from_chess(board))
    return idx.tolist(), val.tolist()


def assert_agree(board: chess.Board) -> None:
    ref = reference_features(board)
    fast = numba_features(board)
    if ref != fast:
        r, f = dict(zip(*ref)), dict(zip(*fast))
        diff = {
            (BASE_NAMES[i % N_BASE], "mg" if i < N_BASE else "eg"): (r.get(i), f.get(i))
            for i in sorted(set(r) | set(f)) if r.get(i) != f.get(i)
        }
        pytest.fail(f"{board.fen()}: (term, stage): (reference, numba) {diff}")


def net_terms(indices: list[int], values: list[int]) -> dict[str, int]:
    """Side-to-move net count per base name: mg + eg = x * phase + x * (24 - phase) = 24 x."""
    total: dict[str, int] = {}
    for i, v in zip(indices, values):
        name = BASE_NAMES[i % N_BASE]
        total[name] = total.get(name, 0) + v
    assert all(v % PHASE_MAX == 0 for v in total.values())
    return {name: v // PHASE_MAX for name, v in total.items()}


# (what it pins, FEN, hand-counted side-to-move net values of some terms per docs/features.md)
HAND_POSITIONS: list[tuple[str, str, dict[str, int]]] = [
    ("three doubled isolated passed pawns, phase 0", "4k3/8/8/2P5/2P5/2P5/8/4K3 w - - 0 1",
     {"pawns.doubled": 2, "pawns.isolated": 3, "pawns.passed.rank3": 1, "pawns.passed.rank4": 1,
      "pawns.passed.rank5": 1, "pawns.passed_free.rank5": 1, "material.pawn": 3}),
    ("passed pawns on the seventh, blocked and free, black to move", "r3k3/P6P/8/8/8/8/6p1/6K1 b - - 0 1",
     {"pawns.passed.rank7": -1, "pawns.passed_free.rank7": -1, "pawns.isolated": -1}),
    ("kings in the corners, shield on rank 2 and 3", "7k/7p/6p1/8/8/8/PP6/K7 w - - 0 1",
     {"king.shield1": 1, "king.shield2": -1, "king.open_file": 0}),
    ("open and half-open files next to edge kings", "k7/p7/8/8/8/8/8/1K6 w - - 0 1",
     {"king.open_file": 1, "king.semiopen_file": 1, "king.shield1": -1, "pawns.passed.rank2": -1,
      "pawns.passed_free.rank2": -1}),
    ("kings on their last relative rank: no shield squares", "K7/8/8/8/8/8/8/7k w - - 0 1",
     {"king.shield1": 0, "king.shield2": 0, "king.open_file": 0, "pieces.tempo": 1}),
    ("knight outpost with a pawn on the same file only", "4k3/4p3/8/4N3/3P4/8/8/4K3 w - - 0 1",
     {"pieces.knight_outpost": 1, "mobility.knight.8": 1, "pawns.isolated": 0}),
    ("no outpost: an enemy pawn can still attack the square", "4k3/5p2/8/4N3/3P4/8/8/4K3 w - - 0 1",
     {"pieces.knight_outpost": 0}),
    ("outposts only on relative ranks 4 to 6", "k7/4N3/3P4/8/1N6/P5N1/7P/4K3 w - - 0 1",
     {"pieces.knight_outpost": 1, "material.knight": 3}),
    ("black outpost on d4, black to move", "4k3/8/8/4p3/3n4/8/8/4K3 b - - 0 1",
     {"pieces.knight_outpost": 1, "pawns.supported": 0}),
    ("bishop pair with three bishops against one", "2b1k3/8/8/8/8/8/8/2B1KBB1 b - - 0 1",
     {"pieces.bishop_pair": -1, "material.bishop": -2}),
    ("promoted pieces: two queens, three knights", "4k3/8/8/8/8/8/1QQ5/NNN1K3 w - - 0 1",
     {"material.queen": 2, "material.knight": 3}),
    ("no-pawn endgame: rook on an open file", "8/8/8/3k4/8/8/8/R3K3 w - - 0 1",
     {"pieces.rook_open_file": 1, "mobility.rook.10": 1, "material.rook": 1}),
    ("no-pawn endgame: rook attacks queen, black to move", "8/8/3k4/8/3r4/8/3Q4/4K3 b - - 0 1",
     {"pieces.threat_by_rook": 1, "pieces.rook_open_file": 1}),
    ("start position: everything cancels but the tempo", chess.STARTING_FEN, {"pieces.tempo": 1}),
    ("start position, black to move", chess.STARTING_FEN.replace(" w ", " b "), {"pieces.tempo": 1}),
    ("material beyond 24 phase points", "rnbqkbnr/pppppppp/8/8/8/8/QQPPPPPP/RNBQKBNR w KQkq - 0 1",
     {"material.queen": 2, "material.pawn": -2}),
    ("queen mobility 27 on an empty board", "K7/8/8/8/3Q4/8/7k/8 w - - 0 1", {"mobility.queen.27": 1}),
    ("rook mobility 14", "K7/8/8/8/3R4/8/7k/8 w - - 0 1", {"mobility.rook.14": 1, "pieces.rook_open_file": 1}),
    ("bishop mobility 13", "K7/8/8/8/3B4/8/7k/8 w - - 0 1", {"mobility.bishop.13": 1}),
    ("boxed rook: mobility 0", "4k3/8/8/8/8/8/PP6/RN2K3 w - - 0 1", {"mobility.rook.0": 1}),
    ("squares attacked by enemy pawns do not count", "4k3/8/2p5/8/3R4/8/8/4K3 w - - 0 1",
     {"mobility.rook.13": 1, "pieces.rook_open_file": 1}),
    ("backward pawn, supported pawns", "4k3/8/8/2p5/2P1P3/3P4/8/4K3 w - - 0 1",
     {"pawns.backward": 1, "pawns.supported": 2, "pawns.passed.rank4": 1, "pawns.passed_free.rank4": 1,
      "pawns.isolated": -1}),
    ("phalanx", "4k3/8/8/8/3PP3/8/8/4K3 w - - 0 1",
     {"pawns.phalanx": 2, "pawns.isolated": 0, "pawns.passed.rank4": 2}),
    ("pawn forks knight and queen", "4k3/8/2n1q3/3P4/8/8/8/K7 w - - 0 1", {"pieces.threat_by_pawn": 2}),
    ("rook attacked by two minors counts once; rook attacks queen", "4k3/8/8/q6R/8/2r5/3B4/1N2K3 w - - 0 1",
     {"pieces.threat_by_minor": 1, "pieces.threat_by_rook": 1}),
    ("seven attackers of the king zone, count capped at 5", "6k1/R7/6PN/6N1/3Q4/1B6/8/K4R2 b - - 0 1",
     {"king.zone_attackers.pawn": -1, "king.zone_attackers.knight": -2, "king.zone_attackers.bishop": -1,
      "king.zone_attackers.rook": -2, "king.zone_attackers.queen": -1, "king.zone_attack_count.5": -1,
      "king.zone_attack_count.4": 0, "pieces.rook_seventh": -1, "pieces.rook_open_file": -2}),
    ("rook on a half-open file", "4k3/8/4p3/8/8/8/8/4RK2 w - - 0 1", {"pieces.rook_semiopen_file": 1}),
    ("pawn forks knight and queen: pairs; the queen defends her knight, not her king",
     "4k3/8/2n1q3/3P4/8/8/8/K7 w - - 0 1",
     {"attacks.pawn.knight": 1, "attacks.pawn.queen": 1, "attacks.queen.pawn": -1,
      "defends.queen.knight": -1, "defends.knight.queen": 0, "pieces.threat_by_pawn": 2}),
    ("two pawns on one knight: two pairs, one threat", "4k3/8/8/3n4/2P1P3/8/8/4K3 w - - 0 1",
     {"attacks.pawn.knight": 2, "pieces.threat_by_pawn": 1, "attacks.knight.pawn": 0}),
    ("a checking rook attacks no piece; a castled king defends three pawns, black to move",
     "4k3/8/8/8/4R3/8/5PPP/6K1 b - - 0 1",
     {"defends.king.pawn": -3, "attacks.rook.pawn": 0, "defends.rook.pawn": 0, "defends.pawn.pawn": 0}),
    ("sliders stop at the first piece: no x-ray through the rook", "3k4/3r4/8/8/8/8/3R4/3QK3 w - - 0 1",
     {"attacks.rook.rook": 0, "defends.rook.queen": 1, "defends.queen.rook": 1, "attacks.queen.rook": 0,
      "defends.king.queen": 1, "defends.king.rook": 0}),
    ("eight knights on one pawn: every pair counts", "7k/2N1N3/1N3N2/3p4/1N3N2/2N1N3/8/K7 w - - 0 1",
     {"attacks.knight.pawn": 8, "defends.knight.knight": 0, "pieces.threat_by_pawn": 0}),
    ("seven knights on one pawn", "7k/2N1N3/1N3N2/3p4/1N3N2/2N5/8/K7 w - - 0 1", {"attacks.knight.pawn": 7}),
    ("en-passant square present", "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
     {"pawns.phalanx": 2}),  # white a2-d2 and f2-h2 (7) against a7-c7 and g7-h7 (5)
]


@pytest.mark.parametrize("what, fen, expected", HAND_POSITIONS, ids=[h[0] for h in HAND_POSITIONS])
def test_hand_counted_terms(what: str, fen: str, expected: dict[str, int]) -> None:
    board = chess.Board(fen)
    for name in expected:
        assert name in BASE_NAMES, name
    for indices, values in (reference_features(board), numba_features(board)):
        got = net_terms(indices, values)
        assert {name: got.get(name, 0) for name in expected} == expected
    assert_agree(board)
    assert_agree(board.mirror())


def test_start_position_is_only_the_tempo() -> None:
    tempo = BASE_NAMES.index("pieces.tempo")
    for fen in (chess.STARTING_FEN, chess.STARTING_FEN.replace(" w ", " b ")):
        board = chess.Board(fen)
        assert reference_features(board) == numba_features(board) == ([tempo], [PHASE_MAX])


def test_phase_extremes() -> None:
    for fen, phase in [
        (chess.STARTING_FEN, 24),
        ("rnbqkbnr/pppppppp/8/8/8/8/QQPPPPPP/RNBQKBNR w KQkq - 0 1", 24),  # 32 points, capped
        ("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1", 0),
        ("4k3/8/8/8/8/8/1QQ5/NNN1K3 w - - 0 1", 11),
    ]:
        board = chess.Board(fen)
        assert reference_phase(board) == phase_of(from_chess(board)) == phase
        indices, _ = reference_features(board)
        if phase == PHASE_MAX:
            assert all(i < N_BASE for i in indices)
        if phase == 0:
            assert all(i >= N_BASE for i in indices)


def test_en_passant_square_changes_no_feature() -> None:
    with_ep = chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
    assert with_ep.ep_square == chess.F6
    without = with_ep.copy()
    without.ep_square = None
    assert numba_features(with_ep) == numba_features(without) == reference_features(without)


def test_reference_counts_each_colour_from_its_own_side() -> None:
    # black pawns on c5 and c6: one doubled pawn, counted from Black's point of view
    board = chess.Board("4k3/8/2p5/2p5/8/8/8/4K3 w - - 0 1")
    black = colour_counts(board, chess.BLACK)
    assert black["pawns.doubled"] == 1 and black["pawns.passed.rank2"] == 0
    assert black["pawns.passed.rank3"] == 1 and black["pawns.passed.rank4"] == 1
    assert black["pst.pawn.c3"] == 1 and black["pst.pawn.c4"] == 1  # c6 -> c3, c5 -> c4
    assert black["pawns.passed_free.rank4"] == 1 and black["pawns.passed_free.rank3"] == 0


def test_agree_on_real_positions(real_boards: list[chess.Board]) -> None:
    assert len(real_boards) == 3229
    for board in real_boards:
        assert_agree(board)


@pytest.mark.gm
def test_agree_on_gm_positions(gm_boards: list[chess.Board]) -> None:
    assert len(gm_boards) == 12_000
    for board in gm_boards:
        assert_agree(board)


def test_agree_on_random_playouts_with_promotions() -> None:
    # random play biased to pawn moves reaches what real games rarely show: promoted
    # pieces (several queens, three bishops), pawns on the 7th in numbers, bare kings
    rng = random.Random(3)
    promoted = 0
    checked = 0
    while checked < 1_500:
        board = chess.Board()
        for _ in range(rng.randrange(60, 300)):
            moves = list(board.legal_moves)
            if not moves:
                break
            pawn_moves = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
            board.push(rng.choice(pawn_moves) if pawn_moves and rng.random() < 0.4 else rng.choice(moves))
            if len(board.move_stack) % 10 == 0:
                assert_agree(board)
                checked += 1
                promoted += any(
                    len(board.pieces(t, c)) > n
                    for t, n in ((chess.QUEEN, 1), (chess.ROOK, 2), (chess.KNIGHT, 2), (chess.BISHOP, 2))
                    for c in chess.COLORS
                )
    assert promoted >= 200


def test_numba_values_are_sorted_nonzero_int32() -> None:
    board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R2QK2R w KQ - 0 8")
    idx, val = features(from_chess(board))
    assert idx.dtype == np.int32 and val.dtype == np.int32
    assert np.all(np.diff(idx) > 0) and np.all(val != 0)
    assert (idx.tolist(), val.tolist()) == reference_features(board)


def test_pawn_king_table_gives_the_uncached_scores(real_boards: list[chess.Board]) -> None:
    # the cached pawn-king sums stand for the recomputed ones: the same score for every position
    # of the shipped games in game order (hits), in a shuffled order through a two-row table
    # (rows replaced at almost every call), and for another weight vector with a fresh table
    from search.evaluation.feature_kernels import PK_ROWS, evaluate_cached_kernel, evaluate_kernel, new_pawn_king_table
    from search.params.weights import load_weights

    boards = [from_chess(b) for b in real_boards]
    rng = np.random.default_rng(3)
    for w in (load_weights("gm").values, rng.integers(-300, 300, load_weights("gm").values.shape[0]).astype(np.int32)):
        score = np.zeros(4, dtype=np.int64)
        want = [evaluate_kernel(b, w, score) for b in boards]
        table = new_pawn_king_table()
        assert table.shape[0] == PK_ROWS
        assert [evaluate_cached_kernel(b, w, score, table) for b in boards] == want
        assert [evaluate_cached_kernel(b, w, score, table) for b in boards] == want  # all hits now
        small = new_pawn_king_table()[:2]
        order = rng.permutation(len(boards))
        assert [evaluate_cached_kernel(boards[i], w, score, small) for i in order] == [want[i] for i in order]
