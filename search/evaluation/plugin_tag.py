"""The tag that stands for an engine author's terms (:mod:`search.params.terms`) in the kernels'
evaluator argument ``(w, tag)`` (:mod:`search.evaluation.static_eval`).

A kernel compiled for a plug-in must call the plug-in's ``evaluate``. Passed as an argument,
that function would be typed by numba as the function object itself, new in every process, so
numba's cache could never find the kernel again: each start compiled the search anew. The tag
carries no data; its numba type, :class:`PluginTagType`, is keyed by the plug-in's name and a
digest of its file and of its place in the catalogue (:func:`plugin_key`), the same in every
process that loads the same file. The evaluator hooks find the plug-in's compiled ``evaluate``
by that key (:data:`EVALUATORS`, filled by :func:`search.evaluation.terms_kernels.plugin_kernels`)
while they compile; a kernel numba loads from its cache needs nothing from Python.

As numba's own cache, the digest covers the plug-in's file, not the files it imports: a
plug-in whose ``count`` calls functions kept in another file compiles again only when its own
file changes (or the cache is cleared, ``NUMBA_CACHE_DIR``). Each version of the file adds its
kernels to the cache, until any source of ``search/`` changes (:mod:`search` then drops them
all).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
from numba.core import types
from numba.extending import NativeValue, models, register_model, typeof_impl, unbox

#: the plug-in's compiled ``evaluate(b, w, scratch)`` by tag key (:func:`plugin_key`)
EVALUATORS: dict[tuple[str, str], Any] = {}


def plugin_key(name: str, path: str | Path, *layout: int) -> tuple[str, str]:
    """``(name, digest)``: the plug-in's name and 16 hex digits of SHA-256 over its file's bytes,
    its resolved path (the module a cached kernel imports is named after it,
    :func:`search.params.terms.load_plugin`: a copy elsewhere is another plug-in) and the
    integers ``layout`` (where its features start in the catalogue, how many)."""
    p = Path(path)
    digest = hashlib.sha256(p.read_bytes())
    digest.update(str(p.resolve()).encode() + b"\0" + repr(layout).encode())
    return name, digest.hexdigest()[:16]


class PluginTag:
    """The value standing for the plug-in of ``key`` in an evaluator argument. Called from
    Python (``NUMBA_DISABLE_JIT=1``, :func:`search.evaluation.static_eval.static_score`'s Python
    body) it is the plug-in's ``evaluate(b, w, scratch)``."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key

    def __call__(self, b: np.ndarray, w: np.ndarray, scratch: np.ndarray) -> int:
        return int(EVALUATORS[self.key](b, w, scratch))

    def __repr__(self) -> str:
        return f"PluginTag({self.key[0]!r}, {self.key[1]})"


class PluginTagType(types.Type):
    """numba's type of a :class:`PluginTag`: equal across processes for the same key."""

    def __init__(self, key: tuple[str, str]) -> None:
        self.tag_key = key
        super().__init__(name=f"PluginTag({key[0]}, {key[1]})")

    @property
    def key(self) -> tuple[str, str]:
        return self.tag_key


@typeof_impl.register(PluginTag)
def _typeof_tag(val: PluginTag, c: Any) -> PluginTagType:
    return PluginTagType(val.key)


register_model(PluginTagType)(models.OpaqueModel)


def _unbox_tag(typ: PluginTagType, obj: Any, c: Any) -> Any:
    """No data to read: the type is all there is."""
    native_value: Any = NativeValue  # numba's extension API is untyped
    return native_value(c.context.get_constant_null(typ))


_register_unbox: Any = unbox
_register_unbox(PluginTagType)(_unbox_tag)


def tag_evaluator(typ: PluginTagType) -> Any:
    """The compiled ``evaluate`` of the plug-in a tag type names (while a kernel compiles)."""
    try:
        return EVALUATORS[typ.key]
    except KeyError:
        raise RuntimeError(f"{typ}: no such plug-in loaded in this process") from None


__all__ = ["EVALUATORS", "PluginTag", "PluginTagType", "plugin_key", "tag_evaluator"]
