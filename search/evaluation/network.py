"""The network evaluator: its shape, its float parameters (what training moves), their integer
form (what the search runs, :mod:`search.evaluation.network_kernels`), and network files.

Definitions (``docs/network.md``): inputs are piece-on-square features seen from each side
(768 per king bucket), the first layer's output per side is the accumulator (H int16 values),
then two small clipped-ReLU layers (H2, H3) and a scalar in centipawns; optionally the linear
evaluator's ``w . phi`` is added (a *hybrid* network, whose network part learns a correction).

* :class:`NetworkShape`: sizes and the king-bucket table; hashed into every file.
* :class:`FloatNetwork`: float64 parameters, a flat vector view for optimizers
  (:meth:`FloatNetwork.vector`, :meth:`FloatNetwork.with_vector`), and the clamps that keep
  the integer form from overflowing (:meth:`FloatNetwork.clamped`).
* :class:`QuantizedNetwork`: the integer parameters, :meth:`QuantizedNetwork.kernel_args` for
  the kernels; :func:`quantize` and :meth:`QuantizedNetwork.dequantize` convert.
* :func:`write_network` / :func:`read_network`: the binary file (layout in ``docs/network.md``;
  one-line :class:`NetworkFileError` for a truncated, corrupt or foreign file).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import struct
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from search.core.input_limits import InputLimitError, MAX_NETWORK_BYTES, loads_json, open_regular, read_capped
from search.params.catalog import CATALOG_HASH, N_FEATURES, PHASE_MAX, PLUGIN
from search.evaluation.network_kernels import PSQ_INPUTS, QA, QB, QO
from search.params.weights import atomic_write_bytes
from search.params.weights_base import weight_range_problem

#: first bytes of a network file
MAGIC = b"MTNN"
#: version of the binary layout (docs/network.md); bump it when the layout changes
FILE_VERSION = 1
#: the largest accumulator magnitude the int16 arithmetic may reach
ACC_LIMIT = 32767
#: the numbers of output buckets a network may have (each divides 32: buckets of equal piece-count ranges)
OUTPUT_BUCKETS = (1, 2, 4, 8)
#: the largest int32 magnitude a hidden sum may reach
SUM_LIMIT = 2**31 - 1
#: pieces on a board at most (the accumulator's worst case sums this many W1 rows)
MAX_PIECES = 32

#: king-bucket tables by name: square (from the side's own view, a1 = 0) -> bucket
BUCKET_TABLES: dict[str, tuple[int, ...]] = {
    "none": (0,) * 64,
    # the king on the queen side, centre files or king side of its first two ranks, or further up
    "4": tuple((0 if f < 3 else 1 if f < 5 else 2) if r < 2 else 3 for r in range(8) for f in range(8)),
}


class NetworkFileError(ValueError):
    """A network file that cannot be used; the message is one line naming the file and place."""


@dataclass(frozen=True)
class NetworkShape:
    """The network's sizes: ``h`` accumulator entries per side, hidden layers ``h2`` and
    ``h3``, the king-bucket table (``buckets``, a name of :data:`BUCKET_TABLES`) and the number
    of output buckets (``outputs``, one of :data:`OUTPUT_BUCKETS`): the output layer has a row
    per range of the number of pieces on the board
    (:func:`search.evaluation.network_kernels.output_bucket`).

    ``h2 = h3 = 0`` is the *direct* form (written ``network:H``): no hidden layers, the output
    reads the accumulators through a squared clipped ReLU (``docs/network.md``)."""

    h: int = 128
    h2: int = 32
    h3: int = 32
    buckets: str = "none"
    outputs: int = 1

    def __post_init__(self) -> None:
        for name in ("h", "h2", "h3"):
            value = getattr(self, name)
            low = 1 if name == "h" else 0
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 4096:
                raise ValueError(f"network {name} must be an integer between {low} and 4096, not {value!r}")
        if (self.h2 == 0) != (self.h3 == 0):
            raise ValueError(f"network h2 and h3 must both be 0 (the direct form) or both be at least 1, "
                             f"not {self.h2} and {self.h3}")
        if not isinstance(self.buckets, str) or self.buckets not in BUCKET_TABLES:
            raise ValueError(f"network buckets must be one of {', '.join(BUCKET_TABLES)}, not {self.buckets!r}")
        if type(self.outputs) is not int or self.outputs not in OUTPUT_BUCKETS:
            raise ValueError(f"network outputs (output buckets) must be one of "
                             f"{', '.join(map(str, OUTPUT_BUCKETS))}, not {self.outputs!r}")

    @property
    def bucket_table(self) -> np.ndarray:
        """int64[64]: the bucket of each own-king square."""
        return np.array(BUCKET_TABLES[self.buckets], dtype=np.int64)

    @property
    def n_buckets(self) -> int:
        return int(self.bucket_table.max()) + 1

    @property
    def direct(self) -> bool:
        """No hidden layers: ``out = b4 + sum_j clip(x_j, 0, 1)^2 W4_j`` (``docs/network.md``)."""
        return self.h2 == 0

    @property
    def label(self) -> str:
        """The sizes as a spec writes them: ``128`` (direct) or ``64x16x16``."""
        return str(self.h) if self.direct else f"{self.h}x{self.h2}x{self.h3}"

    @property
    def spec(self) -> str:
        """The whole shape as a ``network:`` spec writes it: ``128``, ``64x16x16/4``, ``256/o8``."""
        return (self.label + ("" if self.buckets == "none" else f"/{self.buckets}")
                + ("" if self.outputs == 1 else f"/o{self.outputs}"))

    @property
    def n_inputs(self) -> int:
        """Inputs per side: 768 piece-square inputs per king bucket."""
        return PSQ_INPUTS * self.n_buckets

    def to_json(self) -> dict[str, Any]:
        """The shape as a file's header keeps it; ``outputs`` only when above 1, so that a
        network without output buckets keeps the header (and layout hash) of the files made
        before output buckets existed."""
        doc: dict[str, Any] = {"h": self.h, "h2": self.h2, "h3": self.h3, "buckets": self.buckets}
        if self.outputs != 1:
            doc["outputs"] = self.outputs
        return doc

    @classmethod
    def from_json(cls, doc: Any, where: str) -> NetworkShape:
        if not isinstance(doc, dict) or not {"h", "h2", "h3", "buckets"} <= set(doc) <= {"h", "h2", "h3", "buckets",
                                                                                          "outputs"}:
            raise NetworkFileError(f"{where}: the shape must give exactly h, h2, h3, buckets and optionally outputs")
        if doc.get("outputs", 2) == 1:  # written only above 1 (to_json): a 1 here is not what movetuner writes
            raise NetworkFileError(f"{where}: the shape's outputs is written only when above 1")
        try:
            return cls(**doc)
        except (TypeError, ValueError) as exc:
            raise NetworkFileError(f"{where}: {exc}") from None

    def array_shapes(self) -> dict[str, tuple[int, ...]]:
        """Each parameter array's shape, in file order."""
        return {"w1": (self.n_inputs, self.h), "b1": (self.h,), "w2": (2 * self.h, self.h2), "b2": (self.h2,),
                "w3": (self.h2, self.h3), "b3": (self.h3,),
                "w4": (self.outputs, 2 * self.h if self.direct else self.h3), "b4": (self.outputs,)}


#: integer dtype of each parameter in a network file and in the kernels
INT_DTYPES: dict[str, type[np.signedinteger[Any]]] = {"w1": np.int16, "b1": np.int16, "w2": np.int16, "b2": np.int32, "w3": np.int16, "b3": np.int32,
              "w4": np.int32, "b4": np.int64}
#: scale from a float parameter to its integer: the integer is round(float * scale)
SCALES = {"w1": QA, "b1": QA, "w2": QB, "b2": QA * QB, "w3": QB, "b3": QA * QB, "w4": QO, "b4": QA * QO}
PARAMS = tuple(INT_DTYPES)


def _clamp_limits(shape: NetworkShape) -> dict[str, float]:
    """The largest float magnitude of each weight array that keeps every integer sum in range
    (accumulator in int16 with 32 pieces; hidden sums in int32), with room for the biases."""
    return {
        "w1": (ACC_LIMIT / (MAX_PIECES + 1) - 1) / QA,   # 32 rows plus a bias of the same size
        "b1": (ACC_LIMIT / (MAX_PIECES + 1) - 1) / QA,
        "w2": min(32767 / QB, (SUM_LIMIT / 2 / (2 * shape.h * QA) - 1) / QB),
        "b2": SUM_LIMIT / 2 / (QA * QB),
        "w3": min(32767 / QB, (SUM_LIMIT / 2 / (max(shape.h2, 1) * QA) - 1) / QB),
        "b3": SUM_LIMIT / 2 / (QA * QB),
        "w4": min(SUM_LIMIT / QO, 1e6),
        "b4": 1e9,
    }


