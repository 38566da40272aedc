"""The update of RootStrap and TreeStrap: nodes of a search moved towards their search values
(Veness et al. 2009), as a direction over the linear evaluator's features
(:func:`tree_direction`), and the trainer of the three methods that learn that way
(:class:`SearchTargetTrainer`); the units are those of :mod:`tuner.methods.bootstrap`.

* **RootStrap(alpha-beta)** (section 4, :mod:`tuner.methods.rootstrap`): the root only; target
  the root's search value V(s): ``dw = lr (V(s) - e(s)) x(s)``.
* **TreeStrap(minimax)** (section 4, equation for Delta w over the tree,
  :mod:`tuner.methods.treestrap_mm`): every interior node of a full-width minimax search (depth
  plies + quiescence, no pruning), each towards its own minimax value.
* **TreeStrap(alpha-beta)** (section 5, :mod:`tuner.methods.treestrap_ab`): every interior node
  of the alpha-beta tree (transposition table, killers and history heuristic for move ordering,
  :mod:`search.tree.bootstrap_tree`) with one-sided targets: a node whose search returned a lower
  bound ``v`` is raised towards ``v`` only if ``e(s) < v``; an upper bound lowers it only if
  ``e(s) > v``; exact values as minimax. Each position enters once per search (the
  occurrence with the greatest remaining depth, then the nearest the root).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from search.tree.alphabeta import KIND_EVAL, MATE_BOUND
from search.core.board import W_KEY
from search.tree.bootstrap_tree import BOUND_LOWER, BOUND_UPPER, TreeRecord
from search.params.catalog import PHASE_MAX
from search.tree.search_api import search_many
from tuner.methods.bootstrap import BootstrapTrainer, Tally, weighted_sum

#: the names of the three methods (registry and messages); :func:`tree_direction` and
#: :func:`node_errors` take one of them
ROOTSTRAP, TREESTRAP_MM, TREESTRAP_AB = "rootstrap", "treestrap-mm", "treestrap-ab"


def unique_nodes(rec: TreeRecord) -> np.ndarray:
    """Rows of ``rec`` that enter the update, each position once: by Zobrist key, the row with
    the greatest remaining depth, then the smallest ply, then the first recorded. int64[K],
    ascending."""
    if len(rec) == 0:
        return np.zeros(0, dtype=np.int64)
    keys = rec.boards[:, W_KEY]
    order = np.lexsort((np.arange(len(rec)), rec.ply, -rec.depth, keys))
    first = np.ones(len(order), dtype=bool)
    first[1:] = keys[order[1:]] != keys[order[:-1]]
    return np.sort(order[first])


def node_errors(rec: TreeRecord, method: str, rows: np.ndarray, reference: np.ndarray | None = None,
                mate_cp: float = 0.0) -> np.ndarray:
    """Error ``target - e(s)`` in centipawns (float64[len(rows)]) of each row for ``method``:
    exact values for rootstrap and treestrap-mm; one-sided for treestrap-ab (a lower bound
    above e raises it, an upper bound below e lowers it, otherwise 0). ``e(s)`` is the row's
    static value, or ``reference`` (int64[len(rows)], eval units, the node's side to move's
    view) when given. With ``mate_cp`` > 0 targets are clipped to ``[-mate_cp, mate_cp]``, so a
    row whose value is a mate score has the target ``+-mate_cp`` (with its sign and bound); with
    ``mate_cp`` 0 such rows have error 0."""
    value = rec.value[rows].astype(np.float64)
    mate = np.abs(rec.value[rows]) > MATE_BOUND
    if mate_cp > 0:
        # a mate, or any value beyond a mate's worth, is worth +-mate_cp: the targets live in
        # [-mate_cp, mate_cp], which bounds the scale the weights can grow to
        value = np.clip(value, -mate_cp * PHASE_MAX, mate_cp * PHASE_MAX)
    err = (value - (rec.static[rows] if reference is None else reference)) / PHASE_MAX
    if method == TREESTRAP_AB:
        bound = rec.bound[rows]
        err = np.where(bound == BOUND_LOWER, np.maximum(err, 0.0), err)
        err = np.where(bound == BOUND_UPPER, np.minimum(err, 0.0), err)
    return np.where(mate & (mate_cp <= 0.0), 0.0, err)


def tree_direction(rec: TreeRecord, method: str, *, lambda_depth: float = 1.0,
                   quiescence: bool = True, normalize: bool = False,
                   quiet_weights: np.ndarray | None = None, mate_cp: float = 0.0
                   ) -> tuple[np.ndarray, dict[str, float]]:
    """The update direction of one search for rootstrap / treestrap-mm / treestrap-ab:
    ``sum_s lambda_depth^ply(s) (target(s) - e(s)) x(s)`` over the nodes the method uses
    (float64[N_FEATURES], per unit of lr), and figures of the nodes (count, squared error,
    updated count, ``norm``).

    With ``quiet_weights`` (the int32 weights searched with), a node's evaluation ``e(s)`` is
    its *quiescence value* ``q(s) = sign * w . x(l)``, the static evaluation of the PV leaf
    ``l`` of a quiescence search from ``s`` (``sign`` +1 when ``l`` has s's side to move, else
    -1), and the update follows that leaf's features: ``(target(s) - q(s)) sign x(l)``. That is
    the evaluation the search itself puts on a node at its horizon, and the one MMTO and Texel
    fit (docs/references.md). The static evaluation of a node in the middle of an exchange
    cannot see the recapture, so moving it towards the search value teaches the weights that
    material does not count (each recapture says "a piece down is even"); its quiescence leaf is
    quiet. Quiescence nodes then have ``target = q(s)`` and drop out, and nodes whose
    quiescence search ends in a mate or draw verdict are left out.

    With ``normalize`` the direction is divided by ``norm = sum_s lambda_depth^ply(s)
    |x(s)|^2`` over the updated nodes (those with a non-zero error): the normalized LMS rule
    (Nagumo & Noda 1967; docs/references.md). One search's nodes share most of their
    features, so the plain sum moves each node's evaluation by about ``lr * norm`` times its
    error, which grows with the tree and makes a fixed ``lr`` diverge in large trees; divided
    by ``norm``, ``lr`` is the fraction of the (weighted mean) error removed per search,
    stable for ``0 < lr < 2`` whatever the tree's size."""
    if method == ROOTSTRAP:
        rows = np.flatnonzero(rec.ply == 0)[-1:]
    else:
        rows = unique_nodes(rec)
        if not quiescence:
            rows = rows[rec.depth[rows] >= 1]
    if quiet_weights is None:
        boards, signs, reference = rec.boards[rows], np.ones(len(rows)), None
    else:
        rows = rows[rec.depth[rows] >= 1]
        q = search_many(rec.boards[rows], 0, quiet_weights, n_threads=1)
        ok = q.kinds == KIND_EVAL
        rows, boards, reference = rows[ok], q.leaves[ok], q.scores[ok]
        signs = np.where(q.pv_len[ok] % 2 == 0, 1.0, -1.0)
    err = node_errors(rec, method, rows, reference, mate_cp)
    decay = np.power(lambda_depth, rec.ply[rows].astype(np.float64))
    direction, norm = weighted_sum(boards, err * decay * signs, decay if normalize else None)
    if normalize and norm > 0.0:
        direction /= norm
    return direction, {"nodes": float(len(rows)), "sq_error": float((err * err).sum()),
                       "updated": float(np.count_nonzero(err)), "norm": norm}


