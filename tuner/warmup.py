"""Compile every numba kernel ahead (``tuner warmup``), so that no command waits for it later.

numba compiles a kernel the first time it is called and keeps it in its cache (next to the
sources, or under ``NUMBA_CACHE_DIR``); on a fresh install the first ``tuner uci`` plays its
first moves with a plain-Python search while it compiles for up to a minute, and every other
command waits for numba first.
Each step runs the real code on small inputs, so that exactly the kernels (and argument types)
of the commands are compiled:

* ``search``: the engine's iterative deepening and probability-limited search (``tuner uci``,
  ``bench match``, ``bench epd``) and the tuning methods' batched searches and move sweeps, for
  each evaluator kind (linear weights, the ``gm-nn`` network, a pure network), and with a term
  plug-in active (``tuner --terms FILE warmup``) for its kernels as well;
* ``ingest``: the sample games and a position file through ``tuner ingest``;
* ``tune``: one iteration of every tuning method on 500 of those positions (``tuner tune``,
  ``bench move-match``, ``bench compare``).

The steps after ``search`` need the repository's sample games (``datasets/sample``) and are
skipped with a note without them.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

#: the steps in the order they run
STEPS = ("search", "ingest", "tune")
#: method settings made small for the ``tune`` step (sizes only: the kernels and their argument
#: types stay those of a real run)
_SMALL = {"population": 4, "games": 1, "positions": 100}


#: the evaluators the ``search`` step warms: one of each kind the kernels are compiled for
#: (linear weights, a network with a linear part as the built-in ``gm-nn``, a pure network)
SEARCH_EVALUATORS = ("classic", "gm-nn", "network:8x8x8")


def warm_search(folder: Path) -> None:
    """For each evaluator kind of :data:`SEARCH_EVALUATORS` (and with a term plug-in active,
    its kernels): a ``go`` of the UCI engine with the depth-limited and the probability-limited
    search (``Search pls``, ``NAME@pls``), and the batched searches and move sweeps of the
    tuning methods and ``bench move-match`` (plain and probability-limited)."""
    import numpy as np  # noqa: PLC0415 - numba on demand

    from search.core.convert import STARTING_FEN, from_fen, move_to_uci  # noqa: PLC0415
    from search.evaluation.evaluators import checked_evaluator, load_evaluator  # noqa: PLC0415
    from search.pls.move_model import load_move_model  # noqa: PLC0415
    from search.pls.pls import pls_sweep  # noqa: PLC0415
    from search.tree.search_api import move_match, search, search_many, sweep  # noqa: PLC0415
    from tuner.arena.players import SEARCHES, as_player, new_engine  # noqa: PLC0415

    model = load_move_model("gm")
    board = from_fen(STARTING_FEN)
    boards = np.stack([board, from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")])
    for spec in SEARCH_EVALUATORS:
        try:
            weights = checked_evaluator(load_evaluator(spec))
        except ValueError:  # a network the installation lacks, or one a term plug-in excludes
            continue
        for kind in SEARCHES:  # as tuner uci, bench match, selfplay and bench epd make them
            best = new_engine(as_player(weights, kind, model), 4).think(board, [], max_depth=3)
            if best is not None:
                move_to_uci(best.pv[0])
        search(board, 2, weights, tt_bits=4)
        search_many(boards, 2, weights, n_threads=1)
        for leaves in (True, False):
            sweep(boards, 2, weights, leaves=leaves, n_threads=1)
        if isinstance(weights, np.ndarray):  # the linear evaluator's own sweeps
            for leaves in (True, False):
                pls_sweep(boards, 1 / 32, weights, model, leaves=leaves, n_threads=1)
            move_match(boards, np.zeros(len(boards), dtype=np.int32), np.stack([weights, weights]), 2, n_threads=1)


def _sample_set(folder: Path) -> Path:
    """The sample games and a one-line position file, ingested into ``folder`` (once)."""
    import chess  # noqa: PLC0415

    from tuner.commands.ingest import sample_files  # noqa: PLC0415
    from tuner.ingest.pipeline import ingest  # noqa: PLC0415

    out = folder / "sample"
    if not out.exists():
        epd = folder / "positions.epd"
        epd.write_text(f"{chess.STARTING_FEN} [0.5]\n", encoding="utf-8")
        ingest([*sample_files(), epd], out, workers=1, progress=False)
    return out


def warm_ingest(folder: Path) -> None:
    _sample_set(folder)


def warm_tune(folder: Path) -> None:
    """One iteration of every registered method from ``classic`` on 500 training positions, quietly."""
    from tuner.commands.tune import method_configs, tune  # noqa: PLC0415
    from tuner.methods.registry import methods  # noqa: PLC0415
    from tuner.training.run_folder import RunDir  # noqa: PLC0415
    from tuner.training.tune_config import TuneConfig  # noqa: PLC0415

    data = _sample_set(folder)
    configs = method_configs()
    for name, method in methods().items():
        common = TuneConfig(method=name, data=str(data), out=str(folder / f"run-{name}"), start="classic",
                            max_train=500, max_validation=100, threads=1)
        fields = {f.name for f in dataclasses.fields(configs[name])}
        small = {k: v for k, v in _SMALL.items() if k in fields}
        cfg = dataclasses.replace(configs[name](), **{method.iterations: 1, **small})
        tune(common, cfg, RunDir(common.out), resume=False, overwrite=True, progress=False, quiet=True)


_RUN: dict[str, Callable[[Path], None]] = {"search": warm_search, "ingest": warm_ingest, "tune": warm_tune}


def warm_up(steps: tuple[str, ...] = STEPS, *, log: Callable[[str], None] = print) -> dict[str, float]:
    """Run ``steps`` (of :data:`STEPS`) in a temporary folder; return each one's seconds.

    Raises ``ValueError`` for an unknown step or none. A step that needs the sample games is skipped
    (``log`` says why) when the package runs without its repository.
    """
    if not steps:  # ``--steps ''`` did nothing and exited 0 (issue 58 item 17)
        raise ValueError(f"no warm-up step given (steps: {', '.join(STEPS)})")
    unknown = [s for s in steps if s not in _RUN]
    if unknown:
        raise ValueError(f"unknown warm-up step {unknown[0]!r} (steps: {', '.join(STEPS)})")
    from tuner.compiling import compile_seconds  # noqa: PLC0415
    from tuner.errors import TunerError  # noqa: PLC0415

    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="movetuner-warmup-") as tmp:
        for step in steps:
            compiling = compile_seconds()  # (registers the listener before the clock starts)
            start = time.perf_counter()
            try:
                _RUN[step](Path(tmp))
            except TunerError as exc:
                if "sample PGN not found" not in str(exc):
                    raise
                log(f"{step}: skipped ({exc})")
                continue
            seconds[step] = round(time.perf_counter() - start, 1)
            log(f"{step}: ready in {seconds[step]:.1f} s ({compile_seconds() - compiling:.1f} s of it compiling)")
    return seconds