@dataclass(frozen=True)
class FloatNetwork:
    """Float64 parameters of a network (``params[name]`` with :meth:`NetworkShape.array_shapes`),
    the float form of the score (``docs/network.md``): ``x = clip(acc, 0, 1)`` per side (side to
    move first), ``h2 = clip(x W2 + b2, 0, 1)``, ``h3 = clip(h2 W3 + b3, 0, 1)``, ``out = h3 W4 +
    b4`` centipawns; plus ``linear`` (int32[N_FEATURES] weights, or None) as in the linear
    evaluator."""

    shape: NetworkShape
    params: dict[str, np.ndarray]
    linear: np.ndarray | None = None

    @classmethod
    def initial(cls, shape: NetworkShape, *, seed: int, linear: np.ndarray | None = None,
                output_zero: bool = False) -> FloatNetwork:
        """Random parameters: He-style uniform fan-in scaling for W1..W3, small positive
        biases so that the clipped ReLUs start active, W4 of the scale of a pawn (or zero with
        ``output_zero``, so that a hybrid network starts as its linear part)."""
        rng = np.random.default_rng(seed)
        shapes = shape.array_shapes()
        p: dict[str, np.ndarray] = {}
        # an accumulator sums about 30 rows: keep it around 0.5 so that it starts inside (0, 1)
        p["w1"] = rng.uniform(-1, 1, shapes["w1"]) * (0.5 / np.sqrt(30.0))
        p["b1"] = np.full(shapes["b1"], 0.5)
        p["w2"] = rng.uniform(-1, 1, shapes["w2"]) * np.sqrt(3.0 / (2 * shape.h))
        p["b2"] = np.full(shapes["b2"], 0.25)
        p["w3"] = rng.uniform(-1, 1, shapes["w3"]) * np.sqrt(3.0 / max(shape.h2, 1))
        p["b3"] = np.full(shapes["b3"], 0.25)
        # direct form: x^2 of about 0.25 over 2H entries, an output of the scale of a pawn
        w4_scale = 400.0 / np.sqrt(2 * shape.h) if shape.direct else 100.0
        p["w4"] = np.zeros(shapes["w4"]) if output_zero else rng.uniform(-1, 1, shapes["w4"]) * w4_scale
        p["b4"] = np.zeros(shapes["b4"])
        return cls(shape, p, None if linear is None else np.asarray(linear, dtype=np.int32).copy()).clamped()

    @property
    def size(self) -> int:
        """Number of float parameters (the length of :meth:`vector`)."""
        return sum(int(np.prod(s)) for s in self.shape.array_shapes().values())

    def vector(self) -> np.ndarray:
        """All parameters as one float64 vector, in :data:`PARAMS` order, each array row-major."""
        return np.concatenate([self.params[k].ravel() for k in PARAMS])

    def with_vector(self, v: np.ndarray) -> FloatNetwork:
        """A network with the parameters of vector ``v`` (the layout of :meth:`vector`)."""
        out: dict[str, np.ndarray] = {}
        a = 0
        for k, s in self.shape.array_shapes().items():
            n = int(np.prod(s))
            out[k] = np.asarray(v[a:a + n], dtype=np.float64).reshape(s).copy()
            a += n
        if a != len(v):
            raise ValueError(f"a vector of {len(v)} values for a network of {a} parameters")
        return replace(self, params=out)

    def limits_vector(self) -> np.ndarray:
        """float64[size]: each parameter's largest magnitude (:meth:`clamped`)."""
        lim = _clamp_limits(self.shape)
        return np.concatenate([np.full(int(np.prod(s)), lim[k]) for k, s in self.shape.array_shapes().items()])

    def clamped(self) -> FloatNetwork:
        """The parameters clipped to the magnitudes whose integer form cannot overflow."""
        lim = _clamp_limits(self.shape)
        return replace(self, params={k: np.clip(v, -lim[k], lim[k]) for k, v in self.params.items()})


