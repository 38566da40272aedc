"""The opening-suite builder (:mod:`tuner.arena.openings`, ``tuner bench openings``) on the
repository's sample games (``datasets/sample/famous-games.pgn``): every line it writes is
re-checked here from its own ``id`` (the moves), with python-chess and the repository's search."""

from __future__ import annotations

import json
import random
from pathlib import Path

import chess
import chess.polyglot
import pytest

from search.core.convert import from_fen
from search.params.weight_sets import classic_weights
from search.tree.search_api import search
from tuner.cli import main as tuner_main
from tuner.arena.match import DEFAULT_OPENINGS, load_openings
from tuner.arena.openings import (OpeningSourceError, SuiteConfig, book_candidates, build_suite, material,
                                  pgn_candidates, pgn_lines)

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "datasets" / "sample" / "famous-games.pgn"


def replay(line_id: str) -> chess.Board:
    board = chess.Board()
    for token in line_id.split():
        if not token.endswith("."):
            board.push_san(token)
    return board


def test_suite_from_the_sample_games_holds_what_it_promises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "suite.epd"
    args = ["bench", "openings", "--from-pgn", str(SAMPLE), "--out", str(out), "--count", "20", "--margin", "50",
            "--seed", "3", "--json"]
    assert tuner_main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["positions"] == 20 and summary["max_abs_cp"] <= 50
    openings = load_openings(out)  # the arena reads it as it reads the quick set
    assert len(openings) == 20
    shipped = {" ".join(o.fen.split()[:4]) for o in load_openings(DEFAULT_OPENINGS)}
    weights = classic_weights().values
    keys = set()
    for line in out.read_text().splitlines():
        if line.startswith("#"):
            continue
        board = chess.Board()
        ops = board.set_epd(line)
        played = replay(str(ops["id"]))
        assert played.epd() == board.epd()  # the id's moves lead to the position
        assert 6 <= len(played.move_stack) <= 12
        assert material(board, chess.WHITE) == material(board, chess.BLACK)
        cp = search(from_fen(f"{board.epd()} 0 1"), 4, weights).score_cp
        assert abs(cp) <= 50 and ops["ce"] == round(cp) and ops["acd"] == 4
        keys.add(board.epd())
    assert len(keys) == 20 and not keys & shipped
    assert "# made by: tuner bench openings --from-pgn" in out.read_text()
    # the same seed gives the same positions; another seed others; an existing file is refused
    again = tmp_path / "again.epd"
    assert tuner_main([*args[:4], "--out", str(again), *args[6:]]) == 0
    body = [x for x in out.read_text().splitlines() if not x.startswith("#")]
    assert [x for x in again.read_text().splitlines() if not x.startswith("#")] == body
    other = tmp_path / "other.epd"
    assert tuner_main([*args[:4], "--out", str(other), *args[6:-2], "4", "--json"]) == 0
    assert [x for x in other.read_text().splitlines() if not x.startswith("#")] != body
    capsys.readouterr()
    assert tuner_main(args) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err


