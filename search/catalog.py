"""The feature catalogue: every evaluation term declared once, as data.

The evaluator is linear: a position ``p`` has a sparse feature vector ``phi(p)`` and its
static score is ``w . phi(p) / PHASE_MAX`` centipawns, from the side to move's point of view,
for an integer weight vector ``w`` of length :data:`N_FEATURES`. The exact definition of each
term is in ``docs/features.md``; this module only names and numbers them.

Each *base* term exists twice: a middle-game copy at index ``i`` and an end-game copy at
``i + N_BASE``. With ``phase`` in ``0..PHASE_MAX`` (from the remaining material) and a term's
net count ``x`` (own minus opponent's, from the side to move's view), the middle-game copy
has value ``x * phase`` and the end-game copy ``x * (PHASE_MAX - phase)``: a tapered
evaluation whose score stays linear in the weights.

Names are ``<stage>.<group>.<term>[.<label>]``, e.g. ``mg.pst.knight.c3`` or
``eg.pawns.passed.rank6``. Groups (the unit of ``--train``): ``material``, ``pst``,
``pawns``, ``mobility``, ``king``, ``pieces``, ``attacks``, ``defends``.

Weights files of an earlier catalogue listed in :data:`LEGACY_CATALOGS` are still read (see
:func:`legacy_feature_names`): every feature they name keeps its value, and the features added
since read as 0.
"""

from __future__ import annotations

import hashlib

#: game-phase weight of each piece type (pawn, knight, bishop, rook, queen, king);
#: the start position has 4 + 4 + 8 + 8 = 24.
PHASE_WEIGHTS = (0, 1, 1, 2, 4, 0)
PHASE_MAX = 24

PIECE_NAMES = ("pawn", "knight", "bishop", "rook", "queen", "king")
SQUARE_NAMES = tuple(f + r for r in "12345678" for f in "abcdefgh")
GROUPS = ("material", "pst", "pawns", "mobility", "king", "pieces", "attacks", "defends")
STAGES = ("mg", "eg")

#: (group, term, labels): a term with labels is one base feature per label, in order.
TERMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("material", "material", PIECE_NAMES[:5]),
    *(("pst", f"pst.{p}", SQUARE_NAMES) for p in PIECE_NAMES),
    ("pawns", "pawns.doubled", ()),
    ("pawns", "pawns.isolated", ()),
    ("pawns", "pawns.backward", ()),
    ("pawns", "pawns.passed", tuple(f"rank{r}" for r in range(2, 8))),
    ("pawns", "pawns.passed_free", tuple(f"rank{r}" for r in range(2, 8))),
    ("pawns", "pawns.phalanx", ()),
    ("pawns", "pawns.supported", ()),
    ("mobility", "mobility.knight", tuple(str(n) for n in range(9))),
    ("mobility", "mobility.bishop", tuple(str(n) for n in range(14))),
    ("mobility", "mobility.rook", tuple(str(n) for n in range(15))),
    ("mobility", "mobility.queen", tuple(str(n) for n in range(28))),
    ("king", "king.shield1", ()),
    ("king", "king.shield2", ()),
    ("king", "king.open_file", ()),
    ("king", "king.semiopen_file", ()),
    ("king", "king.zone_attackers", PIECE_NAMES[:5]),
    ("king", "king.zone_attack_count", tuple(str(n) for n in range(1, 6))),
    ("pieces", "pieces.bishop_pair", ()),
    ("pieces", "pieces.rook_open_file", ()),
    ("pieces", "pieces.rook_semiopen_file", ()),
    ("pieces", "pieces.rook_seventh", ()),
    ("pieces", "pieces.knight_outpost", ()),
    ("pieces", "pieces.threat_by_pawn", ()),
    ("pieces", "pieces.threat_by_minor", ()),
    ("pieces", "pieces.threat_by_rook", ()),
    ("pieces", "pieces.tempo", ()),
    # attacks.<attacker>.<target>: (own attacker, attacked enemy piece) pairs; defends likewise
    # with own pieces as the targets. Kings are attackers and defenders, never targets.
    *(("attacks", f"attacks.{p}", PIECE_NAMES[:5]) for p in PIECE_NAMES),
    *(("defends", f"defends.{p}", PIECE_NAMES[:5]) for p in PIECE_NAMES),
)


def _base_names() -> tuple[list[str], list[str], dict[str, int]]:
    names: list[str] = []
    groups: list[str] = []
    starts: dict[str, int] = {}
    for group, term, labels in TERMS:
        starts[term] = len(names)
        for label in labels or ("",):
            names.append(f"{term}.{label}" if label else term)
            groups.append(group)
    return names, groups, starts


BASE_NAMES, BASE_GROUPS, TERM_START = _base_names()
N_BASE = len(BASE_NAMES)
N_FEATURES = 2 * N_BASE
FEATURE_NAMES: tuple[str, ...] = tuple(f"{s}.{n}" for s in STAGES for n in BASE_NAMES)
FEATURE_GROUPS: tuple[str, ...] = tuple(BASE_GROUPS) * 2
FEATURE_INDEX: dict[str, int] = {name: i for i, name in enumerate(FEATURE_NAMES)}



def catalog_hash(names: tuple[str, ...] | list[str]) -> str:
    """The identity of a catalogue with feature names ``names`` (in index order)."""
    return hashlib.sha256(
        ("movetuner-features-v1\n" + "\n".join(names) + f"\nphase_max={PHASE_MAX}").encode()
    ).hexdigest()[:16]


