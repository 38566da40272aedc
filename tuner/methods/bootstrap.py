"""Learning from the search itself: RootStrap, TreeStrap(minimax), TreeStrap(alpha-beta) and
TD-Leaf(lambda) over the sparse linear evaluator (``tuner tune --method rootstrap|treestrap-mm|
treestrap-ab|tdleaf``).

The evaluation is linear, ``e(s) = w . phi(s)``; every method moves ``e`` of some positions
towards a target by gradient descent on the squared error, ``dw = lr (target - e(s)) x(s)``.
Units: ``e``, targets and errors in centipawns (the kernels' eval units / PHASE_MAX), ``x(s) =
phi(s) / PHASE_MAX`` (a term's count split between its middle- and end-game copies), ``lr``
in weight units per centipawn of error per unit of feature. One update is made per search
(online, "learning as it goes", as Meep did), summing over the nodes the method uses:

* **RootStrap(alpha-beta)** (Veness et al. 2009, section 4): the root only; target the root's
  search value V(s): ``dw = lr (V(s) - e(s)) x(s)``.
* **TreeStrap(minimax)** (ibid., section 4, equation for Delta w over the tree): every
  interior node of a full-width minimax search (depth plies + quiescence, no pruning), each
  towards its own minimax value.
* **TreeStrap(alpha-beta)** (ibid., section 5): every interior node of the alpha-beta tree
  (transposition table, killers and history heuristic for move ordering,
  :mod:`search.bootstrap_tree`) with one-sided targets: a node whose search returned a lower
  bound ``v`` is raised towards ``v`` only if ``e(s) < v``; an upper bound lowers it only if
  ``e(s) > v``; exact values as minimax. Each position enters once per search (the
  occurrence with the greatest remaining depth, then the nearest the root).
* **TD-Leaf(lambda)** (Baxter, Tridgell & Weaver 1998; the baseline in Meep's table): over a
  game's positions x_1..x_N, ``J_t = tanh(score_t / scale)`` of the search score (the PV
  leaf's evaluation with the sign of its side), in White's view; ``d_t = J_{t+1} - J_t`` with
  the game's result (+1, 0, -1) after the last; ``w += lr sum_t grad J_t sum_{j>=t}
  lambda^{j-t} d_j``, applied online with an eligibility trace after each move. A network is
  trained by the same method through :mod:`tuner.methods.network_tdleaf` (one step per game).

Duchess's safeguards (Real & Blair): the update of a node ``d`` plies below the root is scaled
by ``lambda_depth ** d`` (their lambda = 1/3), and no weight moves more than ``max_step``
centipawns per search (0: no cap).

Four settings make RootStrap and TreeStrap learn from untrained weights here, all on by
default: ``fixed_pawn`` (the pawn's material weights keep their start values and fix the scale),
``mate_cp`` (targets clipped to +-mate_cp, a mate's value being that bound), ``quiet_leaves`` (a
node's evaluation is the static value of its quiescence PV leaf, :func:`tree_direction`) and
``normalize`` (normalized LMS). ``docs/bootstrap.md`` has the runs that showed each is needed.

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

from search.alphabeta import KIND_EVAL, MATE_BOUND
from search.board import W_KEY, W_STM
from search.bootstrap_tree import BOUND_LOWER, BOUND_UPPER, TreeRecord, TreeSearcher
from search.catalog import N_FEATURES, PHASE_MAX
from search.convert import from_fen, move_to_uci, push
from search.feature_kernels import features_batch_kernel
from search.search_api import search_many
from search.weights import atomic_write_text
from tuner.config import help_field
from tuner.errors import TunerError, check_interrupt
from tuner.arena.match import DEFAULT_OPENINGS, OpeningsFileError, load_openings, rules_end
from tuner.methods.registry import Method
from tuner.training.optim import floats_from_json, floats_to_json, to_search_weights
from tuner.training.training_data import TrainingData
from tuner.training.run_context import RunContext
from tuner.training.tune_config import TuneConfig
from tuner.training.weight_masks import mask_of, tuning_bounds

#: the weights ``fixed_pawn`` holds
PAWN_MATERIAL = ("mg.material.pawn", "eg.material.pawn")
#: the four methods of this module
ROOTSTRAP, TREESTRAP_MM, TREESTRAP_AB, TDLEAF = "rootstrap", "treestrap-mm", "treestrap-ab", "tdleaf"
#: self-play and position searches are single-threaded and deterministic; rows of the record
MAX_RECORDS = 1 << 17


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


@dataclass(frozen=True, kw_only=True)
class RootStrapConfig(BootstrapConfig):
    """RootStrap(alpha-beta) settings."""

    lr: float = help_field(0.03, LR_HELP)


@dataclass(frozen=True, kw_only=True)
class TreeStrapMMConfig(BootstrapConfig):
    """TreeStrap(minimax) settings."""


@dataclass(frozen=True, kw_only=True)
class TreeStrapABConfig(BootstrapConfig):
    """TreeStrap(alpha-beta) settings."""


@dataclass(frozen=True, kw_only=True)
class TDLeafConfig(BootstrapConfig):
    """TD-Leaf(lambda) settings."""

    lr: float = help_field(2000.0, "learning rate: weight units (cp) per unit of J difference per unit of "
                                "d J / d w (J = tanh(score / td_scale))")
    max_step: float = help_field(0.0, "cap on any weight's change per search, in cp (0: none)")
    td_lambda: float = help_field(0.7, "TD's lambda: discount of later differences (Giraffe: 0.7)")
    td_scale: float = help_field(400.0, "J = tanh(score / td_scale), score in cp")
    network_lr: float = help_field(0.001, "a network's Adam step per game (--start network:... or a .mtnn file), "
                                          "in the parameter units of MMTO's network trainer")

    def validate(self) -> None:
        super().validate()
        if not (self.network_lr > 0 and math.isfinite(self.network_lr)):
            raise ValueError(f"network_lr must be a positive number, not {self.network_lr}")
        if not 0 <= self.td_lambda <= 1:
            raise ValueError(f"td_lambda must lie in [0, 1], not {self.td_lambda}")
        if self.td_scale <= 0:
            raise ValueError(f"td_scale must be positive, not {self.td_scale}")


# ---------------------------------------------------------------- the updates (pure arrays)


def unique_nodes(rec: TreeRecord) -> np.ndarray:
    """Rows of ``rec`` that enter the update, each position once: by Zobrist key, the row with
    the greatest remaining depth, then the smallest ply, then the first recorded. int64[K],
    ascending."""
    if len(rec) == 0:
        return np.zeros(0, dtype=np.int64)
    keys = rec.boards[:, W_KEY]
    order = np.lexsort((np.arange(len(rec)), rec.ply, -rec.depth, keys))
    first = np.ones(len(order), dtype=bool)
    first[1:] = keys[order[1:]] != keys[order[:-1]]
    return np.sort(order[first])


def node_errors(rec: TreeRecord, method: str, rows: np.ndarray, reference: np.ndarray | None = None,
                mate_cp: float = 0.0) -> np.ndarray:
    """Error ``target - e(s)`` in centipawns (float64[len(rows)]) of each row for ``method``:
    exact values for rootstrap and treestrap-mm; one-sided for treestrap-ab (a lower bound
    above e raises it, an upper bound below e lowers it, otherwise 0). ``e(s)`` is the row's
    static value, or ``reference`` (int64[len(rows)], eval units, the node's side to move's
    view) when given. With ``mate_cp`` > 0 targets are clipped to ``[-mate_cp, mate_cp]``, so a
    row whose value is a mate score has the target ``+-mate_cp`` (with its sign and bound); with
    ``mate_cp`` 0 such rows have error 0."""
    value = rec.value[rows].astype(np.float64)
    mate = np.abs(rec.value[rows]) > MATE_BOUND
    if mate_cp > 0:
        # a mate, or any value beyond a mate's worth, is worth +-mate_cp: the targets live in
        # [-mate_cp, mate_cp], which bounds the scale the weights can grow to
        value = np.clip(value, -mate_cp * PHASE_MAX, mate_cp * PHASE_MAX)
    err = (value - (rec.static[rows] if reference is None else reference)) / PHASE_MAX
    if method == TREESTRAP_AB:
        bound = rec.bound[rows]
        err = np.where(bound == BOUND_LOWER, np.maximum(err, 0.0), err)
        err = np.where(bound == BOUND_UPPER, np.minimum(err, 0.0), err)
    return np.where(mate & (mate_cp <= 0.0), 0.0, err)


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


def tree_direction(rec: TreeRecord, method: str, *, lambda_depth: float = 1.0,
                   quiescence: bool = True, normalize: bool = False,
                   quiet_weights: np.ndarray | None = None, mate_cp: float = 0.0
                   ) -> tuple[np.ndarray, dict[str, float]]:
    """The update direction of one search for rootstrap / treestrap-mm / treestrap-ab:
    ``sum_s lambda_depth^ply(s) (target(s) - e(s)) x(s)`` over the nodes the method uses
    (float64[N_FEATURES], per unit of lr), and figures of the nodes (count, squared error,
    updated count, ``norm``).

    With ``quiet_weights`` (the int32 weights searched with), a node's evaluation ``e(s)`` is
    its *quiescence value* ``q(s) = sign * w . x(l)``, the static evaluation of the PV leaf
    ``l`` of a quiescence search from ``s`` (``sign`` +1 when ``l`` has s's side to move, else
    -1), and the update follows that leaf's features: ``(target(s) - q(s)) sign x(l)``. That is
    the evaluation the search itself puts on a node at its horizon, and the one MMTO and Texel
    fit (docs/references.md). The static evaluation of a node in the middle of an exchange
    cannot see the recapture, so moving it towards the search value teaches the weights that
    material does not count (each recapture says "a piece down is even"); its quiescence leaf is
    quiet. Quiescence nodes then have ``target = q(s)`` and drop out, and nodes whose
    quiescence search ends in a mate or draw verdict are left out.

    With ``normalize`` the direction is divided by ``norm = sum_s lambda_depth^ply(s)
    |x(s)|^2`` over the updated nodes (those with a non-zero error): the normalized LMS rule
    (Nagumo & Noda 1967; docs/references.md). One search's nodes share most of their
    features, so the plain sum moves each node's evaluation by about ``lr * norm`` times its
    error, which grows with the tree and makes a fixed ``lr`` diverge in large trees; divided
    by ``norm``, ``lr`` is the fraction of the (weighted mean) error removed per search,
    stable for ``0 < lr < 2`` whatever the tree's size."""
    if method == ROOTSTRAP:
        rows = np.flatnonzero(rec.ply == 0)[-1:]
    else:
        rows = unique_nodes(rec)
        if not quiescence:
            rows = rows[rec.depth[rows] >= 1]
    if quiet_weights is None:
        boards, signs, reference = rec.boards[rows], np.ones(len(rows)), None
    else:
        rows = rows[rec.depth[rows] >= 1]
        q = search_many(rec.boards[rows], 0, quiet_weights, n_threads=1)
        ok = q.kinds == KIND_EVAL
        rows, boards, reference = rows[ok], q.leaves[ok], q.scores[ok]
        signs = np.where(q.pv_len[ok] % 2 == 0, 1.0, -1.0)
    err = node_errors(rec, method, rows, reference, mate_cp)
    decay = np.power(lambda_depth, rec.ply[rows].astype(np.float64))
    direction, norm = weighted_sum(boards, err * decay * signs, decay if normalize else None)
    if normalize and norm > 0.0:
        direction /= norm
    return direction, {"nodes": float(len(rows)), "sq_error": float((err * err).sum()),
                       "updated": float(np.count_nonzero(err)), "norm": norm}


