"""A recorded oracle for the speed work on the evaluator and the search (issue 26, item 1): the
scores, PVs, PV leaves, leaf kinds and node counts of ``search_many`` (depths 1-3), the whole
row tables of ``sweep`` (depths 1 and 2: moves, scores, kinds, signs, leaves, nodes), the static
scores and the feature matrices of 300 positions of the shipped games under the ``gm`` weights
must stay bit-identical to those recorded in ``tests/data/search_oracle.npz`` (made on main's code
before any speed change, commit 5a75b61).

The file holds a 64-bit digest per position and result (so that a failure names the first
position that differs) and the full rows of the first few positions. Re-record only for a change
that is meant to change results::

    PYTHONPATH=. python tests/search/tree/test_search_api_oracle.py --record
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import chess
import numpy as np
import pytest

from search.core.convert import from_chess
from search.evaluation.evaluation_api import evaluate_batch_units
from search.evaluation.feature_kernels import features_batch_kernel
from search.tree.search_api import search_many, signed_features, sweep
from search.params.weights import load_weights

RECORD = Path(__file__).resolve().parents[2] / "data" / "search_oracle.npz"
#: positions whose full rows are stored besides their digests
FULL_ROWS = 4


def oracle_boards(real_boards: list[chess.Board]) -> np.ndarray:
    """300 positions spread over the 52 shipped games (every tenth from the fourth)."""
    return np.stack([from_chess(b) for b in real_boards[3::10][:300]])


def _digest(*parts: np.ndarray) -> np.uint64:
    h = hashlib.blake2b(digest_size=8)
    for a in parts:
        a = np.ascontiguousarray(a)
        h.update(a.dtype.newbyteorder("<").str.encode())
        h.update(np.asarray(a.shape, dtype="<i8").tobytes())
        h.update(a.astype(a.dtype.newbyteorder("<")).tobytes())
    return np.frombuffer(h.digest(), dtype="<u8")[0]


def results(boards: np.ndarray) -> dict[str, np.ndarray]:
    """Per result name: the digest of each position's part (uint64[P]), and ``full_<name>`` the
    concatenated rows of the first FULL_ROWS positions."""
    w = load_weights("gm").values
    out: dict[str, np.ndarray] = {}
    n = len(boards)
    for depth in (1, 2, 3):
        r = search_many(boards, depth, w)
        rows = [(r.scores[p:p + 1], r.pv[p, :r.pv_len[p]], r.kinds[p:p + 1], r.leaves[p], r.nodes[p:p + 1],
                 r.budget_exhausted[p:p + 1]) for p in range(n)]
        out[f"search_d{depth}"] = np.array([_digest(*row) for row in rows], dtype=np.uint64)
        out[f"full_search_d{depth}"] = np.concatenate(
            [np.concatenate([a.astype(np.int64).ravel() for a in row]) for row in rows[:FULL_ROWS]])
    for depth in (1, 2):
        s = sweep(boards, depth, w)
        ptr = s.pos_ptr
        rows = [(s.moves[ptr[p]:ptr[p + 1]], s.scores[ptr[p]:ptr[p + 1]], s.kinds[ptr[p]:ptr[p + 1]],
                 s.signs[ptr[p]:ptr[p + 1]], s.leaves[ptr[p]:ptr[p + 1]], s.nodes[p:p + 1]) for p in range(n)]
        out[f"sweep_d{depth}"] = np.array([_digest(*row) for row in rows], dtype=np.uint64)
        out[f"full_sweep_d{depth}"] = np.concatenate(
            [np.concatenate([a.astype(np.int64).ravel() for a in row]) for row in rows[:FULL_ROWS]])
        if depth == 1:
            # the leaves' signed feature rows, as MMTO reads them
            indptr, idx, val = signed_features(s.leaves, s.signs)
            out["leaf_features_d1"] = np.array(
                [_digest(idx[indptr[ptr[p]]:indptr[ptr[p + 1]]], val[indptr[ptr[p]]:indptr[ptr[p + 1]]],
                         np.diff(indptr[ptr[p]:ptr[p + 1] + 1])) for p in range(n)], dtype=np.uint64)
    out["static"] = evaluate_batch_units(boards, w).astype(np.int64)
    indptr, idx, val = features_batch_kernel(boards)
    out["features"] = np.array([_digest(idx[indptr[p]:indptr[p + 1]], val[indptr[p]:indptr[p + 1]])
                                for p in range(n)], dtype=np.uint64)
    return out


@pytest.fixture(scope="module")
def computed(real_boards: list[chess.Board]) -> dict[str, np.ndarray]:
    return results(oracle_boards(real_boards))


@pytest.fixture(scope="module")
def recorded() -> dict[str, np.ndarray]:
    with np.load(RECORD) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", ["search_d1", "search_d2", "search_d3", "sweep_d1", "sweep_d2",
                                  "leaf_features_d1", "static", "features"])
def test_oracle_results_are_the_recorded_ones(name: str, computed: dict[str, np.ndarray],
                                              recorded: dict[str, np.ndarray]) -> None:
    got, want = computed[name], recorded[name]
    assert got.shape == want.shape == (300,)
    differ = np.flatnonzero(got != want)
    assert differ.size == 0, f"{name}: {differ.size} positions differ, the first is position {differ[0]}"
    if f"full_{name}" in recorded:
        np.testing.assert_array_equal(computed[f"full_{name}"], recorded[f"full_{name}"])


def _record() -> None:
    from tests.conftest import SAMPLE_PGN, boards_from_games, read_games  # noqa: PLC0415
    boards = oracle_boards(boards_from_games(read_games(SAMPLE_PGN, 10**9), 10**9))
    np.savez_compressed(RECORD, **results(boards))
    print(f"{RECORD}: {RECORD.stat().st_size} bytes")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/search/tree/test_search_api_oracle.py --record")
    _record()
