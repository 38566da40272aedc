"""Where a match's games are lost: a slow slide the evaluation misses, or single blunders.

Reads the PGN of ``tuner bench match`` (its moves carry the mover's ``score/depth`` comments)
and, for every game the player ``--player`` (a PGN ``White``/``Black`` name) lost, finds the first
of its moves after which a reference engine (Stockfish at ``--depth``, default 12) scores the
player below ``--below`` centipawns (default -150); forced moves (one legal move) are passed
over. Prints one JSON line:

* ``lost``: lost games read, ``crossed``: those where such a move was found;
* ``ply``: the median and quartiles of that move's ply (from the opening position);
* ``reference_before_cp``: the reference's median score of the position before that move (the
  player's view): how far the game had already slid;
* ``own_cp``: the median of the player's own search score for that move, and
  ``own_at_or_above_0``: how many of them were 0 or better (the player did not see it);
* ``single_move``: how many crossings came from a position the reference held level (better
  than ``--level``, default -60 cp): one-move blunders rather than a slide;
* ``games``: one record per crossing (round, ply, move, the three scores), with ``--games``.

The reference is Debian's ``stockfish`` package (``apt-get install stockfish``:
``/usr/games/stockfish``, full strength, 1 thread, 64 MB); no test needs it. Example (the
figures of ``docs/search.md``): ``python bench/loss_points.py results/sf2300.pgn --player nnue``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

import chess
import chess.engine
import chess.pgn

#: a ``tuner bench match`` move comment: ``+0.35/14`` or ``-M3/20`` (the mover's view)
_COMMENT = re.compile(r"([+-]?)(M?)([\d.]+)/(\d+)")
MATE_CP = 10_000


def own_score(comment: str) -> float | None:
    """The mover's own score of a move comment, centipawns (a mate as +-MATE_CP), or None."""
    m = _COMMENT.match(comment or "")
    if m is None:
        return None
    sign = -1 if m.group(1) == "-" else 1
    return sign * (MATE_CP if m.group(2) else float(m.group(3)) * 100)


def lost_by(game: chess.pgn.Game, player: str) -> bool | None:
    """Whether ``player`` lost ``game``; None when ``player`` did not play it."""
    white, black, result = game.headers.get("White"), game.headers.get("Black"), game.headers.get("Result")
    if player == white:
        return result == "0-1"
    if player == black:
        return result == "1-0"
    return None


def crossing(game: chess.pgn.Game, player: str, reference: chess.engine.SimpleEngine, depth: int,
             below: int) -> dict[str, object] | None:
    """The first move of ``player`` after which ``reference`` scores it below ``below`` cp."""
    colour = chess.WHITE if game.headers.get("White") == player else chess.BLACK
    for ply, node in enumerate(game.mainline()):
        board = node.parent.board() if node.parent is not None else None
        if board is None or board.turn != colour or board.legal_moves.count() == 1:
            continue  # (a forced move is no decision, and its comment says 0.00/1)
        after = node.board()
        if after.is_game_over():
            return None
        seen = reference.analyse(after, chess.engine.Limit(depth=depth))["score"]
        score_after = seen.pov(colour).score(mate_score=MATE_CP)
        if score_after is not None and score_after < below:
            before = reference.analyse(board, chess.engine.Limit(depth=depth))["score"]
            return {"round": game.headers.get("Round"), "ply": ply, "move": board.san(node.move),
                    "own_cp": own_score(node.comment), "own": node.comment, "reference_before_cp": before.pov(colour).score(mate_score=MATE_CP),
                    "reference_after_cp": score_after}
    return None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Needs Debian's stockfish (apt-get install stockfish).")
    p.add_argument("pgn", type=Path, help="the PGN of a tuner bench match")
    p.add_argument("--player", required=True, help="the player's name in the PGN's White/Black tags")
    p.add_argument("--engine", default="/usr/games/stockfish", help="the reference UCI engine (default: %(default)s)")
    p.add_argument("--depth", type=int, default=12, help="the reference's depth a position (default: 12)")
    p.add_argument("--below", type=int, default=-150, help="the crossing, centipawns (default: -150)")
    p.add_argument("--level", type=int, default=-60, help="a position held level, centipawns (default: -60)")
    p.add_argument("--games", action="store_true", help="also list each crossing")
    args = p.parse_args()
    try:
        handle = args.pgn.open(encoding="utf-8", errors="replace")
    except OSError as exc:
        print(f"loss_points: {args.pgn}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        reference = chess.engine.SimpleEngine.popen_uci(args.engine)
    except (OSError, chess.engine.EngineError) as exc:
        print(f"loss_points: cannot start {args.engine} ({exc}); apt-get install stockfish", file=sys.stderr)
        return 2
    rows: list[dict[str, object]] = []
    lost = 0
    try:
        reference.configure({"Threads": 1, "Hash": 64})
        with handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                if lost_by(game, args.player):
                    lost += 1
                    row = crossing(game, args.player, reference, args.depth, args.below)
                    if row is not None:
                        rows.append(row)
    finally:
        reference.quit()
    plies = [int(r["ply"]) for r in rows]  # type: ignore[call-overload]
    own = [float(r["own_cp"]) for r in rows if r["own_cp"] is not None]  # type: ignore[arg-type]
    before = [float(r["reference_before_cp"]) for r in rows if r["reference_before_cp"] is not None]  # type: ignore[arg-type]
    out: dict[str, object] = {
        "bench": "loss_points", "pgn": str(args.pgn), "player": args.player, "reference": args.engine,
        "depth": args.depth, "below_cp": args.below, "lost": lost, "crossed": len(rows),
        "ply": {"median": statistics.median(plies), "quartiles": statistics.quantiles(plies, n=4)} if len(plies) > 1 else None,
        "reference_before_cp": statistics.median(before) if before else None,
        "own_cp": statistics.median(own) if own else None,
        "own_at_or_above_0": sum(x >= 0 for x in own),
        "single_move": sum(b > args.level for b in before),
    }
    if args.games:
        out["games"] = rows
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
