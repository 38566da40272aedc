"""The playing search (search/play/): with every feature off it is the exact search (the plain
minimax oracle of tests/oracles/minimax.py reaches it), with them on it plays legal moves,
deterministically, within its limits, finds mates, and its tables keep what they are given."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator

import chess
import chess.polyglot
import numpy as np
import pytest
from numba import njit
from tests.oracles.minimax import Oracle

from search.core.board import W_KEY, make_null_move
from search.core.convert import from_chess, legal_moves, move_to_chess, move_to_uci
from search.core.movegen import MAX_MOVES
from search.evaluation.evaluators import load_evaluator
from search.evaluation.static_eval import eval_null, eval_root, new_eval_state, static_score
from search.params.weights import load_weights
from search.play.kernel import FEATURES, _best_index
from search.play.searcher import PlaySearcher
from search.play.tables import (HISTORY_MAX, BOUND_EXACT, BOUND_LOWER, BOUND_UPPER, NO_STATIC, TT_ALIGN_BYTES, TT_PACKED,
                                TT_SCORE, TT_STATIC, new_table, score_from_tt, score_to_tt, tt_prefetch, tt_read, tt_write)
from search.tree.alphabeta import MATE, MATE_BOUND
from search.tree.iterative import Iteration, Searcher, TimePlan
from search.tree.search_api import mate_in

CLASSIC = load_weights("classic").values
ALL_OFF = {name: False for name in FEATURES}


@pytest.fixture(scope="module")
def positions(real_boards: list[chess.Board]) -> list[chess.Board]:
    """36 positions spread over the shipped games."""
    return real_boards[7::90]


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(CLASSIC)


@pytest.mark.parametrize("oracle_at_2", [pytest.param(slice(None, None, 3), id="third-0"),
                                         pytest.param(slice(1, None, 3), marks=pytest.mark.slow, id="third-1"),
                                         pytest.param(slice(2, None, 3), marks=pytest.mark.slow, id="third-2")])
def test_with_every_feature_off_it_is_the_exact_search(positions: list[chess.Board], oracle: Oracle,
                                                       oracle_at_2: slice) -> None:
    """Plain fail-soft alpha-beta with the exact search's quiescence and rules: the exact
    search's score at depths 1 to 3 and the minimax oracle's value at depth 1, on every position;
    the oracle's value and an optimal line as PV at depth 2 on a third of them (the oracle's
    depth 2 is most of the time: the other two thirds are in the slow set)."""
    exact = Searcher(CLASSIC, tt_bits=12)
    at_2 = {id(board) for board in positions[oracle_at_2]}
    for board in positions:
        b = from_chess(board)
        for depth in (1, 2, 3):
            play = PlaySearcher(CLASSIC, tt_bits=12, features=ALL_OFF, aspiration=False)
            got = play.think(b, [], max_depth=depth)
            want = exact.think(b, [], max_depth=depth)
            assert got is not None and want is not None
            assert got.depth == depth and not got.partial
            assert got.score == want.score, board.fen()
            if depth == 1 or (depth == 2 and id(board) in at_2):
                assert got.score == oracle.value(board, depth), board.fen()
                oracle.check_line(board, depth, got.score, [move_to_chess(m) for m in got.pv])


def _with_four_moves(boards: list[chess.Board]) -> Iterator[tuple[chess.Board, np.ndarray, list[int]]]:
    """Each of ``boards`` with at least four legal moves: the board, as the search's, its moves."""
    for board in boards:
        b = from_chess(board)
        legal = [int(m) for m in legal_moves(b)]
        if len(legal) >= 4:
            yield board, b, legal


def _children(board: chess.Board, moves: list[int]) -> dict[int, chess.Board]:
    """The position after each of ``moves`` (packed), without ``board``'s history."""
    out = {}
    for m in moves:
        child = board.copy(stack=False)
        child.push(move_to_chess(m))
        out[m] = child
    return out


