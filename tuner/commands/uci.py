"""``tuner uci --weights FILE``: play as a UCI engine on standard input and output."""

from __future__ import annotations

import argparse
import os
import sys

from tuner.commands import command_help
from tuner.errors import TunerError
from tuner.uci import serve


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "uci", help=command_help("uci"),
        description="Speak the UCI protocol on standard input/output, searching with the numba "
                    "alpha-beta (iterative deepening, transposition table for move ordering) and "
                    "evaluating with WEIGHTS. Options: Weights, Hash (MiB), MoveOverhead (ms), "
                    "Search (depth|pls: the probability-limited search), MoveModel, PlsStart, PlsModelAbove. While "
                    "the kernels compile (the first run after installing; 'tuner warmup' compiles "
                    "them ahead) a quick plain-Python search answers timed go commands.")
    p.add_argument("--weights", default="classic", metavar="FILE",
                   help="weights file (JSON or text view), or a built-in set: material, classic, gm, gm-sp "
                        "(default: classic)")
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
