"""The feature catalogue: every evaluation term declared once, as data.

The evaluator is linear: a position ``p`` has a sparse feature vector ``phi(p)`` and its
static score is ``w . phi(p) / PHASE_MAX`` centipawns, from the side to move's point of view,
for an integer weight vector ``w`` of length :data:`N_FEATURES`. The exact definition of each
term is in ``docs/features.md``; this module declares them, once each (:data:`DECLARATIONS`,
as Ethereal's tuner declares its terms): group, name, labels, default weight and tuning
bounds, next to the phase weights and mobility ranges. Everything else is derived from it:
names, indices and the kernels' offsets (with a self-check that they tile the catalogue),
the ``material`` weight set (:func:`default_values`), the per-feature bounds for the tuners
(:func:`weight_bounds`), and the exports' tables.

Each *base* term exists twice: a middle-game copy at index ``i`` and an end-game copy at
``i + N_BASE``. With ``phase`` in ``0..PHASE_MAX`` (from the remaining material) and a term's
net count ``x`` (own minus opponent's, from the side to move's view), the middle-game copy
has value ``x * phase`` and the end-game copy ``x * (PHASE_MAX - phase)``: a tapered
evaluation whose score stays linear in the weights.

Names are ``<stage>.<group>.<term>[.<label>]``, e.g. ``mg.pst.knight.c3`` or
``eg.pawns.passed.rank6``. Groups (the unit of ``--train``): ``material``, ``pst``,
``pawns``, ``mobility``, ``king``, ``pieces``, ``attacks``, ``defends``.

An engine author's own terms join the catalogue through a plug-in file (:mod:`search.params.terms`,
``docs/own-terms.md``; ``--terms FILE`` sets ``MOVETUNER_TERMS``, read once, at this module's
import): they form one more group whose features follow every built-in one (:data:`PLUGIN_START`),
so the built-in kernels' offsets stay as they are while the names, :data:`N_FEATURES`, the
defaults, the bounds and :data:`CATALOG_HASH` follow. :data:`BUILTIN_HASH` stays the built-in
catalogue's; its files still load with a plug-in, the plug-in's features at their defaults.

Weights files of an earlier catalogue listed in :data:`LEGACY_CATALOGS` are still read (see
:func:`legacy_feature_names`): every feature they name keeps its value, and the features added
since read as 0.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import accumulate

from search.params.terms import TermPlugin, TermsFileError, active_plugin

PIECE_NAMES = ("pawn", "knight", "bishop", "rook", "queen", "king")
SQUARE_NAMES = tuple(f + r for r in "12345678" for f in "abcdefgh")
STAGES = ("mg", "eg")

#: game-phase weight of each piece type (pawn, knight, bishop, rook, queen, king): the phase of
#: a position is ``min(PHASE_MAX, sum of these over both colours' pieces)``
PHASE_WEIGHTS = (0, 1, 1, 2, 4, 0)
#: pieces of each type (pawn .. king) a side starts with
START_COUNTS = (8, 2, 2, 2, 1, 1)
#: the phase of the start position (4 + 4 + 8 + 8 = 24): the middle game's full weight
PHASE_MAX = 2 * sum(w * n for w, n in zip(PHASE_WEIGHTS, START_COUNTS))
#: the phase as docs/features.md and the exports write it: ``N + B + 2 R + 4 Q``
PHASE_FORMULA = " + ".join(f"{w} {'PNBRQK'[p]}" if w > 1 else "PNBRQK"[p]
                           for p, w in enumerate(PHASE_WEIGHTS) if w)

#: the most squares a piece of each type can reach (mobility ``m`` runs 0 .. this)
MAX_MOBILITY = {"knight": 8, "bishop": 13, "rook": 14, "queen": 27}

#: the value of each piece in the untrained start (the ``material`` weight set), centipawns
PIECE_VALUES = {"pawn": 100, "knight": 320, "bishop": 330, "rook": 500, "queen": 900}


@dataclass(frozen=True)
class Term:
    """One base term, declared once: the kernels' offsets, the names, the ``material`` weight set,
    the exports and the bounds for the tuners (:func:`weight_bounds`) come from it.

    ``labels`` give one base feature each, in order (empty: the term is one feature named
    ``name``); ``default`` is the weight of each of them (both stages) in the untrained start,
    centipawns, one value per label (or one value for a term without labels); ``bounds`` is the
    inclusive range a tuner keeps each of its weights in, centipawns.
    """

    group: str
    name: str
    labels: tuple[str, ...]
    default: tuple[int, ...]
    bounds: tuple[int, int]

    @property
    def size(self) -> int:
        """Base features of the term: one per label, or one."""
        return len(self.labels) or 1

    def feature_names(self, stage: str) -> tuple[str, ...]:
        """The term's feature names in ``stage`` (``mg`` or ``eg``), in label order."""
        return tuple(f"{stage}.{self.name}.{x}" for x in self.labels) if self.labels else (f"{stage}.{self.name}",)


