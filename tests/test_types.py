"""The package's types are checked: ``mypy`` (strict, configured in pyproject.toml) reports no
error over search/, objectives/ and tuner/, and ``# type: ignore`` appears only inside numba
kernels (whose decorators numba leaves untyped), apart from the cases listed here with their
reason."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("search", "objectives", "tuner")
#: ignores outside kernels, by file and the code they silence, with why
ALLOWED = {
    # typeshed declares StringIO.readline(size: int | None = -1, /); the PGN reader's line
    # source keeps its positional-only signature but returns normalised line ends
    ("tuner/ingest/games.py", "override"): "typeshed's StringIO.readline",
}
KERNEL_DECORATOR = re.compile(r"\b(njit|jit|intrinsic|generated_jit|overload)\b")


def test_mypy_strict_finds_no_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=REPO, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.stdout.strip() == ""


def _kernel_spans(tree: ast.Module) -> list[tuple[int, int]]:
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(
                KERNEL_DECORATOR.search(ast.unparse(d)) for d in node.decorator_list):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans.append((first, node.end_lineno or node.lineno))
    return spans


def ignores_outside_kernels(root: Path) -> list[tuple[str, int, str]]:
    """(file, line, codes) of each ``# type: ignore[...]`` outside a numba-decorated function."""
    found = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            spans = _kernel_spans(ast.parse(text))
            for i, line in enumerate(text.splitlines(), 1):
                m = re.search(r"#\s*type:\s*ignore(\[([^\]]*)\])?", line)
                if m and not any(a <= i <= b for a, b in spans):
                    found.append((path.relative_to(root).as_posix(), i, m.group(2) or ""))
    return found


def test_type_ignores_only_in_numba_kernels() -> None:
    stray = [(f, i, codes) for f, i, codes in ignores_outside_kernels(REPO) if (f, codes) not in ALLOWED]
    assert stray == [], "\n".join(f"{f}:{i}: type: ignore[{c}]" for f, i, c in stray)


def test_the_ignore_scan_sees_an_ignore_outside_a_kernel(tmp_path: Path) -> None:
    pkg = tmp_path / "search"
    pkg.mkdir()
    (pkg / "k.py").write_text(
        "from numba import njit\n\n\n@njit(cache=True)\ndef kernel(x):  # type: ignore[no-untyped-def]\n"
        "    return x\n\n\ndef api(x):  # type: ignore[no-untyped-def]\n    return kernel(x)\n")
    assert ignores_outside_kernels(tmp_path) == [("search/k.py", 9, "no-untyped-def")]
