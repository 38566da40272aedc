"""The command line: version, help, perft, and one-line errors."""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tuner.cli import main


def test_version(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exc:  # argparse's version action exits
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"movetuner {importlib.metadata.version('movetuner')}\n"


def test_perft_command_prints_node_count(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["perft", "startpos", "3"]) == 0
    assert "nodes 8902" in capsys.readouterr().out


def test_perft_divide_lists_root_moves(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["perft", "startpos", "2", "--divide"]) == 0
    out = capsys.readouterr().out
    assert "e2e4: 20" in out and "nodes 400" in out


def test_bad_fen_is_one_line_error_without_traceback() -> None:
    proc = subprocess.run([sys.executable, "-m", "tuner", "perft", "8/8/8 w - - 0 1", "2"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "invalid FEN" in proc.stderr and "Traceback" not in proc.stderr


HEAVY = ("numpy", "numba", "polars", "scipy", "chess", "tqdm", "tuner.commands.tune", "tuner.methods.mmto")


def _modules_after(argv: list[str]) -> list[str]:
    """The heavy modules a fresh interpreter holds after ``main(argv)`` exits (argparse exits)."""
    code = ("import sys\nfrom tuner.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return eval(proc.stdout.strip().splitlines()[-1])  # a list of names printed by the line above


def test_help_imports_no_command_module() -> None:
    """Issue 28: ``tuner --help`` took 1.0-2.4 s building every command's parser (numba, polars,
    the methods); now it lists the commands from :mod:`tuner.commands` and imports none of them
    (0.2-0.3 s on a loaded 2-core machine, most of it Python's start)."""
    assert _modules_after(["--help"]) == []
    assert _modules_after([]) == []  # no command: the same help, exit code 2


def test_a_command_help_imports_that_command_only() -> None:
    loaded = _modules_after(["export", "--help"])
    assert "tuner.commands.tune" not in loaded and "numba" not in loaded


def test_help_lines_come_from_the_commands_table(capsys: pytest.CaptureFixture[str]) -> None:
    """The light table and the command modules give the same lines (each module's register
    takes its help from the table)."""
    from tuner.cli import build_parser
    from tuner.commands import COMMANDS

    with pytest.raises(SystemExit):
        main(["--help"])
    light = capsys.readouterr().out
    full = build_parser().format_help()
    assert light == full
    assert all(name in light for name in COMMANDS)
    assert "tune      learn weights from a position set (mmto, ga, texel," in light


@pytest.mark.parametrize("code", ["0", "'bye'"])
def test_a_terms_plugin_calling_sys_exit_at_import_is_an_error(tmp_path, code: str) -> None:  # type: ignore[no-untyped-def]
    """issue 58 item 17: a --terms plug-in calling sys.exit(0) at import made tuner exit 0, silently."""
    plugin = tmp_path / "leaving.py"
    plugin.write_text(f"import sys\nsys.exit({code})\n")
    proc = subprocess.run([sys.executable, "-m", "tuner", "--terms", str(plugin), "eval", "startpos"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and f"{plugin}: importing the plug-in failed: it called sys.exit(" in proc.stderr


@pytest.mark.parametrize("argv", [
    ["tune", "--method", "texel", "--data", "{loop}", "--out", "{tmp}/run"],
    ["tune", "--method", "texel", "--data", "{tmp}", "--out", "{loop}"],
    ["merge", "{loop}", "{tmp}", "--out", "{tmp}/merged"],
], ids=["tune-data", "tune-out", "merge-input"])
def test_a_symlink_loop_as_a_path_is_one_line(argv: list[str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # issue 58 item 6: pathlib's resolve() raised RuntimeError("Symlink loop from ...")
    loop = tmp_path / "a"
    loop.symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(loop)
    code = main([a.format(loop=loop, tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.endswith(f"error: {loop}: a loop of symbolic links (too many levels of symbolic links)")


def test_another_runtime_error_is_not_taken_for_a_symlink_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    import tuner.commands.perft as perft  # noqa: PLC0415

    def boom(args: object) -> int:
        raise RuntimeError("Symlink loop from nowhere, a bug")

    monkeypatch.setattr(perft, "run", boom)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["perft", "startpos", "1"])


def _help_texts(parser: argparse.ArgumentParser, prog: str = "tuner") -> Iterator[tuple[str, str]]:
    """(where, text) of every description, epilog and argument help of ``parser`` and its
    subcommands, recursively."""
    for where, text in ((prog, parser.description), (f"{prog} epilog", parser.epilog)):
        if text:
            yield where, " ".join(text.split())
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _help_texts(sub, f"{prog} {name}")
        elif action.help and action.help != argparse.SUPPRESS:
            yield f"{prog} {'/'.join(action.option_strings) or action.dest}", " ".join(action.help.split())


def test_every_help_that_lists_built_in_sets_lists_them_all_and_names_every_search() -> None:
    """Wave five ("commands keeping their word"): ``tuner uci --help`` described the exact search
    as the one it plays with, and listed the built-in sets without the networks; ``bench match``,
    ``export``, ``eval`` and ``compare`` each listed another subset. The lists now come from
    :data:`search.params.weights.BUILTIN_NAMES`, and a help that names one player suffix names
    them all."""
    from search.params.weights import BUILTIN_NAMES
    from tuner.arena.players import SEARCHES
    from tuner.cli import build_parser

    texts = list(_help_texts(build_parser()))
    assert len(texts) > 300
    listing = [(where, text) for where, text in texts if "gm-sp" in text or "gm-nn" in text]
    assert len(listing) >= 10
    for where, text in listing:
        missing = [name for name in BUILTIN_NAMES if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)]
        assert not missing, f"{where}: lists built-in sets without {missing}: {text}"
    suffixes = [(where, text) for where, text in texts if "NAME@" in text]
    assert len(suffixes) >= 5
    for where, text in suffixes:
        assert all(f"NAME@{s}" in text for s in SEARCHES), f"{where}: {text}"
    assert sum("NAME@play-FEATURE" in text for _, text in suffixes) >= 5  # every player argument
    uci = " ".join(text for where, text in texts if where.startswith("tuner uci"))
    assert "playing search" in uci and "alpha-beta (iterative deepening, transposition table for move ordering)" not in uci
    from tuner.uci import OPTIONS

    assert all(o.name in uci for o in OPTIONS)


def test_tuner_uci_plays_the_strongest_built_in_by_default() -> None:
    """``tuner uci`` without ``--weights`` evaluated with ``classic``, hundreds of Elo below
    ``nnue`` (README): a GUI user who gives no file now gets ``nnue``."""
    from tuner.cli import build_parser

    args = build_parser(["uci"]).parse_args(["uci"])
    assert args.weights == "nnue"
