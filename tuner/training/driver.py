"""The outer loop every tuning method shares: :func:`drive`.

A method (:mod:`tuner.methods.registry`) supplies a :class:`Trainer`, which knows what one outer
iteration (an MMTO search-and-update round, a GA generation, a Texel epoch) does. The driver
owns everything around it, the same for every method:

* iterations ``1..N`` after the start (iteration 0 measures the starting point), with a
  progress bar and a log line each;
* the validation move-match of the trainer's weights after every iteration (one
  implementation: :func:`tuner.training.paced.validation_credits`, with its 95% interval in the log), and the best weights so far by the
  method's criterion (:attr:`tuner.methods.registry.Method.best_by`): the validation move-match, or a
  method's own validation figure (Texel: its validation error ``e_validation``, lowest best);
* early stopping: after ``early_stop`` iterations in a row without a better value of that
  criterion (``TuneConfig.early_stop``; 0: never), or when the trainer's own rule says so
  (:meth:`Trainer.finished`, e.g. MMTO's patience on j_main);
* after every iteration, atomically: a line of ``RUN/metrics.jsonl`` (with
  ``best_iteration``, the iteration kept so far, ``best_validation``, its validation
  move-match, and for a method's own criterion ``best_<metric>``, its value), ``RUN/weights.json``
  (the best weights by the criterion, or the last ones: ``TuneConfig.keep``) and the
  checkpoint ``RUN/state.json`` (the commit point: the trainer's state and the driver's);
* resume: a run continued from its checkpoint ends with the same weights and metrics as an
  uninterrupted one, provided the trainer's :meth:`Trainer.state` / :meth:`Trainer.restore`
  are exact (every built-in trainer's are, and the tests check it);
* the run's context (:class:`tuner.training.run_context.RunContext`: numba threads, the
  executor of the heavy steps (this process or a Dask cluster), pacers, log, progress bars),
  opened once for the run and handed to the trainer; the executor's results are reduced in
  chunk order, so the run's weights and metrics do not depend on it;
* Ctrl-C: :func:`tuner.errors.check_interrupt` between iterations (trainers also call it
  between their kernel calls); the command turns it into a one-line message and exit 130;
* staged training (``TuneConfig.stages``; Real & Blair's Duchess: material first, then more
  groups): stage k trains its groups, from the weights the previous stage ended with, with a
  new trainer made for it (``train`` replaced by the stage's groups) and begun; a stage ends
  after its equal share of the iterations (the last one takes the remainder), or earlier when
  its trainer says it is finished (e.g. a time limit). The checkpoint records the stage and
  its start weights, so resume rebuilds the same trainer.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from search.evaluation.evaluators import Evaluator, copy_evaluator, evaluator_from_json, evaluator_to_json
from tuner.compiling import compile_clock
from tuner.errors import TunerError, check_interrupt
from tuner.progress import progress_bar
from tuner.methods.registry import Method, Trainer
from tuner.training.run_folder import Checkpoint, RunDir, provenance
from tuner.training.optim.base import NonFiniteStateError
from tuner.training.paced import validation_credits
from tuner.training.run_context import RunContext, open_run_context
from tuner.training.training_data import TrainingData
from tuner.training.tune_config import TuneConfig, config_record, parse_stages

#: version of the driver's part of a checkpoint (2: the criterion and the kept move-match
#: recorded; a version-1 part was kept by validation move-match)
DRIVER_STATE_VERSION = 2


@dataclass
class Best:
    """The best value so far of the criterion ``by`` (a metrics key; ``lower``: smaller is
    better), where it was reached, its weights and their validation move-match ``match``."""

    value: float | None
    iteration: int
    weights: Evaluator
    since: int = 0  # iterations since the last improvement
    match: float | None = None
    by: str = "match_validation"
    lower: bool = False

    def update(self, iteration: int, value: float | None, weights: Evaluator, match: float | None) -> None:
        better = value is not None and (self.value is None or (value < self.value if self.lower else value > self.value))
        if better:
            self.value, self.iteration, self.weights, self.since, self.match = (value, iteration,
                                                                                copy_evaluator(weights), 0, match)
        elif value is None and self.value is None:  # nothing to judge by (no played moves): the latest
            self.iteration, self.weights, self.since, self.match = iteration, copy_evaluator(weights), 0, match
        else:
            self.since += 1

    def record(self) -> dict[str, Any]:
        """Its figures in a line of metrics.jsonl."""
        out = {"best_validation": self.match, "best_iteration": self.iteration}
        if self.by != "match_validation":
            out[f"best_{self.by}"] = self.value
        return out

    def describe(self) -> str:
        """The criterion in words, with its best value."""
        if self.by == "match_validation":
            return f"best validation move-match {_fmt(self.value)}"
        return f"best {self.by} {_fmt(self.value)}, validation move-match {_fmt(self.match)}"

    def to_json(self) -> dict[str, Any]:
        return {"version": DRIVER_STATE_VERSION, "best_validation": self.value, "best_iteration": self.iteration,
                "best_weights": evaluator_to_json(self.weights), "since_best": self.since, "best_match": self.match,
                "best_by": self.by, "lower_is_better": self.lower}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Best:
        """A checkpoint's record; a version-1 one was kept by validation move-match."""
        return cls(doc["best_validation"], int(doc["best_iteration"]), evaluator_from_json(doc["best_weights"], "the checkpoint's best weights"),
                   int(doc["since_best"]), doc.get("best_match", doc["best_validation"]),
                   doc.get("best_by", "match_validation"), bool(doc.get("lower_is_better", False)))


def _ci(ci: tuple[float, float] | None) -> str:
    """`` (95% interval [low, high])`` of a move-match, or nothing."""
    return "" if ci is None else f" (95% interval [{ci[0]:.4f}, {ci[1]:.4f}])"


def _fmt(x: Any) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return f"{x:.4f}"
    return str(x)


def drive(method: Method, common: TuneConfig, cfg: Any, data: TrainingData, run: RunDir, w0: Evaluator, *,
          resume: Checkpoint | None = None, progress: bool = True, log: Any = print) -> Evaluator:
    """Train with ``method`` from ``w0`` (or continue from ``resume``); return the weights
    written to ``RUN/weights.json`` (see the module docstring). The run's context (its threads
    and the executor ``common`` names: this process, or a Dask cluster) is opened for the run
    and closed after it."""
    with open_run_context(common, log=log, progress=progress) as ctx:
        return _drive(method, common, cfg, data, run, w0, ctx, resume=resume)


def _drive(method: Method, common: TuneConfig, cfg: Any, data: TrainingData, run: RunDir, w0: Evaluator,
           ctx: RunContext, *, resume: Checkpoint | None) -> Evaluator:
    r = _Run(method, common, cfg, data, run, w0, ctx, resume)
    start, vm = r.start() if resume is None else r.resume(resume)
    return r.loop(start, vm)


