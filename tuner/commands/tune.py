"""``tuner tune``: fit the evaluator's weights to the moves of a position set.

Settings come from two dataclasses (the shared :class:`tuner.training.tune_config.TuneConfig`, and the
method's own, from the registry :mod:`tuner.methods.registry`), layered as: defaults, then ``--config
FILE.toml`` (top-level keys, and a ``[NAME]`` table per method), then flags. The result is
written to ``RUN/config.toml``; ``--resume RUN`` reads it back and continues the run (only the
method's count of iterations and where the searches run, ``--threads``, ``--executor``,
``--scheduler``, ``--workers``, may change on resume). The outer loop is
:func:`tuner.training.driver.drive`, the same for every method.

One process at a time uses a run folder (``RUN/.lock``, :meth:`tuner.training.run_folder.RunDir.lock`). Ctrl-C
stops a run between two kernel calls with one line, ``tuner tune: interrupted at iteration N;
resume with: tuner tune --resume RUN``, and exit code 130; a full or read-only disk is one line
naming the file, and the folder keeps its last checkpoint. Resuming a run whose
``state.json`` is lost is refused once it had completed an iteration
(:meth:`tuner.training.run_folder.RunDir.resume_point`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from search.params.catalog import PLUGIN
from search.evaluation.evaluators import kind_of
from tuner.commands import command_help
from tuner.config import add_arguments, dump_toml, from_mapping, from_namespace, read_toml
from tuner.errors import DeferredSigint, Interrupted, TunerError, check_interrupt, is_interrupt, one_line
from tuner.training.driver import drive
from tuner.methods.registry import PLAYED_MOVES, methods
from tuner.methods.registry import get as get_method
from tuner.training.run_folder import RunDir, data_identity
from tuner.training.position_set import NoPlayedMovesError
from tuner.training.training_data import load_training_data
from tuner.training.tune_config import TuneConfig, start_weights
from tuner.training.verdict import closing_verdict, data_warning, verdict, verify_match


#: the settings ``tuner tune --data DIR --out RUN`` uses when given neither ``--config`` nor
#: ``--method``: the recipe that made the built-in ``gm`` weights (see its comments)
DEFAULT_RECIPE = Path(__file__).resolve().parents[1] / "recipes" / "gm.toml"


def method_configs() -> dict[str, type]:
    """Each registered method's config dataclass, by name."""
    return {name: m.config for name, m in methods().items()}


def resumable() -> set[str]:
    """The settings ``--resume`` may change: each method's count of iterations, and where the
    searches run (threads, executor, scheduler, workers: the results do not depend on them)."""
    return {m.iterations for m in methods().values()} | {"threads", "executor", "scheduler", "workers"}


