"""``tuner bench match``: a small real match (PGN, legality, colours, worker independence), the
game-end rules and adjudication, the openings file, the statistics, and games on a clock per
side (``--tc``: time spent, increments, plans from the time left, losses on time)."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import chess
import chess.pgn
import pytest

import tuner.arena.match as match_module
from search.core.convert import legal_moves, move_from_uci
from search.tree.iterative import ClockPlanned, Iteration, TimePlan, tt_bits_for
from search.params.weights import load_weights
from tuner.cli import main as tuner_main
from tuner.arena.match import (
    DEFAULT_OPENINGS,
    TC_OVERHEAD,
    GameRecord,
    MatchConfig,
    Opening,
    OpeningsFileError,
    PairTask,
    elo_of,
    load_openings,
    parse_tc,
    play_game,
    play_with_engines,
    run_match,
    summarize,
)

CLASSIC = load_weights("classic").values
MATERIAL = load_weights("material").values


def task(fen: str, **kw: int) -> PairTask:
    settings = {"depth": 1, "nodes": None, "max_plies": 400, "adjudicate_cp": 1000, "adjudicate_moves": 4, **kw}
    return PairTask(0, Opening("test", fen), CLASSIC, MATERIAL, **settings)  # type: ignore[arg-type]


def test_small_match_pgn_legal_colours_swapped(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "games.pgn"
    code = tuner_main(["bench", "match", "classic", "material", "--games", "4", "--depth", "1",
                       "--workers", "1", "--seed", "3", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    wins, draws, losses = (int(x) for x in printed.split("W/D/L from classic's view: ")[1].split()[0:5:2])
    assert wins + draws + losses == 4
    assert "Elo" in printed and "95% interval" in printed

    games = []
    with out.open() as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            games.append(game)
    assert len(games) == 4
    for game in games:
        assert not game.errors
        board = game.board()
        for move in game.mainline_moves():
            assert move in board.legal_moves
            board.push(move)
        h = game.headers
        assert int(h["PlyCount"]) == board.ply() - game.board().ply()
        result, reason = h["Result"], h["Termination"]
        if reason == "checkmate":
            assert board.is_checkmate() and result == ("0-1" if board.turn == chess.WHITE else "1-0")
        elif reason == "stalemate":
            assert board.is_stalemate() and result == "1/2-1/2"
        elif reason == "threefold repetition":
            assert board.is_repetition(3) and result == "1/2-1/2"
        elif reason == "fifty-move rule":
            assert board.halfmove_clock >= 100 and result == "1/2-1/2"
        elif reason == "insufficient material":
            assert board.is_insufficient_material() and result == "1/2-1/2"
        else:
            assert reason.startswith("adjudication")
        assert {h["White"], h["Black"]} == {"classic", "material"}
    points = sum({"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[g.headers["Result"]] * (g.headers["White"] == "classic")
                 + {"1-0": 0.0, "0-1": 1.0, "1/2-1/2": 0.5}[g.headers["Result"]] * (g.headers["Black"] == "classic")
                 for g in games)
    assert points == wins + draws / 2
    # the two games of each opening: same start, colours swapped
    for first, second in zip(games[0::2], games[1::2]):
        assert first.headers["FEN"] == second.headers["FEN"]
        assert first.headers["Opening"] == second.headers["Opening"]
        assert (first.headers["White"], first.headers["Black"]) == (second.headers["Black"], second.headers["White"])
        assert first.headers["Round"].split(".")[0] == second.headers["Round"].split(".")[0]


def test_same_games_with_one_and_two_workers() -> None:
    openings = load_openings(DEFAULT_OPENINGS)
    one = run_match(CLASSIC, MATERIAL, openings, MatchConfig(games=4, depth=1, workers=1, seed=11))
    two = run_match(CLASSIC, MATERIAL, openings, MatchConfig(games=4, depth=1, workers=2, seed=11))
    assert one == two
    other_seed = run_match(CLASSIC, MATERIAL, openings, MatchConfig(games=4, depth=1, workers=1, seed=12))
    assert [p[0].opening for p in other_seed] != [p[0].opening for p in one]


def test_fifty_move_rule_ends_the_game() -> None:
    game = play_game(task("7k/8/8/8/8/8/R7/K7 w - - 99 80"), "A", "1.1")
    assert game.moves and len(game.moves) == 1
    assert (game.result, game.termination) == ("1/2-1/2", "fifty-move rule")


def test_checkmate_is_found_and_scored() -> None:
    # White mates in one (Ra8#); A (classic) plays White
    game = play_game(task("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"), "A", "1.1")
    assert (game.moves, game.result, game.termination) == (("a1a8",), "1-0", "checkmate")
    assert game.points_a == 1.0 and game.scores[0][0] == 100_001  # mate in 1, White's view


def test_the_kernels_load_before_the_first_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wave five, found against Stockfish at 100 ms a move: loading the kernels from numba's
    cache (about 0.7 s) ate the first move's time of each match worker, whose move then came from
    an iteration cut at depth 1. Now both in-process players load them before the game."""
    loaded: list[tuple[object, int]] = []
    moves_made: list[int] = []
    real_new_engine = match_module.new_engine

    sizes: list[int] = []

    def counting_engine(player, tt_bits):  # type: ignore[no-untyped-def]
        sizes.append(tt_bits)
        engine = real_new_engine(player, tt_bits)
        think = engine.think

        def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            moves_made.append(1)
            return think(*args, **kwargs)
        engine.think = counted  # type: ignore[method-assign]
        return engine

    monkeypatch.setattr(match_module, "load_kernels", lambda player: loaded.append((player, len(moves_made))))
    monkeypatch.setattr(match_module, "new_engine", counting_engine)
    game = play_game(task(chess.STARTING_FEN, adjudicate_moves=0, max_plies=2), "A", "1.1")
    assert len(game.moves) == 2 and len(moves_made) == 2
    assert [before for _, before in loaded] == [0, 0]  # both before the first move
    assert {id(p) for p, _ in loaded} == {id(CLASSIC), id(MATERIAL)}
    # the table: tuner uci's default Hash (16 MiB), or the match's --hash (was 2**16 entries,
    # a sixteenth of it, for the playing search a 512 KiB table at 100,000 nodes a move)
    assert sizes == [tt_bits_for(16)] * 2 == [20, 20]
    play_game(task(chess.STARTING_FEN, adjudicate_moves=0, max_plies=1, hash_mb=1), "A", "1.1")
    assert sizes[2:] == [tt_bits_for(1)] * 2
    with pytest.raises(ValueError, match="hash must be between 1 and 1024 MiB, not 0"):
        MatchConfig(games=2, depth=1, hash=0).validate()


