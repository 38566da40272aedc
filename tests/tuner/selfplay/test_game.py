"""tuner.selfplay.game: a self-play game's rows against python-chess and a fresh search, its
determinism, its start and the adjudication rules."""

from __future__ import annotations

import chess
import chess.polyglot
import numpy as np
import pytest

from search.core.convert import from_fen
from search.evaluation.evaluators import load_evaluator
from search.tree.iterative import Searcher
from tuner.arena.match import Opening, load_openings, DEFAULT_OPENINGS
from tuner.selfplay.config import SelfplayConfig
from tuner.arena.match import MATE_CP, white_cp
from tuner.selfplay.game import GameTask, Mover, _adjudicate, choose_start, play_game


@pytest.fixture(scope="module")
def mover() -> Mover:
    return Mover(load_evaluator("gm"), 10.0)


@pytest.fixture(scope="module")
def opening() -> Opening:
    return load_openings(DEFAULT_OPENINGS)[3]


def _cfg(**kw: object) -> SelfplayConfig:
    base: dict[str, object] = {"games": 4, "nodes": 400, "max_plies": 60, "start_nodes": 300}
    base.update(kw)
    return SelfplayConfig(**base)  # type: ignore[arg-type]


def test_every_row_is_the_position_before_a_legal_move_with_its_key_and_legal_count(mover: Mover,
                                                                                    opening: Opening) -> None:
    rec = play_game(GameTask(5, opening, load_evaluator("gm"), _cfg()), mover)
    board = chess.Board(opening.fen)
    for m in rec.random_moves:
        board.push_uci(m)
    assert board.fen() == rec.start_fen
    rows = rec.rows
    assert rec.positions == len(rows["move"]) > 10
    for i in range(rec.positions):
        assert rows["fen"][i] == board.fen()
        assert rows["ply"][i] == len(rec.random_moves) + i
        assert rows["stm"][i] == (0 if board.turn == chess.WHITE else 1)
        assert rows["zobrist"][i] == chess.polyglot.zobrist_hash(board)
        assert rows["n_legal"][i] == board.legal_moves.count()
        move = chess.Move.from_uci(rows["move"][i])
        assert board.is_legal(move)
        board.push(move)
    assert rec.result in ("1-0", "0-1", "1/2-1/2")
    if rec.termination == "checkmate":
        assert board.is_checkmate()
        assert rec.result == ("0-1" if board.turn == chess.WHITE else "1-0")
    assert rec.nodes > 0


def test_the_first_score_is_a_fresh_search_of_the_start_in_whites_view(mover: Mover, opening: Opening) -> None:
    cfg = _cfg()
    task = GameTask(2, opening, load_evaluator("gm"), cfg)
    rec = play_game(task, mover)
    s = Searcher(load_evaluator("gm"), tt_bits=16)
    it = s.think(from_fen(rec.start_fen), [], node_limit=cfg.nodes)
    assert it is not None
    white = chess.Board(rec.start_fen).turn == chess.WHITE
    assert rec.rows["score"][0] == white_cp(it, white)
    assert rec.rows["move"][0] == chess.Board(rec.start_fen).uci(chess.Move.from_uci(rec.rows["move"][0]))


def test_a_game_is_the_same_whoever_plays_it_and_differs_by_its_number(opening: Opening) -> None:
    cfg = _cfg()
    a = play_game(GameTask(7, opening, load_evaluator("gm"), cfg), Mover(load_evaluator("gm"), 10.0))
    b = play_game(GameTask(7, opening, load_evaluator("gm"), cfg), Mover(load_evaluator("gm"), 10.0))
    c = play_game(GameTask(8, opening, load_evaluator("gm"), cfg), Mover(load_evaluator("gm"), 10.0))
    assert a.rows == b.rows and a.random_moves == b.random_moves and a.result == b.result
    assert a.random_moves != c.random_moves


def test_the_start_is_balanced_or_the_opening_itself(mover: Mover, opening: Opening) -> None:
    cfg = _cfg(random_plies=6, start_margin=60)
    for index in range(6):
        board, moves = choose_start(GameTask(index, opening, load_evaluator("gm"), cfg), mover)
        if not moves:
            assert board.fen() == chess.Board(opening.fen).fen()
            continue
        assert len(moves) == 6
        s = Searcher(load_evaluator("gm"), tt_bits=16)
        it = s.think(from_fen(board.fen()), [], node_limit=cfg.start_nodes)
        assert it is not None and abs(it.score_cp) <= 60
    none = _cfg(random_plies=0)
    board, moves = choose_start(GameTask(0, opening, load_evaluator("gm"), none), mover)
    assert moves == [] and board.fen() == chess.Board(opening.fen).fen()


def test_adjudication_rules() -> None:
    cfg = _cfg(resign_cp=500, resign_moves=2, draw_cp=10, draw_moves=2, draw_after=20, max_plies=100)
    assert _adjudicate([0, 600, 700, 800, 900], 5, cfg) == ("1-0", "resignation (beyond 500 cp)")
    assert _adjudicate([-600, -700, -800, -MATE_CP - 3], 4, cfg) == ("0-1", "resignation (beyond 500 cp)")
    assert _adjudicate([600, -700, 800, 900], 4, cfg) is None  # the sides disagree
    assert _adjudicate([5, -5, 0, 3], 4, cfg) is None  # too early for a draw
    assert _adjudicate([5, -5, 0, 3], 20, cfg) == ("1/2-1/2", "draw adjudication (within 10 cp)")
    assert _adjudicate([5, -50, 0, 3], 20, cfg) is None
    assert _adjudicate([300], 100, cfg) == ("1/2-1/2", "length (100 plies)")
    never = _cfg(resign_moves=0, draw_moves=0)
    assert _adjudicate([5000] * 20, 20, never) is None


def test_mates_are_stored_beyond_mate_cp(mover: Mover) -> None:
    # a mate in one for White: the row's score is MATE_CP + 1, White's view, whoever moves
    fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"
    rec = play_game(GameTask(0, Opening("mate", fen), load_evaluator("gm"), _cfg(random_plies=0)), mover)
    assert rec.rows["move"][0] == "a1a8" and rec.rows["score"][0] == MATE_CP + 1
    assert rec.result == "1-0" and rec.termination == "checkmate" and rec.positions == 1
    assert np.all(np.asarray(rec.rows["stm"]) == 0)
