"""Every test file is named after the module it tests: ``tests/P/test_M.py`` (or
``test_M_ASPECT.py``, a second file for one module) tests module ``M`` of package ``P`` (or of
one of its subpackages). The
files in :data:`REPOSITORY_WIDE` check the repository as a whole, those in
:data:`PACKAGE_WIDE` the ``search`` package as a whole."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: checks of the whole repository, named after what they check
REPOSITORY_WIDE = {"tests/test_bench_scripts.py", "tests/test_import_graph.py", "tests/test_test_names.py",
                   "tests/test_types.py"}
#: checks of the ``search`` package as a whole: its stale-cache guard and the aliases of the
#: module paths before the rooms (``search/__init__.py``), and every kernel run as plain Python
PACKAGE_WIDE = {"tests/search/test_numba_cache_guard.py", "tests/search/test_kernels_as_python.py",
                "tests/search/test_moved_module_paths.py"}


def _modules(package: Path) -> set[str]:
    """The names of the package's modules and subpackages, at any depth (a module moved into a
    subpackage keeps its test's name valid)."""
    return {p.stem for p in package.rglob("*.py")} | {p.parent.name for p in package.rglob("__init__.py")}


def _named_after_a_module(test: Path) -> bool:
    package = ROOT / test.parent.relative_to(ROOT / "tests")
    if not package.is_dir():
        return False
    modules = _modules(package)
    words = test.stem.removeprefix("test_").split("_")
    return any("_".join(words[:k]) in modules for k in range(1, len(words) + 1))


def test_every_test_file_is_named_after_its_module() -> None:
    tests = sorted((ROOT / "tests").rglob("test_*.py"))
    assert tests
    stray = [str(t.relative_to(ROOT)) for t in tests
             if str(t.relative_to(ROOT)) not in REPOSITORY_WIDE | PACKAGE_WIDE and not _named_after_a_module(t)]
    assert stray == []
