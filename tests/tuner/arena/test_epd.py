"""EPD test suites: the parser on good and broken lines, the scoring rule, the intervals, and
``tuner bench epd`` end to end (mates in one at depth 2, ``--out``, ``--workers 2``)."""

from __future__ import annotations

import argparse
import codecs
import json
import math
from pathlib import Path

import chess
import pytest

from tuner.commands.bench_epd import register
from tuner.limits import SearchLimits
from tuner.arena.epd import (
    DEFAULT_SUITE,
    MAX_POINTS,
    EpdError,
    EpdPosition,
    mean_interval,
    parse_epd,
    parse_epd_line,
    parse_epd_text,
    run_suite,
    score_move,
    summarise,
    theme_of,
    wilson_interval,
)
from search.params.weights import load_weights
from tuner.errors import TunerError

BACK_RANK = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - -"  # Ra8# (a1a8)
ITALIAN = "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq -"

#: four mates in one (two for each colour), each with a single mating move
MATES_IN_ONE = """\
# mates in one
6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - bm Ra8#; id "mate.backrank";
r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - bm Qxf7#; id "mate.scholar";

rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - bm Qh4#; id "mate.fool";
r5k1/5ppp/8/8/8/8/5PPP/6K1 b - - bm a8a1; id "mate.black";
"""


def one(line: str) -> EpdPosition:
    return parse_epd_line(line, "t.epd", 1)


def problem(line: str) -> str:
    with pytest.raises(EpdError) as info:
        one(line)
    assert str(info.value).startswith("t.epd:1: ") and "\n" not in str(info.value)
    return info.value.reason


# ---------------------------------------------------------------- parsing


def test_bm_in_san_and_in_uci_give_the_same_uci_moves() -> None:
    san = one(f'{BACK_RANK} bm Ra8#; id "mate.01";')
    uci = one(f'{BACK_RANK} bm a1a8; id "mate.01";')
    assert san.bm == uci.bm == ("a1a8",)
    assert san.id == "mate.01" and san.theme == "mate" and san.am == () and san.credit == {}
    assert san.fen == "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1" and san.board == chess.Board(san.fen)


def test_several_bm_and_am_and_castling() -> None:
    p = one(f'{ITALIAN} bm O-O Nc3; am Ng5; id "opening.1";')
    assert p.bm == ("e1g1", "b1c3") and p.am == ("f3g5",)
    assert one(f'{ITALIAN} bm e1g1; id "x";').bm == ("e1g1",)  # castling in UCI: the king's move


def test_sts_credit_with_uci_and_with_san_in_c9() -> None:
    uci = one(f'{ITALIAN} bm O-O; c8 "10 6 3"; c9 "e1g1 c2c3 b1c3"; id "STS(v1.0) Development.001";')
    san = one(f'{ITALIAN} c8 "10 6 3"; c9 "O-O c3 Nc3"; id "positional.develop.01";')
    assert uci.credit == san.credit == {"e1g1": 10, "c2c3": 6, "b1c3": 3}
    assert uci.theme == "Development" and san.theme == "positional"
    # STS also writes the moves in SAN in c7: used when c9 is absent
    assert one(f'{ITALIAN} c7 "O-O c3 Nc3"; c8 "10 6 3"; id "x";').credit == san.credit
    # a single credited move may be unquoted
    assert one(f'{BACK_RANK} c8 10; c9 Ra8; id "x";').credit == {"a1a8": 10}


def test_missing_id_is_accepted() -> None:
    p = one(f"{BACK_RANK} am Kf1;")
    assert p.id == "" and p.theme == "(no id)" and p.am == ("g1f1",) and p.bm == ()


@pytest.mark.parametrize(("epd_id", "theme"), [
    ("tactic.fork.01", "tactic"), ("mate.02", "mate"), ("positional.outpost.01", "positional"),
    ("WAC.001", "WAC"), ("BK12", "BK"), ("STS(v1.0) Undermine.001", "Undermine"), ("", "(no id)"),
    ("123", "123"),
])
def test_theme_is_the_id_up_to_the_first_dot_or_digit(epd_id: str, theme: str) -> None:
    assert theme_of(epd_id) == theme


