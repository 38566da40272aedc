"""Position sets as the optimizers use them: boards and played moves in numpy arrays.

A position set is what ``tuner ingest`` writes (see :mod:`tuner.ingest`); this module reads
one split of it, converts the FENs to the numba core's boards (:func:`search.core.fen_batch.parse_fens`)
and the played moves to UCI keys, and checks that every played move is legal in its position.
Positions from position files may have no played move (:data:`NO_PLAYED_MOVE`).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, overload

import chess
import numpy as np

from search.tree.search_api import move_indices
from search.core.board import BOARD_WORDS, W_STM
from search.core.convert import IllegalMoveError, from_chess, uci_key
from search.core.fen_batch import parse_fens
from tuner.errors import TunerError
from tuner.progress import progress_bar

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


#: a game's result tag -> White's score (``*``: unknown)
WHITE_SCORE = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def mover_results(result_tags: list[str], stm: np.ndarray) -> np.ndarray:
    """The result from the side to move's view (float64[P]: 1, 0.5, 0; NaN for ``*`` or an
    unknown tag) from the games' result tags and the side to move (0 White, 1 Black)."""
    white = np.array([WHITE_SCORE.get(r, np.nan) for r in result_tags], dtype=np.float64)
    return np.where(np.asarray(stm) == 0, white, 1.0 - white)


def mover_scores(white_scores: Any, stm: np.ndarray) -> np.ndarray | None:
    """The scores (a polars column, White's view, nulls where none) from the side to move's view,
    float64[P] with NaN for a null; None when no row has one."""
    if white_scores.null_count() == len(white_scores):
        return None
    white = white_scores.to_numpy().astype(np.float64)  # nulls come out as NaN
    out: np.ndarray = np.where(np.asarray(stm) == 0, white, -white)
    return out


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


REQUIRED_COLUMNS = ["game_id", "ply", "fen", "move", "stm", "result", "score"]


def sample_rows(n: int, limit: int, seed: int) -> np.ndarray:
    """The row numbers (int64, sorted) that :func:`load_positions` keeps of a split of ``n``
    rows: all of them, or with ``0 < limit < n`` a seeded random sample of ``limit``."""
    if 0 < limit < n:
        return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False)).astype(np.int64)
    return np.arange(n, dtype=np.int64)


def load_positions(data_dir: str | Path, split: str, *, limit: int = 0, seed: int = 0,
                   progress: bool = True) -> Positions:
    """Read ``split`` (train, validation, test) of the position set in ``data_dir``.

    ``limit`` > 0 keeps a seeded random sample of that many positions (in their stored order,
    :func:`sample_rows`).
    """
    from tuner.ingest.reader import is_compact, read_split  # noqa: PLC0415 - keeps polars out of search-only imports

    path = _split_path(data_dir, split)
    if is_compact(path):  # the boards straight from the records, no FEN text
        return _from_records(path, lambda f: f.take(sample_rows(len(f), limit, seed)))
    frame = read_split(data_dir, split, columns=REQUIRED_COLUMNS)
    n = frame.height
    if 0 < limit < n:
        frame = frame[sample_rows(n, limit, seed)]
    return _from_frame(frame, _split_path(data_dir, split), split, progress)


def _from_records(path: Path, rows: Callable[[Any], np.ndarray]) -> Positions:
    """The positions of the rows ``rows(file)`` of the compact split ``path``
    (:func:`positions_of_records`)."""
    from tuner.ingest.compact_file import CompactFile  # noqa: PLC0415 - keeps polars out of search-only imports

    return positions_of_records(path, rows(CompactFile(path)))


def positions_of_records(path: Path, records: np.ndarray, *, check: bool = True) -> Positions:
    """The positions of records read from the compact split ``path``, built from the records'
    boards (:func:`tuner.ingest.compact.training_arrays`), every board checked possible and every
    played move legal (one-line errors naming the file, game and ply); ``check=False`` skips
    both, for records that passed them before (a stream's chunk read again)."""
    from tuner.ingest.compact import training_arrays  # noqa: PLC0415 - keeps polars out of search-only imports

    arrays = training_arrays(records, label=RowLabels(path, records["game_id"], records["ply"]).__getitem__,
                             check=check)
    labels = RowLabels(path, arrays.game_ids, arrays.plies)  # not the records' fields: those would keep the records
    odd = np.flatnonzero(~arrays.usable)
    if len(odd):
        raise TunerError(f"{labels[odd[0]]}: a Chess960 castling right, which the search's boards cannot hold "
                         f"({len(odd)} such position(s))")
    scores = None if np.isnan(arrays.scores).all() else arrays.scores
    pos = Positions(arrays.boards, arrays.played, arrays.game_ids, labels, arrays.results, scores)
    if check:
        played_indices(pos)
    return pos


def _split_path(folder: str | Path, split: str) -> Path:
    """The split's file (Parquet or compact, as the set's manifest says)."""
    from tuner.ingest.reader import split_path  # noqa: PLC0415 - keeps polars out of search-only imports

    return split_path(folder, split)