@dataclass(frozen=True)
class QuantizedNetwork:
    """The integer parameters (``params[name]`` of :data:`INT_DTYPES`) that the search runs,
    the linear part (int32[N_FEATURES], or None), and free metadata (how it was made)."""

    shape: NetworkShape
    params: dict[str, np.ndarray]
    linear: np.ndarray | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def _kernel_args(self) -> tuple[np.ndarray, ...]:
        return self._make_kernel_args()

    def kernel_args(self) -> tuple[np.ndarray, ...]:
        """The tuple the kernels take (positions ``NET_*`` of :mod:`search.evaluation.network_kernels`),
        made once per network."""
        return self._kernel_args

    def _make_kernel_args(self) -> tuple[np.ndarray, ...]:
        p = self.params
        linear = self.linear if self.linear is not None else np.zeros(N_FEATURES, dtype=np.int32)
        info = np.array([int(self.linear is not None), self.shape.n_buckets], dtype=np.int64)
        return (np.ascontiguousarray(p["w1"]), p["b1"], np.ascontiguousarray(p["w2"]), p["b2"],
                np.ascontiguousarray(p["w3"]), p["b3"], np.ascontiguousarray(p["w4"]), p["b4"], self.shape.bucket_table,
                np.ascontiguousarray(linear, dtype=np.int32), info)

    def dequantize(self) -> FloatNetwork:
        """The float network whose :func:`quantize` is this one (each integer divided by its scale)."""
        return FloatNetwork(self.shape, {k: v.astype(np.float64) / SCALES[k] for k, v in self.params.items()},
                            None if self.linear is None else self.linear.copy())

    def layout_hash(self) -> str:
        """16 hex digits identifying the input layout and sizes (not the values)."""
        doc = json.dumps({"shape": self.shape.to_json(), "qa": QA, "qb": QB, "qo": QO, "phase_max": PHASE_MAX,
                          "inputs": "psq-768-v1"}, sort_keys=True)
        return hashlib.sha256(doc.encode()).hexdigest()[:16]


def quantize(net: FloatNetwork, metadata: dict[str, Any] | None = None) -> QuantizedNetwork:
    """The integer form of ``net``: each parameter rounded (to nearest, ties to even) after
    multiplying by its scale (:data:`SCALES`), after :meth:`FloatNetwork.clamped`."""
    net = net.clamped()
    params = {}
    for k in PARAMS:
        info = np.iinfo(INT_DTYPES[k])
        q = np.rint(net.params[k] * SCALES[k])
        params[k] = np.clip(q, info.min, info.max).astype(INT_DTYPES[k])
    return QuantizedNetwork(net.shape, params, None if net.linear is None else net.linear.copy(), dict(metadata or {}))


# ------------------------------------------------------------------ files


def network_bytes(net: QuantizedNetwork) -> bytes:
    """The file's bytes (docs/network.md): magic, version, header length, JSON header, the
    arrays little-endian in :data:`PARAMS` order (then the linear weights when present),
    CRC-32 of everything before it."""
    header = {"format": "movetuner-network", "shape": net.shape.to_json(), "qa": QA, "qb": QB, "qo": QO,
              "phase_max": PHASE_MAX, "layout_hash": net.layout_hash(),
              "linear": None if net.linear is None else {"catalog_hash": CATALOG_HASH, "n": N_FEATURES},
              "metadata": net.metadata}
    head = json.dumps(header, sort_keys=True).encode()
    parts = [MAGIC, struct.pack("<II", FILE_VERSION, len(head)), head]
    for k in PARAMS:
        parts.append(np.ascontiguousarray(net.params[k], dtype=np.dtype(INT_DTYPES[k]).newbyteorder("<")).tobytes())
    if net.linear is not None:
        parts.append(np.ascontiguousarray(net.linear, dtype="<i4").tobytes())
    body = b"".join(parts)
    return body + struct.pack("<I", zlib.crc32(body))


def write_network(path: str | Path, net: QuantizedNetwork) -> None:
    """Write ``net`` to ``path`` atomically (:func:`search.params.weights.atomic_write_bytes`)."""
    atomic_write_bytes(path, network_bytes(net))