@pytest.mark.parametrize(("line", "reason"), [
    ("8/8/8 w - - bm e4;", "cannot parse"),                                   # broken FEN
    (f"{BACK_RANK} bm Nf3;", "illegal san"),                                  # illegal bm
    (f"{BACK_RANK} bm Zz9;", "cannot parse"),                                 # not a move at all
    (f"{BACK_RANK} bm 0000;", "bm"),                                          # numeric operand
    (f"{BACK_RANK} bm Z0;", "null move"),                                     # the null move
    (f"{BACK_RANK} bm Ra8 id x;", "cannot parse"),                            # missing ';'
    (f"{BACK_RANK} bm Ra8; id tactic.01;", "cannot parse"),                   # unquoted string
    (f'{BACK_RANK} id "x";', "nothing to score"),                             # no bm, am, c8/c9
    (f'{BACK_RANK} bm;', "bm without a move"),
    (f'{BACK_RANK} bm Ra8; am Ra8;', "both in bm and am"),
    (f'{BACK_RANK} c8 "10 5"; c9 "a1a8"; id "x";', "c8 has 2 points but c9 has 1 moves"),
    (f'{BACK_RANK} c8 "10"; id "x";', "c8 without c9"),
    (f'{BACK_RANK} c9 "a1a8"; id "x";', "c9 without c8"),
    (f'{BACK_RANK} c8 "10 x"; c9 "a1a8 Kf1";', "'x' is not an integer"),
    (f'{BACK_RANK} c8 "10 11"; c9 "a1a8 Kf1";', "between 0 and 10"),
    (f'{BACK_RANK} c8 "7 5"; c9 "a1a8 Kf1";', "must get 10"),
    (f'{BACK_RANK} c8 "10 5"; c9 "a1a8 Nf3";', "c9: 'Nf3' is not a legal move"),
    (f'{BACK_RANK} c8 "10 5"; c9 "a1a8 Ra8";', "lists a move twice"),
    ("6k1/5ppp/8/8/8/8/5PPP/R5KK w - - bm Ra8;", "more than one king"),        # impossible position
    ('R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - id "mated";', "no legal move"),         # already mated
    ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1 bm Ra8;", "cannot parse"),         # FEN counters
])
def test_broken_lines_are_reported_with_a_reason(line: str, reason: str) -> None:
    assert reason in problem(line)


def test_file_problems_carry_line_numbers_and_the_rest_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "suite.epd"
    path.write_text(
        "# a comment\n"
        "\n"
        f'{BACK_RANK} bm Ra8#; id "mate.01";\n'
        "not a position at all\n"
        f'{BACK_RANK} c8 "10 5"; c9 "a1a8"; id "broken.01";\n'
        "   \n"
        f'{BACK_RANK} am Kf1; id "avoid.01";\r\n', encoding="utf-8")
    positions, problems = parse_epd(path)
    assert [(p.id, p.line) for p in positions] == [("mate.01", 3), ("avoid.01", 7)]
    assert [(e.line, str(e).split(": ", 1)[0]) for e in problems] == [(4, f"{path}:4"), (5, f"{path}:5")]
    assert all(isinstance(e, ValueError) for e in problems)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
def test_utf16_utf32_and_utf8_with_a_mark_read_as_utf8(tmp_path: Path, encoding: str) -> None:
    """issue 58 item 17: bench epd could not read a UTF-16 EPD that ingest reads."""
    text = f'{BACK_RANK} bm Ra8#; id "mate.01";\r\n{BACK_RANK} am Kf1; id "avoid.01";\n'
    plain, marked = tmp_path / "plain.epd", tmp_path / "marked.epd"
    plain.write_text(text, encoding="utf-8")
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(encoding, b"")
    marked.write_bytes(bom + text.encode(encoding))  # "utf-16", "utf-32" and "utf-8-sig" write their own mark
    assert parse_epd(marked) == parse_epd(plain)
    assert [p.id for p in parse_epd(marked)[0]] == ["mate.01", "avoid.01"] and parse_epd(marked)[1] == []


def test_utf16_without_a_mark_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "nomark.epd"
    path.write_bytes(f'{BACK_RANK} bm Ra8#; id "mate.01";\n'.encode("utf-16-le"))
    with pytest.raises(TunerError, match=r"nomark\.epd:1: NUL bytes: UTF-16 text without a byte-order mark"):
        parse_epd(path)