def test_root_moves_are_the_only_ones_searched_and_their_value_is_a_lower_bound(positions: list[chess.Board],
                                                                                oracle: Oracle) -> None:
    """``root_moves`` (UCI's searchmoves): with every feature off the score is the minimax
    oracle's best over those moves alone, the move one of them, and the root's table entry a
    lower bound (the moves left out may be better); with every feature on, and with a helper
    thread, the move is still one of them; a move not legal at the root is refused."""
    checked = 0
    for board, b, legal in _with_four_moves(positions[:10]):
        children = _children(board, legal)
        worst = sorted(legal, key=lambda m: -oracle.value(children[m], 0, ply=1))[:2]  # the best left out
        for depth in (1, 2):
            play = PlaySearcher(CLASSIC, tt_bits=12, features=ALL_OFF, aspiration=False)
            got = play.think(b, [], max_depth=depth, root_moves=worst)
            assert got is not None and got.pv[0] in worst
            assert got.score == max(-oracle.value(children[m], depth - 1, ply=1) for m in worst), board.fen()
            found, move, _, bound, _, _ = tt_read(play.state.tt, b[W_KEY])
            assert found and bound == BOUND_LOWER and move in worst
            whole = play.think(b, [], max_depth=depth)
            assert whole is not None and whole.score == oracle.value(board, depth), board.fen()
            assert tt_read(play.state.tt, b[W_KEY])[3] == BOUND_EXACT
        for threads in (1, 2):
            it = PlaySearcher(CLASSIC, tt_bits=14, threads=threads).think(b, [], node_limit=20_000, root_moves=worst)
            assert it is not None and it.pv[0] in worst
        checked += 1
    assert checked >= 8
    other = next(m for m in legal_moves(from_chess(positions[1])) if m not in legal_moves(from_chess(positions[0])))
    with pytest.raises(ValueError, match="not legal moves of the board"):
        PlaySearcher(CLASSIC, tt_bits=12).think(from_chess(positions[0]), [], max_depth=1, root_moves=[int(other)])


def test_multipv_lines_are_the_best_root_moves_in_rank_order(positions: list[chess.Board], oracle: Oracle) -> None:
    """``multipv`` (UCI's MultiPV): with every feature off, each depth's k lines are k distinct
    root moves whose scores are the minimax oracle's values of those moves and the k best of
    them, ranked; the search returns line 1; with ``root_moves`` the lines keep to them."""
    checked = 0
    for board, b, legal in _with_four_moves(positions[:4]):  # (the oracle's children are slow: 3 s a position)
        values = {m: -oracle.value(child, 1, ply=1) for m, child in _children(board, legal).items()}
        seen: list[Iteration] = []
        play = PlaySearcher(CLASSIC, tt_bits=12, features=ALL_OFF, aspiration=False)
        got = play.think(b, [], max_depth=2, multipv=3, on_iteration=seen.append)
        last = [it for it in seen if it.depth == 2]
        assert [it.multipv for it in last] == [1, 2, 3]
        moves = [it.pv[0] for it in last]
        assert len(set(moves)) == 3 and all(it.score == values[m] for it, m in zip(last, moves, strict=True))
        assert [it.score for it in last] == sorted(values.values(), reverse=True)[:3], board.fen()
        assert got is not None and got.pv[0] == moves[0] and got.multipv == 1
        only = legal[1:3]
        seen = []
        PlaySearcher(CLASSIC, tt_bits=14).think(b, [], max_depth=6, multipv=3, root_moves=only, on_iteration=seen.append)
        assert {it.pv[0] for it in seen if it.depth == 6} == set(only)
        checked += 1
    assert checked >= 3
    with pytest.raises(ValueError, match="multipv must be at least 1"):
        PlaySearcher(CLASSIC, tt_bits=12).think(from_chess(positions[0]), [], max_depth=1, multipv=0)


def test_the_quiescence_table_keeps_the_exact_score(positions: list[chess.Board]) -> None:
    # with the quiescence table on (and every other feature off) the table returns only true
    # bounds of quiescence values, so the root's score stays the exact search's, at every depth
    # (the table carried over between the depths, as between moves); and it saves nodes
    exact = Searcher(CLASSIC, tt_bits=12)
    features = {**ALL_OFF, "qs_tt": True}
    fewer = 0
    for board in positions:
        b = from_chess(board)
        play = PlaySearcher(CLASSIC, tt_bits=16, features=features, aspiration=False)
        plain = PlaySearcher(CLASSIC, tt_bits=16, features=ALL_OFF, aspiration=False)
        for depth in (1, 2, 3):
            got = play.think(b, [], max_depth=depth)
            want = exact.think(b, [], max_depth=depth)
            assert got is not None and want is not None and not got.partial
            assert got.score == want.score, (board.fen(), depth)
        fresh = PlaySearcher(CLASSIC, tt_bits=16, features=features, aspiration=False)
        fresh.think(b, [], max_depth=3)
        plain.think(b, [], max_depth=3)
        fewer += fresh.searched_nodes < plain.searched_nodes
    assert fewer >= len(positions) // 2, f"the table saved nodes in {fewer} of {len(positions)} positions"


