"""Both evaluator kinds behind one loader: what every command that takes weights accepts.

An *evaluator* (:data:`Evaluator`) is either the linear evaluator's weights (int32[N_FEATURES],
``docs/features.md``) or a network (:class:`search.evaluation.network.QuantizedNetwork`,
``docs/network.md``). :func:`load_evaluator` reads either from a spec:

* a built-in linear set (``material``, ``classic``, ``gm``), a JSON weights file or a text view
  (:func:`search.params.weights.load_weights`);
* a built-in network (:data:`BUILTIN_NETWORKS`: ``gm-nn``, ``nnue``) or a network file (``.mtnn``, known
  by its magic bytes, whatever its name);
* a new network, ``network:H[xH2xH3][/BUCKETS][/oOUTPUTS][+LINEAR][@SEED]``: random parameters of that shape
  (``BUCKETS`` ``none`` or ``4``, default ``none``; ``OUTPUTS`` 1, 2, 4 or 8 output buckets by the
  number of pieces, default 1); with ``+LINEAR`` (a linear spec: ``gm``, a
  weights file) a *hybrid* whose output layer starts at zero, so that it first plays exactly as
  its linear part and training learns a correction; ``SEED`` (default 0) seeds the parameters.

:func:`save_evaluator` writes either kind to the file a run folder keeps (``weights.json`` or
``weights.mtnn``), and :func:`evaluator_to_json` / :func:`evaluator_from_json` put one in a
checkpoint, exactly.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import numpy as np

from search.params.catalog import PLUGIN
from search.evaluation.network import (FloatNetwork, NetworkFileError, NetworkShape, QuantizedNetwork, is_network_file,
                            network_bytes, parse_network, quantize, read_network, write_network)
from search.evaluation.evaluation_api import evaluate_batch_units
from search.evaluation.network_kernels import network_evaluate_batch_kernel, network_parts_batch_kernel
from search.core.validate import check_boards
from search.evaluation.validate import check_weights
from search.params.weights import (BUILTIN_NETWORKS, Weights, WeightsFileError, atomic_write_text, builtin_network, dumps,
                            load_weights)

#: either evaluator kind (the search's :data:`search.tree.search_api.Evaluator`)
Evaluator = np.ndarray | QuantizedNetwork

_SPEC = re.compile(r"network:(\d+)(?:x(\d+)x(\d+))?(?:/(?!o\d)(\w+))?(?:/o(\d+))?(?:\+([^@]+))?(?:@(\d+))?$")


def kind_of(ev: Evaluator) -> str:
    """``"network"`` or ``"linear"``."""
    return "network" if isinstance(ev, QuantizedNetwork) else "linear"


def is_network(ev: Evaluator) -> bool:
    return isinstance(ev, QuantizedNetwork)


def new_network(spec: str) -> QuantizedNetwork:
    """The network of a ``network:H[xH2xH3][/BUCKETS][/oOUTPUTS][+LINEAR][@SEED]`` spec
    (``network:H``: the direct form, no hidden layers; ``/o8``: 8 output buckets by piece count)
    (module docstring);
    ``ValueError`` naming the spec otherwise."""
    m = _SPEC.match(spec.strip())
    if m is None:
        raise ValueError(f"{spec!r}: a new network is written network:H[xH2xH3][/none|/4][/o2|/o4|/o8][+LINEAR]"
                         "[@SEED], e.g. network:64x16x16+gm, network:128 (no hidden layers) or network:256/o8 "
                         "(8 output buckets)")
    h, h2, h3, buckets, outputs, linear_spec, seed = m.groups()
    if linear_spec and PLUGIN is not None:
        raise ValueError(f"{spec!r}: a hybrid network's linear part takes the built-in terms only, not plug-in "
                         f"{PLUGIN.name!r} (docs/own-terms.md); use a pure network or the linear evaluator")
    try:
        shape = NetworkShape(h=int(h), h2=int(h2 or 0), h3=int(h3 or 0), buckets=buckets or "none",
                             outputs=int(outputs or 1))
    except ValueError as exc:
        raise ValueError(f"{spec!r}: {exc}") from None
    linear = load_weights(linear_spec).values if linear_spec else None
    f = FloatNetwork.initial(shape, seed=int(seed or 0), linear=linear, output_zero=linear is not None)
    return quantize(f, {"start": spec.strip()})


def load_evaluator(spec: str | Path) -> Evaluator:
    """The evaluator a spec names (module docstring); one-line ``ValueError`` (a
    :class:`WeightsFileError` or :class:`NetworkFileError`) naming the file or spec."""
    text = str(spec)
    if text.startswith("network:"):
        return new_network(text)
    path = builtin_network(text)
    if path is not None:
        if not path.exists():
            raise NetworkFileError(f"{text}: the built-in network is not in this installation ({path} is missing)")
        return read_network(path)
    if is_network_file(text):
        return read_network(text)
    values: np.ndarray = load_weights(spec).values
    return values


def save_evaluator(path: str | Path, ev: Evaluator, metadata: dict[str, Any]) -> None:
    """Write ``ev`` atomically: a weights JSON file for the linear kind, a network file (its
    metadata replaced by ``metadata``) for a network."""
    if isinstance(ev, QuantizedNetwork):
        write_network(path, QuantizedNetwork(ev.shape, ev.params, ev.linear, dict(metadata)))
    else:
        atomic_write_text(path, dumps(Weights(np.asarray(ev, dtype=np.int32), metadata)))


def evaluator_file_name(ev: Evaluator) -> str:
    """The name a run folder gives its evaluator: ``weights.json`` or ``weights.mtnn``."""
    return "weights.mtnn" if isinstance(ev, QuantizedNetwork) else "weights.json"


def evaluator_to_json(ev: Evaluator) -> Any:
    """A JSON value holding ``ev`` exactly: the integer list of linear weights, or
    ``{"network": base64 of the network file}``."""
    if isinstance(ev, QuantizedNetwork):
        return {"network": base64.b64encode(network_bytes(ev)).decode("ascii")}
    return [int(v) for v in ev]


def evaluator_from_json(doc: Any, where: str) -> Evaluator:
    """The evaluator of :func:`evaluator_to_json`'s value; one-line ``ValueError`` naming ``where``."""
    if isinstance(doc, dict) and isinstance(doc.get("network"), str):
        try:
            data = base64.b64decode(doc["network"], validate=True)
        except ValueError:
            raise NetworkFileError(f"{where}: the network is not valid base64") from None
        return parse_network(data, where)
    if isinstance(doc, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in doc):
        return np.array(doc, dtype=np.int32)
    raise WeightsFileError(f"{where}: neither a list of weights nor a network")


