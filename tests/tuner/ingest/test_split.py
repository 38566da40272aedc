"""tuner.ingest.split: the seeded permutation of ``tuner ingest`` and the stable split of
``tuner selfplay``, whose games keep their split as the set grows."""

from __future__ import annotations

import numpy as np
import pytest

from tuner.ingest.schema import SPLITS
from tuner.ingest.split import SPLIT_BLOCK, assign_splits, split_counts, stable_splits

FRACTIONS = (0.9, 0.05, 0.05)


def _label(splits: dict[str, np.ndarray]) -> dict[int, str]:
    return {int(g): name for name in SPLITS for g in splits[name]}


def test_split_counts() -> None:
    assert split_counts(10, (0.8, 0.1, 0.1)) == [8, 1, 1]
    assert split_counts(5, (0.8, 0.1, 0.1)) == [3, 1, 1]
    assert split_counts(2, (0.8, 0.1, 0.1)) == [2, 0, 0]
    assert split_counts(7, (1.0, 0.0, 0.0)) == [7, 0, 0]
    assert sum(split_counts(1234, (0.7, 0.2, 0.1))) == 1234


def test_a_grown_set_keeps_every_earlier_games_split() -> None:
    small = _label(stable_splits(range(250), FRACTIONS, 7))
    large = _label(stable_splits(range(1000), FRACTIONS, 7))
    assert all(large[g] == s for g, s in small.items())
    # the order and the company of the ids do not matter, only each game's number
    some = [999, 3, 512, 0, 77]
    assert _label(stable_splits(some, FRACTIONS, 7)) == {g: large[g] for g in some}
    # the permutation of tuner ingest draws the splits anew for a grown set (why self-play does not use it)
    before, after = _label(assign_splits(range(250), FRACTIONS, 7)), _label(assign_splits(range(1000), FRACTIONS, 7))
    assert any(after[g] != s for g, s in before.items())


def test_full_blocks_are_split_in_exact_fractions_and_every_game_once() -> None:
    n = 7 * SPLIT_BLOCK
    splits = stable_splits(range(n), FRACTIONS, 11)
    assert [len(splits[s]) for s in SPLITS] == [7 * c for c in split_counts(SPLIT_BLOCK, FRACTIONS)] == [630, 35, 35]
    for b in range(7):
        in_block = [int(((splits[s] >= b * SPLIT_BLOCK) & (splits[s] < (b + 1) * SPLIT_BLOCK)).sum()) for s in SPLITS]
        assert in_block == [90, 5, 5]
    assert sorted(np.concatenate([splits[s] for s in SPLITS]).tolist()) == list(range(n))
    # the seed matters: another seed puts other games in validation
    assert not np.array_equal(stable_splits(range(n), FRACTIONS, 12)["validation"], splits["validation"])


@pytest.mark.parametrize("seed", range(20))
def test_the_first_games_fill_every_split_with_a_fraction(seed: int) -> None:
    assert [len(stable_splits(range(3), FRACTIONS, seed)[s]) for s in SPLITS] == [1, 1, 1]
    assert [len(stable_splits(range(2), (0.9, 0.1, 0.0), seed)[s]) for s in SPLITS] == [1, 1, 0]
    assert [len(stable_splits(range(5), (1.0, 0.0, 0.0), seed)[s]) for s in SPLITS] == [5, 0, 0]


def test_bad_numbers_and_blocks_are_refused() -> None:
    with pytest.raises(ValueError, match="game numbers must be >= 0, not -1"):
        stable_splits([-1, 2], FRACTIONS, 0)
    with pytest.raises(ValueError, match="a block of 2 games cannot hold 3 splits"):
        stable_splits(range(5), FRACTIONS, 0, block=2)
    assert [len(v) for v in stable_splits([], FRACTIONS, 0).values()] == [0, 0, 0]
