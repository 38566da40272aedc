"""Verify the shipped EPD suite (``datasets/epd/movetuner.epd``) with python-chess alone.

Nothing here uses the repository's engine: the oracles are python-chess's rules and a plain
alpha-beta negamax over material written below, so the suite checks the engine rather than
the engine the suite.

* every line parses (:func:`tuner.arena.epd.parse_epd` reports no problem) and ids are unique;
* ``mate.*`` positions carry ``dm N`` and a single ``bm``: that move forces mate in N moves,
  no move forces mate in fewer, and no other move forces mate in N (an exhaustive AND-OR
  search with python-chess);
* ``tactic.*`` positions carry a single ``bm`` that is the unique best move of a material
  negamax (pawn 100, knight 320, bishop 330, rook 500, queen 900; mate as a huge score) to
  :data:`TACTIC_DEPTH` plies plus a quiescence search of captures and promotions (all
  evasions when in check): it gains at least :data:`TACTIC_GAIN` cp over the material on the
  board, and every other move scores at least :data:`TACTIC_MARGIN` cp less;
* ``positional.*`` positions carry ``c8``/``c9`` credit for at least three moves and are
  quiet: at :data:`POSITIONAL_DEPTH` plies no move wins more than :data:`QUIET_CP` cp of
  material, and no credited move loses more than :data:`QUIET_CP` cp against the best move.

Prints one JSON line: positions checked per theme, the failures (``id: reason``), ``all_ok``
and the seconds taken. Run as ``python bench/verify_epd_suite.py [FILE]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import chess

from tuner.arena.epd import DEFAULT_SUITE, EpdPosition, parse_epd

REPO = DEFAULT_SUITE.parents[2]
VALUES = {chess.PAWN: 100, chess.KNIGHT: 320, chess.BISHOP: 330, chess.ROOK: 500, chess.QUEEN: 900, chess.KING: 0}
MATE = 1_000_000
INF = 10 * MATE
#: plies of the material negamax for tactics (then quiescence)
TACTIC_DEPTH = 4
#: the best move must win at least this much material (cp) ...
TACTIC_GAIN = 150
#: ... and beat every other move by at least this much (cp)
TACTIC_MARGIN = 150
#: plies of the material negamax for positional positions
POSITIONAL_DEPTH = 3
#: a positional position's material tolerance (cp)
QUIET_CP = 50


# ---------------------------------------------------------------- material negamax


def material(board: chess.Board) -> int:
    """Material balance from the side to move's view (cp)."""
    score = 0
    for piece_type, value in VALUES.items():
        score += value * (len(board.pieces(piece_type, chess.WHITE)) - len(board.pieces(piece_type, chess.BLACK)))
    return score if board.turn == chess.WHITE else -score


def _victim_value(board: chess.Board, move: chess.Move) -> int:
    if board.is_en_passant(move):
        return VALUES[chess.PAWN]
    victim = board.piece_type_at(move.to_square)
    return (VALUES[victim] if victim else 0) + (VALUES[move.promotion] if move.promotion else 0)


