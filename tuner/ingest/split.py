"""Assign kept games (never single positions) to train, validation and test."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tuner.ingest.schema import SPLITS


def split_counts(n_games: int, fractions: Sequence[float]) -> list[int]:
    """Games per split: ``n_games * fraction`` rounded by largest remainder (the counts add up
    to ``n_games``), then every split with a positive fraction given at least one game when
    there are enough games."""
    exact = [f * n_games for f in fractions]
    counts = [int(np.floor(x)) for x in exact]
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in by_remainder[: n_games - sum(counts)]:
        counts[i] += 1
    wanted = [i for i, f in enumerate(fractions) if f > 0]
    if n_games >= len(wanted):
        for i in wanted:
            if counts[i] == 0:
                donor = max(range(len(counts)), key=lambda j: (counts[j], -j))
                counts[donor] -= 1
                counts[i] += 1
    return counts


def assign_splits(game_ids: Sequence[int], fractions: Sequence[float], seed: int) -> dict[str, np.ndarray]:
    """Split ``game_ids`` by a seeded permutation; each split's ids are returned sorted.

    Parameters
    ----------
    game_ids : the kept games, int64.
    fractions : train, validation and test fractions (summing to 1).
    seed : seed of ``numpy.random.default_rng`` for the permutation.
    """
    ids = np.asarray(game_ids, dtype=np.int64)
    shuffled = ids[np.random.default_rng(seed).permutation(len(ids))]
    bounds = np.cumsum(split_counts(len(ids), fractions))[:-1]
    return {name: np.sort(part) for name, part in zip(SPLITS, np.split(shuffled, bounds), strict=True)}
