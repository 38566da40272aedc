"""The float network's scores and gradient (objectives/network.py): scores equal the plain-numpy
reference's float form; the gradient equals central finite differences of the scores, for every
parameter array, and does not depend on the number of threads."""

from __future__ import annotations


import chess
import numpy as np
import pytest

from objectives.network import input_table, network_gradient, network_scores
from search.core.convert import from_chess
from search.evaluation.network import PARAMS, FloatNetwork, NetworkShape
from search.tree.search_api import threads

from tests.oracles.network_reference import float_score

SHAPE = NetworkShape(h=16, h2=8, h3=8, buckets="4")
#: the direct form (no hidden layers, squared clipped ReLU)
DIRECT = NetworkShape(h=16, h2=0, h3=0, buckets="4")
#: with output buckets by the number of pieces
OUTPUTS = NetworkShape(h=16, h2=8, h3=8, outputs=4)
DIRECT_OUTPUTS = NetworkShape(h=16, h2=0, h3=0, buckets="4", outputs=8)
ALL = pytest.mark.parametrize("shape", [SHAPE, DIRECT, OUTPUTS, DIRECT_OUTPUTS],
                              ids=["hidden", "direct", "hidden-outputs", "direct-outputs"])


@pytest.fixture(scope="module")
def boards(real_boards: list[chess.Board]) -> list[chess.Board]:
    return real_boards[3::41]


@ALL
def test_scores_equal_the_reference_float_form(shape: NetworkShape, boards: list[chess.Board]) -> None:
    net = FloatNetwork.initial(shape, seed=2)
    table = input_table(np.stack([from_chess(b) for b in boards]), shape.bucket_table)
    got = network_scores(net, table)
    ref = np.array([float_score(b, net.params, shape.bucket_table) for b in boards])
    assert np.allclose(got, ref, rtol=0, atol=1e-9)


@ALL
def test_gradient_equals_finite_differences_of_the_scores(shape: NetworkShape, boards: list[chess.Board]) -> None:
    net = FloatNetwork.initial(shape, seed=4)
    table = input_table(np.stack([from_chess(b) for b in boards]), shape.bucket_table)
    coef = np.random.default_rng(0).normal(size=len(table))
    grad = network_gradient(net, table, coef)
    v = net.vector()
    g4 = net.with_vector(grad).params["w4"]
    assert (np.abs(g4).sum(axis=1) > 0).sum() >= min(shape.outputs, 3)  # several output rows are trained
    rng = np.random.default_rng(1)
    offsets = np.cumsum([0] + [int(np.prod(s)) for s in shape.array_shapes().values()])
    checked = 0
    arrays = [name for name in PARAMS if np.prod(shape.array_shapes()[name]) > 0]  # the direct form has no W2..b3
    for k, name in enumerate(PARAMS):
        if name not in arrays:
            continue
        # a few coordinates of every array, among those the rows use (gradient not 0)
        span = np.arange(offsets[k], offsets[k + 1])
        used = span[grad[span] != 0.0]
        assert len(used) > 0, name
        for i in rng.choice(used, size=min(6, len(used)), replace=False):
            eps = 1e-6
            plus, minus = v.copy(), v.copy()
            plus[i] += eps
            minus[i] -= eps
            fd = (coef @ network_scores(net.with_vector(plus), table)
                  - coef @ network_scores(net.with_vector(minus), table)) / (2 * eps)
            assert abs(fd - grad[i]) <= 1e-5 * max(1.0, abs(fd)), (name, i, fd, grad[i])
            checked += 1
    assert checked >= 6 * len(arrays) - 6


def test_gradient_does_not_depend_on_the_threads(boards: list[chess.Board]) -> None:
    net = FloatNetwork.initial(SHAPE, seed=6)
    table = input_table(np.stack([from_chess(b) for b in boards]), SHAPE.bucket_table)
    coef = np.linspace(-1, 1, len(table))
    with threads(1):
        g1 = network_gradient(net, table, coef)
    with threads(2):
        g2 = network_gradient(net, table, coef)
    assert np.array_equal(g1, g2)
