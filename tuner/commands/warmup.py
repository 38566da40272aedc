"""``tuner warmup``: compile every numba kernel ahead (once after installing or updating)."""

from __future__ import annotations

import argparse

from tuner.commands import command_help
from tuner.errors import TunerError
from tuner.warmup import STEPS, warm_up


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "warmup", help=command_help("warmup"),
        description="Compile the numba kernels of every command into numba's cache by running each on "
                    "small inputs in a temporary folder: search (tuner uci, bench match, bench epd), "
                    "ingest (the sample games), tune (one iteration of every method). On a fresh "
                    "install this takes a few minutes; afterwards it takes seconds, and no command "
                    "waits for numba to compile (tuner uci's readyok waits only for loading them from the cache, "
                    "under a second).")
    p.add_argument("--steps", default=",".join(STEPS), metavar="LIST",
                   help=f"comma-separated steps to run (default: {','.join(STEPS)})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    steps = tuple(s.strip() for s in args.steps.split(",") if s.strip())
    try:
        warm_up(steps, log=lambda line: print(f"warmup: {line}", flush=True))
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    return 0
