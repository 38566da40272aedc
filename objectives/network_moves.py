"""MMTO's move loss (Hoki & Kaneko 2014, eq. 5 with the softmax of ``docs/quality.md``) when the
evaluator is a network: the objective and its gradient at stored PV leaves.

For the linear evaluator a leaf is stored as its signed features and a row's score is their dot
product with the weights (:mod:`objectives.mmto`). A network's score is not linear in anything
that can be stored once, so a leaf is stored as the network's *inputs* (an
:class:`objectives.network.InputTable` row) and the score is recomputed at every update step::

    s_r = base_r + sign_r * PHASE_MAX * out(leaf_r)            (eval units, the root mover's view)

``sign_r`` is +1 when the leaf's side to move is the root's mover, -1 otherwise, 0 for a row
whose search ended in a verdict (mate, draw: ``base_r`` is then the whole score);
``base_r`` carries the constant part of an eval leaf (a hybrid network's linear terms, which
this objective does not train). The chain rule through the move loss gives each row's
``dJ/ds_r`` (:func:`objectives.mmto.row_objective`); the network's gradient is then
``sum_r dJ/ds_r * sign_r * PHASE_MAX * d out_r / d theta``
(:func:`objectives.network.network_gradient`, back-propagation through the float form).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from objectives.mmto import row_objective
from objectives.network import InputTable, network_gradient, network_scores
from search.params.catalog import PHASE_MAX
from search.evaluation.network import FloatNetwork


@dataclass(frozen=True)
class NetworkLeafTable:
    """Stored PV leaves of a sweep for a network evaluator.

    ``pos_ptr`` int64[P + 1] and ``played`` int64[P] (the played move's row, or -1) as in
    :mod:`objectives.mmto`; per row: ``sign`` int8[R], ``base`` float64[R] (eval units, the
    root mover's view), ``inputs`` (the leaf's network inputs); ``results`` float64[P] (game
    result from the mover's view, NaN: none)."""

    pos_ptr: np.ndarray
    played: np.ndarray
    sign: np.ndarray
    base: np.ndarray
    inputs: InputTable
    results: np.ndarray

    def __post_init__(self) -> None:
        rows = int(self.pos_ptr[-1])
        if (self.sign.shape != (rows,) or self.base.shape != (rows,) or len(self.inputs) != rows
                or self.played.shape != (len(self.pos_ptr) - 1,) or self.results.shape != self.played.shape):
            raise ValueError("a network leaf table's arrays disagree in length")

    @property
    def nbytes(self) -> int:
        return int(self.pos_ptr.nbytes + self.played.nbytes + self.sign.nbytes + self.base.nbytes
                   + self.inputs.nbytes + self.results.nbytes)


@dataclass(frozen=True)
class NetworkObjective:
    """The objective per position (move loss, result term, total) and its gradient with
    respect to :meth:`FloatNetwork.vector` (float64[size])."""

    move: float
    result: float
    total: float
    gradient: np.ndarray


def row_scores(table: NetworkLeafTable, net: FloatNetwork) -> np.ndarray:
    """float64[R]: each row's score ``s_r`` (eval units, the root mover's view) under ``net``."""
    scores: np.ndarray = table.base + table.sign * (PHASE_MAX * network_scores(net, table.inputs))
    return scores


def network_objective(table: NetworkLeafTable, net: FloatNetwork, slope_cp: float, *, loss: str = "softmax",
                      mu: float = 0.0, k_cp: float = 0.0) -> NetworkObjective:
    """The MMTO objective of ``net`` on ``table`` (move loss ``loss`` with slope ``slope_cp``
    per centipawn, plus ``mu`` times Texel's result term with ``k_cp``) and its gradient."""
    ro = row_objective(table.pos_ptr, table.played, row_scores(table, net), slope_cp, PHASE_MAX, loss=loss,
                       results=table.results, mu=mu, k_cp=k_cp)
    gradient = network_gradient(net, table.inputs, ro.coef * table.sign * PHASE_MAX)
    return NetworkObjective(ro.move, ro.result, ro.total, gradient)


__all__ = ["NetworkLeafTable", "NetworkObjective", "network_objective", "row_scores"]
