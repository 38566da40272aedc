"""The kernel boundary (issue 12): every public function checks boards and weights once and
refuses bad ones with a ``ValueError`` subclass, never a crash.

Calls that would crash the process without the checks run in a subprocess, so that a
regression fails a test instead of killing pytest.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import chess
import numpy as np
import pytest
from tests.conftest import REPO
from tests.search.core.boundary_fuzz import POOL, mutated_boards
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import search
from search.evaluation import evaluation_api
from search.tree import search_api
from search.tree.alphabeta import KIND_EVAL, MATE_BOUND, Workspace, search_kernel
from search.tree.search_api import move_indices, move_match, search as search_one, search_many, signed_features, sweep
from search.core.board import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, W_CASTLE, W_EP, W_OCC, W_STM
from search.params.catalog import N_FEATURES, PHASE_MAX
from search.core.convert import InvalidFenError, from_chess, from_fen, to_chess
from search.evaluation.evaluation_api import evaluate, evaluate_batch, features
from search.core.perft import divide, perft
from search.core.validate import RULES, InvalidBoardError, board_problem, board_problems, check_board, check_boards
from search.evaluation.validate import MAX_ABS_WEIGHT, MAX_TERM_COUNT, InvalidWeightsError, check_weights
from search.params.weights import load_weights

CLASSIC = load_weights("classic").values
START = from_fen(chess.STARTING_FEN)


def run_isolated(code: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter: a segfault there is a return code here."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


# ------------------------------------------------------------------ the reported crashes


def test_search_of_a_zeroed_int64_array_raises_instead_of_killing_the_process() -> None:
    """Issue 12: ``search(np.zeros(16, dtype=np.int64), 1, w)`` exited with a segfault (139)."""
    proc = run_isolated("""
        import numpy as np
        from search.tree.search_api import search
        from search.params.weights import load_weights
        try:
            search(np.zeros(16, dtype=np.int64), 1, load_weights("classic").values)
        except ValueError as exc:
            print(type(exc).__name__, exc)
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("InvalidBoardError a board must be a uint64 array of shape (16,)"), proc.stdout
    assert proc.stdout.count("\n") == 1


