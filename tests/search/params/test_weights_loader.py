"""One weights loader (search.params.weights.load_weights) for every command: built-in names, JSON
files and text views alike, with the same one-line errors naming the file and the place."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from search.params.weights import WeightsFileError, dumps, load_weights
from search.params.weights_text import to_text
from tuner.cli import main
from tuner.uci import serve
from tests.conftest import REPO

EPD = REPO / "datasets" / "epd" / "movetuner.epd"


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``classic`` written as JSON and as a text view, in files whose names do not say which."""
    folder = tmp_path_factory.mktemp("views")
    classic = load_weights("classic")
    (folder / "as_json.w").write_text(dumps(classic))
    (folder / "as_text.w").write_text(to_text(classic))
    return folder / "as_json.w", folder / "as_text.w"


def test_the_loader_reads_a_text_view_as_it_reads_the_json(views: tuple[Path, Path]) -> None:
    as_json, as_text = (load_weights(p) for p in views)
    assert np.array_equal(as_json.values, load_weights("classic").values)
    assert np.array_equal(as_text.values, as_json.values) and as_text.metadata == as_json.metadata


def _missing_json(text: str) -> str:
    doc = json.loads(text)
    del doc["weights"]["eg.pieces.tempo"]
    return json.dumps(doc)


def _catalogue_json(text: str) -> str:
    return text.replace(json.loads(text)["catalog_hash"], "0123456789abcdef")


def _missing_text(text: str) -> str:
    return re.sub(r"^eg\.pieces\.tempo = .*$", "", text, flags=re.MULTILINE)


def _catalogue_text(text: str) -> str:
    return re.sub(r"^catalog_hash = .*$", "catalog_hash = 0123456789abcdef", text, flags=re.MULTILINE)


