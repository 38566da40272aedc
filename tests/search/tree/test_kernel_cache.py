"""``search.tree.kernel_cache.is_compiled``: read from numba's own cache index, on a kernel of a
throw-away module (its cache goes to a ``__pycache__`` beside it, or to ``NUMBA_CACHE_DIR``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from search.tree.kernel_cache import is_compiled

KERNEL = textwrap.dedent('''
    from numba import njit

    @njit(cache=True)
    def twice(x):
        return 2 * x
''')


def _load(path: Path, name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.twice


def _compiled_in_new_process(path: Path) -> bool:
    """``is_compiled`` as a fresh process sees it (numba reads the index again)."""
    code = (f"import importlib.util, sys; spec = importlib.util.spec_from_file_location('k', {str(path)!r}); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
            "from search.tree.kernel_cache import is_compiled; print(is_compiled(m.twice))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=os.environ.copy(), timeout=120).stdout.strip()
    return out == "True"


def test_is_compiled_follows_numba_cache_index(tmp_path: Path) -> None:
    path = tmp_path / "kernel_mod.py"
    path.write_text(KERNEL)
    twice = _load(path, "kernel_mod")
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":  # plain Python: nothing ever compiles
        assert is_compiled(twice)
        return
    assert not is_compiled(twice) and not _compiled_in_new_process(path)
    assert twice(21) == 42  # compiles, and writes the cache
    assert is_compiled(twice) and _compiled_in_new_process(path)
    path.write_text(KERNEL + "# changed\n")  # numba stamps the source's contents
    assert not _compiled_in_new_process(path)


def test_plain_functions_count_as_compiled() -> None:
    assert is_compiled(len) and is_compiled(object())