def test_every_entry_point_refuses_boards_the_kernels_cannot_take() -> None:
    """Wrong dtype, wrong length, an empty board and a board without kings, at every public
    function: each raises InvalidBoardError (in a subprocess: unchecked, these crash)."""
    proc = run_isolated("""
        import numpy as np
        from search.tree.search_api import move_indices, move_match, search, search_many, signed_features, sweep
        from search.evaluation.evaluation_api import evaluate, evaluate_batch, features, features_batch
        from search.core.perft import divide, perft
        from search.params.weights import load_weights
        from search.tree.iterative import Searcher
        w = load_weights("classic").values
        bad = {
            "int64 zeros": np.zeros(16, dtype=np.int64),
            "ten words": np.zeros(10, dtype=np.uint64),
            "empty board": np.zeros(16, dtype=np.uint64),
            "list": [0] * 16,
        }
        single = {
            "search": lambda b: search(b, 1, w),
            "evaluate": lambda b: evaluate(b, w),
            "features": features,
            "perft": lambda b: perft(b, 1),
            "divide": lambda b: divide(b, 1),
            "Searcher.think": lambda b: Searcher(w, tt_bits=4).think(b, [], max_depth=1),
        }
        batch = {
            "search_many": lambda bs: search_many(bs, 1, w),
            "sweep": lambda bs: sweep(bs, 1, w),
            "move_match": lambda bs: move_match(bs, np.zeros(len(bs), np.int32), w, 1),
            "move_indices": lambda bs: move_indices(bs, np.zeros(len(bs), np.int32)),
            "signed_features": lambda bs: signed_features(bs, np.ones(len(bs), np.int8)),
            "evaluate_batch": lambda bs: evaluate_batch(bs, w),
            "features_batch": features_batch,
        }
        for kind, b in bad.items():
            calls = [(name, f, b) for name, f in single.items()]
            calls += [(name, f, np.asarray(b)[None, :]) for name, f in batch.items()]
            for name, f, arg in calls:
                try:
                    f(arg)
                    print(name, kind, "returned")
                except ValueError as exc:
                    print(name, kind, type(exc).__name__)
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 * 13, proc.stdout
    assert all(line.endswith("InvalidBoardError") for line in lines), proc.stdout


def test_evaluate_of_a_ten_word_array_is_refused() -> None:
    """Issue 12: ``evaluate()`` of a 10-word array returned a score (read past the array)."""
    with pytest.raises(InvalidBoardError, match=r"shape \(16,\), not uint64 \(10,\)"):
        evaluate(np.zeros(10, dtype=np.uint64), CLASSIC)


def test_weights_of_int32_max_are_refused() -> None:
    """Issue 12: weights of 2**31 - 1 were accepted and scored ``mate 23622320116``."""
    huge = np.full(N_FEATURES, 2**31 - 1, dtype=np.int32)
    for call in (lambda: evaluate(START, huge), lambda: search_one(START, 1, huge),
                 lambda: sweep(START[None, :], 1, huge), lambda: move_match(START[None, :], np.zeros(1, np.int32), huge, 1),
                 lambda: evaluate_batch(START[None, :], huge), lambda: search_many(START[None, :], 1, huge)):
        with pytest.raises(InvalidWeightsError, match="mate band, found 2147483647"):
            call()


@pytest.mark.parametrize("counters", ["99999999999999999999999 1", "0 99999999999999999999999", f"{2**64} 1",
                                      "0 ²", "² 1", "0 2147483648"])
def test_fen_with_an_absurd_move_counter_raises_invalid_fen_error(counters: str) -> None:
    """Issue 12: a huge move counter raised OverflowError (a traceback, also in UCI)."""
    with pytest.raises(InvalidFenError, match="(halfmove clock|fullmove number) .* is not an integer between") as info:
        from_fen(f"8/8/8/8/8/8/8/K6k w - - {counters}")
    assert "\n" not in str(info.value)


def test_fen_with_more_pieces_than_promotions_explain_is_refused() -> None:
    """python-chess accepts a second queen beside eight pawns; the kernels' move buffers and the
    weight bound assume material that promotions can explain."""
    fen = "4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1"
    assert chess.Board(fen).is_valid()
    with pytest.raises(InvalidFenError, match="white has 1 pieces beyond the starting set but only 0 missing pawns"):
        from_fen(fen)


def test_largest_fen_counters_are_accepted() -> None:
    b = from_fen("8/8/8/8/8/8/8/K6k w - - 2147483647 2147483647")
    assert check_board(b) is not None and perft(b, 1) == 3


# ------------------------------------------------------------------ the board check


def _start_with(**words: int) -> np.ndarray:
    b = START.copy()
    for name, value in words.items():
        b[int(name[1:])] = np.uint64(value)
    return b


def _from_placement(fen: str) -> np.ndarray:
    """A board from a FEN, bypassing from_fen's checks (python-chess places the pieces)."""
    return from_chess(chess.Board(fen))


BROKEN = {  # rule number (1-based, RULES order) -> a board breaking it, and a message fragment
    1: (_start_with(w7=int(START[W_OCC + 1]) | 1), "white and black pieces overlap"),
    2: (_start_with(w1=int(START[1]) | 1), "piece bitboards overlap"),
    3: (_from_placement("4k3/8/8/8/8/8/8/8 w - - 0 1"), "white has 0 kings, not 1"),
    4: (_from_placement("8/8/8/8/8/8/8/4K3 w - - 0 1"), "black has 0 kings"),
    5: (_start_with(w8=2), "side to move is 2"),
    6: (_from_placement("4k2P/8/8/8/8/8/8/4K3 w - - 0 1"), "first or last rank"),
    7: (_from_placement("4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1"), "white has 9 pawns"),
    8: (_from_placement("4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1"), "white has 1 pieces beyond the starting set but only 0"),
    9: (_start_with(w9=16), "castling rights 16"),
    10: (_from_placement("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w - - 0 1"), "castling rights without"),
    11: (_start_with(w10=20), "en-passant square 20"),
    12: (_from_placement("k6R/8/8/8/8/8/8/K7 w - - 0 1"), "side not to move is in check"),
}


def test_every_rule_has_a_broken_board() -> None:
    assert sorted(BROKEN) == list(range(1, len(RULES) + 1))


@pytest.mark.parametrize("rule", sorted(BROKEN))
def test_broken_board_is_refused_with_its_rule(rule: int) -> None:
    b, message = BROKEN[rule]
    if rule == 10:
        b[W_CASTLE] = 1  # white O-O without the h1 rook
    assert board_problem(b) == rule and board_problems(b[None, :])[0] == rule
    with pytest.raises(InvalidBoardError, match=message) as info:
        check_board(b)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)
    with pytest.raises(InvalidBoardError, match=f"board 1 of 3 is invalid .*{message}"):
        check_boards(np.stack([START, b, b]))


