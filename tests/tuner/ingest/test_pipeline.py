"""The ingest pipeline (:func:`tuner.ingest.pipeline.ingest`) on PGN input: hand-made broken PGNs
counted per reason, compressed and CRLF inputs, splits, byte-identical reruns (1 and 2 workers),
the reader's errors, and the numba replay against python-chess as the oracle."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import random
import re
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import numpy as np
import polars as pl
import pytest
import zstandard
from tests.conftest import gm_files

from search.core.convert import from_chess
from tuner.cli import main
from tuner.errors import TunerError
from tuner.ingest import SCHEMA, SPLITS, IngestConfig, ingest, read_manifest, read_split
from search.core.replay import replay

# ---------------------------------------------------------------------------------------------
# building PGN text


def playout(seed: int, plies: int = 44) -> list[str]:
    """SAN of a seeded random game of ``plies`` plies (retrying seeds until none ends early)."""
    while True:
        rng = random.Random(seed)
        board = chess.Board()
        sans: list[str] = []
        while len(sans) < plies and not board.is_game_over():
            move = rng.choice(sorted(board.legal_moves, key=lambda m: m.uci()))
            sans.append(board.san(move))
            board.push(move)
        if len(sans) == plies and not board.is_game_over():
            return sans
        seed += 1000


def movetext(sans: list[str], result: str | None, first_black: bool = False) -> str:
    out = []
    for i, san in enumerate(sans):
        if first_black:
            out.append(f"{(i + 1) // 2 + 1}." if i % 2 == 1 else ("1..." if i == 0 else ""))
        elif i % 2 == 0:
            out.append(f"{i // 2 + 1}.")
        out.append(san)
    text = " ".join(t for t in out if t)
    return text + (f" {result}" if result else "")


def game_text(n: int, sans: list[str], result: str | None = "1-0", *, tags: tuple[str, ...] = (),
              tag_result: str | None = None, white: str | None = None) -> str:
    header = [f'[Event "Test {n}"]', '[Site "Nowhere"]', '[Date "2001.02.03"]', '[Round "1"]',
              f'[White "{white or f"White {n}"}"]', f'[Black "Black {n}"]',
              f'[Result "{tag_result or result or "*"}"]', *tags]
    return "\n".join(header) + "\n\n" + movetext(sans, result) + "\n"


class PgnFile:
    """Accumulates games (with the line of their first tag) into one PGN text."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.lines: list[int] = []

    @property
    def next_line(self) -> int:
        return sum(p.count("\n") for p in self.parts) + 1

    def add(self, text: str, *, blank: bool = True) -> int:
        line = self.next_line
        self.parts.append(text + ("\n" if blank else ""))
        self.lines.append(line)
        return line

    def text(self) -> str:
        return "".join(self.parts)


def run(tmp_path: Path, files: list[Path], name: str = "out", **options: object) -> tuple[dict, str]:  # type: ignore[type-arg]
    workers = int(options.pop("workers", 1))  # type: ignore[call-overload]
    log = io.StringIO()
    manifest = ingest(files, tmp_path / name, IngestConfig(**options), workers=workers, progress=False, log=log)  # type: ignore[arg-type]
    return manifest, log.getvalue()


def all_rows(folder: Path) -> pl.DataFrame:
    return pl.concat([read_split(folder, s) for s in SPLITS]).sort(["game_id", "ply"])


def split_bytes(folder: Path) -> list[bytes]:
    return [(folder / f"{s}.parquet").read_bytes() for s in SPLITS]


# ---------------------------------------------------------------------------------------------
# broken input, counted per reason

def _illegal_king_move(sans: list[str]) -> str:
    board = chess.Board()
    for san in sans:
        board.push_san(san)
    for square in chess.SQUARE_NAMES:
        try:
            board.parse_san("K" + square)
        except chess.IllegalMoveError:
            return "K" + square
        except ValueError:
            continue
    raise AssertionError("no illegal king move found")


