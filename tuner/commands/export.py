"""``tuner export WEIGHTS|NET.mtnn --format json|c|c-packed|rust|text|mtnn [--out FILE]``:
weights and networks for other engines."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from search.params.weights import atomic_write_text, builtin_network, load_weights, resolve
from tuner.commands import builtins_help, command_help
from tuner.errors import TunerError, one_line
from tuner.export.formats import FORMATS, display_name, export
from tuner.outputs import add_overwrite_argument, check_output

#: formats of a network file (``.mtnn``): the C header with the forward pass, or the file again
NETWORK_FORMATS = ("c", "mtnn")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export", help=command_help("export"),
        description="Export WEIGHTS as the evaluator's JSON (json), a C header (c) or a Rust module (rust) with "
                    "named arrays (piece values, middle/end-game piece-square tables in a1..h8 order, every "
                    "other term), packed S(mg, eg) pairs in the catalogue's order as Texel-style tuners print "
                    "them (c-packed: a C header, one int32 per term entry, with the S, MT_MG, MT_EG and "
                    "MT_TAPER_PACKED macros), or a text view with 8x8 tables that 'tuner export' reads back "
                    "(text). Each export states the feature catalogue hash and the tapering formula, and that "
                    "the weights assume exactly the terms of docs/features.md. A network file (.mtnn) exports "
                    "as one C99 header holding its parameters and the reference forward pass (c), or as the "
                    "documented binary file again (mtnn); see docs/network.md.")
    p.add_argument("weights", metavar="WEIGHTS",
                   help=f"weights file (JSON or a text view), a network file (.mtnn) or a built-in set "
                        f"({builtins_help()})")
    p.add_argument("--format", choices=(*FORMATS, "mtnn"), default=None,
                   help="output format (default: json for weights, c for a network)")
    p.add_argument("--out", metavar="FILE", default=None,
                   help="write to FILE, atomically (default: standard output); never the WEIGHTS file itself")
    add_overwrite_argument(p)
    p.set_defaults(func=run)


def _network_file(spec: str) -> str | None:
    """The network file ``spec`` names: itself when it is one, a built-in network's file
    (``gm-nn``: search/data/gm-nn.mtnn) for its name; None for weights."""
    builtin = builtin_network(spec)
    if builtin is not None and builtin.is_file():
        return str(builtin)
    if not Path(spec).is_file():
        return None
    from search.evaluation.network import is_network_file  # noqa: PLC0415 (loads numba: only for a file)

    return spec if is_network_file(spec) else None


def _export_network(args: argparse.Namespace, path: str) -> None:
    """Write the network ``args.weights`` (its file: ``path``) as its C header or as the binary
    file again."""
    from search.evaluation.network import network_bytes, read_network, write_network  # noqa: PLC0415
    from tuner.export.network_c import to_c_network  # noqa: PLC0415

    fmt = args.format or "c"
    if fmt not in NETWORK_FORMATS:
        raise TunerError(f"{args.weights}: a network file exports as --format {' or '.join(NETWORK_FORMATS)}, "
                         f"not {fmt}")
    try:
        net = read_network(path)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    if fmt == "c":
        _write_text(args.out, to_c_network(net, display_name(net.metadata, args.weights)))
        _said(args, "the network's C header (parameters and forward pass)")
    elif args.out is None or args.out == "-":
        sys.stdout.buffer.write(network_bytes(net))
        sys.stdout.flush()
    else:
        write_network(args.out, net)
        _said(args, "the network file (.mtnn)")


def _write_text(out: str | None, text: str) -> None:
    if out is None or out == "-":
        sys.stdout.write(text)
    else:
        atomic_write_text(out, text)


#: what each format of linear weights is, for the closing line
WHAT = {"json": "the evaluator's JSON weights", "c": "a C header of named arrays", "c-packed":
        "a C header of packed S(mg, eg) pairs", "rust": "a Rust module", "text": "the text view"}


def _said(args: argparse.Namespace, what: str) -> None:
    """With ``--out FILE``, one line on standard output saying what was written where (issue 58
    item 15: export printed nothing); nothing when the export itself went to standard output."""
    if args.out is None or args.out == "-":
        return
    size = Path(args.out).stat().st_size
    print(one_line(f"export: wrote {what} of {args.weights} to {args.out} ({size:,} bytes)"), flush=True)


def run(args: argparse.Namespace) -> int:
    check_output(args.out, overwrite=args.overwrite, inputs=(args.weights, resolve(args.weights), builtin_network(args.weights)))
    path = _network_file(args.weights)
    if path is not None:
        _export_network(args, path)
        return 0
    fmt = args.format or "json"
    if fmt == "mtnn":
        raise TunerError(f"{args.weights}: --format mtnn is for network files; these are linear weights")
    try:
        w = load_weights(args.weights)
        text = export(w, fmt, display_name(w.metadata, args.weights))
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    _write_text(args.out, text)
    _said(args, WHAT[fmt])
    return 0
