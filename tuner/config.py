"""Configuration dataclasses drive both the command line and TOML files.

A configuration is a frozen, keyword-only dataclass whose fields carry their help text in
``field(metadata={"help": ...})``. From it this module derives

* the argparse options (:func:`add_arguments`, :func:`from_namespace`),
* loading and writing flat TOML files (:func:`load_toml`, :func:`dump_toml`),

so that every default lives in exactly one place.

Supported field types: ``bool``, ``int``, ``float``, ``str``, ``str | None``, ``int | None``,
``float | None`` and ``tuple[str, ...]`` / ``tuple[int, ...]`` / ``tuple[float, ...]``
(comma-separated on the command line, arrays in TOML). Floats must be finite (``nan``,
``inf`` are refused) unless the field is declared with ``help_field(..., finite=False)``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import tomllib
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from search.core.input_limits import InputLimitError, read_capped
from tuner.errors import TunerError

#: largest TOML file read (a run's config.toml is about 10 kB)
MAX_TOML_BYTES = 16 << 20

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

C = TypeVar("C", bound="DataclassInstance")

_SCALARS = (bool, int, float, str)


def help_field(default: Any, help: str, **kwargs: Any) -> Any:
    """A dataclass field with help text (shown by ``--help`` and written into TOML)."""
    return dataclasses.field(default=default, metadata={"help": help, **kwargs})


def _field_kind(tp: Any) -> tuple[type, bool, bool]:
    """(scalar type, optional?, tuple?) for a supported annotation."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported config type {tp!r}")
        base, _, is_tuple = _field_kind(args[0])
        return base, True, is_tuple
    if origin is tuple:
        items = typing.get_args(tp)
        if len(items) != 2 or items[1] is not Ellipsis or items[0] not in _SCALARS:
            raise TypeError(f"unsupported config type {tp!r}")
        return items[0], False, True
    if tp in _SCALARS:
        return tp, False, False
    raise TypeError(f"unsupported config type {tp!r}")


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _parse_scalar(base: type, text: str) -> Any:
    if base is bool:
        low = text.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"not a boolean: {text!r}")
    return base(text)


def _cli_type(base: type, is_tuple: bool) -> Any:
    def convert(text: str) -> Any:
        try:
            if is_tuple:
                return tuple(_parse_scalar(base, t) for t in text.split(",") if t.strip())
            return _parse_scalar(base, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = base.__name__ + ("-list" if is_tuple else "")
    return convert


def add_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup, cls: type, *, exclude: tuple[str, ...] = ()) -> None:
    """Add one ``--option`` per dataclass field of ``cls`` (except ``exclude``).

    Options default to "not given" so that :func:`from_namespace` can layer them over a TOML
    file; the help text shows the dataclass default.
    """
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in exclude or not f.init:
            continue
        base, _optional, is_tuple = _field_kind(hints[f.name])
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        help_text = f"{f.metadata.get('help', '')} (default: {shown})"
        if base is bool and not is_tuple:
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=argparse.SUPPRESS, help=help_text)
        else:
            parser.add_argument(flag, dest=f.name, type=_cli_type(base, is_tuple),
                                default=argparse.SUPPRESS, help=help_text,
                                metavar=f.metadata.get("metavar", f.name.upper()))


def _coerce(cls: type, name: str, value: Any, where: str) -> Any:
    base, optional, is_tuple = _field_kind(_hints(cls)[name])
    if value is None and optional:
        return None
    if is_tuple:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise TunerError(f"{where}: '{name}' must be a list")
        return tuple(_coerce_scalar(base, name, v, where) for v in value)
    return _coerce_scalar(base, name, value, where)


def _coerce_scalar(base: type, name: str, value: Any, where: str) -> Any:
    if base is bool:
        if isinstance(value, bool):
            return value
        raise TunerError(f"{where}: '{name}' must be true or false, not {value!r}")
    if base is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TunerError(f"{where}: '{name}' must be an integer, not {value!r}")
        return value
    if base is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TunerError(f"{where}: '{name}' must be a number, not {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise TunerError(f"{where}: '{name}' must be a string, not {value!r}")
    return value


def from_namespace(cls: type[C], ns: argparse.Namespace, base: C | None = None) -> C:
    """Build ``cls`` from ``base`` (or the defaults), overridden by the options given in ``ns``."""
    values = dataclasses.asdict(base) if base is not None else {}
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    for name in names:
        if hasattr(ns, name):
            values[name] = getattr(ns, name)
    obj = cls(**{k: v for k, v in values.items() if k in names})
    _validate(obj)
    return obj


def from_mapping(cls: type[C], data: dict[str, Any], where: str) -> C:
    """Build ``cls`` from a mapping (a parsed TOML table); unknown keys are an error."""
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - names)
    if unknown:
        raise TunerError(f"{where}: unknown setting(s) {', '.join(unknown)}")
    obj = cls(**{k: _coerce(cls, k, v, where) for k, v in data.items()})
    _validate(obj, where)
    return obj


