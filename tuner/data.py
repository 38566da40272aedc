"""Position sets as the optimizers use them: boards and played moves in numpy arrays.

A position set is what ``tuner ingest`` writes (see :mod:`tuner.ingest`); this module reads
one split of it, converts the FENs to the numba core's boards and the played moves to UCI
keys, and checks that every played move is legal in its position.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import chess
import numpy as np
from tqdm import tqdm

from search.search_api import move_indices
from search.board import BOARD_WORDS
from search.convert import IllegalMoveError, from_chess, uci_key
from tuner.errors import TunerError


@dataclass(frozen=True)
class Positions:
    """Positions and the moves played in them.

    ``boards`` uint64[P, BOARD_WORDS]; ``played`` int32[P] UCI keys of the played moves
    (:func:`search.convert.uci_key`); ``game_ids`` int64[P]; ``labels`` a short text per
    position for error messages (file and game/ply when known); ``results`` float64[P], the
    game's result from the side to move's view (1 win, 0.5 draw, 0 loss, NaN for an
    unfinished game ``*``), or None when the source has none.
    """

    boards: np.ndarray
    played: np.ndarray
    game_ids: np.ndarray
    labels: list[str]
    results: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.played)

    def subset(self, rows: np.ndarray) -> Positions:
        rows = np.asarray(rows, dtype=np.int64)
        return Positions(self.boards[rows], self.played[rows], self.game_ids[rows],
                         [self.labels[i] for i in rows],
                         None if self.results is None else self.results[rows])


#: a game's result tag -> White's score (``*``: unknown)
WHITE_SCORE = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def mover_results(result_tags: list[str], stm: np.ndarray) -> np.ndarray:
    """The result from the side to move's view (float64[P]: 1, 0.5, 0; NaN for ``*`` or an
    unknown tag) from the games' result tags and the side to move (0 White, 1 Black)."""
    white = np.array([WHITE_SCORE.get(r, np.nan) for r in result_tags], dtype=np.float64)
    return np.where(np.asarray(stm) == 0, white, 1.0 - white)


def from_boards(boards: list[chess.Board], moves: list[chess.Move], game_ids: list[int] | None = None) -> Positions:
    """Positions from python-chess boards and the moves played in them (tests, small sets)."""
    if len(boards) != len(moves):
        raise ValueError("one move per board")
    arr = np.stack([from_chess(b) for b in boards]) if boards else np.zeros((0, BOARD_WORDS), np.uint64)
    keys = np.array([uci_key(m.uci()) for m in moves], dtype=np.int32)
    ids = np.arange(len(boards), dtype=np.int64) if game_ids is None else np.asarray(game_ids, dtype=np.int64)
    pos = Positions(arr, keys, ids, [b.fen() for b in boards])
    check_played(pos)
    return pos


def check_played(pos: Positions) -> np.ndarray:
    """Indices of the played moves among each position's legal moves (int64[P]); raise a
    one-line :class:`TunerError` naming the first position whose move is not legal."""
    idx = move_indices(pos.boards, pos.played)
    bad = np.flatnonzero(idx < 0)
    if len(bad):
        raise TunerError(f"{pos.labels[bad[0]]}: the played move is not legal in this position"
                         + (f" ({len(bad) - 1} more such positions)" if len(bad) > 1 else ""))
    return idx


REQUIRED_COLUMNS = ["game_id", "ply", "fen", "move", "stm", "result"]


def load_positions(data_dir: str | Path, split: str, *, limit: int = 0, seed: int = 0,
                   progress: bool = True) -> Positions:
    """Read ``split`` (train, validation, test) of the position set in ``data_dir``.

    ``limit`` > 0 keeps a seeded random sample of that many positions (in their stored order).
    """
    from tuner.ingest.reader import read_split  # noqa: PLC0415 - keeps polars out of search-only imports

    frame = read_split(data_dir, split, columns=REQUIRED_COLUMNS)
    n = frame.height
    rows = np.arange(n)
    if 0 < limit < n:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))
        frame = frame[rows]
    fens = frame["fen"].to_list()
    ucis = frame["move"].to_list()
    game_ids = frame["game_id"].to_numpy().astype(np.int64)
    plies = frame["ply"].to_list()
    source = Path(data_dir) / f"{split}.parquet"
    labels = [f"{source}: game {g} ply {p}" for g, p in zip(game_ids.tolist(), plies)]
    boards = np.zeros((len(fens), BOARD_WORDS), dtype=np.uint64)
    keys = np.zeros(len(fens), dtype=np.int32)
    it = tqdm(range(len(fens)), desc=f"load {split}", unit="pos", disable=not progress or len(fens) < 20000,
              leave=False)
    for i in it:
        try:
            boards[i] = from_chess(chess.Board(fens[i]))
            keys[i] = uci_key(ucis[i])
        except (ValueError, IllegalMoveError) as exc:
            raise TunerError(f"{labels[i]}: {exc}") from None
    results = mover_results(frame["result"].to_list(), frame["stm"].to_numpy())
    pos = Positions(boards, keys, game_ids, labels, results)
    check_played(pos)
    return pos