def test_game_history_repetitions_score_as_draws_with_every_feature_off() -> None:
    # a position about to repeat a third time: the exact search and the playing one agree
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"):
        board.push_uci(uci)
    replay = chess.Board()
    hist = []
    for move in board.move_stack:
        hist.append(chess.polyglot.zobrist_hash(replay))
        replay.push(move)
    b = from_chess(board)
    want = Searcher(CLASSIC, tt_bits=12).think(b, hist, max_depth=3)
    got = PlaySearcher(CLASSIC, tt_bits=12, features=ALL_OFF, aspiration=False).think(b, hist, max_depth=3)
    assert got is not None and want is not None and got.score == want.score


def test_full_search_plays_legal_moves_deterministically_within_its_node_limit(positions: list[chess.Board]) -> None:
    for board in positions[::3]:
        b = from_chess(board)
        runs = []
        for _ in range(2):
            s = PlaySearcher(CLASSIC, tt_bits=14)
            it = s.think(b, [], node_limit=3_000)
            assert it is not None and s.searched_nodes <= 3_000
            runs.append((it.score, it.pv, it.depth, s.searched_nodes))
            assert chess.Move.from_uci(move_to_uci(it.pv[0])) in board.legal_moves
            assert it.seldepth >= it.depth or it.partial
        assert runs[0] == runs[1], board.fen()


def test_it_deepens_far_past_the_exact_search_at_equal_nodes(positions: list[chess.Board]) -> None:
    # the point of the selectivity: at 20,000 nodes the exact search reaches about depth 4-5
    deeper = 0
    for board in positions[::4]:
        b = from_chess(board)
        play = PlaySearcher(CLASSIC, tt_bits=14).think(b, [], node_limit=20_000)
        exact = Searcher(CLASSIC, tt_bits=14).think(b, [], node_limit=20_000)
        assert play is not None and exact is not None
        deeper += play.depth >= exact.depth + 3
    assert deeper >= len(positions[::4]) - 1


def test_a_time_plan_and_an_abort_still_give_a_legal_move(positions: list[chess.Board]) -> None:
    board = positions[10]
    b = from_chess(board)
    s = PlaySearcher(CLASSIC, tt_bits=14)
    it = s.think(b, [], plan=TimePlan.fixed(0.05))
    assert it is not None and chess.Move.from_uci(move_to_uci(it.pv[0])) in board.legal_moves
    s.abort()
    it = s.think(b, [])  # aborted before it starts: a move anyway
    assert it is not None and chess.Move.from_uci(move_to_uci(it.pv[0])) in board.legal_moves
    s.rearm()
    it = s.think(b, [], max_depth=3)
    assert it is not None and it.depth == 3 and not it.partial


def test_no_legal_move_gives_no_iteration_and_one_legal_move_is_played() -> None:
    mated = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    assert mated.is_checkmate()
    it = PlaySearcher(CLASSIC, tt_bits=10).think(from_chess(mated), [], max_depth=4)
    assert it is None or not it.pv
    forced = chess.Board("k7/8/1K6/8/8/8/8/1R6 b - - 0 1")
    assert forced.legal_moves.count() == 1
    it = PlaySearcher(CLASSIC, tt_bits=10).think(from_chess(forced), [], plan=TimePlan.for_clock(10.0))
    assert it is not None and move_to_uci(it.pv[0]) == next(iter(forced.legal_moves)).uci()


