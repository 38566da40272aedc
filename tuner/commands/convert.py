"""``tuner convert IN OUT``: positions from one storage to another (see :mod:`tuner.ingest.convert`)."""

from __future__ import annotations

import argparse
import json
import sys

from tuner.commands import command_help
from tuner.errors import one_line

DESCRIPTION = """\
Convert positions between the ways movetuner stores them:

  a position set (folder)  ->  the same set with its splits in the other format: Parquet
                               (train.parquet ...) or compact (train.mtpos ..., 40 bytes a
                               position; --to parquet|compact chooses), or a bullet .txt file
  a .parquet split file   <->  a compact .mtpos file
  a bullet .txt file      <->  a compact .mtpos file ('FEN | score | result', White's view)

Every method reads a compact set as it reads a Parquet one. A compact record keeps the game,
ply, FEN, move, score (centipawns to +-31000, mates to 999 moves) and result; the ratings,
tags and source of a row are not kept (they come back null), and n_legal and zobrist are
computed again. Nothing is clamped: a row that does not fit is refused, naming it.

Bullet text has no move, ply or game: a line is its own game, its ply from the FEN's counters.
Rows without a score or with an unfinished game's result (*) are not written as text (the
count is printed). OUT is written to a temporary name and renamed; an existing OUT is
replaced only with --overwrite.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("convert", help=command_help("convert"), description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="IN", help="a position-set folder, a .parquet split, a .mtpos file or bullet text")
    p.add_argument("output", metavar="OUT", help="the folder or file to write (its kind from its suffix: .mtpos, "
                                                 ".parquet, .txt; else a position-set folder)")
    p.add_argument("--to", choices=("parquet", "compact", "bullet"), default=None,
                   help="the output's format (default: from OUT's suffix; a set converts to the other format)")
    p.add_argument("--overwrite", action="store_true", help="replace OUT if it exists (never IN)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tuner.ingest.convert import convert  # noqa: PLC0415 - polars and numba: only when the command runs

    summary = convert(args.input, args.output, to=args.to, overwrite=args.overwrite)
    if args.json:
        print(json.dumps(summary), file=sys.stdout)
        return 0
    skipped = f" ({summary['skipped']} without a score or a finished game's result skipped)" if summary["skipped"] else ""
    print(one_line(f"convert: {summary['positions']} positions, {summary['from']} -> {summary['to']}{skipped}; wrote "
                   f"{summary['out']} ({summary['bytes']:,} bytes) in {summary['seconds']:.1f} s"), file=sys.stdout)
    return 0
