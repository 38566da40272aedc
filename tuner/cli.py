"""The ``tuner`` command line: one thin subcommand per library entry point.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func`` (a callable taking the parsed namespace and returning an exit code). Errors meant for
the user (:class:`tuner.errors.TunerError`, a missing, unwritable or full file, and a usage
error: an unknown option or a bad value, ``tuner tune: error: argument --lam: invalid float
value: 'x' (tuner tune --help lists the options)``, not argparse's usage block) are printed as
one line with exit code 2, with their control characters escaped (:func:`tuner.errors.one_line`); Ctrl-C (:class:`tuner.errors.Interrupted`, or a plain
KeyboardInterrupt) as one line with exit code 130, after the command has saved what it had; SIGTERM
(``kill``, ``timeout``) the same way, with exit code 143 (:class:`tuner.errors.SigtermAsCtrlC`).
A weights file of an earlier feature catalogue, migrated as it is read
(:class:`search.params.weights.CatalogMigrationWarning`), is reported as one ``note:`` line, and so is
a command's first wait for numba to compile (``tuner tune: note: compiling kernels (first run
only)``, :func:`tuner.compiling.compile_notes`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from tuner import __version__
from tuner.commands import COMMANDS, command_help
from tuner.compiling import compile_notes
from search.params.terms import ENV_VAR as TERMS_ENV  # the variable naming a term plug-in file; no numpy
from tuner.errors import Interrupted, SigtermAsCtrlC, TunerError, is_interrupt, one_line

#: Modules that define subcommands, in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = tuple(module for module, _ in COMMANDS.values())
#: commands that run no numba kernel (but for a network file's export): no numba import for the
#: note that a command waits for compilation
_WITHOUT_KERNELS = frozenset({"export"})


class UsageError(TunerError):
    """A command line argparse refuses: ``prog`` (``tuner bench match``) and argparse's message."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


#: the namespace attribute that carries the innermost (sub)command's ``prog`` up to the top parser
_PROG = "_tuner_prog"


class OneLineParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose usage errors raise :class:`UsageError` (printed
    by :func:`main` as one line naming the command) instead of printing the usage block and
    exiting; ``--help`` and ``--version`` are unchanged. Its subparsers are of this class too
    (argparse makes them of the parent's class). Each records its ``prog`` as a default, which
    the innermost (sub)command's parse sets last: :func:`parse_command_line` reports arguments
    no parser knows as that command's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.set_defaults(**{_PROG: self.prog})

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, message)


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """``parser.parse_args(argv)``, but arguments that no (sub)command knows raise
    :class:`UsageError` naming the innermost command given (argparse names the top one)."""
    args, extras = parser.parse_known_args(argv)
    prog = vars(args).pop(_PROG, parser.prog)
    if extras:
        raise UsageError(str(prog), f"unrecognized arguments: {' '.join(extras)}")
    return args


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``tuner`` parser. Given the command line ``argv``, only the command it names (its
    first word not starting with ``-``) is defined in full, by importing its module; the others
    get their ``--help`` line only (from :mod:`tuner.commands`), so that ``tuner --help`` and a
    command import no other command's module. Without ``argv``, every command in full."""
    parser = OneLineParser(
        prog="tuner",
        description="Learn chess evaluation weights from grandmaster moves.",
        epilog="Every command also takes --terms FILE (anywhere on the line): an engine author's own "
               "evaluation terms, a plug-in file (docs/own-terms.md).",
    )
    parser.add_argument("--version", action="version", version=f"movetuner {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    for name, (module, _) in COMMANDS.items():
        if chosen is None or name == chosen:
            importlib.import_module(module).register(sub)
        else:
            sub.add_parser(name, help=command_help(name))
    return parser


#: exit codes of a stopped command (the shell's 128 + the signal's number)
_STOPPED_BY_CTRL_C, _STOPPED_BY_SIGTERM = 130, 143


def main(argv: Sequence[str] | None = None) -> int:
    command = "tuner"
    shown = warnings.showwarning

    def note(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
        """Print a catalogue migration as one line; leave other warnings as Python shows them."""
        from search.params.weights import CatalogMigrationWarning  # noqa: PLC0415 - numpy: not for --help

        if issubclass(category, CatalogMigrationWarning):
            print(f"{command}: note: {one_line(message)}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings(), SigtermAsCtrlC().installed() as sigterm:
        warnings.showwarning = note
        try:
            argv = list(sys.argv[1:] if argv is None else argv)
            argv, terms = take_terms(argv)
            recorded = tune_settings_terms(argv)
            if terms is not None and recorded is not None and not same_file(terms, recorded[0]):
                raise TunerError(f"{recorded[1]}: its terms = {recorded[0]!r} is not the --terms file {terms}")
            if terms is None and recorded is not None:
                terms = recorded[0]
            compiling_note = None  # the note at the first compilation: the default one
            if terms is not None:
                compiling_note = use_terms(terms)
            elif os.environ.get(TERMS_ENV, "").strip():  # the plug-in named by the environment: checked too
                compiling_note = use_terms(os.environ[TERMS_ENV].strip())
            parser = build_parser(argv)
            args = parse_command_line(parser, argv)
            if not getattr(args, "func", None):
                parser.print_help()
                return 2
            from search.params.weights import CatalogMigrationWarning  # noqa: PLC0415 - numpy: not for --help

            warnings.simplefilter("always", CatalogMigrationWarning)
            command = f"tuner {args.command}"
            if args.command in _WITHOUT_KERNELS:
                return int(args.func(args) or 0)
            with compile_notes(command, compiling_note):
                return int(args.func(args) or 0)
        except UsageError as exc:
            print(f"{exc.prog}: error: {one_line(exc)} ({exc.prog} --help lists the options)", file=sys.stderr)
            return 2
        except TunerError as exc:
            print(f"{command}: error: {one_line(exc)}", file=sys.stderr)
            return 2
        except Interrupted as exc:
            print(f"{command}: {one_line(exc)}", file=sys.stderr)
            return _STOPPED_BY_SIGTERM if sigterm.received else _STOPPED_BY_CTRL_C
        except OSError as exc:  # a missing or unwritable file, a full or read-only disk
            print(f"{command}: error: {one_line(_os_error(exc))}", file=sys.stderr)
            return 2
        except RuntimeError as exc:  # pathlib's resolve() meeting a symlink loop (Python < 3.13)
            loop = _symlink_loop(exc)
            if loop is None:
                raise
            print(f"{command}: error: {one_line(loop)}", file=sys.stderr)
            return 2
        except (KeyboardInterrupt, SystemError) as exc:
            if not is_interrupt(exc):
                raise
            print(f"{command}: interrupted", file=sys.stderr)
            return _STOPPED_BY_SIGTERM if sigterm.received else _STOPPED_BY_CTRL_C


def take_terms(argv: list[str]) -> tuple[list[str], str | None]:
    """``argv`` without its ``--terms FILE`` (or ``--terms=FILE``, anywhere on the line: every
    command that evaluates takes it), and that FILE or None."""
    out: list[str] = []
    terms = None
    it = iter(argv)
    for a in it:
        if a == "--terms":
            terms = next(it, None)
            if terms is None:
                raise TunerError("--terms needs a plug-in file (docs/own-terms.md)")
        elif a.startswith("--terms="):
            terms = a.split("=", 1)[1]
        else:
            out.append(a)
    return out, terms


def tune_settings_terms(argv: list[str]) -> tuple[str, str] | None:
    """For ``tuner tune --config FILE`` or ``--resume RUN``: the term plug-in its TOML names
    (top-level ``terms``, a path relative to the TOML's folder) and that TOML's path; None if
    the command is another or the TOML names none (a TOML that cannot be read is left to the
    command, which says so)."""
    import tomllib  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    if not argv or argv[0] != "tune":
        return None
    toml: Path | None = None
    for flag, name in (("--config", None), ("--resume", "config.toml")):
        for i, a in enumerate(argv):
            value = argv[i + 1] if a == flag and i + 1 < len(argv) else (
                a.split("=", 1)[1] if a.startswith(flag + "=") else None)
            if value is not None:
                toml = Path(value) / name if name else Path(value)
    if toml is None:
        return None
    from search.core.input_limits import read_capped  # noqa: PLC0415 - no numpy
    from tuner.config import MAX_TOML_BYTES  # noqa: PLC0415

    try:
        terms = tomllib.loads(read_capped(toml, MAX_TOML_BYTES).decode("utf-8")).get("terms")
    except (OSError, ValueError, RecursionError):  # unreadable, too large, not UTF-8, not TOML, too deep
        return None
    if not isinstance(terms, str) or not terms:
        return None
    return str(toml.parent / terms), str(toml)


def same_file(a: str, b: str) -> bool:
    """Whether two paths name the same file (resolved)."""
    from pathlib import Path  # noqa: PLC0415

    return Path(a).resolve() == Path(b).resolve()


def use_terms(path: str) -> str:
    """Make the plug-in file ``path`` (:mod:`search.params.terms`) this process's: checked now, with the
    feature catalogue it joins (one-line error: a GROUP that is a built-in group too), before any
    command module. Returns the note a command prints when it compiles (the first run with this
    plug-in file: its search kernels are then cached, :mod:`search.evaluation.plugin_tag`)."""
    from search.params.terms import ENV_VAR, TermsFileError, load_plugin  # noqa: PLC0415 - no numpy

    try:
        plugin = load_plugin(path)
    except TermsFileError as exc:
        raise TunerError(str(exc)) from None
    except SystemExit as exc:  # the plug-in's own code called sys.exit: not a plug-in (issue 58 item 17)
        raise TunerError(f"{path}: importing the plug-in failed: it called sys.exit({exc.code!r}); "
                         "a plug-in file only defines its terms") from None
    for note in plugin.notes:  # e.g. the plug-in imports search.board, now search.core.board
        print(f"tuner: note: {note}", file=sys.stderr)
    if "search.params.catalog" in sys.modules and not same_file(os.environ.get(ENV_VAR) or "", path):
        raise TunerError(f"{path}: --terms must be given before the feature catalogue is loaded "
                         "(in a fresh process)")
    os.environ[ENV_VAR] = path
    try:
        importlib.import_module("search.params.catalog")  # no numpy; it refuses a plug-in's built-in GROUP
    except TermsFileError as exc:
        raise TunerError(str(exc)) from None
    return one_line(f"terms {plugin.name!r} from {path}: compiling kernels for them (first run with this file)")


def _symlink_loop(exc: RuntimeError) -> str | None:
    """One line for pathlib's ``RuntimeError("Symlink loop from '...'")`` (``Path.resolve``
    before Python 3.13, which raises an ``OSError`` instead), naming the path; None for any
    other RuntimeError."""
    match = re.fullmatch(r"Symlink loop from (['\"])(.*)\1", str(exc), re.S)
    if match is None:
        return None
    return f"{match.group(2)}: a loop of symbolic links (too many levels of symbolic links)"


def _os_error(exc: OSError) -> str:
    """One line for an OSError: the file, then the system's reason."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason


if __name__ == "__main__":
    raise SystemExit(main())
