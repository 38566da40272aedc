"""The match summary records its openings and seed, and a confirmation match refuses the
openings and seed of the match that chose its candidate (``tuner bench match --chosen-by``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tuner.cli import main as tuner_main
from tuner.arena.match import (DEFAULT_OPENINGS, ReusedSelectionError, check_confirmation, openings_record)

COMMON = ["--games", "2", "--depth", "1", "--workers", "1", "--json"]


def test_match_json_records_openings_file_hash_and_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tuner_main(["bench", "match", "material", "classic", *COMMON, "--seed", "4",
                       "--out", str(tmp_path / "a.pgn")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["openings"] == str(DEFAULT_OPENINGS)
    assert doc["openings_sha256"] == hashlib.sha256(DEFAULT_OPENINGS.read_bytes()).hexdigest()
    assert doc["seed"] == 4


def test_confirmation_match_on_the_choosing_openings_and_seed_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chose = tmp_path / "chose.json"
    assert tuner_main(["bench", "match", "material", "classic", *COMMON, "--seed", "1",
                       "--out", str(tmp_path / "a.pgn")]) == 0
    chose.write_text(capsys.readouterr().out)
    # the same openings under another name, same seed: refused before any game
    copy = tmp_path / "copy.epd"
    copy.write_bytes(DEFAULT_OPENINGS.read_bytes())
    code = tuner_main(["bench", "match", "material", "classic", *COMMON, "--seed", "1", "--openings", str(copy),
                       "--chosen-by", str(chose), "--out", str(tmp_path / "b.pgn")])
    err = capsys.readouterr().err
    assert code != 0 and "chosen on these openings" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "b.pgn").exists()
    # another seed confirms
    assert tuner_main(["bench", "match", "material", "classic", *COMMON, "--seed", "2",
                       "--chosen-by", str(chose), "--out", str(tmp_path / "c.pgn")]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] == 2


def test_chosen_by_needs_a_summary_with_an_openings_record(tmp_path: Path) -> None:
    record = openings_record(DEFAULT_OPENINGS, 0)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"a": "x", "b": "y", "score": 0.5}) + "\n")
    with pytest.raises(ReusedSelectionError, match="records no openings"):
        check_confirmation(old, record)
    with pytest.raises(ReusedSelectionError, match="no such match summary"):
        check_confirmation(tmp_path / "missing.json", record)
    bad = tmp_path / "bad.json"
    bad.write_text("not json\n")
    with pytest.raises(ReusedSelectionError, match="not a match summary"):
        check_confirmation(bad, record)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**record, "seed": 9}) + "\n")
    check_confirmation(other, record)  # another seed: accepted