def test_en_passant_square_must_be_behind_a_pawn_that_just_moved_two_squares() -> None:
    after_e4 = from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
    assert board_problem(after_e4) == 0
    for ep in (19, 20 + 8, 44, 63, 64 + 1, 2**64 - 1):  # d3 (no pawn ahead), e4 (occupied), e6, h8, 65, huge
        b = after_e4.copy()
        b[W_EP] = np.uint64(ep)
        assert board_problem(b) == 11, ep


def test_every_position_of_the_sample_games_passes(real_boards: list[chess.Board]) -> None:
    boards = np.stack([from_chess(b) for b in real_boards])
    assert not board_problems(boards).any()
    assert check_boards(boards) is boards  # contiguous input comes back as is
    assert check_boards(np.zeros((0, 16), dtype=np.uint64)).shape == (0, 16)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(b=mutated_boards())
def test_single_board_check_is_the_batch_check(b: np.ndarray) -> None:
    """The plain-Python check of one board is the oracle of the vectorised batch check."""
    assert board_problem(b) == board_problems(b[None, :])[0]
    batch = np.stack([START, b, b])
    assert list(board_problems(batch)) == [0, board_problem(b), board_problem(b)]


_CHESS_FLAGS = (chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING | chess.STATUS_TOO_MANY_KINGS
                | chess.STATUS_PAWNS_ON_BACKRANK | chess.STATUS_TOO_MANY_WHITE_PAWNS | chess.STATUS_TOO_MANY_BLACK_PAWNS
                | chess.STATUS_TOO_MANY_WHITE_PIECES | chess.STATUS_TOO_MANY_BLACK_PIECES
                | chess.STATUS_BAD_CASTLING_RIGHTS | chess.STATUS_INVALID_EP_SQUARE | chess.STATUS_OPPOSITE_CHECK)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(b=mutated_boards())
def test_board_check_agrees_with_python_chess(b: np.ndarray) -> None:
    """On boards whose words python-chess can represent, ours refuses exactly what python-chess's
    ``status()`` flags (kings, pawns, piece counts, castling, en passant, opposite check), plus
    material that promotions cannot explain, which python-chess does not check."""
    code = board_problem(b)
    if code in (1, 2, 5, 9) or b[W_EP] > 64:  # overlapping bitboards, words out of python-chess's range
        return
    flagged = to_chess(b).status() & _CHESS_FLAGS
    if code == 8:
        return
    assert (code != 0) == bool(flagged), (code, flagged, to_chess(b).fen())


def test_conversions_refuse_bad_boards_and_moves() -> None:
    from search.core.convert import IllegalMoveError, legal_moves, play_uci, push, to_fen

    start = from_fen(chess.STARTING_FEN)
    with pytest.raises(InvalidBoardError):
        legal_moves(np.zeros(16, dtype=np.int64))
    with pytest.raises(InvalidBoardError):
        push(np.zeros(16, dtype=np.uint64), 0)  # no kings
    with pytest.raises(IllegalMoveError):
        push(start, 123456)  # not a move of this position (the kernel would read out of bounds)
    with pytest.raises(InvalidBoardError):
        to_fen(np.zeros(3))
    with pytest.raises(IllegalMoveError):
        play_uci(start, ["e2e4", "e2e4"])
    expected = chess.Board()
    for uci in ("e2e4", "c7c5"):
        expected.push_uci(uci)
    assert to_fen(play_uci(start, ["e2e4", "c7c5"])) == expected.fen(en_passant="fen")
    with pytest.raises(InvalidFenError):
        from_fen("rnbqkbnr/pppppppp/\u00b2/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")


