"""TD-Leaf(lambda) of a network (tuner/methods/network_tdleaf.py): the differences' weights are
KnightCap's double sum, a game's update direction is the derivative of sum_t c_t J_t (c_t held)
by central finite differences of the float network at the stored PV leaves, and through the
command line self-play and position runs train the network, are deterministic, resume bit for
bit, and refuse what a network cannot do in one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import chess
import numpy as np
import pytest

from objectives.network import input_table, network_scores
from search.core.board import W_STM
from search.params.catalog import PHASE_MAX
from search.core.convert import from_fen
from search.evaluation.evaluators import load_evaluator, same_evaluator
from search.evaluation.network import QuantizedNetwork, quantize, read_network
from search.tree.search_api import search
from tuner.cli import main
from tuner.methods.bootstrap import Tally
from tuner.methods.network_tdleaf import GameTrace, Searched, game_direction, td_coefficients

SCALE = 400.0


def test_td_coefficients_are_knightcaps_double_sum() -> None:
    rng = np.random.default_rng(0)
    j = np.tanh(rng.normal(size=9))
    result, lam = -1.0, 0.7
    d, c = td_coefficients(j, result, lam)
    full = np.append(j, result)
    assert np.allclose(d, [full[t + 1] - full[t] for t in range(9)], rtol=0, atol=1e-15)
    by_hand = [sum(lam ** (k - t) * d[k] for k in range(t, 9)) for t in range(9)]
    assert np.allclose(c, by_hand, rtol=1e-13, atol=1e-15)
    # summed with the weights held, the d_t telescope: with lambda = 1 every c_t is result - J_t
    _, c1 = td_coefficients(j, result, 1.0)
    assert np.allclose(c1, result - j, rtol=0, atol=1e-12)


def _net(seed: int) -> QuantizedNetwork:
    """A pure 16x8x8 network with every layer random and large enough to score positions apart."""
    net = load_evaluator(f"network:16x8x8@{seed}")
    assert isinstance(net, QuantizedNetwork)
    f = net.dequantize()
    rng = np.random.default_rng(seed)
    v = f.vector()
    lim = 0.9 * f.limits_vector()  # inside the limits: finite differences see no clamp
    v = np.clip(v + rng.normal(0.0, 0.3, v.shape), -lim, lim)
    return quantize(f.with_vector(v), dict(net.metadata))


def _game_trace(net: QuantizedNetwork, depth: int) -> tuple[GameTrace, list[int], list[np.ndarray]]:
    """The trace of depth-``depth`` searches along the first 14 plies of the Opera game, as the
    trainer's ``learn`` builds it, and each search's root mover (+1 White)."""
    from tuner.methods.network_tdleaf import NetworkTDLeafTrainer

    board = chess.Board()
    trace = GameTrace()
    whites, roots = [], []
    moves = "e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7".split()
    learner = object.__new__(NetworkTDLeafTrainer)  # learn() reads only the settings below
    learner.td = type("Cfg", (), {"td_scale": SCALE})()  # type: ignore[assignment]
    for san in moves:
        b = from_fen(board.fen())
        r = search(b, depth, net, tt_bits=12)
        rec = Searched(tuple(int(m) for m in r.pv), int(r.score), int(r.nodes), depth, int(r.kind), r.leaf)
        learner.learn(rec, b, trace, Tally())
        whites.append(1 if board.turn == chess.WHITE else -1)
        roots.append(b)
        board.push_san(san)
    return trace, whites, roots


@pytest.mark.parametrize("depth", [1, 2])
def test_the_games_direction_is_the_derivative_of_sum_c_j(depth: int) -> None:
    net = _net(3)
    trace, whites, roots = _game_trace(net, depth)
    assert sum(s != 0.0 for s in trace.slope) >= 10
    f = net.dequantize()
    buckets = net.shape.bucket_table
    leaves = np.array(trace.leaves, dtype=np.uint64)
    table = input_table(leaves, buckets)
    # J_t = white * tanh(score / scale), score = (the leaf's value, its mover's view) times +1 when
    # the leaf's side to move is the root's: its derivative in the leaf's value, by central
    # differences, is the trainer's slope
    out = network_scores(f, table)
    for t, slope in enumerate(trace.slope):
        if slope == 0.0:
            continue
        same = 1.0 if leaves[t][W_STM] == roots[t][W_STM] else -1.0
        x = math.atanh(whites[t] * trace.j[t]) * SCALE * same  # the leaf's value (cp) the search saw
        h = 1e-3
        fd = (whites[t] * math.tanh(same * (x + h) / SCALE) - whites[t] * math.tanh(same * (x - h) / SCALE)) / (2 * h)
        assert slope == pytest.approx(fd, rel=1e-6)
        assert abs(x - out[t]) < 4.0  # the float network at the leaf: the search's value up to quantization
    result, lam = 1.0, 0.7
    # off the quantization grid: there an accumulator can sit exactly on a clip's corner, where
    # the kernels take the slope 0 and central differences see half of it
    f = f.with_vector(f.vector() + np.random.default_rng(5).normal(0.0, 1e-6, f.size))
    direction, _ = game_direction(trace, result, lam, f, buckets)
    _, c = td_coefficients(np.array(trace.j), result, lam)
    coef = c * np.array(trace.slope)

    def g(v: np.ndarray) -> float:  # sum_t c_t dJ_t/d out_t * out_t(v): its gradient is D
        return float(np.sum(coef * network_scores(f.with_vector(v), table)))

    v0 = f.vector()
    rng = np.random.default_rng(4)
    for _ in range(3):
        u = rng.normal(size=v0.shape)
        u /= np.linalg.norm(u)
        eps = 1e-6
        fd = (g(v0 + eps * u) - g(v0 - eps * u)) / (2 * eps)
        assert float(direction @ u) == pytest.approx(fd, rel=1e-5, abs=1e-9)


def tune(data: Path, run: Path, *extra: str) -> int:
    return main(["tune", "--method", "tdleaf", "--data", str(data), "--out", str(run), "--quiet",
                 "--max-validation", "40", "--threads", "1", "--keep", "last", *extra])


def _metrics(run: Path) -> list[dict]:  # type: ignore[type-arg]
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in d.items() if not k.endswith("seconds")} for d in lines]


SELFPLAY = ("--games", "1", "--max-plies", "14", "--search-depth", "1", "--start", "network:16x8x8@5",
            "--network-lr", "0.01")


def test_selfplay_trains_the_network_deterministically_and_resumes_bit_for_bit(sample_set: Path,
                                                                                 tmp_path: Path) -> None:
    a, b, cut = tmp_path / "a", tmp_path / "b", tmp_path / "cut"
    assert tune(sample_set, a, "--iterations", "3", *SELFPLAY) == 0
    assert tune(sample_set, b, "--iterations", "3", *SELFPLAY) == 0
    assert same_evaluator(read_network(a / "weights.mtnn"), read_network(b / "weights.mtnn"))
    assert _metrics(a) == _metrics(b)
    rows = _metrics(a)
    assert [r["iteration"] for r in rows] == [0, 1, 2, 3]
    assert all(r["games"] == 1 and r["searches"] == 14 and r["games_updated"] == 1 for r in rows[1:])
    assert all(r["weight_change"] > 0 for r in rows[1:])
    start = load_evaluator("network:16x8x8@5")
    assert isinstance(start, QuantizedNetwork)
    end = read_network(a / "weights.mtnn")
    assert not np.array_equal(end.dequantize().vector(), start.dequantize().vector())
    assert tune(sample_set, cut, "--iterations", "1", *SELFPLAY) == 0
    assert main(["tune", "--resume", str(cut), "--iterations", "3", "--quiet"]) == 0
    assert same_evaluator(read_network(cut / "weights.mtnn"), end)
    state_cut, state_a = (json.loads((r / "state.json").read_text())["extra"]["trainer"] for r in (cut, a))
    assert state_cut["master"] == state_a["master"] and state_cut["optimizer"] == state_a["optimizer"]
    assert _metrics(cut) == rows


def test_positions_walk_whole_games_towards_their_results(sample_set: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert tune(sample_set, run, "--source", "positions", "--positions", "30", "--iterations", "1",
                "--search-depth", "1", "--start", "network:16x8x8@6") == 0
    row = _metrics(run)[1]
    assert row["games"] >= 1 and row["plies"] == row["searches"] >= 30
    assert row["games_updated"] == row["games"] and row["weight_change"] > 0
    assert not (run / "selfplay").exists()


def test_a_node_limit_is_refused_in_one_line(sample_set: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert tune(sample_set, tmp_path / "run", "--nodes", "1000", "--start", "network:16x8x8") != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--nodes" in err[0] and "Traceback" not in err[0]


def test_the_mate_verdict_enters_as_plus_minus_one_without_gradient() -> None:
    # White mates in one: the depth-1 search's verdict is a mate, J = +1 and no slope
    from tuner.methods.network_tdleaf import NetworkTDLeafTrainer

    b = from_fen("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    r = search(b, 1, _net(7))
    assert r.mate_in is not None
    learner = object.__new__(NetworkTDLeafTrainer)
    learner.td = type("Cfg", (), {"td_scale": SCALE})()  # type: ignore[assignment]
    trace = GameTrace()
    learner.learn(Searched(tuple(int(m) for m in r.pv), int(r.score), int(r.nodes), 1, int(r.kind), r.leaf), b,
                  trace, Tally())
    assert trace.j == [1.0] and trace.slope == [0.0]
    assert math.isfinite(PHASE_MAX)