ILLEGAL = _illegal_king_move(playout(2, 24))
CHESS960_FEN = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
MIDGAME_FEN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int], bytes]:
    """A file with one game per kind of problem; returns its path and the line of each case."""
    f = PgnFile()
    lines: dict[str, int] = {}
    lines["preamble"] = f.add("Downloaded from a chess site; enjoy!\n")
    lines["good1"] = f.add(game_text(1, playout(1), "1-0"))
    lines["illegal"] = f.add(game_text(2, playout(2, 24) + [ILLEGAL], "0-1"))
    lines["ambiguous"] = f.add(game_text(3, ["e4", "e5", "Nf3", "Nc6", "d3", "Nf6", "Nd2"], "1-0"))
    lines["invalid"] = f.add(game_text(4, playout(4, 30) + ["Ke9"], "1/2-1/2"))
    lines["missing_result"] = f.add(game_text(5, playout(5), None), blank=False)  # next game follows at once
    lines["good2"] = f.add(game_text(6, playout(6), "0-1"))
    lines["garbage"] = f.add("This is not PGN: just some words between games.\n")
    lines["chess960"] = f.add(game_text(7, ["a4", "a5"], "*",
                                        tags=('[Variant "Chess960"]', '[SetUp "1"]', f'[FEN "{CHESS960_FEN}"]')))
    lines["setup"] = f.add(game_text(8, ["O-O", "Nxe4"], "*", tags=('[SetUp "1"]', f'[FEN "{MIDGAME_FEN}"]')))
    bad_tag = game_text(9, playout(9), "1-0").replace('[White "White 9"]', '[White "White 9]')
    lines["bad_tag"] = f.add(bad_tag)
    lines["mismatch"] = f.add(game_text(10, playout(10), "0-1", tag_result="1-0"))
    lines["short"] = f.add(game_text(11, playout(11, 10), "1/2-1/2"))
    lines["latin1"] = f.add(game_text(12, playout(12), "1-0", white="Glück"))
    lines["truncated"] = f.add(game_text(13, playout(13), None).rstrip() + " 23.", blank=False)
    data = f.text().encode("utf-8").replace("Glück".encode(), "Glück".encode("latin-1"))
    assert b"Gl\xfcck" in data
    path = tmp_path_factory.mktemp("broken") / "broken.pgn"
    path.write_bytes(data)
    lines["latin1_white"] = lines["latin1"] + 4
    lines["bad_tag_white"] = lines["bad_tag"] + 4
    lines["invalid_line"] = lines["invalid"] + 8
    return path, lines, data


EXPECTED_REJECTED = {
    "ambiguous_move": 1, "bad_tag": 1, "illegal_move": 1, "invalid_move": 1, "missing_result": 1,
    "non_standard_start": 1, "result_mismatch": 1, "too_short": 1, "truncated": 1, "variant": 1,
}


def test_broken_pgn_counts_per_reason(tmp_path: Path, broken: tuple[Path, dict[str, int], bytes]) -> None:
    path, lines, _ = broken
    manifest, log = run(tmp_path, [path])
    games = manifest["games"]
    assert games["read"] == 13
    assert games["rejected_by_reason"] == EXPECTED_REJECTED
    assert games["kept"] == 3 and games["rejected"] == 10
    problems = manifest["problems"]
    assert problems["by_reason"] == {**{k: v for k, v in EXPECTED_REJECTED.items() if k != "too_short"},
                                     "garbage": 2, "non_utf8": 1}
    assert problems["count"] == 12
    where = {(p["reason"], p["line"]) for p in problems["first"]}
    assert ("garbage", lines["preamble"]) in where
    assert ("garbage", lines["garbage"]) in where
    assert ("bad_tag", lines["bad_tag_white"]) in where
    assert ("invalid_move", lines["invalid_line"]) in where
    assert ("variant", lines["chess960"]) in where
    assert ("non_standard_start", lines["setup"]) in where
    assert ("missing_result", lines["missing_result"]) in where
    assert ("truncated", lines["truncated"]) in where
    assert ("non_utf8", lines["latin1_white"]) in where
    assert [p["line"] for p in problems["first"]] == sorted(p["line"] for p in problems["first"])
    # the first ten reported on stderr as file:line: reason
    printed = log.splitlines()
    assert printed[:10] == [f"{p['file']}:{p['line']}: {p['reason']}: {p['detail']}" for p in problems["first"][:10]]
    assert printed[0].startswith(f"{path}:{lines['preamble']}: garbage")
    assert printed[10].startswith("... 2 more problem(s)") and len(printed) == 11
    # the kept games are the good ones, the one followed by garbage and the Latin-1 one
    rows = all_rows(tmp_path / "out")
    kept = sorted(set(rows["game_id"].to_list()))
    assert kept == [0, 5, 11]
    assert rows.filter(pl.col("game_id") == 11)["white"][0] == "Glück"
    assert rows.filter(pl.col("game_id") == 5)["source_line"][0] == lines["good2"]