def capped_step(direction: np.ndarray, lr: float, trainable: np.ndarray, max_step: float) -> np.ndarray:
    """``lr * direction`` on the trainable weights, each entry clipped to ``[-max_step,
    max_step]`` when ``max_step`` > 0 (Duchess's cap); float64[N]."""
    step = np.where(trainable, lr * direction, 0.0)
    if max_step > 0:
        np.clip(step, -max_step, max_step, out=step)
    return step


class TDLeafTrace:
    """TD-Leaf(lambda) over one game, online (eligibility trace), in White's view.

    :meth:`observe` takes each search's ``J_t`` and ``grad J_t`` (float64[N]) in turn and
    returns the direction to add times lr for ``d_{t-1} = J_t - J_{t-1}`` (None at the first
    search); :meth:`finish` does the same with the game's result in place of ``J_{N+1}``.
    Summed over a game (weights fixed) the directions are ``sum_t grad J_t sum_{j>=t}
    lambda^{j-t} d_j``, KnightCap's update.
    """

    def __init__(self, n: int, lam: float) -> None:
        self.lam = lam
        self.trace = np.zeros(n, dtype=np.float64)
        self.last: float | None = None

    def observe(self, j: float, grad: np.ndarray) -> tuple[np.ndarray, float] | None:
        out = None
        if self.last is not None:
            d = j - self.last
            out = (d * self.trace, d)
        self.trace = self.lam * self.trace + grad
        self.last = j
        return out

    def finish(self, result: float) -> tuple[np.ndarray, float] | None:
        if self.last is None:
            return None
        d = result - self.last
        return d * self.trace, d


