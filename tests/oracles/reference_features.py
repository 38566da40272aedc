"""A slow, plain-Python feature extractor: the oracle for the numba one.

Written from ``docs/features.md`` alone, on top of python-chess, with loops over squares and
pieces rather than bitboard tricks, so that it shares no code (and hopefully no mistakes)
with ``search/evaluation/feature_kernels.py``. Only the catalogue (names, their order, PHASE_MAX) is imported:
the catalogue is data. Terms are looked up by name, not by the catalogue's offset constants.

Usage::

    indices, values = reference_features(chess.Board(fen))

gives the same sorted (index, value) lists as ``search.evaluation.evaluation_api.features(from_chess(board))``.
"""

from __future__ import annotations

from collections import Counter

import chess

from search.params.catalog import BASE_NAMES, N_BASE, PHASE_MAX

BASE_INDEX: dict[str, int] = {name: i for i, name in enumerate(BASE_NAMES)}

PIECE_WORDS = {
    chess.PAWN: "pawn",
    chess.KNIGHT: "knight",
    chess.BISHOP: "bishop",
    chess.ROOK: "rook",
    chess.QUEEN: "queen",
    chess.KING: "king",
}
MOBILE_PIECES = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
NON_KING_PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)


def relative_rank(square: chess.Square, color: chess.Color) -> int:
    """Rank index 0..7 of ``square`` seen from ``color``'s side of the board."""
    rank = chess.square_rank(square)
    return rank if color == chess.WHITE else 7 - rank


def relative_square(square: chess.Square, color: chess.Color) -> chess.Square:
    """The square for White, the square with its rank mirrored for Black."""
    return square if color == chess.WHITE else square ^ 56


def square_from_relative(file: int, rel_rank: int, color: chess.Color) -> chess.Square:
    """The square on ``file`` at relative rank ``rel_rank`` (both 0..7) for ``color``."""
    rank = rel_rank if color == chess.WHITE else 7 - rel_rank
    return chess.square(file, rank)


def stop_square(square: chess.Square, color: chess.Color) -> chess.Square | None:
    """One square forward of ``square`` for ``color``, or None off the board."""
    rel = relative_rank(square, color)
    if rel == 7:
        return None
    return square_from_relative(chess.square_file(square), rel + 1, color)


def pawn_attacks(square: chess.Square, color: chess.Color) -> set[chess.Square]:
    """The (up to two) squares diagonally forward of a ``color`` pawn on ``square``."""
    out: set[chess.Square] = set()
    rel = relative_rank(square, color)
    if rel == 7:
        return out
    file = chess.square_file(square)
    for df in (-1, 1):
        if 0 <= file + df <= 7:
            out.add(square_from_relative(file + df, rel + 1, color))
    return out


def piece_attacks(board: chess.Board, square: chess.Square) -> set[chess.Square]:
    """Squares attacked by the piece on ``square`` per the doc: pins ignored, sliders stop at
    (and include) the first occupied square; pawns attack diagonally forward."""
    piece = board.piece_at(square)
    assert piece is not None
    if piece.piece_type == chess.PAWN:
        return pawn_attacks(square, piece.color)
    return set(board.attacks(square))  # python-chess: pseudo-attacks, blockers included


