"""Update rules, kept apart from the losses of :mod:`objectives`.

* :mod:`tuner.training.optim.grid`: MMTO's grid-adjacent step on the evaluator's integer weights
  (stateless: each step depends only on the weights and the gradient);
* :class:`Adam` (Kingma & Ba 2015) and :class:`SGD` (optionally with momentum), both with a
  trainable mask, L2 added to the gradient and L1 as a proximal soft-threshold after the step;
* checkpointable state: ``opt.state_dict()`` (JSON-serialisable, exact float64 round trip),
  ``Cls.from_state(d)``, ``opt.load_state(d)``, or :func:`optimizer_from_state` for any kind;
* :func:`to_search_weights`: master weights -> the search's int32 weights (ties to even, clipped).
"""

from __future__ import annotations

from typing import Any

from tuner.training.optim.adam import Adam
from tuner.training.optim.base import (
    STATE_VERSION,
    Optimizer,
    OptimStateError,
    floats_from_json,
    floats_to_json,
    to_search_weights,
)
from tuner.training.optim.sgd import SGD

#: optimizer classes by the ``kind`` of their state dicts
OPTIMIZERS: dict[str, type[Optimizer]] = {cls.kind: cls for cls in (Adam, SGD)}


def optimizer_from_state(d: dict[str, Any]) -> Optimizer:
    """Restore an optimizer of any kind from its :meth:`Optimizer.state_dict`."""
    kind = d.get("kind") if isinstance(d, dict) else None
    if kind not in OPTIMIZERS:
        raise OptimStateError(f"unknown optimizer kind {kind!r} (known: {', '.join(sorted(OPTIMIZERS))})")
    return OPTIMIZERS[kind].from_state(d)


__all__ = ["Adam", "SGD", "Optimizer", "OptimStateError", "STATE_VERSION", "OPTIMIZERS",
           "optimizer_from_state", "to_search_weights", "floats_to_json", "floats_from_json"]
