"""Hand-computed updates of RootStrap, TreeStrap(minimax) and TreeStrap(alpha-beta) on a tiny tree
(tuner/methods/search_targets.py), the one-sided alpha-beta targets and the depth-scaled rate.

The tree: ``7k/8/8/8/8/1n6/PP6/K7 w``, White (king a1, pawns a2 b2) in check from the knight b3,
with two legal moves, axb3 and Kb1. With the ``material`` weights (pawn 100, knight 320 in both
game phases) the root's static value is 2 x 100 - 320 = -120 cp (White's view), and:

* depth 1: axb3 leaves Black a bare king against two pawns (-200 for Black, stand pat: nothing
  to capture), Kb1 leaves Black a knight against two pawns (+120, nothing to capture), so the
  root's value is max(200, -120) = 200: error 200 - (-120) = 320 cp at the root, the only
  interior node.
* depth 2, minimax: after Kb1, each of Black's three king moves (Kg8, Kg7, Kh7) and the knight's
  moves to a1 and c1 leave the knight en prise to a pawn or the king: five White quiescence
  nodes of static -120 and value +200 (error +320, two plies below the root). Nd2+ gives a
  White quiescence node in check (static -120, value -120: error 0); the other knight moves leave
  nothing to capture (leaves). Black's node after Kb1 is worth +120 (static +120: error 0), after
  axb3 -200 (static -200: error 0). Material counts are the same at the root and at the five
  nodes (White: 2 pawns, Black: a knight, White to move), so per unit of lr the material
  direction is 320 x (1 + 5 lambda^2) x (2 pawns, -1 knight).
* depth 2, alpha-beta (axb3 searched first, as a capture): Black's node after Kb1 fails high on
  its first move with a lower bound -200 below its static +120, and the White quiescence node
  below it fails low with an upper bound 200 above its static -120: one-sided targets leave
  both alone, so only the root moves: 320 x (2 pawns, -1 knight).
"""

from __future__ import annotations

import chess
import numpy as np
import pytest

from search.tree.alphabeta import KIND_EVAL, MATE, MATE_BOUND
from search.tree.search_api import search as search_one
from search.tree.bootstrap_tree import BOUND_EXACT, BOUND_LOWER, BOUND_UPPER, TreeRecord, TreeSearcher
from search.params.catalog import FEATURE_INDEX, N_FEATURES, PHASE_MAX
from search.core.convert import from_fen, to_chess
from search.params.weights import load_weights
from tuner.methods.bootstrap import capped_step
from tuner.methods.search_targets import ROOTSTRAP, TREESTRAP_AB, TREESTRAP_MM, node_errors, tree_direction, unique_nodes
from tuner.training.weight_masks import mask_of

from tests.oracles.reference_features import reference_features

FEN = "7k/8/8/8/8/1n6/PP6/K7 w - - 0 1"
MATERIAL = load_weights("material").values
PAWN = [FEATURE_INDEX["mg.material.pawn"], FEATURE_INDEX["eg.material.pawn"]]
KNIGHT = [FEATURE_INDEX["mg.material.knight"], FEATURE_INDEX["eg.material.knight"]]


def material_part(direction: np.ndarray) -> tuple[float, float]:
    """(pawn, knight) directions summed over both game phases (their x add up to the count)."""
    return float(direction[PAWN].sum()), float(direction[KNIGHT].sum())


def search(depth: int, minimax: bool) -> TreeRecord:
    return TreeSearcher().search(from_fen(FEN), MATERIAL, depth=depth, minimax=minimax)


def test_rootstrap_moves_the_root_towards_its_search_value() -> None:
    rec = search(1, False)
    assert rec.score == 200 * 24 and rec.static[-1] == -120 * 24
    direction, fig = tree_direction(rec, ROOTSTRAP)
    assert fig["nodes"] == 1 and fig["sq_error"] == pytest.approx(320.0**2)
    assert material_part(direction) == pytest.approx((320 * 2, -320))
    # applied with lr 0.01 on the material weights only: pawns +6.4 cp (split by phase), knight -3.2
    step = capped_step(direction, 0.01, mask_of(("material",), "train"), 0.0)
    assert material_part(step) == pytest.approx((6.4, -3.2))
    assert np.count_nonzero(step[~mask_of(("material",), "train")]) == 0


