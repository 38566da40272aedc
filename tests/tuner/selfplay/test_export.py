"""tuner.selfplay.export: the bullet and EPD texts of a self-play set, read back by tuner ingest."""

from __future__ import annotations

from pathlib import Path

import chess
import polars as pl
import pytest

from search.evaluation.evaluators import load_evaluator
from tuner.arena.match import DEFAULT_OPENINGS, load_openings
from tuner.errors import TunerError
from tuner.ingest import IngestConfig, ingest
from tuner.ingest.reader import read_split
from tuner.ingest.schema import SPLITS
from tuner.selfplay import SelfplayConfig, export_positions, selfplay
from tuner.selfplay.export import MATE_TEXT, format_of, text_cp
from tuner.arena.match import MATE_CP


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spx") / "set"
    cfg = SelfplayConfig(games=3, workers=1, nodes=300, max_plies=40, start_nodes=200)
    selfplay(load_evaluator("gm"), "gm", None, out, cfg, load_openings(DEFAULT_OPENINGS), "openings.epd",
             progress=False)
    return out


def _all(folder: Path) -> pl.DataFrame:
    return pl.concat([read_split(folder, s) for s in SPLITS])


@pytest.mark.parametrize("suffix", [".txt", ".epd"])
def test_ingest_reads_an_export_back_with_the_same_positions_scores_and_results(played: Path, tmp_path: Path,
                                                                               suffix: str) -> None:
    path = tmp_path / f"positions{suffix}"
    n = export_positions(played, path)
    rows = _all(played)
    assert n == rows.height
    back = tmp_path / "back"
    ingest([path], back, IngestConfig(skip_single_legal=False, dedup=False), workers=1, progress=False)
    again = _all(back)
    key = ["fen"]
    # mates come back as written (+-(MATE_TEXT - n)), every other score as it was
    want = rows.select("fen", pl.col("score").map_elements(text_cp, return_dtype=pl.Int32), "result").sort(key)
    got = again.select("fen", "score", "result").sort(key)
    assert got.equals(want)
    if suffix == ".epd":  # the best move travels too, as SAN read back to UCI
        assert again.select("fen", "move").sort(key).equals(rows.select("fen", "move").sort(key))


def test_an_epd_line_says_bm_ce_from_the_mover_and_c9(played: Path, tmp_path: Path) -> None:
    path = tmp_path / "p.epd"
    export_positions(played, path)
    rows = _all(played).sort(["game_id", "ply"])
    first = path.read_text().splitlines()[0]
    fen, move, score, stm, result = (rows[c][0] for c in ("fen", "move", "score", "stm", "result"))
    board = chess.Board(fen)
    assert first.startswith(" ".join(fen.split()[:4]) + " ")
    assert f"bm {board.san(chess.Move.from_uci(move))};" in first
    assert f"ce {score if stm == 0 else -score};" in first and f'c9 "{result}";' in first


def test_existing_files_are_refused_without_overwrite(played: Path, tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("keep me\n")
    with pytest.raises(TunerError, match="exists"):
        export_positions(played, path)
    assert path.read_text() == "keep me\n"
    export_positions(played, path, overwrite=True)
    assert " | " in path.read_text().splitlines()[0]


def test_mates_fit_sixteen_bits_and_formats_follow_the_suffix() -> None:
    assert text_cp(MATE_CP + 3) == MATE_TEXT - 3 and text_cp(-MATE_CP - 1) == -(MATE_TEXT - 1)
    assert text_cp(45) == 45 and abs(text_cp(40_000)) < MATE_TEXT - 999
    assert format_of(Path("a.EPD"), None) == "epd" and format_of(Path("a.txt"), None) == "bullet"
    with pytest.raises(TunerError, match="unknown export format"):
        format_of(Path("a.txt"), "csv")
