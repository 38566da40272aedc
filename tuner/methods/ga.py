"""Genetic algorithm with move-match fitness, after ACPP: ``tuner tune --method ga``.

Tunstall-Pedoe, "Genetic algorithms optimizing evaluation functions", ICCA Journal 14(3),
1991; David, van den Herik, Koppel & Netanyahu, IEEE Trans. Evol. Comp. 18(5), 2014
(``docs/references.md`` [ACPP], [DHKN2014]):

* chromosome: the trainable weights, as bounded integers (``encoding = "int"``: each gene the
  weight itself, within ``start +- span``), or ACPP's bit string of deltas around the starting
  weights (``encoding = "bits"``: ``bits`` per weight, two's complement, times ``bit_scale``
  centipawns);
* fitness: the fraction of ``sample`` training positions, drawn anew every generation as ACPP
  did, where the engine's move at the configured depth (1 ply + quiescence by default) is the
  grandmaster's; a tie between k equally best moves counts 1/k. Every individual is evaluated
  on the same sample, in batched numba calls (:func:`search.tree.search_api.move_match`, cut into calls
  of about 0.4 s so that Ctrl-C stops a run promptly: :func:`tuner.training.paced.paced_move_match`);
* DEAP operators: tournament selection, or roulette on linearly scaled fitness (the best gets
  ``scale_to`` times the average, ACPP: 2); two-point crossover with probability ``crossover``;
  mutation with probability ``mutation`` per individual and ``gene_mutation`` per gene or bit
  (ACPP: 0.001 per bit); the ``elite`` best of the hall of fame carried over unchanged.

As fitness is re-sampled each generation, every individual is re-evaluated every generation.
``RUN/weights.json`` holds the best weights so far by validation move-match among each
generation's fittest individual (model selection on the validation split; the test split stays
untouched). DEAP's operators draw from Python's ``random`` module: its state is set from the
run's seed, saved in the checkpoint and restored around each generation, so a run is
reproducible and a resumed run equals an uninterrupted one.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from deap import base, tools

from search.params.catalog import stage_pairs
from search.params.weights_base import MAX_ABS_WEIGHT
from tuner.config import help_field
from tuner.training.driver import drive
from tuner.methods.registry import Method
from tuner.training.run_folder import Checkpoint, RunDir
from search.evaluation.evaluators import Evaluator
from tuner.training.paced import paced_move_match
from tuner.training.training_data import TrainingData
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig
from tuner.training.weight_masks import mask_of, tuning_bounds


#: the largest population (ACPP used 50; 10,000 individuals of about 1,100 genes take about 90 MB)
MAX_POPULATION = 10_000


@dataclass(frozen=True, kw_only=True)
class GaConfig:
    """The genetic algorithm's settings (the ``[ga]`` table of a run's config.toml)."""

    generations: int = help_field(30, "generations to run")
    population: int = help_field(50, "individuals per generation (ACPP: 50)")
    sample: int = help_field(500, "training positions drawn anew each generation for the fitness (ACPP: 500)")
    encoding: str = help_field("int", "chromosome: int (bounded integers) or bits (ACPP's deltas)")
    span: int = help_field(100, "int encoding: each weight stays within start +- span centipawns")
    bits: int = help_field(6, "bits encoding: bits per weight (two's complement delta)")
    bit_scale: int = help_field(4, "bits encoding: centipawns per unit of delta")
    selection: str = help_field("tournament", "tournament, or roulette with linear fitness scaling (ACPP)")
    tournament: int = help_field(3, "tournament size")
    scale_to: float = help_field(2.0, "roulette: the best individual's scaled fitness over the average")
    crossover: float = help_field(0.5, "probability that a pair of parents is crossed (ACPP: 0.5)")
    mutation: float = help_field(0.2, "probability that an individual is mutated")
    gene_mutation: float = help_field(0.02, "probability that a gene (bits: a bit) is mutated")
    mutation_sigma: float = help_field(8.0, "int encoding: standard deviation of a gene's change, centipawns")
    elite: int = help_field(2, "best individuals of the hall of fame kept unchanged each generation")
    init_spread: float = help_field(10.0, "standard deviation of the initial population around the start")
    tie_stages: bool = help_field(False, "one gene per term for both its middle-game and end-game "
                                         "copy (ACPP had no tapering): half the genes")

    def validate(self) -> None:
        if self.generations < 0 or self.population < 2 or self.sample < 1:
            raise ValueError("generations must be >= 0, population >= 2, sample >= 1")
        if self.population > MAX_POPULATION:  # a population of 10**20 was built until the memory ran out
            raise ValueError(f"population must be at most {MAX_POPULATION}, not {self.population}")
        if self.encoding not in ("int", "bits"):
            raise ValueError(f"encoding must be int or bits, not {self.encoding!r}")
        if self.selection not in ("tournament", "roulette"):
            raise ValueError(f"selection must be tournament or roulette, not {self.selection!r}")
        if self.span < 1 or not 2 <= self.bits <= 16 or self.bit_scale < 1 or self.tournament < 2:
            raise ValueError("span >= 1, 2 <= bits <= 16, bit_scale >= 1 and tournament >= 2 are required")
        for name in ("crossover", "mutation", "gene_mutation"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be a probability, not {getattr(self, name)}")
        if self.scale_to < 1.0 or self.mutation_sigma <= 0 or self.init_spread < 0:
            raise ValueError("scale_to must be >= 1, mutation_sigma > 0, init_spread >= 0")
        for name in ("span", "mutation_sigma", "init_spread"):  # 1e300 overflowed the rounding to a gene
            if getattr(self, name) > MAX_ABS_WEIGHT:
                raise ValueError(f"{name} must be at most the evaluator's limit {MAX_ABS_WEIGHT}, "
                                 f"not {getattr(self, name)}")
        if not 0 <= self.elite < self.population:
            raise ValueError("elite must be between 0 and population - 1")
        if self.selection == "tournament" and self.tournament > self.population:
            raise ValueError(f"tournament ({self.tournament}) must not exceed population ({self.population})")


if TYPE_CHECKING:  # DEAP ships no types: the part of its Fitness this module uses
    class _DeapFitness:
        weights: tuple[float, ...]
        values: tuple[float, ...]
        valid: bool
else:
    _DeapFitness = base.Fitness


class Fitness(_DeapFitness):
    """Single objective, maximised (DEAP's creator is not used: no global registry)."""

    weights = (1.0,)


class Individual(np.ndarray):
    """A chromosome: a numpy array of genes with a DEAP fitness (int64 genes or 0/1 bits)."""

    fitness: Fitness

    def __new__(cls, genes: Any) -> Individual:
        obj = np.array(genes, dtype=np.int64).view(cls)
        obj.fitness = Fitness()
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        if obj is not None and not hasattr(self, "fitness"):
            self.fitness = Fitness()

    def __deepcopy__(self, memo: dict[int, Any] | None = None, /) -> Individual:
        out = Individual(np.asarray(self).copy())
        out.fitness = copy.deepcopy(self.fitness, memo)
        return out


@dataclass(frozen=True)
class Codec:
    """Maps chromosomes to full weight vectors: ``w = start`` with the trainable positions set
    from the genes."""

    start: np.ndarray  # int32[N_FEATURES]
    trainable: np.ndarray  # int64[T] feature indices, one per gene (the mg copy when tied)
    tied: np.ndarray  # int64[T] the feature each gene also sets (its eg copy), or -1
    encoding: str
    low: np.ndarray  # int encoding: gene bounds
    high: np.ndarray
    bits: int
    bit_scale: int

    @property
    def length(self) -> int:
        return len(self.trainable) * (self.bits if self.encoding == "bits" else 1)

    def weights(self, genes: np.ndarray) -> np.ndarray:
        w = self.start.copy()
        if self.encoding == "int":
            values = np.asarray(genes, dtype=np.int64)
        else:
            g = np.asarray(genes, dtype=np.int64).reshape(len(self.trainable), self.bits)
            unsigned = g @ (1 << np.arange(self.bits - 1, -1, -1, dtype=np.int64))
            delta = np.where(unsigned >= 1 << (self.bits - 1), unsigned - (1 << self.bits), unsigned)
            values = self.start[self.trainable] + delta * self.bit_scale
        w[self.trainable] = values
        tied = self.tied >= 0
        w[self.tied[tied]] = values[tied]
        return w

    def genes_of(self, w: np.ndarray) -> np.ndarray:
        """Genes closest to the weights ``w`` (for the initial population)."""
        genes: np.ndarray
        if self.encoding == "int":
            genes = np.clip(w[self.trainable].astype(np.int64), self.low, self.high)
            return genes
        lim = 1 << (self.bits - 1)
        delta = np.clip(np.round((w[self.trainable] - self.start[self.trainable]) / self.bit_scale), -lim, lim - 1)
        unsigned = (delta.astype(np.int64) + (1 << self.bits)) % (1 << self.bits)
        genes = ((unsigned[:, None] >> np.arange(self.bits - 1, -1, -1)) & 1).reshape(-1)
        return genes


def make_codec(common: TuneConfig, cfg: GaConfig, w0: np.ndarray) -> Codec:
    mask = mask_of(common.train, "train")
    start = np.asarray(w0, dtype=np.int32)
    if cfg.tie_stages:
        mg, eg = (np.asarray(ix, dtype=np.int64) for ix in stage_pairs())
        pair = np.flatnonzero(mask[mg] | mask[eg])
        trainable, tied = mg[pair], eg[pair]
    else:
        trainable = np.flatnonzero(mask)
        tied = np.full(len(trainable), -1, dtype=np.int64)
    # each gene within span of its start, and within the catalogue's tuning bounds
    cat_low, cat_high = tuning_bounds(start)
    low = np.maximum(start[trainable].astype(np.int64) - cfg.span, cat_low[trainable].astype(np.int64))
    high = np.minimum(start[trainable].astype(np.int64) + cfg.span, cat_high[trainable].astype(np.int64))
    return Codec(start, trainable, tied, cfg.encoding, low, high, cfg.bits, cfg.bit_scale)


@contextmanager
def python_random(state: Any) -> Iterator[list[Any]]:
    """Run DEAP's operators on ``state`` of Python's ``random``; yields a list whose first item
    is the state after the block; the caller's own random state is restored afterwards."""
    saved = random.getstate()
    random.setstate(state)
    box: list[Any] = [None]
    try:
        yield box
    finally:
        box[0] = random.getstate()
        random.setstate(saved)


def _state_to_json(state: Any) -> list[Any]:
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _state_from_json(data: list[Any]) -> Any:
    return (data[0], tuple(data[1]), data[2])


def cx_two_point_copy(a: Individual, b: Individual) -> tuple[Individual, Individual]:
    """DEAP's two-point crossover, with copies: numpy slices are views (DEAP's numpy example).
    Individuals of fewer than two genes (one term tuned) have nothing to cross: left as they are."""
    size = len(a)
    if size < 2:
        return a, b
    p1 = random.randint(1, size)
    p2 = random.randint(1, size - 1)
    if p2 >= p1:
        p2 += 1
    else:
        p1, p2 = p2, p1
    a[p1:p2], b[p1:p2] = b[p1:p2].copy(), a[p1:p2].copy()
    return a, b


def mut_gaussian_int(ind: Individual, *, sigma: float, indpb: float, low: np.ndarray,
                     high: np.ndarray) -> tuple[Individual]:
    """Add a rounded Gaussian step to each gene with probability ``indpb``, kept in bounds."""
    for i in range(len(ind)):
        if random.random() < indpb:
            ind[i] = int(min(max(ind[i] + round(random.gauss(0.0, sigma)), low[i]), high[i]))
    return (ind,)


def sel_roulette_scaled(individuals: list[Individual], k: int, scale_to: float) -> list[Individual]:
    """Roulette-wheel selection on linearly scaled fitness f' = a f + b with mean(f') = mean(f)
    and max(f') = scale_to * mean(f) (Goldberg's scaling, as ACPP), f' clipped at 0."""
    f = np.array([ind.fitness.values[0] for ind in individuals], dtype=np.float64)
    avg, top = f.mean(), f.max()
    if top > avg:
        a = (scale_to - 1.0) * avg / (top - avg)
        scaled = np.maximum(a * f + (1.0 - a) * avg, 0.0)
    else:
        scaled = np.ones_like(f)
    if scaled.sum() <= 0:
        scaled = np.ones_like(f)
    cum = np.cumsum(scaled)
    chosen = []
    for _ in range(k):
        u = random.random() * cum[-1]
        chosen.append(individuals[int(np.searchsorted(cum, u, side="right").clip(0, len(f) - 1))])
    return chosen


def toolbox_for(cfg: GaConfig, codec: Codec) -> base.Toolbox:
    tb = base.Toolbox()
    tb.register("clone", copy.deepcopy)
    tb.register("mate", cx_two_point_copy)
    if codec.encoding == "int":
        tb.register("mutate", mut_gaussian_int, sigma=cfg.mutation_sigma, indpb=cfg.gene_mutation,
                    low=codec.low, high=codec.high)
    else:
        tb.register("mutate", tools.mutFlipBit, indpb=cfg.gene_mutation)
    if cfg.selection == "tournament":
        tb.register("select", tools.selTournament, tournsize=cfg.tournament)
    else:
        tb.register("select", sel_roulette_scaled, scale_to=cfg.scale_to)
    return tb


def initial_population(cfg: GaConfig, codec: Codec) -> list[Individual]:
    """The start weights, and perturbations of them (Gaussian, ``init_spread``; bits: random
    small deltas)."""
    base_genes = codec.genes_of(codec.start)
    pop = [Individual(base_genes)]
    for _ in range(cfg.population - 1):
        if codec.encoding == "int":
            g = [int(min(max(v + round(random.gauss(0.0, cfg.init_spread)), lo), hi))
                 for v, lo, hi in zip(base_genes, codec.low, codec.high)]
            pop.append(Individual(g))
        else:
            w = codec.start.astype(np.float64).copy()
            w[codec.trainable] += [random.gauss(0.0, cfg.init_spread) for _ in codec.trainable]
            pop.append(Individual(codec.genes_of(np.round(w).astype(np.int64))))
    return pop


def evaluate_population(ctx: RunContext, common: TuneConfig, data: TrainingData, codec: Codec,
                        pop: list[Individual], sample: np.ndarray) -> np.ndarray:
    """Fitness of every individual on the sampled training positions: a batched search on
    ``ctx``'s executor, cut into calls of about 0.4 s with a Ctrl-C check between them (the
    same result as one call)."""
    weights = np.stack([codec.weights(np.asarray(ind)) for ind in pop]).astype(np.int32)
    m = paced_move_match(data.train.boards, data.train.played, weights, common.depth, rows=sample,
                         budget=common.budget, n_threads=ctx.threads, pacer=ctx.pacer("ga-fitness"),
                         executor=ctx.executor, what="ga-fitness")
    fitness: np.ndarray = m.mean(axis=1)
    return fitness


def sample_for(common: TuneConfig, cfg: GaConfig, generation: int, n: int) -> np.ndarray:
    """The training positions of a generation's fitness: seeded by (seed, generation)."""
    rng = np.random.default_rng([common.seed, generation])
    return np.sort(rng.choice(n, size=min(cfg.sample, n), replace=False))


def _pop_to_json(pop: list[Individual]) -> list[list[int]]:
    return [[int(v) for v in ind] for ind in pop]


class GaTrainer:
    """The genetic algorithm driven one generation at a time (:class:`tuner.training.driver.Trainer`).

    :meth:`weights` is the fittest individual of the last generation (at iteration 0 the start
    weights): the driver measures it on the validation split and keeps the best so far, which
    is what ``RUN/weights.json`` holds (model selection on the validation split)."""

    def __init__(self, common: TuneConfig, cfg: GaConfig, data: TrainingData, w0: np.ndarray,
                 ctx: RunContext) -> None:
        self.common, self.cfg, self.data, self.ctx = common, cfg, data, ctx
        self.codec = make_codec(common, cfg, w0)
        if self.codec.length == 0:
            raise ValueError("no trainable weights: check --train")
        self.tb = toolbox_for(cfg, self.codec)
        self.hof = tools.HallOfFame(max(cfg.elite, 1), similar=np.array_equal)
        self.pop: list[Individual] = []
        self.rstate: Any = None
        self.current = self.codec.start.copy()

    def begin(self) -> dict[str, Any]:
        rstate: Any = random.Random(self.common.seed).getstate()
        with python_random(rstate) as box:
            self.pop = initial_population(self.cfg, self.codec)
        self.rstate = box[0]
        self.ctx.log(f"ga: {self.codec.length} genes ({len(self.codec.trainable)} weights, {self.cfg.encoding})")
        return {"generation": 0}

    def restore(self, state: dict[str, Any]) -> None:
        self.pop = [Individual(g) for g in state["population"]]
        for genes, value in state.get("hall_of_fame", []):
            ind = Individual(genes)
            ind.fitness.values = (value,)
            self.hof.insert(ind)
        self.rstate = _state_from_json(state["random_state"])

    def step(self, iteration: int) -> dict[str, Any]:
        cfg, tb, hof = self.cfg, self.tb, self.hof
        t0 = time.perf_counter()
        sample = sample_for(self.common, cfg, iteration, len(self.data.train))
        # the hall of fame holds fitness measured on other samples: re-measure its members on
        # this one, in the same batched search as the population
        members = list(hof.items)
        scores = evaluate_population(self.ctx, self.common, self.data, self.codec, self.pop + members, sample)
        fitness = scores[: len(self.pop)]
        for ind, f in zip(self.pop + members, scores):
            ind.fitness.values = (float(f),)
        hof.clear()
        hof.update(members)
        hof.update(self.pop)
        t_eval = time.perf_counter() - t0
        best = max(self.pop, key=lambda ind: ind.fitness.values[0])
        self.current = self.codec.weights(np.asarray(best))
        with python_random(self.rstate) as box:
            offspring = [tb.clone(ind) for ind in tb.select(self.pop, len(self.pop) - cfg.elite)]
            for a, b in zip(offspring[::2], offspring[1::2]):
                if random.random() < cfg.crossover:
                    tb.mate(a, b)
                    del a.fitness.values, b.fitness.values
            for ind in offspring:
                if random.random() < cfg.mutation:
                    tb.mutate(ind)
                    del ind.fitness.values
            self.pop = [tb.clone(ind) for ind in hof.items[: cfg.elite]] + offspring
        self.rstate = box[0]
        return {"generation": iteration, "fitness_best": float(fitness.max()), "fitness_mean": float(fitness.mean()),
                "fitness_std": float(fitness.std()), "evaluation_seconds": round(t_eval, 3)}

    def weights(self) -> np.ndarray:
        return self.current

    def state(self) -> dict[str, Any]:
        return _ga_extra(self.pop, self.hof, self.rstate)

    def finished(self) -> str | None:
        return None


def train_ga(common: TuneConfig, cfg: GaConfig, data: TrainingData, run: RunDir, w0: np.ndarray, *,
             resume: Checkpoint | None = None, progress: bool = True, log: Any = print) -> Evaluator:
    """Run the genetic algorithm through the shared driver; the best weights by validation
    move-match (unless ``common.keep`` is ``last``)."""
    return drive(METHOD, common, cfg, data, run, w0, resume=resume, progress=progress, log=log)


def _ga_extra(pop: list[Individual], hof: Any, rstate: Any) -> dict[str, Any]:
    return {"population": _pop_to_json(pop),
            "hall_of_fame": [[[int(v) for v in ind], float(ind.fitness.values[0])] for ind in (hof.items if hof else [])],
            "random_state": _state_to_json(rstate)}


METHOD = Method(
    name="ga",
    config=GaConfig,
    trainer=GaTrainer,
    summary="genetic algorithm after ACPP (DEAP): move-match fitness on a sample drawn each generation",
    iterations="generations",
    unit="generation",
    panels=[("fitness (move-match on the generation's sample)", [("fitness_best", "best"), ("fitness_mean", "mean")])],
    headline=("fitness_best", "fitness_mean"),
)
