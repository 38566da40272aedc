"""Learning from the search itself: what the four search-bootstrapping methods share over the
sparse linear evaluator, RootStrap (:mod:`tuner.methods.rootstrap`), TreeStrap(minimax)
(:mod:`tuner.methods.treestrap_mm`), TreeStrap(alpha-beta) (:mod:`tuner.methods.treestrap_ab`)
and TD-Leaf(lambda) (:mod:`tuner.methods.tdleaf`): their settings, the capped update, the
sources of positions and the trainer that runs them (``tuner tune --method rootstrap|treestrap-mm|
treestrap-ab|tdleaf``).

The evaluation is linear, ``e(s) = w . phi(s)``; every method moves ``e`` of some positions
towards a target by gradient descent on the squared error, ``dw = lr (target - e(s)) x(s)``.
Units: ``e``, targets and errors in centipawns (the kernels' eval units / PHASE_MAX), ``x(s) =
phi(s) / PHASE_MAX`` (a term's count split between its middle- and end-game copies), ``lr``
in weight units per centipawn of error per unit of feature. One update is made per search
(online, "learning as it goes", as Meep did), summing over the nodes the method uses: the root
(RootStrap) or every interior node (TreeStrap), each towards its search value
(:mod:`tuner.methods.search_targets`), or the PV leaves of a game towards the later searches'
and the result (TD-Leaf).

Duchess's safeguards (Real & Blair): the update of a node ``d`` plies below the root is scaled
by ``lambda_depth ** d`` (their lambda = 1/3), and no weight moves more than ``max_step``
centipawns per search (0: no cap).

Four settings make RootStrap and TreeStrap learn from untrained weights here, all on by
default: ``fixed_pawn`` (the pawn's material weights keep their start values and fix the scale),
``mate_cp`` (targets clipped to +-mate_cp, a mate's value being that bound), ``quiet_leaves`` (a
node's evaluation is the static value of its quiescence PV leaf,
:func:`tuner.methods.search_targets.tree_direction`) and ``normalize`` (normalized LMS).
``docs/bootstrap.md`` has the runs that showed each is needed.

Positions come from self-play (``source = "selfplay"``: the engine plays itself from the
shipped openings with the weights it is learning, both sides learning, at a fixed depth or node
count; games saved as ``RUN/selfplay/iter-NNNN.pgn``), or from the training split of a position
set (``source = "positions"``: the same updates at each position; TD-Leaf walks whole games in
order and takes their results as its final targets). An outer iteration is ``games`` games or
``positions`` positions; ``minutes`` bounds the training time of a run (or of each stage, with
``--stages``), counted as CPU time of the training thread (searches and updates run there), so
that runs sharing a busy machine get the same amount of work; ``train_seconds`` reports it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import numpy as np

from search.tree.alphabeta import MATE_BOUND
from search.core.board import W_KEY
from search.tree.bootstrap_tree import TreeSearcher
from search.params.catalog import N_FEATURES, PHASE_MAX
from search.core.convert import from_fen, move_to_uci, push
from search.evaluation.feature_kernels import features_batch_kernel
from search.params.weights import atomic_write_text
from tuner.config import help_field
from tuner.errors import TunerError, check_interrupt
from tuner.arena.match import DEFAULT_OPENINGS, OpeningsFileError, load_openings, rules_end
from tuner.methods.registry import Panel
from tuner.training.optim import floats_from_json, floats_to_json, to_search_weights
from tuner.training.training_data import TrainingData
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig
from tuner.training.weight_masks import mask_of, tuning_bounds

#: the weights ``fixed_pawn`` holds
PAWN_MATERIAL = ("mg.material.pawn", "eg.material.pawn")
#: self-play and position searches are single-threaded and deterministic; rows of the record
MAX_RECORDS = 1 << 17
#: the plot panels of the methods that report the error of their updated nodes
PANELS: list[Panel] = [("error of the updated nodes (cp, rms)", [("rms_error_cp", "rms error")])]


# ---------------------------------------------------------------- configuration


LR_HELP = ("learning rate: with --normalize, the fraction of a search's (weighted mean) error removed per "
           "search; without, weight units (cp) per cp of error per unit of feature")


@dataclass(frozen=True, kw_only=True)
class BootstrapConfig:
    """Settings of the search-bootstrapping methods (each method's table in config.toml)."""

    iterations: int = help_field(10, "outer iterations (each: 'games' self-play games or 'positions' positions)")
    source: str = help_field("selfplay", "where positions come from: selfplay (the engine plays itself from "
                                         "the openings) or positions (the training split of --data)")
    games: int = help_field(4, "selfplay: games per iteration")
    positions: int = help_field(500, "positions: positions per iteration (tdleaf: at least this many, whole games)")
    search_depth: int = help_field(2, "depth of the learning searches (plies + quiescence)")
    nodes: int = help_field(0, "node limit per learning search (iterative deepening stops before it; 0: none)")
    lr: float = help_field(0.1, LR_HELP)
    lambda_depth: float = help_field(1.0, "scale each node's update by lambda_depth ** (plies below the root) "
                                          "(Duchess: 1/3; 1: no scaling)")
    max_step: float = help_field(2.0, "cap on any weight's change per search, in cp (0: none)")
    quiescence_nodes: bool = help_field(True, "treestrap: also update interior nodes of the quiescence search")
    fixed_pawn: bool = help_field(True, "keep the pawn's material weights as they start: the unit of the scale "
                                        "(targets come from the same evaluation, so nothing else fixes it)")
    mate_cp: float = help_field(1500.0, "rootstrap/treestrap: targets are clipped to +-mate_cp centipawns, so a "
                                        "node whose search value is a mate is moved towards +-mate_cp (0: no "
                                        "clip, such nodes are left out)")
    quiet_leaves: bool = help_field(True, "rootstrap/treestrap: a node's evaluation is its quiescence value (the "
                                    "static value of its quiescence PV leaf), not its static value")
    normalize: bool = help_field(True, "rootstrap/treestrap: divide each search's update by its nodes' summed "
                                        "squared feature norms (normalized LMS; lr is then the fraction of the "
                                        "error removed per search, stable below 2)")
    max_plies: int = help_field(300, "selfplay: a game is drawn after this many plies")
    openings: str = help_field("", "selfplay: openings file (EPD/FEN lines; empty: datasets/openings/openings.epd)",
                               metavar="FILE")
    minutes: float = help_field(0.0, "stop after this much training time in minutes, CPU time of the training "
                                     "thread (0: no limit; with --stages, per stage)")

    def validate(self) -> None:
        if self.iterations < 0 or self.games < 1 or self.positions < 1:
            raise ValueError("iterations must be >= 0, games and positions >= 1")
        if self.source not in ("selfplay", "positions"):
            raise ValueError(f"source must be selfplay or positions, not {self.source!r}")
        if not 1 <= self.search_depth <= 8:
            raise ValueError(f"search_depth must be between 1 and 8, not {self.search_depth}")
        if self.nodes < 0:
            raise ValueError(f"nodes must be >= 0, not {self.nodes}")
        if self.lr <= 0:
            raise ValueError(f"lr must be positive, not {self.lr}")
        if not 0 < self.lambda_depth <= 1:
            raise ValueError(f"lambda_depth must lie in (0, 1], not {self.lambda_depth}")
        if self.max_step < 0 or self.minutes < 0 or self.mate_cp < 0:
            raise ValueError("max_step, minutes and mate_cp must be >= 0")
        if self.max_plies < 1:
            raise ValueError(f"max_plies must be positive, not {self.max_plies}")


# ---------------------------------------------------------------- the update (pure arrays)


def feature_rows(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR features of ``boards`` (indptr int64[R+1], indices int32, x float64 = phi / PHASE_MAX)."""
    indptr, idx, val = features_batch_kernel(np.ascontiguousarray(boards))
    return indptr, idx, val.astype(np.float64) / PHASE_MAX


def weighted_sum(boards: np.ndarray, coef: np.ndarray, scale: np.ndarray | None = None
                 ) -> tuple[np.ndarray, float]:
    """``sum_r coef[r] x(boards[r])`` as float64[N_FEATURES] (rows with coef 0 skipped), and
    ``sum_r scale[r] |x(boards[r])|^2`` over the same rows (0.0 when ``scale`` is None)."""
    keep = np.flatnonzero(coef != 0.0)
    if len(keep) == 0:
        return np.zeros(N_FEATURES, dtype=np.float64), 0.0
    indptr, idx, x = feature_rows(boards[keep])
    per = np.repeat(coef[keep], np.diff(indptr)) * x
    norm = 0.0
    if scale is not None:
        # |x|^2 of a row sums its squared entries per feature index (a term's middle- and
        # end-game copies are distinct indices; no index repeats within a row)
        norm = float((np.repeat(scale[keep], np.diff(indptr)) * x * x).sum())
    return np.bincount(idx, weights=per, minlength=N_FEATURES), norm


def capped_step(direction: np.ndarray, lr: float, trainable: np.ndarray, max_step: float) -> np.ndarray:
    """``lr * direction`` on the trainable weights, each entry clipped to ``[-max_step,
    max_step]`` when ``max_step`` > 0 (Duchess's cap); float64[N]."""
    step = np.where(trainable, lr * direction, 0.0)
    if max_step > 0:
        np.clip(step, -max_step, max_step, out=step)
    return step


# ---------------------------------------------------------------- the trainer


@dataclass
class Tally:
    """Figures of one iteration."""

    searches: int = 0
    nodes: int = 0
    used: int = 0
    updated: int = 0
    sq_error: float = 0.0
    td_abs: float = 0.0
    td_n: int = 0
    games: int = 0
    plies: int = 0
    white_points: float = 0.0


def _rules_end(board: chess.Board, plies: int, max_plies: int) -> tuple[str, str] | None:
    """The match rules' end (:func:`tuner.arena.match.rules_end`), or a draw after ``max_plies``."""
    end = rules_end(board)
    if end is not None:
        return end
    if plies >= max_plies:
        return "1/2-1/2", f"adjudication: draw after {max_plies} plies"
    return None


class BootstrapTrainer:
    """What the four methods share (module docstring): the weights and their float master
    copy, the capped, clipped update, the sources of positions (self-play games or a position
    set's training split), the CPU-time limit and the checkpoint. An outer iteration is
    ``games`` self-play games or ``positions`` positions. A method is a subclass that says
    which search it learns from (:attr:`minimax`, :meth:`records_quiescence`) and what it learns
    from each search (:meth:`learn`), and, for TD-Leaf, how it walks games
    (:meth:`game_trace`, :meth:`end_game`)."""

    #: the method's name (registry and messages)
    method = ""
    #: whether its searches are full-width minimax (TreeStrap(minimax)) rather than alpha-beta
    minimax = False

    def __init__(self, common: TuneConfig, cfg: BootstrapConfig, data: TrainingData, w0: Any,
                 ctx: RunContext) -> None:
        self.common, self.cfg, self.data, self.ctx = common, cfg, data, ctx
        self.elapsed = 0.0
        self._setup(w0)
        self.openings: list[str] = []
        if cfg.source == "selfplay":
            path = cfg.openings or str(DEFAULT_OPENINGS)
            try:
                self.openings = [op.fen for op in load_openings(path)]
            except OpeningsFileError as exc:
                raise TunerError(str(exc)) from None
        self.run_dir = Path(common.out) if common.out else None

    # -- the evaluator (linear here; TD-Leaf of a network overrides these, tuner/methods/network_tdleaf.py)
    def _setup(self, w0: Any) -> None:
        """The trainable mask, bounds, float master copy and search weights from ``w0``."""
        self.trainable = mask_of(self.common.train, "train")
        if self.cfg.fixed_pawn:
            self.trainable &= ~mask_of(PAWN_MATERIAL, "fixed_pawn")
        self.w0 = np.asarray(w0, dtype=np.int32)
        self.low, self.high = tuning_bounds(self.w0)
        self.master = self.w0.astype(np.float64)
        self.w = self.w0.copy()
        self.searcher = TreeSearcher(tt_bits=16, max_records=MAX_RECORDS)

    def _new_game(self) -> None:
        """Forget what the searches kept from another game or position (transposition table)."""
        self.searcher.clear()

    def _weight_change(self, before: Any) -> int | float:
        """How far the weights moved since ``before`` (a :meth:`weights` of earlier): the summed
        absolute change of the integer weights."""
        return int(np.abs(self.w.astype(np.int64) - before).sum())

    # -- what a method says
    def records_quiescence(self) -> bool:
        """Whether its searches record the interior nodes of their quiescence searches."""
        return False

    def learn(self, rec: Any, board: np.ndarray, trace: Any, tally: Tally) -> None:
        """Learn from one search ``rec`` of ``board`` (what :meth:`_search` returned; ``trace``:
        the game's learning state, :meth:`game_trace`)."""
        raise NotImplementedError

    def game_trace(self) -> Any:
        """A new game's learning state (TD-Leaf's eligibility trace), or None."""
        return None

    def end_game(self, trace: Any, white_result: float, tally: Tally) -> None:
        """Learn from a game's end (``white_result``: +1, 0, -1 from White's view)."""

    def rms_error(self, tally: Tally) -> float | None:
        """The root mean square error of an iteration's updated nodes, in cp (None: not defined)."""
        return math.sqrt(tally.sq_error / tally.used) if tally.used else None

    def extra_metrics(self, tally: Tally) -> dict[str, Any]:
        """The method's own further figures of an iteration."""
        return {}

    # -- learning from one search
    def _search(self, board: np.ndarray, keys: list[int] | None) -> Any:
        cfg = self.cfg
        rec = self.searcher.search(board, self.w, depth=cfg.search_depth, nodes=cfg.nodes,
                                   history_keys=np.array(keys, dtype=np.uint64) if keys else None,
                                   minimax=self.minimax, quiescence=self.records_quiescence(),
                                   budget=self.common.budget)
        if rec.overflow:
            raise TunerError(f"{self.method}: a search recorded more than {MAX_RECORDS} interior nodes; "
                             "lower search_depth or set --nodes")
        return rec

    def _apply(self, direction: np.ndarray) -> None:
        step = capped_step(direction, self.cfg.lr, self.trainable, self.cfg.max_step)
        self.master = np.clip(self.master + step, self.low, self.high)
        self.w = to_search_weights(self.master, self.low, self.high)

    def _learn(self, rec: Any, board: np.ndarray, trace: Any, tally: Tally) -> None:
        tally.searches += 1
        tally.nodes += rec.nodes
        self.learn(rec, board, trace, tally)

    # -- sources
    def _selfplay_game(self, fen: str, tally: Tally, name: str) -> chess.pgn.Game:
        cfg = self.cfg
        board = chess.Board(fen)
        b = from_fen(fen)
        keys: list[int] = []
        self._new_game()
        trace = self.game_trace()
        game = chess.pgn.Game()
        game.setup(board)
        node: chess.pgn.GameNode = game
        while True:
            end = _rules_end(board, len(keys), cfg.max_plies)
            if end is not None:
                break
            rec = self._search(b, keys)
            self._learn(rec, b, trace, tally)
            m = rec.pv[0]
            move = chess.Move.from_uci(move_to_uci(m))
            if not board.is_legal(move):  # python-chess is the rules oracle
                raise RuntimeError(f"search returned illegal move {move.uci()} in {board.fen()}")
            keys.append(int(b[W_KEY]))
            b = push(b, m)
            board.push(move)
            node = node.add_variation(move)
            node.comment = f"{rec.score / PHASE_MAX / 100:+.2f}/{rec.search_depth}" if abs(rec.score) <= MATE_BOUND \
                else ("+M" if rec.score > 0 else "-M")
            check_interrupt()
        result, reason = end
        self.end_game(trace, {"1-0": 1.0, "0-1": -1.0}.get(result, 0.0), tally)
        tally.games += 1
        tally.plies += len(keys)
        tally.white_points += {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
        game.headers.update({"Event": f"movetuner {self.method} self-play", "Site": "movetuner", "Round": name,
                             "White": self.method, "Black": self.method, "Result": result, "Termination": reason})
        return game

    def _selfplay(self, iteration: int, tally: Tally) -> None:
        rng = np.random.default_rng([self.common.seed, iteration])
        picks = rng.integers(0, len(self.openings), size=self.cfg.games)
        games = [self._selfplay_game(self.openings[int(k)], tally, f"{iteration}.{g + 1}")
                 for g, k in enumerate(picks)]
        if self.run_dir is not None:
            folder = self.run_dir / "selfplay"
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(folder / f"iter-{iteration:04d}.pgn", "\n\n".join(str(g) for g in games) + "\n")

    def _positions(self, iteration: int, tally: Tally) -> None:
        """``positions`` positions of the training split, drawn with a seed per iteration."""
        rng = np.random.default_rng([self.common.seed, iteration])
        pos = self.data.train
        for r in rng.permutation(len(pos))[: self.cfg.positions]:
            self._new_game()
            b = pos.boards[r]
            self._learn(self._search(b, None), b, None, tally)
            check_interrupt()

    # -- the Trainer protocol
    def begin(self) -> dict[str, Any]:
        return {"searches": 0, "nodes": 0, "rms_error_cp": None, "train_seconds": 0.0}

    def restore(self, state: dict[str, Any]) -> None:
        self.master = floats_from_json(state["master"], N_FEATURES, "master")
        self.w = to_search_weights(self.master, self.low, self.high)
        self.elapsed = float(state["elapsed"])

    def step(self, iteration: int) -> dict[str, Any]:
        t = time.thread_time()
        before = self.weights()
        tally = Tally()
        if self.cfg.source == "selfplay":
            self._selfplay(iteration, tally)
        else:
            self._positions(iteration, tally)
        seconds = time.thread_time() - t
        self.elapsed += seconds
        out: dict[str, Any] = {
            "searches": tally.searches, "nodes": tally.nodes, "nodes_used": tally.used,
            "nodes_updated": tally.updated, "rms_error_cp": self.rms_error(tally),
            "weight_change": self._weight_change(before),
            "train_seconds": round(self.elapsed, 3), **self.extra_metrics(tally),
        }
        if tally.games:
            out.update({"games": tally.games, "plies": tally.plies,
                        "white_score": round(tally.white_points / tally.games, 4) if self.cfg.source == "selfplay"
                        else None})
        return out

    def weights(self) -> Any:
        return self.w

    def state(self) -> dict[str, Any]:
        return {"master": floats_to_json(self.master), "elapsed": self.elapsed}

    def finished(self) -> str | None:
        if self.cfg.minutes > 0 and self.elapsed >= 60.0 * self.cfg.minutes:
            return f"training time {self.elapsed / 60:.2f} min reached the limit of {self.cfg.minutes} min"
        return None


__all__ = ["LR_HELP", "MAX_RECORDS", "PANELS", "PAWN_MATERIAL", "BootstrapConfig", "BootstrapTrainer", "Tally",
           "capped_step", "feature_rows", "weighted_sum"]