def _ordered(board: chess.Board, moves: list[chess.Move]) -> list[chess.Move]:
    """Captures and promotions first, most valuable victim / least valuable attacker."""
    def key(m: chess.Move) -> int:
        attacker = board.piece_type_at(m.from_square) or chess.PAWN
        return -(_victim_value(board, m) * 10 - VALUES[attacker] // 100) if board.is_capture(m) or m.promotion else 1
    return sorted(moves, key=key)


def quiesce(board: chess.Board, alpha: int, beta: int, ply: int) -> int:
    """Captures and promotions (every evasion when in check) until the position is quiet."""
    in_check = board.is_check()
    moves = list(board.legal_moves)
    if not moves:
        return -MATE + ply if in_check else 0
    if not in_check:
        stand = material(board)
        if stand >= beta:
            return stand
        alpha = max(alpha, stand)
        moves = [m for m in moves if board.is_capture(m) or m.promotion]
    return _best_child(board, moves, -INF if in_check else alpha, alpha, beta,
                       lambda a, b: -quiesce(board, -b, -a, ply + 1))


def negamax(board: chess.Board, depth: int, alpha: int, beta: int, ply: int = 0) -> int:
    """Fail-soft alpha-beta negamax on material; mate in k plies scores ``MATE - k``."""
    moves = list(board.legal_moves)
    if not moves:
        return -MATE + ply if board.is_check() else 0
    if depth <= 0:
        return quiesce(board, alpha, beta, ply)
    return _best_child(board, moves, -INF, alpha, beta, lambda a, b: -negamax(board, depth - 1, -b, -a, ply + 1))


def _best_child(board: chess.Board, moves: list[chess.Move], best: int, alpha: int, beta: int,
                value_after: Callable[[int, int], int]) -> int:
    """Fail-soft maximum of ``best`` and ``value_after(alpha, beta)`` after each of ``moves``
    (ordered by :func:`_ordered`), raising ``alpha`` as it goes; stops at a cutoff."""
    for m in _ordered(board, moves):
        board.push(m)
        v = value_after(alpha, beta)
        board.pop()
        best = max(best, v)
        alpha = max(alpha, v)
        if alpha >= beta:
            break
    return best


def move_value(board: chess.Board, move: chess.Move, depth: int, alpha: int = -INF, beta: int = INF) -> int:
    """Value of ``move`` (side to move's view) with ``depth - 1`` plies after it."""
    board.push(move)
    try:
        return -negamax(board, depth - 1, -beta, -alpha, 1)
    finally:
        board.pop()


# ---------------------------------------------------------------- mates


def forces_mate(board: chess.Board, moves: int) -> bool:
    """Whether the side to move can force checkmate within ``moves`` of its moves."""
    for m in board.legal_moves:
        if mates_after(board, m, moves):
            return True
    return False


def mates_after(board: chess.Board, move: chess.Move, moves: int) -> bool:
    """Whether ``move`` forces checkmate within ``moves`` moves (``move`` counted)."""
    board.push(move)
    try:
        if board.is_checkmate():
            return True
        if moves <= 1 or board.is_stalemate() or board.is_insufficient_material():
            return False
        for reply in board.legal_moves:
            board.push(reply)
            try:
                if not forces_mate(board, moves - 1):
                    return False
            finally:
                board.pop()
        return True
    finally:
        board.pop()


# ---------------------------------------------------------------- checks


def check_mate(p: EpdPosition, dm: object) -> str | None:
    if not isinstance(dm, int) or dm < 1:
        return "mate positions need 'dm N' (mate in N moves)"
    if len(p.bm) != 1:
        return "mate positions need exactly one bm"
    board = p.board.copy()
    mating = {m.uci() for m in board.legal_moves if mates_after(board, m, dm)}
    if mating != set(p.bm):
        return f"moves forcing mate in {dm}: {sorted(mating)}, bm says {list(p.bm)}"
    if dm > 1 and forces_mate(board, dm - 1):
        return f"there is a mate in {dm - 1}"
    return None


def check_tactic(p: EpdPosition) -> str | None:
    if len(p.bm) != 1 or p.credit:
        return "tactic positions need exactly one bm and no c8/c9"
    board = p.board.copy()
    best = chess.Move.from_uci(p.bm[0])
    v_best = move_value(board, best, TACTIC_DEPTH)
    gain = v_best - material(board)
    if gain < TACTIC_GAIN:
        return f"bm gains {gain} cp of material at depth {TACTIC_DEPTH}, less than {TACTIC_GAIN}"
    bound = v_best - TACTIC_MARGIN  # every other move must score below this (null-window test)
    for m in board.legal_moves:
        if m != best and move_value(board, m, TACTIC_DEPTH, bound - 1, bound) >= bound:
            v = move_value(board, m, TACTIC_DEPTH)
            return f"{board.san(m)} scores {v} cp, within {TACTIC_MARGIN} of bm's {v_best}"
    return None


def check_positional(p: EpdPosition) -> str | None:
    if len(p.credit) < 3:
        return "positional positions need c8/c9 credit for at least three moves"
    board = p.board.copy()
    static = material(board)
    values = {m.uci(): move_value(board, m, POSITIONAL_DEPTH) for m in board.legal_moves}
    best_uci = max(values, key=lambda u: values[u])
    if values[best_uci] > static + QUIET_CP:
        return f"not quiet: {best_uci} wins {values[best_uci] - static} cp of material"
    for uci in p.credit:
        if values[uci] < values[best_uci] - QUIET_CP:
            return f"credited move {uci} loses {values[best_uci] - values[uci]} cp of material"
    return None


def verify(path: Path) -> dict[str, object]:
    start = time.perf_counter()
    positions, problems = parse_epd(path)
    failures = [str(e) for e in problems]
    ops_by_line = _operations(path)
    counts: dict[str, int] = {}
    seen: set[str] = set()
    for p in positions:
        if p.id in seen:
            failures.append(f"{p.id}: id used twice")
        seen.add(p.id)
        theme = p.theme
        counts[theme] = counts.get(theme, 0) + 1
        ops = ops_by_line[p.line]
        if theme == "mate":
            reason = check_mate(p, ops.get("dm"))
        elif theme == "tactic":
            reason = check_tactic(p)
        elif theme == "positional":
            reason = check_positional(p)
        else:
            reason = f"unknown theme {theme!r}"
        if reason is not None:
            failures.append(f"{p.id}: {reason}")
    shown = path.resolve().relative_to(REPO) if path.resolve().is_relative_to(REPO) else path
    return {"file": str(shown), "positions": len(positions), "themes": counts, "failures": failures,
            "all_ok": not failures and bool(positions), "seconds": round(time.perf_counter() - start, 2)}


def _operations(path: Path) -> dict[int, dict[str, object]]:
    """Every parseable line's EPD operations by line number (``dm`` is not kept by
    :class:`~tuner.arena.epd.EpdPosition`)."""
    out: dict[int, dict[str, object]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            out[number] = dict(chess.Board.from_epd(line.strip())[1])
        except ValueError:
            pass
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", nargs="?", type=Path, default=DEFAULT_SUITE, help=f"EPD file (default: {DEFAULT_SUITE})")
    path = ap.parse_args().suite
    report = verify(path)
    print(json.dumps(report))
    if not report["all_ok"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
