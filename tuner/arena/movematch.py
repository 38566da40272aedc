"""How often an engine's search picks the move a strong player chose: top-k credit and rank.

A *sweep* (:func:`search.tree.search_api.sweep`) scores every legal move of a position from the mover's
view. For the played move, let ``higher`` be the number of moves scored strictly better and
``equal`` the number scored the same (itself included). Then

* top-k credit = ``clip((k - higher) / equal, 0, 1)``: the chance that the played move is among
  the first k when ties are broken at random. For k = 1 this is the move-match: 1/m when the
  played move is one of m equally best moves (one definition, :func:`search.tree.batch.played_credit`,
  shared with the GA's batched fitness);
* rank = ``higher + (equal + 1) / 2``: 1 for a unique best move, ties share the mean rank.

Each mean credit comes with a 95% interval: the normal one of a mean over positions (1.96
sample standard deviations of the per-position credits over the square root of their number,
clipped to [0, 1]; :func:`tuner.arena.epd.mean_interval`), which for credits of 0 or 1 is the
Wald interval of a proportion. Two weight sets measured on the same positions are compared by
the paired difference of their credits (:func:`tuner.training.verdict.paired`, as the end of a
run compares the tuned weights with the start; ``tuner bench move-match`` prints it).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from search.evaluation.evaluators import Evaluator
from search.tree.search_api import move_credit, sweep
from tuner.arena.epd import mean_interval
from tuner.cores import resolve_threads
from tuner.progress import progress_bar
from tuner.training.positions import Positions
from tuner.errors import TunerError
from tuner.training.executor import Executor, LocalExecutor


def _higher_equal(pos_ptr: np.ndarray, played_rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    starts = pos_ptr[:-1]
    sp = np.repeat(scores[played_rows], np.diff(pos_ptr))
    higher = np.add.reduceat((scores > sp).astype(np.int64), starts)
    equal = np.add.reduceat((scores == sp).astype(np.int64), starts)
    return higher, equal


def top_k_credit(pos_ptr: np.ndarray, played_rows: np.ndarray, scores: np.ndarray, k: int = 1) -> np.ndarray:
    """Per position (every position has at least one row), the top-``k`` credit of the played
    move's row (float64[P]); ``scores`` int64[M] from a sweep, ``played_rows`` int64[P]. The one
    definition is :func:`search.tree.batch.played_credit` (also the GA's fitness)."""
    return move_credit(pos_ptr, played_rows, scores, k)


def ranks(pos_ptr: np.ndarray, played_rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Per position, the rank of the played move among the legal moves (float64[P], ties share)."""
    higher, equal = _higher_equal(pos_ptr, played_rows, scores)
    return higher + (equal + 1) / 2


@dataclass(frozen=True)
class MoveMatch:
    """Move-match figures of one weight set on a set of positions; ``*_ci95``: 95% intervals of
    the means (module docstring; None for fewer than two positions); ``credits``: the top-1
    credit of each position (float64[positions], for paired comparisons)."""

    positions: int
    top1: float  # mean top-1 credit (ties as fractions)
    top3: float  # mean top-3 credit
    mean_rank: float
    mean_legal_moves: float
    top1_ci95: tuple[float, float] | None = None
    top3_ci95: tuple[float, float] | None = None
    credits: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    def to_json(self) -> dict[str, object]:
        def ci(x: tuple[float, float] | None) -> list[float] | None:
            return None if x is None else [round(x[0], 5), round(x[1], 5)]

        return {"positions": self.positions, "top1": round(self.top1, 5), "top1_ci95": ci(self.top1_ci95),
                "top3": round(self.top3, 5), "top3_ci95": ci(self.top3_ci95),
                "mean_rank": round(self.mean_rank, 4), "mean_legal_moves": round(self.mean_legal_moves, 2)}


def measure(pos: Positions, played_index: np.ndarray, weights: Evaluator, *, depth: int, budget: int,
            n_threads: int | None = None, batch: int = 4096, progress: object = None,
            executor: Executor | None = None) -> MoveMatch:
    """Sweep ``pos`` with ``weights`` at ``depth`` and measure the played moves (their indices
    among the legal moves: ``played_index``, from :func:`tuner.training.positions.check_played`), in chunks
    of ``batch`` positions through ``executor`` (default: this process with ``n_threads``
    threads); each position's credits are kept in its place, so every executor gives the same
    figures. ``progress``, if given, is called with the number of positions done after each
    chunk."""
    top1 = np.zeros(len(pos), dtype=np.float64)
    top3 = np.zeros(len(pos), dtype=np.float64)
    rank, legal = 0.0, 0
    executor = executor or LocalExecutor(n_threads)
    for a, z, (t1, t3, r, n_legal) in executor.map_chunks(measure_chunk, (pos.boards, played_index), size=batch,
                                                          shared={"weights": weights}, what="move-match",
                                                          depth=depth, budget=budget):
        top1[a:z] = t1
        top3[a:z] = t3
        rank += r
        legal += n_legal
        if callable(progress):
            progress(z - a)
    n = max(len(pos), 1)
    return MoveMatch(len(pos), float(top1.sum()) / n, float(top3.sum()) / n, rank / n, legal / n,
                     mean_interval(top1, 0.0, 1.0), mean_interval(top3, 0.0, 1.0), top1)


def measure_weight_sets(data: str | Path, split: str, weight_sets: Sequence[tuple[str, Evaluator]], *,
                        depth: int, max_positions: int = 0, seed: int = 0, threads: int = 0,
                        progress: bool = False, executor: Executor | None = None,
                        ) -> tuple[Positions, list[tuple[str, MoveMatch]]]:
    """The figures of ``tuner bench move-match`` (and of ``tuner bench compare``, which must
    agree with it): read ``split`` of the position set ``data`` (a seeded sample of
    ``max_positions`` when > 0), check the played moves, and :func:`measure` each named
    weight set at ``depth`` plies + quiescence with the search's default node budget.
    ``threads`` 0: all cores; ``executor``: where the sweeps run (default: this process). Returns the positions and ``(name, figures)`` in the order given;
    a one-line :class:`TunerError` for an unreadable or empty split."""
    from search.tree.search_api import DEFAULT_BUDGET  # noqa: PLC0415
    from tuner.training.position_set import load_positions  # noqa: PLC0415
    from tuner.training.positions import check_played  # noqa: PLC0415

    pos = load_positions(data, split, limit=max_positions, seed=seed, progress=progress)
    if len(pos) == 0:
        raise TunerError(f"{data}: the {split} split holds no positions")
    played = check_played(pos)
    results = []
    for name, w in weight_sets:
        with progress_bar(total=len(pos), unit="pos", desc=name, disable=not progress, leave=False, file=sys.stderr) as bar:
            results.append((name, measure(pos, played, w, depth=depth, budget=DEFAULT_BUDGET,
                                          n_threads=resolve_threads(threads), progress=bar.update,
                                          executor=executor)))
    return pos, results


def measure_chunk(boards: np.ndarray, played_index: np.ndarray, *, weights: Evaluator, depth: int, budget: int,
                  pacer: object = None) -> tuple[np.ndarray, np.ndarray, float, int]:
    """One chunk of :func:`measure`: each position's top-1 and top-3 credit (float64), the sum
    of the ranks, and the number of legal moves (one sweep; numba threads: the caller's setting)."""
    sw = sweep(boards, depth, weights, budget=budget, leaves=False)
    rows = sw.pos_ptr[:-1] + played_index
    return (np.asarray(top_k_credit(sw.pos_ptr, rows, sw.scores, 1), dtype=np.float64),
            np.asarray(top_k_credit(sw.pos_ptr, rows, sw.scores, 3), dtype=np.float64),
            float(ranks(sw.pos_ptr, rows, sw.scores).sum()), len(sw.scores))
