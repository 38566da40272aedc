"""The catalogue as the one registry of terms: the hash of the shipped files, the derived
offsets, defaults and bounds, and docs/features.md kept true to the declarations."""

from __future__ import annotations

import re

import chess
import numpy as np

from search.params.catalog import (
    CATALOG_HASH,
    DECLARATIONS,
    FEATURE_NAMES,
    GROUPS,
    KERNEL_BLOCKS,
    MAX_MOBILITY,
    N_BASE,
    N_FEATURES,
    PHASE_FORMULA,
    PHASE_MAX,
    PHASE_WEIGHTS,
    TERM_START,
    TERMS,
    default_values,
    weight_bounds,
)
from search.core.convert import from_chess
from search.evaluation.feature_kernels import phase_of
from search.evaluation.validate import MAX_ABS_WEIGHT
from search.params.weights import BUILTIN_SETS, load_weights
from tests.conftest import REPO

DOCS = REPO / "docs" / "features.md"


def test_the_catalogue_hash_is_the_one_the_shipped_files_carry() -> None:
    # the declarations were rewritten as a registry: names, order and PHASE_MAX must not move
    assert CATALOG_HASH == "05dcf0990061da21"
    assert len(FEATURE_NAMES) == N_FEATURES == 1110


def test_kernel_blocks_tile_the_base_terms() -> None:
    starts = [s for s, _ in KERNEL_BLOCKS]
    ends = [s + n for s, n in KERNEL_BLOCKS]
    assert starts[0] == 0 and ends[-1] == N_BASE and starts[1:] == ends[:-1]
    assert TERM_START[TERMS[-1].name] + TERMS[-1].size == N_BASE


def test_defaults_are_the_material_set_and_every_built_in_set_is_within_the_bounds() -> None:
    assert default_values() == load_weights("material").values.tolist()
    low, high = (np.array(b) for b in weight_bounds())
    assert low.shape == high.shape == (N_FEATURES,)
    assert np.all(low < high) and np.all(-MAX_ABS_WEIGHT <= low) and np.all(high <= MAX_ABS_WEIGHT)
    for name in BUILTIN_SETS:
        w = load_weights(name).values
        outside = np.flatnonzero((w < low) | (w > high))
        assert outside.size == 0, (name, [FEATURE_NAMES[i] for i in outside[:3]])


def test_every_group_has_its_own_bounds_on_each_of_its_features() -> None:
    low, high = weight_bounds()
    for group in DECLARATIONS:
        for term in (t for t in TERMS if t.group == group.name):
            for stage_offset in (0, N_BASE):
                i = TERM_START[term.name] + stage_offset
                assert (low[i], high[i]) == group.bounds, term.name


def test_phase_is_the_catalogue_weights_over_the_pieces_left(real_boards) -> None:  # type: ignore[no-untyped-def]
    assert PHASE_MAX == phase_of(from_chess(chess.Board()))
    for board in real_boards[::20]:
        counted = sum(PHASE_WEIGHTS[p - 1] * len(board.pieces(p, c)) for p in chess.PIECE_TYPES for c in chess.COLORS)
        assert phase_of(from_chess(board)) == min(counted, PHASE_MAX)


def test_docs_features_md_follows_the_declarations() -> None:
    text = DOCS.read_text(encoding="utf-8")
    headings = [m.group(1) for m in re.finditer(r"^### (\w+)", text, flags=re.MULTILINE)]
    assert headings == list(GROUPS)
    assert f"phase = min({PHASE_MAX}, {PHASE_FORMULA})" in text
    ranges = ", ".join(f"{p} 0..{top}" for p, top in MAX_MOBILITY.items())
    assert f"({ranges})" in " ".join(text.split())
