"""MMTO with a network evaluator (tuner/methods/network_mmto.py, objectives/network_moves.py): the stored
leaves reproduce the search's scores, the objective's gradient equals finite differences of the
objective at the stored leaves, and of fresh searches (the PV leaves held, Danskin's theorem:
the derivative of a minimax value is that of its PV leaf)."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from objectives.mmto import sweep_loss
from objectives.network_moves import network_objective, row_scores
from search.params.catalog import PHASE_MAX
from search.core.convert import from_chess
from search.evaluation.network import FloatNetwork, NetworkShape, quantize
from tests.conftest import played_positions
from search.core.convert import uci_key
from search.tree.search_api import move_indices, sweep
from search.params.weights import load_weights
from tuner.methods.network_mmto import concatenate_tables, network_search_chunk

SHAPE = NetworkShape(h=16, h2=8, h3=8, buckets="none")
SLOPE = 0.05


@pytest.fixture(scope="module")
def sample(real_games: list[list[chess.Move]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """200 positions of the shipped games (every 11th from ply 16), each played move's index
    among the legal moves, and results (some missing)."""
    positions, moves, _ = played_positions(real_games, 10**9)
    boards = np.stack([from_chess(b) for b in positions[5::11][:200]])
    index = move_indices(boards, np.array([uci_key(m.uci()) for m in moves[5::11][:200]], dtype=np.int32))
    assert np.all(index >= 0)
    results = np.where(np.arange(len(boards)) % 3 == 0, np.nan, (np.arange(len(boards)) % 3) / 2.0)
    return boards, index.astype(np.int64), results


def _net(seed: int, *, linear: bool) -> FloatNetwork:
    """A hybrid (classic + network) or pure network with a non-trivial output layer."""
    lin = load_weights("classic").values if linear else None
    f = FloatNetwork.initial(SHAPE, seed=seed, linear=lin)
    rng = np.random.default_rng(seed)
    return f.with_vector(f.vector() + rng.normal(0, 0.02, f.size)).clamped()


@pytest.mark.parametrize("linear", [True, False])
def test_stored_leaves_reproduce_the_search_scores(sample: tuple[np.ndarray, ...], linear: bool) -> None:
    boards, index, results = sample
    f = _net(3, linear=linear)
    q = quantize(f)
    chunk = network_search_chunk(boards, index, results, net=q, depth=1, budget=10**6, slope=SLOPE, window=0.0)
    sw = sweep(boards, 1, q)
    assert chunk.rows == len(sw.scores) == int(chunk.table.pos_ptr[-1])  # window 0: every row kept
    # the float form of the dequantized network, at the stored leaves, is the search's score up to
    # the integer rounding of docs/network.md (a few eval units here)
    s = row_scores(chunk.table, q.dequantize())
    assert np.abs(s - sw.scores).max() <= 3 * PHASE_MAX
    verdict = chunk.table.sign == 0
    assert np.array_equal(s[verdict], sw.scores[verdict].astype(np.float64))
    assert chunk.j_sum / len(boards) == pytest.approx(
        sweep_loss(sw.pos_ptr, sw.pos_ptr[:-1] + index, sw.scores, SLOPE, PHASE_MAX, loss="softmax"))
    # a window keeps fewer rows, always the played ones
    narrow = network_search_chunk(boards, index, results, net=q, depth=1, budget=10**6, slope=SLOPE, window=50.0)
    assert 0 < narrow.table.pos_ptr[-1] < chunk.table.pos_ptr[-1]
    kept = row_scores(narrow.table, q.dequantize())
    assert np.allclose(kept[narrow.table.played], s[chunk.table.played])
    # chunks concatenate to the table of one call
    half = len(boards) // 2
    parts = [network_search_chunk(boards[a:z], index[a:z], results[a:z], net=q, depth=1, budget=10**6,
                                  slope=SLOPE, window=0.0).table for a, z in ((0, half), (half, len(boards)))]
    joined = concatenate_tables(parts)
    for name in ("pos_ptr", "played", "sign", "base", "results"):
        assert np.array_equal(getattr(joined, name), getattr(chunk.table, name), equal_nan=True), name
    assert np.array_equal(joined.inputs.inputs, chunk.table.inputs.inputs)


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_gradient_equals_finite_differences_at_the_stored_leaves(sample: tuple[np.ndarray, ...], mu: float) -> None:
    boards, index, results = sample
    f = _net(5, linear=True)
    table = network_search_chunk(boards, index, results, net=quantize(f), depth=1, budget=10**6, slope=SLOPE,
                                 window=300.0).table
    o = network_objective(table, f, SLOPE, mu=mu, k_cp=0.004)
    v = f.vector()
    rng = np.random.default_rng(7)
    for _ in range(6):
        d = rng.normal(size=f.size)
        eps = 1e-6
        plus = network_objective(table, f.with_vector(v + eps * d), SLOPE, mu=mu, k_cp=0.004).total
        minus = network_objective(table, f.with_vector(v - eps * d), SLOPE, mu=mu, k_cp=0.004).total
        fd = (plus - minus) / (2 * eps)
        assert fd == pytest.approx(float(o.gradient @ d), rel=1e-4, abs=1e-9)


@pytest.mark.parametrize("seed", [11, 12])
def test_gradient_equals_finite_differences_of_fresh_searches(sample: tuple[np.ndarray, ...], seed: int) -> None:
    """The move loss recomputed by fresh quantized searches at theta +- eps d, against the
    back-propagated gradient at the PV leaves of theta (Danskin: where the PV leaf does not
    change, the derivative of a minimax value is that of its leaf's evaluation).

    ``d`` moves the parameters the integer form holds finely (the output layer W4, b4 and the
    hidden biases b2, b3, at 1/64 cp and 1/16,320), so that rounding the perturbed network stays
    small against the change (the first layers are quantized to 1/255 and 1/64 of an activation:
    their gradients are checked by the finite differences at stored leaves above and in
    test_network_gradient). Positions whose PV leaves change are left out: the derivative does
    not exist there."""
    boards, index, _ = sample
    f = _net(9, linear=True)
    v = f.vector()
    sizes = {k: int(np.prod(s)) for k, s in SHAPE.array_shapes().items()}
    offsets = dict(zip(sizes, np.cumsum([0] + list(sizes.values()))))
    mask = np.zeros(f.size, dtype=bool)
    for k in ("w4", "b4", "b3", "b2"):
        mask[offsets[k]:offsets[k] + sizes[k]] = True
    d = np.random.default_rng(seed).normal(size=f.size) * (np.abs(v) + 0.05) * mask
    eps = 0.1
    nets = {s: quantize(f.with_vector(v + s * eps * d).clamped()) for s in (-1, 0, 1)}
    sweeps = {s: sweep(boards, 1, q) for s, q in nets.items()}
    held = np.all(sweeps[1].leaves == sweeps[0].leaves, axis=1) & np.all(sweeps[-1].leaves == sweeps[0].leaves, axis=1)
    ptr0 = sweeps[0].pos_ptr
    keep = np.flatnonzero([held[ptr0[p]:ptr0[p + 1]].all() for p in range(len(boards))])
    assert len(keep) >= len(boards) // 4
    rows = np.concatenate([np.arange(ptr0[p], ptr0[p + 1]) for p in keep])
    ptr = np.concatenate([[0], np.cumsum(np.diff(ptr0)[keep])]).astype(np.int64)

    def fresh_loss(s: int) -> float:
        return float(sweep_loss(ptr, ptr[:-1] + index[keep], sweeps[s].scores[rows], SLOPE, PHASE_MAX, loss="softmax"))

    fd = (fresh_loss(1) - fresh_loss(-1)) / (2 * eps)
    table = network_search_chunk(boards[keep], index[keep], np.full(len(keep), np.nan), net=nets[0], depth=1,
                                 budget=10**6, slope=SLOPE, window=0.0).table
    g = network_objective(table, nets[0].dequantize(), SLOPE).gradient
    assert abs(fd) > 1.0  # a change far above the rounding
    assert fd == pytest.approx(float(g @ d), rel=0.03)