#: identity of the catalogue: weights files carry it; files of another one are refused unless
#: it is a legacy catalogue (:data:`LEGACY_CATALOGS`)
CATALOG_HASH = catalog_hash(FEATURE_NAMES)

#: Earlier catalogues whose weights files are still read: their hash -> the groups added
#: since. Such a catalogue is this one without those groups' features (same names, same
#: order); the import-time check below recomputes each hash from that derivation.
#:
#: * ``26fcb341cd55f948``: 990 features (495 base terms), before ``attacks`` and ``defends``.
LEGACY_CATALOGS: dict[str, tuple[str, ...]] = {
    "26fcb341cd55f948": ("attacks", "defends"),
}


def legacy_feature_names(old_hash: str) -> tuple[str, ...] | None:
    """The feature names, in their index order, of the legacy catalogue ``old_hash``, or None
    when ``old_hash`` is not one. Reading a file of that catalogue: every name it gives keeps
    its value, and the features of the groups added since (absent from it) are 0."""
    added = LEGACY_CATALOGS.get(old_hash)
    if added is None:
        return None
    return tuple(n for n, g in zip(FEATURE_NAMES, FEATURE_GROUPS) if g not in added)


for _old, _added in LEGACY_CATALOGS.items():
    assert catalog_hash(legacy_feature_names(_old) or ()) == _old, f"legacy catalogue {_old} is not derivable"

# Start offsets of each term, as plain ints for the numba kernels (frozen at compile time).
F_MATERIAL = TERM_START["material"]
F_PST = TERM_START["pst.pawn"]  # pst.<piece>.<square> = F_PST + 64 * piece + square
F_DOUBLED = TERM_START["pawns.doubled"]
F_ISOLATED = TERM_START["pawns.isolated"]
F_BACKWARD = TERM_START["pawns.backward"]
F_PASSED = TERM_START["pawns.passed"]  # + relative rank - 1 (rank2 .. rank7)
F_PASSED_FREE = TERM_START["pawns.passed_free"]
F_PHALANX = TERM_START["pawns.phalanx"]
F_SUPPORTED = TERM_START["pawns.supported"]
F_MOB_KNIGHT = TERM_START["mobility.knight"]
F_MOB_BISHOP = TERM_START["mobility.bishop"]
F_MOB_ROOK = TERM_START["mobility.rook"]
F_MOB_QUEEN = TERM_START["mobility.queen"]
F_SHIELD1 = TERM_START["king.shield1"]
F_SHIELD2 = TERM_START["king.shield2"]
F_KING_OPEN = TERM_START["king.open_file"]
F_KING_SEMIOPEN = TERM_START["king.semiopen_file"]
F_ZONE_ATTACKERS = TERM_START["king.zone_attackers"]  # + piece type (pawn .. queen)
F_ZONE_COUNT = TERM_START["king.zone_attack_count"]  # + min(n, 5) - 1
F_BISHOP_PAIR = TERM_START["pieces.bishop_pair"]
F_ROOK_OPEN = TERM_START["pieces.rook_open_file"]
F_ROOK_SEMIOPEN = TERM_START["pieces.rook_semiopen_file"]
F_ROOK_SEVENTH = TERM_START["pieces.rook_seventh"]
F_KNIGHT_OUTPOST = TERM_START["pieces.knight_outpost"]
F_THREAT_PAWN = TERM_START["pieces.threat_by_pawn"]
F_THREAT_MINOR = TERM_START["pieces.threat_by_minor"]
F_THREAT_ROOK = TERM_START["pieces.threat_by_rook"]
F_TEMPO = TERM_START["pieces.tempo"]
F_ATTACKS = TERM_START["attacks.pawn"]  # + 5 * attacker type (pawn .. king) + target type (pawn .. queen)
F_DEFENDS = TERM_START["defends.pawn"]  # likewise

# self-check, as Ethereal's tuner does: the offsets above must cover the catalogue exactly
assert F_ATTACKS == F_TEMPO + 1 and F_DEFENDS == F_ATTACKS + 30, (F_ATTACKS, F_DEFENDS)
assert N_BASE == 5 + 6 * 64 + 17 + 66 + 14 + 9 + 30 + 30 == F_DEFENDS + 30, N_BASE


def group_mask(groups: tuple[str, ...] | list[str]) -> list[bool]:
    """Per feature, whether it belongs to one of ``groups`` (names from :data:`GROUPS`)."""
    unknown = sorted(set(groups) - set(GROUPS))
    if unknown:
        raise ValueError(f"unknown feature group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
    wanted = set(groups)
    return [g in wanted for g in FEATURE_GROUPS]


def select(items: tuple[str, ...] | list[str]) -> list[bool]:
    """Per feature, whether it is named by one of ``items``: a group name (``material``,
    ``pst``, ...) or a feature-name prefix ending at a dot boundary (``mg.material``,
    ``eg.pst.king``, ``mg.pieces.tempo``). An item that names no feature is an error."""
    out = [False] * N_FEATURES
    for item in items:
        item = item.strip()
        if item in GROUPS:
            hits = [g == item for g in FEATURE_GROUPS]
        else:
            hits = [n == item or n.startswith(item + ".") for n in FEATURE_NAMES]
        if not any(hits):
            raise ValueError(f"{item!r} names no feature: use a group ({', '.join(GROUPS)}) "
                             "or a feature-name prefix such as mg.material or eg.pst.king")
        out = [a or b for a, b in zip(out, hits)]
    return out
