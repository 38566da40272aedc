"""Adam on float64 master weights, with a trainable mask and proximal L1.

Kingma & Ba, "Adam: A Method for Stochastic Optimization", ICLR 2015, Algorithm 1, applied to
the trainable entries (``t`` counts steps from 1):

    g_t   = grad + 2 * l2 * w          (L2 on ``l2_mask``; see :mod:`tuner.training.optim.base`)
    m_t   = beta1 * m_{t-1} + (1 - beta1) * g_t
    v_t   = beta2 * v_{t-1} + (1 - beta2) * g_t^2
    m_hat = m_t / (1 - beta1^t),   v_hat = v_t / (1 - beta2^t)
    w_t   = w_{t-1} - lr * m_hat / (sqrt(v_hat) + eps)

(the paper's epsilon form, not the "epsilon hat" variant of its section 2). L1 on ``l1_mask`` is
then a proximal step in Adam's own metric (the preconditioned proximal gradient step):
``w_i <- sign(w_i) max(|w_i| - lr * l1 / (sqrt(v_hat_i) + eps), 0)``. Its fixed points satisfy
``0 in dE/dw_i + l1 * d|w_i|``, i.e. they are the stationary points of E + L1 (a threshold of a
plain ``lr * l1`` would not be, because Adam rescales the step of each weight). A weight whose
gradient has always been 0 gets a threshold of ``lr * l1 / eps`` and goes to 0 at once.

Units: ``lr`` is in weight units (eval units per unit of feature value) and is about the largest
change of a weight per step; ``eps`` is in gradient units (per weight unit), so it should stay
well below the typical gradient magnitude (Texel gradients per weight unit can be ~1e-6).
Non-trainable entries keep m = v = 0 and never move.
"""

from __future__ import annotations

import math

import numpy as np

from tuner.training.optim.base import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015, Algorithm 1); see the module docstring for L1/L2.

    ``opt = Adam(n, lr=1.0, beta1=0.9, beta2=0.999, eps=1e-8, trainable=mask)``, then
    ``w = opt.step(w, grad)`` on float64 master weights. Other keywords as
    :class:`tuner.training.optim.base.Optimizer`. ``opt.lr`` may be changed between steps (a schedule).
    """

    kind = "adam"
    hyper = ("beta1", "beta2", "eps")
    buffers = ("m", "v")

    def __init__(self, n: int, *, lr: float = 1.0, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, trainable: np.ndarray | None = None, l1: float = 0.0,
                 l1_mask: np.ndarray | None = None, l2: float = 0.0, l2_mask: np.ndarray | None = None) -> None:
        super().__init__(n, lr=lr, trainable=trainable, l1=l1, l1_mask=l1_mask, l2=l2, l2_mask=l2_mask)
        self._check_hyper({"beta1": beta1, "beta2": beta2, "eps": eps})
        self.beta1 = float(beta1)
        self.beta2 = float(beta2)
        self.eps = float(eps)
        self.m = np.zeros(self.n, dtype=np.float64)
        self.v = np.zeros(self.n, dtype=np.float64)

    def _check_hyper(self, values: dict[str, float]) -> None:
        for name in ("beta1", "beta2"):
            if not 0.0 <= values[name] < 1.0:
                raise ValueError(f"{name} must lie in [0, 1), not {values[name]}")
        if not (math.isfinite(values["eps"]) and values["eps"] > 0.0):
            raise ValueError(f"eps must be a positive number, not {values['eps']}")

    def _update(self, idx: np.ndarray, w: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b1, b2, t = self.beta1, self.beta2, self.t
        m = b1 * self.m[idx] + (1.0 - b1) * g
        v = b2 * self.v[idx] + (1.0 - b2) * (g * g)
        self.m[idx] = m
        self.v[idx] = v
        m_hat = m / (1.0 - b1**t)
        v_hat = v / (1.0 - b2**t)
        denom = np.sqrt(v_hat) + self.eps
        return w - self.lr * m_hat / denom, self.lr / denom
