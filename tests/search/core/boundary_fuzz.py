"""Fuzz every public entry point of :mod:`search`: each call must return or raise a ``ValueError``.

Random arrays of random dtypes and shapes, valid boards with flipped bits, overwritten words or
pieces added and removed, FEN-like strings and weight vectors (NaN, inf, huge, wrong shape or
dtype) go to ``search``, ``search_many``, ``sweep``, ``move_match``, ``move_indices``,
``signed_features``, ``evaluate``, ``evaluate_batch``, ``features``, ``features_batch``,
``perft``, ``divide``, ``from_fen`` and the UCI searcher. A board that passes the check is
searched for real, so a check that lets through something a kernel cannot handle shows up here
as a crash.

:mod:`tests.test_boundary` runs this file as a script in a subprocess (a segfault then fails
that test instead of killing pytest)::

    python -m tests.search.core.boundary_fuzz [--examples N] [--random]

Exit status 0 when no call crashed or raised anything but a ``ValueError``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import chess
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search.tree.search_api import move_indices, move_match, search, search_many, signed_features, sweep
from search.params.catalog import N_FEATURES
from search.core.convert import STARTING_FEN, from_chess, from_fen
from search.evaluation.evaluation_api import evaluate, evaluate_batch, features, features_batch
from search.core.perft import divide, perft
from search.evaluation.validate import MAX_ABS_WEIGHT
from search.tree.iterative import Searcher

FENS = [
    STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemate
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # checkmate
    "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1",  # 218 legal moves
]


def _pool() -> list[np.ndarray]:
    boards = [from_fen(f) for f in FENS]
    rng = random.Random(11)
    for _ in range(6):  # positions of random games
        board = chess.Board()
        for _ in range(rng.randrange(10, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            if rng.random() < 0.1:
                boards.append(from_chess(board))
    return boards


POOL = _pool()
U64 = st.integers(0, 2**64 - 1)


@st.composite
def mutated_boards(draw: st.DrawFn) -> np.ndarray:
    """A valid board with a few changes: bit flips, overwritten words, pieces added or removed
    consistently, side to move, castling and en-passant words set."""
    b = draw(st.sampled_from(POOL)).copy()
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 5))
        sq = np.uint64(draw(st.integers(0, 63)))
        bit = np.uint64(1) << sq
        if kind == 0:
            b[draw(st.integers(0, 15))] ^= bit
        elif kind == 1:
            b[draw(st.integers(0, 15))] = np.uint64(draw(U64))
        elif kind == 2:  # add a piece of some type and colour (maybe over another one)
            b[draw(st.integers(0, 5))] |= bit
            b[6 + draw(st.integers(0, 1))] |= bit
        elif kind == 3:  # remove whatever stands there
            for w in range(8):
                b[w] &= ~bit
        elif kind == 4:
            b[draw(st.sampled_from([8, 9, 10]))] = np.uint64(draw(st.sampled_from([0, 1, 2, 15, 16, 63, 64, 65]) | U64))
        else:  # move a piece: clear one square, set another in the same words
            frm = draw(st.integers(0, 63))
            to = draw(st.integers(0, 63))
            for w in range(8):
                if b[w] >> np.uint64(frm) & np.uint64(1):
                    b[w] &= ~(np.uint64(1) << np.uint64(frm))
                    b[w] |= np.uint64(1) << np.uint64(to)
    return b


@st.composite
def random_arrays(draw: st.DrawFn) -> object:
    """Anything that is not a board: random dtype and shape, lists, None, strings."""
    dtype = draw(st.sampled_from([np.uint64, np.int64, np.int32, np.uint8, np.float64, np.bool_]))
    shape = draw(st.sampled_from([(), (0,), (10,), (15,), (16,), (17,), (1, 16), (3, 16), (2, 15), (2, 2, 16), (0, 16)]))
    size = int(np.prod(shape))
    raw = np.array(draw(st.lists(U64, min_size=size, max_size=size)), dtype=np.uint64).reshape(shape)
    arr = raw.astype(dtype) if dtype is not np.uint64 else raw
    return draw(st.sampled_from([arr, arr.tolist(), None, "board"]))


boards_1 = st.one_of(mutated_boards(), st.sampled_from(POOL), random_arrays())


@st.composite
def batches(draw: st.DrawFn) -> object:
    if draw(st.integers(0, 4)) == 0:
        return draw(random_arrays())
    rows = draw(st.lists(st.one_of(st.sampled_from(POOL), mutated_boards()), min_size=0, max_size=5))
    return np.stack(rows) if rows else np.zeros((0, 16), dtype=np.uint64)


@st.composite
def weights(draw: st.DrawFn) -> object:
    kind = draw(st.integers(0, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind <= 1:  # valid, up to the largest accepted magnitude
        high = draw(st.sampled_from([300, MAX_ABS_WEIGHT]))
        return rng.integers(-high, high + 1, N_FEATURES).astype(draw(st.sampled_from([np.int32, np.int64])))
    if kind == 2:  # one weight beyond the bound
        w = np.zeros(N_FEATURES, dtype=np.int64)
        w[draw(st.integers(0, N_FEATURES - 1))] = draw(st.sampled_from(
            [MAX_ABS_WEIGHT + 1, -MAX_ABS_WEIGHT - 1, 2**31 - 1, -(2**31), 2**62, -(2**63)]))
        return w
    if kind == 3:  # floats, maybe NaN or inf
        w = rng.integers(-300, 300, N_FEATURES).astype(np.float64)
        w[0] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 1.5, 0.0]))
        return w
    if kind == 4:
        return np.full(N_FEATURES, 2**64 - 1, dtype=np.uint64)
    if kind == 5:  # wrong shape
        return rng.integers(-300, 300, draw(st.sampled_from([(0,), (5,), (N_FEATURES + 1,), (2, N_FEATURES), ()])))
    return draw(st.sampled_from([None, "classic", [1, 2, 3], [2**80] * N_FEATURES, np.zeros(N_FEATURES, dtype=object)]))


FEN_CHARS = "pnbrqkPNBRQK123456789/ wb-KQkqacefgh0x²"


@st.composite
def fens(draw: st.DrawFn) -> object:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.text(alphabet=FEN_CHARS, max_size=80))
    base = draw(st.sampled_from(FENS))
    if kind == 1:  # one field replaced
        parts = base.split()
        i = draw(st.integers(0, len(parts) - 1))
        parts[i] = draw(st.sampled_from(["-", "0", "-1", "99999999999999999999999", str(2**63), "²", "e3", "KQkq",
                                         "8/8/8/8/8/8/8/8", "k7/8/8/8/8/8/8/QQQQQQQK", "x"]) | st.text(FEN_CHARS, max_size=12))
        return " ".join(parts)
    if kind == 2:  # characters changed
        chars = list(base)
        for _ in range(draw(st.integers(1, 3))):
            chars[draw(st.integers(0, len(chars) - 1))] = draw(st.sampled_from(FEN_CHARS))
        return "".join(chars)
    return draw(st.sampled_from([None, 42, b"8/8/8/8/8/8/8/K6k w - -", base + " 0 1 extra"]))


def _call(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """``fn(*args)``, or ``None`` when it refused with a ``ValueError``; anything else escapes."""
    try:
        return fn(*args, **kwargs)
    except ValueError:
        return None


def _board_then_search(b: object, w: object) -> None:
    _call(search, b, 2, w, budget=300)
    _call(evaluate, b, w)
    _call(features, b)
    _call(perft, b, 2)
    _call(divide, b, 1)
    searcher = _call(Searcher, w, tt_bits=4)
    if searcher is not None:
        _call(searcher.think, b, [], max_depth=2, node_limit=300)


def build_tests(examples: int, derandomize: bool) -> list:  # type: ignore[type-arg]
    opts = settings(max_examples=examples, deadline=None, database=None, derandomize=derandomize,
                    suppress_health_check=list(HealthCheck))

    @opts
    @given(b=boards_1, w=weights())
    def single_board_entry_points(b: object, w: object) -> None:
        _board_then_search(b, w)

    @opts
    @given(boards=batches(), w=weights(), depth=st.integers(-1, 2))
    def batch_entry_points(boards: object, w: object, depth: int) -> None:
        n = len(boards) if isinstance(boards, np.ndarray) and boards.ndim >= 1 else 0
        _call(search_many, boards, depth, w, budget=300)
        _call(sweep, boards, depth, w, budget=300)
        _call(evaluate_batch, boards, w)
        _call(features_batch, boards)
        _call(move_indices, boards, np.zeros(n, dtype=np.int32))
        _call(signed_features, boards, np.ones(n, dtype=np.int8))
        _call(move_match, boards, np.zeros(n, dtype=np.int32), w, 1, budget=300)

    @opts
    @given(boards=batches(), signs=random_arrays(), keys=random_arrays(), played=random_arrays(),
           w=weights())
    def batch_side_arguments(boards: object, signs: object, keys: object, played: object, w: object) -> None:
        _call(move_indices, boards, keys)
        _call(signed_features, boards, signs)
        _call(move_match, boards, played, w, 1, budget=300)

    @opts
    @given(fen=fens(), w=weights())
    def fen_entry_points(fen: object, w: object) -> None:
        b = _call(from_fen, fen)
        if b is not None:
            _board_then_search(b, w)

    return [single_board_entry_points, batch_entry_points, batch_side_arguments, fen_entry_points]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=150, help="examples per entry-point group")
    parser.add_argument("--random", action="store_true", help="new random examples (default: the same every run)")
    args = parser.parse_args(argv)
    for test in build_tests(args.examples, derandomize=not args.random):
        start = time.perf_counter()
        test()
        print(f"{test.__name__}: {args.examples} examples ok in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