def test_load_kernels_answers_for_every_search() -> None:
    from tuner.arena.players import as_player, load_kernels

    for search in ("play", "exact", "pls"):
        load_kernels(as_player(CLASSIC, search))


def test_adjudication_rules() -> None:
    fen = "4k3/8/8/8/8/8/QQ6/4K3 w - - 0 1"
    won = play_game(task(fen, adjudicate_moves=1), "B", "1.2")
    assert won.result == "1-0" and won.termination.startswith("adjudication: both engines")
    assert len(won.moves) == 2 and all(cp >= 1000 for cp, _ in won.scores)
    assert won.points_a == 0.0  # B had White
    capped = play_game(task(chess.STARTING_FEN, adjudicate_moves=0, max_plies=3), "A", "1.1")
    assert (len(capped.moves), capped.result) == (3, "1/2-1/2")
    assert capped.termination == "adjudication: draw after 3 plies"


def test_shipped_openings_are_many_distinct_and_playable() -> None:
    openings = load_openings(DEFAULT_OPENINGS)
    assert len(openings) >= 100
    assert len({o.fen for o in openings}) == len(openings) and len({o.name for o in openings}) == len(openings)
    for o in openings:
        board = chess.Board(o.fen)
        assert board.is_valid() and not board.is_game_over()