class _Run:
    """One run of :func:`drive`: the method's trainer, its stage and the best iteration so far,
    and the steps of the outer loop (start or resume, iterate, save)."""

    def __init__(self, method: Method, common: TuneConfig, cfg: Any, data: TrainingData, run: RunDir,
                 w0: Evaluator, ctx: RunContext, resume: Checkpoint | None) -> None:
        self.method, self.common, self.cfg, self.data, self.run, self.ctx = method, common, cfg, data, run, ctx
        self.name, self.unit = method.name, method.unit
        self.by, direction = method.best_by
        self.lower = direction == "min"
        self.total = int(getattr(cfg, method.iterations))
        self.stages = parse_stages(common.stages)
        self.ends = stage_ends(self.total, len(self.stages))
        self.stage = 0
        self.stage_w0 = copy_evaluator(w0 if not isinstance(w0, np.ndarray) else np.asarray(w0, dtype=np.int32))
        if resume is not None and self.stages:
            doc = resume.extra.get("stage")
            if not isinstance(doc, dict) or not 0 <= int(doc.get("index", -1)) < len(self.stages):
                raise TunerError(f"{run.state_path}: the checkpoint does not say which stage it is in")
            self.stage = int(doc["index"])
            self.stage_w0 = evaluator_from_json(doc["w0"], f"{run.state_path}: stage w0")
        self.trainer = self.make_trainer()
        self.best: Best | None = None
        #: the 95% interval of the last validation move-match (None: not measured in this process)
        self.match_ci95: tuple[float, float] | None = None

    def make_trainer(self) -> Trainer:
        """The trainer of the current stage, from the stage's start weights."""
        c = dataclasses.replace(self.common, train=self.stages[self.stage]) if self.stages else self.common
        return self.method.trainer(c, self.cfg, self.data, copy_evaluator(self.stage_w0), self.ctx)

    def validate(self, w: Evaluator) -> tuple[float | None, float]:
        """The validation move-match of ``w`` (:func:`tuner.training.paced.validation_match`) and
        the seconds it took; its 95% interval goes to :attr:`match_ci95` for the log."""
        from tuner.arena.epd import mean_interval  # noqa: PLC0415

        t = compile_clock()
        credits = validation_credits(self.ctx, self.common, self.data, w)
        self.match_ci95 = None if credits is None else mean_interval(credits, 0.0, 1.0)
        return (None if credits is None else float(credits.mean())), compile_clock() - t

    def save(self, iteration: int, metrics: dict[str, Any]) -> None:
        """The iteration's metrics line, weights and checkpoint, atomically."""
        best, trainer = self.best, self.trainer
        assert best is not None
        out = best.weights if self.common.keep == "best" else trainer.weights()
        record = {"iteration": iteration, **metrics}
        for key, value in record.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise FloatingPointError(f"{self.name}: {key} became {value} at {self.unit} {iteration}")
        try:
            state = trainer.state()
        except NonFiniteStateError:
            raise FloatingPointError(f"{self.name}: the trainer's state (its weights or its optimizer's moments) "
                                     f"became NaN or infinite at {self.unit} {iteration}: the run diverged; lower "
                                     "--lr or the regularisation strengths") from None
        self.run.append_metrics(record)
        meta = {"method": self.name, "iteration": iteration, "kept": self.common.keep,
                "best_iteration": best.iteration, "match_validation": best.match, "best_by": best.by,
                "config": config_record(self.common, self.cfg), **provenance()}
        extra = {"trainer": state, "driver": best.to_json()}
        if self.stages:
            extra["stage"] = {"index": self.stage, "groups": list(self.stages[self.stage]),
                              "w0": evaluator_to_json(self.stage_w0)}
        self.run.save(Checkpoint(self.name, iteration, trainer.weights(), extra), meta, output=out)

    def start(self) -> tuple[int, float | None]:
        """Iteration 0: the trainer begun and measured; (the next iteration, its move-match)."""
        t = compile_clock()
        metrics = self.trainer.begin()
        vm, t_val = self.validate(self.trainer.weights())
        measured = {**metrics, "match_validation": vm}
        self.best = Best(measured.get(self.by), 0, copy_evaluator(self.trainer.weights()), match=vm, by=self.by,
                         lower=self.lower)
        self.save(0, {**measured, **self.best.record(), "validation_seconds": round(t_val, 3),
                      "iteration_seconds": round(compile_clock() - t, 3)})
        return 1, vm

    def resume(self, resume: Checkpoint) -> tuple[int, float | None]:
        """The trainer and the best iteration restored from ``resume``; (the next iteration, the
        last one's move-match)."""
        if "trainer" not in resume.extra or "driver" not in resume.extra:
            raise TunerError(f"{self.run.state_path}: a checkpoint of an older version of movetuner; "
                             "start the run again with --overwrite")
        self.trainer.restore(resume.extra["trainer"])
        best = Best.from_json(resume.extra["driver"])
        self.run.truncate_metrics(resume.iteration)
        records = self.run.read_metrics()
        vm = records[-1].get("match_validation")
        if best.by != self.by:  # a checkpoint kept by another criterion: the same kept iteration, valued by this one
            at = next((r for r in records if r.get("iteration") == best.iteration), {})
            best = Best(at.get(self.by), best.iteration, best.weights, best.since, best.match, self.by, self.lower)
            self.ctx.log(f"{self.name}: the checkpoint kept {self.unit} {best.iteration} by validation move-match; "
                         f"from here on the best {self.unit} is the one with the best {self.by}")
        self.best = best
        return resume.iteration + 1, vm

    def next_stage_if_due(self, it: int) -> None:
        """Move to the next stage while the current one has had its share or is finished."""
        stages = self.stages
        while stages and self.stage < len(stages) - 1 and (it > self.ends[self.stage]
                                                            or self.trainer.finished() is not None):
            self.stage, self.stage_w0 = self.stage + 1, copy_evaluator(self.trainer.weights())
            self.trainer = self.make_trainer()
            self.trainer.begin()
            self.ctx.log(f"{self.name}: stage {self.stage + 1}/{len(stages)} from {self.unit} {it}: "
                         f"training {','.join(stages[self.stage])}")

    def stop_reason(self) -> str | None:
        """Why to stop before the next iteration: the trainer's own rule or early stopping."""
        best = self.best
        assert best is not None
        reason = self.trainer.finished()
        if reason is None and self.common.early_stop and best.since >= self.common.early_stop:
            criterion = "validation move-match" if self.by == "match_validation" else self.by
            reason = (f"{criterion} has not improved for {best.since} {self.unit}s "
                      f"({best.describe()} at {self.unit} {best.iteration})")
        return reason

    def loop(self, start: int, vm: float | None) -> Evaluator:
        """Iterations ``start..total``; the weights written to ``RUN/weights.json``."""
        name, unit, log = self.name, self.unit, self.ctx.log
        best = self.best
        assert best is not None
        log(f"{name}: {unit} {start - 1}: validation move-match {_fmt(vm)}"
            + (_ci(self.match_ci95) if start == 1 else ""))
        bar = progress_bar(range(start, self.total + 1), desc=name, unit=unit, disable=not self.ctx.progress,
                           initial=start - 1, total=self.total)
        for it in bar:
            self.next_stage_if_due(it)
            reason = self.stop_reason()
            if reason is not None:
                log(f"{name}: {reason}; stopping")
                break
            check_interrupt()
            t = compile_clock()
            metrics = self.trainer.step(it)
            check_interrupt()
            vm, t_val = self.validate(self.trainer.weights())
            measured = {**metrics, "match_validation": vm}
            best.update(it, measured.get(self.by), self.trainer.weights(), vm)
            record = {**measured, **best.record(), "validation_seconds": round(t_val, 3),
                      "iteration_seconds": round(compile_clock() - t, 3)}
            if self.stages:
                record["stage"] = self.stage + 1
            self.save(it, record)
            headline = {k: metrics[k] for k in self.method.headline if k in metrics}
            bar.set_postfix({**{k: _fmt(v) for k, v in headline.items()}, "val": _fmt(vm)})
            log(f"{name}: {unit} {it}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in headline.items())
                + f", validation move-match {_fmt(vm)}{_ci(self.match_ci95)}, {record['iteration_seconds']:.1f} s")
        bar.close()
        if self.common.keep == "best":
            log(f"{name}: kept the weights of {unit} {best.iteration} ({best.describe()})")
        return best.weights if self.common.keep == "best" else self.trainer.weights()


def stage_ends(total: int, n_stages: int) -> list[int]:
    """The last iteration of each of ``n_stages`` stages sharing ``total`` iterations equally
    (stage k ends at round((k + 1) total / n)); [] without stages."""
    return [round((k + 1) * total / n_stages) for k in range(n_stages)]


__all__ = ["Best", "Trainer", "drive", "stage_ends"]
