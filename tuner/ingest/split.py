"""Assign kept games (never single positions) to train, validation and test: by a seeded
permutation of the kept games (:func:`assign_splits`, ``tuner ingest``), or by each game's number
alone (:func:`stable_splits`, ``tuner selfplay``), so that a set grown by new games keeps the
split of every game it had."""

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


#: games in a block of :func:`stable_splits`: each full block is split in exact fractions
SPLIT_BLOCK = 100


def _block_labels(block: int, counts: Sequence[int], wanted: Sequence[int], seed: int) -> np.ndarray:
    """The split index (0 train, 1 validation, 2 test) of each of the ``sum(counts)`` slots of
    block ``block``: ``counts[i]`` slots of split i, shuffled by the seed ``[seed, block]``.
    Block 0 starts with one slot of each split in ``wanted`` (in a seeded order), so a set of
    ``len(wanted)`` games or more has a game in each of them."""
    rng = np.random.default_rng([seed, block])
    splits = np.arange(len(counts), dtype=np.int8)
    if block:
        return rng.permutation(np.repeat(splits, counts))
    rest = np.asarray(counts, dtype=np.int64)
    rest[list(wanted)] -= 1  # one slot of each wanted split goes first
    return np.concatenate([rng.permutation(splits[list(wanted)]), rng.permutation(np.repeat(splits, rest))])


def stable_splits(game_ids: Sequence[int], fractions: Sequence[float], seed: int, *,
                  block: int = SPLIT_BLOCK) -> dict[str, np.ndarray]:
    """Split games by their numbers, each game's split independent of the other games.

    Game ``g`` takes slot ``g % block`` of block ``g // block``, whose slots hold the splits in
    the counts of ``split_counts(block, fractions)``, shuffled by ``[seed, g // block]``. So a set
    grown by new games (``tuner selfplay --resume --games N``) keeps the split of each game it
    had: the games that validated a network trained on the smaller set never train one on the
    larger (with :func:`assign_splits`, a permutation of all the games, the splits of a grown set
    are drawn anew). Every full block is split in exact fractions; the first ``len(wanted)``
    games (one slot of each split with a positive fraction) fill every such split.

    Parameters
    ----------
    game_ids : the games' numbers, int64 >= 0 (self-play's 0 .. games - 1).
    fractions : train, validation and test fractions (summing to 1).
    seed : a seed >= 0 (the run's).
    block : games per block, at least the number of splits with a positive fraction.
    """
    ids = np.asarray(game_ids, dtype=np.int64)
    if ids.size and int(ids.min()) < 0:
        raise ValueError(f"game numbers must be >= 0, not {int(ids.min())}")
    wanted = [i for i, f in enumerate(fractions) if f > 0]
    if block < len(wanted):
        raise ValueError(f"a block of {block} games cannot hold {len(wanted)} splits")
    counts = split_counts(block, fractions)
    label = np.empty(len(ids), dtype=np.int8)
    blocks = ids // block
    for b in np.unique(blocks):
        at = blocks == b
        label[at] = _block_labels(int(b), counts, wanted, seed)[ids[at] % block]
    return {name: np.sort(ids[label == i]) for i, name in enumerate(SPLITS)}