# Mates from the shipped sample games and classical problems (see also datasets/epd/mates.epd)
MATES = [
    # Morphy - Duke Karl / Count Isouard, Paris 1858 (the Opera game, datasets/sample), before
    # 16.Qb8+ Nxb8 17.Rd8#: mate in 2
    ("4kb1r/p2n1ppp/4q3/4p1B1/4P3/1Q6/PPP2PPP/2KR4 w k - 0 16", 2, "b3b8"),
    # Légal - Saint Brie, Paris 1750, as usually given (1.e4 e5 2.Nf3 d6 3.Bc4 Bg4 4.Nc3 g6
    # 5.Nxe5 Bxd1): 6.Bxf7+ Ke7 7.Nd5#, mate in 2
    ("rn1qkbnr/ppp2p1p/3p2p1/4N3/2B1P3/2N5/PPPP1PPP/R1BbK2R w KQkq - 0 6", 2, "c4f7"),
    # a back-rank mate in 1 (composed for this test)
    ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 1, "d1d8"),
]


@pytest.mark.parametrize("fen,moves,first", MATES)
def test_it_finds_short_mates(fen: str, moves: int, first: str) -> None:
    board = chess.Board(fen)
    it = PlaySearcher(CLASSIC, tt_bits=16).think(from_chess(board), [], node_limit=200_000, mate_moves=moves)
    assert it is not None
    plies = mate_in(it.score)
    assert plies is not None and plies > 0 and (plies + 1) // 2 == moves, (fen, it.score)
    assert move_to_uci(it.pv[0]) == first


def test_mate_scores_keep_their_distance_through_the_table() -> None:
    for ply in (0, 3, 17):
        for v in (MATE - 5 - ply, -(MATE - 9 - ply), 1234, -77):
            assert score_from_tt(score_to_tt(v, ply), ply) == v
    # a mate in 5 plies from a node at ply 3 is a mate in 7 plies from the root when read at ply 5
    stored = score_to_tt(MATE - 8, 3)
    assert score_from_tt(stored, 5) == MATE - 10 and score_from_tt(stored, 5) > MATE_BOUND


def test_table_entries_round_trip_and_the_replacement_rule() -> None:
    tt = new_table(4)
    key = np.uint64(0xDEADBEEF12345670)
    tt_write(tt, key, np.int32(0x12345), 6, BOUND_LOWER, -4321, 99, 1)
    assert tt_read(tt, key) == (True, 0x12345, 6, BOUND_LOWER, -4321, 99)
    assert tt_read(tt, key ^ np.uint64(1 << 40))[0] is False
    # the same position, much shallower and not exact: kept
    tt_write(tt, key, np.int32(7), 1, BOUND_UPPER, 5, NO_STATIC, 1)
    assert tt_read(tt, key)[2] == 6
    # exact replaces; a store without a move keeps the old move
    tt_write(tt, key, np.int32(0), 2, BOUND_EXACT, 5, 7, 1)
    assert tt_read(tt, key) == (True, 0x12345, 2, BOUND_EXACT, 5, 7)
    # another position in the slot: a shallower entry of the same search does not replace it,
    # one of a later search does
    other = key + np.uint64(16)
    tt_write(tt, other, np.int32(9), 1, BOUND_LOWER, 1, 1, 1)
    assert tt_read(tt, other)[0] is False
    tt_write(tt, other, np.int32(9), 1, BOUND_LOWER, 1, 1, 2)
    assert tt_read(tt, other)[:2] == (True, 9)


@pytest.mark.parametrize("bits", [0, 4, 16, 20])
def test_a_new_table_is_empty_contiguous_and_starts_on_a_cache_line(bits: int) -> None:
    """numpy's large arrays start 16 bytes past a cache line; the table must not (every other
    32-byte entry would span two lines)."""
    tt = new_table(bits)
    assert tt.shape == (1 << bits, 4) and tt.dtype == np.int64 and tt.flags.c_contiguous
    assert tt.ctypes.data % TT_ALIGN_BYTES == 0 and TT_ALIGN_BYTES % 32 == 0
    assert not tt.any()