# ------------------------------------------------------------------ the weights check


@pytest.mark.parametrize(("weights", "message"), [
    (np.full(N_FEATURES, MAX_ABS_WEIGHT + 1), f"found {MAX_ABS_WEIGHT + 1}"),
    (np.full(N_FEATURES, -MAX_ABS_WEIGHT - 1), f"found {-MAX_ABS_WEIGHT - 1}"),
    (np.full(N_FEATURES, 2**64 - 1, dtype=np.uint64), "found 18446744073709551615"),
    (np.full(N_FEATURES, -(2**63), dtype=np.int64), "found -9223372036854775808"),
    (np.full(N_FEATURES, np.nan), "integers, not float64"),
    (np.full(N_FEATURES, np.inf), "integers, not float64"),
    (np.zeros(N_FEATURES, dtype=bool), "integers, not bool"),
    (np.zeros(N_FEATURES, dtype=object), "integers, not object"),
    (np.zeros(N_FEATURES - 1, dtype=np.int32), "shape"),
    (np.zeros((1, N_FEATURES), dtype=np.int32), "shape"),
    ([2**80] * N_FEATURES, "integers, not object"),
    (None, "shape"),
])
def test_bad_weights_are_refused(weights: object, message: str) -> None:
    with pytest.raises(InvalidWeightsError, match=message) as info:
        check_weights(weights)
    assert "\n" not in str(info.value)
    with pytest.raises(InvalidWeightsError):
        evaluate(START, weights)  # type: ignore[arg-type]


def test_largest_accepted_weights_pass() -> None:
    w = np.full(N_FEATURES, -MAX_ABS_WEIGHT, dtype=np.int64)
    w[::2] = MAX_ABS_WEIGHT
    out = check_weights(w)
    assert out.dtype == np.int32 and np.array_equal(out, w)
    assert search_one(START, 2, out).mate_in is None


@st.composite
def crowded_boards(draw: st.DrawFn) -> np.ndarray:
    """Valid boards with as much material as the rules allow: up to 8 pawns and every missing
    pawn promoted, pieces on random squares."""
    squares = draw(st.permutations(range(64)))
    b = np.zeros(16, dtype=np.uint64)
    free = [sq for sq in squares]
    for colour in (0, 1):
        pawns = draw(st.integers(0, 8))
        extra = draw(st.lists(st.sampled_from([KNIGHT, BISHOP, ROOK, QUEEN]), min_size=8 - pawns, max_size=8 - pawns))
        pieces = [KING] + [PAWN] * pawns + [KNIGHT, KNIGHT, BISHOP, BISHOP, ROOK, ROOK, QUEEN] + extra
        for p in pieces:
            sq = next(s for s in free if p != PAWN or 8 <= s < 56)
            free.remove(sq)
            b[p] |= np.uint64(1) << np.uint64(sq)
            b[W_OCC + colour] |= np.uint64(1) << np.uint64(sq)
    b[W_STM] = draw(st.integers(0, 1))
    b[W_EP] = 64
    if board_problem(b) == 12:
        b[W_STM] ^= np.uint64(1)
    return b


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(b=crowded_boards())
def test_no_valid_board_has_more_terms_than_the_weight_bound_assumes(b: np.ndarray) -> None:
    """The derivation of MAX_ABS_WEIGHT: sum |x_f| <= MAX_TERM_COUNT, so that |score| <=
    MAX_ABS_WEIGHT * PHASE_MAX * MAX_TERM_COUNT < MATE_BOUND."""
    if board_problem(b) != 0:
        return  # both kings in check: not a position
    _, values = features(b)
    assert int(np.abs(values).sum()) <= PHASE_MAX * MAX_TERM_COUNT
    for sign in (1, -1):
        w = np.full(N_FEATURES, sign * MAX_ABS_WEIGHT, dtype=np.int32)
        assert abs(evaluate(b, w) * PHASE_MAX) < MATE_BOUND


