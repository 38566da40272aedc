"""``tuner bench compare``: several weight sets, run folders and engines side by side.

Each entrant is measured with the code of the single commands, so that with the same seeds and
settings its figures are theirs:

* held-out move-match (top-1, top-3, mean rank) on a split of a position set:
  :func:`tuner.arena.movematch.measure_weight_sets`, as ``tuner bench move-match``;
* games: every pair of entrants plays ``games`` games with :func:`tuner.arena.match.run_match` and
  the same :class:`~tuner.arena.match.MatchConfig` (same openings for every pair, from the same
  seed), summarised by :func:`tuner.arena.match.summarize`, as ``tuner bench match A B``; with an
  SPRT (:mod:`tuner.arena.sprt`) each pair stops when its test crosses a bound, as ``tuner bench
  match A B --sprt ...`` does;
* Elo ratings of all entrants from those pairs: :func:`tuner.arena.ratings.fit_ratings` (maximum
  likelihood on the logistic Elo curve, pentanomial sandwich intervals; one anchor fixed);
* an EPD suite: :func:`tuner.arena.epd.run_suite` and :func:`tuner.arena.epd.summarise`, as
  ``tuner bench epd``;
* for a run folder, the tuning method (``config.toml``) and its wall time: the sum of
  ``iteration_seconds`` over ``metrics.jsonl`` (seconds; numba's compilation and time lost
  to an interruption not included).

External UCI engines (:class:`tuner.arena.engines.EngineSpec`) take part in the games only.
An entrant ``NAME@pls`` (or every one with ``--search pls``) plays its games and EPD suite with
the probability-limited search (:mod:`tuner.arena.players`); its move-match is its weights'
(the depth-limited sweep of ``bench move-match``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable


from search.evaluation.evaluators import Evaluator, load_evaluator
from search.pls.move_model import MoveModel
from search.pls.pls import LEAF_MODEL_PLAY, MODEL_ABOVE_PLAY, load_leaf_model
from search.params.weights import BUILTIN_SETS
from tuner.config import read_toml
from tuner.arena.engines import EngineSpec
from tuner.limits import SearchLimits
from tuner.arena.epd import PositionResult, parse_epd, process_pool, run_suite, summarise
from tuner.arena.epd import running_line as epd_line
from tuner.arena.players import DEFAULT_SEARCH, PlayPlayer, features_off, PlsPlayer, Searchable, player_label, split_search
from tuner.errors import TunerError
from tuner.arena.match import (
    DEFAULT_OPENINGS,
    MatchConfig,
    PgnWriter,
    load_openings,
    openings_record,
    pair_scores,
    run_match,
    running_line,
    summarize,
)
from tuner.arena.movematch import measure_weight_sets
from tuner.arena.ratings import PairScores, fit_ratings
from tuner.progress import RunningLog, progress_bar
from tuner.training.run_folder import RunDir, provenance
from tuner.arena.sprt import Sprt

RUN_FILES = ("weights.json", "config.toml", "metrics.jsonl")


@dataclass(frozen=True)
class Entrant:
    """One column of the comparison: a built-in set or weights file (``kind`` "weights"), a
    run folder ("run") or an external engine ("engine"). ``weights`` int32[N_FEATURES] unless
    an engine; ``method``, ``iterations`` and ``wall_seconds`` (seconds) only for runs;
    ``pls`` the probability-limited player of ``weights`` (``NAME@pls``), else None."""

    name: str
    kind: str
    weights: Evaluator | None = None
    engine: EngineSpec | None = None
    method: str | None = None
    iterations: int | None = None
    wall_seconds: float | None = None
    pls: PlsPlayer | None = None
    #: the playing search's player of ``weights`` (``NAME@play``, the default), else None
    play: PlayPlayer | None = None

    @property
    def player(self) -> Searchable | EngineSpec:
        """What :func:`tuner.arena.match.run_match` plays with."""
        if self.engine is not None:
            return self.engine
        return self.searchable

    @property
    def searchable(self) -> Searchable:
        """What the numba engine plays with (not an external engine)."""
        assert self.weights is not None
        if self.pls is not None:
            return self.pls
        return self.play if self.play is not None else self.weights


def _weights(path: str | Path) -> Evaluator:
    try:
        return load_evaluator(path)
    except ValueError as exc:
        raise TunerError(str(exc)) from None


def load_run(path: Path, name: str) -> Entrant:
    """A run folder written by ``tuner tune``: its weights, method and wall time."""
    missing = [f for f in RUN_FILES if not (path / f).is_file()]
    if missing:
        raise TunerError(f"{path}: not a run folder (missing {', '.join(missing)})")
    weights = _weights(path / "weights.json")
    config_path = path / "config.toml"
    config = read_toml(config_path)
    method = config.get("method")
    if not isinstance(method, str):
        raise TunerError(f"{config_path}: no 'method' setting")
    records = RunDir(path).read_metrics()
    seconds = [r.get("iteration_seconds") for r in records]
    wall = (float(sum(s for s in seconds if isinstance(s, (int, float))))
            if records and all(isinstance(s, (int, float)) for s in seconds) else None)
    iterations = max((r["iteration"] for r in records), default=None)
    return Entrant(name, "run", weights=weights, method=method, iterations=iterations, wall_seconds=wall)


def load_entrant(spec: str) -> Entrant:
    """``spec``: a built-in set's name, a run folder or a weights file (one-line
    :class:`TunerError` when it is none of them or cannot be read)."""
    path = Path(spec)
    if spec in BUILTIN_SETS and not path.exists():
        return Entrant(spec, "weights", weights=_weights(spec))
    if path.is_dir():
        return load_run(path, spec)
    if path.exists():
        return Entrant(spec, "weights", weights=_weights(path))
    raise TunerError(f"{spec}: no such run folder or weights file (built-in sets: {', '.join(BUILTIN_SETS)})")


def entrants(specs: list[str], engines: list[EngineSpec], *, search: str = DEFAULT_SEARCH,
             models: Callable[[], MoveModel] | None = None, model_above: float = MODEL_ABOVE_PLAY,
             leaf_models: Callable[[], MoveModel | None] | None = None) -> list[Entrant]:
    """The entrants in order: positional arguments (``NAME@pls``: the probability-limited
    search with the move model ``models()``, ``model_above`` and the leaf model
    ``leaf_models()``, by default the play default :data:`search.pls.pls.LEAF_MODEL_PLAY`;
    ``search`` for those without a suffix), then engines; names must differ."""
    out = []
    for spec in specs:
        name, kind = split_search(spec, search)
        e = load_entrant(name)
        if kind == "pls":
            assert e.weights is not None and models is not None
            leaf = leaf_models() if leaf_models is not None else load_leaf_model(LEAF_MODEL_PLAY)
            e = dataclasses.replace(e, name=player_label(e.name, kind),
                                    pls=PlsPlayer(e.weights, models(), model_above=model_above, leaf_model=leaf))
        elif kind.startswith("play") and e.weights is not None:
            e = dataclasses.replace(e, name=player_label(e.name, kind), play=PlayPlayer(e.weights, features_off(kind)))
        elif kind == "exact":
            e = dataclasses.replace(e, name=player_label(e.name, kind))
        out.append(e)
    out += [Entrant(e.name, "engine", engine=e) for e in engines]
    if not out:
        raise TunerError("nothing to compare: give weight sets, run folders or --engine")
    seen: set[str] = set()
    for e in out:
        if e.name in seen:
            raise TunerError(f"{e.name}: given twice")
        seen.add(e.name)
    return out


def find_anchor(players: list[Entrant], name: str | None) -> int:
    """Index of the anchor: ``name`` (an entrant's name, or an engine's command when only one
    engine has it), by default the first entrant."""
    if name is None:
        return 0
    for k, e in enumerate(players):
        if e.name == name:
            return k
    by_command = [k for k, e in enumerate(players)
                  if e.engine is not None and name in (" ".join(e.engine.command), e.name.split(" (")[0])]
    if len(by_command) == 1:
        return by_command[0]
    raise TunerError(f"--anchor {name!r}: not one of the entrants ({', '.join(e.name for e in players)})")


def pgn_name(a: str, b: str, i: int, j: int) -> str:
    """The PGN file of a pair: ``<i>-<a>-vs-<j>-<b>.pgn`` (1-based indices; names reduced to
    file-name characters)."""
    def stem(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(text.split(" ")[0]).name or text)[:40]

    return f"{i + 1}-{stem(a)}-vs-{j + 1}-{stem(b)}.pgn"


def finite(x: float, digits: int = 1) -> float | None:
    """``x`` rounded for JSON; ``None`` for infinities and NaN."""
    return round(float(x), digits) if math.isfinite(x) else None


def fmt_elo(x: float | None, signed: bool = True) -> str:
    """Elo rounded to an integer, with its sign when ``signed`` (a difference from an anchor
    at 0); ``+inf``/``-inf``; ``-`` for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if not signed:
        return f"{x:.0f}"
    return f"{x:+.0f}" if round(x) != 0 else "0"


