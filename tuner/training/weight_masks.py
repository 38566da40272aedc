"""Subsets of the weight vector named by group or feature-name prefix, and the equality
constraints on them: the masks of ``train``, ``l1_on``, ``l2_on``, ``constraint`` and the
projection that keeps a constrained subset's sum (:func:`hold_sums`), and the bounds a tuner
keeps the weights in (:func:`tuning_bounds`)."""

from __future__ import annotations

import numpy as np

from search.params.catalog import select, weight_bounds


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


def tuning_bounds(start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high), float64[N_FEATURES] each: the catalogue's tuning bounds of every weight
    (:func:`search.params.catalog.weight_bounds`), widened where the start weights ``start`` lie
    outside them, so that starting a run never moves a weight by itself."""
    low, high = (np.array(b, dtype=np.float64) for b in weight_bounds())
    start = np.asarray(start, dtype=np.float64)
    return np.minimum(low, start), np.maximum(high, start)