def _validate(obj: Any, where: str | None = None) -> None:
    """Check a configuration: every float finite (unless its field's metadata says
    ``finite=False``), then the dataclass's own ``validate()``. One-line :class:`TunerError`,
    prefixed with ``where`` (a file, for TOML) when given."""
    try:
        _check_finite(obj)
        for f in dataclasses.fields(obj):
            if f.init and (f.name == "seed" or f.name.endswith("_seed")):
                check_seed(getattr(obj, f.name), f.name)
        check = getattr(obj, "validate", None)
        if check is not None:
            check()
    except ValueError as exc:
        raise TunerError(f"{where}: {exc}" if where else str(exc)) from None


#: seeds are 0 .. 2**63 - 1: numpy's generators take no negative seed, the kernels an int64
MAX_SEED = 2**63 - 1


def check_seed(value: Any, name: str = "seed") -> None:
    """Refuse (ValueError, one line) a seed that is not an integer within ``0 ..``
    :data:`MAX_SEED`; ``None`` (no seed) passes."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise ValueError(f"{name} must be an integer from 0 to {MAX_SEED}, not {value!r}")


def seed_option(text: str) -> int:
    """The argparse ``type`` of a plain ``--seed`` option: an integer within ``0 ..``
    :data:`MAX_SEED`, else a one-line :class:`TunerError` (argparse passes it on, and the
    command line prints it as every other error)."""
    try:
        value = int(text)
        check_seed(value, "--seed")
    except ValueError as exc:
        raise TunerError(str(exc) if text.strip().lstrip("+-").isdigit() else
                         f"--seed must be an integer from 0 to {MAX_SEED}, not {text!r}") from None
    return value


def _check_finite(obj: Any) -> None:
    """NaN and infinities are refused in every float setting: no comparison catches NaN
    (``nan < 0`` is false), so range checks alone would let it through."""
    for f in dataclasses.fields(obj):
        if not f.init or f.metadata.get("finite", True) is False:
            continue
        value = getattr(obj, f.name)
        items = value if isinstance(value, tuple) else (value,)
        for v in items:
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"{f.name} must be a finite number, not {v}")


_TOML_WHERE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$|\s*\(at end of document\)\s*$")


def read_toml(path: str | Path) -> dict[str, Any]:
    """The contents of the TOML file ``path``, the one reader of every TOML file of movetuner.

    Raises :class:`TunerError` with a one-line message naming the file, and for a syntax error
    the place: ``FILE: not valid TOML at line L, column C: WHAT`` (or ``at its end``); ``FILE:
    no such file``; ``FILE: larger than 16 MB, ...`` (:data:`MAX_TOML_BYTES`); ``FILE: not valid
    TOML: not UTF-8 text`` (or ``nested too deeply``); ``FILE: cannot read (...)``.
    """
    path = Path(path)
    try:
        return tomllib.loads(read_capped(path, MAX_TOML_BYTES).decode("utf-8"))
    except InputLimitError as exc:
        raise TunerError(str(exc)) from None
    except FileNotFoundError:
        raise TunerError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TunerError(f"{path}: a folder, not a TOML file") from None
    except OSError as exc:
        raise TunerError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        text = " ".join(str(exc).split())
        m = _TOML_WHERE.search(text)
        what = text[:m.start()] if m else text
        where = (f" at line {m.group(1)}, column {m.group(2)}" if m and m.group(1) else
                 " at its end" if m else "")
        raise TunerError(f"{path}: not valid TOML{where}: {what}") from None
    except UnicodeDecodeError:
        raise TunerError(f"{path}: not valid TOML: not UTF-8 text") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise TunerError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None


def load_toml(cls: type[C], path: str | Path, table: str | None = None) -> C:
    """Read ``cls`` from a TOML file (optionally from one ``[table]`` of it; errors as
    :func:`read_toml`)."""
    path = Path(path)
    data = read_toml(path)
    if table is not None:
        data = data.get(table, {})
        if not isinstance(data, dict):
            raise TunerError(f"{path}: [{table}] must be a table")
    return from_mapping(cls, data, str(path))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} to TOML")


def dump_toml(obj: Any, table: str | None = None) -> str:
    """Write a config dataclass as TOML, each setting preceded by its help text as a comment.

    Settings whose value is ``None`` are written as comments (TOML has no null).
    """
    lines = [f"[{table}]"] if table else []
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        value = getattr(obj, f.name)
        help_text = f.metadata.get("help")
        if help_text:
            lines.append(f"# {help_text}")
        if value is None:
            lines.append(f"# {f.name} = (not set)")
        else:
            lines.append(f"{f.name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"