@dataclass(frozen=True)
class Group:
    """A group of terms (the unit of ``--train``): ``bounds`` (inclusive, centipawns) apply to
    every weight of the group; every default is 0 unless ``defaults`` gives a term's values."""

    name: str
    bounds: tuple[int, int]
    terms: tuple[tuple[str, tuple[str, ...]], ...]
    defaults: tuple[tuple[str, tuple[int, ...]], ...] = ()


#: Tuning bounds: wide enough that neither hand-set values nor tuned ones come near them (the
#: built-in sets stay within -60 .. 130 outside material, 74 .. 966 in it), narrow enough that
#: a diverging optimiser's weights keep the meaning of their group: a piece is worth something
#: and at most three queens; a positional term is worth at most five pawns either way. All lie
#: well inside the evaluator's limit ``search.evaluation.validate.MAX_ABS_WEIGHT``.
POSITIONAL_BOUNDS = (-500, 500)
_RANKS = tuple(f"rank{r}" for r in range(2, 8))
_TARGETS = PIECE_NAMES[:5]  # kings are attackers and defenders, never targets

DECLARATIONS: tuple[Group, ...] = (
    Group("material", (0, 3000), (("material", PIECE_NAMES[:5]),),
          defaults=(("material", tuple(PIECE_VALUES[p] for p in PIECE_NAMES[:5])),)),
    Group("pst", POSITIONAL_BOUNDS, tuple((f"pst.{p}", SQUARE_NAMES) for p in PIECE_NAMES)),
    Group("pawns", POSITIONAL_BOUNDS, (
        ("pawns.doubled", ()), ("pawns.isolated", ()), ("pawns.backward", ()),
        ("pawns.passed", _RANKS), ("pawns.passed_free", _RANKS),
        ("pawns.phalanx", ()), ("pawns.supported", ()))),
    Group("mobility", POSITIONAL_BOUNDS,
          tuple((f"mobility.{p}", tuple(str(m) for m in range(top + 1))) for p, top in MAX_MOBILITY.items())),
    Group("king", POSITIONAL_BOUNDS, (
        ("king.shield1", ()), ("king.shield2", ()), ("king.open_file", ()), ("king.semiopen_file", ()),
        ("king.zone_attackers", PIECE_NAMES[:5]),
        ("king.zone_attack_count", tuple(str(n) for n in range(1, 6))))),
    Group("pieces", POSITIONAL_BOUNDS, tuple((f"pieces.{t}", ()) for t in (
        "bishop_pair", "rook_open_file", "rook_semiopen_file", "rook_seventh", "knight_outpost",
        "threat_by_pawn", "threat_by_minor", "threat_by_rook", "tempo"))),
    # attacks.<attacker>.<target>: (own attacker, attacked enemy piece) pairs; defends likewise
    # with own pieces as the targets.
    Group("attacks", POSITIONAL_BOUNDS, tuple((f"attacks.{p}", _TARGETS) for p in PIECE_NAMES)),
    Group("defends", POSITIONAL_BOUNDS, tuple((f"defends.{p}", _TARGETS) for p in PIECE_NAMES)),
)