def test_latin1_policy_skip_rejects_the_game(tmp_path: Path, broken: tuple[Path, dict[str, int], bytes]) -> None:
    manifest, _ = run(tmp_path, [broken[0]], non_utf8="skip")
    assert manifest["games"]["rejected_by_reason"]["non_utf8"] == 1
    assert manifest["games"]["kept"] == 2


def test_illegal_and_ambiguous_are_located(tmp_path: Path, broken: tuple[Path, dict[str, int], bytes]) -> None:
    path, lines, _ = broken
    manifest, _ = run(tmp_path, [path])
    first = {p["reason"]: p for p in manifest["problems"]["first"]}
    assert first["illegal_move"]["line"] == lines["illegal"] + 8  # the move text line
    assert "ply 24" in first["illegal_move"]["detail"] and ILLEGAL in first["illegal_move"]["detail"]
    assert first["ambiguous_move"]["line"] == lines["ambiguous"] + 8
    assert "Nd2" in first["ambiguous_move"]["detail"]


# ---------------------------------------------------------------------------------------------
# the rows themselves


def good_file(tmp_path: Path, n: int = 12, name: str = "games.pgn", newline: str = "\n") -> Path:
    f = PgnFile()
    for i in range(n):
        tags = (f'[WhiteElo "{2000 + 50 * i}"]', f'[BlackElo "{"" if i % 3 == 0 else 2100 + 10 * i}"]')
        f.add(game_text(i, playout(100 + i, 40 + 2 * i), ("1-0", "0-1", "1/2-1/2")[i % 3], tags=tags))
    path = tmp_path / name
    path.write_bytes(f.text().replace("\n", newline).encode())
    return path


def test_rows_match_python_chess(tmp_path: Path) -> None:
    manifest, _ = run(tmp_path, [good_file(tmp_path)], skip_plies=0, dedup=False, skip_single_legal=False)
    rows = all_rows(tmp_path / "out")
    assert dict(rows.schema) == SCHEMA
    assert rows.height == manifest["positions"]["kept"] == sum(40 + 2 * i for i in range(12))
    handle = io.StringIO((tmp_path / "games.pgn").read_text())
    games = list(iter(lambda: chess.pgn.read_game(handle), None))
    assert len(games) == 12
    for gid, game in enumerate(games):
        board = game.board()
        sub = rows.filter(pl.col("game_id") == gid)
        assert sub["ply"].to_list() == list(range(len(sub)))
        for ply, move in enumerate(game.mainline_moves()):
            row = sub.row(ply, named=True)
            assert row["fen"] == board.fen()
            assert row["move"] == move.uci()
            assert row["zobrist"] == chess.polyglot.zobrist_hash(board)
            assert row["n_legal"] == board.legal_moves.count()
            assert row["stm"] == (0 if board.turn == chess.WHITE else 1)
            board.push(move)
        white = 2000 + 50 * gid
        black = None if gid % 3 == 0 else 2100 + 10 * gid
        assert sub["white_elo"].unique().to_list() == [white]
        assert sub["black_elo"].unique().to_list() == [black]
        assert sub["mover_elo"].to_list() == [white if s == 0 else black for s in sub["stm"].to_list()]
        assert sub["result"][0] == ("1-0", "0-1", "1/2-1/2")[gid % 3]
        assert sub["event"][0] == f"Test {gid}" and sub["source"][0] == "games.pgn"


