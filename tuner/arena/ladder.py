"""A gauntlet of one player against rated engines (``tuner bench ladder``): its rating on the
opponents' published scale.

The ladder file (TOML) lists the opponents, each an ``[[engine]]`` table:

* ``name`` (text, unique), ``command`` (text, split as a POSIX shell would), ``protocol``
  (``uci`` or ``xboard``; default ``uci``), ``options`` (a table of option name to value;
  booleans as ``true``/``false``);
* ``rating``: its published rating (a number), or the text ``"to verify"`` when no source
  could be checked: such an opponent is listed but never played or fitted;
* ``source``: where the rating comes from (list, version, time control), required with a
  number;
* ``package`` (optional): the Debian package that installs the command (named in the error
  when it cannot start).

Each rated opponent plays the same fixed number of games (no SPRT) against the player, from
the same openings and seed, as :func:`tuner.arena.match.run_match` plays them, with
``forfeit`` on: an engine that crashes, hangs or answers an illegal move loses that game and
is restarted. The player's rating is fitted by maximum likelihood with every opponent fixed at
its published rating (:func:`tuner.arena.ratings.fit_gauntlet`), with a 95 % interval.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tuner.arena.engines import PROTOCOLS, EngineSpec
from tuner.arena.match import (GameRecord, MatchConfig, Opening, Player, elo_of, pair_scores, run_match,
                               summarize)
from tuner.arena.ratings import GauntletFit, expected, fit_gauntlet

#: the text of a rating nobody could source yet
TO_VERIFY = "to verify"
_KEYS = {"name", "command", "protocol", "options", "rating", "source", "package"}

Pair = tuple[GameRecord, GameRecord]


class LadderFileError(ValueError):
    """A ladder file that cannot be used; the message is one line naming the file and entry."""


@dataclass(frozen=True)
class Rung:
    """An opponent of the ladder: its engine, published ``rating`` (``None``: to verify),
    the rating's ``source`` and the Debian ``package`` that installs it ("" if not given)."""

    spec: EngineSpec
    rating: float | None
    source: str
    package: str = ""

    @property
    def name(self) -> str:
        return self.spec.name


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def load_ladder(path: str | Path) -> list[Rung]:
    """The opponents of a ladder file (module docstring), in file order; one
    :class:`LadderFileError` line naming the file and the entry for anything wrong."""
    from tuner.config import read_toml  # noqa: PLC0415
    from tuner.errors import TunerError  # noqa: PLC0415

    path = Path(path)
    try:
        doc = read_toml(path)  # one-line errors naming the file and place
    except TunerError as exc:
        raise LadderFileError(str(exc)) from None
    unknown = set(doc) - {"engine"}
    if unknown:
        raise LadderFileError(f"{path}: unknown top-level key {sorted(unknown)[0]!r} (expected [[engine]] tables)")
    entries = doc.get("engine")
    if not isinstance(entries, list) or not entries:
        raise LadderFileError(f"{path}: no [[engine]] tables")
    rungs: list[Rung] = []
    for number, entry in enumerate(entries, start=1):
        rungs.append(_rung(path, number, entry))
    names = [r.name for r in rungs]
    for k, name in enumerate(names):
        if name in names[:k]:
            raise LadderFileError(f"{path}: engine {k + 1}: name {name!r} used twice")
    return rungs


