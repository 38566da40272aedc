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
failure. ``--max-dm N`` checks only the positions with ``dm`` up to ``N``; ``--engine`` adds a
second oracle, the repository's exact search (numba); ``--scan PGN`` instead lists the
positions of a PGN file's games with a forced mate in up to ``--max-dm`` moves.
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
import chess.pgn

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
    #: try only checking moves for the attacker (a quick search for finding mates, not for
    #: proving their absence)
    checks_only: bool = False
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
        if n == 1 or self.checks_only:  # only a check can mate in one
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
    raw_bm = ops.get("bm")
    bm = [m for m in raw_bm if isinstance(m, chess.Move)] if isinstance(raw_bm, list) else []
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


def engine_check(position: MatePosition) -> str | None:
    """The second oracle (``--engine``): the repository's exact search
    (:func:`search.tree.search_api.search`, classic weights) at ``2 dm - 1`` plies must score
    mate in exactly ``2 dm - 1`` plies with a first move of ``bm``."""
    from search.core.convert import from_chess  # noqa: PLC0415 - only with --engine
    from search.params.weights import load_weights  # noqa: PLC0415
    from search.tree.search_api import search  # noqa: PLC0415

    plies = 2 * position.dm - 1
    result = search(from_chess(position.board), plies, load_weights("classic").values, budget=10**9)
    first = result.pv_uci()[:1]
    if result.mate_in != plies or not first or first[0] not in {m.uci() for m in position.bm}:
        return f"the engine at depth {plies}: mate in {result.mate_in} plies, move {first}"
    return None


def verify(path: Path, max_dm: int = max(LENGTHS), engine: bool = False) -> dict[str, object]:
    start = time.perf_counter()
    positions = read_suite(path)
    failures: list[str] = []
    seen: set[str] = set()
    counts = {str(n): 0 for n in LENGTHS}
    verified = {str(n): 0 for n in LENGTHS}
    nodes = engine_agrees = 0
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
        if reason is None and engine:
            reason = engine_check(p)
            engine_agrees += reason is None
        if reason is None:
            verified[str(p.dm)] += 1
        else:
            failures.append(f"{p.id}: {reason}")
    shown = path.resolve().relative_to(REPO) if path.resolve().is_relative_to(REPO) else path
    checked = sum(n for d, n in counts.items() if int(d) <= max_dm)
    return {"file": str(shown), "positions": len(positions), "by_dm": counts, "verified_by_dm": verified,
            "verified": sum(verified.values()), "checked": checked, "max_dm": max_dm, "failures": failures,
            "nodes": nodes, **({"engine_agrees": engine_agrees} if engine else {}), "all_ok": not failures and checked > 0 and sum(verified.values()) == checked,
            "seconds": round(time.perf_counter() - start, 2)}


def scan(pgn: Path, max_dm: int) -> dict[str, object]:
    """Every position of every game of ``pgn`` (the final one too) where the side to move
    forces mate in at most ``max_dm`` moves, as far as a quick search finds: every attacker
    move for mates in up to 2, checking moves only for longer ones. Each hit is then solved in
    full (:func:`mate_distance`, :func:`mating_moves`): its exact ``dm`` and every mating move."""
    start = time.perf_counter()
    found: list[dict[str, object]] = []
    games = plies = 0
    with pgn.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games += 1
            board = game.board()
            moves = list(game.mainline_moves())
            for ply in range(len(moves) + 1):
                plies += 1
                if not board.is_game_over() and (
                        mate_distance(board, min(2, max_dm)) or
                        mate_distance(board, max_dm, MateSolver(checks_only=True))):
                    solver = MateSolver()
                    dm = mate_distance(board, max_dm, solver)
                    assert dm is not None  # a mate found by a narrower search exists
                    found.append({"game": games, "white": game.headers.get("White", "?"),
                                  "black": game.headers.get("Black", "?"), "ply": ply, "epd": board.epd(), "dm": dm,
                                  "bm": sorted(board.san(m) for m in mating_moves(board, dm, solver)),
                                  "played": board.san(moves[ply]) if ply < len(moves) else None})
                if ply < len(moves):
                    board.push(moves[ply])
    return {"pgn": str(pgn), "games": games, "positions": plies, "max_dm": max_dm,
            "by_dm": {str(n): sum(f["dm"] == n for f in found) for n in LENGTHS if n <= max_dm},
            "found": found, "seconds": round(time.perf_counter() - start, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", nargs="?", type=Path, default=DEFAULT_SUITE, help=f"EPD file (default: {DEFAULT_SUITE})")
    ap.add_argument("--max-dm", type=int, default=max(LENGTHS), choices=LENGTHS,
                    help="check only the positions with dm up to this (default: all)")
    ap.add_argument("--engine", action="store_true",
                    help="also ask the repository's exact search at 2 dm - 1 plies (a second oracle)")
    ap.add_argument("--scan", type=Path, metavar="PGN",
                    help="instead: list the positions of these games with a forced mate in up to --max-dm moves "
                         "(how the suite's game positions were found)")
    args = ap.parse_args()
    if args.scan is not None:
        print(json.dumps(scan(args.scan, args.max_dm)))
        return
    report = verify(args.suite, args.max_dm, args.engine)
    print(json.dumps(report))
    if not report["all_ok"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