def static_scores(boards: np.ndarray, ev: Evaluator) -> np.ndarray:
    """Static scores of ``boards`` (uint64[n, BOARD_WORDS]) under either kind: int64[n], eval
    units (1/PHASE_MAX centipawn), side to move's view."""
    boards = check_boards(boards)
    if isinstance(ev, QuantizedNetwork):
        out: np.ndarray = network_evaluate_batch_kernel(boards, ev.kernel_args())
        return out
    return evaluate_batch_units(boards, ev)


def network_parts(boards: np.ndarray, net: QuantizedNetwork) -> np.ndarray:
    """The network's own part of each board's score (without a hybrid's linear terms): int64[n],
    eval units, side to move's view."""
    out: np.ndarray = network_parts_batch_kernel(check_boards(boards), net.kernel_args())
    return out


def checked_evaluator(ev: object) -> Evaluator:
    """``ev`` as the search takes it: a network as it is (checked when made or read), linear
    weights validated (:func:`search.evaluation.validate.check_weights`); ``ValueError`` otherwise."""
    if isinstance(ev, QuantizedNetwork):
        return ev
    checked: np.ndarray = check_weights(ev)
    return checked


def copy_evaluator(ev: Evaluator) -> Evaluator:
    """An independent copy (a network is immutable: itself)."""
    return ev if isinstance(ev, QuantizedNetwork) else np.asarray(ev).copy()


def same_evaluator(a: Evaluator, b: Evaluator) -> bool:
    """Whether two evaluators score every position alike (equal parameters)."""
    if isinstance(a, QuantizedNetwork) or isinstance(b, QuantizedNetwork):
        return (isinstance(a, QuantizedNetwork) and isinstance(b, QuantizedNetwork)
                and network_bytes(QuantizedNetwork(a.shape, a.params, a.linear))
                == network_bytes(QuantizedNetwork(b.shape, b.params, b.linear)))
    return bool(np.array_equal(a, b))


__all__ = ["BUILTIN_NETWORKS", "Evaluator", "checked_evaluator", "copy_evaluator", "evaluator_file_name", "evaluator_from_json",
           "evaluator_to_json", "is_network", "kind_of", "load_evaluator", "network_parts", "new_network",
           "same_evaluator", "save_evaluator", "static_scores"]
