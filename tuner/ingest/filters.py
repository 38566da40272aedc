"""What ``tuner ingest`` keeps: the frozen :class:`IngestConfig` and the rating rules.

Every field carries its help text; the command line (``tuner ingest --help``) and the TOML
loader are derived from this dataclass by :mod:`tuner.config`, so the defaults live here only.
"""

from __future__ import annotations

import dataclasses
import math

from tuner.config import help_field

MISSING_ELO_POLICIES = ("keep", "drop")
NON_UTF8_POLICIES = ("latin1", "skip")
RESULT_VIEWS = ("white", "mover")


@dataclasses.dataclass(frozen=True, kw_only=True)
class IngestConfig:
    """Filters and split of a position set: everything that changes the rows written.

    The game filters (ratings, opening plies, game length, set-up positions, non-UTF-8 games)
    apply to games; positions of position files go through ``skip_single_legal``, ``dedup``,
    ``results_view`` and the split.

    Each field's help text (its documentation) is shown by ``tuner ingest --help`` and written
    as a comment by :func:`tuner.config.dump_toml`.
    """

    min_elo: int = help_field(
        0,
        "minimum rating of the player to move for a position to be kept; 0 turns the filter "
        "off (the default, because the shipped sample is mostly from before ratings existed "
        "and grandmaster collections are strong throughout)",
        metavar="ELO",
    )

    missing_elo: str = help_field(
        "keep",
        "what to do with positions whose mover has no usable rating (tag missing, empty, not a "
        "positive integer): keep or drop; 'keep' keeps them whatever --min-elo says",
        metavar="keep|drop",
    )

    skip_plies: int = help_field(
        16,
        "skip the first N plies of every game (opening book moves; 16 is the cut the "
        "project's background measurements use)",
        metavar="N",
    )

    skip_single_legal: bool = help_field(
        True, "skip positions in which only one move is legal (nothing to learn from them)"
    )

    min_plies: int = help_field(
        20,
        "reject games shorter than N plies (forfeits and short agreed draws, whose few moves "
        "are opening theory)",
        metavar="N",
    )

    dedup: bool = help_field(
        True,
        "drop repeated (position, move) pairs across the whole set, by polyglot Zobrist key "
        "and move; the first occurrence in reading order is kept",
    )

    allow_setup: bool = help_field(
        False,
        "play games whose FEN tag sets up a standard-chess position other than the initial "
        "one from that position (otherwise they are rejected as non_standard_start)",
    )

    non_utf8: str = help_field(
        "latin1",
        "games with bytes that are not UTF-8: 'latin1' decodes the game as Latin-1 and keeps "
        "it (reported as a non_utf8 problem; such files are usually old Latin-1 exports whose "
        "odd bytes are in player names), 'skip' rejects the game",
        metavar="latin1|skip",
    )

    results_view: str = help_field(
        "white",
        "whose view the results in position files (EPD/FEN lines) are from: white (the "
        "convention of game results, of the zurichess and bullet formats and of Gedas' "
        "texel-tuner's default) or mover (the side to move); they are stored from White's view",
        metavar="white|mover",
    )

    split: tuple[float, ...] = help_field(
        (0.8, 0.1, 0.1),
        "fractions of the kept games for train, validation and test (split by game, never by "
        "position; the positions of position files are split by their Zobrist key)",
        metavar="TRAIN,VAL,TEST",
    )

    seed: int = help_field(0, "seed of the random assignment of games to splits", metavar="SEED")

    def validate(self) -> None:
        """Raise ``ValueError`` (one line) for settings that make no sense."""
        if self.min_elo < 0:
            raise ValueError(f"min_elo must be >= 0, not {self.min_elo}")
        if self.missing_elo not in MISSING_ELO_POLICIES:
            raise ValueError(f"missing_elo must be keep or drop, not {self.missing_elo!r}")
        if self.skip_plies < 0:
            raise ValueError(f"skip_plies must be >= 0, not {self.skip_plies}")
        if self.min_plies < 0:
            raise ValueError(f"min_plies must be >= 0, not {self.min_plies}")
        if self.non_utf8 not in NON_UTF8_POLICIES:
            raise ValueError(f"non_utf8 must be latin1 or skip, not {self.non_utf8!r}")
        if self.results_view not in RESULT_VIEWS:
            raise ValueError(f"results_view must be white or mover, not {self.results_view!r}")
        if (len(self.split) != 3 or not all(math.isfinite(f) and f >= 0 for f in self.split)
                or abs(sum(self.split) - 1.0) > 1e-9):
            text = ",".join(map(str, self.split))
            raise ValueError(f"split must be three non-negative fractions summing to 1, not {text}")

    def side_passes(self, elo: int | None) -> bool:
        """Whether positions with a mover rated ``elo`` (``None``: unknown) are kept."""
        if elo is None:
            return self.missing_elo == "keep"
        return elo >= self.min_elo

    def side_reason(self, elo: int | None) -> str:
        """The drop reason for a mover that fails :meth:`side_passes`."""
        return "missing_elo" if elo is None else "rating"


def parse_elo(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    if not text.isdigit() or not text.isascii():
        return None
    value = int(text)
    return value if 0 < value < 2**31 else None
