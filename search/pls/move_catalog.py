"""The move model's feature catalogue: every feature of a move in its position, declared once.

The move-probability model (:mod:`search.pls.move_model`, ``docs/move-model.md``) scores each legal
move ``m`` of a position as the sum of the weights of its active features and turns the scores
into probabilities by a softmax over the legal moves. Its features come in *groups*: each group
is a categorical property of the move (the moving piece and its destination, what it captures,
the exchange value on the destination, ...) that takes at most one value per move, so a move
has at most one active feature per group, each with value 1. A move is then a row of
:data:`N_GROUPS` *slots*: slot ``g`` holds the index of group ``g``'s active feature, or -1
when the group does not apply (a quiet move has no ``capture``).

Squares are seen from the mover's side (a square's rank mirrored when Black moves), so that
one weight serves both colours; piece types are ``pawn`` .. ``king`` (0..5, as in
:mod:`search.core.board`). The exact definition of each group is in ``docs/move-model.md``; this
module declares their names and categories, in order (:data:`GROUPS`). Everything else is
derived from it: offsets, :data:`N_MOVE_FEATURES`, the names of the weights files and
:data:`MOVE_LAYOUT_HASH`, which every move-model file carries.
"""

from __future__ import annotations

import hashlib
from itertools import accumulate

PIECE_NAMES = ("pawn", "knight", "bishop", "rook", "queen", "king")
SQUARE_NAMES = tuple(f + r for r in "12345678" for f in "abcdefgh")
#: the victims a capture can take (a king is never captured)
VICTIM_NAMES = PIECE_NAMES[:5]
#: static-exchange buckets (centipawns, mover's view): the upper bound of each bucket but the last
SEE_EDGES = (-500, -250, -1, 0, 249, 499)
SEE_BUCKET_NAMES = ("le-500", "-499..-250", "-249..-1", "0", "1..249", "250..499", "ge500")
#: the game phase (``search.params.catalog.PHASE_WEIGHTS`` summed over both colours, capped at 24) at or
#: below which a position counts as an end game for the ``endgame_to`` group
ENDGAME_PHASE = 8
#: the linear weight set (built in) whose static evaluation the ``eval_change``, ``exchange``
#: and ``exchange_gap`` groups measure
EVALUATION = "gm"
# bucket edges, centipawns; a value falls in bucket k when exactly k edges lie below it
#: the change of the static evaluation by the move (mover's view)
CHANGE_EDGES = (-300, -150, -80, -40, -20, -10, -5, 0, 5, 10, 20, 40, 80, 150, 300)
#: the best static exchange value of a capture available after the move
CAPTURE_EDGES = (0, 99, 249, 499, 899)
#: the evaluation change less the opponent's best capture after the move
EXCHANGE_EDGES = (-500, -300, -200, -150, -100, -75, -50, -40, -30, -25, -20, -15, -10, -5, 0, 5, 10, 15, 20, 25, 30,
                  40, 50, 75, 100, 150, 200, 300, 500)
#: how far the move's ``exchange`` value lies below the best one among the legal moves
GAP_EDGES = (0, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500)


def bucket_names(edges: tuple[int, ...]) -> tuple[str, ...]:
    """Names of the buckets of ``edges``: ``le<first>``, ``(<a>,<b>]`` .., ``gt<last>``."""
    return (f"le{edges[0]}", *(f"({a},{b}]" for a, b in zip(edges, edges[1:])), f"gt{edges[-1]}")