def test_filters_drop_what_they_say(tmp_path: Path) -> None:
    path = good_file(tmp_path)
    base, _ = run(tmp_path, [path], name="base", dedup=False, skip_single_legal=False)
    plies = sum(40 + 2 * i for i in range(12))
    assert base["positions"]["dropped_by_reason"]["opening"] == 16 * 12
    assert base["positions"]["kept"] == plies - 16 * 12
    rows = all_rows(tmp_path / "base")
    assert rows["ply"].min() == 16
    # mover rating: positions of movers below 2300 or without rating are dropped
    m, _ = run(tmp_path, [path], name="elo", min_elo=2300, missing_elo="drop", dedup=False, skip_single_legal=False)
    rows = all_rows(tmp_path / "elo")
    assert rows["mover_elo"].min() >= 2300 and rows["mover_elo"].null_count() == 0
    dropped = m["positions"]["dropped_by_reason"]
    assert dropped["rating"] > 0 and dropped["missing_elo"] > 0
    assert m["games"]["rejected_by_reason"].get("rating", 0) > 0  # neither side >= 2300 in early games
    assert rows.height + dropped["rating"] + dropped["missing_elo"] + dropped["opening"] == m["positions"]["plies_in_kept_games"]
    # game length
    m, _ = run(tmp_path, [path], name="long", min_plies=50)
    assert m["games"]["rejected_by_reason"] == {"too_short": 5}


def test_dedup_drops_repeated_position_move_pairs(tmp_path: Path) -> None:
    sans = playout(7, 50)
    text = game_text(0, sans, "1-0") + "\n" + game_text(1, sans, "0-1") + "\n"
    (tmp_path / "twice.pgn").write_text(text)
    on, _ = run(tmp_path, [tmp_path / "twice.pgn"], name="on", split=(1.0, 0.0, 0.0))
    off, _ = run(tmp_path, [tmp_path / "twice.pgn"], name="off", dedup=False, split=(1.0, 0.0, 0.0))
    every = read_split(tmp_path / "off", "train")
    assert every.height == off["positions"]["kept"] == 2 * (50 - 16 - off["positions"]["dropped_by_reason"]["single_legal"] // 2)
    rows = read_split(tmp_path / "on", "train")
    assert set(rows["game_id"].to_list()) == {0}
    assert rows.height == on["positions"]["kept"] == every.select(pl.struct("zobrist", "move").n_unique()).item()
    assert on["positions"]["dropped_by_reason"]["duplicate"] == every.height - rows.height
    assert rows.select(pl.struct("zobrist", "move").is_unique().all()).item()


def test_standard_fen_setup_can_be_played_from(tmp_path: Path) -> None:
    board = chess.Board(MIDGAME_FEN)
    sans = []
    rng = random.Random(3)
    for _ in range(30):
        if board.is_game_over():
            break
        move = rng.choice(sorted(board.legal_moves, key=lambda m: m.uci()))
        sans.append(board.san(move))
        board.push(move)
    text = game_text(0, sans, "*", tags=('[SetUp "1"]', f'[FEN "{MIDGAME_FEN}"]'))
    (tmp_path / "setup.pgn").write_text(text)
    with pytest.raises(TunerError, match=r"no position kept \(1 game\(s\) read, 1 rejected; first "
                                         r"problem at line 1: non_standard_start\)"):
        run(tmp_path, [tmp_path / "setup.pgn"], name="no")  # a set of no position is not written
    assert not (tmp_path / "no").exists()
    allowed, _ = run(tmp_path, [tmp_path / "setup.pgn"], name="yes", allow_setup=True, skip_plies=0,
                     split=(1.0, 0.0, 0.0))
    rows = read_split(tmp_path / "yes", "train")
    assert rows["fen"][0] == MIDGAME_FEN and rows.height == allowed["positions"]["kept"] > 0


@pytest.mark.parametrize("counters", ["99999999999999999999 40", "0 99999999999999999999", "0 2147483648"])
def test_a_fen_tag_with_a_huge_move_counter_rejects_its_game_only(tmp_path: Path, counters: str) -> None:
    # issue 58 item 5: an OverflowError in the worker (convert.from_chess) ended the run
    fen = " ".join(MIDGAME_FEN.split()[:4] + counters.split())
    start_fen = " ".join(chess.STARTING_FEN.split()[:4] + counters.split())  # the start: no --allow-setup needed
    bad = [game_text(i, ["Nf3"], "*", tags=('[SetUp "1"]', f'[FEN "{f}"]')) for i, f in enumerate((fen, start_fen))]
    (tmp_path / "huge.pgn").write_text("".join(bad) + game_text(2, playout(5), "1-0"))
    manifest, log = run(tmp_path, [tmp_path / "huge.pgn"], allow_setup=True)
    assert manifest["games"]["read"] == 3 and manifest["games"]["kept"] == 1
    assert manifest["games"]["rejected_by_reason"] == {"bad_fen": 2}
    assert "a move counter beyond 2147483647" in log


def test_comment_lines_starting_with_a_bracket_do_not_split_a_game(tmp_path: Path) -> None:
    sans = playout(21, 40)
    body = movetext(sans, "1-0").replace(" 11. ", " {a long comment\n[%clk 0:01:00] that wraps\n} 11. ", 1)
    assert "\n[%clk" in body
    header = game_text(0, [], "1-0").split("\n\n")[0]
    (tmp_path / "c.pgn").write_text(header + "\n\n" + body + "\n")
    manifest, _ = run(tmp_path, [tmp_path / "c.pgn"])
    assert manifest["games"] == {"read": 1, "kept": 1, "rejected": 0, "rejected_by_reason": {}}


# ---------------------------------------------------------------------------------------------
# encodings, compression, determinism


def test_crlf_gives_the_same_rows_as_lf(tmp_path: Path) -> None:
    (tmp_path / "lf").mkdir()
    (tmp_path / "crlf").mkdir()
    lf = good_file(tmp_path / "lf")
    crlf = good_file(tmp_path / "crlf", newline="\r\n")
    assert b"\r\n" in crlf.read_bytes()
    run(tmp_path, [lf], name="a")
    run(tmp_path, [crlf], name="b")
    assert split_bytes(tmp_path / "a") == split_bytes(tmp_path / "b")


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".zst"])
def test_compressed_inputs_give_the_same_rows(tmp_path: Path, suffix: str) -> None:
    plain = good_file(tmp_path)
    data = plain.read_bytes()
    packed = tmp_path / f"games.pgn{suffix}"
    if suffix == ".gz":
        packed.write_bytes(gzip.compress(data))
    elif suffix == ".bz2":
        packed.write_bytes(bz2.compress(data))
    else:
        packed.write_bytes(zstandard.ZstdCompressor().compress(data))
    run(tmp_path, [plain], name="plain")
    m, _ = run(tmp_path, [packed], name="packed")
    a = all_rows(tmp_path / "plain").drop("source")
    b = all_rows(tmp_path / "packed")
    assert b["source"].unique().to_list() == [packed.name]
    assert a.equals(b.drop("source"))
    assert m["inputs"][0]["sha256"] == hashlib.sha256(packed.read_bytes()).hexdigest()
    assert m["inputs"][0]["size"] == packed.stat().st_size


