"""The settings every optimizer shares (:class:`TuneConfig`, the top level of a run's
``config.toml``; each method's own dataclass is its ``[NAME]`` table, :mod:`tuner.methods.registry`),
and what is derived from them: the stages, the thread count, the starting weights, the
settings as a JSON-able record."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


from search.tree.search_api import DEFAULT_BUDGET, MAX_BUDGET
from search.params.catalog import GROUPS
from search.params.weights import BUILTIN_NETWORKS, BUILTIN_SETS
from search.evaluation.evaluators import Evaluator, copy_evaluator, load_evaluator
from tuner.config import help_field
from tuner.cores import check_threads, check_workers
from tuner.limits import TRAINING_DEPTH, check_range
from tuner.errors import TunerError
from tuner.training.executor import EXECUTORS
from tuner.training.weight_masks import mask_of


@dataclass(frozen=True, kw_only=True)
class TuneConfig:
    """Settings every optimizer shares."""

    method: str = help_field("mmto", "tuning method (see the method sections below)")
    data: str = help_field("", "position set written by 'tuner ingest' (a folder)", metavar="DIR")
    out: str = help_field("", "run folder for config.toml, metrics.jsonl, weights.json", metavar="RUN")
    start: str = help_field("material", f"weights to start from: a weights file or {', '.join(BUILTIN_SETS)}; a "
                                        f"network file (.mtnn), {', '.join(BUILTIN_NETWORKS)}, or a new network "
                                        "network:H[xH2xH3][/4][/oN][+LINEAR] "
                                        "(e.g. network:64x16x16+gm: a hybrid that starts as gm; network:256/o8: "
                                        "a direct network with 8 output buckets by the number of pieces)",
                            metavar="WEIGHTS")
    train: tuple[str, ...] = help_field(GROUPS, "weights to train, by group or feature-name prefix; "
                                                "the others stay frozen", metavar="GROUPS")
    depth: int = help_field(1, "search depth counted from the training position: 1 = each move's "
                               "child searched by quiescence only (1 ply + quiescence)")
    budget: int = help_field(DEFAULT_BUDGET, "node budget of each search (a runaway guard)")
    max_train: int = help_field(0, "use a seeded random sample of this many training positions (0: all)")
    max_validation: int = help_field(5000, "validation positions for the move-match figures (0: all)")
    threads: int = help_field(0, "threads for the numba kernels (0: all cores)")
    seed: int = help_field(0, "seed of every random choice of the run")
    terms: str = help_field("", "an engine author's own terms: a term plug-in file (docs/own-terms.md), as the "
                                "command line's --terms FILE, which fills it in; a path relative to the TOML "
                                "file's folder; a run records it and --resume uses it again", metavar="FILE")
    keep: str = help_field("best", "weights.json holds the weights of the best iteration by the method's "
                                   "criterion (best; the validation move-match, for texel its validation "
                                   "error e_validation) or of the last iteration (last)")
    early_stop: int = help_field(0, "stop after this many iterations in a row without a better value of that "
                                    "criterion (0: never)")
    executor: str = help_field("local", "where the searches run: local (this process's numba threads) or dask "
                                        "(a Dask cluster: --scheduler, or a LocalCluster of --workers processes)")
    scheduler: str = help_field("", "dask: address of a running scheduler, e.g. tcp://host:8786 (empty: start "
                                    "a LocalCluster on this machine)", metavar="ADDR")
    workers: int = help_field(0, "dask without --scheduler: worker processes of the LocalCluster (0: one per core)")
    chunk: int = help_field(4096, "positions per work item: an MMTO sweep batch, a Dask task (MMTO's "
                                  "figures are summed per chunk, so runs compare bit for bit at equal chunk)")
    stages: str = help_field("", "staged training (Duchess): groups per stage, stages separated by ';' "
                                 "(e.g. 'material;material,pieces,king;all'); each stage trains its groups "
                                 "from the last stage's weights, for an equal share of the iterations (or "
                                 "until the method's own limit); overrides train; empty: one stage",
                             metavar="STAGES")

    def validate(self) -> None:
        from tuner.methods.registry import get  # noqa: PLC0415 - the registry imports the methods, which import this

        get(self.method)
        if self.keep not in ("best", "last"):
            raise ValueError(f"keep must be best or last, not {self.keep!r}")
        if self.early_stop < 0:
            raise ValueError(f"early_stop must be >= 0, not {self.early_stop}")
        check_range("depth", self.depth, TRAINING_DEPTH)
        if not 1 <= self.budget <= MAX_BUDGET:
            raise ValueError(f"budget must be from 1 to {MAX_BUDGET}, not {self.budget}")
        if self.max_train < 0 or self.max_validation < 0:
            raise ValueError("max_train and max_validation must be >= 0")
        check_threads(self.threads)
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        check_workers(self.workers)
        if self.chunk < 1:
            raise ValueError(f"chunk must be >= 1, not {self.chunk}")
        if self.scheduler and self.executor != "dask":
            raise ValueError("scheduler is an option of executor dask")
        if not mask_of(self.train, "train").any():
            raise ValueError("no weights to train: train names no group or feature (it is empty)")
        for k, groups in enumerate(parse_stages(self.stages)):
            if not mask_of(groups, f"stages: stage {k + 1}").any():
                raise ValueError(f"stages: stage {k + 1} names no group or feature")


def parse_stages(text: str) -> list[tuple[str, ...]]:
    """The groups of each stage of ``TuneConfig.stages`` ('a,b;c;all'); ``all`` stands for
    every group; [] for no staging."""
    if not text.strip():
        return []
    out = []
    for k, part in enumerate(text.split(";")):
        items = tuple(i.strip() for i in part.split(",") if i.strip())
        if not items:
            raise ValueError(f"stages: stage {k + 1} is empty")
        out.append(GROUPS if items == ("all",) else items)
    return out


def start_weights(cfg: TuneConfig) -> Evaluator:
    """The starting evaluator (:func:`search.evaluation.evaluators.load_evaluator`: linear weights
    int32[N_FEATURES], a network file, or a new network ``network:H[xH2xH3][/4][/oN][+LINEAR]``); one-line
    error for a bad file or spec."""
    try:
        return copy_evaluator(load_evaluator(cfg.start))
    except ValueError as exc:
        raise TunerError(str(exc)) from None


def config_record(*configs: Any) -> dict[str, Any]:
    """The configuration dataclasses as one JSON-able mapping (for weights' metadata)."""
    out: dict[str, Any] = {}
    for c in configs:
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(c).items()})
    return out


__all__ = ["TuneConfig", "config_record", "parse_stages", "start_weights"]