@pytest.mark.parametrize(("fmt", "corrupt", "place"), [
    ("json", lambda t: t[: len(t) // 2], r"not valid JSON at line \d+ column \d+ .*truncated"),
    ("json", _catalogue_json, r"made for feature catalogue '0123456789abcdef'"),
    ("json", _missing_json, r"missing weight 'eg.pieces.tempo'"),
    ("text", lambda t: t.replace("phalanx", "phalanks", 1), r"line \d+: unknown setting or constant 'mg.pawns.phalanks'"),
    ("text", lambda t: re.sub(r"^8(\s+)-?\d+", r"8\1x", t, count=1, flags=re.MULTILINE), r"line \d+: mg.pst.pawn.a8 must be an integer"),
    ("text", _catalogue_text, r"line \d+: made for feature catalogue '0123456789abcdef'"),
    ("text", _missing_text, r"line \d+: no values for eg.pieces.tempo"),
], ids=["json-truncated", "json-catalogue", "json-missing", "text-unknown", "text-corrupt", "text-catalogue",
        "text-missing"])
def test_bad_files_of_either_format_give_one_line_errors_naming_file_and_place(
        tmp_path: Path, fmt: str, corrupt, place: str) -> None:  # type: ignore[no-untyped-def]
    classic = load_weights("classic")
    path = tmp_path / f"bad.{fmt}"
    path.write_text(corrupt(dumps(classic) if fmt == "json" else to_text(classic)))
    with pytest.raises(WeightsFileError, match=f"^{re.escape(str(path))}: {place}") as info:
        load_weights(path)
    assert "\n" not in str(info.value)


def test_a_file_in_neither_format_is_read_as_a_text_view_and_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.w"
    path.write_text("\nthese are not weights\n")
    with pytest.raises(WeightsFileError, match=f"^{re.escape(str(path))}: line 2: row 'these are not weights' outside"):
        load_weights(path)
    path.write_text("[1, 2]")  # valid JSON, not a weights document
    with pytest.raises(WeightsFileError, match="top level is not an object"):
        load_weights(path)


# ---------------------------------------------------------------- every command takes the text view


def test_eval_prints_the_same_for_either_format(views: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    outputs = []
    for spec in ("classic", *map(str, views)):
        assert main(["eval", fen, "--weights", spec]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2] and outputs[0].startswith("score ")


def test_export_turns_a_text_view_back_into_the_json(views: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "back.json"
    assert main(["export", str(views[1]), "--format", "json", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(dumps(load_weights("classic")))  # metadata keys sorted


def test_uci_plays_with_a_text_view_given_at_start_or_as_an_option(views: tuple[Path, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.w"
    broken.write_text(_missing_text(views[1].read_text()))
    out = io.StringIO()
    serve(str(views[1]), io.StringIO(f"uci\nsetoption name Weights value {broken}\n"
                                     f"setoption name Weights value {views[1]}\nisready\nquit\n"), out)
    lines = out.getvalue().splitlines()
    assert f"option name Weights type string default {views[1]}" in lines
    assert any(line.startswith(f"info string setoption Weights: {broken}: line ") and "no values for eg.pieces.tempo"
               in line for line in lines)
    assert f"info string weights {views[1]} loaded" in lines and lines[-1] == "readyok"


def test_tune_starts_from_a_text_view(views: tuple[Path, Path], sample_set: Path, tmp_path: Path) -> None:
    runs = {}
    for name, spec in (("named", "classic"), ("text", str(views[1]))):
        runs[name] = tmp_path / name
        assert main(["tune", "--method", "mmto", "--data", str(sample_set), "--out", str(runs[name]),
                     "--start", spec, "--iterations", "1", "--max-train", "200", "--max-validation", "100",
                     "--inner-steps", "2", "--quiet"]) == 0
    named, text = (load_weights(run / "weights.json").values for run in runs.values())
    assert np.array_equal(named, text) and not np.array_equal(named, load_weights("classic").values)


def test_bench_move_match_match_epd_and_compare_take_a_text_view(
        views: tuple[Path, Path], sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = str(views[1])
    assert main(["bench", "move-match", "--weights", "classic", text, "--data", str(sample_set),
                 "--max-positions", "60", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["weights"]
    assert figures["classic"] == figures[text]

    assert main(["bench", "match", text, "classic", "--games", "2", "--depth", "1", "--json",
                 "--out", str(tmp_path / "games.pgn")]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == 2 and summary["score"] == 0.5  # the same weights on both sides

    assert main(["bench", "epd", str(EPD), "--weights", "classic", text, "--depth", "1", "--json"]) == 0
    epd = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    same, given = ({k: v for k, v in epd["weights"][name].items() if k != "seconds"} for name in ("classic", text))
    assert same == given and same["positions"] > 0

    assert main(["bench", "compare", "classic", text, "--data", str(sample_set), "--games", "0",
                 "--max-positions", "40", "--out", str(tmp_path / "cmp"), "--json"]) == 0
    entrants = {e["name"]: e for e in json.loads(capsys.readouterr().out)["entrants"]}
    assert entrants[text]["move_match"] == entrants["classic"]["move_match"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_at_once_by_the_weights_and_network_loaders(tmp_path: Path) -> None:
    # issue 58 item 10: opening a FIFO with no writer blocked; every loader of a weights or
    # network file (uci's setoption too) goes through these two
    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415

    fifo = tmp_path / "w.fifo"
    os.mkfifo(fifo)
    for load in (load_weights, load_evaluator):
        with pytest.raises(WeightsFileError, match=re.escape(f"{fifo}: not a regular file: a FIFO")):
            load(str(fifo))


def test_json_weights_with_a_byte_order_mark_load_and_a_foreign_phase_max_is_refused(tmp_path: Path) -> None:
    # issue 58 item 17: a BOM was refused, phase_max 99 accepted silently (the text view refuses it)
    from search.params.weights import BUILTIN_DIR

    text = (BUILTIN_DIR / "classic.json").read_text(encoding="utf-8")
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert (load_weights(bom).values == load_weights("classic").values).all()
    doc = json.loads(text)
    for bad in (99, "24", True):
        doc["phase_max"] = bad
        path = tmp_path / "phase.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(WeightsFileError, match=r"phase\.json: phase_max is .*, this version uses 24"):
            load_weights(path)
