"""tuner.ingest.merge: several position sets as one (tuner merge)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from tuner.cli import main
from tuner.errors import TunerError
from tuner.ingest.merge import merge_sets
from tuner.ingest.reader import read_manifest, read_split
from tuner.ingest.schema import SPLITS

#: positions from the shipped sample's first game, as a bullet file (FEN | score | result)
BULLET = """\
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 | 30 | 1-0
rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 | 25 | 1-0
rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2 | 28 | 1/2-1/2
r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3 | 20 | 0-1
"""


@pytest.fixture(scope="module")
def bullet_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bullet")
    (folder / "scores.txt").write_text(BULLET * 20, encoding="utf-8")
    out = folder / "set"
    assert main(["ingest", str(folder / "scores.txt"), "--out", str(out), "--no-progress"]) == 0
    return out


def frames(folder: Path) -> dict[str, pl.DataFrame]:
    return {split: read_split(folder, split) for split in SPLITS}


def test_merge_keeps_every_row_in_its_split_and_renumbers_games(sample_set: Path, bullet_set: Path,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "merged"
    manifest = merge_sets([sample_set, bullet_set], out, progress=False)
    a, b, merged = frames(sample_set), frames(bullet_set), frames(out)
    offset = 1 + max(int(f["game_id"].max()) for f in a.values() if f.height)
    for split in SPLITS:
        want = pl.concat([a[split], b[split].with_columns(pl.col("game_id") + offset)]).sort("game_id", "ply")
        assert merged[split].equals(want), split
        assert manifest["splits"][split]["positions"] == want.height
        assert manifest["splits"][split]["games"] == want["game_id"].n_unique()
    assert [i["game_id_offset"] for i in manifest["inputs"]] == [0, offset]
    assert manifest["positions"]["kept"] == sum(f.height for f in merged.values())
    assert manifest["positions"]["dropped_by_reason"] == {"duplicate": 0, "illegal_move": 0}
    assert read_manifest(out) == manifest
    # the merged set is a position set like any other: a scores-only set and a games set in one
    assert merged["train"]["score"].null_count() == a["train"].height
    assert merged["train"]["move"].null_count() == b["train"].height


def test_merge_drops_repeats_of_earlier_sets_unless_told(sample_set: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(sample_set, copy)
    same = merge_sets([sample_set, copy], tmp_path / "same", progress=False)
    a = frames(sample_set)
    assert all(frames(tmp_path / "same")[s].equals(a[s]) for s in SPLITS)
    total = sum(f.height for f in a.values())
    assert same["positions"] == {"read": 2 * total, "dropped_by_reason": {"duplicate": total, "illegal_move": 0},
                                 "kept": total,
                                 **{s: a[s].height for s in SPLITS}}
    both = merge_sets([sample_set, copy], tmp_path / "both", dedup=False, progress=False)
    assert both["positions"]["kept"] == 2 * total
    merged = frames(tmp_path / "both")
    offset = both["inputs"][1]["game_id_offset"]
    for split in SPLITS:
        second = merged[split].filter(pl.col("game_id") >= offset)
        assert second.equals(a[split].with_columns(pl.col("game_id") + offset)), split


def test_merge_command_prints_one_line_and_refuses_bad_input(sample_set: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(sample_set, copy)
    out = tmp_path / "out"
    assert main(["merge", str(sample_set), str(copy), "--out", str(out), "--no-progress"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("merge: 2 sets,") and "kept" in line and "\n" not in line
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(TunerError, match="at least two"):
        merge_sets([sample_set], tmp_path / "one")
    with pytest.raises(TunerError, match="given twice"):
        merge_sets([sample_set, sample_set], tmp_path / "twice")
    with pytest.raises(TunerError, match="also the output"):
        merge_sets([sample_set, out], out)
    with pytest.raises(TunerError, match="holds a position set already; pass --overwrite"):  # issue 58 item 2
        merge_sets([sample_set, copy], out)
    with pytest.raises(TunerError, match="no such position-set folder"):
        merge_sets([sample_set, tmp_path / "nowhere"], tmp_path / "x")
    broken = tmp_path / "broken"
    shutil.copytree(sample_set, broken)
    (broken / "validation.parquet").write_bytes(b"not parquet")
    with pytest.raises(TunerError, match=r"validation\.parquet"):
        merge_sets([sample_set, broken], out, overwrite=True)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # left as it was
    assert not list(tmp_path.glob(".out.partial-*"))
    rc = main(["merge", str(sample_set), str(tmp_path / "nowhere"), "--out", str(tmp_path / "y")])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and err.count("\n") == 0 and "nowhere" in err
    json.loads((out / "manifest.json").read_text())


def test_merge_drops_rows_whose_move_is_illegal_and_says_how_many(sample_set: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """issue 58 item 17: an illegal-move row (an edited set) was copied into the merged set (exit
    0; tune refused the set later). It is dropped, counted in the manifest and the printed line."""
    import chess  # noqa: PLC0415

    edited = tmp_path / "edited"
    shutil.copytree(sample_set, edited)
    train = read_split(edited, "train")
    moves = train["move"].to_list()
    bad_rows = [3, 10]
    for i in bad_rows:
        assert not chess.Board(train["fen"][i]).is_legal(chess.Move.from_uci("a1h8"))
        moves[i] = "a1h8"
    moves[20] = "zz"  # not a move at all
    train.with_columns(pl.Series("move", moves, dtype=pl.Utf8())).write_parquet(edited / "train.parquet")
    out = tmp_path / "merged"
    assert main(["merge", str(sample_set), str(edited), "--out", str(out), "--no-dedup", "--no-progress"]) == 0
    line = capsys.readouterr().out
    assert "3 with an illegal move dropped" in line
    manifest = read_manifest(out)
    total = sum(f.height for f in frames(sample_set).values())
    assert manifest["positions"]["dropped_by_reason"] == {"duplicate": 0, "illegal_move": 3}
    assert manifest["positions"]["kept"] == 2 * total - 3
    for frame in frames(out).values():  # every row kept has a legal move
        for fen, move in zip(frame["fen"].to_list(), frame["move"].to_list(), strict=True):
            assert move is None or chess.Board(fen).is_legal(chess.Move.from_uci(move))


def test_mirror_adds_each_training_position_without_castling_rights_mirrored(sample_set: Path,
                                                                             tmp_path: Path) -> None:
    import chess  # noqa: PLC0415
    import chess.polyglot  # noqa: PLC0415

    from tuner.ingest.merge import mirror_rows  # noqa: PLC0415

    manifest = merge_sets([sample_set], tmp_path / "m", mirror=True, progress=False)
    a, merged = frames(sample_set), frames(tmp_path / "m")
    assert merged["validation"].equals(a["validation"]) and merged["test"].equals(a["test"])
    no_castling = a["train"].filter(pl.col("fen").str.split(" ").list.get(2) == "-")
    added = merged["train"].filter(pl.col("game_id") >= manifest["positions"]["mirror_game_id_offset"])
    assert 0 < added.height <= no_castling.height == manifest["positions"]["mirrored"]
    assert merged["train"].height == a["train"].height + added.height
    assert manifest["config"]["mirror"] is True
    for row, orig in zip(mirror_rows(no_castling).iter_rows(named=True), no_castling.iter_rows(named=True),
                         strict=True):
        board, mirrored = chess.Board(orig["fen"]), chess.Board(row["fen"])
        assert mirrored.transform(chess.flip_horizontal).fen() == board.fen()  # its own inverse
        assert mirrored.turn == board.turn and mirrored.piece_map().keys() == {s ^ 7 for s in board.piece_map()}
        assert row["zobrist"] == chess.polyglot.zobrist_hash(mirrored)
        assert row["n_legal"] == mirrored.legal_moves.count() == orig["n_legal"]
        move, played = chess.Move.from_uci(row["move"]), chess.Move.from_uci(orig["move"])
        assert move in mirrored.legal_moves
        assert mirrored.is_capture(move) == board.is_capture(played) and mirrored.gives_check(move) == board.gives_check(played)
        for name in ("game_id", "ply", "stm", "result", "score"):
            assert row[name] == orig[name]
    with pytest.raises(TunerError, match="at least two"):
        merge_sets([sample_set], tmp_path / "one")


def test_merge_writes_the_same_set_whatever_the_workers(sample_set: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small chunks (their results must come back in order), an input with illegal rows
    (dropped, and never mirrored) and mirrors (held on disk until every input is in): one
    worker and two write the same files, and both equal the rows computed here one by one."""
    import chess  # noqa: PLC0415

    import tuner.ingest.merge as merge_module  # noqa: PLC0415

    monkeypatch.setattr(merge_module, "CHUNK_ROWS", 97)
    edited = tmp_path / "edited"
    shutil.copytree(sample_set, edited)
    train = read_split(edited, "train")
    no_castling = [i for i, fen in enumerate(train["fen"].to_list()) if fen.split(" ")[2] == "-"]
    moves = train["move"].to_list()
    for i in no_castling[:3]:
        moves[i] = "a1a1"  # never legal
    train.with_columns(pl.Series("move", moves, dtype=pl.Utf8())).write_parquet(edited / "train.parquet")
    made = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        manifest = merge_sets([sample_set, edited], out, mirror=True, dedup=False, progress=False, workers=workers)
        assert sorted(p.name for p in out.iterdir()) == sorted(["manifest.json", *(f"{s}.parquet" for s in SPLITS)])
        made[workers] = ({name: (out / name).read_bytes() for name in (f"{s}.parquet" for s in SPLITS)},
                         {k: v for k, v in manifest.items() if k != "elapsed_seconds"})
    assert made[1] == made[2]
    manifest = made[1][1]
    assert manifest["positions"]["dropped_by_reason"]["illegal_move"] == 3
    # the rows, one by one: each input's legal rows, then each input's mirrors of them
    a, b = read_split(sample_set, "train"), read_split(edited, "train")
    legal_b = b.filter(pl.Series([i not in no_castling[:3] for i in range(b.height)]))
    offset_b = manifest["inputs"][1]["game_id_offset"]
    mirror_offset = manifest["positions"]["mirror_game_id_offset"]
    want = pl.concat([a, legal_b.with_columns(pl.col("game_id") + offset_b),
                      merge_module.mirror_rows(a).with_columns(pl.col("game_id") + mirror_offset),
                      merge_module.mirror_rows(legal_b).with_columns(pl.col("game_id") + mirror_offset + offset_b)])
    got = read_split(tmp_path / "w1", "train")
    assert got.sort("game_id", "ply", "fen").equals(want.sort("game_id", "ply", "fen"))
    assert manifest["positions"]["mirrored"] == want.height - a.height - legal_b.height
    for fen, move in zip(got["fen"].to_list(), got["move"].to_list(), strict=True):
        assert move is None or chess.Board(fen).is_legal(chess.Move.from_uci(move))
