"""The positions the GA's recovery test learns piece values from (``test_ga_recovers_known_piece_values``):
derived from the shipped sample games once and stored in ``tests/data/ga-labelled.txt``, since the
derivation (about 48,000 candidate positions screened by sweeps) took half a minute of every
test run. The test reads the file and checks, by fresh searches, that every stored position still
has the property it was chosen for.

Regenerate after a change to the search or the evaluator that the check reports:

    python -m tests.tuner.methods.ga_labelled
"""

from __future__ import annotations

import random
from pathlib import Path

import chess
import numpy as np

from search.params.catalog import FEATURE_INDEX, N_FEATURES, PHASE_MAX
from search.core.convert import from_chess, from_fen, move_to_uci, to_fen, uci_key
from search.tree.search_api import KIND_EVAL, signed_features, sweep
from tuner.training.positions import Positions, check_played
from tuner.training.training_data import TrainingData

#: the stored positions: ``FEN;label (UCI);split`` per line, split ``train`` or ``held-out``
DATA = Path(__file__).resolve().parents[2] / "data" / "ga-labelled.txt"

TRUE = {"pawn": 100, "knight": 300, "bishop": 330, "rook": 480, "queen": 900}
PIECES = ("knight", "bishop", "rook", "queen")


def material(values: dict[str, int]) -> np.ndarray:
    w = np.zeros(N_FEATURES, dtype=np.int32)
    for piece, v in values.items():
        w[FEATURE_INDEX[f"mg.material.{piece}"]] = v
        w[FEATURE_INDEX[f"eg.material.{piece}"]] = v
    return w


def best_rows(sw) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """Per position: the row of the best move and whether it is the only best."""
    starts = sw.pos_ptr[:-1]
    top = np.maximum.reduceat(sw.scores, starts)
    is_top = sw.scores == np.repeat(top, np.diff(sw.pos_ptr))
    unique = np.add.reduceat(is_top.astype(np.int64), starts) == 1
    rows = np.array([starts[p] + int(np.argmax(sw.scores[sw.pos_ptr[p]:sw.pos_ptr[p + 1]])) for p in range(len(starts))])
    return rows, unique


# the values the search is shown per move when screening candidates: the true ones, each piece's
# moved by 15 % (what makes a position informative), and the four pieces' scale against the pawn
# moved by 20 % (rare positions that pin that scale, taken first when balancing)
VARIANTS = [TRUE] + [{**TRUE, p: round(TRUE[p] * f)} for p in PIECES for f in (0.85, 1.15)] \
    + [{"pawn": 100, **{p: round(TRUE[p] * f) for p in PIECES}} for f in (0.8, 1.2)]
MATERIAL_NAMES = ("pawn",) + PIECES