def leaf_j(rec: TreeRecord, root: np.ndarray, scale: float) -> tuple[float, np.ndarray]:
    """``J = tanh(score / scale)`` of a search (root side to move's view, score in cp) and its
    gradient ``(1 - J^2) / scale * sign * x(leaf)`` (float64[N]); a mate or draw verdict has
    ``J = +-1`` or 0 and no gradient."""
    if rec.kind != KIND_EVAL or abs(rec.score) > MATE_BOUND:
        j = 0.0 if rec.score == 0 else math.copysign(1.0, rec.score)
        return j, np.zeros(N_FEATURES, dtype=np.float64)
    leaf = root
    for m in rec.pv:
        leaf = push(leaf, m)
    sign = 1.0 if len(rec.pv) % 2 == 0 else -1.0
    j = math.tanh(rec.score / PHASE_MAX / scale)
    grad, _ = weighted_sum(leaf[None, :], np.array([(1.0 - j * j) / scale * sign]))
    return j, grad


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


class SearchTargetTrainer(BootstrapTrainer):
    """RootStrap and TreeStrap: nodes of each search moved towards their search values
    (:func:`tree_direction`)."""

    def learn(self, rec: TreeRecord, board: np.ndarray, trace: TDLeafTrace | None, tally: Tally) -> None:
        direction, fig = tree_direction(rec, self.method, lambda_depth=self.cfg.lambda_depth,
                                        quiescence=self.cfg.quiescence_nodes,
                                        normalize=self.cfg.normalize,
                                        quiet_weights=self.w if self.cfg.quiet_leaves else None,
                                        mate_cp=self.cfg.mate_cp)
        tally.used += int(fig["nodes"])
        tally.updated += int(fig["updated"])
        tally.sq_error += fig["sq_error"]
        if fig["updated"]:
            self._apply(direction)


