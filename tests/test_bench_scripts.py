"""Every benchmark script imports and answers ``--help`` (issue 44, item 8): exit 0 and a usage
line, without running its benchmark, calling a numba kernel, or writing a file.

The scripts are not run by the rest of the suite (they need the grandmaster games and minutes),
so an import that broke (a module moved, a name renamed) went unseen until someone ran one. To
stay cheap they all run in one subprocess, each as ``python bench/NAME.py --help`` would run it
(``runpy`` as ``__main__``, ``bench/`` first on the import path), in a scratch folder, with this
tree's packages first on the import path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
#: bench/ files that are imported by the scripts rather than run (no ``__main__`` block)
HELPERS = {"common.py", "pls_play.py"}

DRIVER = textwrap.dedent("""
    import contextlib, importlib, io, json, runpy, sys
    from pathlib import Path

    from numba.core.registry import CPUDispatcher

    def kernels_used():
        return {f"{m.__name__}.{k}" for m in list(sys.modules.values()) for k, v in list(vars(m).items())
                if isinstance(v, CPUDispatcher) and v.signatures}

    bench = Path(sys.argv[1])
    sys.path.insert(0, str(bench))
    out = {}
    for name in sys.argv[2:]:
        print(name, file=sys.__stderr__, flush=True)  # the last one named is the one that hung
        path = bench / name
        sys.argv = [str(path), "--help"]
        stdout, stderr = io.StringIO(), io.StringIO()
        imported = set()
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                runpy.run_path(str(path), run_name="bench_import")  # the module's top level only
                imported = kernels_used()
                runpy.run_path(str(path), run_name="__main__")
            code = "returned without exiting: --help ran the script"
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:  # an import that fails, a NameError, ...
            code = f"{type(exc).__name__}: {exc}"
        out[name] = {"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()[-2000:],
                     "kernels_used_by_help": sorted(kernels_used() - imported)}
    helpers = {}
    for name in ("common", "pls_play"):
        try:
            importlib.import_module(name)
            helpers[name] = "ok"
        except BaseException as exc:
            helpers[name] = f"{type(exc).__name__}: {exc}"
    import search
    print(json.dumps({"scripts": out, "helpers": helpers, "kernels_used": sorted(kernels_used()),
                      "search": search.__file__}))
""")



def scripts() -> list[str]:
    """The bench scripts: every ``bench/*.py`` with a ``__main__`` block."""
    return sorted(p.name for p in BENCH.glob("*.py") if "__name__ == \"__main__\"" in p.read_text(encoding="utf-8"))


def test_the_helpers_are_the_only_files_without_a_main_block() -> None:
    assert {p.name for p in BENCH.glob("*.py")} - set(scripts()) == HELPERS
    assert len(scripts()) >= 20


def test_every_bench_script_answers_help(tmp_path: Path) -> None:
    names = scripts()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    try:
        proc = subprocess.run([sys.executable, "-c", DRIVER, str(BENCH), *names], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as exc:
        started = (exc.stderr or b"").decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        raise AssertionError(f"--help did not return; the last script started: {started.split()[-1:]}") from None
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(report["search"]).resolve().is_relative_to(REPO)  # this tree's code, not an installed copy
    failed = {name: r for name, r in report["scripts"].items()
              if r["code"] != 0 or not r["stdout"].startswith(f"usage: {name}")}
    assert not failed, json.dumps(failed, indent=1)[:4000]
    assert set(report["scripts"]) == set(names)
    assert all("--help" in r["stdout"] for r in report["scripts"].values())
    assert report["helpers"] == {"common": "ok", "pls_play": "ok"}
    # --help runs no kernel
    assert all(r["kernels_used_by_help"] == [] for r in report["scripts"].values())
    assert report["kernels_used"] == []  # nor does importing them: search.core.attacks reads its shipped tables
    assert list(tmp_path.iterdir()) == []  # and nothing written
