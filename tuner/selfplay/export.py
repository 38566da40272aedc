"""A position set with search scores as the text formats engine authors exchange.

* ``bullet``: ``FEN | score | result``, one position a line: the score in centipawns and the
  result (``1.0``, ``0.5``, ``0.0``) both from White's view (the text format of the bullet
  trainer, and the shape of Stockfish's and nnue-pytorch's plain data);
* ``epd``: ``pieces side castling ep hmvc N; fmvn N; bm SAN; ce N; c9 "RESULT";`` with ``ce``
  the score from the side to move's view (the EPD standard's convention) and ``c9`` the game's
  result (as the zurichess quiet-labeled set has it).

A mate in n moves (stored as ``+-(MATE_CP + n)``, :mod:`tuner.selfplay.game`) is written as
``+-(MATE_TEXT - n)``, inside the 16-bit range the trainers read. ``tuner ingest`` reads both
formats back (:mod:`tuner.ingest.positions`): the same positions, scores and results.
"""

from __future__ import annotations

from pathlib import Path

import chess
import polars as pl

from search.params.weights import atomic_write_text
from tuner.errors import TunerError
from tuner.ingest.reader import read_manifest, read_split
from tuner.ingest.schema import SPLITS
from tuner.outputs import check_output
from tuner.progress import progress_bar
from tuner.arena.match import MATE_CP

#: the export formats and the file suffix each is told by
FORMATS = {"bullet": ".txt", "epd": ".epd"}
#: a mate in n moves is written as +-(MATE_TEXT - n) centipawns
MATE_TEXT = 32_000
_RESULT_NUMBER = {"1-0": "1.0", "1/2-1/2": "0.5", "0-1": "0.0"}


def format_of(path: Path, given: str | None) -> str:
    """The format named, or the one the file's suffix tells (``.epd``: EPD, else bullet)."""
    if given is not None:
        if given not in FORMATS:
            raise TunerError(f"unknown export format {given!r} (known: {', '.join(FORMATS)})")
        return given
    return "epd" if path.suffix.lower() == ".epd" else "bullet"


def text_cp(cp: int) -> int:
    """A stored score (White's view, centipawns, mates as ``+-(MATE_CP + n)``) as written."""
    if abs(cp) > MATE_CP:
        n = abs(cp) - MATE_CP
        return (MATE_TEXT - min(n, 1000)) * (1 if cp > 0 else -1)
    return max(-MATE_TEXT + 1000, min(MATE_TEXT - 1000, cp))


def _lines(rows: pl.DataFrame, fmt: str, progress: bool | None) -> list[str]:
    out: list[str] = []
    it = zip(rows["fen"].to_list(), rows["score"].to_list(), rows["result"].to_list(), rows["move"].to_list(),
             rows["stm"].to_list(), strict=True)
    for fen, score, result, move, stm in progress_bar(it, total=rows.height, unit="pos", desc="export",
                                                      disable=progress is False):
        if score is None or result not in _RESULT_NUMBER:
            continue
        cp = text_cp(int(score))
        if fmt == "bullet":
            out.append(f"{fen} | {cp} | {_RESULT_NUMBER[result]}")
            continue
        board = chess.Board(fen)
        fields = fen.split()
        ops = [f"hmvc {fields[4]}", f"fmvn {fields[5]}"]
        if move is not None:
            ops.append(f"bm {board.san(chess.Move.from_uci(move))}")
        ops += [f"ce {cp if stm == 0 else -cp}", f'c9 "{result}"']
        out.append(" ".join(fields[:4]) + " " + "; ".join(ops) + ";")
    return out


def export_positions(folder: str | Path, path: str | Path, *, fmt: str | None = None, overwrite: bool = False,
                     progress: bool | None = None, allow_empty: bool = True) -> int:
    """Write every scored position of finished games in the position set ``folder`` (all splits,
    in game order) to ``path`` in ``fmt`` (default by suffix); return the lines written. An
    existing ``path`` is refused unless ``overwrite`` (:func:`tuner.outputs.check_output`); the
    file is written atomically. Without ``allow_empty``, a set without such a position writes
    nothing (an existing ``path`` stays as it was) and returns 0."""
    folder, path = Path(folder), Path(path)
    fmt = format_of(path, fmt)
    check_output(path, overwrite=overwrite, flag="--export")
    read_manifest(folder)
    frames = [read_split(folder, name, ["game_id", "ply", "fen", "move", "stm", "score", "result"])
              for name in SPLITS]
    rows = pl.concat(frames).sort(["game_id", "ply"])
    lines = _lines(rows, fmt, progress)
    if not lines and not allow_empty:
        return 0
    try:
        atomic_write_text(path, "".join(line + "\n" for line in lines))
    except OSError as exc:
        raise TunerError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return len(lines)


__all__ = ["FORMATS", "MATE_TEXT", "export_positions", "format_of", "text_cp"]
