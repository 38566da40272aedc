"""``tuner uci`` with ``Search pls`` (the probability-limited search): the options, every ``go``
limit through python-chess's ``chess.engine`` against the real subprocess, ``go depth D`` as the
in-process search to the threshold ``PlsStart * 4**-(D - 1)``, and bad option values answered
with ``info string`` (in process)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import chess
import chess.engine
import pytest

from search.core.convert import from_chess, move_to_uci
from search.tree.iterative import Searcher, tt_bits_for
from search.pls.move_model import load_move_model
from search.play.searcher import PlaySearcher
from search.pls.pls import LEAF_MODEL_PLAY, MODEL_ABOVE_PLAY, START, PlsSearcher
from search.params.weights import load_weights
from tests.tuner.test_uci import MIDDLE_GAME, UCI_COMMAND
from tuner.uci import (DEFAULT_HASH_MB, DEFAULT_OVERHEAD_MS, DEFAULT_TIME_PLAN, OPTIONS, UciEngine,
                       parse_threshold)


@pytest.fixture(scope="module")
def pls_engine() -> Iterator[chess.engine.SimpleEngine]:
    with chess.engine.SimpleEngine.popen_uci(UCI_COMMAND, timeout=120) as engine:
        engine.configure({"Search": "pls"})
        engine.ping()  # waits for the warm-up: the first go's clock does not pay for loading kernels
        yield engine


def test_the_options_are_advertised(pls_engine: chess.engine.SimpleEngine) -> None:
    options = pls_engine.options
    assert options["Search"].type == "combo" and options["Search"].default == "play"
    assert set(options["Search"].var or ()) == {"play", "exact", "pls", "depth"}  # depth: exact's old name
    assert options["MoveModel"].default == "gm"
    assert options["PlsStart"].default == str(START)
    assert options["PlsModelAbove"].default == str(MODEL_ABOVE_PLAY)
    assert options["PlsLeafModel"].default == LEAF_MODEL_PLAY == "gm-premove"


@pytest.mark.parametrize("limit", [chess.engine.Limit(depth=2), chess.engine.Limit(nodes=2000),
                                   chess.engine.Limit(time=0.1),
                                   chess.engine.Limit(white_clock=3.0, black_clock=3.0, white_inc=0.05,
                                                      black_inc=0.05)], ids=["depth", "nodes", "movetime", "clock"])
def test_every_limit_gives_a_legal_move(pls_engine: chess.engine.SimpleEngine, limit: chess.engine.Limit) -> None:
    board = chess.Board(MIDDLE_GAME)
    result = pls_engine.play(board, limit, info=chess.engine.INFO_ALL)
    assert result.move is not None and result.move in board.legal_moves
    if limit.depth is not None:
        assert result.info.get("depth") == 2
    if limit.nodes is not None:
        assert 0 < result.info["nodes"] <= 2000


def test_go_depth_is_the_threshold_schedule(pls_engine: chess.engine.SimpleEngine) -> None:
    """``go depth 3`` after ``PlsStart 1/8``: the in-process search's three iterations from 1/8
    (1/8, 1/32, 1/128) with the same weights, model and table size: the same nodes and move."""
    pls_engine.configure({"PlsStart": "1/8"})
    board = chess.Board(MIDDLE_GAME)
    info = pls_engine.analyse(board, chess.engine.Limit(depth=3), game=object())  # a new game: table cleared
    searcher = PlsSearcher(load_weights("classic").values, load_move_model("gm"),
                           tt_bits=tt_bits_for(DEFAULT_HASH_MB), start=1 / 8, model_above=MODEL_ABOVE_PLAY,
                           leaf_model=load_move_model(LEAF_MODEL_PLAY))
    best = searcher.think(from_chess(board), [], max_depth=3)
    assert best is not None and info["depth"] == 3
    assert info["nodes"] == best.total_nodes and info["pv"][0].uci() == move_to_uci(best.pv[0])
    assert info["score"].relative.score() == best.score_cp
    pls_engine.configure({"PlsStart": str(START)})


def test_bad_option_values_are_answered_and_kept() -> None:
    """A value an option refuses is answered in one info string that says why and names the
    value kept, whatever the option's type (a combo's outside its vars, a spin's out of range or
    not a number, a string its setter refuses)."""
    out = io.StringIO()
    engine = UciEngine(load_weights("classic").values, out=out)
    for line, said in (("setoption name Search value breadth", "is not one of play, exact, pls, depth; keeping play"),
                       ("setoption name TimePlan value sixty", f"is not one of ply, thirty; keeping {DEFAULT_TIME_PLAN}"),
                       ("setoption name Hash value 0", "value 0 is not between"),
                       ("setoption name MoveOverhead value soon", "value 'soon' is not an integer"),
                       ("setoption name Weights", "setoption Weights: no value given; keeping classic"),
                       ("setoption name PlsStart value 2", "not a probability"),
                       ("setoption name PlsStart value abc", "not a number"),
                       ("setoption name PlsModelAbove value 1.5", "not a probability"),
                       ("setoption name MoveModel value /no/such/model.json", "no such move-model file"),
                       ("setoption name PlsLeafModel value /no/such/model.json", "no such move-model file"),
                       ("setoption name PlsLeafModel value gm", "gm: not a pre-move model: it has weights in the "
                                                                "group 'check'")):
        engine.handle(line)
        last = out.getvalue().splitlines()[-1]
        assert last.startswith("info string setoption ") and said in last, (line, last)
        option = next(o for o in OPTIONS if o.key == line.split()[2].lower())
        assert last.endswith(f"; keeping {option.current(engine)}"), (line, last)
    assert engine.hash_mb == DEFAULT_HASH_MB and engine.overhead_ms == DEFAULT_OVERHEAD_MS
    assert engine.weights_name == "classic" and engine.leaf_model_name == LEAF_MODEL_PLAY
    assert engine.search == "play" and engine.pls_start == START and engine.move_model_name == "gm"
    engine.handle("setoption name Search value pls")
    engine.handle("setoption name PlsStart value 0.0625")
    assert isinstance(engine.searcher, PlsSearcher) and engine.searcher.start == 0.0625
    assert engine.searcher.model_above == MODEL_ABOVE_PLAY
    for value, p in (("0", 0.0), ("1/16", 1 / 16), ("1", 1.0)):
        engine.handle(f"setoption name PlsModelAbove value {value}")
        assert isinstance(engine.searcher, PlsSearcher) and engine.searcher.model_above == p
    leaf = engine.searcher.leaf_model
    assert leaf is not None and leaf.metadata["config"]["groups"] == ["premove"]  # the default: gm-premove
    engine.handle("setoption name PlsLeafModel value prior")
    assert isinstance(engine.searcher, PlsSearcher) and engine.searcher.leaf_model is None
    assert engine.leaf_model_name == "prior"
    engine.handle("setoption name PlsLeafModel value gm-premove")
    assert isinstance(engine.searcher, PlsSearcher) and engine.searcher.leaf_model is not None
    engine.handle("setoption name Search value depth")
    assert isinstance(engine.searcher, Searcher) and engine.search == "exact"
    engine.handle("setoption name Search value Play")
    assert isinstance(engine.searcher, PlaySearcher) and engine.search == "play"


def test_parse_threshold() -> None:
    assert parse_threshold("1/32") == parse_threshold("0.03125") == 1 / 32
    for bad in ("0", "1/0", "-0.5", "x/2", ""):
        with pytest.raises(ValueError):
            parse_threshold(bad)
