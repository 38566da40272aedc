"""``tuner selfplay [WEIGHTS] --out DIR``: the engine plays itself; every searched position is
kept with its score, best move and the game's result (see :mod:`tuner.selfplay`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.commands import PLAYER_SUFFIXES_HELP, builtins_help, command_help
from tuner.config import add_arguments, from_namespace, load_toml
from tuner.errors import TunerError, one_line
from tuner.outputs import check_output

if TYPE_CHECKING:
    from tuner.arena.engines import EngineSpec
    from tuner.arena.players import Searchable

DESCRIPTION = """\
Play games of the engine against itself and write every position it searched to DIR as a
position set (train/validation/test.parquet + manifest.json, split by game, as tuner ingest
writes them): the FEN, the move the search chose, its score (centipawns; stored in White's
view) and the game's result. tuner tune --data DIR trains on it (texel fits the scores and
results, --lam sets the mix).

Each game starts from an opening of --openings (default: the shipped 330) plus --random-plies
seeded random plies, drawn again while the engine scores the start beyond --start-margin.
Each side searches --nodes per move (default 5,000) or to --depth. A game ends by the rules,
by resignation (both sides beyond --resign-cp for --resign-moves moves each), by a draw
adjudication (both within --draw-cp for --draw-moves moves each after --draw-after plies), or
at --max-plies. Games run one per worker process (one per core), or one per task of a Dask
cluster with --executor dask (--scheduler tcp://HOST:8786, or a LocalCluster of --workers
processes; docs/dask.md); the games and files are the same for a seed whatever the executor
and --workers.

