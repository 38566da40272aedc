"""MMTO's settings (the ``[mmto]`` table of a run's ``config.toml``, the ``tuner tune --method
mmto`` options) and its patience rule: shared by the trainer of linear weights
(:mod:`tuner.methods.mmto`) and that of networks (:mod:`tuner.methods.network_mmto`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from objectives.mmto import LOSSES
from search.params.catalog import GROUPS
from tuner.config import help_field
from tuner.errors import TunerError
from tuner.training.training_data import ValueTarget
from tuner.training.weight_masks import constraint_masks, mask_of


@dataclass(frozen=True, kw_only=True)
class MmtoConfig:
    """MMTO's settings (the ``[mmto]`` table of a run's config.toml)."""

    # defaults: those marked "(Hoki & Kaneko 2014)" or "(Arasan)" come from docs/references.md;
    # the others are round values, not tuned (the measured levers are in docs/quality.md, and
    # the shipped recipe tuner/recipes/gm.toml holds the values that were chosen by them)
    iterations: int = help_field(10, "outer iterations: searches of the whole training set "
                                     "(a round value, not tuned)")
    inner_steps: int = help_field(32, "updates between searches, reusing the stored PV leaves "
                                      "(32 in Hoki & Kaneko 2014)")
    optimizer: str = help_field("grid", "update rule: grid (Hoki & Kaneko's grid-adjacent step of h on "
                                        "integer weights) or adam (Kingma & Ba 2015 on float master weights, "
                                        "rounded for the search)")
    step: int = help_field(1, "h: every trainable weight moves by h per update (grid-adjacent; the "
                              "smallest step of integer weights, as Hoki & Kaneko's small h)")
    lr: float = help_field(1.0, "adam: step size in weight units (centipawns; a round value of the scale "
                                "of the grid step h = 1, not tuned)")
    network_lr: float = help_field(0.005, "a network's Adam step (--start network:... or a .mtnn file), in "
                                          "units of its clipped activations (the output layer's in pawns); "
                                          "a network is always trained by Adam")
    loss: str = help_field("sigmoid", "move-choice loss of a position: sigmoid (Hoki & Kaneko's sum over "
                                      "the other moves of T(s_m - s_played)) or softmax (cross-entropy "
                                      "of the played move under softmax(a s))")
    slope: float = help_field(0.02, "a: slope of the sigmoid T(x) = 1/(1+exp(-a x)) or of the softmax, "
                                    "per centipawn (a round value of the scale of a pawn, T(100 cp) = "
                                    "0.88; docs/quality.md measures others, the gm recipe's included)")
    result_weight: float = help_field(0.0, "mu: weight of Texel's game-result term mu * mean (R - sigma(K "
                                           "s_played))^2 over the same leaves (0: none)")
    result_k: float = help_field(0.0, "K of that term per centipawn (0: fitted on the start weights)")
    result_lam: float = help_field(0.0, "with a result term on a set with search scores (tuner selfplay): the "
                                        "target of a scored position is lam * sigma(K score) + (1 - lam) * R, "
                                        "as texel's --lam (1: the scores alone, unscored positions have no "
                                        "target; 0: the results); needs result_k")
    window: float = help_field(300.0, "keep for the updates only moves scored within this many "
                                      "centipawns of the played move (0: all moves; 300: Arasan's "
                                      "3-pawn window)")
    l1: float = help_field(2e-5, "lambda_1 of the L1 term on the weights named by l1_on, per centipawn "
                                 "(J_main is per position; a round value, not tuned: docs/quality.md)")
    l1_on: tuple[str, ...] = help_field(tuple(g for g in GROUPS if g != "material"),
                                        "weights under L1, by group or feature-name prefix")
    constraint: tuple[str, ...] = help_field(("mg.material",), "equality constraints: each entry's weights "
                                             "keep their sum at its starting value (empty: none)")
    patience: int = help_field(2, "stop after J_main failed to fall this many iterations in a row "
                                  "(a round value, not tuned)")
    min_improvement: float = help_field(0.0, "relative fall of J_main that counts as falling")
    pls_threshold: float = help_field(0.0, "train through the probability-limited search (Giraffe, Lai 2015): "
                                           "each root move's subtree searched while the path's probability "
                                           "under pls_model stays above this threshold (e.g. 0.03125; about "
                                           "depth 1 at 32 moves a node) instead of to the common depth; 0: the "
                                           "depth sweep. Linear weights only")
    pls_model: str = help_field("gm", "the move model of pls_threshold: built-in gm or uniform, or a move-model "
                                      "file", metavar="FILE")

    def validate(self) -> None:
        if self.iterations < 0 or self.inner_steps < 1 or self.step < 1 or self.patience < 1:
            raise ValueError("iterations must be >= 0; inner_steps, step and patience >= 1")
        if not (self.slope > 0 and math.isfinite(self.slope)):
            raise ValueError(f"slope must be a positive number, not {self.slope}")
        if self.window < 0 or self.l1 < 0 or self.min_improvement < 0:
            raise ValueError("window, l1 and min_improvement must be >= 0")
        if self.optimizer not in ("grid", "adam"):
            raise ValueError(f"optimizer must be grid or adam, not {self.optimizer!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)) or not (self.network_lr > 0 and math.isfinite(self.network_lr)):
            raise ValueError(f"lr and network_lr must be positive numbers, not {self.lr}, {self.network_lr}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, not {self.loss!r}")
        if not (self.result_weight >= 0 and math.isfinite(self.result_weight)) or self.result_k < 0:
            raise ValueError("result_weight and result_k must be >= 0")
        if not 0.0 <= self.result_lam <= 1.0:
            raise ValueError(f"result_lam must be from 0 to 1, not {self.result_lam}")
        if self.result_lam > 0 and (self.result_weight == 0 or self.result_k == 0):
            raise ValueError("result_lam needs a result term with a fixed K: give result_weight and result_k "
                             "(e.g. --result-weight 1 --result-k 0.0064)")
        l1_mask = mask_of(self.l1_on, "l1_on")
        constrained = mask_of(self.constraint, "constraint")
        if np.any(l1_mask & constrained):
            raise ValueError("l1_on and constraint must not name the same weights")
        constraint_masks(self.constraint)
        if not 0.0 <= self.pls_threshold <= 1.0:
            raise ValueError(f"pls_threshold must be a probability in (0, 1], or 0 (the depth sweep), "
                             f"not {self.pls_threshold}")
        if self.pls_threshold > 0:  # the model is read by every sweep: a file that cannot be is refused now
            from search.pls.move_model import load_move_model  # noqa: PLC0415 - numba: only for the PLS sweep

            load_move_model(self.pls_model)  # MoveModelFileError, a ValueError naming the file


def stalled(history: list[float], cfg: MmtoConfig) -> bool:
    """Whether the last ``patience`` iterations each failed to lower J_main enough."""
    if len(history) <= cfg.patience:
        return False
    recent = history[-cfg.patience - 1:]
    return all(b >= a * (1 - cfg.min_improvement) for a, b in zip(recent, recent[1:]))


def pls_options(threshold: float, model: str) -> dict[str, Any]:
    """The sweep's settings for :func:`tuner.methods.mmto.search_chunk`: the probability-limited
    sweep's when ``threshold`` > 0, none for the depth sweep (its calls stay as they were)."""
    return {"pls_threshold": threshold, "pls_model": model} if threshold > 0 else {}


