"""Probability-limited players in ``tuner bench match|epd|compare`` (tuner/arena/players.py):
``NAME@pls`` parsing, a small match with a ``gm@pls`` side recorded under that name, the same
game from the match code and from the probability-limited search called directly, an EPD
mate in one solved, the leaf model's default, and a bad move or leaf model refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import chess
import chess.pgn
import numpy as np
import pytest

from search.core.board import W_KEY
from search.core.convert import from_fen, move_from_uci, move_to_uci, push
from search.pls.move_model import load_move_model
from search.pls.pls import MODEL_ABOVE_PLAY, PlsSearcher
from search.params.weights import load_weights
from tuner.arena.compare import entrants
from tuner.arena.epd import parse_epd_text, run_suite
from tuner.limits import SearchLimits
from tuner.arena.match import Opening, PairTask, play_game
from tuner.arena.players import PlayPlayer, PlsPlayer, as_player, split_search
from tuner.cli import main as tuner_main
from tuner.commands.arguments import leaf_models

GM = load_weights("gm").values
MODEL = load_move_model("gm")
PREMOVE = load_move_model("gm-premove")


def test_split_search() -> None:
    assert split_search("gm@pls") == ("gm", "pls")
    assert split_search("gm@depth", "pls") == ("gm", "exact")  # the exact search's old name
    assert split_search("gm@exact", "pls") == ("gm", "exact")
    assert split_search("gm@play", "exact") == ("gm", "play")
    assert split_search("gm", "pls") == ("gm", "pls")
    assert split_search("gm") == ("gm", "play")  # the playing search is the default
    assert split_search("gm@play-lmr,null_move") == ("gm", "play-lmr,null_move")  # features off
    with pytest.raises(ValueError, match="unknown search features nope"):
        split_search("gm@play-nope")
    assert split_search("@pls") == ("@pls", "play")  # no name before the suffix: a file name
    assert split_search("results/a@b/weights.json") == ("results/a@b/weights.json", "play")
    with pytest.raises(ValueError, match="search must be one of"):
        as_player(GM, "breadth")


def test_a_two_game_match_records_the_pls_player(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "games.pgn"
    assert tuner_main(["bench", "match", "gm@pls", "gm", "--games", "2", "--nodes", "300", "--max-plies", "12",
                       "--workers", "1", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["a"], doc["b"], doc["games"]) == ("gm@pls", "gm", 2)
    with out.open() as fh:
        games = [chess.pgn.read_game(fh) for _ in range(2)]
    assert {(g.headers["White"], g.headers["Black"]) for g in games if g is not None} == \
        {("gm@pls", "gm"), ("gm", "gm@pls")}


def test_the_match_plays_the_pls_search_s_moves() -> None:
    """The probability-limited side's moves are :meth:`PlsSearcher.think`'s at the match's
    node limit and the play default of ``model_above`` (both sides deterministic: the game
    replays from the direct calls); another ``model_above`` and leaf model are another game."""
    opening = Opening("test", "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9")
    task = PairTask(0, opening, PlsPlayer(GM, MODEL), GM, None, 400, 6, 1000, 4)
    game = play_game(task, "A", "1.1")
    pls = PlsSearcher(GM, MODEL, tt_bits=16, model_above=MODEL_ABOVE_PLAY)
    b = from_fen(opening.fen)
    keys: list[int] = []
    for ply, uci in enumerate(game.moves):
        if ply % 2 == 0:  # the probability-limited side is White
            best = pls.think(b, keys, node_limit=400)
            assert best is not None and move_to_uci(best.pv[0]) == uci
        keys.append(int(b[W_KEY]))
        b = push(b, move_from_uci(b, uci))
    assert len(game.moves) == 6
    engine = PlsSearcher(GM, MODEL, tt_bits=16, model_above=0.5, leaf_model=PREMOVE)
    task = PairTask(0, opening, PlsPlayer(GM, MODEL, model_above=0.5, leaf_model=PREMOVE), GM, None, 400, 6, 1000, 4)
    best = engine.think(from_fen(opening.fen), [], node_limit=400)
    assert best is not None and play_game(task, "A", "1.1").moves[0] == move_to_uci(best.pv[0])


def test_epd_with_pls_solves_a_mate_in_one() -> None:
    positions, problems = parse_epd_text('6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id "mate.1";')
    assert not problems
    for limits in (SearchLimits(depth=1), SearchLimits(nodes=500)):
        [result] = run_suite(positions, PlsPlayer(GM, MODEL), limits)
        assert result.solved and result.answer.move == "a1a8" and result.answer.mate == 1


def test_a_bad_move_model_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = tuner_main(["bench", "match", "gm", "gm", "--search", "pls", "--move-model", "/no/such/model.json",
                       "--games", "2", "--depth", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "no such move-model file" in err[0]


def test_compare_entrants_take_the_suffix_and_the_default_search() -> None:
    players = entrants(["gm@pls", "gm"], [], models=lambda: MODEL)
    assert [p.name for p in players] == ["gm@pls", "gm"]
    assert isinstance(players[0].player, PlsPlayer) and isinstance(players[1].player, PlayPlayer)
    every = entrants(["gm", "classic@depth"], [], search="pls", models=lambda: MODEL)
    assert [p.name for p in every] == ["gm@pls", "classic@exact"]
    assert isinstance(every[1].player, np.ndarray)  # the exact search plays the evaluator itself
    # the play defaults (the pre-move model below 1/64), or the command's --pls-model-above / --pls-leaf-model
    pls = every[0].player
    assert isinstance(pls, PlsPlayer) and pls.model_above == MODEL_ABOVE_PLAY and pls.leaf_model is not None
    np.testing.assert_array_equal(pls.leaf_model.weights, PREMOVE.weights)
    [prior] = entrants(["gm@pls"], [], models=lambda: MODEL, model_above=0.25, leaf_models=leaf_models("prior"))
    assert isinstance(prior.player, PlsPlayer) and prior.player.leaf_model is None and prior.player.model_above == 0.25


def test_the_leaf_model_defaults_to_gm_premove_and_a_full_model_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """``as_player`` plays the pre-move model below ``model_above`` unless told otherwise
    (``prior``: the static prior); ``--pls-leaf-model`` with a model that has weights outside the
    pre-move groups (the full ``gm`` model), or no such file, is refused in one line."""
    player = as_player(GM, "pls")
    assert isinstance(player, PlsPlayer) and player.leaf_model is not None
    np.testing.assert_array_equal(player.leaf_model.weights, PREMOVE.weights)
    prior = as_player(GM, "pls", leaf_model="prior")
    assert isinstance(prior, PlsPlayer) and prior.leaf_model is None
    for bad, said in (("gm", "--pls-leaf-model: gm: not a pre-move model: it has weights in the group 'check'"),
                      ("/no/such/leaf.json", "--pls-leaf-model: /no/such/leaf.json: no such move-model file")):
        code = tuner_main(["bench", "match", "gm@pls", "gm", "--pls-leaf-model", bad, "--games", "2", "--depth", "1"])
        err = capsys.readouterr().err.strip().splitlines()
        assert code != 0 and len(err) == 1 and said in err[0], err