def fmt_seconds(s: float | None) -> str:
    """Seconds as ``12.3 s``, ``4 min 05 s`` or ``2 h 03 min``; ``-`` for none."""
    if s is None:
        return "-"
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"


def markdown_table(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    """A Markdown table; columns in ``right`` are right-aligned."""
    cells = [header, *rows]
    widths = [max(len(r[c]) for r in cells) for c in range(len(header))]

    def line(r: list[str]) -> str:
        return "| " + " | ".join(r[c].rjust(widths[c]) if c in right else r[c].ljust(widths[c])
                                 for c in range(len(header))) + " |"

    rule = "|" + "|".join(("-" * (widths[c] + 1) + ":") if c in right else ("-" * (widths[c] + 2))
                          for c in range(len(header))) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def main_table(doc: dict[str, Any]) -> str:
    """The comparison table of ``compare.json``'s document."""
    header = ["entrant", "method", "tuning time", "top-1", "top-1 95% interval", "top-1 - anchor (paired 95%)",
              "top-3", "mean rank", "Elo", "Elo 95% interval"]
    has_epd = doc.get("epd") is not None
    if has_epd:
        header += ["EPD solved", "EPD points"]
    rows = []
    for p in doc["entrants"]:
        mm = p.get("move_match")
        elo = p.get("elo")
        row = [p["name"], p["method"] or "-", fmt_seconds(p["wall_seconds"]),
               f"{100 * mm['top1']:.2f}%" if mm else "-",
               f"[{100 * mm['top1_ci95'][0]:.2f}, {100 * mm['top1_ci95'][1]:.2f}]%" if mm and mm["top1_ci95"] else "-",
               _paired_cell(p.get("top1_vs_anchor")),
               f"{100 * mm['top3']:.2f}%" if mm else "-",
               f"{mm['mean_rank']:.2f}" if mm else "-"]
        if elo is None:
            row += ["-", "-"]
        else:
            value = elo["elo"] if elo["elo"] is not None else (math.inf if elo["infinite"] > 0 else -math.inf)
            signed = doc["anchor_elo"] == 0
            shown = fmt_elo(value, signed) + (" (anchor)" if elo["anchor"] else "")
            ci = elo["ci95"]
            row += [shown, f"[{fmt_elo(ci[0], signed)}, {fmt_elo(ci[1], signed)}]" if ci else "-"]
        if has_epd:
            e = p.get("epd")
            row += [f"{e['solved']}/{e['positions']}", f"{e['points']}/{e['max_points']}"] if e else ["-", "-"]
        rows.append(row)
    return markdown_table(header, rows, right=set(range(2, len(header))))


def _paired_cell(d: dict[str, Any] | None) -> str:
    """``+1.23 [+0.40, +2.06]`` points (a paired difference of top-1 with its 95% interval), or ``-``."""
    if d is None:
        return "-"
    return f"{100 * d['diff']:+.2f} [{100 * d['ci95'][0]:+.2f}, {100 * d['ci95'][1]:+.2f}]"


def pair_table(doc: dict[str, Any]) -> str:
    """The pairs' results as ``tuner bench match`` reports them (from the first's view); with
    an SPRT, its LLR and decision."""
    header = ["A", "B", "games", "W/D/L (A)", "score (A)", "Elo A-B", "95% interval"]
    tested = any(p.get("sprt") for p in doc["pairs"])
    if tested:
        header += ["SPRT LLR", "SPRT"]
    rows = []
    for p in doc["pairs"]:
        elo = p["elo"] if p["elo"] is not None else (math.inf if p["score"] > 0.5 else -math.inf)
        lo, hi = p["elo_ci95"]
        lo = lo if lo is not None else (math.inf if p["score_ci95"][0] >= 1 else -math.inf)
        hi = hi if hi is not None else (-math.inf if p["score_ci95"][1] <= 0 else math.inf)
        row = [p["a"], p["b"], str(p["games"]), f"{p['wins']}/{p['draws']}/{p['losses']}",
               f"{100 * p['score']:.1f}%", fmt_elo(elo), f"[{fmt_elo(lo)}, {fmt_elo(hi)}]"]
        if tested:
            t = p.get("sprt")
            row += [f"{t['llr']:.2f}", t["decision"]] if t else ["-", "-"]
        rows.append(row)
    return markdown_table(header, rows, right={2, 3, 4, 5, 6, 7})


# ---------------------------------------------------------------- the comparison


@dataclass(frozen=True, kw_only=True)
class CompareSettings:
    """What ``tuner bench compare`` measures. ``match``: the games of every pair (``None``:
    no games); ``epd_limits``: the engine's limits on the EPD suite ``epd`` (``None``: none);
    ``workers``: processes for the games and the EPD suite; ``threads``: move-match threads
    (0: all cores); ``anchor_elo``: the anchor's rating in Elo; ``sprt``: a test that stops
    each pair's games early (``None``: every pair plays ``match.games``)."""

    data: str
    split: str = "test"
    move_match_depth: int = 1
    max_positions: int = 0
    seed: int = 0
    threads: int = 0
    match: MatchConfig | None = None
    epd: str | None = None
    epd_limits: SearchLimits | None = None
    workers: int = 1
    anchor: int = 0
    anchor_elo: float = 0.0
    sprt: Sprt | None = None


def _bar(total: int, desc: str, show: bool) -> Any:
    return progress_bar(total=total, desc=desc, unit="", disable=not show, leave=False, file=sys.stderr)


def _round_robin(players: list[Entrant], settings: CompareSettings, out: Path, pool: Any,
                 progress: bool) -> tuple[list[dict[str, Any]], Any]:
    """Every pair plays ``settings.match`` (the same openings); the PGN files go to
    ``out/games``, each written game pair by game pair (:class:`~tuner.arena.match.PgnWriter`,
    replacing a file of that name), with a running line in the log every
    :func:`tuner.progress.log_seconds`. Returns the pairs' summaries (as ``bench match --json``) and the rating fit."""
    config = settings.match
    assert config is not None
    try:
        openings = load_openings(config.openings or DEFAULT_OPENINGS)
    except ValueError as exc:
        raise TunerError(str(exc)) from None
    games_dir = out / "games"
    games_dir.mkdir(parents=True, exist_ok=True)
    pairs_doc: list[dict[str, Any]] = []
    scores = []
    n_pairs = len(players) * (len(players) - 1) // 2
    now: dict[str, Any] = {"what": "compare", "played": []}  # the pair under way, read by the running log
    start = time.perf_counter()

    def line() -> str:
        return running_line(now["what"], list(now["played"]), config.games, settings.sprt,
                            time.perf_counter() - start)

    with _bar(n_pairs * config.games, "games", progress) as bar, \
            RunningLog(line, write=lambda text: bar.write(text, file=sys.stderr)):
        for i in range(len(players)):
            for j in range(i + 1, len(players)):
                a, b = players[i], players[j]
                t = time.perf_counter()
                pgn = games_dir / pgn_name(a.name, b.name, i, j)
                played: list[Any] = []
                now.update(what=f"compare, pair {len(pairs_doc) + 1}/{n_pairs} {a.name} vs {b.name}", played=played)
                # replaced: the command refused an earlier comparison's files unless --overwrite
                with PgnWriter(pgn, {"A": a.name, "B": b.name}, f"movetuner compare {a.name} vs {b.name}",
                               overwrite=True) as writer:
                    def on_pair(index: int, pair: Any, writer: PgnWriter = writer, played: list[Any] = played) -> None:
                        writer.add_pair(index, pair)
                        played.append(pair)

                    game_pairs = run_match(a.player, b.player, openings, config, progress=bar.update, pool=pool,
                                           sprt=settings.sprt, on_pair=on_pair)
                summary = summarize(game_pairs)
                if len(game_pairs) < config.games // 2:  # stopped by the SPRT: the bar counts what was skipped
                    bar.update(config.games - summary.games)
                test = settings.sprt.check(summary.pentanomial) if settings.sprt is not None else None
                pairs_doc.append({"a": a.name, "b": b.name, **summary.to_json(),
                                  "sprt": test.to_json() if test is not None else None,
                                  "seconds": round(time.perf_counter() - t, 2), "pgn": str(pgn)})
                scores.append(PairScores(i, j, pair_scores(game_pairs)))
    return pairs_doc, fit_ratings(len(players), scores, settings.anchor, settings.anchor_elo)


def _epd_scores(weighted: list[tuple[int, Entrant, Evaluator]], positions: list[Any], settings: CompareSettings, pool: Any,
                progress: bool) -> dict[int, dict[str, Any]]:
    """Each weight set's EPD summary (as ``bench epd --json``), by entrant index."""
    assert settings.epd_limits is not None
    epd = {}
    for k, p, w in weighted:
        t = time.perf_counter()
        done: list[PositionResult] = []  # answers so far, read by the running log

        def line(name: str = p.name, done: list[PositionResult] = done, start: float = t) -> str:
            return epd_line(name, done[:], len(positions), time.perf_counter() - start)

        with _bar(len(positions), f"EPD {p.name}", progress) as bar, \
                RunningLog(line, write=lambda text: bar.write(text, file=sys.stderr)):
            results = run_suite(positions, p.searchable, settings.epd_limits, settings.workers, pool=pool,
                                progress=bar.update, on_result=done.append)
        epd[k] = {**summarise(results), "seconds": round(time.perf_counter() - t, 2)}
    return epd


# long: the command's steps in order (check the outputs, play each pair of entrants, fit the ratings,
# write the table, the plot and the PGNs), each a call; what it holds is their order and the files they share
def run_compare(players: list[Entrant], settings: CompareSettings, out: Path, *,
                progress: bool = False) -> dict[str, Any]:
    """Measure every entrant (module docstring); the games of each pair go to
    ``out/games/*.pgn``. Returns the document of ``compare.json``."""

    seconds: dict[str, float] = {}
    weighted = [(k, p, p.weights) for k, p in enumerate(players) if p.weights is not None]

    # held-out move-match
    start = time.perf_counter()
    move_match: dict[int, dict[str, Any]] = {}
    vs_anchor: dict[int, dict[str, Any]] = {}  # top-1 minus the anchor's, paired over the positions
    positions = 0
    if weighted:
        pos, results = measure_weight_sets(settings.data, settings.split, [(p.name, w) for _, p, w in weighted],
                                           depth=settings.move_match_depth, max_positions=settings.max_positions,
                                           seed=settings.seed, threads=settings.threads, progress=progress)
        positions = len(pos)
        credits = {}
        for (k, _, _), (_, r) in zip(weighted, results):
            move_match[k] = r.to_json()
            credits[k] = r.credits
        if settings.anchor in credits:  # each entrant against the anchor, position by position
            from tuner.training.verdict import paired  # noqa: PLC0415

            for k, c in credits.items():
                if k != settings.anchor:
                    m = paired(credits[settings.anchor], c)
                    vs_anchor[k] = {"diff": round(m.diff, 5), "ci95": [round(m.low, 5), round(m.high, 5)]}
    seconds["move_match"] = round(time.perf_counter() - start, 2)

    # EPD suite (parsed before the games, so that a bad file fails fast)
    epd_doc = None
    epd_positions: list[Any] = []
    if settings.epd is not None:
        try:
            epd_positions, problems = parse_epd(settings.epd)
        except OSError as exc:
            raise TunerError(f"{settings.epd}: cannot read the EPD file ({exc.strerror or exc})") from None
        if not epd_positions:
            raise TunerError(f"{settings.epd}: no usable position ({len(problems)} lines skipped)")
        assert settings.epd_limits is not None  # a suite comes with its limits (run_compare_command)
        epd_doc = {"file": settings.epd, "limits": dataclasses.asdict(settings.epd_limits),
                   "positions": len(epd_positions), "skipped": len(problems), "problems": [str(p) for p in problems]}

    # games, then the EPD suite, in one pool: each worker loads the kernels once
    playing = settings.match is not None and len(players) > 1
    scoring = settings.epd is not None and bool(weighted)
    with contextlib.ExitStack() as stack:
        pool = (stack.enter_context(process_pool(settings.workers))
                if settings.workers > 1 and (playing or scoring) else None)
        start = time.perf_counter()
        pairs_doc, fit = _round_robin(players, settings, out, pool, progress) if playing else ([], None)
        seconds["games"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        epd = _epd_scores(weighted, epd_positions, settings, pool, progress) if scoring else {}
        seconds["epd"] = round(time.perf_counter() - start, 2)

    entries = []
    for k, p in enumerate(players):
        elo = None
        if fit is not None and not math.isnan(fit.elo[k]):
            ci = fit.interval(k)
            value = float(fit.elo[k])
            elo = {"elo": finite(value), "infinite": 0 if math.isfinite(value) else (1 if value > 0 else -1),
                   "se": finite(float(fit.se[k])), "ci95": [round(ci[0], 1), round(ci[1], 1)] if ci else None,
                   "anchor": k == settings.anchor}
        entries.append({"name": p.name, "kind": p.kind,
                        "method": p.method if p.kind == "run" else ("UCI engine" if p.kind == "engine" else None),
                        "iterations": p.iterations, "wall_seconds": p.wall_seconds,
                        "command": list(p.engine.command) if p.engine else None,
                        "options": dict(p.engine.options) if p.engine else None,
                        "move_match": move_match.get(k), "top1_vs_anchor": vs_anchor.get(k), "elo": elo,
                        "epd": epd.get(k)})
    config = settings.match
    games_doc = None
    if config is not None:
        games_doc = {"per_pair": config.games, "depth": config.depth, "nodes": config.nodes,
                     "movetime": config.movetime, "seed": config.seed,
                     **openings_record(config.openings or DEFAULT_OPENINGS, config.seed),
                     "max_plies": config.max_plies,
                     "adjudicate_cp": config.adjudicate_cp, "adjudicate_moves": config.adjudicate_moves,
                     "sprt": (None if settings.sprt is None else
                              {"elo0": settings.sprt.elo0, "elo1": settings.sprt.elo1, "alpha": settings.sprt.alpha,
                               "beta": settings.sprt.beta, "lower": round(settings.sprt.lower, 4),
                               "upper": round(settings.sprt.upper, 4)}),
                     "rating": "maximum likelihood (logistic Elo), sandwich 95% intervals from the pairs' "
                               "pentanomial variances; see tuner/arena/ratings.py"}
    return {"schema": "movetuner-compare", "schema_version": 1,
            "data": settings.data, "split": settings.split,
            "move_match": {"depth": settings.move_match_depth, "positions": positions,
                           "max_positions": settings.max_positions, "seed": settings.seed},
            "games": games_doc, "anchor": players[settings.anchor].name, "anchor_elo": settings.anchor_elo,
            "epd": epd_doc, "entrants": entries, "pairs": pairs_doc, "seconds": seconds,
            "provenance": provenance()}
