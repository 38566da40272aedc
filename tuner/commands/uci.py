"""``tuner uci --weights FILE``: play as a UCI engine on standard input and output."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

from tuner.commands import builtins_help, command_help
from tuner.errors import TunerError
from tuner.uci import OPTIONS, serve


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    options = "\n".join(textwrap.fill(o.doc, 78, initial_indent=f"  {o.name:<15}", subsequent_indent=" " * 17)
                        for o in OPTIONS)
    p = sub.add_parser(
        "uci", help=command_help("uci"),
        description=textwrap.fill(
            "Speak the UCI protocol on standard input/output: evaluate with WEIGHTS and search with the "
            "playing search (selective alpha-beta: docs/search.md), or with the option Search, the exact "
            "one training uses or the probability-limited one. While the kernels compile (the first run "
            "after installing; 'tuner warmup' compiles them ahead) a quick plain-Python search answers "
            "timed go commands.", 78),
        epilog=f"UCI options (setoption name NAME value V):\n{options}",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weights", default="nnue", metavar="FILE",
                   help=f"weights file (JSON or text view), network file (.mtnn) or a built-in set: {builtins_help()} "
                        "(default: nnue, the strongest built-in)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        compiling = serve(args.weights)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    if compiling:  # quit while kernels compile: end now rather than wait for numba
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
