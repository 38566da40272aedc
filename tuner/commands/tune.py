"""``tuner tune``: fit the evaluator's weights to the moves of a position set.

Settings come from three dataclasses (the shared :class:`tuner.tuning.TuneConfig`, and the
method's :class:`tuner.mmto.MmtoConfig` or :class:`tuner.ga.GaConfig`), layered as: defaults,
then ``--config FILE.toml`` (top-level keys, ``[mmto]`` and ``[ga]`` tables), then flags. The
result is written to ``RUN/config.toml``; ``--resume RUN`` reads it back and continues the run
(only ``--iterations``/``--generations`` and ``--threads`` may change on resume).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tomllib
from pathlib import Path
from typing import Any

from tqdm import tqdm

from tuner.config import add_arguments, dump_toml, from_mapping, from_namespace
from tuner.errors import TunerError
from tuner.ga import GaConfig
from tuner.mmto import MmtoConfig
from tuner.run import RunDir
from tuner.tuning import TuneConfig, load_training_data, start_weights

METHOD_CONFIGS: dict[str, type] = {"mmto": MmtoConfig, "ga": GaConfig}
#: settings that --resume may change
RESUMABLE = {"iterations", "generations", "threads"}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("tune", help="learn weights from a position set (MMTO or a genetic algorithm)",
                       description="Fit the evaluator's weights so that the engine's shallow search "
                                   "prefers the moves played in a position set (tuner ingest). Writes "
                                   "RUN/config.toml, RUN/metrics.jsonl (a line per iteration), "
                                   "RUN/weights.json (after every iteration, atomically).")
    p.add_argument("--config", metavar="FILE", help="TOML file of settings (top level, [mmto], [ga])")
    p.add_argument("--resume", metavar="RUN", help="continue the run in folder RUN from its last iteration")
    p.add_argument("--overwrite", action="store_true", help="replace a run already in the --out folder")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_arguments(p.add_argument_group("run"), TuneConfig)
    for method, cls in METHOD_CONFIGS.items():
        add_arguments(p.add_argument_group(method), cls)
    p.set_defaults(func=run)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise TunerError(f"{path}: no such config file") from None
    except tomllib.TOMLDecodeError as exc:
        raise TunerError(f"{path}: not valid TOML: {exc}") from None


def configs_from_toml(path: Path) -> tuple[TuneConfig, dict[str, Any]]:
    """The run settings and each method's settings of a TOML file."""
    data = _read_toml(path)
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    unknown = sorted(set(tables) - set(METHOD_CONFIGS))
    if unknown:
        raise TunerError(f"{path}: unknown table(s) [{'], ['.join(unknown)}]; known: [mmto], [ga]")
    common = from_mapping(TuneConfig, {k: v for k, v in data.items() if k not in tables}, str(path))
    methods = {m: from_mapping(cls, tables.get(m, {}), f"{path} [{m}]") for m, cls in METHOD_CONFIGS.items()}
    return common, methods


def config_toml(common: TuneConfig, method_cfg: Any) -> str:
    return dump_toml(common) + "\n" + dump_toml(method_cfg, common.method)


def _given(ns: argparse.Namespace, cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if hasattr(ns, f.name)}


def run(args: argparse.Namespace) -> int:
    if args.resume:
        run_dir = RunDir(args.resume)
        if not run_dir.config_path.exists():
            raise TunerError(f"{run_dir.path}: not a run folder (no config.toml)")
        common0, methods0 = configs_from_toml(run_dir.config_path)
        changed = set()
        for cls in (TuneConfig, *METHOD_CONFIGS.values()):
            changed |= _given(args, cls)
        if args.config:
            raise TunerError("--config cannot be combined with --resume (the run keeps its config.toml)")
        refused = sorted(changed - RESUMABLE - {"out"})
        if refused:
            raise TunerError(f"cannot change {', '.join('--' + r.replace('_', '-') for r in refused)} "
                             f"when resuming {run_dir.path}")
        common = from_namespace(TuneConfig, args, common0)
        method_cfg = from_namespace(METHOD_CONFIGS[common.method], args, methods0[common.method])
        common = dataclasses.replace(common, out=str(run_dir.path))
    else:
        if args.config:
            common0, methods0 = configs_from_toml(Path(args.config))
        else:
            common0, methods0 = TuneConfig(), {m: cls() for m, cls in METHOD_CONFIGS.items()}
        common = from_namespace(TuneConfig, args, common0)
        method_cfg = from_namespace(METHOD_CONFIGS[common.method], args, methods0[common.method])
        other = [m for m in METHOD_CONFIGS if m != common.method and _given(args, METHOD_CONFIGS[m])]
        if other:
            raise TunerError(f"options of --method {other[0]} given, but the method is {common.method}")
        if not common.out:
            raise TunerError("no run folder given: pass --out RUN")
        run_dir = RunDir(common.out)
    if args.resume and args.overwrite:
        raise TunerError("--overwrite cannot be combined with --resume")
    return tune(common, method_cfg, run_dir, resume=bool(args.resume), overwrite=args.overwrite,
                progress=not args.quiet)


def tune(common: TuneConfig, method_cfg: Any, run_dir: RunDir, *, resume: bool, overwrite: bool = False,
         progress: bool = True) -> int:
    """Load the data, then run the method, writing into ``run_dir``."""
    def log(msg: str) -> None:
        tqdm.write(msg, file=sys.stderr)  # above the progress bars, not through them

    checkpoint = None
    if resume:
        checkpoint = run_dir.load()
        if checkpoint is not None and checkpoint.method != common.method:
            raise TunerError(f"{run_dir.state_path}: a {checkpoint.method} run, not {common.method}")
    w0 = start_weights(common)
    data = load_training_data(common, progress=progress)
    log(f"{common.method}: {len(data.train)} training and {len(data.validation)} validation positions "
        f"from {common.data}; run folder {run_dir.path}")
    if resume:
        run_dir.write_config(config_toml(common, method_cfg))
    else:
        run_dir.create(config_toml(common, method_cfg), overwrite=overwrite)
    try:
        if common.method == "mmto":
            from tuner.mmto import train_mmto  # noqa: PLC0415

            train_mmto(common, method_cfg, data, run_dir, w0, resume=checkpoint, progress=progress, log=log)
        else:
            from tuner.ga import train_ga  # noqa: PLC0415

            train_ga(common, method_cfg, data, run_dir, w0, resume=checkpoint, progress=progress, log=log)
    except KeyboardInterrupt:
        last = run_dir.load()
        done = f"iteration {last.iteration}" if last else "no iteration"
        log(f"{common.method}: interrupted; {run_dir.weights_path} holds {done} "
            f"(continue with: tuner tune --resume {run_dir.path})")
        return 130
    except FloatingPointError as exc:
        raise TunerError(str(exc)) from None
    log(f"{common.method}: weights written to {run_dir.weights_path}")
    return 0