def test_largest_weights_stay_out_of_the_mate_band_on_real_positions(real_boards: list[chess.Board]) -> None:
    boards = np.stack([from_chess(b) for b in real_boards])
    rng = np.random.default_rng(12)
    for w in (np.full(N_FEATURES, MAX_ABS_WEIGHT), rng.choice([-MAX_ABS_WEIGHT, MAX_ABS_WEIGHT], N_FEATURES)):
        scores = evaluate_batch(boards, w) * PHASE_MAX
        assert np.abs(scores).max() < MATE_BOUND


# ------------------------------------------------------------------ other arguments


@pytest.mark.parametrize("call", [
    lambda: search_one(START, 1.5, CLASSIC),
    lambda: search_one(START, "2", CLASSIC),
    lambda: search_one(START, 10**30, CLASSIC),
    lambda: search_one(START, 1, CLASSIC, budget=2**70),
    lambda: search_one(START, 1, CLASSIC, tt_bits=100),
    lambda: search_one(START, 1, CLASSIC, history=[-1]),
    lambda: search_one(START, 1, CLASSIC, history=[2**64]),
    lambda: search_many(START[None, :], 1, CLASSIC, n_threads=0),
    lambda: signed_features(START[None, :], np.array([2], dtype=np.int8)),
    lambda: signed_features(START[None, :], np.array([1.0])),
    lambda: move_indices(START[None, :], np.array([2**40])),
    lambda: move_indices(START[None, :], [2**80]),
    lambda: move_match(START[None, :], np.zeros(2, np.int32), CLASSIC, 1),
    lambda: perft(START, 10**30),
    lambda: perft(START, -1),
    lambda: divide(START, 0),
])
def test_bad_arguments_raise_value_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as info:
        call()
    assert "\n" not in str(info.value)


def test_errors_are_exported_from_the_package() -> None:
    assert search.InvalidBoardError is InvalidBoardError and search.InvalidWeightsError is InvalidWeightsError
    assert issubclass(search.InvalidFenError, ValueError) and issubclass(search.IllegalMoveError, ValueError)
    assert search_api.InvalidBoardError is InvalidBoardError


def test_public_modules_export_no_kernel() -> None:
    for module in (search_api, evaluation_api):
        assert not [name for name in module.__all__ if "kernel" in name], module.__name__


# ------------------------------------------------------------------ the workspace


def test_workspace_names_what_the_search_left() -> None:
    b = from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    result = search_one(b, 3, CLASSIC)
    ws = Workspace(CLASSIC)
    score = search_kernel(ws.arrays, ws.state, b, 3, CLASSIC, 1_000_000, np.zeros(1, np.uint64), 0,
                          np.zeros(0, np.uint64), np.zeros(0, np.int32))
    assert score == result.score and ws.pv == result.pv and len(ws.pv) >= 3
    assert ws.leaf_kind == result.kind == KIND_EVAL
    assert ws.nodes == result.nodes > 0
    assert not ws.budget_exhausted and not ws.max_ply_reached and not ws.aborted
    search_kernel(ws.arrays, ws.state, b, 3, CLASSIC, 10, np.zeros(1, np.uint64), 0, np.zeros(0, np.uint64), np.zeros(0, np.int32))
    assert ws.budget_exhausted and ws.nodes == 10
    ws.abort()
    assert ws.aborted and ws.nodes == 10  # an abort keeps the count


# ------------------------------------------------------------------ the fuzzer


def test_random_inputs_at_every_public_entry_point_never_crash() -> None:
    """tests/search/core/boundary_fuzz.py in a subprocess: random arrays, mutated boards, FEN-like strings
    and weights at every public entry point; each call returns or raises a ValueError."""
    proc = subprocess.run([sys.executable, "-m", "tests.search.core.boundary_fuzz", "--examples", "120"],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-4000:])
    assert proc.stdout.count("examples ok") == 4, proc.stdout


def test_the_fuzzer_searches_boards_that_pass_the_check() -> None:
    """The mutations are not all refused: a good share reaches the kernels."""
    rng = np.random.default_rng(1)
    accepted = 0
    for _ in range(400):
        b = POOL[rng.integers(len(POOL))].copy()
        sq = np.uint64(rng.integers(64))
        for w in range(8):
            b[w] &= ~(np.uint64(1) << sq)
        accepted += board_problem(b) == 0
    assert accepted > 100