def _terms() -> tuple[Term, ...]:
    out = []
    for g in DECLARATIONS:
        given = dict(g.defaults)
        unknown = set(given) - {name for name, _ in g.terms}
        assert not unknown, f"defaults for terms not in group {g.name}: {unknown}"
        for name, labels in g.terms:
            default = given.get(name, (0,) * (len(labels) or 1))
            assert len(default) == (len(labels) or 1), f"{name}: one default per label"
            assert all(g.bounds[0] <= v <= g.bounds[1] for v in default), f"{name}: default outside its bounds"
            out.append(Term(g.name, name, labels, default, g.bounds))
    return tuple(out)


#: every base term, in index order
TERMS: tuple[Term, ...] = _terms()
#: the groups, in index order
GROUPS: tuple[str, ...] = tuple(g.name for g in DECLARATIONS)
TERM_BY_NAME: dict[str, Term] = {t.name: t for t in TERMS}
BASE_NAMES: list[str] = [n[3:] for t in TERMS for n in t.feature_names("mg")]
BASE_GROUPS: list[str] = [t.group for t in TERMS for _ in range(t.size)]
#: index of each term's first base feature
TERM_START: dict[str, int] = dict(zip((t.name for t in TERMS), accumulate((t.size for t in TERMS), initial=0)))
#: base features of the built-in terms (the kernels' constant: a built-in feature's end-game
#: copy is at its middle-game index + N_BASE)
N_BASE = len(BASE_NAMES)
#: the built-in catalogue's feature names (mg copies, then eg copies)
BUILTIN_FEATURE_NAMES: tuple[str, ...] = tuple(f"{s}.{n}" for s in STAGES for n in BASE_NAMES)

#: An engine author's own terms (:mod:`search.params.terms`, ``docs/own-terms.md``): the plug-in of the
#: ``MOVETUNER_TERMS`` file (``--terms FILE``), or None. Its features follow the built-in ones:
#: its mg copies from :data:`PLUGIN_START`, then its eg copies from ``PLUGIN_START + N_PLUGIN_BASE``.
PLUGIN: TermPlugin | None = active_plugin()
if PLUGIN is not None and PLUGIN.group in GROUPS:
    raise TermsFileError(f"{PLUGIN.path}: GROUP {PLUGIN.group!r} is a built-in group; choose another name")
PLUGIN_TERMS: tuple[Term, ...] = () if PLUGIN is None else tuple(
    Term(PLUGIN.group, f"{PLUGIN.group}.{name}", labels, default, PLUGIN.bounds)
    for name, labels, default in PLUGIN.terms)
N_PLUGIN_BASE = sum(t.size for t in PLUGIN_TERMS)
PLUGIN_START = 2 * N_BASE
#: every term, built-in then the plug-in's
ALL_TERMS: tuple[Term, ...] = TERMS + PLUGIN_TERMS
if PLUGIN is not None:
    GROUPS = (*GROUPS, PLUGIN.group)
FEATURE_NAMES: tuple[str, ...] = BUILTIN_FEATURE_NAMES + tuple(
    n for s in STAGES for t in PLUGIN_TERMS for n in t.feature_names(s))
N_FEATURES = len(FEATURE_NAMES)
FEATURE_GROUPS: tuple[str, ...] = tuple(BASE_GROUPS) * 2 + tuple(
    t.group for _ in STAGES for t in PLUGIN_TERMS for _n in range(t.size))
FEATURE_INDEX: dict[str, int] = {name: i for i, name in enumerate(FEATURE_NAMES)}


def stage_pairs() -> tuple[list[int], list[int]]:
    """Each base term's two copies: (middle-game indices, end-game indices), aligned, over the
    built-in terms (``i``, ``i + N_BASE``) and then a plug-in's (``PLUGIN_START + j``,
    ``PLUGIN_START + N_PLUGIN_BASE + j``)."""
    mg = list(range(N_BASE)) + [PLUGIN_START + j for j in range(N_PLUGIN_BASE)]
    eg = [i + N_BASE for i in range(N_BASE)] + [PLUGIN_START + N_PLUGIN_BASE + j for j in range(N_PLUGIN_BASE)]
    return mg, eg


