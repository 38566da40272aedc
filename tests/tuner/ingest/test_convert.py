"""tuner.ingest.convert and ``tuner convert``: a position set, a Parquet split and bullet text
to and from compact records, round trips on the shipped sample games' positions; every
method reads a compact set as the Parquet one; refusals in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import chess
import numpy as np
import polars as pl
import pytest

from tuner.cli import main
from tuner.errors import TunerError
from tuner.ingest import compact as C
from tuner.ingest.compact_file import HEADER, CompactFile
from tuner.ingest.convert import (bullet_to_compact, compact_to_bullet, compact_to_parquet, convert, parquet_to_compact,
                                  set_format)
from tuner.ingest.merge import merge_sets
from tuner.ingest.reader import read_manifest, read_split, split_path
from tuner.ingest.schema import SCHEMA, SPLITS
from tuner.training.position_set import load_positions, position_rows

#: the columns a record keeps (the others read back null)
STORED = list(C.STORED)


@pytest.fixture(scope="module")
def scored_set(sample_set: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample set with search-like scores (some null, two mates) and every result, `*` too
    (a Parquet set as self-play writes them)."""
    out = tmp_path_factory.mktemp("scored") / "set"
    shutil.copytree(sample_set, out)
    for split in SPLITS:
        frame = read_split(sample_set, split)
        n = frame.height
        idx = np.arange(n)
        scores = pl.Series("score", (idx * 37) % 2001 - 1000, dtype=pl.Int32())
        scores = scores.scatter(idx[idx % 9 == 0], None)
        if n > 3:
            scores = scores.scatter([1, 2], [C.MATE_CP + 4, -(C.MATE_CP + 1)])
        results = pl.Series("result", [C.RESULTS[g % 4] for g in frame["game_id"].to_list()], dtype=pl.Utf8())
        frame.with_columns(scores, results).write_parquet(out / f"{split}.parquet")
    return out


