"""Training the move-probability model: softmax cross-entropy of the played move over the legal
moves (:mod:`objectives.move_choice`), Adam (Kingma & Ba 2015) on mini-batches of positions, L2
and the number of epochs chosen on the validation split.

For each L2 coefficient of :attr:`MoveTrainConfig.l2`, training starts from the uniform model
(every weight 0) and makes :attr:`MoveTrainConfig.epochs` passes over the training positions in
a seeded random order, ``batch_size`` positions per Adam step, the step size falling linearly
from ``lr`` to ``lr / 10`` over the passes. After each pass the validation loss is measured;
the weights with the lowest validation loss over every L2 value and pass are the result. The
test split is never read. The training positions are labelled with the played moves, the first
moves of the engine's own searches (``labels = "search"``, as Giraffe trained its model), or both;
the validation split is always measured on the played moves. With the same seed and data, the
result is the same whatever the number of threads (the kernels add partial sums in a fixed
order).

A run is short (its measured time is in ``docs/move-model.md``, "Training"), so it is not
resumable: run it again.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from objectives.move_choice import MoveChoiceSet, loss_and_gradient
from search.evaluation.evaluators import load_evaluator
from search.pls.move_catalog import GROUP_INDEX, GROUP_NAMES, MOVE_LAYOUT_HASH, N_MOVE_FEATURES, PREMOVE_GROUPS
from search.pls.move_model import MAX_ABS_MOVE_WEIGHT, MoveModel, move_features
from search.tree.search_api import threads
from tuner.config import help_field
from tuner.cores import check_threads, resolve_threads
from tuner.limits import LABEL_DEPTH, check_range
from tuner.errors import TunerError, check_interrupt
from tuner.progress import progress_bar
from tuner.moves.measure import PredictorFigures, choice_set, figures, joined, search_choice_set
from tuner.training.optim import Adam
from tuner.training.position_set import load_positions
from tuner.training.run_folder import provenance


#: what the training positions can be labelled with (:attr:`MoveTrainConfig.labels`)
LABELS = ("played", "search", "both")


@dataclass(frozen=True, kw_only=True)
class MoveTrainConfig:
    """How ``tuner moves train`` trains (each field is a command-line option)."""

    epochs: int = help_field(6, "passes over the training positions for each L2 value")
    batch_size: int = help_field(4096, "positions per Adam step")
    lr: float = help_field(0.05, "Adam's step size at the start, log-odds units per step; it falls linearly to "
                                 "lr/10 by the last pass")
    l2: tuple[float, ...] = help_field((0.0, 1e-5, 1e-4), "L2 coefficients to try (the objective adds l2/2 |w|^2); "
                                                          "the one with the lowest validation loss is kept",
                                       metavar="L2,...")
    labels: str = help_field("played", "what the training positions are labelled with: played (the move played "
                                       "in the game), search (the first move of the engine's own search, as "
                                       "Giraffe trained its model) or both (each position twice); the validation "
                                       "split is always measured on the played moves")
    label_depth: int = help_field(1, "labels search/both: plies of that search (+ quiescence)")
    label_weights: str = help_field("gm", "labels search/both: the evaluator of that search (a built-in name, a "
                                          "weights or network file)", metavar="WEIGHTS")
    groups: tuple[str, ...] = help_field((), "train only these feature groups (names of docs/move-model.md, or "
                                              "premove: the groups known before the move is made, the mixed "
                                              "search's leaf model); the others' weights stay 0 (empty: all)",
                                         metavar="GROUP,...")
    max_train: int = help_field(0, "a seeded sample of this many training positions (0: all)")
    max_validation: int = help_field(0, "a seeded sample of this many validation positions (0: all)")
    seed: int = help_field(0, "seed of the samples and of the order of the positions")
    threads: int = help_field(0, "threads (0: all cores)")

    def validate(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch-size must be >= 1")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, not {self.lr}")
        if not self.l2 or any(v < 0 for v in self.l2):
            raise ValueError("l2 must be one or more numbers >= 0")
        if self.labels not in LABELS:
            raise ValueError(f"labels must be one of {', '.join(LABELS)}, not {self.labels!r}")
        check_range("label-depth", self.label_depth, LABEL_DEPTH)
        if min(self.max_train, self.max_validation) < 0:
            raise ValueError("max-train and max-validation must be >= 0")
        check_threads(self.threads)
        group_indices(self.groups)


def group_indices(groups: tuple[str, ...]) -> list[int]:
    """The slot numbers of :attr:`MoveTrainConfig.groups` (``premove``: :data:`PREMOVE_GROUPS`; empty:
    every group); a one-line ``ValueError`` for an unknown name."""
    names: list[str] = []
    for g in groups or GROUP_NAMES:
        names.extend(PREMOVE_GROUPS if g == "premove" else (g,))
    unknown = [g for g in names if g not in GROUP_INDEX]
    if unknown:
        raise ValueError(f"unknown feature group {unknown[0]!r}: one of premove, {', '.join(GROUP_NAMES)}")
    return sorted({GROUP_INDEX[g] for g in names})


def restricted(data: MoveChoiceSet, groups: tuple[str, ...]) -> MoveChoiceSet:
    """``data`` with the slots of the groups outside ``groups`` emptied (-1), so that their
    weights get no gradient and stay 0; ``data`` itself when ``groups`` is empty."""
    if not groups:
        return data
    slots = np.full_like(data.slots, -1)
    keep = group_indices(groups)
    slots[:, keep] = data.slots[:, keep]
    return MoveChoiceSet(data.pos_ptr, data.played, slots)


@dataclass(frozen=True)
class TrainResult:
    """The chosen model and how it was chosen: ``history`` has one entry per (L2, pass) with its
    validation figures."""

    model: MoveModel
    l2: float
    epoch: int
    validation: PredictorFigures
    train_positions: int
    history: list[dict[str, Any]]
    seconds: float


def fit(train: MoveChoiceSet, validation: MoveChoiceSet, cfg: MoveTrainConfig, *,
        progress: Callable[[int], object] | None = None,
        log: Callable[[str], object] | None = None) -> tuple[np.ndarray, float, int, PredictorFigures,
                                                            list[dict[str, Any]]]:
    """Train on ``train`` for each L2 value, measure every pass on ``validation``; return the best
    weights (float64[N_MOVE_FEATURES]), their L2, pass and validation figures, and the history.
    ``progress`` is called with the number of Adam steps done after each step."""
    if len(train) == 0 or len(validation) == 0:
        raise TunerError("the move model needs training and validation positions")
    n_threads = resolve_threads(cfg.threads)
    steps = -(-len(train) // cfg.batch_size)
    best: tuple[float, np.ndarray, float, int, PredictorFigures] | None = None
    history: list[dict[str, Any]] = []
    for l2 in cfg.l2:
        rng = np.random.default_rng(cfg.seed)
        w = np.zeros(N_MOVE_FEATURES, dtype=np.float64)
        opt = Adam(N_MOVE_FEATURES, lr=cfg.lr)
        for epoch in range(1, cfg.epochs + 1):
            order = rng.permutation(len(train))
            for s in range(steps):
                opt.lr = cfg.lr * (1.0 - 0.9 * ((epoch - 1) * steps + s) / max(cfg.epochs * steps - 1, 1))
                rows = np.sort(order[s * cfg.batch_size:(s + 1) * cfg.batch_size])
                with threads(n_threads):
                    _, grad = loss_and_gradient(train, w, l2=l2, rows=rows)
                w = opt.step(w, grad)
                check_interrupt()
                if progress is not None:
                    progress(1)
            with threads(n_threads):
                fig = figures(validation, w)
            if not np.isfinite(fig.loss):
                raise TunerError(f"the validation loss is {fig.loss} at l2 {l2}, pass {epoch}: lower --lr")
            history.append({"l2": l2, "epoch": epoch, **fig.to_json()})
            if log is not None:
                log(f"l2 {l2:g} pass {epoch}: validation loss {fig.loss:.4f}, top-1 {fig.top1:.4f}, "
                    f"top-3 {fig.top3:.4f}")
            if best is None or fig.loss < best[0]:
                best = (fig.loss, w.copy(), l2, epoch, fig)
    assert best is not None
    return best[1], best[2], best[3], best[4], history


def train_move_model(data: str | Path, cfg: MoveTrainConfig, *, progress: bool = True,
                     log: Callable[[str], object] | None = None) -> TrainResult:
    """Train a move model on the train split of the position set ``data``, choosing L2 and the
    pass on its validation split (module docstring); a one-line :class:`TunerError` for a set
    that cannot be read or has no positions with played moves."""
    start = time.perf_counter()
    sets = []
    unlabelled = 0
    for split, limit in (("train", cfg.max_train), ("validation", cfg.max_validation)):
        pos = load_positions(data, split, limit=limit, seed=cfg.seed, progress=progress)
        if len(pos) == 0:
            raise TunerError(f"{data}: the {split} split holds no positions")
        mf = move_features(pos.boards, n_threads=resolve_threads(cfg.threads))  # once, for either labelling
        played = choice_set(pos, mf=mf) if split == "validation" or cfg.labels != "search" else None
        if split == "train" and cfg.labels != "played":
            try:
                evaluator = load_evaluator(cfg.label_weights)
            except ValueError as exc:
                raise TunerError(f"--label-weights: {exc}") from None
            searched, unlabelled = search_choice_set(pos, evaluator, cfg.label_depth, n_threads=resolve_threads(cfg.threads),
                                                     mf=mf)
            if log is not None:
                log(f"labelled {len(searched)} training positions by {cfg.label_weights}'s depth-{cfg.label_depth} "
                    f"search in {time.perf_counter() - start:.1f} s ({unlabelled} without a move)")
            sets.append(searched if played is None else joined(played, searched))
        else:
            assert played is not None
            sets.append(played)
    train, validation = (restricted(d, cfg.groups) for d in sets)
    steps = -(-len(train) // cfg.batch_size) * cfg.epochs * len(cfg.l2)
    with progress_bar(total=steps, unit="step", desc="train move model", disable=not progress, leave=False,
                      file=sys.stderr) as bar:  # plain lines in a log, not tqdm's \r frames
        w, l2, epoch, fig, history = fit(train, validation, cfg, progress=bar.update, log=log)
    seconds = time.perf_counter() - start
    if float(np.max(np.abs(w))) > MAX_ABS_MOVE_WEIGHT:  # a diverging fit: a file no loader would read
        raise TunerError(f"a trained move-model weight reached {float(np.max(np.abs(w))):g}, beyond the limit "
                         f"+-{MAX_ABS_MOVE_WEIGHT:g}: lower --lr or give a larger --l2")
    metadata = {"name": Path(str(data)).name, "trained_on": str(data), "layout_hash": MOVE_LAYOUT_HASH,
                "labels": cfg.labels if cfg.labels == "played" else
                f"{cfg.labels} ({cfg.label_weights}, depth {cfg.label_depth}; {unlabelled} left out)",
                "train_positions": len(train), "validation_positions": len(validation), "chosen_l2": l2,
                "chosen_epoch": epoch, "validation": fig.to_json(), "config": asdict(cfg),
                "seconds": round(seconds, 1), **provenance()}
    return TrainResult(MoveModel(w, metadata), l2, epoch, fig, len(train), history, seconds)


__all__ = ["LABELS", "MoveTrainConfig", "TrainResult", "fit", "group_indices", "restricted", "train_move_model"]
