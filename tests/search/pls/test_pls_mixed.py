"""The mixed probability-limited search (issue 43): the move model above a node probability
(``model_above``), the static prior below (search/pls_kernels.py). With ``model_above`` 0 it is
the search before, node for node (figures recorded from it on shipped positions); with 1 it is
the static prior's search, valued as the plain-Python reference (tests/oracles/static_prior.py);
in between, the reference with the model above the setting, and the same with the pre-move
model (``gm-premove``) below instead of the prior. A cut iteration keeps the best of its root
moves searched in full, as the depth-limited search does."""

from __future__ import annotations

from collections.abc import Callable

import chess
import numpy as np
import pytest

from search.tree.alphabeta import WS_MOVES
from search.core.convert import from_chess, move_to_uci
from search.core.movegen import ALL_MOVES, MAX_MOVES, generate_moves
from search.pls.move_catalog import (GROUP_INDEX, GROUP_NAMES, GROUP_OFFSETS, GROUP_SIZES, N_GROUPS, N_MOVE_FEATURES,
                                     PREMOVE_GROUPS)
from search.pls.move_model import MoveModel, load_move_model, move_probabilities
from search.pls.move_model_kernels import premove_scores
from search.pls.pls import MODEL_ABOVE_PLAY, PlsSearcher, pls_iterate, pls_search
from search.pls.pls_kernels import LOG_SCALE, MODEL_EVERYWHERE, model_units, root_budget
from search.tree.search_api import KIND_EVAL
from search.params.weights import load_weights
from tests.oracles.minimax import Oracle
from tests.oracles.move_features import reference_move_features
from tests.oracles.static_prior import mixed_value, prior_log_probs, softmax_units

CLASSIC = load_weights("classic").values
GM_WEIGHTS = load_weights("gm").values
GM = load_move_model("gm")

#: (shipped position's index, threshold, score, nodes, first move) of ``pls_search(board,
#: threshold, gm, gm model, tt_bits=12)`` as the search gave them before the mixed search existed
BEFORE = [
    (5, 1 / 32, 2928, 265, "d8h4"), (5, 1 / 512, 2232, 2426, "d8h4"),
    (805, 1 / 32, 264, 181, "b8c6"), (805, 1 / 512, -120, 1425, "b8c6"),
    (1605, 1 / 32, -6697, 420, "h4g3"), (1605, 1 / 512, -6220, 2829, "h4g5"),
    (2405, 1 / 32, 408, 133, "g1f3"), (2405, 1 / 512, 168, 1688, "g1f3"),
]


@pytest.fixture(scope="module")
def boards(real_boards: list[chess.Board]) -> list[chess.Board]:
    return [b.copy(stack=False) for b in real_boards[5::160]]


#: the models' log-probabilities of the positions met so far, by model and position (the tests
#: walk the same trees with several settings; remembering them changes no value, only the time)
_LPS: dict[tuple[int, object], dict[str, int]] = {}


def _remembered(model: MoveModel, board: chess.Board,
                compute: Callable[[chess.Board], dict[str, int]]) -> dict[str, int]:
    key = (id(model), (board.board_fen(), board.turn, board.castling_rights, board.ep_square))
    found = _LPS.get(key)
    if found is None:
        found = _LPS[key] = compute(board)
    return found


def _model_lps(model: MoveModel):  # type: ignore[no-untyped-def]
    def compute(board: chess.Board) -> dict[str, int]:
        mp = move_probabilities(from_chess(board)[None, :], model)
        lse = float(np.logaddexp.reduce(mp.scores))
        return {move_to_uci(int(m)): min(0, int(round((s - lse) * LOG_SCALE))) for m, s in zip(mp.moves, mp.scores)}

    def lps(board: chess.Board) -> dict[str, int]:
        return _remembered(model, board, compute)
    return lps


def test_model_everywhere_is_the_search_before(real_boards: list[chess.Board]) -> None:
    for index, threshold, score, nodes, move in BEFORE:
        arr = from_chess(real_boards[index])
        r = pls_search(arr, threshold, GM_WEIGHTS, GM, tt_bits=12, model_above=0.0)
        assert (r.score, r.nodes, move_to_uci(r.pv[0])) == (score, nodes, move), (index, threshold)
        default = pls_search(arr, threshold, GM_WEIGHTS, GM, tt_bits=12)  # the API's default: the model everywhere
        assert (default.score, default.nodes, default.pv) == (r.score, r.nodes, r.pv)


def test_model_units() -> None:
    assert model_units(0.01, 0.0) == MODEL_EVERYWHERE
    assert model_units(0.01, 1.0) == root_budget(0.01) + 1  # above every node's budget: nowhere
    # a node whose path has probability 1/16 and more uses the model at 1/16 (rounding aside)
    assert model_units(0.001, 1 / 16) == root_budget(0.001) - round(np.log(16) * LOG_SCALE) + 1