class RootStrapTrainer(SearchTargetTrainer):
    """RootStrap(alpha-beta): the root of each search."""

    method = ROOTSTRAP


class TreeStrapTrainer(SearchTargetTrainer):
    """TreeStrap: every interior node of each search."""

    def records_quiescence(self) -> bool:
        # quiescence nodes are recorded only where they are learnt from: with quiet leaves their
        # target is their own quiescence value, and tree_direction drops them
        return self.cfg.quiescence_nodes and not self.cfg.quiet_leaves


class TreeStrapMMTrainer(TreeStrapTrainer):
    """TreeStrap(minimax): a full-width minimax tree, exact targets."""

    method = TREESTRAP_MM
    minimax = True


class TreeStrapABTrainer(TreeStrapTrainer):
    """TreeStrap(alpha-beta): the alpha-beta tree, one-sided targets at bounds."""

    method = TREESTRAP_AB


class TDLeafTrainer(BootstrapTrainer):
    """TD-Leaf(lambda): each game's PV leaves towards the later searches' and the result, online
    with an eligibility trace (:class:`TDLeafTrace`); from a position set it walks whole games in
    order, their results as the final targets."""

    method = TDLEAF

    def __init__(self, common: TuneConfig, cfg: BootstrapConfig, data: TrainingData, w0: Any,
                 ctx: RunContext) -> None:
        super().__init__(common, cfg, data, w0, ctx)
        if not isinstance(cfg, TDLeafConfig):
            raise TypeError(f"{self.method} needs TD-Leaf settings, not {type(cfg).__name__}")
        self.td = cfg
        if cfg.source != "selfplay" and data.train.results is None:
            raise TunerError(f"{common.data}: tdleaf from positions needs the games' results")

    def game_trace(self) -> Any:
        return TDLeafTrace(N_FEATURES, self.td.td_lambda)

    def learn(self, rec: TreeRecord, board: np.ndarray, trace: TDLeafTrace | None, tally: Tally) -> None:
        assert trace is not None  # TD-Leaf learns within games
        j, grad = leaf_j(rec, board, self.td.td_scale)
        white = 1.0 if int(board[W_STM]) == 0 else -1.0
        out = trace.observe(white * j, white * grad)
        if out is not None:
            self._td_step(out, tally)

    def end_game(self, trace: TDLeafTrace | None, white_result: float, tally: Tally) -> None:
        assert trace is not None
        out = trace.finish(white_result)
        if out is not None:
            self._td_step(out, tally)

    def _td_step(self, out: tuple[np.ndarray, float], tally: Tally) -> None:
        direction, d = out
        tally.td_abs += abs(d)
        tally.td_n += 1
        tally.used += 1
        if d != 0.0 and direction.any():
            tally.updated += 1
            self._apply(direction)

    def rms_error(self, tally: Tally) -> float | None:
        return None

    def extra_metrics(self, tally: Tally) -> dict[str, Any]:
        return {"mean_abs_td": tally.td_abs / tally.td_n if tally.td_n else None}

    def _positions(self, iteration: int, tally: Tally) -> None:
        """Whole games of the training split, in a seeded order, until ``positions`` positions."""
        pos = self.data.train
        rng = np.random.default_rng([self.common.seed, iteration])
        results = pos.results
        assert results is not None
        ids = pos.game_ids
        taken = 0
        for g in rng.permutation(np.unique(ids)):
            if taken >= self.cfg.positions:
                break
            rows = np.flatnonzero(ids == g)
            if not np.isfinite(results[rows[0]]):
                continue  # an unfinished game: no final target
            self._new_game()
            trace = self.game_trace()
            for r in rows:
                b = pos.boards[r]
                self._learn(self._search(b, None), b, trace, tally)
                check_interrupt()
            r0 = rows[-1]
            white_score = results[r0] if int(pos.boards[r0][W_STM]) == 0 else 1.0 - results[r0]
            self.end_game(trace, 2.0 * white_score - 1.0, tally)
            taken += len(rows)
            tally.games += 1
            tally.plies += len(rows)


_PANELS = [("error of the updated nodes (cp, rms)", [("rms_error_cp", "rms error")])]

ROOTSTRAP_METHOD = Method(
    name=ROOTSTRAP, config=RootStrapConfig, trainer=RootStrapTrainer,
    summary="RootStrap(ab) (Veness et al. 2009): move the root's evaluation towards its search value",
    iterations="iterations", unit="iteration", panels=_PANELS, headline=("rms_error_cp",))
TREESTRAP_MM_METHOD = Method(
    name=TREESTRAP_MM, config=TreeStrapMMConfig, trainer=TreeStrapMMTrainer,
    summary="TreeStrap(minimax): every interior node of a full-width minimax tree towards its value",
    iterations="iterations", unit="iteration", panels=_PANELS, headline=("rms_error_cp",))
TREESTRAP_AB_METHOD = Method(
    name=TREESTRAP_AB, config=TreeStrapABConfig, trainer=TreeStrapABTrainer,
    summary="TreeStrap(ab): every interior node of the alpha-beta tree towards its bounds (one-sided)",
    iterations="iterations", unit="iteration", panels=_PANELS, headline=("rms_error_cp",))


__all__ = ["BootstrapConfig", "BootstrapTrainer", "TDLeafConfig", "TDLeafTrace", "TDLeafTrainer", "Tally",
           "capped_step", "leaf_j", "node_errors", "tree_direction", "unique_nodes", "weighted_sum"]
