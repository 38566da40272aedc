"""``tuner eval FEN --weights FILE``: a position's static score and its largest terms."""

from __future__ import annotations

import argparse

from search.core.board import W_STM
from search.params.catalog import FEATURE_NAMES, PHASE_MAX
from search.core.convert import STARTING_FEN, from_fen
from search.evaluation.evaluation_api import evaluate, features
from search.evaluation.feature_kernels import phase_of
from search.evaluation.evaluators import load_evaluator, network_parts, static_scores
from search.evaluation.network import QuantizedNetwork
from tuner.commands import builtins_help, command_help
from tuner.errors import TunerError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("eval", help=command_help("eval"),
                       description="Print the static score of FEN (centipawns, side to move's view) "
                                   "and the features that contribute most to it.")
    p.add_argument("fen", metavar="FEN", help="position in FEN, or 'startpos'")
    p.add_argument("--weights", default="classic", metavar="FILE",
                   help=f"weights file (JSON or text view), network file (.mtnn), or a built-in set: "
                        f"{builtins_help()} (default: classic)")
    p.add_argument("--top", type=int, default=10, metavar="N", help="how many terms to list (default: 10)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.top < 1:
        raise TunerError(f"--top must be >= 1, not {args.top}")
    try:
        board = from_fen(STARTING_FEN if args.fen == "startpos" else args.fen)
        ev = load_evaluator(args.weights)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    side = "white" if board[W_STM] == 0 else "black"
    if isinstance(ev, QuantizedNetwork):
        score = float(static_scores(board[None, :], ev)[0]) / PHASE_MAX
        net = float(network_parts(board[None, :], ev)[0]) / PHASE_MAX
        shape = ev.shape
        print(f"score {score:+.2f} cp for {side} (side to move), phase {phase_of(board)}/{PHASE_MAX}: a network "
              f"{shape.label} (king buckets {shape.buckets}, {shape.outputs} output bucket"
              f"{'s' if shape.outputs > 1 else ''}), its part {net:+.2f} cp"
              + (f", the linear part {score - net:+.2f} cp" if ev.linear is not None else ""))
        if ev.linear is None:
            return 0
        w = ev.linear
        print("the linear part's largest terms:")
    else:
        w = ev
    idx, val = features(board)
    contributions = sorted(
        ((int(w[i]) * int(v) / PHASE_MAX, int(i), int(v)) for i, v in zip(idx, val)),
        key=lambda t: (-abs(t[0]), t[1]),
    )
    if not isinstance(ev, QuantizedNetwork):
        print(f"score {evaluate(board, w):+.2f} cp for {side} (side to move), phase {phase_of(board)}/{PHASE_MAX}, "
              f"{len(idx)} active features")
    print(f"{'contribution':>12}  {'weight':>6}  {'value':>6}  feature")
    for cp, i, v in contributions[: args.top]:
        print(f"{cp:+12.2f}  {int(w[i]):6d}  {v:6d}  {FEATURE_NAMES[i]}")
    return 0