def test_the_shipped_suite_parses_cleanly() -> None:
    positions, problems = parse_epd(DEFAULT_SUITE)
    assert problems == []
    themes = [p.theme for p in positions]
    assert (themes.count("mate"), themes.count("tactic"), themes.count("positional")) == (14, 19, 10)
    assert len({p.id for p in positions}) == len(positions)
    assert all(len(p.bm) == 1 for p in positions if p.theme != "positional")
    assert all(len(p.credit) >= 3 for p in positions if p.theme == "positional")


# ---------------------------------------------------------------- scoring


def test_scoring_rules() -> None:
    credit = one(f'{ITALIAN} bm O-O; am Nc3; c8 "10 6 3"; c9 "O-O c3 Nc3"; id "p.1";')
    assert [score_move(credit, m) for m in ("e1g1", "c2c3", "b1c3", "h2h3")] == [10, 6, 3, 0]  # c8/c9 rule wins
    bm = one(f"{ITALIAN} bm O-O Nc3;")
    assert [score_move(bm, m) for m in ("e1g1", "b1c3", "c2c3")] == [10, 10, 0]
    bm_am = one(f"{ITALIAN} bm O-O; am Ng5;")
    assert [score_move(bm_am, m) for m in ("e1g1", "f3g5", "c2c3")] == [10, 0, 0]
    am = one(f"{ITALIAN} am Ng5;")
    assert [score_move(am, m) for m in ("f3g5", "c2c3", "e1g1")] == [0, 10, 10]


def test_wilson_interval_matches_its_formula() -> None:
    assert wilson_interval(0, 0) is None
    low, high = wilson_interval(0, 10)  # type: ignore[misc]
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(10, 10)  # type: ignore[misc]
    assert low == pytest.approx(0.7225, abs=1e-4) and high == pytest.approx(1)
    low, high = wilson_interval(5, 10)  # type: ignore[misc]
    assert (low + high) / 2 == pytest.approx(0.5) and high - low == pytest.approx(2 * 0.2634, abs=1e-3)


def test_mean_interval_uses_the_sample_standard_deviation_and_is_clipped() -> None:
    assert mean_interval([10]) is None
    low, high = mean_interval([0, 10, 10, 10])  # type: ignore[misc]
    half = 1.959963984540054 * 5 / math.sqrt(4)  # sample sd of (0, 10, 10, 10) is 5
    assert low == pytest.approx(7.5 - half) and high == MAX_POINTS  # 7.5 + half > 10: clipped
    assert mean_interval([3, 3, 3]) == (3.0, 3.0)


# ---------------------------------------------------------------- engine and command


def test_limits_are_checked() -> None:
    positions, _ = parse_epd_text(MATES_IN_ONE)
    with pytest.raises(ValueError, match="give a limit"):
        run_suite(positions, [0], SearchLimits())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="depth must be between"):
        SearchLimits(depth=0).validate()
    with pytest.raises(ValueError, match="nodes must be between 1 and"):
        SearchLimits(nodes=0).validate()
    with pytest.raises(ValueError, match="nodes must be between 1 and 4611686018427387904"):
        SearchLimits(nodes=2**62 + 1).validate()  # the kernels count in int64
    with pytest.raises(ValueError, match="movetime must be between 1 and 2147483647 ms"):
        SearchLimits(movetime=2**31).validate()


def test_classic_solves_mates_in_one_at_depth_two() -> None:
    from search.params.weights import load_weights  # noqa: PLC0415

    positions, problems = parse_epd_text(MATES_IN_ONE, "mates.epd")
    assert problems == [] and [p.line for p in positions] == [2, 3, 5, 6]
    results = run_suite(positions, load_weights("classic").values, SearchLimits(depth=2))
    assert [r.answer.move for r in results] == ["a1a8", "h5f7", "d8h4", "a8a1"]
    assert all(r.solved and r.answer.mate == 1 and r.answer.score_cp is None for r in results)
    summary = summarise(results)
    assert summary["solved"] == 4 and summary["points"] == 40 and summary["max_points"] == 40
    assert summary["themes"]["mate"]["solved_ci95"] == [pytest.approx(0.5101, abs=1e-4), 1.0]


def bench_parser() -> argparse.ArgumentParser:
    """A stand-in for ``tuner bench``: only the ``epd`` subcommand."""
    parser = argparse.ArgumentParser(prog="tuner bench")
    register(parser.add_subparsers(dest="bench_command"))
    return parser


