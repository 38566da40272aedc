"""``tuner merge SET SET... --out DIR``: several position sets as one (see :mod:`tuner.ingest.merge`)."""

from __future__ import annotations

import argparse
import sys

from tuner.commands import command_help
from tuner.cores import available_cores
from tuner.errors import one_line

DESCRIPTION = """\
Write the position sets SET... (folders written by tuner ingest or tuner selfplay) as one
position set in DIR, for a learner to train on all of them (e.g. every self-play generation).

Each row keeps the split its set gave it (training, validation, test), so a network trained on
one set is never validated on its own training games in the merged one. Game ids are shifted
per set so that games of different sets never share one. A (position, move) pair already kept
from an earlier row is dropped (--no-dedup keeps every row): the sets are read in the order
given, so list the one whose rows should win first. A row whose move is not legal in its
position (an edited or damaged set) is dropped, and the count printed.

--mirror also adds every training position that has no castling right mirrored file for file
(a to h, its move too): chess is symmetric then, so the mirror is a position of the same
value, score and result, and a learner sees about 1.8 times the training rows (self-play sets).
Validation and test are not mirrored.

DIR is written as tuner ingest writes it: a temporary folder renamed into place at the end, so
an interrupted merge leaves DIR as it was; a DIR holding other files is refused unless
--overwrite. Its manifest lists each input set with the SHA-256 of its manifest.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("merge", help=command_help("merge"), description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sets", nargs="+", metavar="SET", help="position-set folders, two or more (one with --mirror), "
                                                            "first wins a repeat")
    p.add_argument("--out", metavar="DIR", required=True, help="the merged position set's folder")
    p.add_argument("--overwrite", action="store_true",
                   help="write into a DIR that holds other files too: only the position set's files are replaced")
    p.add_argument("--dedup", action=argparse.BooleanOptionalAction, default=True,
                   help="drop a (position, move) pair kept from an earlier row (default: on)")
    p.add_argument("--mirror", action="store_true",
                   help="also add each training position without castling rights mirrored a<->h (a position of "
                        "the same value: about 1.8 times the training rows); one SET is then enough")
    p.add_argument("--format", choices=("parquet", "compact"), default="parquet",
                   help="the position set's split files: parquet (train.parquet ..., every column) or compact "
                        "(train.mtpos ..., 40 bytes a position: no ratings, tags or source; tuner convert turns one "
                        "into the other) (default: parquet)")
    p.add_argument("--workers", type=int, metavar="N",
                   help=f"processes that read the positions (the output does not depend on it; default: the cores "
                        f"available, here {available_cores()})")
    p.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                   help="no progress bar on a terminal, no progress lines in a log")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tuner.ingest.merge import merge_sets  # noqa: PLC0415 - polars: only when the command runs

    manifest = merge_sets(args.sets, args.out, dedup=args.dedup, overwrite=args.overwrite, mirror=args.mirror,
                          progress=args.progress, split_format=args.format,
                          workers=args.workers)
    pos, splits = manifest["positions"], manifest["splits"]
    print(one_line(f"merge: {len(manifest['inputs'])} sets, {pos['read']} positions read, {pos['kept']} kept "
                   f"({pos['dropped_by_reason']['duplicate']} repeated, "
                   f"{pos['dropped_by_reason'].get('illegal_move', 0)} with an illegal move dropped); train {splits['train']['positions']} "
                   f"({splits['train']['games']} games), validation {splits['validation']['positions']} "
                   f"({splits['validation']['games']}), test {splits['test']['positions']} ({splits['test']['games']}); "
                   f"wrote {args.out} in {manifest['elapsed_seconds']:.1f} s"), file=sys.stdout)
    return 0