def test_the_next_move_picked_is_the_first_of_the_largest_keys() -> None:
    """``_best_index`` (the move picker, unsigned indices) against a plain Python argmax from
    ``i``: the first of equal keys wins, so ties keep the order they had."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        keys = rng.integers(-3, 4, size=MAX_MOVES).astype(np.int64) << np.int64(rng.integers(0, 40))
        i = int(rng.integers(0, n))
        want = i + int(np.argmax(keys[i:n]))
        assert _best_index(keys, i, n) == want
        assert _best_index.py_func(keys, i, n) == want


def test_a_torn_table_entry_reads_as_absent() -> None:
    """Lazy SMP threads share the table without locks: an entry whose data another thread
    rewrote between the key and the data (here: one word changed) must not match its key."""
    tt = new_table(4)
    key = np.uint64(0xDEADBEEF12345670)
    tt_write(tt, key, np.int32(0x12345), 6, BOUND_LOWER, -4321, 99, 1)
    slot = int(key & np.uint64(15))
    for column, value in ((TT_SCORE, 1234), (TT_STATIC, -5), (TT_PACKED, int(tt[slot, TT_PACKED]) ^ (1 << 24))):
        torn = tt.copy()
        torn[slot, column] = value
        assert tt_read(torn, key)[0] is False
    assert tt_read(tt, key)[0] is True


def test_lazy_smp_threads_share_the_table_and_play_legal_moves(positions: list[chess.Board]) -> None:
    """With two threads the helper searches too (its nodes are counted), the move is legal and
    the search honours its node limit (on the main thread) and a time plan."""
    for board in positions[:4]:
        b = from_chess(board)
        s = PlaySearcher(CLASSIC, tt_bits=14, threads=2)
        it = s.think(b, [], node_limit=30_000)
        assert it is not None and move_to_chess(it.pv[0]) in board.legal_moves
        assert it.total_nodes <= 30_000 and s.helper_nodes > 0
        assert it.total_nodes + s.helper_nodes <= s.searched_nodes <= 30_000 + s.helper_nodes  # (the cut iteration's too)
        it = s.think(b, [], plan=TimePlan(0.05, 0.1))
        assert it is not None and move_to_chess(it.pv[0]) in board.legal_moves
        assert s.searched_seconds < 1.0
    with pytest.raises(ValueError, match="threads must be at least 1"):
        PlaySearcher(CLASSIC, threads=0)


@njit(cache=True)
def _null_then_score(ev, es, boards, scratch):  # type: ignore[no-untyped-def]
    eval_root(es, boards[0])
    make_null_move(boards[0], boards[1])
    eval_null(es, 0)
    return static_score(ev, es, 1, boards[1], scratch)


def test_continuation_history_learns_only_when_switched_on(positions: list[chess.Board]) -> None:
    ev = load_evaluator("nnue")
    board = from_chess(positions[3])
    on = PlaySearcher(ev, tt_bits=14)
    off = PlaySearcher(ev, tt_bits=14, features={"cont_hist": False})
    no_history = PlaySearcher(ev, tt_bits=14, features={"history": False})
    for searcher in (on, off, no_history):
        searcher.think(board, [], max_depth=8)  # at depth 7 today's nnue's two trees happen to count the same nodes
    cont = on.state.cont
    assert np.count_nonzero(cont) > 100 and (cont > 0).any() and (cont < 0).any()  # rewards and maluses
    assert np.abs(cont.astype(np.int64)).max() <= HISTORY_MAX
    # a row is a move's (colour, piece, square): no pawn reaches its first rank, so a pawn's row for
    # white's 1st rank (and black's 8th) stays empty, in rows and in columns
    white_pawn_rank1 = [(0 * 6 + 0) * 64 + sq for sq in range(8)]
    black_pawn_rank8 = [(1 * 6 + 0) * 64 + sq for sq in range(56, 64)]
    for idx in white_pawn_rank1 + black_pawn_rank8:
        assert not cont[idx].any() and not cont[:, idx].any()
    assert not off.state.cont.any() and not no_history.state.cont.any()
    assert on.searched_nodes != off.searched_nodes  # it orders and reduces differently
    on.clear()
    assert not on.state.cont.any()


def test_a_null_move_keeps_the_network_accumulators(positions: list[chess.Board]) -> None:
    # the incremental state after a null move scores the passed position as a fresh refresh does
    net = load_evaluator("nnue")
    from search.evaluation.validate import check_evaluator  # the kernels' evaluator argument

    ev = check_evaluator(net)
    for board in positions[:8]:
        if board.is_check():
            continue
        boards = np.zeros((66, 16), dtype=np.uint64)
        boards[0] = from_chess(board)
        es = new_eval_state(ev, boards)
        scratch = np.zeros(40, dtype=np.int64)
        got = _null_then_score(ev, es, boards, scratch)
        passed = board.copy(stack=False)
        passed.push(chess.Move.null())
        fresh = np.zeros((66, 16), dtype=np.uint64)
        fresh[0] = from_chess(passed)
        es2 = new_eval_state(ev, fresh)
        eval_root(es2, fresh[0])
        assert got == static_score(ev, es2, 0, fresh[0], scratch), board.fen()


def test_it_plays_every_evaluator_kind(positions: list[chess.Board]) -> None:
    board = positions[5]
    for name in ("nnue", "gm-nn"):
        it = PlaySearcher(load_evaluator(name), tt_bits=12).think(from_chess(board), [], node_limit=4_000)
        assert it is not None and chess.Move.from_uci(move_to_uci(it.pv[0])) in board.legal_moves
    assert len(legal_moves(from_chess(board))) == board.legal_moves.count()


def test_unknown_features_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown search features: nope"):
        PlaySearcher(CLASSIC, features={"nope": False})


def _bestmoves(out: io.StringIO) -> list[str]:
    """The moves of the ``bestmove`` lines written to ``out``, once there is one.

    Waits up to 300 s, not less: with a cold numba cache the first ``go`` waits for the search's
    kernels to compile (minutes on a 2-core machine, more beside other test workers); the loop
    ends as soon as the line appears.
    """
    deadline = time.monotonic() + 300.0
    while "bestmove" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.02)
    return [line.split()[1] for line in out.getvalue().splitlines() if line.startswith("bestmove")]


def test_uci_plays_the_playing_search_by_default_and_finds_go_mate() -> None:
    # tuner uci's default search: `go mate 2` on the Opera game's finish answers the mate, with
    # seldepth and `score mate 2` in its info lines
    from tuner.uci import UciEngine

    out = io.StringIO()
    engine = UciEngine(CLASSIC, out=out)
    assert isinstance(engine.searcher, PlaySearcher)
    engine.handle(f"position fen {MATES[0][0]}")
    engine.handle("go mate 2")
    engine.handle("isready")
    assert _bestmoves(out) == ["b3b8"]
    lines = out.getvalue().splitlines()
    infos = [line for line in lines if line.startswith("info depth")]
    assert infos and all(" seldepth " in line for line in infos)
    assert " score mate 2 " in infos[-1]
    engine.handle("quit")


def test_uci_threads_option_plays_with_helpers() -> None:
    from tuner.uci import UciEngine

    out = io.StringIO()
    engine = UciEngine(CLASSIC, out=out)
    engine.handle("setoption name Threads value 2")
    assert isinstance(engine.searcher, PlaySearcher) and engine.searcher.threads == 2
    engine.handle("position startpos moves e2e4")
    engine.handle("go nodes 20000")
    move, = _bestmoves(out)
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(move) in board.legal_moves
    engine.handle("setoption name Search value exact")
    engine.handle("setoption name Threads value 2")
    assert "only the playing search" in out.getvalue()
    engine.handle("quit")


def test_the_shipped_mate_suite_is_solved_within_a_node_limit() -> None:
    # datasets/epd/mates.epd: 48 mates in 1-4 from the sample games and traditional lines, each
    # verified by a plain python-chess solver (bench/verify_mates.py); the playing search finds
    # every one, at its exact length, with a first move of the bm list, within 300,000 nodes
    import re
    from pathlib import Path

    from tuner.arena.epd import parse_epd

    path = Path(__file__).resolve().parents[3] / "datasets" / "epd" / "mates.epd"
    positions, errors = parse_epd(path)
    assert not errors and len(positions) == 48
    dm = {m.group(2): int(m.group(1)) for m in re.finditer(r'dm (\d+); id "([^"]+)"', path.read_text())}
    searcher = PlaySearcher(CLASSIC, tt_bits=16)
    for p in positions:
        searcher.clear()
        it = searcher.think(from_chess(p.board), [], node_limit=300_000, mate_moves=dm[p.id])
        assert it is not None, p.id
        plies = mate_in(it.score)
        assert plies is not None and plies > 0 and (plies + 1) // 2 == dm[p.id], (p.id, it.score, it.depth)
        assert move_to_uci(it.pv[0]) in p.bm, (p.id, move_to_uci(it.pv[0]), p.bm)
        assert searcher.searched_nodes <= 300_000
