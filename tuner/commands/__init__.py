"""Subcommands of the ``tuner`` command line, one module each, and the line ``tuner --help``
shows for each: kept here, light, so that ``tuner --help`` imports no command module (they
load numba, polars and the methods, which takes seconds) and only the command that runs is imported."""

from __future__ import annotations

#: command -> (module that defines it, its line in ``tuner --help``), in the order listed
COMMANDS: dict[str, tuple[str, str]] = {
    "perft": ("tuner.commands.perft", "count the leaves of the legal move tree of a position"),
    "eval": ("tuner.commands.eval", "static evaluation of a position, with its largest terms"),
    "ingest": ("tuner.commands.ingest", "turn PGN or position files into a position set (parquet + manifest)"),
    "selfplay": ("tuner.commands.selfplay", "play the engine against itself; keep every position with its search "
                                            "score, best move and result (a position set)"),
    "merge": ("tuner.commands.merge", "merge position sets into one (each row keeps its split; games renumbered; "
                                      "repeated positions dropped)"),
    "convert": ("tuner.commands.convert", "convert positions: a position set between Parquet and compact (40 bytes a "
                                          "position), .parquet <-> .mtpos, bullet text <-> .mtpos"),
    "tune": ("tuner.commands.tune", "learn weights from a position set ({methods})"),
    "export": ("tuner.commands.export", "write weights as JSON, a C header, packed S(mg, eg) tables, a Rust "
                                        "module or a text view; a network as a C header with its forward pass"),
    "uci": ("tuner.commands.uci", "play as a UCI engine (for GUIs and match runners)"),
    "bench": ("tuner.commands.bench", "measure weight sets: move-match, matches, EPD suites, plots of runs"),
    "moves": ("tuner.commands.moves", "the move-probability model: train it, predict with it, measure it"),
    "warmup": ("tuner.commands.warmup", "compile every numba kernel ahead (run once after installing or updating)"),
}


#: what a player spec may add to a weight set's name (:func:`tuner.arena.players.split_search`),
#: as the help of the commands that play says it
PLAYER_SUFFIXES_HELP = ("NAME@play, NAME@exact or NAME@pls: with that search; NAME@play-FEATURE,...: the playing "
                        "search without those features (docs/search.md)")


def builtins_help() -> str:
    """The built-in weight sets and networks (:data:`search.params.weights.BUILTIN_NAMES`), as a
    command's help lists them."""
    from search.params.weights import BUILTIN_NAMES  # noqa: PLC0415 - numpy, only for a command's parser

    return ", ".join(BUILTIN_NAMES)


def command_help(name: str) -> str:
    """The ``tuner --help`` line of command ``name`` (``tune``'s names the registered methods)."""
    text = COMMANDS[name][1]
    if "{methods}" in text:
        from tuner.methods.registry import method_names  # noqa: PLC0415

        text = text.format(methods=", ".join(method_names()))
    return text
