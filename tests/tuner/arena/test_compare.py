"""``tuner bench compare``: with the same seeds its figures are those of ``bench move-match``,
``bench match`` (every pair) and ``bench epd`` run alone; run folders give their method and
tuning time; ``--games 0`` skips the games; an external engine takes part in the games; bad
input is a one-line error."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from search.params.catalog import FEATURE_INDEX
from search.params.weights import Weights, dumps, load_weights
from tuner.cli import main as tuner_main
from tuner.arena.epd import DEFAULT_SUITE
from tuner.arena.match import DEFAULT_OPENINGS, openings_record

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder as ``tuner tune`` leaves it: weights (``classic`` with a dearer knight),
    config.toml naming the method, metrics.jsonl with each iteration's seconds."""
    run = tmp_path_factory.mktemp("runs") / "knightly"
    run.mkdir()
    values = load_weights("classic").values.copy()
    values[FEATURE_INDEX["mg.material.knight"]] += 60
    (run / "weights.json").write_text(dumps(Weights(values, {"method": "texel"})))
    (run / "config.toml").write_text('method = "texel"\ndata = "somewhere"\n\n[texel]\nepochs = 2\n')
    (run / "metrics.jsonl").write_text("".join(json.dumps({"iteration": i, "loss": 0.1, "iteration_seconds": s}) + "\n"
                                               for i, s in enumerate([61.5, 12.25, 11.0])))
    return run


def cli_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    assert tuner_main(args) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_compare_figures_equal_those_of_the_single_commands(sample_set: Path, run_folder: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    names = ["classic", "material", str(run_folder)]
    files = ["classic", "material", str(run_folder / "weights.json")]  # what the single commands take
    as_file = dict(zip(names, files))
    out = tmp_path / "cmp"
    assert tuner_main(["bench", "compare", *names, "--data", str(sample_set), "--games", "2", "--depth", "1",
                       "--seed", "4", "--workers", "1", "--epd", str(DEFAULT_SUITE), "--out", str(out)]) == 0
    table = capsys.readouterr().out
    doc = json.loads((out / "compare.json").read_text())
    assert (out / "compare.png").read_bytes()[:8] == PNG_MAGIC
    entrants = {e["name"]: e for e in doc["entrants"]}
    assert list(entrants) == names

    # move-match: bench move-match on the test split
    single = cli_json(["bench", "move-match", "--weights", *files, "--data", str(sample_set), "--json"], capsys)
    assert doc["move_match"]["positions"] == single["positions"] > 150
    for name in names:
        assert entrants[name]["move_match"] == single["weights"][as_file[name]]

    # games: bench match for every pair, same seed, PGN included
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == [(names[0], names[1]), (names[0], names[2]),
                                                        (names[1], names[2])]
    for pair in doc["pairs"]:
        pgn = tmp_path / "single.pgn"
        alone = cli_json(["bench", "match", as_file[pair["a"]], as_file[pair["b"]], "--games", "2", "--depth", "1", "--seed", "4",
                          "--workers", "1", "--json", "--out", str(pgn), "--overwrite"], capsys)  # one file per pair
        for key in ("games", "wins", "draws", "losses", "score", "score_ci95", "elo", "elo_ci95", "pentanomial",
                    "terminations"):
            assert pair[key] == alone[key], (pair["a"], pair["b"], key)
        moves = [line for line in Path(pair["pgn"]).read_text().splitlines() if not line.startswith("[")]
        assert moves == [line for line in pgn.read_text().splitlines() if not line.startswith("[")]

    # EPD: bench epd with the same limit
    single = cli_json(["bench", "epd", str(DEFAULT_SUITE), "--weights", *files, "--depth", "1", "--json"], capsys)
    for name in names:
        mine = {k: v for k, v in entrants[name]["epd"].items() if k != "seconds"}
        theirs = {k: v for k, v in single["weights"][as_file[name]].items() if k != "seconds"}
        assert mine == theirs

    # ratings: the anchor (first) at 0; each rating agrees in sign with the pair scores against it
    assert doc["anchor"] == "classic" and entrants["classic"]["elo"]["elo"] == 0.0
    for pair in doc["pairs"][:2]:
        other = entrants[pair["b"]]["elo"]
        value = other["elo"] if other["elo"] is not None else other["infinite"] * float("inf")
        assert (value < 0) == (pair["score"] > 0.5) or pair["score"] == 0.5

    # the run's method and tuning time; plain weight sets have none
    assert entrants[str(run_folder)]["method"] == "texel"
    assert entrants[str(run_folder)]["wall_seconds"] == pytest.approx(84.75)
    assert entrants["classic"]["method"] is None and entrants["classic"]["wall_seconds"] is None
    main_table = table.split("\n\n")[1].splitlines()  # after the heading, before the pairs' table
    assert main_table[0].startswith("| entrant") and len(main_table) == 2 + len(names)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in main_table[2:]}
    assert rows[str(run_folder)][:2] == ["texel", "1 min 24 s"] and rows["material"][:2] == ["-", "-"]
    mm = entrants["classic"]["move_match"]
    assert rows["classic"][2] == f"{100 * mm['top1']:.2f}%"
    assert rows["classic"][3] == f"[{100 * mm['top1_ci95'][0]:.2f}, {100 * mm['top1_ci95'][1]:.2f}]%"
    assert mm["top1_ci95"][0] < mm["top1"] < mm["top1_ci95"][1]
    assert rows["classic"][4] == "-" and entrants["classic"]["top1_vs_anchor"] is None  # the anchor itself
    vs = entrants["material"]["top1_vs_anchor"]  # paired over the same positions
    assert vs["diff"] == pytest.approx(entrants["material"]["move_match"]["top1"] - mm["top1"], abs=2e-5)
    assert vs["ci95"][0] < vs["diff"] < vs["ci95"][1] and rows["material"][4].startswith(f"{100 * vs['diff']:+.2f} [")
    assert rows["classic"][7] == "0 (anchor)"


