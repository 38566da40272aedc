"""Output files of the commands: never an input, never an existing file without ``--overwrite``.

A command that writes a file (``tuner export --out``, ``tuner bench match --out``, ``tuner
bench epd --out``) checks its output with :func:`check_output` before any work, and writes it
atomically (:func:`search.params.weights.atomic_write_text`: a temporary file beside it, then a
rename), so that a refused or failed command leaves every file as it was. A command that
writes named files into an output folder (``tuner bench compare --out``, ``tuner bench plot
--out``) checks them with :func:`check_output_files`. No numpy here: the export command
imports it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from pathlib import Path

from tuner.errors import TunerError


def add_overwrite_argument(p: argparse.ArgumentParser, what: str = "FILE") -> None:
    """``--overwrite``: replace an existing output."""
    p.add_argument("--overwrite", action="store_true",
                   help=f"replace {what} if it exists (never one of the command's inputs)")


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def check_output(out: str | Path | None, *, overwrite: bool, inputs: Iterable[str | Path | None] = (),
                 flag: str = "--out") -> None:
    """Refuse, in one :class:`TunerError` line naming the file, an output ``out`` that is one of
    the command's ``inputs`` (always: it would be read and replaced), a folder, a device, pipe or
    socket (always: writing a temporary file and renaming it over ``/dev/full`` replaced the
    device node itself), or an existing file unless ``overwrite``. ``None`` and ``-`` (standard output) pass."""
    if out is None or str(out) == "-":
        return
    path = Path(out)
    for given in inputs:
        if given is not None and Path(given).exists() and path.exists() and _same(path, Path(given)):
            raise TunerError(f"{out}: {flag} names an input of the command ({given}); write to another file")
    if path.is_dir():
        raise TunerError(f"{out}: is a folder; {flag} names the file to write")
    if path.exists() and not path.is_file():  # the atomic rename would replace the node itself (/dev/full)
        raise TunerError(f"{out}: not a regular file (a device, pipe or socket); {flag} names the file to write "
                         "(- for standard output)")
    if path.exists() and not overwrite:
        raise TunerError(f"{out}: exists; pass --overwrite to replace it")


def check_output_files(folder: str | Path, names: Iterable[str], *, overwrite: bool, flag: str = "--out",
                       patterns: Iterable[str] = ()) -> None:
    """Refuse, in one :class:`TunerError` line, an output folder ``folder`` that is a file, or one
    that already holds a file of ``names`` (or one matching a glob of ``patterns``, relative to
    the folder) unless ``overwrite``; the first such file is named. A missing folder passes."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise TunerError(f"{folder}: exists and is not a folder; {flag} names the folder to write into")
    if overwrite or not path.is_dir():
        return
    for name in names:
        if (path / name).exists() or (path / name).is_symlink():
            raise TunerError(f"{path / name}: exists; pass --overwrite to replace it (or choose another {flag})")
    for pattern in patterns:
        found = sorted(path.glob(pattern))
        if found:
            raise TunerError(f"{found[0]}: exists; pass --overwrite to replace it (or choose another {flag})")


__all__ = ["add_overwrite_argument", "check_output", "check_output_files"]