class SearchTargetTrainer(BootstrapTrainer):
    """RootStrap and TreeStrap: nodes of each search moved towards their search values
    (:func:`tree_direction`)."""

    def learn(self, rec: TreeRecord, board: np.ndarray, trace: Any, tally: Tally) -> None:
        direction, fig = tree_direction(rec, self.method, lambda_depth=self.cfg.lambda_depth,
                                        quiescence=self.cfg.quiescence_nodes,
                                        normalize=self.cfg.normalize,
                                        quiet_weights=self.w if self.cfg.quiet_leaves else None,
                                        mate_cp=self.cfg.mate_cp)
        tally.used += int(fig["nodes"])
        tally.updated += int(fig["updated"])
        tally.sq_error += fig["sq_error"]
        if fig["updated"]:
            self._apply(direction)


class TreeStrapTrainer(SearchTargetTrainer):
    """TreeStrap: every interior node of each search."""

    def records_quiescence(self) -> bool:
        # quiescence nodes are recorded only where they are learnt from: with quiet leaves their
        # target is their own quiescence value, and tree_direction drops them
        return self.cfg.quiescence_nodes and not self.cfg.quiet_leaves


__all__ = ["ROOTSTRAP", "TREESTRAP_AB", "TREESTRAP_MM", "SearchTargetTrainer", "TreeStrapTrainer", "node_errors",
           "tree_direction", "unique_nodes"]
