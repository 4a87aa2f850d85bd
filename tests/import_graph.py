"""The module import graph of the project's packages, read with ``ast``, for the
layering tests: which module imports which, and the cycles in it.

Every ``import x`` / ``from x import y`` counts, also inside functions; imports
under ``if TYPE_CHECKING:`` do not (they never run). ``from pkg import name``
counts as importing ``pkg.name`` when that is a module, else ``pkg``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

Graph = dict[str, set[str]]


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """``dotted.module.name -> file`` for every module of ``packages`` under ``root``."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def imported_names(module: str, path: Path, *, type_checking: bool = False) -> set[str]:
    """The dotted names ``module`` imports (relative imports resolved); with
    ``type_checking`` also those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    skipped = set() if type_checking else _type_checking_nodes(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if path.name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(root: Path, packages: Iterable[str], *, type_checking: bool = False) -> Graph:
    """Module -> the project modules it imports (a package's own parents excluded:
    importing a submodule runs its package's ``__init__`` anyway)."""
    modules = module_files(root, packages)
    graph: Graph = {}
    for module, path in modules.items():
        targets = {
            _owner(n, modules) for n in imported_names(module, path, type_checking=type_checking)
        }
        graph[module] = {t for t in targets if t and t != module and not module.startswith(t + ".")}
    return graph


def folded(graph: Graph, depth: int) -> Graph:
    """The graph of folders at ``depth`` (2: ``app.runtime``), cross-folder edges only."""

    def fold(name: str) -> str:
        return ".".join(name.split(".")[:depth])

    out: Graph = {}
    for source, targets in graph.items():
        a = fold(source)
        out.setdefault(a, set())
        for target in targets:
            b = fold(target)
            out.setdefault(b, set())
            if a != b and not a.startswith(b + ".") and not b.startswith(a + "."):
                out[a].add(b)
    return out


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
