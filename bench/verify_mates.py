"""Verify the shipped mate suite (``datasets/epd/mates.epd``) with python-chess alone.

Every line is checked on its own by a plain mate solver written below (python-chess's rules,
nothing of the repository's engine, so the suite can check the engine):

* the line parses, the position is valid (:meth:`chess.Board.is_valid`) and not over, ids
  are unique, and it carries ``dm N`` (1 <= N <= 4), at least one ``bm`` and a ``c0`` naming
  its source;
* the side to move forces mate in ``dm`` moves and in no fewer (:func:`mate_distance`);
* ``bm`` lists exactly the first moves that force mate in ``dm`` (every such move, no other).

The solver (:class:`MateSolver`) is an exhaustive AND-OR search: the attacker tries every
legal move (checks first, then captures and promotions, then the rest), the defender every
legal reply (first the replies that refuted a sibling, a killer list per depth). A position's
result for ``n`` moves is cached by its transposition key (pieces, side to move, castling
rights, en passant square), with the largest ``n`` known to fail and the smallest known to
succeed, so a cached answer also serves other depths. A checkmate ends a line; a stalemate, or
a position where the attacker has no moves left, fails for the attacker. The 50-move rule and
repetitions are ignored (an EPD line has no history and no clock).

Prints one JSON line: positions per mate length, how many verified, the failures
(``id: reason``), the solver's nodes, ``all_ok`` and the seconds taken; exit code 1 on any
failure. ``--max-dm N`` checks only the positions with ``dm`` up to ``N``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import chess

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = REPO / "datasets" / "epd" / "mates.epd"
#: the mate lengths the suite holds
LENGTHS = (1, 2, 3, 4)


# ---------------------------------------------------------------- the solver


def _key(board: chess.Board) -> Hashable:
    """What decides the position's future: pieces, side to move, castling rights, en passant
    (python-chess's transposition key)."""
    return board._transposition_key()  # noqa: SLF001 - python-chess's own position key


def _attacker_order(board: chess.Board, moves: Iterable[chess.Move]) -> list[chess.Move]:
    """Checks first, then captures and promotions, then the rest (a stable sort: legal-move
    order within each group)."""
    def rank(m: chess.Move) -> int:
        if board.gives_check(m):
            return 0
        return 1 if board.is_capture(m) or m.promotion else 2
    return sorted(moves, key=rank)


@dataclass
class MateSolver:
    """Whether the side to move forces checkmate within ``n`` of its moves."""

    nodes: int = 0
    #: transposition key -> (largest n known to fail, smallest n known to succeed)
    cache: dict[Hashable, tuple[int, int]] = field(default_factory=dict)
    #: defender replies that refuted a line, most recent first, by the attacker's moves left
    killers: dict[int, list[chess.Move]] = field(default_factory=dict)

    def mates_within(self, board: chess.Board, n: int) -> bool:
        """Whether the side to move of ``board`` forces mate within ``n`` moves (``n`` >= 1)."""
        if n < 1:
            return False
        key = _key(board)
        fail, win = self.cache.get(key, (0, 1 << 30))
        if n <= fail:
            return False
        if n >= win:
            return True
        result = any(self._move_mates(board, m, n) for m in self._candidates(board, n))
        fail, win = self.cache.get(key, (0, 1 << 30))
        self.cache[key] = (fail, min(win, n)) if result else (max(fail, n), win)
        return result

    def move_mates_within(self, board: chess.Board, move: chess.Move, n: int) -> bool:
        """Whether ``move`` (legal in ``board``) forces mate within ``n`` moves, ``move`` counted."""
        return self._move_mates(board, move, n)

    def _candidates(self, board: chess.Board, n: int) -> list[chess.Move]:
        if n == 1:  # only a check can mate
            return [m for m in board.legal_moves if board.gives_check(m)]
        return _attacker_order(board, board.legal_moves)

    def _move_mates(self, board: chess.Board, move: chess.Move, n: int) -> bool:
        self.nodes += 1
        board.push(move)
        try:
            if board.is_checkmate():
                return True
            if n <= 1:
                return False
            return self._defender_loses(board, n - 1)
        finally:
            board.pop()

    def _defender_loses(self, board: chess.Board, n: int) -> bool:
        """Defender to move (not checkmated): whether every reply leaves a mate within ``n``."""
        replies = list(board.legal_moves)
        if not replies:  # stalemate
            return False
        killers = self.killers.setdefault(n, [])
        first = [k for k in killers if k in replies]
        for reply in first + [r for r in replies if r not in first]:
            self.nodes += 1
            board.push(reply)
            try:
                holds = not self.mates_within(board, n)
            finally:
                board.pop()
            if holds:
                if reply in killers:
                    killers.remove(reply)
                killers.insert(0, reply)
                del killers[4:]
                return False
        return True


def mate_distance(board: chess.Board, limit: int, solver: MateSolver | None = None) -> int | None:
    """The fewest moves in which the side to move forces mate, if at most ``limit``; else None."""
    solver = solver or MateSolver()
    for n in range(1, limit + 1):
        if solver.mates_within(board, n):
            return n
    return None


def mating_moves(board: chess.Board, n: int, solver: MateSolver | None = None) -> set[chess.Move]:
    """Every first move that forces mate within ``n`` moves."""
    solver = solver or MateSolver()
    return {m for m in board.legal_moves if solver.move_mates_within(board, m, n)}


# ---------------------------------------------------------------- the suite


@dataclass(frozen=True)
class MatePosition:
    """One line of the suite, as read (``problem`` is why it cannot be used, if so)."""

    line: int
    id: str
    board: chess.Board
    dm: int
    bm: tuple[chess.Move, ...]
    source: str
    problem: str | None = None


def read_suite(path: Path) -> list[MatePosition]:
    """Every position line of ``path`` (blank lines and ``#`` comments skipped)."""
    out = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = text.strip()
        if not text or text.startswith("#"):
            continue
        out.append(read_line(text, number))
    return out


def read_line(text: str, number: int = 1) -> MatePosition:
    """One EPD line of the suite; a line that cannot be used comes back with its ``problem``."""
    try:
        board, ops = chess.Board.from_epd(text)
    except ValueError as exc:
        return MatePosition(number, f"line {number}", chess.Board.empty(), 0, (), "", f"unreadable: {exc}")
    ident = ops.get("id")
    ident = ident if isinstance(ident, str) and ident else f"line {number}"
    dm = ops.get("dm")
    bm = ops.get("bm") or []
    source = ops.get("c0")
    problem = None
    if not board.is_valid():
        problem = f"invalid position: {board.status()!r}"
    elif board.is_game_over():
        problem = "the game is over"
    elif not isinstance(dm, int) or dm not in LENGTHS:
        problem = f"dm must be one of {LENGTHS}, not {dm!r}"
    elif not bm:
        problem = "no bm"
    elif not isinstance(source, str) or not source.startswith("source: "):
        problem = "no c0 \"source: ...\""
    return MatePosition(number, ident, board, dm if isinstance(dm, int) else 0, tuple(bm),
                        source if isinstance(source, str) else "", problem)


def check(position: MatePosition, solver: MateSolver | None = None) -> str | None:
    """Why ``position`` is wrong, or None: mate in exactly ``dm``, ``bm`` every move that does it."""
    if position.problem:
        return position.problem
    solver = solver or MateSolver()
    board = position.board.copy()
    dm = position.dm
    if dm > 1 and solver.mates_within(board, dm - 1):
        return f"there is a mate in {mate_distance(board, dm - 1, solver)}"
    mating = mating_moves(board, dm, solver)
    if not mating:
        return f"no mate in {dm}"
    if mating != set(position.bm):
        def sans(ms: Iterable[chess.Move]) -> list[str]:
            return sorted(board.san(m) for m in ms)
        return f"moves mating in {dm}: {sans(mating)}, bm says {sans(position.bm)}"
    return None


def verify(path: Path, max_dm: int = max(LENGTHS)) -> dict[str, object]:
    start = time.perf_counter()
    positions = read_suite(path)
    failures: list[str] = []
    seen: set[str] = set()
    counts = {str(n): 0 for n in LENGTHS}
    verified = {str(n): 0 for n in LENGTHS}
    nodes = 0
    for p in positions:
        if p.id in seen:
            failures.append(f"{p.id}: id used twice")
        seen.add(p.id)
        if p.dm in LENGTHS:
            counts[str(p.dm)] += 1
        if p.problem is None and p.dm > max_dm:
            continue
        solver = MateSolver()  # a fresh cache: every line is checked on its own
        reason = check(p, solver)
        nodes += solver.nodes
        if reason is None:
            verified[str(p.dm)] += 1
        else:
            failures.append(f"{p.id}: {reason}")
    shown = path.resolve().relative_to(REPO) if path.resolve().is_relative_to(REPO) else path
    checked = sum(n for d, n in counts.items() if int(d) <= max_dm)
    return {"file": str(shown), "positions": len(positions), "by_dm": counts, "verified_by_dm": verified,
            "verified": sum(verified.values()), "checked": checked, "max_dm": max_dm, "failures": failures,
            "nodes": nodes, "all_ok": not failures and checked > 0 and sum(verified.values()) == checked,
            "seconds": round(time.perf_counter() - start, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", nargs="?", type=Path, default=DEFAULT_SUITE, help=f"EPD file (default: {DEFAULT_SUITE})")
    ap.add_argument("--max-dm", type=int, default=max(LENGTHS), choices=LENGTHS,
                    help="check only the positions with dm up to this (default: all)")
    args = ap.parse_args()
    report = verify(args.suite, args.max_dm)
    print(json.dumps(report))
    if not report["all_ok"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