def test_truncated_compressed_stream_keeps_what_was_read(tmp_path: Path) -> None:
    import zlib

    data = good_file(tmp_path).read_bytes()
    packed = gzip.compress(data)
    cut = packed[: len(packed) * 2 // 3]
    (tmp_path / "cut.pgn.gz").write_bytes(cut)
    m, log = run(tmp_path, [tmp_path / "cut.pgn.gz"])
    # what a decompressor recovers: every game that starts in it is kept, but the last,
    # cut inside its move text (after its tags), which is truncated
    prefix = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut)
    assert data.startswith(prefix) and 0 < len(prefix) < len(data)
    started = prefix.count(b"[Event ")
    assert 1 < started < 12 and prefix.rfind(b"]\n\n") > prefix.rfind(b"[Event ")
    assert m["games"]["read"] == started
    assert m["games"]["kept"] == started - 1
    assert m["games"]["rejected_by_reason"] == {"truncated": 1}
    assert m["problems"]["by_reason"] == {"corrupt_stream": 1, "truncated": 1}
    assert "corrupt_stream" in log


def test_splits_are_disjoint_by_game_and_follow_the_fractions(tmp_path: Path) -> None:
    path = good_file(tmp_path, n=40)
    m, _ = run(tmp_path, [path], split=(0.5, 0.25, 0.25), seed=7)
    ids = {s: set(read_split(tmp_path / "out", s, ["game_id"])["game_id"].to_list()) for s in SPLITS}
    assert not (ids["train"] & ids["validation"] or ids["train"] & ids["test"] or ids["validation"] & ids["test"])
    assert set().union(*ids.values()) == set(range(40))
    assert [m["splits"][s]["games"] for s in SPLITS] == [20, 10, 10]
    for s in SPLITS:
        frame = read_split(tmp_path / "out", s, ["game_id", "ply"])
        assert frame.height == m["splits"][s]["positions"] == m["positions"][s]
        assert frame.equals(frame.sort(["game_id", "ply"]))
    # the seed alone decides the assignment: the same seed again gives the same games, another
    # seed other games in the same numbers
    for name, seed in (("same", 7), ("other", 8)):
        run(tmp_path, [path], name=name, split=(0.5, 0.25, 0.25), seed=seed)
    same = {s: set(read_split(tmp_path / "same", s, ["game_id"])["game_id"].to_list()) for s in SPLITS}
    other = {s: set(read_split(tmp_path / "other", s, ["game_id"])["game_id"].to_list()) for s in SPLITS}
    assert same == ids
    assert [len(other[s]) for s in SPLITS] == [20, 10, 10] and other["test"] != ids["test"]


