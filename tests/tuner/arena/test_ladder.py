"""``tuner bench ladder`` (:mod:`tuner.arena.ladder`): a gauntlet against rated engines.

The opponents are ``tuner uci`` processes of known weights (``material`` and ``gm``; with
their default ``Hash``, 16 MiB as the internal match's default ``--hash``, they play exactly the
games of the same weights played internally, see ``test_engines.py``) and the tiny XBoard test engine, never an installed program. The rating is
re-computed here from the PGN the command wrote, and each opponent's score from an internal
match of the same weights."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import chess.pgn
import numpy as np
import pytest

from search.params.weights import load_weights
from tuner.cli import main as tuner_main
from tuner.arena.ladder import LadderFileError, load_ladder
from tuner.arena.match import DEFAULT_OPENINGS, MatchConfig, load_openings, run_match, summarize
from tuner.arena.players import PlayPlayer
from tuner.arena.ratings import fit_gauntlet

XBOARD = Path(__file__).resolve().parent / "xboard_engine.py"
LADDER = f"""\
[[engine]]
name = "material"
command = "{sys.executable} -m tuner uci --weights material"
rating = 1000
source = "test: assumed"

[[engine]]
name = "gm"
command = "{sys.executable} -m tuner uci --weights gm"
protocol = "uci"
rating = 1600
source = "test: assumed"

[[engine]]
name = "first-move"
command = "{sys.executable} {XBOARD} ok"
protocol = "xboard"
rating = 400
source = "test: assumed"

[[engine]]
name = "unsourced"
command = "no-such-engine"
rating = "to verify"
"""
GAMES = ["--games", "4", "--nodes", "300", "--workers", "1", "--seed", "2", "--max-plies", "120"]


def pair_scores_from_pgn(path: Path) -> dict[str, list[float]]:
    """The player's mean score of each game pair against each opponent, read back from the PGN."""
    points: dict[str, dict[str, float]] = {}
    with path.open() as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            h = game.headers
            player_white = h["White"] == "classic"
            opponent = h["Black"] if player_white else h["White"]
            p = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[h["Result"]]
            pair = h["Round"].split(".")[0]
            points.setdefault(opponent, {}).setdefault(pair, 0.0)
            points[opponent][pair] += (p if player_white else 1 - p) / 2
    return {name: list(pairs.values()) for name, pairs in points.items()}