def test_games_zero_skips_the_matches(sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = cli_json(["bench", "compare", "material", "classic", "--data", str(sample_set), "--games", "0",
                    "--max-positions", "40", "--out", str(tmp_path), "--json"], capsys)
    assert doc["pairs"] == [] and doc["games"] is None and doc["epd"] is None
    assert all(e["elo"] is None and e["epd"] is None for e in doc["entrants"])
    assert doc["move_match"]["positions"] == 40 and not (tmp_path / "games").exists()
    assert (tmp_path / "compare.png").read_bytes()[:8] == PNG_MAGIC


def test_an_external_engine_takes_part_in_the_games(sample_set: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    engine = f"{sys.executable} -m tuner uci --weights classic"
    doc = cli_json(["bench", "compare", "classic", "--engine", engine, "--engine-options", "Hash=1",
                    "--anchor", engine, "--anchor-elo", "1500", "--data", str(sample_set), "--max-positions", "20",
                    "--games", "2", "--depth", "1", "--workers", "1", "--out", str(tmp_path), "--json"], capsys)
    classic, external = doc["entrants"]
    assert external["kind"] == "engine" and external["move_match"] is None and external["command"][-1] == "classic"
    assert doc["anchor"] == external["name"] and external["elo"]["elo"] == 1500.0 and external["elo"]["anchor"]
    # the same engine on both sides: each opening's two games are mirror results
    pair = doc["pairs"][0]
    assert pair["score"] == 0.5 and pair["pentanomial"][2] == 1
    assert classic["elo"]["elo"] == pytest.approx(1500.0) and classic["elo"]["ci95"] == [1500.0, 1500.0]


def test_bad_inputs_are_one_line_errors(sample_set: Path, run_folder: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # where the default --out (results/compare) would go
    no_test = tmp_path / "no-test"
    shutil.copytree(sample_set, no_test)
    (no_test / "test.parquet").unlink()
    empty_run = tmp_path / "empty-run"
    empty_run.mkdir()
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"schema": "movetuner-weights", "values": [1, 2')
    data = ["--data", str(sample_set), "--out", str(tmp_path / "o")]
    cases = [
        (["classic", str(tmp_path / "missing-run"), *data, "--games", "0"], "no such run folder or weights file"),
        (["classic", str(empty_run), *data, "--games", "0"], "not a run folder (missing weights.json, config.toml"),
        (["classic", str(corrupt), *data, "--games", "0"], "not valid JSON"),
        (["classic", "--data", str(no_test), "--games", "0"], "test.parquet: missing"),
        (["classic", "material", *data], "give --depth, --nodes or --movetime"),
        (["classic", "material", *data, "--games", "3", "--depth", "1"], "even"),
        (["classic", "material", *data, "--depth", "1", "--anchor", "nobody"], "--anchor 'nobody'"),
        (["classic", "classic", *data, "--games", "0"], "classic: given twice"),
        (["classic", *data, "--games", "0", "--epd", str(tmp_path / "none.epd"), "--depth", "1"], "none.epd"),
    ]
    for args, message in cases:
        assert tuner_main(["bench", "compare", *args]) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (args, err)
    assert not (tmp_path / "results").exists() and not (tmp_path / "o").exists()  # failures leave no empty folder
    (run_folder.parent / "broken").mkdir()
    for f in ("weights.json", "metrics.jsonl"):
        shutil.copy(run_folder / f, run_folder.parent / "broken" / f)
    (run_folder.parent / "broken" / "config.toml").write_text("method = \n")
    assert tuner_main(["bench", "compare", str(run_folder.parent / "broken"), *data, "--games", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "config.toml: not valid TOML" in err[0]


def test_sprt_stops_each_pair_as_bench_match_does(sample_set: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    games = ["--games", "60", "--depth", "1", "--adjudicate-cp", "400", "--adjudicate-moves", "1", "--seed", "2",
             "--workers", "1", "--sprt", "0", "200", "0.05", "0.05"]
    assert tuner_main(["bench", "compare", "classic", "material", "--data", str(sample_set), "--max-positions", "20",
                       *games, "--out", str(tmp_path / "cmp")]) == 0
    printed = capsys.readouterr().out
    doc = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    pair = doc["pairs"][0]
    assert pair["sprt"]["decision"] == "H1" and pair["games"] < 60 and pair["sprt"]["pairs"] == pair["games"] // 2
    assert doc["games"]["sprt"]["upper"] == pytest.approx(pair["sprt"]["upper"])
    assert {k: doc["games"][k] for k in ("openings", "openings_sha256", "seed")} == openings_record(DEFAULT_OPENINGS, 2)
    alone = cli_json(["bench", "match", "classic", "material", *games, "--json", "--out", str(tmp_path / "m.pgn")],
                     capsys)
    for key in ("games", "wins", "draws", "losses", "pentanomial", "sprt"):
        assert pair[key] == alone[key], key
    assert "SPRT per pair: elo0 0 elo1 200" in printed and "at most 60 per pair" in printed
    header = next(line for line in printed.splitlines() if line.startswith("| A "))
    assert header.rstrip(" |").endswith("SPRT") and "SPRT LLR" in header
    assert tuner_main(["bench", "compare", "classic", "material", "--data", str(sample_set), "--games", "0",
                       "--sprt", "0", "10", "0.05", "0.05", "--out", str(tmp_path / "x")]) == 2
    assert "--sprt stops games" in capsys.readouterr().err


def test_an_earlier_comparison_is_not_replaced_without_overwrite(sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOVETUNER_LOG_SECONDS", "0.01")
    out = tmp_path / "cmp"
    args = ["bench", "compare", "classic", "material", "--data", str(sample_set), "--max-positions", "20",
            "--games", "2", "--depth", "2", "--workers", "1", "--epd", str(DEFAULT_SUITE), "--out", str(out)]
    assert tuner_main(args) == 0
    err = capsys.readouterr().err.splitlines()
    # running lines while the games are played (the pair, its games, W/D/L and Elo once one pair is
    # done) and while the EPD suite is answered (positions, solved so far)
    assert any(line.startswith("compare, pair 1/1 classic vs material: ") for line in err)
    assert any(line.startswith("epd classic: ") and " positions, solved " in line for line in err)
    pgn = out / "games" / "1-classic-vs-2-material.pgn"
    before = pgn.read_text()
    assert before.count("[Event ") == 2
    assert tuner_main(args) == 2
    assert "exists; pass --overwrite to replace it" in capsys.readouterr().err and pgn.read_text() == before
    assert tuner_main([*args, "--overwrite"]) == 0
    assert pgn.read_text().count("[Event ") == 2