#: the deepest threshold's reference is most of these tests' time: it runs in the slow set
DEEP = pytest.param((0.004,), marks=pytest.mark.slow, id="deep")


@pytest.mark.parametrize("thresholds", [pytest.param((0.3, 0.02), id="shallow"), DEEP])
def test_static_prior_everywhere_is_the_reference(boards: list[chess.Board], thresholds: tuple[float, ...]) -> None:
    """``model_above`` 1: every node's probability is the static prior's; the value is the
    reference's, the PV leaf's static evaluation the score; the prior does not evaluate the
    model, so a model of zeros gives the same search node for node."""
    oracle = Oracle(CLASSIC)
    seen_captures = 0
    for board in boards[:4]:
        seen_captures += any(board.is_capture(m) for m in board.legal_moves)
        for threshold in thresholds:
            expected = mixed_value(oracle, board.copy(), root_budget(threshold), model_units(threshold, 1.0),
                                   _model_lps(GM))
            result = pls_search(from_chess(board), threshold, CLASSIC, GM, tt_bits=10, model_above=1.0)
            assert not result.budget_exhausted
            assert result.score == expected, (board.fen(), threshold)
            uniform = pls_search(from_chess(board), threshold, CLASSIC, MoveModel.uniform(), tt_bits=10,
                                 model_above=1.0)
            assert (uniform.score, uniform.nodes, uniform.pv) == (result.score, result.nodes, result.pv)
            if result.kind == KIND_EVAL:
                leaf = board.copy()
                for u in result.pv_uci():
                    leaf.push_uci(u)
                assert result.score == result.leaf_sign * oracle.static(leaf)
    assert seen_captures >= 1  # the prior's capture weights are exercised


def test_the_prior_s_probabilities() -> None:
    """Root log-probabilities of the prior, read from the kernel's scratch: a pawn capture weighs
    3, a knight capture 7, a quiet move 1 (the reference's), and they sum to 1."""
    board = chess.Board("4k3/8/8/3p4/4P3/8/1n6/1R2K3 w - - 0 1")  # exd5 weighs 3, Rxb2 7
    s = PlsSearcher(CLASSIC, GM, model_above=1.0)
    s.search(from_chess(board), 0.5)
    n = board.legal_moves.count()
    got = {move_to_uci(int(m)): int(v) for m, v in zip(s.ws.arrays[WS_MOVES][0, :n], s.ps[3][0, :n])}
    assert got == prior_log_probs(board)
    weights = {u: np.exp(v / LOG_SCALE) for u, v in got.items()}
    assert abs(sum(weights.values()) - 1) < 1e-5
    assert weights["e4d5"] / weights["e1e2"] == pytest.approx(3, rel=1e-4)
    assert weights["b1b2"] / weights["e1e2"] == pytest.approx(7, rel=1e-4)


@pytest.mark.parametrize("model_above", [1 / 4, 1 / 32])
def test_mixed_is_the_reference(boards: list[chess.Board], model_above: float) -> None:
    """Model above ``model_above``, prior below: the reference's value on the same tree."""
    oracle = Oracle(CLASSIC)
    for board in boards[:3]:
        for threshold in (0.02, 0.004):
            expected = mixed_value(oracle, board.copy(), root_budget(threshold), model_units(threshold, model_above),
                                   _model_lps(GM))
            for order in ("model", "default"):
                result = pls_search(from_chess(board), threshold, CLASSIC, GM, tt_bits=10, order=order,
                                    model_above=model_above)
                assert result.score == expected, (board.fen(), threshold, order)


def test_a_cut_iteration_keeps_its_fully_searched_root_moves(boards: list[chess.Board]) -> None:
    """A node limit that cuts an iteration after its first root move: the iteration is kept
    (partial, the best of the root moves searched in full, played as the depth-limited search
    plays it); without ``keep_partial`` it is discarded."""
    arr = from_chess(boards[3])
    full = pls_iterate(arr, CLASSIC, GM, node_limit=10**6, floor=1 / 2048, model_above=MODEL_ABOVE_PLAY)
    assert not any(it.partial for it in full) and len(full) == 4
    last_start = full[-2].total_nodes  # the nodes before the last iteration
    limit = last_start + full[-1].result.nodes * 3 // 4
    kept = PlsSearcher(CLASSIC, GM, tt_bits=16, model_above=MODEL_ABOVE_PLAY)
    cut = pls_iterate(arr, CLASSIC, GM, node_limit=limit, floor=1 / 2048, searcher=kept)
    assert kept.cut and cut[-1].partial and len(cut) == 4 and cut[-1].total_nodes == limit
    assert kept.ws.root_moves_done >= 1
    assert chess.Move.from_uci(move_to_uci(cut[-1].result.pv[0])) in boards[3].legal_moves
    dropped = PlsSearcher(CLASSIC, GM, tt_bits=16, model_above=MODEL_ABOVE_PLAY, keep_partial=False)
    dis = pls_iterate(arr, CLASSIC, GM, node_limit=limit, floor=1 / 2048, searcher=dropped)
    assert dropped.cut and len(dis) == 3 and not dis[-1].partial
    assert [(i.result.score, i.result.pv) for i in dis] == [(i.result.score, i.result.pv) for i in cut[:3]]
    it = kept.think(arr, [], node_limit=limit, max_depth=4, start=1 / 32)
    assert it is not None and it.partial and it.depth == 4