def is_network_file(path: str | Path) -> bool:
    """Whether ``path`` starts with the network files' magic bytes."""
    try:
        with open_regular(path) as fh:  # not a FIFO: opening one would block
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def parse_network(data: bytes, where: str) -> QuantizedNetwork:
    """The network of a file's bytes; one-line :class:`NetworkFileError` naming ``where``."""
    if data[:4] != MAGIC:
        raise NetworkFileError(f"{where}: not a movetuner network file (no {MAGIC.decode()} magic)")
    if len(data) < 16:
        raise NetworkFileError(f"{where}: truncated (only {len(data)} bytes)")
    if zlib.crc32(data[:-4]) != struct.unpack("<I", data[-4:])[0]:
        raise NetworkFileError(f"{where}: corrupt (CRC-32 mismatch over {len(data) - 4} bytes)")
    version, head_len = struct.unpack("<II", data[4:12])
    if version != FILE_VERSION:
        raise NetworkFileError(f"{where}: file version {version}; this movetuner reads version {FILE_VERSION}")
    try:
        header = loads_json(data[12:12 + head_len].decode("utf-8"), f"{where}: header")
    except InputLimitError as exc:
        raise NetworkFileError(str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NetworkFileError(f"{where}: bad header at byte 12: {exc}") from None
    if not isinstance(header, dict) or header.get("format") != "movetuner-network":
        raise NetworkFileError(f"{where}: the header is not a movetuner network's")
    for key, mine in (("qa", QA), ("qb", QB), ("qo", QO), ("phase_max", PHASE_MAX)):
        if type(header.get(key)) is not int or header.get(key) != mine:  # not True, 255.0
            raise NetworkFileError(f"{where}: made with {key} = {header.get(key)!r}; this movetuner uses {mine}")
    shape = NetworkShape.from_json(header.get("shape"), where)
    linear_doc = header.get("linear")
    if linear_doc is not None and not isinstance(linear_doc, dict):
        raise NetworkFileError(f"{where}: the header's linear must be null or an object, not {type(linear_doc).__name__}")
    metadata = header.get("metadata", {})
    metadata = {} if metadata is None else metadata
    if not isinstance(metadata, dict):
        raise NetworkFileError(f"{where}: the header's metadata must be an object, not {type(metadata).__name__}")
    if linear_doc is not None and PLUGIN is not None:
        raise NetworkFileError(f"{where}: a hybrid network (it has a linear part) cannot be used with the term "
                               f"plug-in {PLUGIN.name!r}: its linear part takes the built-in terms only")
    if linear_doc is not None and (linear_doc != {"catalog_hash": CATALOG_HASH, "n": N_FEATURES}
                                   or type(linear_doc.get("n")) is not int):
        raise NetworkFileError(f"{where}: its linear part was made for feature catalogue "
                               f"{linear_doc.get('catalog_hash')!r}, this version's is {CATALOG_HASH!r}")
    pos = 12 + head_len
    params: dict[str, np.ndarray] = {}
    for k, s in shape.array_shapes().items():
        dt = np.dtype(INT_DTYPES[k]).newbyteorder("<")
        n = int(np.prod(s)) * dt.itemsize
        if pos + n > len(data) - 4:
            raise NetworkFileError(f"{where}: truncated in array {k} at byte {pos}")
        params[k] = np.frombuffer(data, dtype=dt, count=int(np.prod(s)), offset=pos).astype(INT_DTYPES[k]).reshape(s)
        pos += n
    linear = None
    if linear_doc is not None:
        n = N_FEATURES * 4
        if pos + n > len(data) - 4:
            raise NetworkFileError(f"{where}: truncated in the linear weights at byte {pos}")
        linear = np.frombuffer(data, dtype="<i4", count=N_FEATURES, offset=pos).astype(np.int32)
        pos += n
    if pos != len(data) - 4:
        raise NetworkFileError(f"{where}: {len(data) - 4 - pos} unexpected bytes after the arrays")
    _check_ranges(shape, params, linear, where)
    net = QuantizedNetwork(shape, params, linear, dict(metadata))
    if header.get("layout_hash") != net.layout_hash():
        raise NetworkFileError(f"{where}: layout hash {header.get('layout_hash')!r} does not match its shape")
    return net


def _check_ranges(shape: NetworkShape, params: dict[str, np.ndarray], linear: np.ndarray | None, where: str) -> None:
    """Refuse a file whose integers exceed what :func:`quantize` writes (each array within its
    clamp limit times its scale, :func:`_clamp_limits`: the sums of the kernels stay in range and
    no score reaches the mate band), or whose linear weights exceed the evaluator's limit
    (:data:`search.params.weights_base.MAX_ABS_WEIGHT`); one line naming the array and the value."""
    limits = _clamp_limits(shape)
    for k, arr in params.items():
        if arr.size == 0:  # the direct form's hidden layers
            continue
        bound = math.ceil(limits[k] * SCALES[k])
        low, high = int(arr.min()), int(arr.max())
        if low < -bound or high > bound:
            raise NetworkFileError(f"{where}: array {k} holds {low if -low > high else high}, beyond its limit "
                                   f"+-{bound} (a network file holds what quantize writes)")
    if linear is not None and linear.size:
        low, high = int(linear.min()), int(linear.max())
        problem = weight_range_problem(low if -low > high else high)
        if problem:
            raise NetworkFileError(f"{where}: a linear weight = {low if -low > high else high} {problem}")


def read_network(path: str | Path) -> QuantizedNetwork:
    """Read a network file; one-line :class:`NetworkFileError` naming the file."""
    try:
        data = read_capped(path, MAX_NETWORK_BYTES)
    except OSError as exc:
        raise NetworkFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except InputLimitError as exc:
        raise NetworkFileError(str(exc)) from None
    return parse_network(data, str(path))