def run_command(*argv: str) -> int:
    args = bench_parser().parse_args(["epd", *argv])
    return int(args.func(args))


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "mates.epd"
    path.write_text(MATES_IN_ONE + f"{BACK_RANK} bm Nf3;\n" + f'{ITALIAN} c8 "10 6 3"; c9 "O-O c3 Nc3"; id "p.1";\n',
                    encoding="utf-8")
    return path


def test_command_prints_a_table_and_writes_the_answers(suite: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "answers.json"
    assert run_command(str(suite), "--weights", "classic", "material", "--depth", "2", "--out", str(out)) == 0
    captured = capsys.readouterr()
    assert f"skipped {suite}:7: cannot parse" in captured.err
    assert "5 positions (1 lines skipped), depth 2 per position" in captured.out
    assert "mate" in captured.out and "Wilson" in captured.out
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["limits"] == {"depth": 2, "nodes": None, "movetime": None}
    assert doc["problems"] == [f"{suite}:7: cannot parse: illegal san: 'Nf3' in {BACK_RANK} 0 1"]
    classic = doc["weights"]["classic"]
    assert classic["summary"]["themes"]["mate"]["solved"] == 4
    first = classic["positions"][0]
    assert (first["id"], first["line"], first["move"], first["san"], first["points"], first["solved"]) == \
        ("mate.backrank", 2, "a1a8", "Ra8#", 10, True)
    assert [p["line"] for p in classic["positions"]] == [2, 3, 5, 6, 8]
    assert set(doc["weights"]) == {"classic", "material"}


def test_workers_two_and_zero_give_the_same_answers_as_one(suite: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # --workers 0: one per core, as everywhere (issue 58 item 7: "workers must be positive");
    # two cores here, whatever the machine
    import tuner.cores  # noqa: PLC0415

    monkeypatch.setattr(tuner.cores, "available_cores", lambda: 2)
    docs = []
    for workers in ("1", "2", "0"):
        out = tmp_path / f"w{workers}.json"
        assert run_command(str(suite), "--weights", "classic", "--nodes", "3000", "--workers", workers,
                           "--out", str(out)) == 0
        docs.append(json.loads(out.read_text(encoding="utf-8")))
    capsys.readouterr()

    def answers(doc: dict) -> list[tuple]:  # type: ignore[type-arg]
        return [(p["id"], p["move"], p["points"], p["depth"], p["nodes"], p["score_cp"], p["mate"])
                for p in doc["weights"]["classic"]["positions"]]

    assert answers(docs[0]) == answers(docs[1]) == answers(docs[2])
    assert docs[0]["weights"]["classic"]["summary"]["points"] == docs[1]["weights"]["classic"]["summary"]["points"]
    assert [d["workers"] for d in docs] == [1, 2, 2]


def test_command_errors_are_one_line(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(TunerError, match="depth must be between"):
        run_command(str(suite), "--weights", "classic", "--depth", "0")
    with pytest.raises(TunerError, match=r"--workers must be from 0 \(one per core\) to 1024, not 1025"):
        run_command(str(suite), "--weights", "classic", "--depth", "1", "--workers", "1025")
    with pytest.raises(TunerError, match="no such weights file"):
        run_command(str(suite), "--weights", str(tmp_path / "none.json"), "--depth", "1")
    empty = tmp_path / "empty.epd"
    empty.write_text("# nothing\nbad line\n", encoding="utf-8")
    with pytest.raises(TunerError, match="no usable position"):
        run_command(str(empty), "--weights", "classic", "--depth", "1")
    with pytest.raises(SystemExit):  # argparse: the limits are exclusive
        run_command(str(suite), "--weights", "classic", "--depth", "1", "--nodes", "5")
    with pytest.raises(FileNotFoundError):  # the command line prints it as one line (tuner.cli)
        run_command(str(tmp_path / "missing.epd"), "--weights", "classic", "--depth", "1")


def test_running_lines_count_positions_and_solved_ones(suite: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tuner.arena.epd import running_line

    monkeypatch.setenv("MOVETUNER_LOG_SECONDS", "0.001")
    assert run_command(str(suite), "--weights", "classic", "--depth", "3") == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("epd classic: ")]
    assert lines and all("/5 positions, solved " in x for x in lines)
    positions, _ = parse_epd(suite)
    results = run_suite(positions, load_weights("classic").values, SearchLimits(depth=2))
    solved = sum(r.solved for r in results)
    assert running_line("classic", results, 9, 12.4) == \
        f"epd classic: 5/9 positions, solved {solved}/5, points {sum(r.points for r in results)}/50, 12 s"
