"""Stochastic gradient descent, optionally with heavy-ball momentum, on float64 master weights.

Robbins & Monro (1951); momentum as Polyak's heavy ball in the form PyTorch's ``torch.optim.SGD``
uses (dampening 0, not Nesterov), on the trainable entries:

    g_t = grad + 2 * l2 * w                 (L2 on ``l2_mask``; see :mod:`tuner.training.optim.base`)
    b_t = momentum * b_{t-1} + g_t          (b_0 = 0, so b_1 = g_1; without momentum b_t = g_t)
    w_t = w_{t-1} - lr * b_t

then L1 on ``l1_mask`` by the proximal soft-threshold ``w_i <- sign(w_i) max(|w_i| - lr * l1, 0)``
(ISTA's step, exact for plain SGD; with momentum it is the usual heuristic combination).

Units: ``lr`` multiplies a gradient per weight unit, so it is in (weight units)^2 per unit of E;
Texel gradients are small, so useful values are large (compare :class:`tuner.training.optim.adam.Adam`,
whose ``lr`` is a step in weight units).
"""

from __future__ import annotations

import math

import numpy as np

from tuner.training.optim.base import Optimizer


class SGD(Optimizer):
    """SGD with optional heavy-ball momentum (module docstring).

    ``opt = SGD(n, lr=..., momentum=0.0, trainable=mask)``; other keywords as
    :class:`tuner.training.optim.base.Optimizer`.
    """

    kind = "sgd"
    hyper = ("momentum",)
    buffers = ("buf",)

    def __init__(self, n: int, *, lr: float = 1.0, momentum: float = 0.0, trainable: np.ndarray | None = None,
                 l1: float = 0.0, l1_mask: np.ndarray | None = None, l2: float = 0.0,
                 l2_mask: np.ndarray | None = None) -> None:
        super().__init__(n, lr=lr, trainable=trainable, l1=l1, l1_mask=l1_mask, l2=l2, l2_mask=l2_mask)
        self._check_hyper({"momentum": momentum})
        self.momentum = float(momentum)
        self.buf = np.zeros(self.n, dtype=np.float64)

    def _check_hyper(self, values: dict[str, float]) -> None:
        if not (math.isfinite(values["momentum"]) and 0.0 <= values["momentum"] < 1.0):
            raise ValueError(f"momentum must lie in [0, 1), not {values['momentum']}")

    def _update(self, idx: np.ndarray, w: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.momentum > 0.0:
            b = self.momentum * self.buf[idx] + g
            self.buf[idx] = b
        else:
            b = g
        return w - self.lr * b, np.full(len(idx), self.lr)
