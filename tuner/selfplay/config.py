"""Settings of ``tuner selfplay`` (:class:`SelfplayConfig`): how games start, how long each
side thinks, when a game is adjudicated, how the positions are split, and where the games are
played (``workers``, ``executor``, ``scheduler``: not settings of the games)."""

from __future__ import annotations

from dataclasses import dataclass

from tuner.config import help_field
from tuner.cores import check_workers
from tuner.training.executor import EXECUTORS
from tuner.limits import check_limits


#: the most games a run may hold (the games' list is made up front; docs/selfplay.md's largest
#: run played 15,000)
MAX_GAMES = 1_000_000
#: the most draws of random plies a game's start may take, and the most random plies a start may
#: have (the defaults are 20 and 4): each draw is a search, and every draw may fail
MAX_START_TRIES = 10_000
MAX_RANDOM_PLIES = 1_000


@dataclass(frozen=True, kw_only=True)
class SelfplayConfig:
    """The ``[selfplay]`` settings; every default is a round value, not tuned."""

    games: int = help_field(1000, "games to play (a resumed run plays the ones still missing)")
    nodes: int | None = help_field(5000, "node budget of each move's search (iterative deepening, the "
                                         "iteration that exhausts it discarded); 0 with --depth: depth only")
    depth: int | None = help_field(None, "search depth of each move in plies instead of a node budget",
                                   metavar="PLIES")
    openings: str | None = help_field(None, "openings file (EPD or FEN lines); None: the shipped "
                                            "datasets/openings/openings.epd", metavar="FILE")
    random_plies: int = help_field(4, "uniformly random legal plies played after the opening, drawn from the "
                                      "seed and the game's number")
    start_margin: int = help_field(200, "a start (opening plus random plies) that the engine scores beyond this "
                                        "many centipawns either way at start_nodes is drawn again, at most "
                                        "start_tries times (then the opening alone is used)", metavar="CP")
    start_nodes: int = help_field(2000, "node budget of the search that checks a start's balance")
    start_tries: int = help_field(20, "draws of random plies per game before falling back to the opening")
    resign_cp: int = help_field(1000, "adjudicate a win when both sides' scores are beyond this for "
                                      "resign_moves moves each (mates count as beyond)", metavar="CP")
    resign_moves: int = help_field(4, "win adjudication: moves of each side beyond resign_cp (0: never)")
    draw_cp: int = help_field(10, "adjudicate a draw when both sides' scores are within this for draw_moves "
                                  "moves each, after draw_after plies", metavar="CP")
    draw_moves: int = help_field(8, "draw adjudication: moves of each side within draw_cp (0: never)")
    draw_after: int = help_field(80, "draw adjudication starts after this many plies of the game")
    max_plies: int = help_field(400, "adjudicate a draw after this many plies of the game")
    split: tuple[float, ...] = help_field((0.9, 0.05, 0.05), "train, validation and test fractions of the games")
    dedup: bool = help_field(True, "keep a (position, best move) pair once, the first time it is met")
    seed: int = help_field(0, "seed of the openings' order and the random plies (the games are the same for "
                              "the same seed and settings, whatever --workers)")
    workers: int | None = help_field(None, "game processes (None or 0: one per core); with executor dask, the "
                                           "worker processes of the LocalCluster it starts when no scheduler is given")
    executor: str = help_field("local", "where the games are played: local (worker processes of this machine) or "
                                        "dask (a Dask cluster: --scheduler, or a LocalCluster of --workers "
                                        "processes); not a setting of the games: a run may resume on the other")
    scheduler: str = help_field("", "dask: address of a running scheduler, e.g. tcp://host:8786 (empty: start a "
                                    "LocalCluster on this machine)", metavar="ADDR")

    def validate(self) -> None:
        if not 1 <= self.games <= MAX_GAMES:
            raise ValueError(f"games must be from 1 to {MAX_GAMES:,}, not {self.games}")
        nodes = self.nodes if self.nodes else None
        if nodes is None and self.depth is None:
            raise ValueError("give a node budget (--nodes N) or a depth (--depth D) per move")
        check_limits(self.depth, nodes, None)
        check_limits(None, self.start_nodes, None)
        for name in ("random_plies", "start_margin", "resign_moves", "draw_cp", "draw_moves", "draw_after"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, not {getattr(self, name)}")
        if self.start_tries < 1 or self.max_plies < 1 or self.resign_cp < 1:
            raise ValueError("start_tries, max_plies and resign_cp must be positive")
        if self.start_tries > MAX_START_TRIES or self.random_plies > MAX_RANDOM_PLIES:
            raise ValueError(f"start_tries must be at most {MAX_START_TRIES:,} and random_plies at most "
                             f"{MAX_RANDOM_PLIES:,}, not {self.start_tries} and {self.random_plies} (a start that "
                             "is never found would be drawn for ever)")
        check_workers(self.workers)
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        if self.scheduler and self.executor != "dask":
            raise ValueError("scheduler is an option of executor dask")
        if len(self.split) != 3 or any(f < 0 for f in self.split) or abs(sum(self.split) - 1.0) > 1e-9:
            raise ValueError(f"split must be three fractions >= 0 summing to 1, not {self.split}")

    @property
    def node_limit(self) -> int | None:
        """The node budget per move, ``None`` for depth only."""
        return self.nodes if self.nodes else None


__all__ = ["SelfplayConfig"]
