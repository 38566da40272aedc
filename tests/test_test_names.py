"""Every test file is named after the module it tests: ``tests/P/test_M.py`` (or
``test_M_ASPECT.py``, a second file for one module) tests module ``M`` of package ``P`` (or of
one of its subpackages). The
files in :data:`REPOSITORY_WIDE` check the repository as a whole; :data:`TO_RENAME` lists the
ones under ``tests/search/`` whose modules are being moved into subpackages, to be renamed after
that move."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: checks of the whole repository, named after what they check
REPOSITORY_WIDE = {"tests/test_bench_scripts.py", "tests/test_import_graph.py", "tests/test_test_names.py",
                   "tests/test_types.py"}
#: named after no module yet (tests/search/ is being reorganised; rename them after it)
TO_RENAME = {f"tests/search/test_{name}.py" for name in (
    "gm_nn", "gm_weights", "kernels_as_python", "match_window", "numba_cache_guard", "pesto", "search_oracle")}


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
             if str(t.relative_to(ROOT)) not in REPOSITORY_WIDE | TO_RENAME and not _named_after_a_module(t)]
    assert stray == []
