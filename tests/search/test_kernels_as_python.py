"""The kernels as plain Python: ``tests/search/kernels_python_subset.py`` (movegen and perft against
python-chess and the published counts, features against the reference extractor, searches
against the minimax oracle, SEE against the plain exchange) run in a subprocess with
``NUMBA_DISABLE_JIT=1``, where numba's decorators return the functions unchanged. A kernel
that only works compiled (or only as Python) fails here, as in stumpy's test habit.

The subprocess gets its own ``NUMBA_CACHE_DIR``: ``search/__init__.py`` then leaves the cache
next to the sources alone, and the test checks that nothing there changed (under pytest-xdist,
where another worker may be adding kernels to that cache meanwhile: that none was removed and the
sources key is untouched).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SUBSET = REPO / "tests" / "search" / "kernels_python_subset.py"


def _numba_cache_files() -> dict[Path, int]:
    """numba's cached kernels and the sources key next to the sources, with their mtimes (ns)."""
    files = [f for d in ("search", "objectives") for f in (REPO / d).rglob("__pycache__/*.nb[ic]")]
    files += list((REPO / "search" / "__pycache__").glob("movetuner-kernel-sources.key"))
    return {f: f.stat().st_mtime_ns for f in files}


@pytest.mark.slow
def test_kernel_subset_passes_with_the_jit_disabled(tmp_path: Path) -> None:
    before = _numba_cache_files()
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
               PYTHONWARNINGS="ignore::RuntimeWarning")  # uint64 products wrap, as in the kernels
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(SUBSET)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    tail = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    # every test of the subset ran and passed: none skipped, deselected or expected to fail
    summary = re.fullmatch(r"=* ?(\d+) passed(, \d+ warnings?)? in .*", proc.stdout.strip().splitlines()[-1])
    assert summary is not None and int(summary[1]) >= 50, tail
    after = _numba_cache_files()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # another test process may be compiling (cold cache) and adding kernels meanwhile: what
        # the subprocess could have done is remove cached kernels or rewrite the sources key
        assert before.keys() <= after.keys()
        assert {f: t for f, t in after.items() if f.suffix == ".key"} == \
            {f: t for f, t in before.items() if f.suffix == ".key"}
    else:
        assert after == before
    assert not list((tmp_path / "numba-cache").rglob("*.nb[ic]"))  # nothing compiled at all
