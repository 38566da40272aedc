"""objectives/leaf_sums.py: a table's objective as raw sums over parts of it. One part is
objectives.leaf_table.objective_compact bit for bit (itself equal to the tapered reference
kernel); parts folded in order give the whole table's figures up to the association of the
float64 sums (the last bits: the price of a fold that any executor reproduces exactly)."""

from __future__ import annotations

import numpy as np
import pytest

from objectives.leaf_sums import objective_sums
from objectives.leaf_table import CompactLeaves, encode, objective_compact
from tests.objectives.test_leaf_table import N_BASE, PHASE_MAX, tapered_table


def _parts(table: tuple[np.ndarray, ...], cuts: list[int]) -> list[CompactLeaves]:
    pos_ptr, played, offset, indptr, indices, values = table
    out = []
    for a, z in zip(cuts[:-1], cuts[1:]):
        ra, rz = pos_ptr[a], pos_ptr[z]
        out.append(encode(pos_ptr[a:z + 1] - ra, np.where(played[a:z] >= 0, played[a:z] - ra, -1), offset[ra:rz],
                          indptr[ra:rz + 1] - indptr[ra], indices[indptr[ra]:indptr[rz]], values[indptr[ra]:indptr[rz]],
                          n_base=N_BASE, phase_max=PHASE_MAX))
    return out


@pytest.mark.parametrize("loss,mu", [("sigmoid", 0.0), ("softmax", 2.0)])
def test_parts_add_up_to_the_whole_table(loss: str, mu: float) -> None:
    rng = np.random.default_rng(5)
    pos_ptr, played, offset, indptr, indices, values = tapered_table(rng, 700)
    played = played.copy()
    played[rng.random(len(played)) < 0.1] = -1  # positions that count in no sum
    table = (pos_ptr, played, offset, indptr, indices, values)
    w = rng.integers(-60, 60, 2 * N_BASE).astype(np.int32)
    results = rng.choice([0.0, 0.5, 1.0, np.nan], size=len(played))
    k = 0.004 if mu else 0.0
    whole = encode(*table, n_base=N_BASE, phase_max=PHASE_MAX)
    ref = objective_compact(whole, w, 0.003, PHASE_MAX, loss=loss, results=results, mu=mu, k_cp=k)
    n = int(np.count_nonzero(played >= 0))
    cnt = int(np.count_nonzero((played >= 0) & ~np.isnan(results)))
    scales = {"move_scale": 1.0 / n, "res_scale": mu / cnt, "k_cp": k, "loss": loss}

    # one part: the same numbers as objective_compact, bit for bit
    move, res, grad = objective_sums(whole, w, 0.003, PHASE_MAX, results=results, **scales)
    assert move / n == ref.move and (res / cnt if mu else 0.0) == ref.result and np.array_equal(grad, ref.gradient)

    # parts of 256 positions and a ragged tail, folded in order: the same up to rounding
    cuts = [0, 256, 512, 700]
    sums = [objective_sums(t, w, 0.003, PHASE_MAX, results=results[a:z], **scales)
            for t, a, z in zip(_parts(table, cuts), cuts[:-1], cuts[1:])]
    move = sums[0][0] + sums[1][0] + sums[2][0]
    grad = sums[0][2] + sums[1][2] + sums[2][2]
    assert move / n == pytest.approx(ref.move, rel=1e-13)
    if mu:
        assert (sums[0][1] + sums[1][1] + sums[2][1]) / cnt == pytest.approx(ref.result, rel=1e-13)
    assert np.allclose(grad, ref.gradient, rtol=1e-12, atol=1e-15) and np.count_nonzero(grad) > N_BASE


def test_bad_arguments_are_one_line_errors() -> None:
    t = encode(*tapered_table(np.random.default_rng(1), 4), n_base=N_BASE, phase_max=PHASE_MAX)
    nan4 = np.full(4, np.nan)
    kw = {"loss": "sigmoid", "move_scale": 0.25, "k_cp": 0.0}
    with pytest.raises(ValueError, match="leaf_sums.py: 10 weights for a table of 80 features"):
        objective_sums(t, np.zeros(10, dtype=np.int32), 0.01, PHASE_MAX, results=nan4, res_scale=0.0, **kw)
    with pytest.raises(ValueError, match="results must be float64"):
        objective_sums(t, np.zeros(80, dtype=np.int32), 0.01, PHASE_MAX, results=nan4[:3], res_scale=0.0, **kw)
    with pytest.raises(ValueError, match="K > 0"):
        objective_sums(t, np.zeros(80, dtype=np.int32), 0.01, PHASE_MAX, results=nan4, res_scale=1.0, **kw)
