"""Positions as the optimizers use them: boards and played moves in numpy arrays.

:class:`Positions` is what reading a position set gives (:mod:`tuner.training.position_set`, which
converts the FENs or compact records to the numba core's boards and the played moves to UCI keys),
and what the tests and small tools build from python-chess boards (:func:`from_boards`). This
module holds the arrays and what is done with them in memory (a subset, a concatenation, each
played move's index among the legal moves); it reads no file and imports no polars.
Positions from position files may have no played move (:data:`NO_PLAYED_MOVE`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import chess
import numpy as np

from search.tree.search_api import move_indices
from search.core.board import BOARD_WORDS
from search.core.convert import from_chess, uci_key
from tuner.errors import TunerError

#: ``Positions.played`` of a position without a played move (a position file's line that names none)
NO_PLAYED_MOVE = -1


class RowLabels(Sequence[str]):
    """The labels ``FILE: game G ply P`` of positions read from a file, made when one is asked
    for (an error message) rather than a string per position up front: a set of millions of
    positions read chunk by chunk would spend seconds an epoch formatting labels nobody reads."""

    def __init__(self, source: Path | str, game_ids: np.ndarray, plies: np.ndarray) -> None:
        self.source, self.game_ids, self.plies = source, game_ids, plies

    def __len__(self) -> int:
        return len(self.game_ids)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> RowLabels: ...

    def __getitem__(self, i: int | slice) -> str | RowLabels:
        if isinstance(i, slice):
            return RowLabels(self.source, self.game_ids[i], self.plies[i])
        return f"{self.source}: game {int(self.game_ids[i])} ply {int(self.plies[i])}"

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same label texts."""
        if not isinstance(other, Sequence) or isinstance(other, str) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        """Unhashable, as the list of texts it stands for (it defines ``==``)."""
        raise TypeError(f"unhashable type: {type(self).__name__!r}")

    def take(self, rows: np.ndarray) -> RowLabels:
        """The labels of ``rows`` (int64 row numbers)."""
        return RowLabels(self.source, self.game_ids[rows], self.plies[rows])


def take_labels(labels: Sequence[str], rows: np.ndarray) -> Sequence[str]:
    """The labels of ``rows``: a :class:`RowLabels` stays one, a list is indexed."""
    if isinstance(labels, RowLabels):
        return labels.take(rows)
    return [labels[i] for i in rows]


@dataclass(frozen=True)
class Positions:
    """Positions and the moves played in them.

    ``boards`` uint64[P, BOARD_WORDS]; ``played`` int32[P] UCI keys of the played moves
    (:func:`search.core.convert.uci_key`; :data:`NO_PLAYED_MOVE` where there is none); ``game_ids``
    int64[P]; ``labels`` a short text per
    position for error messages (file and game/ply when known); ``results`` float64[P], the
    game's result from the side to move's view (1 win, 0.5 draw, 0 loss, NaN for an
    unfinished game ``*``), or None when the source has none; ``scores`` float64[P], a search
    score of the position from the source (``tuner selfplay``'s, an EPD ``ce``...), centipawns
    from the side to move's view, NaN where there is none (or None).
    """

    boards: np.ndarray
    played: np.ndarray
    game_ids: np.ndarray
    labels: Sequence[str]
    results: np.ndarray | None = None
    scores: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.played)

    def has_moves(self) -> np.ndarray:
        """bool[P]: whether each position has a played move."""
        mask: np.ndarray = self.played != NO_PLAYED_MOVE
        return mask

    def subset(self, rows: np.ndarray) -> Positions:
        rows = np.asarray(rows, dtype=np.int64)
        return Positions(self.boards[rows], self.played[rows], self.game_ids[rows], take_labels(self.labels, rows),
                         None if self.results is None else self.results[rows],
                         None if self.scores is None else self.scores[rows])


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
    one-line :class:`TunerError` naming the first position without a played move or whose
    move is not legal."""
    missing = np.flatnonzero(~pos.has_moves())
    if len(missing):
        raise TunerError(f"{pos.labels[missing[0]]}: no played move (a position file's line that names none)"
                         + (f" ({len(missing) - 1} more such positions)" if len(missing) > 1 else ""))
    idx = move_indices(pos.boards, pos.played)
    bad = np.flatnonzero(idx < 0)
    if len(bad):
        raise TunerError(f"{pos.labels[bad[0]]}: the played move is not legal in this position"
                         + (f" ({len(bad) - 1} more such positions)" if len(bad) > 1 else ""))
    return idx


def played_indices(pos: Positions) -> np.ndarray:
    """:func:`check_played` over the positions that have a played move; -1 for the others."""
    has = pos.has_moves()
    index = np.full(len(pos), -1, dtype=np.int64)
    if has.any():
        index[has] = check_played(pos.subset(np.flatnonzero(has)))
    return index


def concatenate(parts: list[Positions]) -> Positions:
    """One :class:`Positions` of ``parts`` in order (their labels stay lazy where they were)."""
    if len(parts) == 1:
        return parts[0]
    labels = parts[0].labels
    lazy = [p.labels for p in parts if isinstance(p.labels, RowLabels)]
    if len(lazy) == len(parts):
        labels = RowLabels(lazy[0].source, np.concatenate([r.game_ids for r in lazy]),
                           np.concatenate([r.plies for r in lazy]))
    else:
        labels = [label for p in parts for label in p.labels]

    def joined(name: str) -> np.ndarray | None:
        arrays = [getattr(p, name) for p in parts]
        if all(a is None for a in arrays):
            return None
        return np.concatenate([np.full(len(p), np.nan) if a is None else a for p, a in zip(parts, arrays)])

    return Positions(np.concatenate([p.boards for p in parts]), np.concatenate([p.played for p in parts]),
                     np.concatenate([p.game_ids for p in parts]), labels, joined("results"), joined("scores"))


def no_positions() -> Positions:
    """Positions of none (an empty split, a chunk with no row kept)."""
    return Positions(np.zeros((0, BOARD_WORDS), np.uint64), np.zeros(0, np.int32), np.zeros(0, np.int64), [],
                     np.zeros(0), None)


__all__ = ["NO_PLAYED_MOVE", "Positions", "RowLabels", "check_played", "concatenate", "from_boards", "no_positions",
           "played_indices", "take_labels"]