def colour_counts(board: chess.Board, color: chess.Color) -> Counter[str]:
    """Base-term counts (by base name) of one colour, from that colour's point of view."""
    enemy = not color
    counts: Counter[str] = Counter()

    def pieces(piece_type: chess.PieceType, c: chess.Color) -> list[chess.Square]:
        return list(board.pieces(piece_type, c))

    own_pawns = pieces(chess.PAWN, color)
    enemy_pawns = pieces(chess.PAWN, enemy)
    enemy_pawn_attacks: set[chess.Square] = set()
    for sq in enemy_pawns:
        enemy_pawn_attacks |= pawn_attacks(sq, enemy)
    own_pawn_attacks: set[chess.Square] = set()
    for sq in own_pawns:
        own_pawn_attacks |= pawn_attacks(sq, color)

    def own_piece_on(sq: chess.Square) -> bool:
        piece = board.piece_at(sq)
        return piece is not None and piece.color == color

    def pawns_on_file(pawn_squares: list[chess.Square], file: int) -> list[chess.Square]:
        return [p for p in pawn_squares if chess.square_file(p) == file]

    def file_kind(file: int) -> str:
        """``open_file`` (no pawn), ``semiopen_file`` (enemy pawns only) or ``""``, for ``color``."""
        if pawns_on_file(own_pawns, file):
            return ""
        return "semiopen_file" if pawns_on_file(enemy_pawns, file) else "open_file"

    # material and piece-square tables
    for piece_type, word in PIECE_WORDS.items():
        for sq in pieces(piece_type, color):
            if piece_type != chess.KING:
                counts[f"material.{word}"] += 1
            counts[f"pst.{word}.{chess.SQUARE_NAMES[relative_square(sq, color)]}"] += 1

    # pawn structure
    for p in own_pawns:
        pf, pr = chess.square_file(p), relative_rank(p, color)
        same_file = [q for q in own_pawns if q != p and chess.square_file(q) == pf]
        adjacent = [q for q in own_pawns if abs(chess.square_file(q) - pf) == 1]
        if any(relative_rank(q, color) > pr for q in same_file):
            counts["pawns.doubled"] += 1
        isolated = not adjacent
        if isolated:
            counts["pawns.isolated"] += 1
        stop = stop_square(p, color)
        if (
            not isolated
            and not any(relative_rank(q, color) <= pr for q in adjacent)
            and stop is not None
            and stop in enemy_pawn_attacks
        ):
            counts["pawns.backward"] += 1
        if 1 <= pr <= 6:
            blockers = [
                e for e in enemy_pawns
                if abs(chess.square_file(e) - pf) <= 1 and relative_rank(e, color) > pr
            ]
            if not blockers:
                counts[f"pawns.passed.rank{pr + 1}"] += 1
                if stop is not None and board.piece_at(stop) is None:
                    counts[f"pawns.passed_free.rank{pr + 1}"] += 1
        if any(chess.square_rank(q) == chess.square_rank(p) for q in adjacent):
            counts["pawns.phalanx"] += 1
        if p in own_pawn_attacks:
            counts["pawns.supported"] += 1

    # mobility
    for piece_type in MOBILE_PIECES:
        for sq in pieces(piece_type, color):
            m = sum(
                1 for t in piece_attacks(board, sq)
                if not own_piece_on(t) and t not in enemy_pawn_attacks
            )
            counts[f"mobility.{PIECE_WORDS[piece_type]}.{m}"] += 1

    # king: shelter of the own king
    king = board.king(color)
    if king is not None:
        kf, kr = chess.square_file(king), relative_rank(king, color)
        files = [f for f in (kf - 1, kf, kf + 1) if 0 <= f <= 7]
        own_pawn = chess.Piece(chess.PAWN, color)
        for f in files:
            if kr + 1 <= 7 and board.piece_at(square_from_relative(f, kr + 1, color)) == own_pawn:
                counts["king.shield1"] += 1
            elif kr + 2 <= 7 and board.piece_at(square_from_relative(f, kr + 2, color)) == own_pawn:
                counts["king.shield2"] += 1
            if kind := file_kind(f):
                counts[f"king.{kind}"] += 1

    # king: attacks on the enemy king zone
    enemy_king = board.king(enemy)
    if enemy_king is not None:
        zone = {enemy_king} | set(board.attacks(enemy_king))
        total = 0
        for piece_type in NON_KING_PIECES:
            for sq in pieces(piece_type, color):
                if piece_attacks(board, sq) & zone:
                    counts[f"king.zone_attackers.{PIECE_WORDS[piece_type]}"] += 1
                    total += 1
        if total >= 1:
            counts[f"king.zone_attack_count.{min(total, 5)}"] += 1

    # pieces
    if len(pieces(chess.BISHOP, color)) >= 2:
        counts["pieces.bishop_pair"] += 1
    for sq in pieces(chess.ROOK, color):
        f = chess.square_file(sq)
        if kind := file_kind(f):
            counts[f"pieces.rook_{kind}"] += 1
        if relative_rank(sq, color) == 6:
            counts["pieces.rook_seventh"] += 1
    for sq in pieces(chess.KNIGHT, color):
        nf, nr = chess.square_file(sq), relative_rank(sq, color)
        if 3 <= nr <= 5 and sq in own_pawn_attacks and not any(
            abs(chess.square_file(e) - nf) == 1 and relative_rank(e, color) > nr for e in enemy_pawns
        ):
            counts["pieces.knight_outpost"] += 1

    own_minor_attacks: set[chess.Square] = set()
    for piece_type in (chess.KNIGHT, chess.BISHOP):
        for sq in pieces(piece_type, color):
            own_minor_attacks |= piece_attacks(board, sq)
    own_rook_attacks: set[chess.Square] = set()
    for sq in pieces(chess.ROOK, color):
        own_rook_attacks |= piece_attacks(board, sq)
    for piece_type in MOBILE_PIECES:
        for sq in pieces(piece_type, enemy):
            if sq in own_pawn_attacks:
                counts["pieces.threat_by_pawn"] += 1
            if piece_type in (chess.ROOK, chess.QUEEN) and sq in own_minor_attacks:
                counts["pieces.threat_by_minor"] += 1
            if piece_type == chess.QUEEN and sq in own_rook_attacks:
                counts["pieces.threat_by_rook"] += 1

    if board.turn == color:
        counts["pieces.tempo"] += 1

    # attacks and defends: one count per (own piece, attacked non-king piece) pair
    for attacker_type, attacker_word in PIECE_WORDS.items():
        for sq in pieces(attacker_type, color):
            for target_sq in sorted(piece_attacks(board, sq)):
                target = board.piece_at(target_sq)
                if target is None or target.piece_type == chess.KING:
                    continue
                kind = "defends" if target.color == color else "attacks"
                counts[f"{kind}.{attacker_word}.{PIECE_WORDS[target.piece_type]}"] += 1

    unknown = set(counts) - set(BASE_INDEX)
    assert not unknown, f"reference produced names outside the catalogue: {sorted(unknown)}"
    return counts