def recipe_settings(path: Path = DEFAULT_RECIPE) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The settings a recipe file gives: (top-level settings, {method: its table's settings})."""
    data = read_toml(path)
    return ({k: v for k, v in data.items() if not isinstance(v, dict)},
            {k: v for k, v in data.items() if isinstance(v, dict)})


def recipe_name(path: Path = DEFAULT_RECIPE) -> str:
    """How messages name a recipe: ``gm (tuner/recipes/gm.toml)``."""
    root = DEFAULT_RECIPE.parents[2]
    shown = path.resolve().relative_to(root) if path.resolve().is_relative_to(root) else path
    return f"{path.stem} ({shown})"


def recipe_line(path: Path = DEFAULT_RECIPE, common: TuneConfig | None = None, method_cfg: Any = None) -> str:
    """One line saying which recipe runs and what it sets: ``recipe gm (tuner/recipes/gm.toml):
    mmto from classic, iterations 10, ...``. With the run's settings (``common``, ``method_cfg``:
    the recipe with the flags applied), each value is the one the run uses, and a flag's value
    says so: ``iterations 3 (flag; recipe 10)`` (the banner said the recipe's 10 when
    ``--iterations 3`` was given: issue 58 item 14)."""
    top, tables = recipe_settings(path)
    method = str(top.get("method", TuneConfig().method))

    def part(key: str, value: Any, now: Any) -> str:
        if now is None or now == value or (isinstance(value, list) and tuple(value) == now):
            return f"{key} {_shown(value)}"
        return f"{key} {_shown(now)} (flag; recipe {_shown(value)})"

    start = top.get("start", TuneConfig().start)
    parts = [f"{method} from {start}" if common is None or common.start == start else
             f"{method} from {common.start} (flag; recipe {start})"]
    parts += [part(k, v, getattr(method_cfg, k, None)) for k, v in tables.get(method, {}).items()]
    parts += [part(k, v, getattr(common, k, None)) for k, v in top.items() if k not in ("method", "start")]
    return (f"recipe {recipe_name(path)}: " + ", ".join(parts)
            + " (no --method or --config given; flags override it)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    top, tables = recipe_settings()
    recipe_method = str(top.get("method", TuneConfig().method))
    p = sub.add_parser("tune", help=command_help("tune"),
                       description="Fit the evaluator's weights so that the engine's shallow search "
                                   "prefers the moves played in a position set (tuner ingest), or fits "
                                   "its results. Writes RUN/config.toml, RUN/metrics.jsonl (a line per "
                                   "iteration), RUN/weights.json and RUN/state.json (after every "
                                   "iteration, atomically).",
                       epilog=f"Without --method and --config, the recipe {recipe_name()} runs (the settings "
                              f"that made the built-in gm weights): method {recipe_method}, and the values "
                              f"marked 'recipe {DEFAULT_RECIPE.stem}' above; every other setting, and every "
                              "setting of a run with --method NAME, has the default shown. Flags override both.")
    p.add_argument("--config", metavar="FILE",
                   help=f"TOML file of settings (top level, and a table per method: {', '.join(f'[{n}]' for n in methods())})")
    p.add_argument("--resume", metavar="RUN", help="continue the run in folder RUN from its last iteration")
    p.add_argument("--overwrite", action="store_true", help="replace a run already in the --out folder")
    p.add_argument("--quiet", action="store_true", help="no progress bars or progress lines (errors only)")
    p.add_argument("--verify", type=int, metavar="GAMES", default=0,
                   help="after the run, play at most GAMES games (even) at 5,000 nodes a move between the tuned "
                        "weights and the start, stopped early by an SPRT (elo 0 against 10), and say the result")
    add_arguments(p.add_argument_group("run"), TuneConfig, exclude=("terms",))  # tuner --terms FILE (tuner.cli)
    seen: dict[str, str] = {}
    for name, method in methods().items():
        fields = [f.name for f in dataclasses.fields(method.config) if f.init]
        shared = tuple(f for f in fields if f in seen)
        group = p.add_argument_group(f"{name}: {method.summary}")
        if shared:
            defaults = {f.name: f.default for f in dataclasses.fields(method.config)}
            group.description = "also " + "; ".join(
                f"--{f.replace('_', '-')} (listed under {seen[f]}; {name}'s default: {_shown(defaults[f])})"
                for f in shared)
        add_arguments(group, method.config, exclude=shared)
        for f in fields:
            seen.setdefault(f, name)
    recipe = {**top, **{k: v for k, v in tables.get(recipe_method, {}).items() if seen.get(k) == recipe_method}}
    for action in p._actions:
        if action.dest in recipe and action.help and action.help.endswith(")"):
            action.help = action.help[:-1] + f"; recipe {DEFAULT_RECIPE.stem}: {_shown(recipe[action.dest])})"
    p.set_defaults(func=run)


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value)) or "none"
    return str(value)


def configs_from_toml(path: Path) -> tuple[TuneConfig, dict[str, Any]]:
    """The run settings and each method's settings of a TOML file."""
    data = read_toml(path)
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    configs = method_configs()
    unknown = sorted(set(tables) - set(configs))
    if unknown:
        raise TunerError(f"{path}: unknown table(s) [{'], ['.join(unknown)}]; known: "
                         + ", ".join(f"[{n}]" for n in configs))
    common = from_mapping(TuneConfig, {k: v for k, v in data.items() if k not in tables}, str(path))
    return common, {m: from_mapping(cls, tables.get(m, {}), f"{path} [{m}]") for m, cls in configs.items()}


def config_toml(common: TuneConfig, method_cfg: Any) -> str:
    return dump_toml(common) + "\n" + dump_toml(method_cfg, common.method)


def _given(ns: argparse.Namespace, cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if hasattr(ns, f.name)}


def _method_config(common: TuneConfig, args: argparse.Namespace, base: dict[str, Any]) -> Any:
    """The chosen method's settings: ``base`` overridden by the flags; a flag that belongs only
    to other methods is refused."""
    configs = method_configs()
    cls = configs[common.method]
    mine = {f.name for f in dataclasses.fields(cls)} | {f.name for f in dataclasses.fields(TuneConfig)}
    for other, other_cls in configs.items():
        foreign = sorted(_given(args, other_cls) - mine)
        if foreign:
            raise TunerError(f"--{foreign[0].replace('_', '-')} is an option of --method {other}, "
                             f"but the method is {common.method}")
    return from_namespace(cls, args, base[common.method])


def run(args: argparse.Namespace) -> int:
    if args.resume:
        run_dir = RunDir(args.resume)
        if not run_dir.config_path.exists():
            raise TunerError(f"{run_dir.path}: not a run folder (no config.toml)")
        if "method" not in read_toml(run_dir.config_path):  # an emptied file read as all defaults
            raise TunerError(f"{run_dir.config_path}: names no method (the file is empty or not the one tuner tune "
                             "wrote); cannot resume without the run's settings")
        common0, methods0 = configs_from_toml(run_dir.config_path)
        changed = set()
        for cls in (TuneConfig, *method_configs().values()):
            changed |= _given(args, cls)
        if args.config:
            raise TunerError("--config cannot be combined with --resume (the run keeps its config.toml)")
        refused = sorted(changed - resumable() - {"out"})
        if refused:
            raise TunerError(f"cannot change {', '.join('--' + r.replace('_', '-') for r in refused)} "
                             f"when resuming {run_dir.path}")
        common = from_namespace(TuneConfig, args, common0)
        method_cfg = _method_config(common, args, methods0)
        if "out" in changed and Path(common.out).resolve() != run_dir.path.resolve():
            print(one_line(f"tuner tune: note: --out {common.out} is ignored: a resumed run writes into its own "
                           f"folder, {run_dir.path}"), file=sys.stderr)
        common = dataclasses.replace(common, out=str(run_dir.path))
    else:
        if args.config:
            common0, methods0 = configs_from_toml(Path(args.config))
        elif not hasattr(args, "method"):  # neither a config nor a method: the shipped recipe
            common0, methods0 = configs_from_toml(DEFAULT_RECIPE)
        else:
            common0, methods0 = TuneConfig(), {m: cls() for m, cls in method_configs().items()}
        common = from_namespace(TuneConfig, args, common0)
        method_cfg = _method_config(common, args, methods0)
        if not args.config and not hasattr(args, "method") and not args.quiet:
            print(recipe_line(DEFAULT_RECIPE, common, method_cfg), file=sys.stderr)
        if not common.out:
            raise TunerError("no run folder given: pass --out RUN")
        if common.data and Path(common.out).resolve() == Path(common.data).resolve():
            raise TunerError(f"{common.out}: --out names the position set of --data; a run needs a folder of its own")
        if common.data:  # recorded absolute, so that --resume works from any folder (issue 58 item 17)
            common = dataclasses.replace(common, data=os.path.abspath(common.data))
        run_dir = RunDir(common.out)
        start = Path(common.start.rsplit("+", 1)[-1] if common.start.startswith("network:") else common.start)
        replaced = {(run_dir.path / name).resolve() for name in ("weights.json", "weights.mtnn", "state.json")}
        if args.overwrite and start.is_file() and start.resolve() in replaced:  # RunDir.create deletes them
            raise TunerError(f"--start {common.start} is a file of the run --overwrite replaces in {run_dir.path}; "
                             "copy it elsewhere first, or choose another --out")
    if args.resume and args.overwrite:
        raise TunerError("--overwrite cannot be combined with --resume")
    base = run_dir.path if args.resume else Path(args.config).parent if args.config else Path(".")
    common = dataclasses.replace(common, terms=active_terms(common.terms, base))
    if not 0 <= args.verify <= MAX_VERIFY_GAMES or args.verify % 2:
        raise TunerError(f"--verify takes an even number of games from 0 to {MAX_VERIFY_GAMES:,}, not {args.verify}")
    return tune(common, method_cfg, run_dir, resume=bool(args.resume), overwrite=args.overwrite,
                progress=not args.quiet, quiet=args.quiet, verify=args.verify)


def active_terms(recorded: str, base: Path) -> str:
    """The run's term plug-in file, as its ``config.toml`` records it: the process's plug-in
    (``tuner --terms FILE`` or the settings' ``terms``, a path relative to ``base``, the TOML's
    folder: :func:`tuner.cli.use_terms`), resolved; one-line error if the settings name another
    plug-in than the one loaded."""
    active = str(Path(PLUGIN.path).resolve()) if PLUGIN is not None else ""
    if recorded and str((base / recorded).resolve()) != active:
        raise TunerError(f"the settings name the term plug-in {recorded}, but "
                         f"{'this process runs ' + active if active else 'none is loaded'} "
                         "(give the same file to --terms, or none)")
    return active


def tune(common: TuneConfig, method_cfg: Any, run_dir: RunDir, *, resume: bool, overwrite: bool = False,
         progress: bool = True, quiet: bool = False, verify: int = 0) -> int:
    """Lock the run folder, load the data, then run the method, writing into ``run_dir``.

    Ctrl-C stops the run between two kernel calls and raises :class:`Interrupted` (exit code
    130) with a one-line message; the folder keeps its last checkpoint. ``quiet`` silences
    the progress lines (errors are still raised).
    """
    def log(msg: str) -> None:
        if not quiet:
            tqdm.write(one_line(msg), file=sys.stderr)  # above the progress bars, not through them

    with run_dir.lock(create=not resume) as stale:
        if stale is not None:
            log(f"{run_dir.path}: took over the lock left by process {stale}, which no longer runs")
        checkpoint = None
        if resume:
            checkpoint = run_dir.resume_point()
            if checkpoint is not None and checkpoint.method != common.method:
                raise TunerError(f"{run_dir.state_path}: a {checkpoint.method} run, not {common.method}")
            if checkpoint is None:
                log(f"{run_dir.path}: no iteration was completed; starting the run from the beginning")
            elif not run_dir.check_data(data_identity(common.data), common.data):
                log(f"{run_dir.path}: no record of the position set it started on ({run_dir.data_path.name}, "
                    f"written since movetuner recorded it); {common.data} is taken as that set")
        else:
            run_dir.check_new(overwrite=overwrite)
        w0 = start_weights(common)
        method = get_method(common.method)
        if checkpoint is not None:  # issue 58 item 15: --resume said nothing about where it resumes
            total = int(getattr(method_cfg, method.iterations))
            log(f"{run_dir.path}: resuming {common.method} after {method.unit} {checkpoint.iteration} of {total} "
                f"(its weights and optimizer state in {run_dir.state_path.name}); {max(total - checkpoint.iteration, 0)} "
                f"to go")
        if kind_of(w0) not in method.evaluators:
            able = [m.name for m in methods().values() if kind_of(w0) in m.evaluators]
            raise TunerError(f"--start {common.start}: a {kind_of(w0)} evaluator, and {common.method} trains "
                             f"{' and '.join(method.evaluators)} ones; methods that train it: {', '.join(able)}")
        refusal = method.refuses(method_cfg, kind_of(w0)) if method.refuses else None
        if refusal:
            raise TunerError(refusal)
        # a Dask run of a method that reads its training positions chunk by chunk: the workers
        # build them from the position set, this process keeps their row numbers only
        chunked = common.executor == "dask" and kind_of(w0) in method.streams_train
        # a method that passes over its training positions an epoch at a time (Texel on a large set):
        # read as a stream by the trainer, a window at a time, never loaded whole
        streamed = method.reads_stream is not None and method.reads_stream(common, method_cfg)
        try:
            data = load_training_data(common, played_moves=PLAYED_MOVES in method.needs, progress=progress,
                                      chunked=chunked, streamed=streamed)
        except NoPlayedMovesError as exc:  # the set suits other methods: say which
            users = [name for name, m in methods().items() if PLAYED_MOVES not in m.needs]
            raise TunerError(f"{exc}; methods that use results: {', '.join(users) or 'none'}") from None
        except (KeyboardInterrupt, SystemError) as exc:  # Ctrl-C is not deferred while loading
            if not is_interrupt(exc):
                raise
            raise _stopped(run_dir, started=resume) from None
        how = (" (their chunks built as the workers need them, not loaded here)" if chunked else
               f" (read as a stream, {getattr(method_cfg, 'stream_buffer', 0)} chunks at a time)" if streamed else "")
        log(f"{common.method}: {data.n_train} training and {len(data.validation)} validation positions "
            f"from {common.data}{how}; "
            f"run folder {run_dir.path}")
        warning = data_warning(common, w0, data.n_train, _signal(common.method, method_cfg, data))
        if warning:
            log(warning)
        try:
            with DeferredSigint():  # from here on Ctrl-C stops the run between two kernel calls
                if checkpoint is not None:
                    run_dir.write_config(config_toml(common, method_cfg))
                else:  # a new run, or one that never completed an iteration: start afresh
                    run_dir.create(config_toml(common, method_cfg), overwrite=True)
                    run_dir.record_data(data_identity(common.data))
                check_interrupt()
                drive(method, common, method_cfg, data, run_dir, w0, resume=checkpoint,
                      progress=progress, log=log)
        except (Interrupted, KeyboardInterrupt, SystemError) as exc:
            if not is_interrupt(exc):
                raise
            raise _stopped(run_dir, started=True) from None
        except FloatingPointError as exc:
            raise TunerError(str(exc)) from None
        except OSError as exc:  # a full or read-only disk: the last checkpoint is still whole
            raise TunerError(f"{_os_error(exc)}; {_kept(run_dir)}") from None
    log(f"{common.method}: weights written to {run_dir.weights_path}")
    _say_whether_it_paid(common, data, run_dir, w0, verify, log)
    note = small_data_note(data.n_train, run_dir, common.start)
    if note:
        log(note)
    return 0


def _signal(method: str, method_cfg: Any, data: Any) -> str:
    """What the method learns from, for :func:`tuner.training.verdict.data_warning`."""
    if method != "texel":
        return "moves"
    from tuner.methods.texel_config import uses_scores  # noqa: PLC0415

    if method_cfg.teacher:
        return "scores"
    if data.train_stream is not None:
        return "scores" if method_cfg.lam > 0 and data.train_stream.has_scores() else "results"
    if uses_scores(data.train, method_cfg):
        return "scores"
    return "results"


def _say_whether_it_paid(common: TuneConfig, data: Any, run_dir: RunDir, w0: Any, verify: int,
                         log: Any) -> None:
    """The end-of-run verdict (:mod:`tuner.training.verdict`), logged and written to
    ``RUN/verdict.json``; with ``verify`` games, the match against the start too."""
    import json  # noqa: PLC0415

    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415
    from search.params.weights import atomic_write_text  # noqa: PLC0415
    from tuner.training.run_context import RunContext  # noqa: PLC0415

    with DeferredSigint():
        tuned = load_evaluator(run_dir.weights_path)
        result = verdict(RunContext.local(common.threads), common, data, w0, tuned)
        for line in result.pop("lines"):
            log(line)
        if verify:
            log(f"verify: up to {verify} games at 5,000 nodes a move, tuned against the start {common.start}")
            match = verify_match(str(run_dir.weights_path), common.start, verify)
            result["verify"] = match
            log(f"verify: {match['text']}")
        paid, by, line = closing_verdict(result, shlex.quote(str(run_dir.weights_path)), shlex.quote(common.start))
        result.update({"paid_on_validation": result["paid"], "paid": paid, "paid_by": by})
        log(line)
        atomic_write_text(run_dir.path / "verdict.json", json.dumps(result, indent=2) + "\n")


#: the most games --verify may ask for (its SPRT usually stops within a few hundred)
MAX_VERIFY_GAMES = 100_000


#: below this many training positions a run's weights are called a demonstration: the runs of
#: docs/quality.md that beat ``classic`` trained on 100,000 positions or more, and MMTO on the
#: shipped sample (1,900) ends about 420 Elo below ``classic`` (README, "Set up and run")
DEMONSTRATION_POSITIONS = 10_000


def small_data_note(train_positions: int, run_dir: RunDir, start: str) -> str | None:
    """The closing note of a run on too few positions to learn weights worth playing with; its
    hint measures the tuned weights against the run's own ``start``."""
    if train_positions >= DEMONSTRATION_POSITIONS:
        return None
    return (f"note: {train_positions} training positions are a demonstration of the method, not data to learn "
            f"playing weights from (docs/quality.md used 100,000 and more); measure these against the start "
            f"before using them: tuner bench match {shlex.quote(str(run_dir.weights_path))} {shlex.quote(start)} "
            "--depth 2")


def _resume_hint(run_dir: RunDir) -> str:
    return f"tuner tune --resume {shlex.quote(str(run_dir.path))}"


def _kept(run_dir: RunDir) -> str:
    """What the folder holds after a failure, and how to continue."""
    try:
        last = run_dir.load()
    except TunerError:
        last = None
    if last is None:
        return f"{run_dir.path} holds no completed iteration"
    return f"{run_dir.path} keeps iteration {last.iteration}; resume with: {_resume_hint(run_dir)}"


def _stopped(run_dir: RunDir, *, started: bool) -> Interrupted:
    """The one-line message of a run stopped by Ctrl-C."""
    if not started:
        return Interrupted("interrupted before the run started")
    try:
        last = run_dir.load()
    except TunerError:
        last = None
    where = f"at iteration {last.iteration}" if last is not None else "before iteration 0 was completed"
    return Interrupted(f"interrupted {where}; resume with: {_resume_hint(run_dir)}")


def _os_error(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason
