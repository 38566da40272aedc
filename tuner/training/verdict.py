"""Whether a run paid: the tuned weights against the start, said at the end of every ``tuner
tune``, and whether the data can carry the weights tuned, said at its start.

**Up front** (:func:`data_warning`): a run with fewer training positions per tuned weight than
:data:`MIN_PER_WEIGHT` asks is warned: results carry far less signal per position than a move
or a search score. docs/quality.md ("How many positions a weight needs") gives the runs the rule
comes from.

**At the end** (:func:`verdict`): the validation move-match of the start and of the weights the
run wrote, position by position, with a 95 % interval of the paired difference (normal
approximation over positions); for Texel on a linear evaluator also Texel's error E on the
validation positions of finished games, both with K fitted on the start weights
(``E_results``: not the epoch lines' ``e_validation``, which uses the run's own targets); then
one closing line (:func:`closing_verdict`) saying in words whether the run paid, weighing games
over the validation figures when ``--verify GAMES`` played a fixed-node match against the start,
stopped by the SPRT (:func:`verify_match`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from search.evaluation.evaluators import Evaluator
from search.evaluation.network import QuantizedNetwork
from tuner.training.paced import validation_credits
from tuner.training.run_context import RunContext
from tuner.training.training_data import TrainingData
from tuner.training.tune_config import TuneConfig
from tuner.training.weight_masks import mask_of

#: training positions a tuned weight needs at least, by the signal the method learns from
MIN_PER_WEIGHT = {"moves": 90, "scores": 90, "results": 1000}
#: the SPRT of --verify: H0 elo 0 against H1 elo 10, 5 % error rates (fishtest's usual shape)
VERIFY_SPRT = (0.0, 10.0, 0.05, 0.05)
#: nodes per move of --verify's match
VERIFY_NODES = 5000


def tuned_weights(common: TuneConfig, w0: Evaluator) -> int:
    """How many weights the run tunes: the network's parameters, or the trainable linear ones."""
    if isinstance(w0, QuantizedNetwork):
        return int(w0.dequantize().size)
    return int(mask_of(common.train, "train").sum())


def data_warning(common: TuneConfig, w0: Evaluator, n_train: int, signal: str) -> str | None:
    """The warning of a run with too few positions per tuned weight (module docstring), or None."""
    n = tuned_weights(common, w0)
    need = MIN_PER_WEIGHT[signal]
    if n == 0 or n_train >= need * n:
        return None
    what = {"moves": "moves", "scores": "search scores", "results": "game results alone"}[signal]
    return (f"warning: {n_train:,} training positions for {n:,} tuned weights ({n_train / n:.0f} a weight); "
            f"learning from {what} needs about {need:,} a weight ({need * n:,} here), or fewer weights "
            "(--train): expect weights worse than the start (docs/quality.md says where the rule comes from)")


@dataclass(frozen=True)
class Paired:
    """A paired comparison over positions: the start's and the tuned weights' means and the
    mean difference with its 95 % interval."""

    start: float
    tuned: float
    diff: float
    low: float
    high: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "tuned": self.tuned, "diff": self.diff, "ci95": [self.low, self.high], "n": self.n}


def paired(a: np.ndarray, b: np.ndarray) -> Paired:
    """Means of ``a`` (start) and ``b`` (tuned) and ``mean(b - a)`` with 1.96 standard errors."""
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = len(d)
    se = float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    mean = float(d.mean()) if n else float("nan")
    return Paired(float(np.mean(a)), float(np.mean(b)), mean, mean - 1.96 * se, mean + 1.96 * se, n)


def _texel_errors(ctx: RunContext, common: TuneConfig, data: TrainingData, w0: Evaluator,
                  w: Evaluator) -> tuple[float, float, int] | None:
    """Texel's E of the start and the tuned linear weights on the validation positions of
    finished games, K fitted on the start; None for a network or without results."""
    from objectives.texel import KBracketError, fit_k, loss  # noqa: PLC0415
    from search.evaluation.evaluation_api import EVAL_SCALE  # noqa: PLC0415
    from search.tree.search_api import threads  # noqa: PLC0415
    from tuner.methods.texel import quiescence_leaves  # noqa: PLC0415

    val = data.validation
    if isinstance(w0, QuantizedNetwork) or isinstance(w, QuantizedNetwork) or val.results is None:
        return None
    finished = np.flatnonzero(np.isfinite(val.results))
    if len(finished) < 2:
        return None
    pos = val.subset(finished)
    assert pos.results is not None
    errors: list[float] = []
    k = 0.0
    for weights in (w0, w):
        lv = quiescence_leaves(pos.boards, weights, budget=common.budget, n_threads=ctx.threads)
        with threads(ctx.threads):
            if not errors:
                try:
                    k = fit_k(lv.offset, lv.indptr, lv.indices, lv.values, pos.results, weights, EVAL_SCALE)
                except KBracketError:
                    return None
            errors.append(loss(lv.offset, lv.indptr, lv.indices, lv.values, pos.results, weights, k, EVAL_SCALE))
    return errors[0], errors[1], len(pos)


def verdict(ctx: RunContext, common: TuneConfig, data: TrainingData, w0: Evaluator, w: Evaluator) -> dict[str, Any]:
    """The end-of-run comparison of ``w`` (tuned) with ``w0`` (start) on the validation
    positions: ``{"move_match": Paired | None, "texel_e": (start, tuned, n) | None, "paid":
    True/False/None, "lines": [...]}`` (``paid`` None when nothing could be measured)."""
    lines: list[str] = []
    out: dict[str, Any] = {"move_match": None, "texel_e": None, "paid": None}
    a = validation_credits(ctx, common, data, w0)
    b = validation_credits(ctx, common, data, w)
    verdicts: list[bool] = []
    if a is not None and b is not None and len(a) > 1:
        m = paired(a, b)
        out["move_match"] = m.to_json()
        lines.append(f"verdict: validation move-match {100 * m.start:.2f} % (start) -> {100 * m.tuned:.2f} % (tuned), "
                     f"{100 * m.diff:+.2f} points, 95 % interval [{100 * m.low:+.2f}, {100 * m.high:+.2f}] over "
                     f"{m.n:,} positions")
        if m.high < 0:
            verdicts.append(False)
        elif m.low > 0:
            verdicts.append(True)
    e = _texel_errors(ctx, common, data, w0, w)
    if e is not None:
        out["texel_e"] = {"start": e[0], "tuned": e[1], "n": e[2]}
        lines.append(f"verdict: Texel's error against the game results alone (E_results) on {e[2]:,} validation "
                     f"positions of finished games, K fitted on the start: {e[0]:.5f} -> {e[1]:.5f} (not the epoch "
                     "lines' e_train/e_validation, which use the run's own targets, K and positions)")
        if common.method == "texel":
            verdicts.append(e[1] < e[0])
    if verdicts:
        out["paid"] = all(verdicts)
    out["lines"] = lines
    return out


def _elo_text(match: dict[str, Any]) -> str:
    """``Elo +12 [-40, +64]`` of a :func:`verify_match` result; an infinite Elo (a score of 0 or
    1, stored as None) as ``-inf`` or ``+inf`` by its score."""
    def signed(elo: float | None, score: float) -> str:
        return (f"{elo:+.0f}" if elo is not None else "-inf" if score < 0.5 else "+inf")

    (low, high), (s_low, s_high) = match["elo_ci95"], match["score_ci95"]
    return f"Elo {signed(match['elo'], match['score'])} [{signed(low, s_low)}, {signed(high, s_high)}]"