def reference_phase(board: chess.Board) -> int:
    """``min(24, N + B + 2 R + 4 Q)`` over both colours."""
    raw = 0
    for color in (chess.WHITE, chess.BLACK):
        raw += len(board.pieces(chess.KNIGHT, color)) + len(board.pieces(chess.BISHOP, color))
        raw += 2 * len(board.pieces(chess.ROOK, color)) + 4 * len(board.pieces(chess.QUEEN, color))
    return min(PHASE_MAX, raw)


def reference_features(board: chess.Board) -> tuple[list[int], list[int]]:
    """Sorted feature indices and their integer values, side to move's point of view.

    Parameters
    ----------
    board : chess.Board
        Any position with pieces python-chess can hold (legality is not required; a
        missing king simply contributes no king terms).

    Returns
    -------
    indices, values : list[int], list[int]
        Increasing catalogue indices (0 .. N_FEATURES - 1) and the non-zero tapered values
        ``x * phase`` (middle-game copy) and ``x * (24 - phase)`` (end-game copy), where
        ``x`` is White's count minus Black's, negated when Black is to move.
    """
    white = colour_counts(board, chess.WHITE)
    black = colour_counts(board, chess.BLACK)
    sign = 1 if board.turn == chess.WHITE else -1
    phase = reference_phase(board)
    entries: list[tuple[int, int]] = []
    for name, i in BASE_INDEX.items():
        x = sign * (white[name] - black[name])
        if x == 0:
            continue
        if x * phase != 0:
            entries.append((i, x * phase))
        if x * (PHASE_MAX - phase) != 0:
            entries.append((i + N_BASE, x * (PHASE_MAX - phase)))
    entries.sort()
    return [i for i, _ in entries], [v for _, v in entries]


def position_key(board: chess.Board) -> tuple[int, ...]:
    """What :func:`reference_features` reads of ``board``: the pieces and the side to move."""
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            board.occupied_co[chess.WHITE], int(board.turn))


#: :func:`remembered_features`' table, emptied when it reaches :data:`MEMO_LIMIT` positions
_MEMO: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}
MEMO_LIMIT = 1 << 18


def remembered_features(board: chess.Board) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`reference_features` of ``board`` as tuples, remembered by :func:`position_key` for
    the whole test process: the search oracles evaluate the same positions in test after test
    (the value is the same; only the time changes)."""
    key = position_key(board)
    found = _MEMO.get(key)
    if found is None:
        if len(_MEMO) >= MEMO_LIMIT:
            _MEMO.clear()
        indices, values = reference_features(board)
        found = _MEMO[key] = (tuple(indices), tuple(values))
    return found