def test_ladder_rates_the_player_on_the_opponents_scale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ladder = tmp_path / "ladder.toml"
    ladder.write_text(LADDER)
    pgn, png = tmp_path / "ladder.pgn", tmp_path / "ladder.png"
    assert tuner_main(["bench", "ladder", "classic", "--ladder", str(ladder), *GAMES, "--pgn", str(pgn),
                       "--plot", str(png), "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert "unsourced: rating to verify, not played" in captured.err
    assert doc["skipped"] == ["unsourced"] and doc["seed"] == 2 and doc["openings"] == str(DEFAULT_OPENINGS)
    assert [o["name"] for o in doc["opponents"]] == ["material", "gm", "first-move"]
    assert all(o["games"] == 4 for o in doc["opponents"])
    # the rating: the gauntlet fit of the games in the PGN, on the published ratings
    scores = pair_scores_from_pgn(pgn)
    assert sorted(scores) == ["first-move", "gm", "material"]
    fit = fit_gauntlet([1000.0, 1600.0, 400.0], [np.array(scores[n]) for n in ("material", "gm", "first-move")])
    if np.isfinite(fit.elo):
        assert doc["elo"] == pytest.approx(fit.elo, abs=0.06)
        low, high = fit.interval() or (0.0, 0.0)
        assert doc["elo_ci95"] == pytest.approx([low, high], abs=0.06)
    else:
        assert doc["elo"] is None
    # each opponent's score: the internal match of the same weights, game for game
    openings = load_openings(DEFAULT_OPENINGS)
    config = MatchConfig(games=4, nodes=300, workers=1, seed=2, max_plies=120)
    classic = load_weights("classic").values
    for name in ("material", "gm"):
        # the player and the tuner uci opponents all play the playing search (their default)
        internal = summarize(run_match(PlayPlayer(classic), PlayPlayer(load_weights(name).values), openings, config))
        opponent = next(o for o in doc["opponents"] if o["name"] == name)
        assert (opponent["wins"], opponent["draws"], opponent["losses"]) == (internal.wins, internal.draws,
                                                                            internal.losses)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # outputs are never replaced without --overwrite
    assert tuner_main(["bench", "ladder", "classic", "--ladder", str(ladder), *GAMES, "--pgn", str(pgn),
                       "--plot", str(tmp_path / "other.png")]) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err


def test_an_opponent_that_cannot_start_stops_the_ladder_before_any_game(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    ladder = tmp_path / "ladder.toml"
    ladder.write_text('[[engine]]\nname = "fairy"\ncommand = "no-such-fairymax"\nprotocol = "xboard"\n'
                      'rating = 1900\nsource = "x"\npackage = "fairymax"\n')
    assert tuner_main(["bench", "ladder", "classic", "--ladder", str(ladder), *GAMES,
                       "--pgn", str(tmp_path / "g.pgn")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot start 'no-such-fairymax'" in err[0] and "Debian package fairymax" in err[0]
    assert not (tmp_path / "g.pgn").exists()


def test_only_plays_the_named_opponents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ladder = tmp_path / "ladder.toml"
    ladder.write_text(LADDER)
    assert tuner_main(["bench", "ladder", "classic", "--ladder", str(ladder), *GAMES, "--only", "first-move",
                       "--pgn", str(tmp_path / "g.pgn"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [o["name"] for o in doc["opponents"]] == ["first-move"] and doc["skipped"] == []
    assert tuner_main(["bench", "ladder", "classic", "--ladder", str(ladder), *GAMES, "--only", "nobody",
                       "--pgn", str(tmp_path / "h.pgn")]) == 2
    assert "--only 'nobody': no such opponent in" in capsys.readouterr().err
    # a ladder on the openings and seed of the match that chose the player is refused
    chose = tmp_path / "chose.json"
    chose.write_text(json.dumps({k: doc[k] for k in ("openings", "openings_sha256", "seed")}) + "\n")
    assert tuner_main(["bench", "ladder", "classic", "--ladder", str(ladder), *GAMES, "--only", "first-move",
                       "--chosen-by", str(chose), "--pgn", str(tmp_path / "i.pgn")]) == 2
    assert "chosen on these openings" in capsys.readouterr().err and not (tmp_path / "i.pgn").exists()


@pytest.mark.parametrize(("text", "message"), [
    ('[[engine]]\nname = "a"\ncommand = "x"\nrating = 1500\n', r"engine 1 \(a\): a rating needs its source"),
    ('[[engine]]\nname = "a"\ncommand = "x"\nrating = "about 1500"\n', r"engine 1 \(a\): rating must be a number"),
    ('[[engine]]\nname = "a"\ncommand = "x"\nprotocol = "cecp"\nrating = "to verify"\n', "protocol 'cecp'"),
    ('[[engine]]\nname = "a"\ncommand = "x"\nelo = 3\n', "unknown key 'elo'"),
    ('[[engine]]\nname = "a"\ncommand = "x"\nrating = "to verify"\n[[engine]]\nname = "a"\ncommand = "y"\n'
     'rating = "to verify"\n', r"engine 2: name 'a' used twice"),
    ('[[engine]]\ncommand = "x"\n', "engine 1: needs a name"),
    ('[[engine]]\nname = "a"\ncommand = "\'x"\nrating = "to verify"\n', "No closing quotation"),
    ('[engine\n', "not valid TOML at line 1"),
    ('title = "x"\n', "unknown top-level key 'title'"),
])
def test_bad_ladder_files_are_one_line_errors_naming_file_and_entry(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(LadderFileError, match=message) as info:
        load_ladder(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_the_shipped_debian_ladder_reads_and_cites_every_rating() -> None:
    shipped = Path(__file__).resolve().parents[3] / "datasets" / "ladder" / "debian.toml"
    rungs = load_ladder(shipped)
    assert len(rungs) >= 8 and all(r.package for r in rungs)
    assert all(r.source.strip() for r in rungs)  # a number or "to verify", always with where it stands
    assert {r.spec.protocol for r in rungs} == {"uci", "xboard"}
