"""What every update rule shares: masks, L1/L2 regularisation, checkpointable state, rounding.

An optimizer keeps float64 *master weights* outside itself: ``w = opt.step(w, grad)`` returns a
new float64 array (the argument is not modified) where only the trainable entries changed, and
:func:`to_search_weights` rounds the master weights to the int32 weights the search uses.

Regularisation (both optional, each on its own bool mask, always restricted to the trainable
weights), so that a fixed point of a step minimises

    F(w) = E(w) + l2 * sum_{i in l2_mask} w_i^2 + l1 * sum_{i in l1_mask} |w_i|

(:meth:`Optimizer.penalty` gives the last two terms, for logging F):

* L2 is *added to the gradient* (classical, "coupled" L2, not AdamW's decoupled decay):
  ``g_i += 2 * l2 * w_i`` before the moments are updated;
* L1 is a *proximal soft-threshold after the step*: ``w_i <- sign(w_i) max(|w_i| - tau_i, 0)``,
  with ``tau_i`` the step's own scale on weight i (``lr * l1`` for SGD; Adam's preconditioned
  ``lr * l1 / (sqrt(v_hat_i) + eps)``, see :mod:`tuner.training.optim.adam`). A weight thus reaches
  exactly 0 and stays there while its gradient is smaller than ``l1``.

Checkpoints: :meth:`Optimizer.state_dict` returns a JSON-serialisable dict. Float arrays are
stored as lists of Python floats: ``json`` writes a float with ``repr``, the shortest text that
reads back to the same float64, so a ``json.dumps`` / ``json.loads`` round trip is exact (NaN and
infinities are refused when the state is written; they never occur in a healthy run). Masks are
stored as sorted lists of the indices where they are true. The master weights are not part of
the optimizer's state: checkpoint them alongside, e.g. with :func:`floats_to_json`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Self

import numpy as np

#: version of the state dicts written by :meth:`Optimizer.state_dict`
STATE_VERSION = 1

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


class OptimStateError(ValueError):
    """A state dict that does not describe this optimizer (wrong kind, size or version)."""


class NonFiniteStateError(FloatingPointError, ValueError):
    """A state to store holds NaN or an infinity: a run that diverged (a learning rate, a
    regularisation strength or a K far too large), reported by the driver in one line."""


def floats_to_json(a: np.ndarray) -> list[float]:
    """float64 array -> list of Python floats (exact through ``json``); refuses NaN and infinities
    (:class:`NonFiniteStateError`)."""
    a = np.asarray(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise NonFiniteStateError("cannot store NaN or infinite values")
    return [float(x) for x in a.tolist()]


def floats_from_json(x: Any, n: int, name: str) -> np.ndarray:
    """List of numbers -> float64[n] (the inverse of :func:`floats_to_json`)."""
    if not isinstance(x, list) or len(x) != n or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x):
        raise OptimStateError(f"{name} must be a list of {n} numbers")
    return np.array(x, dtype=np.float64)


def mask_to_json(mask: np.ndarray) -> list[int]:
    """bool[n] -> sorted list of the indices where it is true."""
    return [int(i) for i in np.flatnonzero(mask)]


def mask_from_json(x: Any, n: int, name: str) -> np.ndarray:
    """Sorted index list -> bool[n] (the inverse of :func:`mask_to_json`)."""
    if not isinstance(x, list) or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in x):
        raise OptimStateError(f"{name} must be a list of indices in [0, {n})")
    mask = np.zeros(n, dtype=bool)
    mask[np.array(x, dtype=np.int64)] = True
    return mask


def to_search_weights(w_float: np.ndarray, lo: float | np.ndarray = INT32_MIN,
                      hi: float | np.ndarray = INT32_MAX) -> np.ndarray:
    """Round float64 master weights to the search's int32 weights.

    Rounding: to the nearest integer, ties to even (``np.rint``: 0.5 -> 0, 1.5 -> 2, -2.5 -> -2),
    then clipped to ``[lo, hi]`` (scalars or float/int arrays of the same length, e.g. the
    registry's bounds; by default the int32 range). NaN is refused.
    """
    w = np.asarray(w_float, dtype=np.float64)
    if np.any(np.isnan(w)):
        raise ValueError("cannot round NaN weights")
    lo_a = np.maximum(np.asarray(lo, dtype=np.float64), INT32_MIN)
    hi_a = np.minimum(np.asarray(hi, dtype=np.float64), INT32_MAX)
    if np.any(lo_a > hi_a):
        raise ValueError("every lower bound must be <= its upper bound")
    return np.clip(np.rint(w), np.ceil(lo_a), np.floor(hi_a)).astype(np.int32)


def _mask(mask: np.ndarray | None, n: int, name: str, default: bool) -> np.ndarray:
    if mask is None:
        return np.full(n, default, dtype=bool)
    m = np.asarray(mask)
    if m.dtype != np.bool_ or m.shape != (n,):
        raise ValueError(f"{name} must be bool[{n}]")
    return m.copy()


def _nonneg(x: float, name: str) -> float:
    x = float(x)
    if not (math.isfinite(x) and x >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, not {x}")
    return x


class Optimizer(ABC):
    """Base of the update rules: trainable mask, L1/L2 options, step counter, state dicts.

    Parameters (shared by every subclass, keyword-only after ``n``)
    ----------
    n : number of weights.
    lr : step size, in weight units (eval units per unit of feature value).
    trainable : bool[n]; the other weights never change (default: all trainable).
    l1, l1_mask : L1 coefficient (per weight unit) and the bool[n] mask it applies to
        (default mask: every trainable weight).
    l2, l2_mask : L2 coefficient and its mask (same default).
    """

    #: the ``kind`` written into state dicts; subclasses set it
    kind: ClassVar[str] = ""
    #: names of the subclass's float hyperparameters stored in the state
    hyper: ClassVar[tuple[str, ...]] = ()
    #: names of the subclass's float64[n] buffers stored in the state
    buffers: ClassVar[tuple[str, ...]] = ()

    def __init__(self, n: int, *, lr: float, trainable: np.ndarray | None = None, l1: float = 0.0,
                 l1_mask: np.ndarray | None = None, l2: float = 0.0, l2_mask: np.ndarray | None = None) -> None:
        if n < 0:
            raise ValueError(f"n must be >= 0, not {n}")
        self.n = int(n)
        self.lr = float(lr)
        if not (math.isfinite(self.lr) and self.lr > 0.0):
            raise ValueError(f"lr must be a positive number, not {lr}")
        self.trainable = _mask(trainable, self.n, "trainable", True)
        self.l1 = _nonneg(l1, "l1")
        self.l2 = _nonneg(l2, "l2")
        self.l1_mask = _mask(l1_mask, self.n, "l1_mask", True) & self.trainable
        self.l2_mask = _mask(l2_mask, self.n, "l2_mask", True) & self.trainable
        self.t = 0

    # -- the update ------------------------------------------------------------------------

    def step(self, w: np.ndarray, grad: np.ndarray) -> np.ndarray:
        """One update: new float64[n] master weights (``w`` itself is left unchanged).

        ``grad`` is dE/dw (float64[n], per weight unit) of the data term only; L2 and L1 are
        added here. Raises ValueError on a wrong shape, :class:`NonFiniteStateError` (a
        ValueError too) on a NaN/infinite gradient or weight: a diverged run, which the command
        line reports in one line. Overflow inside the update is left to that check (no numpy
        warning)."""
        w = np.asarray(w, dtype=np.float64)
        grad = np.asarray(grad, dtype=np.float64)
        if w.shape != (self.n,) or grad.shape != (self.n,):
            raise ValueError(f"weights and gradient must have shape ({self.n},)")
        if not np.all(np.isfinite(grad)):
            raise NonFiniteStateError("the gradient became NaN or infinite: the run diverged; lower --lr or the "
                                      "regularisation strengths")
        if not np.all(np.isfinite(w)):
            raise NonFiniteStateError("the weights became NaN or infinite: the run diverged; lower --lr or the "
                                      "regularisation strengths")
        idx = np.flatnonzero(self.trainable)
        g = grad[idx].copy()
        wi = w[idx]
        self.t += 1
        with np.errstate(over="ignore", invalid="ignore"):  # a non-finite result is refused when stored
            if self.l2 > 0.0:
                g += np.where(self.l2_mask[idx], 2.0 * self.l2 * wi, 0.0)
            new_wi, tau = self._update(idx, wi, g)
            if self.l1 > 0.0:
                th = np.where(self.l1_mask[idx], tau * self.l1, 0.0)
                new_wi = np.sign(new_wi) * np.maximum(np.abs(new_wi) - th, 0.0)
        out = w.copy()
        out[idx] = new_wi
        return out

    @abstractmethod
    def _update(self, idx: np.ndarray, w: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rule on the trainable entries ``idx``: ``(new weights, tau / l1)``, where
        ``tau`` is the per-weight soft-threshold of the proximal L1 step divided by ``l1``
        (the step's scale on that weight). ``self.t`` is already the new step number."""

    def _check_hyper(self, values: dict[str, float]) -> None:
        """Raise ValueError if the subclass's hyperparameters in ``values`` are out of range."""

    def penalty(self, w: np.ndarray) -> float:
        """The regularisation terms of F: ``l2 * sum w_i^2 (l2_mask) + l1 * sum |w_i| (l1_mask)``."""
        w = np.asarray(w, dtype=np.float64)
        a = w[self.l2_mask]
        return float(self.l2 * np.dot(a, a) + self.l1 * np.abs(w[self.l1_mask]).sum())

    # -- checkpoints -----------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state (module docstring: floats as lists of floats, masks as index
        lists). Loading it gives an optimizer whose next steps are bit-identical."""
        d: dict[str, Any] = {
            "kind": self.kind,
            "version": STATE_VERSION,
            "n": self.n,
            "t": self.t,
            "lr": self.lr,
            "l1": self.l1,
            "l2": self.l2,
            "trainable": mask_to_json(self.trainable),
            "l1_mask": mask_to_json(self.l1_mask),
            "l2_mask": mask_to_json(self.l2_mask),
        }
        for name in self.hyper:
            d[name] = float(getattr(self, name))
        for name in self.buffers:
            d[name] = floats_to_json(getattr(self, name))
        return d

    def load_state(self, d: dict[str, Any]) -> None:
        """Take every field of a :meth:`state_dict` (hyperparameters, masks, step, buffers)."""
        if not isinstance(d, dict):
            raise OptimStateError("an optimizer state must be a dict")
        if d.get("kind") != self.kind:
            raise OptimStateError(f"state of a {d.get('kind')!r} optimizer, not {self.kind!r}")
        if d.get("version") != STATE_VERSION:
            raise OptimStateError(f"state version {d.get('version')!r}, this code reads {STATE_VERSION}")
        if d.get("n") != self.n:
            raise OptimStateError(f"state for {d.get('n')!r} weights, this optimizer has {self.n}")
        t = d.get("t")
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            raise OptimStateError("t must be an integer >= 0")
        floats = {}
        for name in ("lr", "l1", "l2", *self.hyper):
            x = d.get(name)
            if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
                raise OptimStateError(f"{name} must be a finite number")
            floats[name] = float(x)
        trainable = mask_from_json(d.get("trainable"), self.n, "trainable")
        l1_mask = mask_from_json(d.get("l1_mask"), self.n, "l1_mask")
        l2_mask = mask_from_json(d.get("l2_mask"), self.n, "l2_mask")
        bufs = {name: floats_from_json(d.get(name), self.n, name) for name in self.buffers}
        if not (math.isfinite(floats["lr"]) and floats["lr"] > 0.0) or floats["l1"] < 0.0 or floats["l2"] < 0.0:
            raise OptimStateError("lr must be > 0 and l1, l2 >= 0")
        try:
            self._check_hyper(floats)
        except ValueError as e:
            raise OptimStateError(str(e)) from None
        # all checked: now take it
        self.t = t
        for name, x in floats.items():
            setattr(self, name, x)
        self.trainable, self.l1_mask, self.l2_mask = trainable, l1_mask, l2_mask
        for name, a in bufs.items():
            setattr(self, name, a)

    @classmethod
    def from_state(cls, d: dict[str, Any]) -> Self:
        """A new optimizer restored from a :meth:`state_dict`."""
        if not isinstance(d, dict) or not isinstance(d.get("n"), int):
            raise OptimStateError("an optimizer state must be a dict with an integer 'n'")
        opt = cls(d["n"], lr=1.0)
        opt.load_state(d)
        return opt
