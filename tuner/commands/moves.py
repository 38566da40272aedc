"""``tuner moves <what>``: the move-probability model (``docs/move-model.md``).

- ``train``: fit a model on a position set's train split, L2 and pass chosen on its validation
  split (:mod:`tuner.moves.train`), and write it as a move-model file;
- ``predict``: a position's legal moves with the model's probabilities, most likely first;
- ``measure``: the model as a move predictor on a split (top-1, top-3, cross-entropy).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from search.core.convert import STARTING_FEN, from_fen
from search.pls.move_model import MoveModel, load_move_model, predict, save_move_model
from tuner.config import add_arguments, from_namespace, seed_option
from tuner.ingest.schema import MANIFEST, SPLIT_FORMATS, SPLITS, split_file
from tuner.outputs import check_output
from tuner.errors import DeferredSigint, Interrupted, TunerError, one_line
from tuner.moves.train import MoveTrainConfig, train_move_model

MODEL_HELP = "a move-model file, or built in: gm (trained on the grandmaster games), uniform (every move alike)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("moves", help="the move-probability model: train it, predict with it, measure it",
                       description="A model of which move a strong player chooses: a score per legal move "
                                   "from features of the move in its position, a softmax over the legal "
                                   "moves (docs/move-model.md).")
    moves_sub = p.add_subparsers(dest="moves_command", metavar="WHAT")
    p.set_defaults(func=lambda args: _missing(p))
    _register_train(moves_sub)
    _register_predict(moves_sub)
    _register_measure(moves_sub)


def _missing(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _model(spec: str) -> MoveModel:
    try:
        return load_move_model(spec)
    except ValueError as exc:
        raise TunerError(str(exc)) from None


# ---------------------------------------------------------------- train


def _register_train(moves_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = moves_sub.add_parser(
        "train", help="train a move model on a position set",
        description="Train the move model on the train split of DIR (softmax cross-entropy of the played "
                    "move over the legal moves, Adam on mini-batches of positions) once per L2 value, "
                    "measure every pass on the validation split, and write the weights with the lowest "
                    "validation loss to FILE. The test split is not read. On the 403,104 GM training "
                    "positions a run takes a few minutes on 2 cores; it is not resumable (run it again).")
    p.add_argument("--data", required=True, metavar="DIR", help="position set written by 'tuner ingest'")
    p.add_argument("--out", required=True, metavar="FILE", help="the move-model file to write (JSON)")
    p.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    add_arguments(p, MoveTrainConfig)
    p.add_argument("--quiet", action="store_true", help="no progress bar and no line per pass")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON line")
    p.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> int:
    cfg = from_namespace(MoveTrainConfig, args)
    out = Path(args.out)
    data = Path(args.data)
    check_output(out, overwrite=True, inputs=[data / MANIFEST, *(data / split_file(s, f) for s in SPLITS
                                                                for f in SPLIT_FORMATS)])
    if out.is_dir():
        raise TunerError(f"{out}: is a folder; --out names the move-model file to write")
    if out.exists() and not args.overwrite:
        raise TunerError(f"{out}: exists; pass --overwrite to replace it")
    quiet = args.quiet or args.json
    log = None if quiet else (lambda line: print(line, file=sys.stderr))
    try:
        with DeferredSigint():
            result = train_move_model(args.data, cfg, progress=not quiet and sys.stderr.isatty(), log=log)
    except Interrupted:
        raise Interrupted(f"interrupted; nothing written to {out} (training is not resumable: run it again)") from None
    save_move_model(out, result.model)
    v = result.validation
    if args.json:
        print(json.dumps({"out": str(out), "train_positions": result.train_positions, "l2": result.l2,
                          "epoch": result.epoch, "validation": v.to_json(), "seconds": round(result.seconds, 1)}))
        return 0
    print(f"{one_line(out)}: trained on {result.train_positions} positions in {result.seconds:.1f} s; chose l2 {result.l2:g}, "
          f"pass {result.epoch}: validation ({v.positions} positions) top-1 {100 * v.top1:.2f}%, "
          f"top-3 {100 * v.top3:.2f}%, loss {v.loss:.4f}")
    return 0


# ---------------------------------------------------------------- predict


def _register_predict(moves_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = moves_sub.add_parser("predict", help="a position's most likely moves under a move model",
                             description="List the legal moves of FEN with the model's probabilities, most "
                                         "likely first.")
    p.add_argument("fen", metavar="FEN", help="position in FEN, or 'startpos'")
    p.add_argument("--model", default="gm", metavar="FILE", help=MODEL_HELP + " (default: gm)")
    p.add_argument("--top", type=int, default=10, metavar="N", help="how many moves to list (default: 10; 0: all)")
    p.add_argument("--json", action="store_true", help="print the moves as one JSON line")
    p.set_defaults(func=run_predict)


def run_predict(args: argparse.Namespace) -> int:
    if args.top < 0:
        raise TunerError(f"--top must be >= 0, not {args.top}")
    try:
        board = from_fen(STARTING_FEN if args.fen == "startpos" else args.fen)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    model = _model(args.model)
    ranked = predict(board, model)
    if not ranked:
        raise TunerError(f"{args.fen!r}: no legal move (checkmate or stalemate)")
    shown = ranked[:args.top] if args.top else ranked
    if args.json:
        print(json.dumps({"fen": args.fen, "legal_moves": len(ranked),
                          "moves": [{"move": uci, "probability": round(p, 6)} for uci, p in shown]}))
        return 0
    print(f"{len(ranked)} legal moves; the {len(shown)} most likely:")
    for uci, prob in shown:
        print(f"{uci:>6}  {100 * prob:6.2f}%")
    return 0


# ---------------------------------------------------------------- measure


def _register_measure(moves_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = moves_sub.add_parser("measure", help="a move model as a move predictor on a split",
                             description="How often the played move is the model's most likely move (top-1, "
                                         "ties as fractions, as 'tuner bench move-match' counts), among its "
                                         "three most likely (top-3), and the mean cross-entropy.")
    p.add_argument("--model", default="gm", metavar="FILE", help=MODEL_HELP + " (default: gm)")
    p.add_argument("--data", required=True, metavar="DIR", help="position set written by 'tuner ingest'")
    p.add_argument("--split", default="test", choices=("train", "validation", "test"),
                   help="which split to measure on (default: test)")
    p.add_argument("--max-positions", type=int, default=0, metavar="N",
                   help="a seeded random sample of N positions (default: all)")
    p.add_argument("--seed", type=seed_option, default=0, help="seed of the sample (default: 0)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    p.set_defaults(func=run_measure)


def run_measure(args: argparse.Namespace) -> int:
    from tuner.moves.measure import choice_set, figures  # noqa: PLC0415
    from tuner.training.position_set import load_positions  # noqa: PLC0415

    if args.max_positions < 0:
        raise TunerError(f"--max-positions must be >= 0, not {args.max_positions}")
    model = _model(args.model)
    pos = load_positions(args.data, args.split, limit=args.max_positions, seed=args.seed,
                         progress=sys.stderr.isatty())
    if len(pos) == 0:
        raise TunerError(f"{args.data}: the {args.split} split holds no positions")
    fig = figures(choice_set(pos), model.weights)
    if args.json:
        print(json.dumps({"model": args.model, "data": args.data, "split": args.split, **fig.to_json()}))
        return 0
    print(f"{one_line(args.model)} on {fig.positions} positions of {one_line(args.data)} ({args.split}), {fig.mean_legal_moves:.1f} legal "
          f"moves on average: top-1 {100 * fig.top1:.2f}%, top-3 {100 * fig.top3:.2f}%, loss {fig.loss:.4f}")
    return 0