@pytest.fixture(scope="module")
def compact_set(scored_set: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("compact") / "set"
    summary = convert(scored_set, out)
    assert summary["to"] == "set (compact)"
    return out


def test_a_set_converts_to_compact_and_back_with_the_same_rows(scored_set: Path, compact_set: Path,
                                                                tmp_path: Path) -> None:
    assert set_format(compact_set) == "compact" and set_format(scored_set) == "parquet"
    assert sorted(p.name for p in compact_set.iterdir()) == ["manifest.json", "test.mtpos", "train.mtpos",
                                                             "validation.mtpos"]
    manifest = read_manifest(compact_set)
    assert manifest["converted"]["format"] == "compact"
    back = tmp_path / "back"
    convert(compact_set, back)
    assert set_format(back) == "parquet"
    for split in SPLITS:
        parquet = read_split(scored_set, split)
        compact = read_split(compact_set, split)
        assert compact.schema == pl.Schema(SCHEMA)
        assert compact.select(STORED).equals(parquet.select(STORED)), split
        assert parquet["result"].n_unique() == 4 or split != "train"
        for column in set(SCHEMA) - set(STORED):
            assert compact[column].null_count() == compact.height
        assert read_split(back, split).equals(compact)
        assert manifest["splits"][split]["positions"] == parquet.height
    size = sum(split_path(compact_set, s).stat().st_size for s in SPLITS)
    rows = sum(read_split(compact_set, s, ["ply"]).height for s in SPLITS)
    assert size < 40 * rows + 3 * 200  # 40 bytes a position, plus a header, index and trailer per file


def test_every_method_reads_the_compact_set_as_the_parquet_one(scored_set: Path, compact_set: Path) -> None:
    for split in ("train", "validation"):
        a, b = load_positions(scored_set, split, progress=False), load_positions(compact_set, split, progress=False)
        assert np.array_equal(a.boards, b.boards) and np.array_equal(a.played, b.played)
        assert np.array_equal(a.game_ids, b.game_ids)
        assert a.results is not None and b.results is not None and a.scores is not None and b.scores is not None
        assert np.array_equal(a.results, b.results, equal_nan=True)
        assert np.array_equal(a.scores, b.scores, equal_nan=True)
    rows_a = position_rows(scored_set, "train", limit=300, seed=5)
    rows_b = position_rows(compact_set, "train", limit=300, seed=5)
    assert np.array_equal(rows_a.rows, rows_b.rows)
    assert rows_b.path.suffix == ".mtpos" and rows_b.problem() is None
    assert np.array_equal(rows_a.read().boards, rows_b.read().boards)
    frame = read_split(compact_set, "train", ["move", "fen"], rows=rows_b.rows)
    assert frame.equals(read_split(scored_set, "train", ["move", "fen"], rows=rows_a.rows))


def test_a_compact_set_merges_as_its_parquet_one(scored_set: Path, compact_set: Path, tmp_path: Path) -> None:
    merge_sets([scored_set, compact_set], tmp_path / "a", progress=False, dedup=False)
    merge_sets([compact_set, scored_set], tmp_path / "b", progress=False, dedup=False)
    for split in SPLITS:
        a, b = read_split(tmp_path / "a", split, STORED), read_split(tmp_path / "b", split, STORED)
        assert a.equals(b)


def test_a_parquet_split_converts_to_a_compact_file_and_back(scored_set: Path, tmp_path: Path) -> None:
    src = scored_set / "train.parquet"
    n = parquet_to_compact(src, tmp_path / "t.mtpos")
    assert n == pl.read_parquet(src).height == len(CompactFile(tmp_path / "t.mtpos"))
    compact_to_parquet(tmp_path / "t.mtpos", tmp_path / "t.parquet")
    assert pl.read_parquet(tmp_path / "t.parquet").select(STORED).equals(pl.read_parquet(src).select(STORED))


def test_bullet_text_converts_to_compact_and_back_line_for_line(compact_set: Path, tmp_path: Path) -> None:
    written, skipped = compact_to_bullet(compact_set / "train.mtpos", tmp_path / "a.txt")
    frame = read_split(compact_set, "train")
    keep = frame.filter(pl.col("score").is_not_null() & (pl.col("result") != "*"))
    assert (written, skipped) == (keep.height, frame.height - keep.height)
    text = (tmp_path / "a.txt").read_text()
    first = keep.row(0, named=True)
    points = {"1-0": "1.0", "0-1": "0.0", "1/2-1/2": "0.5"}
    assert text.splitlines()[0] == f"{first['fen']} | {first['score']} | {points[first['result']]}"
    assert bullet_to_compact(tmp_path / "a.txt", tmp_path / "a.mtpos") == written
    compact_to_bullet(tmp_path / "a.mtpos", tmp_path / "b.txt")
    assert (tmp_path / "b.txt").read_text() == text
    again = C.frame_of(CompactFile(tmp_path / "a.mtpos").read())
    assert again["fen"].equals(keep["fen"]) and again["result"].equals(keep["result"])
    assert again["score"].equals(keep["score"])  # mates too: +-(32000 - n) in the text
    boards = [chess.Board(f) for f in keep["fen"].to_list()]
    assert again["ply"].to_list() == [2 * (b.fullmove_number - 1) + (b.turn == chess.BLACK) for b in boards]
    assert again["game_id"].to_list() == list(range(keep.height))
    assert again["move"].null_count() == keep.height


def test_bullet_fens_are_checked_and_kept_as_python_chess_writes_them(tmp_path: Path) -> None:
    # the sample's first game after 1. e4 e5 2. Nf3 (an en-passant square no pawn can take, four fields)
    (tmp_path / "x.txt").write_text("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq e3 | -31999 | 0\n\n"
                                    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 | 35 | 1/2-1/2\n")
    bullet_to_compact(tmp_path / "x.txt", tmp_path / "x.mtpos")
    frame = C.frame_of(CompactFile(tmp_path / "x.mtpos").read())
    assert frame["fen"].to_list() == ["rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 0 1",
                                      "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1"]
    assert frame["score"].to_list() == [-(C.MATE_CP + 1), 35] and frame["result"].to_list() == ["0-1", "1/2-1/2"]
    assert frame["ply"].to_list() == [1, 0]


@pytest.mark.parametrize(("line", "message"), [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 12", "not a bullet line"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 1.5 | 0.5", "score '1.5' is not an integer"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 12 | 0.7", "result '0.7' is not"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 32000 | 1.0", "score 32000 does not fit"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKKNR w KQkq - 0 1 | 0 | 1.0", "impossible position"),
])
def test_a_bad_bullet_line_is_refused_naming_it(line: str, message: str, tmp_path: Path) -> None:
    good = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 0 | 0.5\n"
    (tmp_path / "x.txt").write_text(good + good + line + "\n")
    with pytest.raises(TunerError, match=rf"^{tmp_path / 'x.txt'}:3: .*{message}"):
        bullet_to_compact(tmp_path / "x.txt", tmp_path / "x.mtpos")
    assert not (tmp_path / "x.mtpos").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]


def test_the_command_converts_and_prints_a_json_summary(scored_set: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c"
    assert main(["convert", str(scored_set), str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["from"] == "set" and summary["to"] == "set (compact)"
    assert summary["positions"] == sum(read_split(scored_set, s, ["ply"]).height for s in SPLITS)
    assert main(["convert", str(scored_set), str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"tuner convert: error: {out}: holds a position set already; pass --overwrite to replace it (or " \
                  "choose another output folder)\n"
    assert main(["convert", str(scored_set), str(out), "--overwrite", "--to", "parquet"]) == 0
    assert "set (parquet)" in capsys.readouterr().out and set_format(out) == "parquet"
    assert not (out / "train.mtpos").exists()  # the old format's splits are gone
    txt = tmp_path / "all.txt"
    assert main(["convert", str(scored_set), str(txt)]) == 0
    assert "bullet" in capsys.readouterr().out and txt.read_text().count("\n") > 100
    assert main(["convert", str(txt), str(txt)]) == 2
    assert "names an input of the command" in capsys.readouterr().err
    assert main(["convert", str(txt), str(tmp_path / "x.parquet")]) == 2
    assert "cannot convert a bullet file to parquet" in capsys.readouterr().err


def test_a_corrupted_compact_split_is_one_line_naming_the_chunk(compact_set: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(compact_set, broken)
    path = broken / "train.mtpos"
    data = bytearray(path.read_bytes())
    data[HEADER.itemsize + 100] ^= 0xFF
    path.write_bytes(bytes(data))
    assert main(["convert", str(broken), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"tuner convert: error: {path}: chunk 0 (records 0 to ") and "fails its checksum" in err
    path.write_bytes(bytes(data[:len(data) // 2]))
    with pytest.raises(TunerError, match=rf"^{path}: truncated or unfinished: no index at its end"):
        read_split(broken, "train")
    assert not (tmp_path / "out").exists()


def test_a_chess960_row_reads_as_a_frame_but_training_refuses_it(compact_set: Path, tmp_path: Path) -> None:
    odd = tmp_path / "odd"
    shutil.copytree(compact_set, odd)
    records = CompactFile(odd / "train.mtpos").read()[:5].copy()
    board = chess.Board.from_chess960_pos(100)  # queen, bishops, knights, rooks on e/h, king on g
    move = next(iter(board.legal_moves))
    records[4] = C.record_of_board(board, move=move, result="1-0", ply=0, game_id=int(records["game_id"][3]) + 1)[0]
    from tuner.ingest.compact_file import write_compact

    write_compact(odd / "train.mtpos", records)
    frame = read_split(odd, "train")
    assert frame["fen"][4] == board.fen() and frame["n_legal"][4] == board.legal_moves.count()
    with pytest.raises(TunerError, match=rf"^{odd / 'train.mtpos'}: game \d+ ply 0: a Chess960 castling right"):
        load_positions(odd, "train", progress=False)


def test_ingest_and_merge_write_compact_sets_with_format(sample_set: Path, scored_set: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ingested"
    assert main(["ingest", "--sample", "--out", str(out), "--no-progress", "--format", "compact"]) == 0
    assert set_format(out) == "compact" and not list(out.glob("*.parquet"))
    assert read_manifest(out)["splits"]["train"]["file"] == "train.mtpos"
    for split in SPLITS:
        assert read_split(out, split, STORED).equals(read_split(sample_set, split, STORED))
    merged = tmp_path / "merged"
    assert main(["merge", str(scored_set), str(out), "--out", str(merged), "--format", "compact", "--no-progress"]) == 0
    assert set_format(merged) == "compact"
    merge_sets([scored_set, sample_set], tmp_path / "want", progress=False)
    for split in SPLITS:
        assert read_split(merged, split, STORED).equals(read_split(tmp_path / "want", split, STORED))
    capsys.readouterr()
    # a set whose rows do not fit a record is refused naming the row, and nothing is written
    big = tmp_path / "big"
    shutil.copytree(scored_set, big)
    frame = read_split(big, "train")
    frame.with_columns(pl.Series("score", [C.MAX_CP + 5] * frame.height, dtype=pl.Int32())).write_parquet(
        big / "train.parquet")
    assert main(["merge", str(big), "--mirror", "--out", str(tmp_path / "m2"), "--format", "compact",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tuner merge: error: {tmp_path / 'm2'} (train split): row 0 (game ")
    assert f"score {C.MAX_CP + 5} does not fit a compact record" in err and not (tmp_path / "m2").exists()


def test_a_set_without_scores_writes_no_empty_bullet_file(sample_set: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A set ingested from games has no scores: converting it to bullet text wrote an empty file
    and said "0 positions"; now it is refused, saying why, and nothing is written."""
    from tuner.cli import main

    out = tmp_path / "set.txt"
    assert main(["convert", str(sample_set), str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tuner convert: error: {sample_set}: none of its ") and "has both a score" in err
    assert not out.exists()


def test_a_refused_bullet_conversion_leaves_an_existing_out_with_overwrite_as_it_was(
        sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Probe finding (issue 58 re-run): with --overwrite, the refusal above had replaced the
    existing OUT with an empty file and then removed it (through a link: the link)."""
    from tuner.cli import main

    mine = tmp_path / "mine.txt"
    mine.write_text("my lines\n")
    link = tmp_path / "link.txt"
    link.symlink_to(mine)
    for out in (mine, link):
        assert main(["convert", str(sample_set), str(out), "--overwrite"]) == 2
        assert "has both a score" in capsys.readouterr().err
        assert out.read_text() == "my lines\n"
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "mine.txt"]
