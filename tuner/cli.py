"""The ``tuner`` command line: one thin subcommand per library entry point.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``func`` (a callable taking the parsed namespace and returning an exit code). Errors meant for
the user (:class:`tuner.errors.TunerError`, a missing file) are printed as one line; Ctrl-C
exits with 130 after the command has saved what it had.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from tuner import __version__
from tuner.errors import TunerError

#: Modules that define subcommands, in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "tuner.commands.perft",
    "tuner.commands.eval",
    "tuner.commands.ingest",
    "tuner.commands.tune",
    "tuner.commands.export",
    "tuner.commands.uci",
    "tuner.commands.bench",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tuner",
        description="Learn chess evaluation weights from grandmaster moves.",
    )
    parser.add_argument("--version", action="version", version=f"movetuner {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except TunerError as exc:
        print(f"tuner {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        where = exc.filename if exc.filename else ""
        print(f"tuner {args.command}: error: {where}: {exc.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tuner {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
