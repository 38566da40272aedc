"""``tuner export WEIGHTS --format json|c|rust|text [--out FILE]``: weights for other engines."""

from __future__ import annotations

import argparse
import sys

from search.weights import atomic_write_text, load_weights
from tuner.errors import TunerError
from tuner.export import FORMATS, export


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export", help="write weights as JSON, a C header, a Rust module or a text view",
        description="Export WEIGHTS as the evaluator's JSON, a C header or a Rust module with named "
                    "arrays (piece values, middle/end-game piece-square tables in a1..h8 order, every "
                    "other term), or a text view with 8x8 tables that 'tuner export' reads back. Each "
                    "export states the feature catalogue hash and the tapering formula.")
    p.add_argument("weights", metavar="WEIGHTS",
                   help="weights file (JSON or a text view), or a built-in set: material, classic, gm")
    p.add_argument("--format", choices=FORMATS, default="json", help="output format (default: json)")
    p.add_argument("--out", metavar="FILE", default=None, help="write to FILE (default: standard output)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        text = export(load_weights(args.weights), args.format)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    if args.out is None or args.out == "-":
        sys.stdout.write(text)
    else:
        atomic_write_text(args.out, text)
    return 0