Finished games are saved as they come (DIR/games/): after Ctrl-C or a kill, --resume goes on
with the games still missing, with the settings DIR was started with (give the player again; --games
may grow, and --workers, --executor and --scheduler may change). --export FILE (a new file, never an
input: --overwrite is for DIR only) writes the set as
'FEN | score | result' lines (bullet's format, White's view) or, for a .epd file, EPD with
bm, ce (side to move's view) and c9; tuner ingest reads both back.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tuner.commands.arguments import add_search_arguments  # noqa: PLC0415
    from tuner.commands.bench_compare import add_engine_arguments  # noqa: PLC0415
    from tuner.selfplay import SelfplayConfig  # noqa: PLC0415

    p = sub.add_parser("selfplay", help=command_help("selfplay"), description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("weights", nargs="?", metavar="WEIGHTS",
                   help=f"weights file, network file or built-in set ({builtins_help()}); {PLAYER_SUFFIXES_HELP}; "
                        "or give --engine instead")
    p.add_argument("--out", required=True, metavar="DIR", help="the self-play folder (games, then the position set)")
    p.add_argument("--resume", action="store_true", help="go on with the games of DIR, with the settings it was "
                                                         "started with (the same player; --games may grow; --workers, "
                                                         "--executor and --scheduler may change)")
    p.add_argument("--overwrite", action="store_true", help="clear DIR (a self-play folder) and start anew (not with "
                                                            "--resume)")
    p.add_argument("--format", choices=("parquet", "compact"), default="parquet",
                   help="the position set's split files: parquet (train.parquet ..., every column) or compact "
                        "(train.mtpos ..., 40 bytes a position: no ratings, tags or source; tuner convert turns one "
                        "into the other) (default: parquet)")
    p.add_argument("--export", metavar="FILE", help="also write the positions to FILE (a new file): .epd as EPD, "
                                                    "else 'FEN | score | result' lines")
    p.add_argument("--export-format", choices=("bullet", "epd"), help="the format of --export (default: by suffix)")
    p.add_argument("--config", metavar="TOML", help="read the settings below from the [selfplay] table of a TOML "
                                                    "file (options given here override it)")
    p.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                   help="no progress bar on a terminal, no progress lines in a log")
    add_engine_arguments(p)
    add_search_arguments(p)
    add_arguments(p, SelfplayConfig)
    p.set_defaults(func=run)


def _player(args: argparse.Namespace) -> tuple[Searchable | EngineSpec, str, str | None]:
    """(player, its name, the SHA-256 of its file: a built-in set's too; None for an engine)."""
    from search.params.weights import BUILTIN_SETS, builtin_network, resolve  # noqa: PLC0415
    from tuner.arena.engines import engine_specs  # noqa: PLC0415
    from tuner.arena.players import split_search  # noqa: PLC0415
    from tuner.commands.arguments import load_players  # noqa: PLC0415
    from tuner.selfplay.run import file_sha256  # noqa: PLC0415

    try:
        engines = engine_specs(args.engine, args.engine_options, args.engine_protocol)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    if (args.weights is None) == (not engines) or len(engines) > 1:
        raise TunerError("self-play needs one player: WEIGHTS or one --engine")
    if engines:
        return engines[0], engines[0].name, None
    name, kind = split_search(args.weights, args.search)
    label, player = load_players([args.weights], args.search, args.move_model, args.pls_model_above,
                                   args.pls_leaf_model)[0]
    # the set names its search: gm@play, gm@pls, and gm alone for the exact search (every set made
    # before issue 57 searched with it and recorded that name: they resume with --search exact)
    if kind == "play":
        label = f"{label}@play"
    elif kind == "exact":
        label = label.removesuffix("@exact")
    path = builtin_network(name) or resolve(name)
    if not path.exists() and name not in BUILTIN_SETS:
        path = path / "weights.json"  # a run folder
    return player, label, file_sha256(path) if path.is_file() else None


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (resolved: links and ``..`` followed)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _check_export(args: argparse.Namespace, openings: str) -> None:
    """Refuse an ``--export`` that names an input of the command (the player's file, the
    openings, the settings TOML, a move model), the self-play folder or a file in it, or any
    existing file: ``--overwrite`` is for the folder, never for the export."""
    from search.params.weights import builtin_network, resolve  # noqa: PLC0415
    from tuner.arena.players import split_search  # noqa: PLC0415

    name = split_search(args.weights, args.search)[0] if args.weights else None
    inputs = [openings, args.config, args.move_model, args.pls_leaf_model]
    if name is not None:
        inputs += [args.weights, name, resolve(name), builtin_network(name), Path(name) / "weights.json"]
    check_output(args.export, overwrite=True, inputs=inputs, flag="--export")
    if _within(Path(args.export), Path(args.out)):
        raise TunerError(f"{args.export}: --export names the self-play folder {args.out} or a file in it (which "
                         "--overwrite clears); write it elsewhere")
    if Path(args.export).exists() or Path(args.export).is_symlink():
        raise TunerError(f"{args.export}: exists; --overwrite is for the self-play folder, not the export: remove "
                         "the file or choose another --export")


def run(args: argparse.Namespace) -> int:
    from tuner.arena.match import DEFAULT_OPENINGS, load_openings  # noqa: PLC0415
    from tuner.selfplay import SelfplayConfig, export_positions, selfplay  # noqa: PLC0415
    from tuner.selfplay.run import file_sha256, resumed_config  # noqa: PLC0415

    base: SelfplayConfig | None
    if args.config:
        base = load_toml(SelfplayConfig, args.config, "selfplay")
    else:  # a resumed run starts from its own settings: --resume --games N needs no other option
        base = resumed_config(args.out) if args.resume else None
    config = from_namespace(SelfplayConfig, args, base)
    if args.export is not None:  # before hours of games
        _check_export(args, config.openings or str(DEFAULT_OPENINGS))
    player, name, sha = _player(args)
    openings_path = config.openings or str(DEFAULT_OPENINGS)
    try:
        openings = load_openings(openings_path)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    openings_name = f"{Path(openings_path).name} {file_sha256(Path(openings_path))[:16]}"
    manifest = selfplay(player, name, sha, args.out, config, openings, openings_name,
                        resume=args.resume, overwrite=args.overwrite, progress=args.progress,
                        split_format=args.format)
    sp = manifest["selfplay"]
    res = sp["results"]
    rate = f", {sp['positions_per_s']:.0f} positions/s" if sp.get("positions_per_s") else ""
    print(one_line(f"selfplay: {manifest['games']['kept']} games (W/D/L {res['1-0']}/{res['1/2-1/2']}/{res['0-1']} "
                   f"from White's view), {manifest['positions']['kept']} positions ({sp['games_played_now']} games "
                   f"played now{rate}); wrote {args.out}"))
    if args.export is not None:
        lines = export_positions(args.out, args.export, fmt=args.export_format, progress=args.progress)
        print(one_line(f"selfplay: exported {lines} positions to {args.export}"), file=sys.stderr)
    return 0
