"""What both weights formats share (:mod:`search.params.weights`, the JSON files, and
:mod:`search.params.weights_text`, the text view): the :class:`Weights` vector, the one-line
:class:`WeightsFileError`, and the catalogue checks of a file (a legacy catalogue is read and
migrated with a :class:`CatalogMigrationWarning`). Both modules import it; neither imports the
other's reader."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from search.params.catalog import (BUILTIN_FEATURE_NAMES, BUILTIN_HASH, CATALOG_HASH, FEATURE_NAMES, LEGACY_CATALOGS, N_FEATURES,
                            PLUGIN, legacy_feature_names)


#: largest ``|w|`` the evaluator accepts (262,144 centipawns); :mod:`search.evaluation.validate` explains the
#: bound (no static score may reach the mate band) and checks it on every vector the kernels get;
#: the weights loaders refuse a file beyond it, naming the weight
MAX_ABS_WEIGHT = 1 << 18


def weight_range_problem(value: int) -> str | None:
    """Why ``value`` cannot be a weight (beyond :data:`MAX_ABS_WEIGHT`), or None."""
    if -MAX_ABS_WEIGHT <= value <= MAX_ABS_WEIGHT:
        return None
    return f"is beyond the evaluator's limit +-{MAX_ABS_WEIGHT} (no score may reach the mate band)"


class WeightsFileError(ValueError):
    """A weights file that cannot be used; the message is one line naming file and place."""


class CatalogMigrationWarning(UserWarning):
    """A weights file of an earlier feature catalogue was read and migrated (one-line message
    naming the file, the old catalogue and the groups whose weights were set to 0)."""


def catalogue_names(found: object, where: str) -> tuple[str, ...]:
    """The feature names a weights file made for catalogue ``found`` must give: this
    catalogue's, or a legacy catalogue's (:func:`search.params.catalog.legacy_feature_names`).
    Any other value is refused with a one-line :class:`WeightsFileError` naming ``where``."""
    if found == CATALOG_HASH:
        return FEATURE_NAMES
    if PLUGIN is not None and found == BUILTIN_HASH:
        return BUILTIN_FEATURE_NAMES
    names = legacy_feature_names(found) if isinstance(found, str) else None
    if names is None:
        readable = ", ".join([CATALOG_HASH, *LEGACY_CATALOGS])
        raise WeightsFileError(f"{where}: made for feature catalogue {found!r}, but this version's catalogue "
                               f"is {CATALOG_HASH!r} (it reads files of {readable})")
    return names


def warn_migrated(where: str, old_hash: str) -> None:
    """Issue the one-line :class:`CatalogMigrationWarning` for a file of ``old_hash`` read."""
    if old_hash == BUILTIN_HASH and PLUGIN is not None:
        warnings.warn(CatalogMigrationWarning(
            f"{where}: made for the built-in feature catalogue {old_hash!r}; read into {CATALOG_HASH!r} "
            f"with the {PLUGIN.group} terms of plug-in {PLUGIN.name!r} at their defaults"), stacklevel=3)
        return
    added = " and ".join(LEGACY_CATALOGS[old_hash])
    warnings.warn(CatalogMigrationWarning(
        f"{where}: made for the earlier feature catalogue {old_hash!r}; read into {CATALOG_HASH!r} "
        f"with every {added} weight 0" + (f" and the {PLUGIN.group} terms at their defaults" if PLUGIN else "")),
        stacklevel=3)


@dataclass(frozen=True)
class Weights:
    """An integer weight vector over the feature catalogue, with free-form metadata.

    ``values`` is int32 of shape ``(N_FEATURES,)``, indexed as :data:`search.params.catalog.FEATURE_NAMES`.
    """

    values: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        v = np.asarray(self.values)
        if v.shape != (N_FEATURES,) or not np.issubdtype(v.dtype, np.integer):
            raise ValueError(f"weights must be integers of shape ({N_FEATURES},), not {v.dtype} {v.shape}")
        object.__setattr__(self, "values", np.ascontiguousarray(v, dtype=np.int32))

    def by_name(self) -> dict[str, int]:
        return {name: int(v) for name, v in zip(FEATURE_NAMES, self.values)}


__all__ = ["CatalogMigrationWarning", "MAX_ABS_WEIGHT", "Weights", "WeightsFileError", "catalogue_names", "warn_migrated",
           "weight_range_problem"]