def test_openings_file_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "o.epd"
    path.write_text("# comment\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\n"
                    "8/8/8/4k3/8/8/4K3/8 w - - 0 1\n")
    with pytest.raises(OpeningsFileError, match=r"o\.epd: line 3: the game is already over"):
        load_openings(path)
    path.write_text("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\nnot a position\n")
    with pytest.raises(OpeningsFileError, match=r"line 2: not a FEN or EPD"):
        load_openings(path)
    path.write_text("")
    with pytest.raises(OpeningsFileError, match="no positions"):
        load_openings(path)


def test_config_errors(capsys) -> None:  # type: ignore[no-untyped-def]
    assert tuner_main(["bench", "match", "classic", "material", "--games", "3", "--depth", "1"]) == 2
    assert tuner_main(["bench", "match", "classic", "material", "--games", "2"]) == 2
    assert tuner_main(["bench", "match", "classic", "material", "--depth", "1", "--nodes", "9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(e.startswith("tuner bench: error: ") for e in err)


def _pair(points_a: tuple[float, float]) -> tuple[GameRecord, GameRecord]:
    op = Opening("x", chess.STARTING_FEN)
    white_result = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}
    first = GameRecord("1.1", op, "A", (), (), white_result[points_a[0]], "test")
    second = GameRecord("1.2", op, "B", (), (), white_result[1.0 - points_a[1]], "test")
    return first, second


def test_summary_pentanomial_and_elo() -> None:
    pairs = [_pair(p) for p in [(1, 1), (1, 0.5), (0.5, 0.5), (1, 0), (0, 0.5), (1, 1), (0.5, 1), (1, 0.5)]]
    s = summarize(pairs)
    assert (s.wins, s.draws, s.losses) == (8, 6, 2)
    assert s.pentanomial == (0, 1, 2, 3, 2)
    assert s.score == pytest.approx(11 / 16)
    per_pair = [1.0, 0.75, 0.5, 0.5, 0.25, 1.0, 0.75, 0.75]
    mean = sum(per_pair) / 8
    se = math.sqrt(sum((x - mean) ** 2 for x in per_pair) / 8) / math.sqrt(8)
    assert (s.score_low, s.score_high) == pytest.approx((mean - 1.96 * se, mean + 1.96 * se))
    assert s.elo == pytest.approx(-400 * math.log10(16 / 11 - 1))
    assert s.elo_low < s.elo < s.elo_high
    assert elo_of(0.5) == 0.0 and elo_of(0.75) == pytest.approx(190.85, abs=0.01)
    assert elo_of(1.0) == math.inf and summarize([_pair((1, 1))]).to_json()["elo"] is None


def test_pgn_text_is_parseable_without_files() -> None:
    from tuner.arena.match import to_pgn

    game = play_game(task("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"), "A", "1.1")
    parsed = chess.pgn.read_game(io.StringIO(str(to_pgn(game, {"A": "classic", "B": "material"}, "t"))))
    assert parsed is not None and parsed.headers["Termination"] == "checkmate"
    assert parsed.end().board().is_checkmate()


def test_sprt_stops_a_clear_match_early(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from tuner.arena.sprt import Sprt, llr

    fast = ["--depth", "1", "--adjudicate-cp", "400", "--adjudicate-moves", "1", "--workers", "1"]
    assert tuner_main(["bench", "match", "classic", "material", "--games", "400", *fast, "--sprt", "0", "10", "0.05",
                       "0.05", "--out", str(tmp_path / "a.pgn")]) == 0
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("SPRT"))
    test = Sprt(0, 10, 0.05, 0.05)
    assert f"bounds {test.lower:.3f} .. {test.upper:.3f}" in line and "H1 accepted" in line
    assert tuner_main(["bench", "match", "classic", "material", "--games", "400", *fast, "--sprt", "0", "10", "0.05",
                       "0.05", "--out", str(tmp_path / "b.pgn"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sprt = doc["sprt"]
    assert sprt["decision"] == "H1" and doc["games"] < 400 and sprt["pairs"] == doc["games"] // 2
    assert sprt["llr"] == pytest.approx(llr(doc["pentanomial"], 0, 10), abs=1e-4)
    # classic is hundreds of Elo above material: the score's interval excludes both 0 and 10 long
    # before the LLR reaches its bound (issue 58 item 13), and the line says so
    assert sprt["stop"] == "interval" and sprt["llr"] < sprt["upper"] and "likelihood interval lies above elo1" in line
    assert test.check(doc["pentanomial"]).decision == "H1"
    assert f"LLR {sprt['llr']:.3f}" in line
    # it stopped at the first pair that decided: without the last pair the test is inconclusive
    with (tmp_path / "b.pgn").open() as fh:
        games = []
        while (game := chess.pgn.read_game(fh)) is not None:
            games.append(game)
    assert len(games) == doc["games"]
    first_pairs = [sum(_points(g) for g in games[k:k + 2]) for k in range(0, len(games) - 2, 2)]
    counts = [first_pairs.count(p / 2) for p in range(5)]
    assert test.lower < llr(counts, 0, 10) < test.upper and test.check(counts).decision == "inconclusive"


def _points(game: chess.pgn.Game) -> float:
    """classic's points in a game of the PGN."""
    white = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[game.headers["Result"]]
    return white if game.headers["White"] == "classic" else 1.0 - white


def test_sprt_stops_at_the_same_pair_with_one_and_two_workers() -> None:
    from tuner.arena.sprt import Sprt

    openings = load_openings(DEFAULT_OPENINGS)
    settings = {"games": 60, "depth": 1, "adjudicate_cp": 400, "adjudicate_moves": 1, "seed": 5}
    test = Sprt(0, 200, 0.05, 0.05)  # a wide test: stops after a few pairs
    one = run_match(CLASSIC, MATERIAL, openings, MatchConfig(workers=1, **settings), sprt=test)  # type: ignore[arg-type]
    two = run_match(CLASSIC, MATERIAL, openings, MatchConfig(workers=2, **settings), sprt=test)  # type: ignore[arg-type]
    assert one == two and len(one) < 30
    assert test.check(summarize(one).pentanomial).decision == "H1"
    assert test.check(summarize(one[:-1]).pentanomial).decision == "inconclusive"
    assert tuner_main(["bench", "match", "classic", "material", "--depth", "1", "--sprt", "10", "0", "0.05",
                       "0.05"]) == 2


def test_default_pgn_names_of_run_folders_do_not_collide() -> None:
    from tuner.arena.match import default_pgn_path

    assert default_pgn_path("results/run-a/weights.json", "results/run b/weights.json").name == \
        "match-run-a-vs-run_b.pgn"
    assert default_pgn_path("classic", "mine/tuned.json").name == "match-classic-vs-tuned.pgn"
    assert default_pgn_path("weights.json", "gm").name == "match-weights-vs-gm.pgn"  # no folder to name it by


def test_pgn_scores_are_the_movers_as_cutechess_writes_them() -> None:
    import re

    from tuner.arena.match import score_comment, to_pgn

    # Black to move with two queens: both engines see Black far ahead; adjudicated after 2 plies
    game = play_game(task("4k3/qq6/8/8/8/8/8/4K3 b - - 0 1", adjudicate_moves=1), "A", "1.1")
    assert len(game.moves) == 2 and game.result == "0-1"
    assert game.scores[0][0] <= -1000 and game.scores[1][0] <= -1000  # the record: White's view
    parsed = chess.pgn.read_game(io.StringIO(str(to_pgn(game, {"A": "classic", "B": "material"}, "t"))))
    assert parsed is not None
    comments = [node.comment for node in parsed.mainline()]
    cutechess = re.compile(r"^(\+?\d+\.\d\d|-\d+\.\d\d|0\.00|[+-]M\d+)/\d+$")
    assert all(cutechess.match(c) for c in comments), comments
    black, white = (float(c.split("/")[0].replace("M", "1000")) for c in comments)
    assert black > 10 and white < -10  # each from the mover's view: Black ahead, White behind
    mate = play_game(task("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"), "A", "1.1")
    assert to_pgn(mate, {"A": "a", "B": "b"}, "t").next().comment.startswith("+M1/")  # type: ignore[union-attr]
    assert [score_comment(cp, 3) for cp in (35, 0, -120, 100_002, -100_004)] == \
        ["+0.35/3", "0.00/3", "-1.20/3", "+M2/3", "-M4/3"]


# ---------------------------------------------------------------- a clock per side (--tc)

#: 30 plies of a Ruy Lopez that end nothing (checked with python-chess when the test was written)
RUY_LOPEZ = ("e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1 b7b5 a4b3 d7d6 c2c3 e8g8 h2h3 c6a5 "
             "b3c2 c7c5 d2d4 d8c7 b1d2 c5d4 c3d4 a5c6 d2b3 a6a5 c1e3 a5a4").split()


class _FakeClock:
    """The match's ``_clock``: time passes only when a stand-in engine spends it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _SpendingEngine(ClockPlanned):
    """A stand-in engine: plays ``line`` (the first legal move after it) and spends ``cost``
    seconds of the fake clock a move, recording each plan it is given."""

    def __init__(self, clock: _FakeClock, cost: float, line: list[str] | None = None, by_ply: bool = True) -> None:
        self.clock, self.cost, self.line, self.plan_by_ply = clock, cost, line or [], by_ply
        self.plans: list[TimePlan | None] = []

    def think(self, b, keys, *, max_depth, node_limit, plan):  # type: ignore[no-untyped-def]
        self.plans.append(plan)
        self.clock.now += self.cost
        ply = len(keys)
        m = move_from_uci(b, self.line[ply]) if ply < len(self.line) else int(legal_moves(b)[0])
        return Iteration(1, 0, (m,), 1, 1, 0.0)


def _clock_game(monkeypatch: pytest.MonkeyPatch, fen: str, tc: tuple[float, float], cost: float,
                line: list[str] | None = None) -> tuple[GameRecord, _SpendingEngine, _SpendingEngine]:
    """A game of ``A`` (White, plans by the ply) against ``B`` (a thirtieth of its time a move)."""
    clock = _FakeClock()
    monkeypatch.setattr(match_module, "_clock", clock)
    engines = {"A": _SpendingEngine(clock, cost, line), "B": _SpendingEngine(clock, cost, line, by_ply=False)}
    clock_task = PairTask(0, Opening("t", fen), CLASSIC, MATERIAL, None, None, 400, 1000, 4, tc=tc)
    return play_with_engines(clock_task, "A", "1.1", engines), engines["A"], engines["B"]  # type: ignore[arg-type]


def test_a_clock_runs_down_by_the_time_spent_and_gains_the_increment(monkeypatch: pytest.MonkeyPatch) -> None:
    """1 s + 0.1 s a side, 0.17 s a move: before White's k-th move its clock shows
    1 - 0.07 (k - 1) s, so its 13th move overruns it (0.16 s left, 0.17 s spent): White loses
    on time after 24 plies, and each plan was made from the clock as it stood and, for White
    (which plans by the ply), the game's ply; Black's by its clock alone."""
    game, white, black = _clock_game(monkeypatch, chess.STARTING_FEN, (1.0, 0.1), 0.17, RUY_LOPEZ)
    assert (len(game.moves), game.result, game.termination) == (24, "0-1", "loss on time")
    assert game.moves == tuple(RUY_LOPEZ[:24])
    assert (len(white.plans), len(black.plans)) == (13, 12)
    for k, plan in enumerate(white.plans):
        expected = TimePlan.for_clock(1.0 - 0.07 * k, 0.1, None, TC_OVERHEAD, ply=2 * k)
        assert plan is not None and (plan.soft, plan.hard) == pytest.approx((expected.soft, expected.hard))
        assert not plan.fill
    for k, plan in enumerate(black.plans):
        expected = TimePlan.for_clock(1.0 - 0.07 * k, 0.1, None, TC_OVERHEAD)
        assert plan is not None and (plan.soft, plan.hard) == pytest.approx((expected.soft, expected.hard))
    # the two allocations differ: by the ply, the first move gets less than a thirtieth
    assert white.plans[0] is not None and black.plans[0] is not None
    assert white.plans[0].soft < black.plans[0].soft


def test_running_out_against_a_bare_king_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    lost, _, _ = _clock_game(monkeypatch, "4k3/8/8/8/8/8/8/4K2Q b - - 0 1", (1.0, 0.0), 1.5)
    assert (lost.moves, lost.result, lost.termination) == ((), "1-0", "loss on time")
    drawn, _, _ = _clock_game(monkeypatch, "4k3/8/8/8/8/8/8/4K2Q w - - 0 1", (1.0, 0.0), 1.5)
    assert (drawn.moves, drawn.result) == ((), "1/2-1/2")
    assert drawn.termination == "time forfeit against insufficient material"


def test_tc_is_parsed_and_checked(capsys) -> None:  # type: ignore[no-untyped-def]
    assert parse_tc("10+0.1") == (10.0, 0.1) and parse_tc("3") == (3.0, 0.0)
    for bad in ("x+1", "0+1", "10+-1", "", "1+2+3"):
        with pytest.raises(ValueError, match="tc"):
            parse_tc(bad)
    MatchConfig(games=2, tc="1+0.01").validate()
    with pytest.raises(ValueError, match="exactly one of"):
        MatchConfig(games=2, tc="1+0.01", depth=2).validate()
    assert tuner_main(["bench", "match", "classic", "material", "--games", "2", "--tc", "fast"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tuner bench: error: ") and "BASE+INC" in err[0]


def test_a_small_match_on_a_clock_plays_legal_games(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Real engines at 2 s + 0.05 s a side for 30 plies: the games are legal and end by the
    rules, adjudication or a loss on time (how they end depends on the machine's speed)."""
    openings = load_openings(DEFAULT_OPENINGS)
    pairs = run_match(CLASSIC, MATERIAL, openings, MatchConfig(games=2, tc="2+0.05", workers=1, max_plies=30))
    assert len(pairs) == 1
    for game in pairs[0]:
        board = chess.Board(game.opening.fen)
        for uci in game.moves:
            move = chess.Move.from_uci(uci)
            assert move in board.legal_moves
            board.push(move)
        assert game.result in ("1-0", "0-1", "1/2-1/2") and len(game.moves) <= 30
        assert game.termination in ("adjudication: draw after 30 plies", "loss on time", "checkmate",
                                    "threefold repetition") or game.termination.startswith("adjudication")
        assert all(depth >= 1 for _, depth in game.scores)


@pytest.mark.parametrize("fen", ["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 " + "9" * 30,
                                 "4k3/8/8/8/8/8/8/4K2R w K - 0 2147483648"], ids=["fullmove-huge", "fullmove-2-31"])
@pytest.mark.parametrize("kind", ["epd", "pgn"])
def test_an_opening_the_search_refuses_is_one_line_before_any_game(fen: str, kind: str, tmp_path: Path) -> None:
    """Probe finding (issue 58 re-run): a FEN counter python-chess takes but the search does not
    was an ``InvalidFenError`` traceback from the first game's worker."""
    path = tmp_path / f"o.{kind}"
    path.write_text(f"{fen}\n" if kind == "epd" else f'[FEN "{fen}"]\n[SetUp "1"]\n\n*\n\n')
    with pytest.raises(OpeningsFileError, match=r"o\.(epd|pgn): line 1: not a position the search plays"):
        load_openings(path)
