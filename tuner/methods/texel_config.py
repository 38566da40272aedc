"""Texel's settings (:class:`TexelConfig`) and the positions it learns from, shared by the
linear trainer (:mod:`tuner.methods.texel`) and the network's (:mod:`tuner.methods.network_texel`).

The target of a position is the NNUE trainers' mix of the search score and the game result
(nnue-pytorch's and bullet's ``lambda``; docs/references.md [Texel]):

    R_p = lam * sigma(K s_p) + (1 - lam) * r_p,

``s_p`` the position's search score from the data (centipawns, side to move's view: ``tuner
selfplay`` writes it), ``r_p`` the game's result (1, 1/2, 0, side to move's view) and K the same
constant as the model's ``sigma(K q_p)``: with ``lam = 1`` the evaluation is fitted to the search
scores themselves, with ``lam = 0`` to the results (Texel's original method). A set without
scores (grandmaster games) is fitted to its results whatever ``lam``.

By default only quiet positions are kept (:func:`value_positions`): the side to move not in
check, its move (the played or the search's best move) neither a capture nor a promotion, and a
score within ``score_cap``; a static evaluation cannot be expected to match a score taken in the
middle of an exchange or near a mate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from objectives.texel import K_HI
from search.params.catalog import GROUPS
from tuner.config import help_field
from tuner.errors import TunerError
from tuner.training.positions import Positions
from tuner.training.position_set import PositionStream, split_size
from tuner.training.training_data import ValueTarget
from tuner.training.weight_masks import constraint_masks, mask_of


@dataclass(frozen=True, kw_only=True)
class TexelConfig:
    """Texel's settings (the ``[texel]`` table of a run's config.toml)."""

    # defaults: beta1, beta2 are Kingma & Ba's (docs/references.md [KB2015]); epochs, lr and
    # steps are round values, not tuned (docs/quality.md has the Texel run measured with them)
    epochs: int = help_field(10, "epochs: each refreshes the quiescence leaves, then updates the weights")
    optimizer: str = help_field("adam", "update rule: adam (Kingma & Ba 2015) or sgd")
    lr: float = help_field(1.0, "learning rate: Adam's step size in weight units (centipawns); for sgd, "
                                "weight units per unit of gradient")
    beta1: float = help_field(0.9, "Adam's beta1")
    beta2: float = help_field(0.999, "Adam's beta2")
    momentum: float = help_field(0.0, "sgd: heavy-ball momentum")
    batch_size: int = help_field(0, "positions per mini-batch, a pass of seeded mini-batches per epoch "
                                    "(0: full batch, 'steps' steps per epoch)")
    steps: int = help_field(50, "full batch: optimizer steps per epoch")
    k: float = help_field(0.0, "K of sigma(K q) per centipawn (0: fitted on the start weights)")
    l1: float = help_field(0.0, "L1 strength on the weights named by l1_on (per position, as E)")
    l1_on: tuple[str, ...] = help_field(tuple(g for g in GROUPS if g != "material"),
                                        "weights under L1, by group or feature-name prefix")
    l2: float = help_field(0.0, "L2 strength on the weights named by l2_on")
    l2_on: tuple[str, ...] = help_field((), "weights under L2, by group or feature-name prefix")
    constraint: tuple[str, ...] = help_field((), "equality constraints: each entry's weights keep their "
                                                 "sum at its starting value (empty: none)")
    network_lr: float = help_field(0.002, "a network's Adam step (--start network:... or a .mtnn file), in "
                                          "units of its clipped activations (the output layer's in pawns; "
                                          "docs/network.md has the runs behind the default)")
    network_lr_end: float = help_field(0.0, "a network's Adam step in the last epoch: the step falls from network_lr to "
                                            "it along a half cosine over the epochs, one value an epoch (0: "
                                            "network_lr throughout)")
    teacher: str = help_field("", "networks: distil from these weights instead of the game results: the target "
                                  "of a position is sigma(K q_teacher), q_teacher its quiescence value under "
                                  "the teacher (a built-in name, a weights file or a network file; "
                                  "empty: the game results)", metavar="WEIGHTS")

    lam: float = help_field(0.75, "weight of the search score in the target: lam * sigma(K score) + (1 - lam) * "
                                  "result (1: fit the scores, 0: the results; a set without scores uses its "
                                  "results)")
    quiet_only: bool = help_field(True, "keep quiet positions only: not in check, the move neither a capture nor a "
                                   "promotion, |score| <= score_cap")
    score_cap: int = help_field(2000, "with quiet_only: drop positions whose search score is beyond this many "
                                      "centipawns", metavar="CP")
    l2_start: float = help_field(0.0, "L2 strength pulling the trainable weights toward the start weights "
                                      "(per position, as E; the linear evaluator)")
    stream: str = help_field("auto", "read the training positions as a stream, a window of chunks at a time, so "
                                     "that memory does not grow with the set (on, off, or auto: on when the "
                                     "training positions are more than 2,000,000 and batch_size > 0; "
                                     "docs/selfplay.md, Streamed training)", metavar="auto|on|off")
    epoch_windows: int = help_field(0, "streamed: windows an epoch (0: every window, a pass over the set; else each "
                                       "epoch reads the first of its seeded order: a bounded epoch)",
                                    metavar="WINDOWS")
    stream_buffer: int = help_field(16, "streamed: chunks held and shuffled together (a compact set's chunk is "
                                        "65,536 positions, a Parquet set's is read in as many)", metavar="CHUNKS")

    def network_lr_of(self, epoch: int) -> float:
        """The network's Adam step in epoch ``epoch`` (1 .. epochs): ``network_lr`` without a
        schedule, else ``end + (network_lr - end) (1 + cos(pi (epoch - 1) / (epochs - 1))) / 2``
        (the first epoch's is ``network_lr`` whatever the epochs, the last's ``network_lr_end``)."""
        if self.network_lr_end == 0.0 or self.epochs <= 1 or epoch <= 1:
            return self.network_lr
        f = min(max((epoch - 1) / (self.epochs - 1), 0.0), 1.0)
        return self.network_lr_end + (self.network_lr - self.network_lr_end) * 0.5 * (1.0 + math.cos(math.pi * f))

    def validate(self) -> None:
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"lam must be between 0 and 1, not {self.lam}")
        if self.score_cap < 1:
            raise ValueError(f"score_cap must be positive, not {self.score_cap}")
        if not math.isfinite(self.l2_start) or self.l2_start < 0:
            raise ValueError(f"l2_start must be a finite number >= 0, not {self.l2_start}")
        if self.epochs < 0 or self.steps < 1 or self.batch_size < 0:
            raise ValueError("epochs and batch_size must be >= 0, steps >= 1")
        if self.steps > MAX_STEPS:
            raise ValueError(f"steps must be at most {MAX_STEPS:,} an epoch, not {self.steps}")
        if self.stream not in ("auto", "on", "off"):
            raise ValueError(f"stream must be auto, on or off, not {self.stream!r}")
        if self.stream == "on" and self.batch_size == 0:
            raise ValueError("stream on trains by mini-batches: give batch_size (e.g. 4096)")
        if self.epoch_windows < 0:
            raise ValueError(f"epoch_windows must be >= 0, not {self.epoch_windows}")
        if self.stream_buffer < 1:
            raise ValueError(f"stream_buffer must be >= 1, not {self.stream_buffer}")
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"optimizer must be adam or sgd, not {self.optimizer!r}")
        for name in ("lr", "beta1", "beta2", "momentum", "k", "l1", "l2", "network_lr", "network_lr_end"):
            if not math.isfinite(getattr(self, name)) or getattr(self, name) < 0:
                raise ValueError(f"{name} must be a finite number >= 0, not {getattr(self, name)}")
        if self.k > K_HI:
            raise ValueError(f"k must be at most {K_HI:g} per centipawn (the usual K is near 0.005), not {self.k}")
        if self.lr <= 0 or self.network_lr <= 0:
            raise ValueError(f"lr and network_lr must be positive, not {self.lr} and {self.network_lr}")
        if not (self.beta1 < 1 and self.beta2 < 1 and self.momentum < 1):
            raise ValueError("beta1, beta2 and momentum must be below 1")
        for what in ("l1_on", "l2_on", "constraint"):
            mask_of(getattr(self, what), what)
        constraint_masks(self.constraint)



#: the most full-batch optimizer steps an epoch may take (the default is 50)
MAX_STEPS = 1_000_000

#: with ``stream = "auto"``, a run streams its training positions when there are more than this
#: many (the in-memory path holds about 1.4 KB a position: 6.1 GB for 4.5 M, docs/network.md)
STREAM_ABOVE = 2_000_000


def streams(common: Any, cfg: TexelConfig) -> bool:
    """Whether a Texel run with these settings reads its training positions as a stream
    (:mod:`tuner.training.position_set`): ``stream`` on, or auto with mini-batches and more than
    :data:`STREAM_ABOVE` training positions (the split's rows, or ``max_train`` of them; read
    from the split file's index or metadata only)."""
    if cfg.stream != "auto":
        return cfg.stream == "on"
    if cfg.batch_size == 0 or not common.data:
        return False
    return split_size(common.data, "train", limit=common.max_train) > STREAM_ABOVE


def with_results(pos: Positions, what: str) -> tuple[Positions, int]:
    """The positions of finished games (result 1-0, 0-1 or 1/2-1/2) and how many were skipped."""
    if pos.results is None:
        raise TunerError(f"the {what} positions carry no game results (texel needs the 'result' column)")
    keep = np.flatnonzero(np.isfinite(pos.results))
    return pos.subset(keep), len(pos) - len(keep)


def results_of(pos: Positions) -> np.ndarray:
    """The game results float64[P] of positions kept by :func:`with_results`."""
    if pos.results is None:
        raise TunerError("positions without game results reached Texel's objective")
    return pos.results


def uses_scores(pos: Positions, cfg: TexelConfig) -> bool:
    """Whether the targets mix in search scores: ``lam > 0`` and the positions carry some."""
    return cfg.lam > 0 and pos.scores is not None and bool(np.isfinite(pos.scores).any())


def value_positions(pos: Positions, cfg: TexelConfig, what: str) -> tuple[Positions, dict[str, int]]:
    """The positions that have a target (a finished game's result unless ``lam`` is 1 with scores,
    a score when scores are used) and, with ``cfg.quiet_only``, are quiet (module docstring); with the
    count of those dropped per reason (``unfinished``, ``no_score``, ``in_check``,
    ``tactical_move``, ``score_cap``)."""
    if len(pos) == 0:
        return pos, {}
    keep, dropped = value_mask(pos, cfg, what)
    return pos.subset(np.flatnonzero(keep)), dropped


def value_mask(pos: Positions, cfg: TexelConfig, what: str) -> tuple[np.ndarray, dict[str, int]]:
    """:func:`value_positions` as bool[P], the positions kept, and the counts dropped."""
    from search.core.quiet import tactical_flags  # noqa: PLC0415 - the kernel, only when training

    keep = np.ones(len(pos), dtype=np.bool_)
    dropped: dict[str, int] = {}
    if len(pos) == 0:
        return keep, dropped

    def drop(reason: str, mask: np.ndarray) -> None:
        nonlocal keep
        dropped[reason] = int((keep & mask).sum())
        keep &= ~mask

    scored = uses_scores(pos, cfg)
    if not (scored and cfg.lam == 1.0):
        if pos.results is None:
            raise TunerError(f"the {what} positions carry no game results (texel needs the 'result' column, or "
                             "search scores with --lam 1)")
        drop("unfinished", ~np.isfinite(pos.results))
    if scored:
        assert pos.scores is not None
        drop("no_score", ~np.isfinite(pos.scores))
    if cfg.quiet_only and len(pos):
        check, tactical = tactical_flags(pos.boards, pos.played)
        drop("in_check", check)
        drop("tactical_move", tactical)
        if pos.scores is not None:
            with np.errstate(invalid="ignore"):
                drop("score_cap", np.abs(pos.scores) > cfg.score_cap)
    return keep, {k: v for k, v in dropped.items() if v}


@dataclass(frozen=True)
class ValueKeep:
    """The training positions with a target (:func:`value_mask`) as a stream's chunk filter
    (:data:`tuner.training.position_set.Keep`: equal settings, equal filter, so a stream keeps each
    chunk's mask from its first read)."""

    cfg: TexelConfig

    def __call__(self, pos: Positions) -> tuple[np.ndarray, dict[str, int]]:
        return value_mask(pos, self.cfg, "training")


def value_targets(pos: Positions, cfg: TexelConfig, k_cp: float) -> np.ndarray:
    """The targets float64[P] of positions kept by :func:`value_positions` (module docstring),
    ``k_cp`` the K of sigma per centipawn."""
    if len(pos) == 0:
        return np.zeros(0, dtype=np.float64)
    if not uses_scores(pos, cfg):
        return results_of(pos)
    if cfg.lam < 1.0:
        results_of(pos)  # the mix needs them
    return ValueTarget(cfg.lam, k_cp).targets(pos)  # every kept position has a score


#: positions of the sample a streamed run fits K on and measures its start on (:meth:`PositionStream.sample`)
K_SAMPLE = 500_000


class StreamTally:
    """What a streamed epoch adds up over its windows: positions, E at each window's search
    (times its positions), nodes, drops, optimizer steps and where the time went."""

    def __init__(self) -> None:
        self.n = 0
        self.e_sum = 0.0
        self.nodes = 0
        self.updates = 0
        self.dropped: dict[str, int] = {}
        self.read_seconds = self.search_seconds = self.update_seconds = 0.0

    def metrics(self) -> dict[str, Any]:
        """``e_train`` (the mean over the epoch of each position's E when its window was searched),
        ``train_positions`` (those trained on), ``left_out``, the steps and the seconds."""
        return {"e_train": self.e_sum / self.n if self.n else None, "train_positions": self.n,
                "left_out": sum(self.dropped.values()), "updates": self.updates,
                "read_seconds": round(self.read_seconds, 3), "update_seconds": round(self.update_seconds, 3)}


def stream_windows(stream: PositionStream, cfg: TexelConfig, epoch: int, seed: int,
                   tally: StreamTally, n_threads: int, *, keep: bool = True) -> Iterator[Positions]:
    """The windows of epoch ``epoch`` (:meth:`PositionStream.windows`, ``cfg.stream_buffer`` chunks
    shuffled together, the first ``cfg.epoch_windows``), each kept to the positions with a target
    (:class:`ValueKeep`; every position without ``keep``: a teacher labels every one), empty ones
    skipped; the reading time and the drops go to ``tally``."""
    from search.tree.search_api import threads  # noqa: PLC0415 - the kernels, only when training

    it = stream.windows(epoch, seed, buffer_chunks=cfg.stream_buffer, limit=cfg.epoch_windows,
                        keep=ValueKeep(cfg) if keep else None, dropped=tally.dropped)
    while True:
        t = time.perf_counter()
        with threads(n_threads):
            window = next(it, None)
        tally.read_seconds += time.perf_counter() - t
        if window is None:
            return
        if len(window):
            yield window


def describe_drops(dropped: dict[str, int]) -> str:
    """``3 unfinished, 40 in_check`` (empty when nothing was dropped)."""
    return ", ".join(f"{v} {k}" for k, v in dropped.items())


__all__ = ["K_SAMPLE", "STREAM_ABOVE", "StreamTally", "TexelConfig", "ValueKeep", "describe_drops", "results_of",
           "stream_windows", "streams", "uses_scores", "value_mask", "value_positions", "value_targets", "with_results"]
