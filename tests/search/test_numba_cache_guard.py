"""search/__init__.py drops numba's cached kernels when any kernel source changed: numba keys a
cached kernel on its own file, so a kernel calling the evaluator would otherwise keep running
the old feature layout after a pull that changes the catalogue (it happened: classic's
move-match fell from 34 % to 26 % with stale caches)."""

from __future__ import annotations

from pathlib import Path

import pytest

import search


def test_a_changed_source_drops_the_cached_kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    a, b = tmp_path / "search", tmp_path / "objectives"
    for d in (a, b):
        (d / "__pycache__").mkdir(parents=True)
        (d / "kernels.py").write_text("x = 1\n")
        (d / "__pycache__" / "kernels.f-1.py311.nbi").write_text("index")
        (d / "__pycache__" / "kernels.f-1.py311.1.nbc").write_text("code")
        (d / "__pycache__" / "kernels.cpython-311.pyc").write_text("bytecode")
    monkeypatch.setattr(search, "_KERNEL_DIRS", (a, b))
    search._drop_stale_numba_cache()  # no key yet: everything cached is suspect
    assert not list(a.glob("__pycache__/*.nb?")) and not list(b.glob("__pycache__/*.nb?"))
    assert (a / "__pycache__" / "kernels.cpython-311.pyc").exists()  # only numba's files go
    key = (a / "__pycache__" / "movetuner-kernel-sources.key").read_text()

    (b / "__pycache__" / "kernels.f-1.py311.nbi").write_text("index")  # compiled again
    search._drop_stale_numba_cache()  # same sources: kept
    assert (b / "__pycache__" / "kernels.f-1.py311.nbi").exists()

    (a / "kernels.py").write_text("x = 2\n")  # one source changes, in the other package
    search._drop_stale_numba_cache()
    assert not (b / "__pycache__" / "kernels.f-1.py311.nbi").exists()
    assert (a / "__pycache__" / "movetuner-kernel-sources.key").read_text() != key
