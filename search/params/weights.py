"""Weights files: a JSON document naming every feature of the catalogue with an integer value,
and :func:`load_weights`, the one loader, which also reads the text view of
:mod:`search.params.weights_text`.

Format (``schema_version`` 1)::

    {
      "schema": "movetuner-weights",
      "schema_version": 1,
      "catalog_hash": "<search.params.catalog.CATALOG_HASH>",
      "phase_max": 24,
      "score": "w . phi / phase_max centipawns, side to move's view",
      "weights": {"mg.material.pawn": 100, ...},   # every feature name, integer values
      "metadata": {...}                              # free: how the weights were made
    }

Loading (:func:`load_weights`, for this format and the text view alike) refuses, with a
one-line :class:`WeightsFileError` naming the file and the place, a truncated or invalid JSON
document, another schema or an unknown catalogue, a value that is not an integer, and a
missing or unknown feature name. Saving is atomic (write, fsync, rename).

Files of an earlier catalogue (:data:`search.params.catalog.LEGACY_CATALOGS`, e.g. ``26fcb341cd55f948``
from before the ``attacks`` and ``defends`` groups) are migrated as they are read: they must
name exactly that catalogue's features; each keeps its value by name, the features added since
are 0, ``metadata["migrated_from_catalog"]`` records the old hash, and a one-line
:class:`CatalogMigrationWarning` says so (the command line prints it as a note). Saving
always writes the current catalogue.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from search.params.catalog import (
    CATALOG_HASH,
    FEATURE_INDEX,
    FEATURE_NAMES,
    N_FEATURES,
    PHASE_MAX,
    PLUGIN,
    PLUGIN_START,
    default_values,
)

from search.core.input_limits import InputLimitError, NotRegularFileError, loads_json, read_capped
from search.params.weights_base import (CatalogMigrationWarning, Weights, WeightsFileError, catalogue_names, warn_migrated,
                                 weight_range_problem)
from search.params.weights_text import parse_text

SCHEMA = "movetuner-weights"
SCHEMA_VERSION = 1
#: weight sets that ship with the package, by name
BUILTIN_DIR = Path(__file__).resolve().parents[1] / "data"
#: (``material`` and ``classic`` are written from code by :mod:`search.params.weight_sets`; ``gm`` is
#: the output of the recipe ``tuner/recipes/gm.toml`` on the grandmaster games, docs/quality.md;
#: ``gm-sp``, of ``tuner/recipes/gm-sp.toml`` on ``gm``'s own games, docs/selfplay.md)
BUILTIN_SETS = ("material", "classic", "gm", "gm-sp")
#: networks that ship with the package, by name (``BUILTIN_DIR / NAME.mtnn``; ``gm-nn`` is the
#: output of the recipe ``tuner/recipes/gm-nn.toml``, docs/quality.md; ``nnue``, a pure network, of
#: ``tuner/recipes/nnue.toml`` on self-play data, docs/network.md)
BUILTIN_NETWORKS = ("gm-nn", "nnue")
#: every built-in name a player or ``--weights`` takes, as the commands' help lists them
BUILTIN_NAMES = (*BUILTIN_SETS, *BUILTIN_NETWORKS)


def builtin_network(spec: str) -> Path | None:
    """The file of the built-in network that ``spec`` names, or None when ``spec`` names none
    (a file called ``spec`` wins over the name). The file may be missing from an installation."""
    if spec in BUILTIN_NETWORKS and not Path(spec).exists():
        return BUILTIN_DIR / f"{spec}.mtnn"
    return None


def to_document(w: Weights) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "catalog_hash": CATALOG_HASH,
        "phase_max": PHASE_MAX,
        "score": "sum(w[name] * phi[name]) / phase_max centipawns, from the side to move's view",
        "weights": w.by_name(),
        "metadata": w.metadata,
    }
    if PLUGIN is not None:  # an engine author's own terms (search.params.terms): what loads the file again
        doc["terms"] = {"name": PLUGIN.name, "group": PLUGIN.group, "file": PLUGIN.path}
    return doc


def dumps(w: Weights) -> str:
    return json.dumps(to_document(w), indent=1) + "\n"


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half: a
    temporary file in the same folder (made if missing), fsync, the usual mode, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def save_weights(path: str | Path, w: Weights) -> None:
    """Write ``w`` to ``path`` atomically."""
    atomic_write_text(path, dumps(w))


def parse_document(doc: Any, where: str) -> Weights:
    """Validate a parsed weights document; ``where`` names its source in error messages."""
    if not isinstance(doc, dict):
        raise WeightsFileError(f"{where}: not a weights file (top level is not an object)")
    if doc.get("schema") != SCHEMA:
        raise WeightsFileError(f"{where}: not a weights file (schema is {doc.get('schema')!r}, expected {SCHEMA!r})")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise WeightsFileError(f"{where}: unsupported schema_version {doc.get('schema_version')!r} "
                               f"(this version reads {SCHEMA_VERSION})")
    found = doc.get("catalog_hash")
    terms = doc.get("terms")
    if isinstance(terms, dict) and found != CATALOG_HASH:
        raise WeightsFileError(f"{where}: made with the term plug-in {terms.get('name')!r} (feature catalogue "
                               f"{found!r}); load it with --terms {terms.get('file')}")
    phase_max = doc.get("phase_max", PHASE_MAX)
    if phase_max != PHASE_MAX or isinstance(phase_max, bool):
        raise WeightsFileError(f"{where}: phase_max is {str(phase_max)[:40]!r}, this version uses {PHASE_MAX} "
                               "(as the text view refuses it)")
    expected = catalogue_names(found, where)
    migrated = expected is not FEATURE_NAMES
    allowed = set(expected) if migrated else FEATURE_INDEX
    names = doc.get("weights")
    if not isinstance(names, dict):
        raise WeightsFileError(f"{where}: 'weights' must be an object of feature name -> integer")
    values = np.zeros(N_FEATURES, dtype=np.int32)
    for name, value in names.items():
        i = FEATURE_INDEX.get(name) if name in allowed else None
        if i is None:
            raise WeightsFileError(f"{where}: unknown feature {name!r}"
                                   + (f" in catalogue {found!r}" if migrated else ""))
        if isinstance(value, bool) or not isinstance(value, int):
            raise WeightsFileError(f"{where}: weight {name!r} is {value!r}, not an integer")
        problem = weight_range_problem(value)
        if problem:
            raise WeightsFileError(f"{where}: weight {name!r} = {value} {problem}")
        values[i] = value
    missing = [n for n in expected if n not in names]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise WeightsFileError(f"{where}: missing weight {missing[0]!r}{more}")
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        raise WeightsFileError(f"{where}: 'metadata' must be an object")
    if migrated:
        values[PLUGIN_START:] = default_values()[PLUGIN_START:]  # a plug-in's terms: their defaults
        metadata = {**metadata, "migrated_from_catalog": found}
        warn_migrated(where, str(found))
    return Weights(values, metadata)


def load_weights(spec: str | Path) -> Weights:
    """Load weights: the one loader of every command (``tune --start``, ``eval``, ``uci``,
    ``export``, ``bench``, ``compare``, ``match``).

    ``spec`` is a built-in set's name (:data:`BUILTIN_SETS`), a JSON weights file (module
    docstring), or a text view (:mod:`search.params.weights_text`). A file that parses as JSON, or
    whose first non-blank character is ``{`` or ``[`` (a truncated JSON file), or an empty one,
    is read as JSON; anything else as a text view. A file of a legacy catalogue is migrated
    with a :class:`CatalogMigrationWarning`. Every refusal is a one-line
    :class:`WeightsFileError` naming the file and the place (JSON: line and column or the
    feature; text view: ``line N``).
    """
    path = resolve(spec)
    try:
        text = read_capped(path).decode("utf-8-sig")  # a byte-order mark (some editors write one) dropped
    except FileNotFoundError:
        raise WeightsFileError(f"{path}: no such weights file") from None
    except NotRegularFileError as exc:
        raise WeightsFileError(str(exc)) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise WeightsFileError(f"{path}: cannot read weights file ({exc.__class__.__name__})") from None
    except InputLimitError as exc:
        raise WeightsFileError(str(exc)) from None
    try:
        doc = loads_json(text, str(path))
    except InputLimitError as exc:
        raise WeightsFileError(str(exc)) from None
    except json.JSONDecodeError as exc:
        if text.strip() and text.lstrip()[0] not in "{[":
            return parse_text(text, str(path))
        raise WeightsFileError(f"{path}: not valid JSON at line {exc.lineno} column {exc.colno} "
                               f"({exc.msg}); the file may be truncated") from None
    return parse_document(doc, str(path))


def resolve(spec: str | Path) -> Path:
    """Path of a weights file: a built-in set's name, or a path as given."""
    if isinstance(spec, str) and spec in BUILTIN_SETS and not Path(spec).exists():
        return BUILTIN_DIR / f"{spec}.json"
    return Path(spec)


__all__ = ["BUILTIN_DIR", "BUILTIN_NAMES", "BUILTIN_NETWORKS", "BUILTIN_SETS", "CatalogMigrationWarning", "SCHEMA", "SCHEMA_VERSION", "Weights",
           "WeightsFileError", "atomic_write_bytes", "atomic_write_text", "builtin_network", "catalogue_names", "dumps", "load_weights",
           "parse_document", "resolve", "save_weights", "to_document", "warn_migrated"]
