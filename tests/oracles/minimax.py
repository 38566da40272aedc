"""An oracle for the alpha-beta kernel that shares no code with it (tests only).

Everything here is written on python-chess and the plain-Python reference extractor
(``tests/oracles/reference_features.py``); nothing is imported from ``search/``. The rules are
re-derived from the kernel's documented contract (``search/tree/alphabeta.py``,
``search/tree/quiescence.py``, ``docs/features.md``):

* **Static score**: ``w . phi`` with ``phi`` from :func:`reference_features.reference_features`.
  Its values are ``x * phase`` and ``x * (24 - phase)``, so the dot product is already in *eval
  units* (centipawns x 24), from the side to move's view: the kernel's exact integer.
* **Full-width plies** (``depth > 0``): every legal move. No legal move: mated
  (``-(MATE - ply)``) in check, else stalemate (0).
* **Quiescence** (``depth <= 0``): a side in check tries every legal evasion and, with none, is
  mated; it may not stand pat. A side not in check stands pat on the static score or tries
  queen promotions (capturing or not; never under-promotions) and captures that are not
  promotions, en passant included, whose static exchange evaluation (:func:`see`) is >= 0.
  With nothing to try it keeps the stand-pat score (quiescence does not detect stalemate).
* **Draws by rule**, at every node but the root: a halfmove clock >= 100 scores 0 unless the
  side to move is checkmated (then the mate score); so does any repetition of an earlier
  position (python-chess ``is_repetition(2)`` over the board's move stack: the search path and
  whatever game history the caller's board carries).
* **Horizon**: a node at ply >= ``MAX_PLY`` is scored by its static score.

Two searchers implement that tree: :meth:`Oracle.minimax`, plain minimax without pruning
(exact; its cost is exponential in the captures on the board, so only for small trees), and
:meth:`Oracle.value`, a textbook fail-soft negamax alpha-beta called with a full window, which
returns the exact minimax value (Knuth & Moore, 1975) whatever the move order; the tests check
the two agree. :meth:`Oracle.check_line` verifies that a principal variation is an optimal line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import chess

from tests.oracles.reference_features import position_key, remembered_features

#: Checkmate scores ``-(MATE - ply)`` for the side mated (``search/tree/alphabeta.py`` contract).
MATE = 1 << 32
#: Greater than any score.
INF = 1 << 40
#: Nodes this many plies below the root are scored statically (the kernel's stack depth).
MAX_PLY = 64
#: Piece values of the static exchange evaluation (``search/tree/quiescence.py`` docstring: 100, 300,
#: 300, 500, 900; the king counts as a piece too valuable to give: 20000).
SEE_VALUES: dict[chess.PieceType, int] = {
    chess.PAWN: 100,
    chess.KNIGHT: 300,
    chess.BISHOP: 300,
    chess.ROOK: 500,
    chess.QUEEN: 900,
    chess.KING: 20000,
}


def see(board: chess.Board, move: chess.Move) -> int:
    """Static exchange evaluation of ``move`` (a capture or a promotion) in centipawns, from
    the mover's view: the material balance of the best sequence of captures on the target
    square, each side free to stop after any capture (the swap-list algorithm).

    The pieces are really taken off a copy of the board, so that sliders behind a piece that
    has captured (x-rays) start attacking the square; python-chess ``attackers`` finds them.
    Rules (the kernel's docstring and, for the last three, its code): pins and checks are
    ignored; each side recaptures with its least valuable attacker (pawn, knight, bishop, rook,
    queen, king in that order), the lowest square first among equals; a promotion by ``move``
    itself counts the new piece; a pawn recapturing on the last rank counts as a pawn.
    """
    b = board.copy(stack=False)
    mover = b.piece_at(move.from_square)
    assert mover is not None, (board.fen(), move)
    to = move.to_square
    if b.is_en_passant(move):
        b.remove_piece_at(chess.square(chess.square_file(to), chess.square_rank(move.from_square)))
        first_gain = SEE_VALUES[chess.PAWN]
    else:
        victim = b.piece_at(to)
        first_gain = SEE_VALUES[victim.piece_type] if victim is not None else 0
    standing = mover.piece_type
    if move.promotion:
        first_gain += SEE_VALUES[move.promotion] - SEE_VALUES[chess.PAWN]
        standing = move.promotion
    b.remove_piece_at(move.from_square)
    b.set_piece_at(to, chess.Piece(standing, mover.color))
    # swap[d]: the material the side making capture d has won if the exchange stops there
    swap = [first_gain]
    side = not mover.color
    while True:
        attackers = b.attackers(side, to)
        if not attackers:
            break
        sq = min(attackers, key=lambda s: (b.piece_type_at(s), s))
        swap.append(SEE_VALUES[standing] - swap[-1])
        standing = b.piece_type_at(sq)  # type: ignore[assignment]
        b.remove_piece_at(sq)
        b.set_piece_at(to, chess.Piece(standing, side))
        side = not side
    # back up: the side to capture at d either stops (keeping -swap[d - 1] for itself) or
    # captures (getting swap[d] as backed up)
    for d in range(len(swap) - 1, 0, -1):
        swap[d - 1] = -max(-swap[d - 1], swap[d])
    return swap[0]


def quiescence_moves(board: chess.Board) -> list[chess.Move]:
    """The moves quiescence tries: every evasion in check; else queen promotions and the
    captures (not promotions) with :func:`see` >= 0."""
    if board.is_check():
        return list(board.legal_moves)
    return [
        m for m in board.legal_moves
        if m.promotion == chess.QUEEN
        or (m.promotion is None and board.is_capture(m) and see(board, m) >= 0)
    ]


def _mate_or_draw_by_rule(board: chess.Board, ply: int) -> int | None:
    """The score the fifty-move rule or a repetition gives a node (not the root), or None."""
    if board.halfmove_clock >= 100:
        return -(MATE - ply) if board.is_checkmate() else 0
    if board.is_repetition(2):
        return 0
    return None


def _capture_order(board: chess.Board, move: chess.Move) -> tuple[int, int]:
    """Sort key trying captures of valuable pieces by cheap pieces first (speed only: the
    value of a full-window alpha-beta does not depend on the order)."""
    if board.is_en_passant(move):
        victim = chess.PAWN
    else:
        victim = board.piece_type_at(move.to_square) or 0
    promo = move.promotion or 0
    attacker = board.piece_type_at(move.from_square) or 0
    return (-(10 * victim + promo), attacker)


class Oracle:
    """The kernel's search tree evaluated slowly, for one weight vector.

    Boards are python-chess boards; their move stacks count as game history for repetitions
    (pass ``board.copy(stack=False)`` to search without history). Scores are integers in eval
    units from the side to move's view; ``ply`` is the node's distance from the root.
    """

    def __init__(self, weights: Iterable[int]) -> None:
        self.w = [int(x) for x in weights]
        self._static: dict[tuple[int, ...], int] = {}
        # per ply, the last two moves that caused a cutoff there: tried first (speed only)
        self._killers: dict[int, list[chess.Move]] = {}

    def static(self, board: chess.Board) -> int:
        """``w . phi(board)`` (features depend on the pieces and the side to move only)."""
        key = position_key(board)
        score = self._static.get(key)
        if score is None:
            indices, values = remembered_features(board)
            score = sum(self.w[i] * v for i, v in zip(indices, values))
            self._static[key] = score
        return score

    # ---- plain minimax ---------------------------------------------------------------------
    def minimax(self, board: chess.Board, depth: int, ply: int = 0) -> int:
        """Plain minimax value (no pruning) of ``board`` searched ``depth`` plies + quiescence.

        Values of nodes whose halfmove clock is 0 (just after a capture or pawn move) are
        memoised by position, remaining depth (all quiescence depths alike) and ply: nothing
        before an irreversible move can repeat below it, so such a value depends on nothing
        else. The memo changes no value, only the time."""
        b = board.copy()
        return self._minimax(b, depth, ply, {})

    def _minimax(self, b: chess.Board, depth: int, ply: int, memo: dict[tuple[object, ...], int]) -> int:
        key = None
        if ply > 0 and b.halfmove_clock == 0:
            key = (b.board_fen(), b.turn, b.castling_rights, b.ep_square, max(depth, 0), ply)
            if key in memo:
                return memo[key]
        settled, best, moves = self._node(b, depth, ply)
        if not settled:
            for move in moves:
                b.push(move)
                best = max(best, -self._minimax(b, depth - 1, ply + 1, memo))
                b.pop()
        if key is not None:
            memo[key] = best
        return best

    def _node(self, b: chess.Board, depth: int, ply: int) -> tuple[bool, int, list[chess.Move]]:
        """A node before its moves are tried: ``(settled, score, moves)``. A settled node's
        score is its value (a rule's verdict, the horizon's static score, mate or stalemate);
        otherwise ``score`` is the stand-pat score (quiescence, not in check) or ``-INF``, and
        ``moves`` are the moves the search tries there."""
        if ply > 0:
            verdict = _mate_or_draw_by_rule(b, ply)
            if verdict is not None:
                return True, verdict, []
        if ply >= MAX_PLY:
            return True, self.static(b), []
        checked = b.is_check()
        if depth <= 0 and not checked:
            return False, self.static(b), quiescence_moves(b)
        moves = list(b.legal_moves)
        if not moves:
            return True, (-(MATE - ply) if checked else 0), []
        return False, -INF, moves

    # ---- alpha-beta ------------------------------------------------------------------------
    def value(self, board: chess.Board, depth: int, ply: int = 0) -> int:
        """Exact value of ``board`` searched ``depth`` plies + quiescence (full-window
        alpha-beta)."""
        b = board.copy()
        return self._alphabeta(b, depth, ply, -INF, INF)

    def _alphabeta(self, b: chess.Board, depth: int, ply: int, alpha: int, beta: int) -> int:
        settled, best, moves = self._node(b, depth, ply)
        if settled or best >= beta:  # a rule, the horizon, mate, or a stand pat that fails high
            return best
        alpha = max(alpha, best)
        killers = self._killers.setdefault(ply, [])
        moves.sort(key=lambda m: (killers.index(m) if m in killers else 2, _capture_order(b, m)))
        for move in moves:
            b.push(move)
            v = -self._alphabeta(b, depth - 1, ply + 1, -beta, -alpha)
            b.pop()
            best = max(best, v)
            alpha = max(alpha, v)
            if alpha >= beta:
                if move in killers:
                    killers.remove(move)
                killers.insert(0, move)
                del killers[2:]
                break
        return best

    # ---- principal variations --------------------------------------------------------------
    def check_line(self, board: chess.Board, depth: int, score: int, line: Sequence[chess.Move]) -> str:
        """Check that ``line`` from ``board`` is an optimal line of a ``depth``-ply search whose
        value is ``score``, and return what ends it: ``"eval"`` (the score is the last node's
        static score), ``"mate"`` or ``"draw"`` (a rule's verdict). Raises AssertionError.

        Every node on the line must have the value ``score`` from the root side's view (the
        sign alternates), every move must be one the search tries at its node (a legal move,
        in quiescence one of :func:`quiescence_moves`), and the last node must be scored by
        itself: statically (a quiescence node not in check standing pat), or by a rule.
        """
        b = board.copy()
        for ply, move in enumerate(line):
            want = score if ply % 2 == 0 else -score
            got = self.value(b, depth - ply, ply)
            assert got == want, f"{b.fen()}: node {ply} of the line is worth {got}, not {want}"
            if ply > 0:
                assert _mate_or_draw_by_rule(b, ply) is None, f"{b.fen()}: the line goes on after a draw"
            tried = list(b.legal_moves) if depth - ply > 0 else quiescence_moves(b)
            assert move in tried, f"{b.fen()}: {move.uci()} is not searched at node {ply}"
            b.push(move)
        ply = len(line)
        want = score if ply % 2 == 0 else -score
        assert self.value(b, depth - ply, ply) == want, f"{b.fen()}: the last node is worth another score"
        verdict = _mate_or_draw_by_rule(b, ply) if ply > 0 else None
        if verdict is not None:
            assert verdict == want
            return "mate" if verdict != 0 else "draw"
        if not any(b.legal_moves) and (depth - ply > 0 or b.is_check()):
            assert want == (-(MATE - ply) if b.is_check() else 0)
            return "mate" if b.is_check() else "draw"
        assert depth - ply <= 0 and not b.is_check(), f"{b.fen()}: the line stops inside the full-width plies"
        assert self.static(b) == want, f"{b.fen()}: the last node's static score is not the value"
        return "eval"