def test_one_position_per_game_and_fewer_than_asked_is_a_note(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = SuiteConfig(count=1000, margin=10_000)  # every level position passes
    groups = list(pgn_candidates([SAMPLE], config, random.Random(0)))
    kept = build_suite(groups, config, classic_weights().values)
    sources = [p.candidate.source for p in kept]
    assert len(sources) == len(set(sources)) and len(kept) <= len(groups) <= 52
    assert tuner_main(["bench", "openings", "--from-pgn", str(SAMPLE), "--out", str(tmp_path / "s.epd"),
                       "--count", "1000"]) == 0
    assert "note: only" in capsys.readouterr().err


def test_bad_sources_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(OpeningSourceError, match="no such games file"):
        list(pgn_lines(tmp_path / "missing.pgn", 12))
    assert tuner_main(["bench", "openings", "--out", str(tmp_path / "s.epd")]) == 2
    assert tuner_main(["bench", "openings", "--from-pgn", str(tmp_path / "missing.pgn"),
                       "--out", str(tmp_path / "s.epd")]) == 2
    assert tuner_main(["bench", "openings", "--from-pgn", str(SAMPLE), "--min-plies", "9", "--max-plies", "3",
                       "--out", str(tmp_path / "s.epd")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "--from-pgn" in err[0] and "missing.pgn: no such games file" in err[1]
    assert "min_plies <= max_plies" in err[2]
    assert not (tmp_path / "s.epd").exists()
    # a broken game among good ones is skipped, not fatal
    broken = tmp_path / "broken.pgn"
    broken.write_text('[Event "x"]\n\n1. e4 e5 2. Qxh8 *\n\n' + SAMPLE.read_text())
    numbers = [n for n, _ in pgn_lines(broken, 12)]
    assert 1 not in numbers and len(numbers) >= 50


def test_book_walks_from_a_small_polyglot_book(tmp_path: Path) -> None:
    # a book of two lines, written as Polyglot entries (key, move, weight, learn; big-endian)
    book = tmp_path / "tiny.bin"
    entries = []
    for line in ("e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6", "d2d4 d7d5 c2c4 e7e6 b1c3 g8f6 c1g5 f8e7"):
        board = chess.Board()
        for uci in line.split():
            move = chess.Move.from_uci(uci)
            raw = move.to_square | (move.from_square << 6)
            entries.append((chess.polyglot.zobrist_hash(board), raw, 1))
            board.push(move)
    book.write_bytes(b"".join(k.to_bytes(8, "big") + m.to_bytes(2, "big") + w.to_bytes(2, "big") + bytes(4)
                              for k, m, w in sorted(entries)))
    config = SuiteConfig(count=5, min_plies=6, max_plies=8, margin=10_000)
    groups = book_candidates(book, config, random.Random(1), 40)
    assert groups and all(6 <= len(g[0].moves) <= 8 for g in groups)
    kept = build_suite(groups, config, classic_weights().values)
    assert 2 <= len(kept) <= 5  # distinct positions only: two lines, plies 6 to 8
    with pytest.raises(OpeningSourceError, match="no such Polyglot book"):
        book_candidates(tmp_path / "none.bin", config, random.Random(1), 1)


def test_the_shipped_book_suite_holds_what_its_header_says_on_a_sample() -> None:
    from tuner.arena.openings import position_key, verify_suite  # noqa: PLC0415

    shipped = REPO / "datasets" / "openings" / "gnuchess-book.epd"
    quick = {position_key(chess.Board(o.fen)) for o in load_openings(DEFAULT_OPENINGS)}
    count, failures = verify_suite(shipped, SuiteConfig(), classic_weights().values, exclude=quick, sample=60, seed=1)
    assert count == 3000 and failures == []  # the whole file: python bench/verify_openings.py --suite FILE
    assert len(load_openings(shipped)) == 3000
    assert "public domain" in shipped.read_text()[:2000]


def test_verify_suite_finds_a_tampered_line(tmp_path: Path) -> None:
    from tuner.arena.openings import verify_suite  # noqa: PLC0415

    out = tmp_path / "suite.epd"
    assert tuner_main(["bench", "openings", "--from-pgn", str(SAMPLE), "--out", str(out), "--count", "5"]) == 0
    lines = out.read_text().splitlines()
    body = [k for k, x in enumerate(lines) if not x.startswith("#")]
    fields = " ".join(lines[body[0]].split()[:4])
    lines[body[0]] = f'{fields} ce 999; acd 4; id "1. e4";'  # a wrong id and a wrong score
    lines.append(lines[body[1]])  # a repeated position
    out.write_text("\n".join(lines) + "\n")
    count, failures = verify_suite(out, SuiteConfig(), classic_weights().values)
    assert count == 6
    text = " | ".join(failures)
    assert f"line {body[0] + 1}: the id's moves lead to" in text and "plies, not 6..12" in text
    assert "the file ce 999" in text and f"same position as line {body[1] + 1}" in text


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_games_file_or_book_that_is_not_a_regular_file_is_refused_not_waited_on(kind: str, tmp_path: Path) -> None:
    """Probe finding (issue 58 re-run): ``--from-pgn`` a FIFO with no writer waited for ever and
    ``/dev/urandom`` was read without end; ``--from-book`` a FIFO blocked too."""
    import os  # noqa: PLC0415

    if kind == "fifo":
        path = tmp_path / "g.pgn"
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/urandom")
        if not path.exists():
            pytest.skip("no /dev/urandom")
    else:
        path = tmp_path
    with pytest.raises(OpeningSourceError, match="cannot read games file"):
        list(pgn_lines(path, 8))
    if kind != "folder":
        with pytest.raises(OpeningSourceError, match="cannot read as a Polyglot book .not a regular file"):
            book_candidates(path, SuiteConfig(count=1), random.Random(0), 1)
