"""The outer loop every tuning method shares: :func:`drive`.

A method (:mod:`tuner.methods.registry`) supplies a :class:`Trainer`, which knows what one outer
iteration (an MMTO search-and-update round, a GA generation, a Texel epoch) does. The driver
owns everything around it, the same for every method:

* iterations ``1..N`` after the start (iteration 0 measures the starting point), with a
  progress bar and a log line each;
* the validation move-match of the trainer's weights after every iteration (one
  implementation: :func:`tuner.training.paced.validation_match`), and the best weights so far by the
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
* the executor of the heavy steps (:mod:`tuner.training.executor`: this process's threads or a Dask
  cluster), opened for the run; its results are reduced in chunk order, so the run's weights
  and metrics do not depend on it;
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

from search.evaluators import Evaluator, copy_evaluator, evaluator_from_json, evaluator_to_json
from tuner.compiling import compile_clock
from tuner.errors import TunerError, check_interrupt
from tuner.progress import progress_bar
from tuner.training.executor import executor_scope
from tuner.methods.registry import Method, Trainer
from tuner.training.run_folder import Checkpoint, RunDir, provenance
from tuner.training.paced import Pacer, validation_match
from tuner.training.training_data import TrainingData
from tuner.training.tune_config import TuneConfig, config_record, executor_options, parse_stages

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


def _fmt(x: Any) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return f"{x:.4f}"
    return str(x)


def drive(method: Method, common: TuneConfig, cfg: Any, data: TrainingData, run: RunDir, w0: Evaluator, *,
          resume: Checkpoint | None = None, progress: bool = True, log: Any = print) -> Evaluator:
    """Train with ``method`` from ``w0`` (or continue from ``resume``); return the weights
    written to ``RUN/weights.json`` (see the module docstring). The heavy steps run on the
    executor ``common`` names (:func:`tuner.training.executor.executor_scope`: this process, or a Dask
    cluster), opened for the run and closed after it."""
    with executor_scope(**executor_options(common), log=log):
        return _drive(method, common, cfg, data, run, w0, resume=resume, progress=progress, log=log)


def _drive(method: Method, common: TuneConfig, cfg: Any, data: TrainingData, run: RunDir, w0: Evaluator, *,
           resume: Checkpoint | None, progress: bool, log: Any) -> Evaluator:
    total = int(getattr(cfg, method.iterations))
    stages = parse_stages(common.stages)
    ends = stage_ends(total, len(stages))
    stage = 0
    stage_w0 = copy_evaluator(w0 if not isinstance(w0, np.ndarray) else np.asarray(w0, dtype=np.int32))

    def make_trainer(k: int, start_w: Evaluator) -> Trainer:
        c = dataclasses.replace(common, train=stages[k]) if stages else common
        return method.trainer(c, cfg, data, copy_evaluator(start_w), log=log, progress=progress)

    if resume is not None and stages:
        doc = resume.extra.get("stage")
        if not isinstance(doc, dict) or not 0 <= int(doc.get("index", -1)) < len(stages):
            raise TunerError(f"{run.state_path}: the checkpoint does not say which stage it is in")
        stage, stage_w0 = int(doc["index"]), evaluator_from_json(doc["w0"], f"{run.state_path}: stage w0")
    trainer = make_trainer(stage, stage_w0)
    pacer = Pacer()
    name, unit = method.name, method.unit

    def validate(w: Evaluator) -> tuple[float | None, float]:
        t = compile_clock()
        return validation_match(common, data, w, pacer=pacer), compile_clock() - t

    def save(iteration: int, metrics: dict[str, Any], best: Best) -> None:
        out = best.weights if common.keep == "best" else trainer.weights()
        record = {"iteration": iteration, **metrics}
        for key, value in record.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise FloatingPointError(f"{name}: {key} became {value} at {unit} {iteration}")
        run.append_metrics(record)
        meta = {"method": name, "iteration": iteration, "kept": common.keep,
                "best_iteration": best.iteration, "match_validation": best.match, "best_by": best.by,
                "config": config_record(common, cfg), **provenance()}
        extra = {"trainer": trainer.state(), "driver": best.to_json()}
        if stages:
            extra["stage"] = {"index": stage, "groups": list(stages[stage]), "w0": evaluator_to_json(stage_w0)}
        run.save(Checkpoint(name, iteration, trainer.weights(), extra), meta, output=out)

    by, direction = method.best_by
    if resume is None:
        t = compile_clock()
        metrics = trainer.begin()
        vm, t_val = validate(trainer.weights())
        measured = {**metrics, "match_validation": vm}
        best = Best(measured.get(by), 0, copy_evaluator(trainer.weights()), match=vm, by=by, lower=direction == "min")
        save(0, {**measured, **best.record(), "validation_seconds": round(t_val, 3),
                 "iteration_seconds": round(compile_clock() - t, 3)}, best)
        start = 1
    else:
        if "trainer" not in resume.extra or "driver" not in resume.extra:
            raise TunerError(f"{run.state_path}: a checkpoint of an older version of movetuner; "
                             "start the run again with --overwrite")
        trainer.restore(resume.extra["trainer"])
        best = Best.from_json(resume.extra["driver"])
        run.truncate_metrics(resume.iteration)
        start = resume.iteration + 1
        records = run.read_metrics()
        vm = records[-1].get("match_validation")
        if best.by != by:  # a checkpoint kept by another criterion: the same kept iteration, valued by this one
            at = next((r for r in records if r.get("iteration") == best.iteration), {})
            best = Best(at.get(by), best.iteration, best.weights, best.since, best.match, by, direction == "min")
            log(f"{name}: the checkpoint kept {unit} {best.iteration} by validation move-match; "
                f"from here on the best {unit} is the one with the best {by}")
    log(f"{name}: {unit} {start - 1}: validation move-match {_fmt(vm)}")
    bar = progress_bar(range(start, total + 1), desc=name, unit=unit[:4], disable=not progress,
               initial=start - 1, total=total)
    for it in bar:
        while stages and stage < len(stages) - 1 and (it > ends[stage] or trainer.finished() is not None):
            stage, stage_w0 = stage + 1, copy_evaluator(trainer.weights())
            trainer = make_trainer(stage, stage_w0)
            trainer.begin()
            log(f"{name}: stage {stage + 1}/{len(stages)} from {unit} {it}: training {','.join(stages[stage])}")
        reason = trainer.finished()
        if reason is None and common.early_stop and best.since >= common.early_stop:
            criterion = "validation move-match" if by == "match_validation" else by
            reason = (f"{criterion} has not improved for {best.since} {unit}s "
                      f"({best.describe()} at {unit} {best.iteration})")
        if reason is not None:
            log(f"{name}: {reason}; stopping")
            break
        check_interrupt()
        t = compile_clock()
        metrics = trainer.step(it)
        check_interrupt()
        vm, t_val = validate(trainer.weights())
        measured = {**metrics, "match_validation": vm}
        best.update(it, measured.get(by), trainer.weights(), vm)
        record = {**measured, **best.record(), "validation_seconds": round(t_val, 3),
                  "iteration_seconds": round(compile_clock() - t, 3)}
        if stages:
            record["stage"] = stage + 1
        save(it, record, best)
        headline = {k: metrics[k] for k in method.headline if k in metrics}
        bar.set_postfix({**{k: _fmt(v) for k, v in headline.items()}, "val": _fmt(vm)})
        log(f"{name}: {unit} {it}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in headline.items())
            + f", validation move-match {_fmt(vm)}, {record['iteration_seconds']:.1f} s")
    bar.close()
    if common.keep == "best":
        log(f"{name}: kept the weights of {unit} {best.iteration} ({best.describe()})")
    return best.weights if common.keep == "best" else trainer.weights()


def stage_ends(total: int, n_stages: int) -> list[int]:
    """The last iteration of each of ``n_stages`` stages sharing ``total`` iterations equally
    (stage k ends at round((k + 1) total / n)); [] without stages."""
    return [round((k + 1) * total / n_stages) for k in range(n_stages)]


__all__ = ["Best", "Trainer", "drive", "stage_ends"]