def pls_refusal(cfg: MmtoConfig, kind: str) -> str | None:
    """Why MMTO cannot train a ``kind`` evaluator with ``cfg`` (``Method.refuses``, checked
    before the positions load): the probability-limited sweep (:func:`search.pls.pls.pls_sweep`)
    takes linear weights only."""
    if kind == "network" and cfg.pls_threshold > 0:
        return ("[mmto] pls_threshold: the probability-limited sweep takes linear weights, not a network start "
                "(set pls_threshold = 0 to train the network through the depth sweep)")
    return None


def refusing_pls(network: Callable[..., Any]) -> Callable[..., Any]:
    """The network trainer ``network``, refusing ``pls_threshold`` in one line (as
    :func:`pls_refusal`; ``tuner tune`` refuses it earlier, this guards the trainer's other callers)."""
    def make(common: Any, cfg: MmtoConfig, data: Any, w0: Any, ctx: Any) -> Any:
        reason = pls_refusal(cfg, "network")
        if reason:
            raise TunerError(reason)
        return network(common, cfg, data, w0, ctx)

    return make


__all__ = ["MmtoConfig", "pls_options", "pls_refusal", "refusing_pls", "stalled", "value_target"]


def value_target(cfg: MmtoConfig) -> ValueTarget | None:
    """The result term's targets on scored positions (``result_lam`` > 0), or None: the results."""
    return ValueTarget(cfg.result_lam, cfg.result_k) if cfg.result_weight > 0 and cfg.result_lam > 0 else None