def closing_verdict(result: dict[str, Any], weights: str, start: str) -> tuple[bool | None, str | None, str]:
    """The run's one closing verdict, ``(paid, by, line)``, weighing what :func:`verdict` and
    :func:`verify_match` measured: games outweigh the validation figures when both exist.

    Games (``result["verify"]``) decide when their SPRT decided (H1: paid; H0, not ``elo1``
    better: did not pay; its stop for scores outside both hypotheses included), or else when
    their 95 % score interval has a width and excludes 0.5 (lower end above: paid; upper end
    below: did not pay; a few games all lost give the zero-width interval [0, 0], which decides
    nothing); otherwise the validation verdict (``result["paid"]``: move-match interval, Texel's
    E_results) decides, and when games were played but decided nothing a paying validation is
    "not shown to pay". ``by`` is ``"games"``, ``"validation"`` or None
    (undecided). The line says "paid", "did not pay" or "not shown to pay" in words, with each
    figure's interval, and for anything but "paid" how to measure further (``weights`` against
    ``start`` in games).
    """
    validation = result.get("paid")
    figures = []
    mm = result.get("move_match")
    if mm is not None:
        low, high = mm["ci95"]
        figures.append(f"validation move-match {100 * mm['diff']:+.2f} points [{100 * low:+.2f}, {100 * high:+.2f}]")
    te = result.get("texel_e")
    if te is not None:
        figures.append(f"E_results {te['start']:.5f} -> {te['tuned']:.5f}")
    measured = ", ".join(figures) if figures else "no validation figure"
    games = result.get("verify")
    hint = f"; measure both in games: tuner bench match {weights} {start} --nodes 20000"
    if games and games["games"]:
        lo, hi = games["score_ci95"]
        decision = games["sprt"]["decision"]
        paid = {"H0": False, "H1": True}.get(decision)
        if paid is None and hi > lo:
            paid = False if hi < 0.5 else True if lo > 0.5 else None
        played = f"{games['games']} games against the start, {_elo_text(games)}, SPRT {decision}"
        if paid is not None:
            agree = ("which the validation figures agree with" if validation is paid else
                     "which outweigh the validation figures" if validation is not None else
                     "the validation figures undecided")
            return paid, "games", (f"verdict: this run {'paid' if paid else 'did not pay'}, by the games: {played}, "
                                   f"{agree} ({measured})" + ("" if paid else "; keep the start"))
        if validation is False:
            return False, "validation", (f"verdict: this run did not pay, by the validation figures ({measured}); "
                                         f"the games decided nothing ({played}); keep the start")
        return None, None, (f"verdict: this run is not shown to pay: the games decided nothing ({played}), and games "
                            f"outweigh the validation figures ({measured}){hint}")
    if validation is True:
        return True, "validation", f"verdict: this run paid, by the validation figures ({measured})"
    if validation is False:
        return False, "validation", (f"verdict: this run did not pay, by the validation figures ({measured}); "
                                     f"keep the start{hint}")
    return None, None, f"verdict: this run is not shown to pay: the validation figures decided nothing ({measured}){hint}"


def verify_match(weights: str, start: str, games: int, nodes: int = VERIFY_NODES) -> dict[str, Any]:
    """``games`` games (at most; the SPRT :data:`VERIFY_SPRT` may stop it sooner) at ``nodes`` a
    move between the tuned weights file and the start, from the shipped openings: the summary
    and the test's state, from the tuned weights' view."""
    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415
    from tuner.arena.match import DEFAULT_OPENINGS, MatchConfig, load_openings, run_match, summarize  # noqa: PLC0415
    from tuner.arena.sprt import parse_sprt  # noqa: PLC0415

    sprt = parse_sprt(list(VERIFY_SPRT))
    assert sprt is not None
    config = MatchConfig(games=games, nodes=nodes)
    pairs = run_match(load_evaluator(weights), load_evaluator(start), load_openings(DEFAULT_OPENINGS), config,
                      sprt=sprt)
    s = summarize(pairs)
    test = sprt.check(s.pentanomial)
    text = (f"{s.games} games at {nodes:,} nodes a move, W/D/L {s.wins}/{s.draws}/{s.losses} from the tuned "
            f"weights' view, Elo {s.elo:+.0f} [{s.elo_low:+.0f}, {s.elo_high:+.0f}]; {test.describe()}")
    return {**s.to_json(), "nodes": nodes, "sprt": test.to_json(), "text": text, "lost": bool(s.elo_high < 0)}


__all__ = ["MIN_PER_WEIGHT", "Paired", "closing_verdict", "data_warning", "paired", "tuned_weights", "verdict", "verify_match"]
