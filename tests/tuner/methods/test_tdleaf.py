"""TD-Leaf(lambda) over the linear evaluator (tuner/methods/tdleaf.py): the eligibility trace
against KnightCap's sum by hand, and the PV leaf's value and gradient on a tiny tree:
``7k/8/8/8/8/1n6/PP6/K7 w`` with the ``material`` weights, whose depth-1 search plays axb3 for
200 cp (tests/tuner/methods/test_search_targets.py works the tree out)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from search.tree.bootstrap_tree import TreeSearcher
from search.params.catalog import FEATURE_INDEX
from search.core.convert import from_fen
from search.params.weights import load_weights
from tuner.methods.tdleaf import TDLeafTrace, leaf_j

FEN = "7k/8/8/8/8/1n6/PP6/K7 w - - 0 1"
MATERIAL = load_weights("material").values
PAWN = [FEATURE_INDEX["mg.material.pawn"], FEATURE_INDEX["eg.material.pawn"]]
KNIGHT = [FEATURE_INDEX["mg.material.knight"], FEATURE_INDEX["eg.material.knight"]]


def material_part(direction: np.ndarray) -> tuple[float, float]:
    """(pawn, knight) directions summed over both game phases (their x add up to the count)."""
    return float(direction[PAWN].sum()), float(direction[KNIGHT].sum())


def test_tdleaf_trace_is_knightcaps_sum_by_hand() -> None:
    # J = 0.1, 0.3, -0.2 then result +1; gradients unit vectors e0, e1, e2; lambda = 0.5
    # d = 0.2, -0.5, 1.2; weight i gets sum_{j>=i} lambda^{j-i} d_j:
    # e0: 0.2 - 0.25 + 0.3 = 0.25; e1: -0.5 + 0.6 = 0.1; e2: 1.2
    tr = TDLeafTrace(3, 0.5)
    total = np.zeros(3)
    for j, g in zip((0.1, 0.3, -0.2), np.eye(3)):
        out = tr.observe(j, g)
        if out is not None:
            total += out[0]
    out = tr.finish(1.0)
    assert out is not None and out[1] == pytest.approx(1.2)
    total += out[0]
    assert total == pytest.approx([0.25, 0.1, 1.2])


def test_tdleaf_leaf_value_and_gradient_on_the_tiny_tree() -> None:
    # depth 1: PV axb3 (one ply: the leaf, Black to move, enters with sign -1); score 200 cp
    rec = TreeSearcher().search(from_fen(FEN), MATERIAL, depth=1, minimax=False)
    j, grad = leaf_j(rec, from_fen(FEN), 400.0)
    assert j == pytest.approx(math.tanh(0.5))
    # leaf from Black's view: White's two pawns count -2, so sign x x(leaf) = +2 pawns, no knight
    slope = (1 - math.tanh(0.5) ** 2) / 400.0
    assert material_part(grad) == pytest.approx((2 * slope, 0.0))