def default_values() -> list[int]:
    """Per feature (index order), its weight in the untrained start: the terms' defaults."""
    base = [v for t in TERMS for v in t.default]
    plugin = [v for t in PLUGIN_TERMS for v in t.default]
    return base * len(STAGES) + plugin * len(STAGES)


def weight_bounds() -> tuple[list[int], list[int]]:
    """Per feature (index order), the lowest and highest weight a tuner may give it."""
    low = [t.bounds[0] for t in TERMS for _ in range(t.size)] * len(STAGES)
    high = [t.bounds[1] for t in TERMS for _ in range(t.size)] * len(STAGES)
    low += [t.bounds[0] for t in PLUGIN_TERMS for _ in range(t.size)] * len(STAGES)
    high += [t.bounds[1] for t in PLUGIN_TERMS for _ in range(t.size)] * len(STAGES)
    return low, high


def catalog_hash(names: tuple[str, ...] | list[str]) -> str:
    """The identity of a catalogue with feature names ``names`` (in index order)."""
    return hashlib.sha256(
        ("movetuner-features-v1\n" + "\n".join(names) + f"\nphase_max={PHASE_MAX}").encode()
    ).hexdigest()[:16]


#: identity of the catalogue: weights files carry it; files of another one are refused unless
#: it is a legacy catalogue (:data:`LEGACY_CATALOGS`) or, with a plug-in, the built-in one
CATALOG_HASH = catalog_hash(FEATURE_NAMES)
#: the built-in catalogue's identity (equal to CATALOG_HASH without a plug-in)
BUILTIN_HASH = catalog_hash(BUILTIN_FEATURE_NAMES)

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
    return tuple(n for n, g in zip(BUILTIN_FEATURE_NAMES, FEATURE_GROUPS) if g not in added)


for _old in LEGACY_CATALOGS:
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

#: The kernels' offsets in index order, with the base features each indexes from it: a term's
#: size, or for a block of terms the kernels index by formula (``F_PST + 64 * piece + square``,
#: ``F_ATTACKS + 5 * attacker + target``) the block's size from the declarations.
KERNEL_BLOCKS: tuple[tuple[int, int], ...] = tuple(
    (start, len(PIECE_NAMES) * TERM_BY_NAME[name].size if start in (F_PST, F_ATTACKS, F_DEFENDS)
     else TERM_BY_NAME[name].size)
    for name, start in TERM_START.items()
    if start in (F_MATERIAL, F_PST, F_DOUBLED, F_ISOLATED, F_BACKWARD, F_PASSED, F_PASSED_FREE, F_PHALANX,
                 F_SUPPORTED, F_MOB_KNIGHT, F_MOB_BISHOP, F_MOB_ROOK, F_MOB_QUEEN, F_SHIELD1, F_SHIELD2,
                 F_KING_OPEN, F_KING_SEMIOPEN, F_ZONE_ATTACKERS, F_ZONE_COUNT, F_BISHOP_PAIR, F_ROOK_OPEN,
                 F_ROOK_SEMIOPEN, F_ROOK_SEVENTH, F_KNIGHT_OUTPOST, F_THREAT_PAWN, F_THREAT_MINOR,
                 F_THREAT_ROOK, F_TEMPO, F_ATTACKS, F_DEFENDS)
)

# Self-check, as Ethereal's tuner counts its terms: the kernels' blocks tile the declared base
# features exactly, so a term declared without a kernel offset (a gap) or a block whose
# declared size differs from the kernels' formula (an overlap) stops the import.
assert [s for s, _ in KERNEL_BLOCKS] == [0, *accumulate(n for _, n in KERNEL_BLOCKS)][:-1], KERNEL_BLOCKS
assert sum(n for _, n in KERNEL_BLOCKS) == N_BASE == sum(t.size for t in TERMS), N_BASE


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
