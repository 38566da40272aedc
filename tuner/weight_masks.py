"""Subsets of the weight vector named by group or feature-name prefix, and the equality
constraints on them: the masks of ``train``, ``l1_on``, ``l2_on``, ``constraint`` and the
projection that keeps a constrained subset's sum (:func:`hold_sums`)."""

from __future__ import annotations

import numpy as np

from search.catalog import select


def mask_of(items: tuple[str, ...], what: str) -> np.ndarray:
    """bool[N_FEATURES] of the features named by ``items`` (groups or prefixes; empty: none)."""
    if not items:
        return np.zeros(len(select(["material"])), dtype=bool)
    try:
        return np.array(select(list(items)), dtype=bool)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


def constraint_masks(items: tuple[str, ...]) -> list[np.ndarray]:
    """One bool[N_FEATURES] mask per equality-constraint entry (each entry's weights keep their
    sum); ValueError if two entries name the same weight."""
    groups = [mask_of((c,), "constraint") for c in items]
    if groups and int(np.sum(groups, axis=0).max()) > 1:
        raise ValueError("the constraint's entries must not name the same weights twice")
    return groups


def hold_sums(w: np.ndarray, groups: list[np.ndarray], sums: list[float]) -> np.ndarray:
    """Float weights ``w`` (float64[N], changed in place and returned) with each constrained
    subset's sum put back to its value in ``sums``: the subset's common mean shift removed, the
    Euclidean projection onto that hyperplane (the equality constraint of the float-weight
    optimizers; the grid step holds its constraints exactly by itself)."""
    for g, total in zip(groups, sums):
        idx = np.flatnonzero(g)
        w[idx] -= (w[idx].sum() - total) / len(idx)
    return w


__all__ = ["constraint_masks", "hold_sums", "mask_of"]
