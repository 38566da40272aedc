"""The batch kernels' score cache (search/evaluation/eval_cache.py), read through the evaluator seam's
static score with a batch kernel's tables (search/evaluation/static_eval.py): the evaluation's own scores,
hit or miss, in game order, shuffled through a two-entry cache and for other weights; a stored
entry is what a hit returns; an empty entry is never taken for a score."""

from __future__ import annotations

import chess
import numpy as np

from search.core.board import W_KEY
from search.core.convert import from_chess
from search.evaluation.eval_cache import EC_ROWS, SCORE_BIAS, _slot, new_eval_cache
from search.evaluation.feature_kernels import evaluate_kernel, new_pawn_king_table
from search.evaluation.material_pst import new_psq_stack, new_psq_table
from search.evaluation.static_eval import eval_root, static_score
from search.params.weights import load_weights


def evaluate_with_caches(b: np.ndarray, w: np.ndarray, scratch: np.ndarray, pk: np.ndarray, ec: np.ndarray) -> int:
    """The static score of ``b`` at the root of a batch kernel's search whose tables are the
    pawn-king table ``pk`` and the score cache ``ec``."""
    es = (pk, ec, new_psq_table(w), new_psq_stack())
    eval_root(es, b)
    return static_score(w, es, 0, b, scratch)


def test_cached_scores_are_the_evaluations(real_boards: list[chess.Board]) -> None:
    boards = [from_chess(b) for b in real_boards]
    rng = np.random.default_rng(5)
    gm = load_weights("gm").values
    for w in (gm, rng.integers(-300, 300, gm.shape[0]).astype(np.int32)):
        scratch = np.zeros(4, dtype=np.int64)
        want = [int(evaluate_kernel(b, w, scratch)) for b in boards]
        assert min(want) < 0 < max(want)
        pk, ec = new_pawn_king_table(), new_eval_cache()
        assert ec.shape == (EC_ROWS, 2) and not ec.any()
        assert [evaluate_with_caches(b, w, scratch, pk, ec) for b in boards] == want
        stored = {int(k) for k in ec[:, 0]}
        assert sum(int(b[W_KEY]) in stored for b in boards) > len(boards) // 2
        assert [evaluate_with_caches(b, w, scratch, pk, ec) for b in boards] == want  # hits now
        small = new_eval_cache()[:2]  # entries replaced at almost every call
        order = rng.permutation(len(boards))
        got = [evaluate_with_caches(boards[i], w, scratch, new_pawn_king_table(), small) for i in order]
        assert got == [want[i] for i in order]


MIDDLE_GAME = "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R2QK2R w KQ - 0 8"


def test_a_hit_returns_the_stored_score_without_evaluating() -> None:
    b = from_chess(chess.Board(MIDDLE_GAME))
    w = load_weights("gm").values
    scratch = np.zeros(4, dtype=np.int64)
    pk, ec = new_pawn_king_table(), new_eval_cache()
    v = evaluate_with_caches(b, w, scratch, pk, ec)
    r = _slot(b[W_KEY], EC_ROWS)
    assert ec[r, 0] == b[W_KEY] and int(ec[r, 1]) - SCORE_BIAS == v
    ec[r, 1] = np.uint64(SCORE_BIAS - 12345)  # what a hit returns is the entry, negative or not
    assert evaluate_with_caches(b, w, scratch, pk, ec) == -12345


def test_an_empty_entry_is_not_a_score_even_for_key_zero() -> None:
    b = from_chess(chess.Board(MIDDLE_GAME))
    b[W_KEY] = 0  # the key of an empty entry
    w = load_weights("gm").values
    scratch = np.zeros(4, dtype=np.int64)
    want = evaluate_kernel(b, w, scratch)
    assert want != 0
    ec = new_eval_cache()
    assert evaluate_with_caches(b, w, scratch, new_pawn_king_table(), ec) == want
    assert ec[_slot(np.uint64(0), EC_ROWS), 1] == np.uint64(want + SCORE_BIAS)