def test_bad_model_above_is_refused() -> None:
    arr = from_chess(chess.Board())
    for bad in (-0.1, 1.5, True, "0.1"):
        with pytest.raises(ValueError, match="model_above must be a probability"):
            pls_search(arr, 0.1, CLASSIC, GM, model_above=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the pre-move model below

GM_PREMOVE = load_move_model("gm-premove")


def _premove_lps(model: MoveModel):  # type: ignore[no-untyped-def]
    """The pre-move model's log-probabilities from the python-chess feature oracle: each move's
    score is the sum of the model's weights at its active features of the PREMOVE_GROUPS."""
    premove = np.zeros(N_MOVE_FEATURES, dtype=bool)
    for g in PREMOVE_GROUPS:
        o = GROUP_OFFSETS[GROUP_INDEX[g]]
        premove[o:o + GROUP_SIZES[GROUP_INDEX[g]]] = True

    def compute(board: chess.Board) -> dict[str, int]:
        return softmax_units({u: float(sum(model.weights[i] for i in idx if premove[i]))
                              for u, idx in reference_move_features(board).items()})

    def lps(board: chess.Board) -> dict[str, int]:
        return _remembered(model, board, compute)
    return lps


def test_the_builtin_premove_model_reads_only_premove_groups() -> None:
    """``gm-premove`` was trained on the pre-move groups alone: every other weight is 0, and
    each pre-move group has weights."""
    for g, name in enumerate(GROUP_NAMES):
        block = GM_PREMOVE.weights[GROUP_OFFSETS[g]:GROUP_OFFSETS[g] + GROUP_SIZES[g]]
        if name in PREMOVE_GROUPS:
            assert np.any(block != 0), name
        else:
            assert not np.any(block), name
    assert GM_PREMOVE.metadata["config"]["groups"] == ["premove"]


def test_premove_scores_are_the_full_features_premove_groups(real_boards: list[chess.Board]) -> None:
    """The kernel's pre-move scores (no move made) equal the full features' scores with a model
    that is 0 outside the pre-move groups, move for move, on shipped positions, a promotion, en
    passant and castling included."""
    extra = [chess.Board("r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1")]
    boards = [b.copy(stack=False) for b in real_boards[::97]] + extra
    arr = np.stack([from_chess(b) for b in boards])
    mp = move_probabilities(arr, GM_PREMOVE)
    buf = np.zeros(MAX_MOVES, dtype=np.int32)
    gain, row, out = np.zeros(40, dtype=np.int64), np.zeros(N_GROUPS, dtype=np.int64), np.zeros(MAX_MOVES)
    for p, b in enumerate(arr):
        n = generate_moves(b, buf, ALL_MOVES)
        premove_scores(b, buf, n, GM_PREMOVE.weights, gain, row, out)
        a, z = mp.pos_ptr[p], mp.pos_ptr[p + 1]
        assert [int(m) for m in mp.moves[a:z]] == [int(m) for m in buf[:n]]
        np.testing.assert_allclose(out[:n], mp.scores[a:z], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("model_above", "thresholds"), [
    pytest.param(1 / 4, (0.02,), id="0.25-shallow"),
    pytest.param(1 / 4, (0.004,), marks=pytest.mark.slow, id="0.25-deep"),
    pytest.param(1.0, (0.02, 0.004), id="1.0")])
def test_mixed_with_the_premove_model_is_the_reference(boards: list[chess.Board], model_above: float,
                                                       thresholds: tuple[float, ...]) -> None:
    """Model above ``model_above``, the pre-move model below (its features from the python-chess
    oracle): the reference's value on the same tree, in both orders; it is not the static
    prior's search."""
    oracle = Oracle(CLASSIC)
    differs = 0
    for board in boards[:3]:
        for threshold in thresholds:
            units = root_budget(threshold), model_units(threshold, model_above)
            expected = mixed_value(oracle, board.copy(), *units, _model_lps(GM), leaf_lps=_premove_lps(GM_PREMOVE))
            for order in ("model", "default"):
                s = PlsSearcher(CLASSIC, GM, tt_bits=10, order=order, model_above=model_above, leaf_model=GM_PREMOVE)
                result = s.search(from_chess(board), threshold)
                assert result.score == expected, (board.fen(), threshold, order)
            prior = pls_search(from_chess(board), threshold, CLASSIC, GM, tt_bits=10, model_above=model_above)
            differs += prior.nodes != result.nodes
    assert differs >= 1