def screen(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each board, whether its unique best move under TRUE changes under each other variant
    (bool[P, len(VARIANTS) - 1]), estimated from one sweep: every move's score is recomputed from
    the material of the PV leaf the true values led to (exact for TRUE; a PV that would change
    under other values is not followed). Also the sweep's node counts (int64[P])."""
    sw = sweep(boards, 1, material(TRUE))
    evals = sw.kinds == KIND_EVAL
    indptr, ind, val = signed_features(sw.leaves, np.where(evals, sw.signs, 0))
    column = np.full(N_FEATURES, -1)
    for j, piece in enumerate(MATERIAL_NAMES):
        column[[FEATURE_INDEX[f"mg.material.{piece}"], FEATURE_INDEX[f"eg.material.{piece}"]]] = j
    n_rows, k = len(sw.moves), len(MATERIAL_NAMES)
    rows = np.repeat(np.arange(n_rows), np.diff(indptr))
    col = column[ind]
    has = col >= 0
    counts = np.bincount(rows[has] * k + col[has], weights=val[has], minlength=n_rows * k)
    counts = np.rint(counts).astype(np.int64).reshape(n_rows, k) // PHASE_MAX  # mg + eg = count * PHASE_MAX
    values = np.array([[v[p] for p in MATERIAL_NAMES] for v in VARIANTS], dtype=np.int64)
    scores = np.where(evals[:, None], counts @ values.T * PHASE_MAX, sw.scores[:, None])
    starts, n_moves = sw.pos_ptr[:-1], np.diff(sw.pos_ptr)
    is_top = scores == np.repeat(np.maximum.reduceat(scores, starts, axis=0), n_moves, axis=0)
    unique = np.add.reduceat(is_top.astype(np.int64), starts, axis=0) == 1
    last = n_rows - np.arange(n_rows)[:, None]  # the first best row has the largest
    first = n_rows - np.maximum.reduceat(np.where(is_top, last, 0), starts, axis=0)
    return unique[:, :1] & (first[:, 1:] != first[:, :1]), sw.nodes


def one_move_away(board: chess.Board, moves: list[chess.Move]) -> list[chess.Board]:
    out = []
    for move in moves:
        child = board.copy(stack=False)
        child.push(move)
        if not child.is_game_over():
            out.append(child)
    return out


def screen_boards(boards: list[chess.Board]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arr = np.stack([from_chess(b) for b in boards])
    flags, nodes = zip(*(screen(arr[i:i + 5000]) for i in range(0, len(arr), 5000)))
    return arr, np.concatenate(flags), np.concatenate(nodes)


def derived_training_data(real_boards: list[chess.Board], seed: int, *, children: int = 14, cap: int = 20,
                          max_nodes: int = 2000, cheap_first: bool = False, expand: bool = False, scale_cap: int = 20,
                          scale_max_nodes: int = 2000, scale_to_train: bool = False, caps: dict | None = None) -> TrainingData:
    """The ``labelled`` positions (see there), with the child sample drawn from ``seed``."""
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    for board in real_boards:
        boards.append(board)
        boards += one_move_away(board, rng.sample(list(board.legal_moves), min(children, board.legal_moves.count())))
    arr, flag, all_nodes = screen_boards(boards)
    if expand:
        ok = flag[:, :8].any(axis=1) & (all_nodes <= max_nodes)
        rare = flag[:, 8:].any(axis=1) & ok
        more = [c for i in np.flatnonzero(rare) for c in one_move_away(boards[i], list(boards[i].legal_moves))]
        arr2, flag2, nodes2 = screen_boards(more)
        boards += more
        arr, flag, all_nodes = np.concatenate([arr, arr2]), np.concatenate([flag, flag2]), np.concatenate([all_nodes, nodes2])
    classes = [flag[:, j] & flag[:, :8].any(axis=1) & (all_nodes <= (scale_max_nodes if j >= 8 else max_nodes))
               for j in range(flag.shape[1])]
    # balance: the rarest kind of information first, up to `cap` positions of each
    chosen: list[int] = []
    taken = np.zeros(len(boards), dtype=bool)
    order = np.random.default_rng(seed).permutation(len(boards))
    if cheap_first:
        order = order[np.argsort(all_nodes[order], kind="stable")]
    for j in sorted(range(len(classes)), key=lambda j: classes[j].sum()):
        c = classes[j]
        room = (caps or {}).get(j, scale_cap if j >= 8 else cap) - int((c & taken).sum())
        pick = order[c[order] & ~taken[order]][:max(room, 0)]
        taken[pick] = True
        chosen += pick.tolist()
    # exact labels and the exact criterion: a unique best move that changes when one piece value
    # moves by 15 % (searched again under each value set)
    chosen_boards = arr[chosen]
    truth = sweep(chosen_boards, 1, material(TRUE), leaves=False)
    rows, unique = best_rows(truth)
    informative = np.zeros(len(chosen), dtype=bool)
    for values in VARIANTS[1:9]:
        other_rows, _ = best_rows(sweep(chosen_boards, 1, material(values), leaves=False))
        informative |= unique & (other_rows != rows)
    keep = np.flatnonzero(informative)  # in the order taken: the rare kinds alternate between the splits
    labels = (truth.moves[rows[keep]] & 0x7FFF).astype(np.int32)
    pos = Positions(chosen_boards[keep], labels, np.arange(len(keep), dtype=np.int64),
                    [boards[chosen[i]].fen() for i in keep])
    if scale_to_train:
        is_scale = flag[np.array(chosen)[keep], 8:].any(axis=1)
        rest = np.flatnonzero(~is_scale)
        train = pos.subset(np.sort(np.concatenate([np.flatnonzero(is_scale), rest[0::2]])))
        held_out = pos.subset(rest[1::2])
    else:
        train = pos.subset(np.arange(0, len(keep), 2))
        held_out = pos.subset(np.arange(1, len(keep), 2))
    return TrainingData(train, held_out, check_played(train))




def informative(boards: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Whether each position's unique best move under ``TRUE`` (depth 1) is its label and
    changes when one piece value moves by 15 %: the criterion the positions were kept by."""
    truth = sweep(boards, 1, material(TRUE), leaves=False)
    rows, unique = best_rows(truth)
    ok = unique & ((truth.moves[rows] & 0x7FFF).astype(np.int32) == labels)
    changes = np.zeros(len(boards), dtype=bool)
    for values in VARIANTS[1:9]:
        other_rows, _ = best_rows(sweep(boards, 1, material(values), leaves=False))
        changes |= other_rows != rows
    return ok & changes


def write(data: TrainingData, path: Path = DATA) -> None:
    """Store ``data``'s positions and labels, training ones first."""
    lines = [f"{to_fen(b)};{move_to_uci(int(m))};{split}" for split, pos in (("train", data.train), ("held-out", data.validation))
             for b, m in zip(pos.boards, pos.played)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read(path: Path = DATA) -> TrainingData:
    """The stored positions as training data (the held-out ones as its validation split)."""
    parts: dict[str, tuple[list[np.ndarray], list[int], list[str]]] = {"train": ([], [], []), "held-out": ([], [], [])}
    for line in path.read_text(encoding="utf-8").splitlines():
        fen, uci, split = line.split(";")
        board = from_fen(fen)
        boards, labels, fens = parts[split]
        boards.append(board)
        labels.append(uci_key(uci))
        fens.append(fen)
    train, held_out = (Positions(np.stack(b), np.array(m, dtype=np.int32), np.arange(len(m), dtype=np.int64), f)
                       for b, m, f in parts.values())
    return TrainingData(train, held_out, check_played(train))


if __name__ == "__main__":
    from tests.conftest import SAMPLE_PGN, boards_from_games, read_games

    derived = derived_training_data(boards_from_games(read_games(SAMPLE_PGN, 10**9), 10**9), seed=11)
    write(derived)
    print(f"{DATA}: {len(derived.train)} training and {len(derived.validation)} held-out positions")
