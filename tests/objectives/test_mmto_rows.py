"""objectives.mmto.row_objective, the MMTO objective of rows whose scores are given (the
network's way in): on a stored sweep of the linear evaluator, its loss equals objective()'s and
the chain rule through its per-row coefficients gives objective()'s weight gradient."""

from __future__ import annotations

import numpy as np
import pytest
from tests.objectives.test_mmto import random_table

from objectives.mmto import objective, row_objective


@pytest.mark.parametrize("loss,mu", [("sigmoid", 0.0), ("softmax", 0.0), ("softmax", 3.0)])
def test_row_coefficients_give_the_feature_tables_gradient(loss: str, mu: float) -> None:
    rng = np.random.default_rng(5)
    n_w = 60
    table = random_table(rng, 300, n_w)
    pos_ptr, played, offset, indptr, indices, values = table
    w = rng.integers(-40, 40, n_w).astype(np.int32)
    results = rng.choice([0.0, 0.5, 1.0, np.nan], size=len(played))
    scores = offset.astype(np.float64).copy()
    for r in range(len(offset)):
        sl = slice(indptr[r], indptr[r + 1])
        scores[r] += float(w[indices[sl]].astype(np.int64) @ values[sl].astype(np.int64))
    kw = {"loss": loss, "results": results, "mu": mu, "k_cp": 0.004 if mu else 0.0}
    ref = objective(pos_ptr, played, offset, indptr, indices, values, w, 0.03, 24, **kw)  # type: ignore[arg-type]
    got = row_objective(pos_ptr, played, scores, 0.03, 24, **kw)  # type: ignore[arg-type]
    assert got.move == pytest.approx(ref.move, rel=1e-12) and got.total == pytest.approx(ref.total, rel=1e-12)
    grad = np.zeros(n_w)
    for r in range(len(offset)):
        sl = slice(indptr[r], indptr[r + 1])
        np.add.at(grad, indices[sl].astype(np.int64), got.coef[r] * values[sl])
    assert np.allclose(grad, ref.gradient, rtol=1e-10, atol=1e-14)
    assert np.abs(ref.gradient).max() > 0
