"""The import graph of the packages has no cycles (issue 23): every import counts, at module
level, inside functions (deferred imports) and under ``TYPE_CHECKING``, so that a circle cannot
hide behind a late import. A failure names the modules of each cycle."""

from __future__ import annotations

import ast
from pathlib import Path

from search import ROOMS  # the rooms of ``search/``, each importing only from the rooms before it

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tuner", "search", "objectives")


def modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the packages."""
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports anywhere in its file (the nearest known module of
    each imported name; a package's ``__init__`` counts as the package)."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                base = ".".join(parts[:keep] + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    out = set()
    for target in found:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name and not name.startswith(target + "."):
            out.add(target)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_packages_import_each_other_without_a_cycle() -> None:
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert len(graph) > 50 and sum(map(len, graph.values())) > 100  # the graph was really built
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def room_arrows(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for each import of a module of ``search`` that does not point to its own room or
    a room before it (the package ``search`` itself and a module outside the rooms count as
    wrong too: every module lives in a room and none reaches back to the package)."""
    rank = {f"search.{room}": i for i, room in enumerate(ROOMS)}

    def room_of(name: str) -> str:
        return ".".join(name.split(".")[:2])

    wrong = []
    for a, targets in sorted(graph.items()):
        if not a.startswith("search.") or a in rank:
            continue
        for b in sorted(targets):
            if not b.startswith("search"):
                continue
            ra, rb = room_of(a), room_of(b)
            if ra not in rank or rb not in rank or rank[rb] > rank[ra]:
                wrong.append(f"{a} -> {b}")
    return wrong


def test_the_rooms_of_search_import_only_the_rooms_before_them() -> None:
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert {f"search.{room}" for room in ROOMS} <= set(known)
    loose = [n for n in known if n.startswith("search.") and n.split(".")[1] not in ROOMS]
    assert loose == [], f"modules of search outside the rooms: {loose}"
    assert room_arrows(graph) == []


def test_the_room_check_finds_an_upward_import() -> None:
    graph = {"search.core.board": {"search.tree.alphabeta"}, "search.tree.alphabeta": {"search.core.board"},
             "search.pls.pls": {"search"}, "search.loose": set()}
    assert room_arrows(graph) == ["search.core.board -> search.tree.alphabeta", "search.pls.pls -> search"]