def test_rerun_is_byte_identical_and_one_vs_two_workers(tmp_path: Path, broken: tuple[Path, dict[str, int], bytes]) -> None:
    files = [broken[0], good_file(tmp_path, n=30)]
    first, _ = run(tmp_path, files, name="a")
    before = split_bytes(tmp_path / "a")
    # a rerun over the set is refused without --overwrite (issue 58 item 2), and replaces it with it
    with pytest.raises(TunerError, match=re.escape(f"{tmp_path / 'a'}: holds a position set already; pass "
                                                   "--overwrite to replace it")):
        run(tmp_path, [good_file(tmp_path, n=3, name="few.pgn")], name="a")
    assert split_bytes(tmp_path / "a") == before
    ingest(files, tmp_path / "a", IngestConfig(), workers=1, progress=False, log=io.StringIO(), overwrite=True)
    again = split_bytes(tmp_path / "a")
    run(tmp_path, files, name="b")
    two, _ = run(tmp_path, files, name="c", workers=2)
    assert again == split_bytes(tmp_path / "b") == split_bytes(tmp_path / "c")
    keep = ("games", "problems", "positions", "splits", "config", "inputs")
    assert {k: first[k] for k in keep} == {k: two[k] for k in keep}
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["manifest.json", "test.parquet",
                                                                 "train.parquet", "validation.parquet"]
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name or ".old-" in p.name]


# ---------------------------------------------------------------------------------------------
# errors, output folder, reader