def _from_frame(frame: Any, source: Path, split: str, progress: bool, *, check_moves: bool = True) -> Positions:
    """The positions of a frame of :data:`REQUIRED_COLUMNS` read from ``source``; with
    ``check_moves``, every played move checked legal (one-line errors naming the file, game and
    ply)."""
    fens = frame["fen"].to_list()
    ucis = frame["move"].to_list()
    game_ids = frame["game_id"].to_numpy().astype(np.int64)
    labels = RowLabels(source, game_ids, frame["ply"].to_numpy())
    boards = _boards(fens, labels, progress and len(fens) >= 20000, split)
    keys = np.full(len(fens), NO_PLAYED_MOVE, dtype=np.int32)
    for i, uci in enumerate(ucis):
        if uci is None:
            continue
        try:
            keys[i] = uci_key(uci)
        except IllegalMoveError as exc:
            raise TunerError(f"{labels[i]}: {exc}") from None
    stm = frame["stm"].to_numpy()
    wrong = np.flatnonzero(boards[:, W_STM].astype(np.int64) != stm) if len(fens) else np.zeros(0, np.int64)
    if len(wrong):  # the results and scores would be read from the wrong side's view
        i = int(wrong[0])
        raise TunerError(f"{labels[i]}: column stm is {int(stm[i])} but its FEN has "
                         f"{'White' if int(boards[i, W_STM]) == 0 else 'Black'} to move ({len(wrong)} such row(s)); "
                         "rebuild the set with tuner ingest")
    results = mover_results(frame["result"].to_list(), stm)
    pos = Positions(boards, keys, game_ids, labels, results, mover_scores(frame["score"], stm))
    if check_moves:
        played_indices(pos)
    return pos


@dataclass(frozen=True)
class PositionRows:
    """Positions described rather than loaded: rows of one split's Parquet file.

    ``folder``, ``split``: the position set (an absolute path) and the split; ``rows``: int64[P], the row numbers
    (sorted, distinct) of the positions, 8 bytes each; ``file_size`` and ``file_mtime_ns``: the
    split file's size and modification time when the rows were chosen, so that whoever reads
    them (a Dask worker, perhaps on another machine) reads the same file or says it cannot.
    :meth:`read` gives the same positions as :func:`load_positions` gives for those rows.
    """

    folder: str
    split: str
    rows: np.ndarray
    file_size: int
    file_mtime_ns: int

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def path(self) -> Path:
        return _split_path(self.folder, self.split)

    def part(self, a: int, z: int) -> PositionRows:
        """The positions ``a:z`` of these (their own copy of the row numbers)."""
        return replace(self, rows=self.rows[a:z].copy())

    def problem(self) -> str | None:
        """Why this process cannot read the rows (the file missing here, or not the file they
        were chosen from), or None when it can."""
        try:
            st = os.stat(self.path)
        except OSError as exc:
            return f"{self.path}: cannot be read on {socket.gethostname()} ({exc.strerror or exc})"
        if (st.st_size, st.st_mtime_ns) != (self.file_size, self.file_mtime_ns):
            return (f"{self.path}: on {socket.gethostname()} not the file the positions were sampled from "
                    f"(size {st.st_size}, modified {st.st_mtime_ns} ns; sampled from size {self.file_size}, "
                    f"modified {self.file_mtime_ns} ns)")
        return None

    def read(self, *, progress: bool = False) -> Positions:
        """The positions of these rows, in their order; a one-line :class:`TunerError` naming the
        file if it cannot be read here (:meth:`problem`) or holds a bad position."""
        from tuner.ingest.reader import is_compact, read_split  # noqa: PLC0415 - keeps polars out of search-only imports

        problem = self.problem()
        if problem is not None:
            raise TunerError(problem)
        if is_compact(self.path):  # a compact split: the boards straight from the records
            return _from_records(self.path, lambda f: f.take(self.rows))
        frame = read_split(self.folder, self.split, columns=REQUIRED_COLUMNS, rows=self.rows)
        return _from_frame(frame, self.path, self.split, progress)


def position_rows(data_dir: str | Path, split: str, *, limit: int = 0, seed: int = 0,
                  moves_only: bool = False) -> PositionRows:
    """The rows of ``split`` that :func:`load_positions` with the same ``limit`` and ``seed``
    keeps (``moves_only``: of those, the ones with a played move), without loading them: only
    the split's ``move`` column is read (one-line errors for a missing or unreadable set)."""
    from tuner.ingest.reader import read_split  # noqa: PLC0415 - keeps polars out of search-only imports

    moves = read_split(data_dir, split, columns=["move"])["move"]
    rows = sample_rows(len(moves), limit, seed)
    if moves_only:
        rows = rows[moves.is_not_null().to_numpy()[rows]]
    folder = os.path.abspath(data_dir)  # a worker's working folder need not be this process's
    st = os.stat(_split_path(folder, split))
    return PositionRows(folder, split, rows, st.st_size, st.st_mtime_ns)


#: FENs parsed per call of the batch parser when loading
_FEN_BATCH = 50_000


def _boards(fens: list[str], labels: Sequence[str], progress: bool, split: str) -> np.ndarray:
    """The boards of a split's FENs (uint64[P, BOARD_WORDS]); a one-line error naming the first
    that is not a valid position."""
    boards = np.zeros((len(fens), BOARD_WORDS), dtype=np.uint64)
    bar = progress_bar(total=len(fens), desc=f"load {split}", unit="pos", disable=not progress, leave=False)
    for a in range(0, len(fens), _FEN_BATCH):
        part = [f.encode("ascii", "replace") for f in fens[a:a + _FEN_BATCH]]
        ends = np.cumsum([len(f) + 1 for f in part], dtype=np.int64) - 1
        batch = parse_fens(b"\n".join(part), ends - np.array([len(f) for f in part], dtype=np.int64), ends)
        bad = np.flatnonzero(~batch.ok)
        if len(bad):
            raise TunerError(f"{labels[a + bad[0]]}: {batch.errors[bad[0]]} in {fens[a + bad[0]]!r}")
        boards[a:a + len(part)] = batch.boards
        bar.update(len(part))
    bar.close()
    return boards