def _per_piece(labels: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{p}.{label}" for p in PIECE_NAMES for label in labels)


#: (group, the names of its categories in index order); the definitions: docs/move-model.md
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the moving piece and its destination / origin square (mover's view)
    ("piece_to", _per_piece(SQUARE_NAMES)),
    ("piece_from", _per_piece(SQUARE_NAMES)),
    # a capture: moving piece x victim (en passant: pawn x pawn)
    ("capture", _per_piece(VICTIM_NAMES)),
    # a promotion: the new piece
    ("promotion", ("knight", "bishop", "rook", "queen")),
    # the move gives check: by the piece that lands on the destination, or by another one
    ("check", (*PIECE_NAMES, "other")),
    # the static exchange value of the move, for captures and for other moves
    ("see", tuple(f"{kind}.{b}" for kind in ("quiet", "capture") for b in SEE_BUCKET_NAMES)),
    # the destination is attacked by the opponent: moving piece x least valuable attacker
    ("to_attacked", _per_piece(tuple(f"by_{p}" for p in PIECE_NAMES))),
    # the destination is defended by the mover's other pieces: moving piece x 1 or 2+ defenders
    ("to_defended", _per_piece(("1", "2+"))),
    # the moving piece is attacked where it stands: moving piece x least valuable attacker
    ("from_attacked", _per_piece(tuple(f"by_{p}" for p in PIECE_NAMES))),
    # the moving piece is attacked and undefended, or attacked by a less valuable piece
    ("from_hanging", PIECE_NAMES),
    ("castle", ("king_side", "queen_side")),
    # after the move, the piece on the destination attacks 1 or 2+ enemy knights, bishops,
    # rooks or queens that are worth more than it or undefended
    ("threats", _per_piece(("1", "2+"))),
    # a pawn (not promoting) that stands passed on its destination: the destination's rank
    ("passed", tuple(f"rank{r}" for r in range(1, 9))),
    # piece_to again, only in end games (phase <= ENDGAME_PHASE)
    ("endgame_to", _per_piece(SQUARE_NAMES)),
    # the change of the static evaluation (EVALUATION) by the move, mover's view
    ("eval_change", bucket_names(CHANGE_EDGES)),
    # the opponent's best capture after the move, by static exchange
    ("reply_capture", bucket_names(CAPTURE_EDGES)),
    # the mover's best capture after the move if it could move again (not after a check)
    ("own_threat", bucket_names(CAPTURE_EDGES)),
    # eval_change less reply_capture: a one-reply guess at the move's value
    ("exchange", bucket_names(EXCHANGE_EDGES)),
    # the best exchange value among the position's legal moves less this move's
    ("exchange_gap", bucket_names(GAP_EDGES)),
)

GROUP_NAMES = tuple(name for name, _ in GROUPS)
GROUP_SIZES = tuple(len(labels) for _, labels in GROUPS)
#: first feature index of each group
GROUP_OFFSETS = tuple(accumulate(GROUP_SIZES, initial=0))[:-1]
N_GROUPS = len(GROUPS)
N_MOVE_FEATURES = sum(GROUP_SIZES)
MOVE_FEATURE_NAMES = tuple(f"{name}.{label}" for name, labels in GROUPS for label in labels)
MOVE_FEATURE_INDEX = {name: i for i, name in enumerate(MOVE_FEATURE_NAMES)}
GROUP_INDEX = {name: g for g, name in enumerate(GROUP_NAMES)}
#: the groups known before the move is made (no child board, no evaluation, no capture scan):
#: the features of the cheap *pre-move model* that splits the probability near the leaves of the
#: mixed search (docs/move-model.md, "The mixed search")
PREMOVE_GROUPS = ("piece_to", "piece_from", "capture", "promotion", "see", "to_attacked", "to_defended",
                  "from_attacked", "from_hanging", "castle", "endgame_to")

# the kernels' slot numbers and offsets, as plain ints (compile-time constants)
(G_PIECE_TO, G_PIECE_FROM, G_CAPTURE, G_PROMOTION, G_CHECK, G_SEE, G_TO_ATTACKED, G_TO_DEFENDED, G_FROM_ATTACKED,
 G_FROM_HANGING, G_CASTLE, G_THREATS, G_PASSED, G_ENDGAME_TO, G_EVAL_CHANGE, G_REPLY_CAPTURE, G_OWN_THREAT, G_EXCHANGE,
 G_EXCHANGE_GAP) = range(N_GROUPS)
(OFF_PIECE_TO, OFF_PIECE_FROM, OFF_CAPTURE, OFF_PROMOTION, OFF_CHECK, OFF_SEE, OFF_TO_ATTACKED, OFF_TO_DEFENDED,
 OFF_FROM_ATTACKED, OFF_FROM_HANGING, OFF_CASTLE, OFF_THREATS, OFF_PASSED, OFF_ENDGAME_TO, OFF_EVAL_CHANGE,
 OFF_REPLY_CAPTURE, OFF_OWN_THREAT, OFF_EXCHANGE, OFF_EXCHANGE_GAP) = GROUP_OFFSETS
if GROUP_NAMES != ("piece_to", "piece_from", "capture", "promotion", "check", "see", "to_attacked", "to_defended",
                   "from_attacked", "from_hanging", "castle", "threats", "passed", "endgame_to", "eval_change",
                   "reply_capture", "own_threat", "exchange", "exchange_gap"):
    raise RuntimeError("search/pls/move_catalog.py: the slot constants no longer follow GROUPS")  # pragma: no cover
if len(SEE_BUCKET_NAMES) != len(SEE_EDGES) + 1:
    raise RuntimeError("search/pls/move_catalog.py: SEE buckets and edges disagree")  # pragma: no cover


def layout_hash(names: tuple[str, ...]) -> str:
    """First 16 hex digits of the SHA-256 of the feature names, one per line."""
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]


#: the hash every move-model file carries: a file of another layout is refused
MOVE_LAYOUT_HASH = layout_hash(MOVE_FEATURE_NAMES)


def see_bucket(value: int) -> int:
    """The index of the bucket of a static exchange value (centipawns) in :data:`SEE_BUCKET_NAMES`."""
    for i, edge in enumerate(SEE_EDGES):
        if value <= edge:
            return i
    return len(SEE_EDGES)


__all__ = ["CAPTURE_EDGES", "CHANGE_EDGES", "ENDGAME_PHASE", "EVALUATION", "EXCHANGE_EDGES", "GAP_EDGES", "GROUPS", "GROUP_INDEX", "GROUP_NAMES", "GROUP_OFFSETS", "GROUP_SIZES",
           "MOVE_FEATURE_INDEX", "MOVE_FEATURE_NAMES", "MOVE_LAYOUT_HASH", "N_GROUPS", "N_MOVE_FEATURES", "PREMOVE_GROUPS",
           "SEE_BUCKET_NAMES", "SEE_EDGES", "bucket_names", "layout_hash", "see_bucket"]