def _rung(path: Path, number: int, entry: Any) -> Rung:
    where = f"{path}: engine {number}"
    if not isinstance(entry, dict):
        raise LadderFileError(f"{where}: not a table")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise LadderFileError(f"{where}: needs a name (text)")
    where += f" ({name})"
    unknown = set(entry) - _KEYS
    if unknown:
        raise LadderFileError(f"{where}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(_KEYS))})")
    command = entry.get("command")
    if not isinstance(command, str):
        raise LadderFileError(f"{where}: needs a command (text)")
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise LadderFileError(f"{where}: command {command!r}: {exc}") from None
    if not argv:
        raise LadderFileError(f"{where}: empty command")
    protocol = entry.get("protocol", "uci")
    if protocol not in PROTOCOLS:
        raise LadderFileError(f"{where}: protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    options = entry.get("options", {})
    if not isinstance(options, dict) or not all(isinstance(v, (str, int, float, bool)) for v in options.values()):
        raise LadderFileError(f"{where}: options must be a table of name = value (text, number or boolean)")
    rating = entry.get("rating")
    source = entry.get("source", "")
    if not isinstance(source, str):
        raise LadderFileError(f"{where}: source must be text")
    if rating == TO_VERIFY:
        value = None
    elif isinstance(rating, (int, float)) and not isinstance(rating, bool) and math.isfinite(rating):
        value = float(rating)
        if not source.strip():
            raise LadderFileError(f"{where}: a rating needs its source (list, version, time control)")
    else:
        raise LadderFileError(f"{where}: rating must be a number or {TO_VERIFY!r}, not {rating!r}")
    package = entry.get("package", "")
    if not isinstance(package, str):
        raise LadderFileError(f"{where}: package must be text")
    spec = EngineSpec(argv, tuple((str(k), _option_text(v)) for k, v in options.items()), name.strip(), protocol)
    return Rung(spec, value, source, package)


def play_ladder(player: Player, rungs: Sequence[Rung], openings: Sequence[Opening], config: MatchConfig, *,
                pool: Any = None, on_pair: Callable[[int, int, Pair], object] | None = None,
                progress: Callable[[int], object] | None = None) -> list[list[Pair]]:
    """Play ``config.games`` games of ``player`` (as A) against each of ``rungs`` (as B), with
    ``forfeit`` on; the game pairs per opponent, in opening order. ``on_pair(rung index, pair
    index, pair)`` is called as :func:`tuner.arena.match.run_match`'s ``on_pair``."""
    config = dataclasses.replace(config, forfeit=True)
    results: list[list[Pair]] = []
    for k, rung in enumerate(rungs):
        def each(index: int, pair: Pair, k: int = k) -> None:
            if on_pair is not None:
                on_pair(k, index, pair)

        results.append(run_match(player, rung.spec, openings, config, progress=progress, pool=pool, on_pair=each))
    return results


def fit(rungs: Sequence[Rung], results: Sequence[Sequence[Pair]]) -> GauntletFit | None:
    """The player's rating from the opponents played so far (those with a rating and at least
    one pair), or ``None`` before any."""
    played = [(r.rating, pair_scores(p)) for r, p in zip(rungs, results) if r.rating is not None and p]
    if not played:
        return None
    return fit_gauntlet([float(x) for x, _ in played], [s for _, s in played])


def _finite(x: float) -> float | None:
    return round(x, 1) if math.isfinite(x) else None


def ladder_summary(rungs: Sequence[Rung], results: Sequence[Sequence[Pair]]) -> dict[str, Any]:
    """The rating (``elo``, ``elo_ci95``, ``se``; ``None`` when infinite) and one entry per
    opponent: its name, rating and source, the player's W/D/L, score with its 95 % interval,
    the performance (the opponent's rating plus the match Elo), the terminations."""
    opponents = []
    for rung, pairs in zip(rungs, results):
        s = summarize(pairs)
        opponents.append({
            "name": rung.name, "rating": rung.rating, "source": rung.source, "games": s.games,
            "wins": s.wins, "draws": s.draws, "losses": s.losses, "score": round(s.score, 4),
            "score_ci95": [round(s.score_low, 4), round(s.score_high, 4)],
            "performance": _finite(rung.rating + elo_of(s.score)) if rung.rating is not None else None,
            "terminations": s.terminations,
        })
    result = fit(rungs, results)
    interval = result.interval() if result is not None else None
    return {
        "elo": _finite(result.elo) if result is not None else None,
        "elo_ci95": [round(interval[0], 1), round(interval[1], 1)] if interval else None,
        "se": round(result.se, 1) if result is not None and math.isfinite(result.se) else None,
        "opponents": opponents,
    }


def running_line(rungs: Sequence[Rung], results: Sequence[Sequence[Pair]], games: int, seconds: float) -> str:
    """The ladder's running line: the opponent under way, its games and W/D/L, and the rating
    fitted so far with its interval."""
    k = max(len(results) - 1, 0)
    head = f"ladder: {seconds:.0f} s"
    if not rungs:
        return head
    pairs = results[k] if results else []
    line = f"{head}, {rungs[k].name} ({k + 1}/{len(rungs)}): {2 * len(pairs)}/{games} games"
    if pairs:
        s = summarize(pairs)
        line += f", W/D/L {s.wins}/{s.draws}/{s.losses}"
    result = fit(rungs, results)
    if result is not None:
        interval = result.interval()
        line += f"; rating {result.elo:.0f}" + (f" [{interval[0]:.0f}, {interval[1]:.0f}]" if interval else "")
    return line


def plot_ladder(summary: dict[str, Any], path: Path, title: str) -> Path:
    """A PNG of the player's score against each rated opponent (95 % intervals) at the
    opponent's published rating, and the logistic curve of the fitted rating, written
    atomically."""
    from tuner.arena.plots import _pyplot, _save  # noqa: PLC0415

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    rated = [o for o in summary["opponents"] if o["rating"] is not None]
    xs = np.array([o["rating"] for o in rated], dtype=np.float64)
    ys = np.array([o["score"] for o in rated], dtype=np.float64)
    low = ys - np.array([o["score_ci95"][0] for o in rated])
    high = np.array([o["score_ci95"][1] for o in rated]) - ys
    ax.errorbar(xs, ys, yerr=[low, high], fmt="o", capsize=3, label="score (95 % interval)")
    for o in rated:
        ax.annotate(o["name"], (o["rating"], o["score"]), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if summary["elo"] is not None and len(xs):
        grid = np.linspace(min(xs.min(), summary["elo"]) - 200, max(xs.max(), summary["elo"]) + 200, 200)
        ax.plot(grid, np.asarray(expected(summary["elo"] - grid)), label=f"expected at {summary['elo']:.0f}")
        ax.axvline(summary["elo"], linestyle=":", color="grey")
    ax.axhline(0.5, linestyle="--", color="grey", linewidth=0.8)
    ax.set_xlabel("opponent's published rating")
    ax.set_ylabel("score against it")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    _save(fig, path)
    return path


__all__ = ["LadderFileError", "Rung", "TO_VERIFY", "fit", "ladder_summary", "load_ladder", "play_ladder",
           "plot_ladder", "running_line"]
