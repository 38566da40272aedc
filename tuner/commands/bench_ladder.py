"""``tuner bench ladder PLAYER --ladder FILE --openings FILE (--tc BASE+INC | --depth | --nodes |
--movetime) --games N``: a gauntlet of a weight set against rated engines, its rating on their
published scale (:mod:`tuner.arena.ladder`). :func:`register` adds the subcommand to the
``tuner bench`` subparsers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from tuner.commands import PLAYER_SUFFIXES_HELP, builtins_help
from tuner.commands.arguments import add_search_arguments, load_players
from tuner.config import add_arguments, from_namespace
from tuner.errors import TunerError, one_line
from tuner.outputs import add_overwrite_argument, check_output

LADDER_EPILOG = """\
ladder file (TOML): one [[engine]] table per opponent with name, command, protocol (uci or
xboard), options (a table), rating (its published rating, or "to verify": listed, never played)
and source (list, version, time control), and optionally package (the Debian package). The
shipped datasets/ladder/debian.toml lists engines Debian packages; install them first, e.g.
  apt-get install stockfish phalanx sjeng hoichess gnuchess glaurung toga2
games: every rated opponent plays --games games (each opening twice, colours swapped) from
--openings (build the large suite with 'tuner bench openings'; see docs/strength.md) and --seed,
under the match's limit; no SPRT. An engine that crashes, hangs beyond --engine-timeout or
answers an illegal move loses that game (termination "forfeit: ...") and is restarted; one
that cannot start at all stops the ladder before any game, naming its package.
rating: maximum likelihood on the logistic Elo curve with every opponent fixed at its
published rating; 95% interval from the sandwich variance over game pairs (tuner/arena/ratings.py,
fit_gauntlet). A player that scored every point (or none) is rated +inf (-inf), no interval.
output: --pgn (default results/ladder-PLAYER.pgn, or -2, -3, ...) written game pair by game pair;
--plot (default the PGN's name with .png): the score against each opponent at its rating, with
the curve of the fitted rating. Every 30 s a running line on stderr.
"""


def register(bench_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tuner.arena.match import MatchConfig  # noqa: PLC0415

    p = bench_sub.add_parser(
        "ladder", help="a gauntlet against rated engines: a rating on their published scale",
        description="Play weight set PLAYER against every rated engine of a ladder file, the same number "
                    "of games each, and fit its rating on the engines' published scale by maximum likelihood, "
                    "with a 95% interval; write the games as PGN and a PNG of the score against each opponent.",
        epilog=LADDER_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("player", metavar="PLAYER", help=f"weights file, network file or built-in set ({builtins_help()}); "
                                                        f"{PLAYER_SUFFIXES_HELP}")
    p.add_argument("--ladder", required=True, metavar="FILE", help="the ladder file (TOML), e.g. "
                                                                    "datasets/ladder/debian.toml")
    add_search_arguments(p)
    add_arguments(p, MatchConfig, exclude=("out", "forfeit"))
    p.add_argument("--pgn", metavar="PGN", default=None, help="PGN file for the games")
    p.add_argument("--plot", metavar="PNG", default=None, help="PNG file of the scores")
    p.add_argument("--only", metavar="NAMES", default=None,
                   help="play only these opponents of the file (names, comma-separated)")
    p.add_argument("--chosen-by", metavar="JSON", default=None,
                   help="the JSON summary of the match that chose PLAYER: refused when this ladder would reuse its "
                        "openings file and seed (docs/strength.md)")
    add_overwrite_argument(p, "the --pgn and --plot files")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.set_defaults(func=run_ladder_command)


def _outputs(args: argparse.Namespace, player: str) -> tuple[Path, Path]:
    from tuner.arena.match import player_stem  # noqa: PLC0415

    if args.pgn is not None:
        pgn = Path(args.pgn)
    else:
        stem = f"ladder-{player_stem(player)}"
        pgn, k = Path("results") / f"{stem}.pgn", 2
        while not args.overwrite and (pgn.exists() or pgn.with_suffix(".png").exists()):
            pgn, k = Path("results") / f"{stem}-{k}.pgn", k + 1
    plot = Path(args.plot) if args.plot is not None else pgn.with_suffix(".png")
    return pgn, plot


# long: checks every input before any game (ladder, openings, outputs, engines starting), then plays and reports
def run_ladder_command(args: argparse.Namespace) -> int:
    from tuner.arena.engines import EngineFailure, ExternalEngine  # noqa: PLC0415
    from tuner.arena.ladder import ladder_summary, load_ladder, play_ladder, plot_ladder, running_line  # noqa: PLC0415
    from tuner.arena.match import (DEFAULT_OPENINGS, MatchConfig, PgnWriter, check_confirmation,  # noqa: PLC0415
                                   describe_limit, load_openings, openings_record, pgn_time_control)
    from tuner.progress import RunningLog  # noqa: PLC0415

    config = from_namespace(MatchConfig, args)
    try:
        config.validate()
        rungs = load_ladder(args.ladder)
        if args.only is not None:
            wanted = [x.strip() for x in args.only.split(",") if x.strip()]
            missing = [x for x in wanted if x not in {r.name for r in rungs}]
            if missing:
                raise ValueError(f"--only {missing[0]!r}: no such opponent in {args.ladder}")
            rungs = [r for r in rungs if r.name in wanted]
        skipped = [r.name for r in rungs if r.rating is None]
        rungs = [r for r in rungs if r.rating is not None]
        if not rungs:
            raise ValueError(f"{args.ladder}: no opponent with a published rating (all 'to verify')")
        openings_path = config.openings or DEFAULT_OPENINGS
        openings = load_openings(openings_path)
        record = openings_record(openings_path, config.seed)
        if args.chosen_by is not None:
            check_confirmation(args.chosen_by, record)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    (label, player), = load_players([args.player], args.search, args.move_model, args.pls_model_above,
                                    args.pls_leaf_model)
    pgn_path, plot_path = _outputs(args, label)
    for out in (pgn_path, plot_path):
        check_output(out, overwrite=args.overwrite, inputs=(args.ladder, openings_path), flag="--pgn/--plot")
    for rung in rungs:  # every engine must start before any game: a missing one is a set-up error
        try:
            ExternalEngine(rung.spec, timeout=config.engine_timeout).close()
        except EngineFailure as exc:
            hint = f"; install the Debian package {rung.package}" if rung.package else ""
            raise TunerError(f"{args.ladder}: {exc}{hint}") from None
    for name in skipped:
        print(one_line(f"note: {name}: rating to verify, not played"), file=sys.stderr)
    if config.openings is None:
        print("note: the shipped quick openings; ratings to report use the large suite (docs/strength.md)",
              file=sys.stderr)
    limit = describe_limit(config)
    results: list[list[Any]] = []
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        writers = [stack.enter_context(PgnWriter(pgn_path, {"A": label, "B": r.name},
                                                 f"movetuner ladder {label} vs {r.name}, {limit}",
                                                 time_control=pgn_time_control(config.tc),
                                                 overwrite=args.overwrite, append=k > 0))
                   for k, r in enumerate(rungs)]

        def on_pair(k: int, index: int, pair: Any) -> None:
            while len(results) <= k:
                results.append([])
            writers[k].add_pair(index, pair)
            results[k].append(pair)

        stack.enter_context(RunningLog(lambda: running_line(rungs, [list(r) for r in results], config.games,
                                                            time.perf_counter() - start)))
        try:
            played = play_ladder(player, rungs, openings, config, on_pair=on_pair)
        except OSError as exc:
            if exc.filename is None or Path(exc.filename) != pgn_path:
                raise
            raise TunerError(f"{pgn_path}: cannot write the PGN ({exc.strerror or exc})") from None
    seconds = time.perf_counter() - start
    summary = ladder_summary(rungs, played)
    plot_ladder(summary, plot_path, f"{label} on {Path(args.ladder).name}: {config.games} games per opponent, "
                                    f"{limit}, rating {summary['elo']} {summary['elo_ci95']}")
    doc = {"player": label, "ladder": str(args.ladder), "limit": limit, "games_per_opponent": config.games,
           **record, **summary, "skipped": skipped, "pgn": str(pgn_path), "plot": str(plot_path),
           "seconds": round(seconds, 1)}
    if args.json:
        print(json.dumps(doc))
        return 0
    print(one_line(f"{label} on {args.ladder}: {config.games} games per opponent, {limit}, {seconds:.1f} s"))
    print(one_line(f"openings {record['openings']} (sha256 {str(record['openings_sha256'])[:12]}), seed {record['seed']}"))
    for o in summary["opponents"]:
        print(one_line(f"  {o['name']} ({o['rating']:.0f}): W/D/L {o['wins']}/{o['draws']}/{o['losses']}, score "
                       f"{100 * o['score']:.1f}% [{100 * o['score_ci95'][0]:.1f}, {100 * o['score_ci95'][1]:.1f}], "
                       f"performance {o['performance']}"))
    interval = summary["elo_ci95"]
    print(f"rating {summary['elo']}" + (f" (95% interval {interval[0]:.0f} .. {interval[1]:.0f})" if interval else ""))
    print(one_line(f"PGN written to {pgn_path}, plot to {plot_path}"))
    return 0
