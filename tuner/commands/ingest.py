"""``tuner ingest FILE... --out DIR``: grandmaster games (PGN) or position files (EPD/FEN lines)
to a position set (see :mod:`tuner.ingest`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tuner.commands import command_help
import tuner
from tuner.config import add_arguments, from_namespace, load_toml
from tuner.errors import TunerError, one_line
from tuner.ingest import IngestConfig, ingest
from tuner.cores import available_cores

REPO = Path(tuner.__file__).resolve().parents[1]
SAMPLE_DIR = REPO / "datasets" / "sample"
SAMPLE_OUT = REPO / "datasets" / "built" / "sample"

DESCRIPTION = """\
Read PGN files or position files (plain, .gz, .bz2 or .zst; LF or CRLF; UTF-8, Latin-1, or
UTF-16 with a byte-order mark) and write a position set to DIR:
train.parquet, validation.parquet and test.parquet (one row per position and the move
played in it, split by game) and manifest.json (inputs with sizes and SHA-256, the settings,
games and lines read/kept/rejected per reason, positions per split and dropped per filter).

Position files hold one position per line, told from PGN by their first lines (or by the
suffix .epd, .fen, .txt or .book): "FEN [1.0]" / "[0.5]" / "[0.0]" or "[1-0]" / "[1/2-1/2]" /
"[0-1]" (texel-tuner style; a number after the bracket is a search score, side to move's
view), EPD with operations ("FEN c9 \"1-0\";", "ce 35;" a score, "pm"/"sm"/"bm" a move in SAN or
UCI), or "FEN | score | result" (bullet: score and result from White's view). Results are
White's view unless --results-view mover. Such a set has no played moves unless the lines name
them: Texel trains on it, move-based methods refuse it. Its positions are split by their
Zobrist key; bad lines (bad FEN, impossible position, bad result, illegal move...) are skipped
and counted by reason like bad games.

Games with problems (illegal, ambiguous or unreadable moves, no result, a truncated end, a
malformed tag, a variant or non-standard start) are skipped and counted by reason; the first
few are reported as file:line: reason. Bytes that are not UTF-8 are read as Latin-1 (see
--non-utf8). A compressed file cut short is read up to the break (reported as corrupt_stream).
An input that is empty, binary or yields no game (or no valid position) at all is an error, and
so is a run that keeps no position (every game rejected or filtered out): DIR is left as it
was. A corrupt stretch inside a PGN file only costs the game it falls in.

The output is written to a temporary folder beside DIR and renamed into place at the end, so
an interrupted run leaves DIR as it was (a killed run's temporary folder is removed by the next
run into DIR). A DIR that is not empty (a position set already, or other files) is refused
unless --overwrite is given (--sample without --out rebuilds its set in the repository). The files are byte-for-byte the same for the same inputs and
settings, whatever --workers.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ingest", help=command_help("ingest"),
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pgn", nargs="*", metavar="FILE", help="PGN or position files, read in the order given")
    p.add_argument("--out", metavar="DIR",
                   help=f"output folder (with --sample, default: {SAMPLE_OUT.relative_to(REPO)} in the repository)")
    p.add_argument("--overwrite", action="store_true",
                   help="write into a DIR that is not empty (a position set already, or other files too): only "
                        "the position set's files (its split files, .parquet or .mtpos, and manifest.json) are "
                        "replaced, the others are kept")
    p.add_argument("--format", choices=("parquet", "compact"), default="parquet",
                   help="the position set's split files: parquet (train.parquet ..., every column) or compact "
                        "(train.mtpos ..., 40 bytes a position: no ratings, tags or source; tuner convert turns one "
                        "into the other) (default: parquet)")
    p.add_argument("--sample", action="store_true",
                   help=f"ingest the sample games shipped in {SAMPLE_DIR.relative_to(REPO)}/")
    p.add_argument("--workers", type=int, metavar="N",
                   help=f"parser processes (default: the cores available, here {available_cores()})")
    p.add_argument("--config", metavar="TOML", help="read the settings below from the [ingest] table of a TOML "
                                                    "file (options given here override it)")
    p.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                   help="no progress bar on a terminal, no progress lines in a log")
    add_arguments(p, IngestConfig)
    p.set_defaults(func=run)


def sample_files() -> list[Path]:
    """The shipped sample PGN files (a source checkout is needed: the package is installed
    editable)."""
    files = sorted(SAMPLE_DIR.glob("*.pgn")) if SAMPLE_DIR.is_dir() else []
    if not files:
        raise TunerError(f"{SAMPLE_DIR}: sample PGN not found (--sample needs the repository checkout, "
                         "installed with pip install -e .)")
    return files


def run(args: argparse.Namespace) -> int:
    base = load_toml(IngestConfig, args.config, table="ingest") if args.config else None
    config = from_namespace(IngestConfig, args, base)
    if args.sample:
        if args.pgn:
            raise TunerError("give input files or --sample, not both")
        paths: list[str | Path] = list(sample_files())
        out = Path(args.out) if args.out else SAMPLE_OUT
        # the sample set in the repository is built from its shipped games: always rebuilt
        args.overwrite = args.overwrite or not args.out
    else:
        if not args.pgn:
            raise TunerError("no input files given (or use --sample)")
        if not args.out:
            raise TunerError("--out DIR is required")
        paths, out = list(args.pgn), Path(args.out)
    manifest = ingest(paths, out, config, workers=args.workers, progress=args.progress, overwrite=args.overwrite,
                      split_format=args.format)
    games, pos = manifest["games"], manifest["positions"]
    reasons = ", ".join(f"{k} {v}" for k, v in games["rejected_by_reason"].items()) or "none"
    if games["read"] or not manifest["lines"]["read"]:
        print(f"games: {games['read']} read, {games['kept']} kept, {games['rejected']} rejected ({reasons})")
    lines = manifest["lines"]
    if lines["read"]:
        why = ", ".join(f"{k} {v}" for k, v in lines["rejected_by_reason"].items()) or "none"
        print(f"lines: {lines['read']} read, {lines['kept']} kept, {lines['rejected']} rejected ({why})")
    print(f"positions: {pos['kept']} kept (train {pos['train']}, validation {pos['validation']}, "
          f"test {pos['test']}); dropped: "
          + ", ".join(f"{k} {v}" for k, v in pos["dropped_by_reason"].items()))
    if manifest["problems"]["count"]:
        print(f"problems: {manifest['problems']['count']} ("
              + ", ".join(f"{k} {v}" for k, v in manifest["problems"]["by_reason"].items()) + ")")
    print(one_line(f"wrote {out} in {manifest['elapsed_seconds']:.1f} s"))
    return 0