@pytest.mark.parametrize("lam", [1.0, 1.0 / 3.0])
def test_treestrap_minimax_moves_every_interior_node_scaled_by_depth(lam: float) -> None:
    rec = search(2, True)
    assert (rec.bound == BOUND_EXACT).all()
    errors = node_errors(rec, TREESTRAP_MM, unique_nodes(rec))
    moved = errors[errors != 0]
    assert len(moved) == 6 and np.all(moved == 320.0)  # the root and five quiescence nodes
    direction, _ = tree_direction(rec, TREESTRAP_MM, lambda_depth=lam)
    factor = 1 + 5 * lam**2  # Duchess: lr0 lambda^d at d plies below the root
    assert material_part(direction) == pytest.approx((320 * 2 * factor, -320 * factor))


def test_treestrap_alphabeta_uses_one_sided_targets_on_the_real_tree() -> None:
    rec = search(2, False)
    kinds = sorted(zip(rec.ply.tolist(), rec.bound.tolist(), (rec.static // 24).tolist(), (rec.value // 24).tolist()))
    assert kinds == [(0, BOUND_EXACT, -120, 200), (1, BOUND_EXACT, -200, -200), (1, BOUND_LOWER, 120, -200),
                     (2, BOUND_UPPER, -120, 200)]
    direction, fig = tree_direction(rec, TREESTRAP_AB)
    assert fig["updated"] == 1
    assert material_part(direction) == pytest.approx((640, -320))
    # minimax targets on the same records would have moved the two bounded nodes too
    naive, _ = tree_direction(rec, TREESTRAP_MM)
    assert material_part(naive) != pytest.approx((640, -320))


def test_one_sided_errors_case_by_case() -> None:
    # static 0 at every row; the four cases of a bound against the static value, and exact
    b = from_fen(FEN)
    ints = np.zeros((6, 5), dtype=np.int64)
    values = [240, -240, 240, -240, 240, -240]
    bounds = [BOUND_LOWER, BOUND_LOWER, BOUND_UPPER, BOUND_UPPER, BOUND_EXACT, BOUND_EXACT]
    ints[:, 1], ints[:, 2] = values, bounds
    rec = TreeRecord(np.repeat(b[None], 6, axis=0), ints, 0, (), 0, 6, False, 1)
    rows = np.arange(6)
    # a lower bound above e raises it, below leaves it; an upper bound below e lowers it, above
    # leaves it; exact values move both ways (errors in cp: eval units / 24)
    assert node_errors(rec, TREESTRAP_AB, rows).tolist() == [10.0, 0.0, 0.0, -10.0, 10.0, -10.0]
    assert node_errors(rec, TREESTRAP_MM, rows).tolist() == [10.0, -10.0, 10.0, -10.0, 10.0, -10.0]


def test_mate_values_are_left_out_or_clipped_to_mate_cp() -> None:
    # static 240 (10 cp) at every row; values: a mate found (lower bound), a mate suffered
    # (exact), a mate found as an upper bound (one-sided: 1000 cp is above 10, nothing to lower),
    # and an exact 2000 cp, beyond a mate's worth: clipped to it
    b = from_fen(FEN)
    ints = np.zeros((4, 5), dtype=np.int64)
    ints[:, 0] = 240
    ints[:, 1] = [MATE - 3, -(MATE - 6), MATE - 1, 2000 * 24]
    ints[:, 2] = [BOUND_LOWER, BOUND_EXACT, BOUND_UPPER, BOUND_EXACT]
    rec = TreeRecord(np.repeat(b[None], 4, axis=0), ints, 0, (), 0, 4, False, 1)
    rows = np.arange(4)
    assert node_errors(rec, TREESTRAP_AB, rows).tolist() == [0.0, 0.0, 0.0, 1990.0]
    assert node_errors(rec, TREESTRAP_AB, rows, mate_cp=1000.0).tolist() == [990.0, -1010.0, 0.0, 990.0]
    assert node_errors(rec, TREESTRAP_MM, rows, mate_cp=1000.0).tolist() == [990.0, -1010.0, 990.0, 990.0]


def test_each_position_is_updated_once_per_search() -> None:
    b = from_fen(FEN)
    ints = np.zeros((3, 5), dtype=np.int64)
    ints[:, 3] = [3, 1, 2]  # ply
    ints[:, 4] = [0, 1, 1]  # remaining depth
    rec = TreeRecord(np.repeat(b[None], 3, axis=0), ints, 0, (), 0, 3, False, 1)
    assert unique_nodes(rec).tolist() == [1]  # the deepest search of it, nearest the root


def _sq_norm(board: chess.Board) -> float:
    """|x|^2 of a position, x = phi / PHASE_MAX, from the independent reference extractor."""
    _, values = reference_features(board)
    return float(sum((v / PHASE_MAX) ** 2 for v in values))


@pytest.mark.parametrize("lam", [1.0, 1.0 / 3.0])
def test_normalized_update_divides_by_the_updated_nodes_squared_norms(lam: float) -> None:
    rec = search(2, True)
    plain, _ = tree_direction(rec, TREESTRAP_MM, lambda_depth=lam)
    normed, fig = tree_direction(rec, TREESTRAP_MM, lambda_depth=lam, normalize=True)
    # the six moved nodes (the root and five quiescence nodes two plies below), by hand
    rows = unique_nodes(rec)
    moved = rows[node_errors(rec, TREESTRAP_MM, rows) != 0]
    assert len(moved) == 6
    norm = sum(lam ** int(rec.ply[r]) * _sq_norm(to_chess(rec.boards[r])) for r in moved)
    assert fig["norm"] == pytest.approx(norm)
    np.testing.assert_allclose(normed, plain / norm, rtol=1e-12, atol=1e-15)


def test_normalized_rootstrap_with_rate_one_removes_the_whole_error() -> None:
    # normalized LMS with lr = 1 on one node: e(root) lands on its search value (200 cp), up to
    # the rounding of the weights to integers
    rec = search(1, False)
    direction, _ = tree_direction(rec, ROOTSTRAP, normalize=True)
    w = MATERIAL.astype(np.float64) + capped_step(direction, 1.0, np.ones(N_FEATURES, dtype=bool), 0.0)
    idx, values = reference_features(chess.Board(FEN))
    e = sum(w[i] * v for i, v in zip(idx, values)) / PHASE_MAX
    assert e == pytest.approx(200.0)
    assert -120.0 == pytest.approx(sum(MATERIAL[i] * v for i, v in zip(idx, values)) / PHASE_MAX)


def test_quiet_leaves_on_the_tiny_tree_give_no_update() -> None:
    # every depth >= 1 node of the tiny tree already has its search value as its quiescence
    # value (the root's 200 is axb3 in quiescence too; the two Black nodes have no capture),
    # and the quiescence nodes drop out: nothing to learn, though the static values differ
    rec = search(2, True)
    direction, fig = tree_direction(rec, TREESTRAP_MM, quiet_weights=MATERIAL)
    assert fig["nodes"] == 3 and fig["updated"] == 0 and not direction.any()
    assert tree_direction(rec, TREESTRAP_MM)[1]["updated"] == 6


@pytest.mark.parametrize("method", [ROOTSTRAP, TREESTRAP_MM, TREESTRAP_AB])
def test_quiet_leaves_follow_each_nodes_quiescence_leaf_on_real_positions(
        method: str, real_boards: list[chess.Board]) -> None:
    # the direction rebuilt node by node: q(s) from a separate quiescence search of the node
    # (search.tree.search_api.search at depth 0), the leaf's features from the reference extractor
    weights = load_weights("classic").values
    total = 0
    for board in real_boards[40:3229:800]:
        rec = TreeSearcher().search(from_fen(board.fen()), weights, depth=2, minimax=method == TREESTRAP_MM)
        direction, fig = tree_direction(rec, method, quiet_weights=weights)
        rows = np.flatnonzero(rec.ply == 0)[-1:] if method == ROOTSTRAP else unique_nodes(rec)
        expected = np.zeros(N_FEATURES)
        used = 0
        for r in rows:
            if rec.depth[r] < 1:
                continue
            q = search_one(rec.boards[r], 0, weights)
            if q.kind != KIND_EVAL:
                continue
            used += 1
            err = (int(rec.value[r]) - q.score) / PHASE_MAX
            if method == TREESTRAP_AB and rec.bound[r] == BOUND_LOWER:
                err = max(err, 0.0)
            if method == TREESTRAP_AB and rec.bound[r] == BOUND_UPPER:
                err = min(err, 0.0)
            if abs(int(rec.value[r])) > MATE_BOUND:
                err = 0.0
            idx, values = reference_features(to_chess(q.leaf))
            for i, v in zip(idx, values):
                expected[i] += err * q.leaf_sign * v / PHASE_MAX
        assert fig["nodes"] == used
        np.testing.assert_allclose(direction, expected, rtol=1e-9, atol=1e-9)
        total += int(fig["updated"])
    assert total > 0  # some node's search saw further than its quiescence search
