"""One self-play game: its start (an opening plus seeded random plies, redrawn while the engine
finds it unbalanced), then the engine against itself, every searched position recorded.

Each position the engine searches becomes a row of the position-set format
(:data:`tuner.ingest.schema.SCHEMA`): the FEN before the move, the move the search chose (it is
also the move played), the search's score in White's view (centipawns; a mate in n moves as
``+-(MATE_CP + n)``, as :func:`tuner.arena.match.white_cp` records a match's scores), the number of legal moves, the polyglot key, and, once the game is over,
its result. The random plies of the start are not recorded. A game is a pure function of the
player, the settings, the opening and the game's number: the random plies are drawn from
``(seed, number)``, the engine starts each game with an empty move-ordering table, so the games
do not depend on which worker plays them.

A game ends, in this order: by the rules (checked with python-chess as soon as they apply:
mate, stalemate, insufficient material, fifty moves, threefold repetition); by resignation
(the last ``resign_moves`` scores of each side all beyond ``resign_cp`` for the same side); by a
draw adjudication (after ``draw_after`` plies, the last ``draw_moves`` scores of each side all
within ``draw_cp``); by length (``max_plies`` plies from the opening).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import chess
import numpy as np

from search.core.board import W_KEY
from search.core.convert import from_fen, legal_moves, move_to_uci, push
from search.tree.iterative import MAX_DEPTH
from tuner.arena.engines import EngineSpec, ExternalEngine
from tuner.arena.match import MATE_CP, Opening, rules_end, white_cp
from tuner.arena.players import Searchable, new_engine
from tuner.selfplay.config import SelfplayConfig

#: move-ordering table of a game's engine: 2**16 entries (the searches are a few thousand nodes)
TT_BITS = 16
#: the row columns a game fills (the others of the position set are the game's own)
ROW_COLUMNS = ("ply", "fen", "move", "stm", "score", "n_legal", "zobrist")


@dataclass(frozen=True)
class GameTask:
    """What a worker needs to play game ``index``: the player (weights or a network for the numba
    search, or an external UCI engine), the opening, the settings."""

    index: int
    opening: Opening
    player: Searchable | EngineSpec
    config: SelfplayConfig


@dataclass
class GameRecord:
    """A finished game: its start, result and how it ended, and one entry per recorded position
    in :attr:`rows` (lists by column of :data:`ROW_COLUMNS`)."""

    index: int
    opening: str
    start_fen: str
    random_moves: list[str]
    result: str
    termination: str
    nodes: int
    seconds: float
    rows: dict[str, list[Any]] = field(default_factory=lambda: {name: [] for name in ROW_COLUMNS})

    @property
    def positions(self) -> int:
        return len(self.rows["ply"])

    def summary(self) -> dict[str, Any]:
        """The game without its rows (a line of the run's journal)."""
        return {"game": self.index, "opening": self.opening, "start": self.start_fen, "random": self.random_moves,
                "result": self.result, "termination": self.termination, "positions": self.positions,
                "nodes": self.nodes, "seconds": round(self.seconds, 4)}


class Mover:
    """The engine of one worker: a numba :class:`~search.tree.iterative.Searcher` (or the
    probability-limited one) or a running external engine, asked for a move and its score."""

    def __init__(self, player: Searchable | EngineSpec, timeout: float) -> None:
        self.external: ExternalEngine | None = None
        self.engine: Any = None
        if isinstance(player, EngineSpec):
            self.external = ExternalEngine(player, timeout=timeout)
        else:
            self.engine = new_engine(player, TT_BITS)

    def new_game(self) -> None:
        if self.external is not None:
            self.external.new_game()
        else:
            self.engine.clear()

    def move(self, board: chess.Board, b: np.ndarray, keys: list[int], depth: int | None, nodes: int | None,
             where: str) -> tuple[str, int, int]:
        """(move in UCI, score in White's view as :func:`white_cp`, nodes searched)."""
        if self.external is not None:
            limit = chess.engine.Limit(depth=depth, nodes=nodes)
            uci, cp, _ = self.external.move(board, limit, where)
            return uci, cp, 0
        it = self.engine.think(b, keys, max_depth=depth or MAX_DEPTH, node_limit=nodes)
        if it is None or not it.pv:  # the rules end every position without a move before this
            raise RuntimeError(f"the engine returned no move in {board.fen()}")
        return move_to_uci(it.pv[0]), white_cp(it, board.turn == chess.WHITE), int(self.engine.searched_nodes)

    def close(self) -> None:
        if self.external is not None:
            self.external.close()


def _random_start(opening: Opening, rng: np.random.Generator, plies: int) -> tuple[chess.Board, list[str]] | None:
    """The opening plus ``plies`` uniformly random legal plies; None when a ply finds the game
    over (then the caller draws again)."""
    board = chess.Board(opening.fen)
    moves: list[str] = []
    for _ in range(plies):
        legal = sorted(board.legal_moves, key=lambda m: m.uci())
        if not legal or rules_end(board) is not None:
            return None
        move = legal[int(rng.integers(len(legal)))]
        moves.append(move.uci())
        board.push(move)
    if rules_end(board) is not None:
        return None
    return board, moves


def choose_start(task: GameTask, mover: Mover) -> tuple[chess.Board, list[str]]:
    """The game's start: random plies after the opening, drawn from ``(seed, index)`` until the
    engine scores the start within ``start_margin`` at ``start_nodes``; after ``start_tries``
    draws the opening itself."""
    cfg = task.config
    if cfg.random_plies == 0:
        return chess.Board(task.opening.fen), []
    rng = np.random.default_rng([cfg.seed, task.index])
    for _ in range(cfg.start_tries):
        drawn = _random_start(task.opening, rng, cfg.random_plies)
        if drawn is None:
            continue
        board, moves = drawn
        mover.new_game()
        _, cp, _ = mover.move(board, from_fen(board.fen()), [], None, cfg.start_nodes, "start check")
        if abs(cp) <= cfg.start_margin:
            return board, moves
    return chess.Board(task.opening.fen), []


def _adjudicate(scores: list[int], plies: int, cfg: SelfplayConfig) -> tuple[str, str] | None:
    """(result, reason) when the last scores (White's view, one per ply) call the game."""
    window = 2 * cfg.resign_moves
    if window and len(scores) >= window:
        recent = scores[-window:]
        if all(cp >= cfg.resign_cp for cp in recent) or all(cp <= -cfg.resign_cp for cp in recent):
            return ("1-0" if recent[-1] > 0 else "0-1"), f"resignation (beyond {cfg.resign_cp} cp)"
    window = 2 * cfg.draw_moves
    if window and plies >= cfg.draw_after and len(scores) >= window:
        if all(abs(cp) <= cfg.draw_cp for cp in scores[-window:]):
            return "1/2-1/2", f"draw adjudication (within {cfg.draw_cp} cp)"
    if plies >= cfg.max_plies:
        return "1/2-1/2", f"length ({cfg.max_plies} plies)"
    return None


def play_game(task: GameTask, mover: Mover) -> GameRecord:
    """Play game ``task.index`` with ``mover`` on both sides (see the module docstring)."""
    t0 = time.perf_counter()
    cfg = task.config
    board, random_moves = choose_start(task, mover)
    mover.new_game()
    start_fen = board.fen()
    b = from_fen(start_fen)
    ply0 = len(random_moves)
    keys: list[int] = []
    scores: list[int] = []
    rec = GameRecord(task.index, task.opening.name, start_fen, random_moves, "*", "", 0, 0.0)
    rows = rec.rows
    while True:
        end = rules_end(board) or _adjudicate(scores, len(scores), cfg)
        if end is not None:
            rec.result, rec.termination = end
            break
        fen = board.fen()
        uci, cp, nodes = mover.move(board, b, keys, cfg.depth, cfg.node_limit,
                                    f"game {task.index}, ply {ply0 + len(scores) + 1}")
        move = chess.Move.from_uci(uci)
        if not board.is_legal(move):  # python-chess is the rules oracle
            raise RuntimeError(f"the engine played the illegal move {uci} in {fen}")
        rows["ply"].append(ply0 + len(scores))
        rows["fen"].append(fen)
        rows["move"].append(uci)
        rows["stm"].append(0 if board.turn == chess.WHITE else 1)
        rows["score"].append(cp)
        legal = legal_moves(b)
        rows["n_legal"].append(len(legal))
        rows["zobrist"].append(int(b[W_KEY]))
        rec.nodes += nodes
        scores.append(cp)
        keys.append(int(b[W_KEY]))
        b = push(b, next(int(m) for m in legal if move_to_uci(int(m)) == uci))
        board.push(move)
    rec.seconds = time.perf_counter() - t0
    return rec


__all__ = ["GameRecord", "GameTask", "Mover", "ROW_COLUMNS", "choose_start", "play_game"]