def test_missing_file_is_a_one_line_error_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = good_file(tmp_path)
    code = main(["ingest", str(good), str(tmp_path / "nope.pgn"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().count("\n") == 0 and "nope.pgn: no such file" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_bad_compressed_file_and_bad_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fake.pgn.gz").write_bytes(b"[Event not gzip]")
    assert main(["ingest", str(tmp_path / "fake.pgn.gz"), "--out", str(tmp_path / "o")]) == 2
    assert "not a gzip file" in capsys.readouterr().err
    good = good_file(tmp_path)
    assert main(["ingest", str(good), "--out", str(tmp_path / "o"), "--split", "0.5,0.1"]) == 2
    assert "split must be three" in capsys.readouterr().err
    assert main(["ingest", str(good)]) == 2
    assert "--out DIR is required" in capsys.readouterr().err


def test_existing_folder_that_is_not_a_position_set_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(TunerError, match="not a position set"):
        ingest([good_file(tmp_path)], out, progress=False)
    assert (out / "notes.txt").read_text() == "keep me"


def test_failure_mid_run_leaves_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tuner.ingest import writer

    def boom(self: object, splits: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.PositionWriter, "finish", boom)
    with pytest.raises(KeyboardInterrupt):
        ingest([good_file(tmp_path)], tmp_path / "out", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.pgn"]


def test_reader_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(TunerError, match="no such position-set folder"):
        read_split(tmp_path / "missing", "train")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TunerError, match=r"manifest\.json: missing"):
        read_manifest(tmp_path / "empty")
    run(tmp_path, [good_file(tmp_path)])
    out = tmp_path / "out"
    with pytest.raises(TunerError, match="unknown split"):
        read_split(out, "dev")
    with pytest.raises(TunerError, match="unknown column"):
        read_split(out, "train", ["fen", "eval"])
    assert read_split(out, "train", ["fen", "move"]).columns == ["fen", "move"]
    pl.read_parquet(out / "test.parquet").drop("zobrist").write_parquet(out / "test.parquet")
    with pytest.raises(TunerError, match=r"test\.parquet: lacks column\(s\) zobrist"):
        read_split(out, "test")
    (out / "validation.parquet").unlink()
    with pytest.raises(TunerError, match=r"validation\.parquet: missing"):
        read_split(out, "validation")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["schema_version"] = 99
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(TunerError, match="schema version 99"):
        read_manifest(out)


def test_sample_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "--sample", "--out", str(tmp_path / "sample"), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "52 read, 52 kept" in out
    manifest = read_manifest(tmp_path / "sample")
    assert manifest["games"]["kept"] == 52 and manifest["problems"]["count"] == 0
    # the default filters, counted with python-chess: the first 16 plies of each game, positions
    # with one legal move, (position, move) pairs seen before
    from tests.conftest import SAMPLE_PGN

    seen: set[tuple[int, str]] = set()
    plies = single = duplicate = 0
    with SAMPLE_PGN.open(encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                plies += 1
                key = (chess.polyglot.zobrist_hash(board), move.uci())
                if ply >= 16:
                    if board.legal_moves.count() == 1:
                        single += 1
                    elif key in seen:
                        duplicate += 1
                    seen.add(key)
                board.push(move)
    assert (plies, duplicate) == (3229, 1)
    positions = manifest["positions"]
    assert positions["dropped_by_reason"] == {"opening": 52 * 16, "missing_elo": 0, "rating": 0,
                                              "single_legal": single, "duplicate": duplicate, "no_legal_move": 0}
    assert positions["kept"] == plies - 52 * 16 - single - duplicate
    assert manifest["inputs"][0]["name"] == "famous-games.pgn"


# ---------------------------------------------------------------------------------------------
# the numba replay against python-chess


def test_replay_matches_python_chess(real_games: list[list[chess.Move]]) -> None:
    games = real_games[:60]
    rng = random.Random(5)
    for _ in range(40):  # random playouts reach promotions, under-promotions and en passant
        board, moves = chess.Board(), []
        while not board.is_game_over() and len(moves) < 300:
            move = rng.choice(list(board.legal_moves))
            moves.append(move)
            board.push(move)
        games.append(moves)
    starts, offsets, frm, to, promo, expected = [], [0], [], [], [], []
    for moves in games:
        board = chess.Board()
        starts.append(from_chess(board))
        for move in moves:
            frm.append(move.from_square)
            to.append(move.to_square)
            promo.append(move.promotion - 1 if move.promotion else 0)
            expected.append((board.fen(), chess.polyglot.zobrist_hash(board), board.legal_moves.count(),
                             int(board.turn == chess.BLACK)))
            board.push(move)
        offsets.append(len(frm))
    assert any(p for p in promo) and any(p in (1, 2, 3) for p in promo)
    out = replay(np.stack(starts), np.array(offsets), np.array(frm), np.array(to), np.array(promo),
                 np.ones(len(frm), dtype=bool))
    assert (out.bad_ply == -1).all()
    got = list(zip(out.fens, out.keys.tolist(), out.n_legal.tolist(), out.stm.tolist(), strict=True))
    assert got == expected


def test_replay_reports_a_move_the_core_cannot_find() -> None:
    start = from_chess(chess.Board())[None, :]
    out = replay(start, np.array([0, 2]), np.array([12, 12]), np.array([28, 20]), np.array([0, 0]),
                 np.zeros(2, dtype=bool))
    assert out.bad_ply.tolist() == [1] and out.fens == [None, None]


# ---------------------------------------------------------------------------------------------
# real grandmaster games (skipped on a clean clone)


@pytest.mark.gm
def test_real_gm_games_ingest_cleanly(tmp_path: Path) -> None:
    source = gm_files()[0]
    data = source.read_bytes()
    cut = 0
    for _ in range(200):
        cut = data.index(b"\n[Event ", cut + 1)
    (tmp_path / source.name).write_bytes(data[:cut + 1])
    manifest, _ = run(tmp_path, [tmp_path / source.name])
    assert manifest["games"]["read"] == 200
    assert manifest["problems"]["count"] == 0
    assert manifest["games"]["kept"] >= 195
    rows = all_rows(tmp_path / "out")
    assert rows["white_elo"].null_count() > 0  # the files have empty Elo tags
    for row in rows.sample(300, seed=1).iter_rows(named=True):
        board = chess.Board(row["fen"])
        assert chess.Move.from_uci(row["move"]) in board.legal_moves
        assert chess.polyglot.zobrist_hash(board) == row["zobrist"]
        assert board.legal_moves.count() == row["n_legal"]
