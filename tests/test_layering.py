"""The layers point down only: ui → app → mama_core. Read with ast, so a lazy
import inside a function is caught too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

FORBIDDEN = {
    "mama_core": {
        "app",
        "ui",
        "PySide6",
        "shiboken6",
        "qasync",
        "telegram",
        "mcp",
        "slack_sdk",
        "httpx",
        "keyring",
        "click",
        "rich",
    },
    "app": {"ui", "PySide6", "shiboken6", "qasync"},
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_import_reader_sees_lazy_imports(tmp_path: Path) -> None:
    # Positive control for the reader itself.
    sample = tmp_path / "m.py"
    sample.write_text("def f():\n    from PySide6.QtCore import QObject\n    import telegram.ext\n")
    assert imported_roots(sample) == {"PySide6", "telegram"}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_downward(package: str) -> None:
    files = sorted((REPO_ROOT / package).rglob("*.py"))
    assert files, f"no sources found for {package}"
    offenders = {
        str(path.relative_to(REPO_ROOT)): sorted(imported_roots(path) & FORBIDDEN[package])
        for path in files
        if imported_roots(path) & FORBIDDEN[package]
    }
    assert offenders == {}


# Inside mama_core: the vocabulary and the scope filter sit at the bottom, and
# recall (which memory builds on) never reaches up into memory.

CORE_BOTTOM = (
    "mama_core.model",
    "mama_core.clock",
    "mama_core.scope_bindings",
    "mama_core.errors",
    "mama_core.store",
)
"""Modules (or packages) at the bottom of mama_core: they import only each other."""


def _core_module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _core_imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module name ``source`` (the text of ``module``) imports, relative imports
    resolved, lazy ones too."""
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _core_imported_modules(path: Path) -> set[str]:
    return _core_imports_of(
        path.read_text("utf-8"), _core_module_name(path), path.name == "__init__.py"
    )


def _core_within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_core_import_reader_resolves_relative_and_lazy_imports() -> None:
    # Positive control for the reader: a lazy absolute import and a relative one.
    source = (
        "def f():\n    from mama_core.memory.records import load_visible\n"
        "from ..model import Kind\n"
    )
    found = _core_imports_of(source, "mama_core.recall.reembed")
    assert {"mama_core.memory.records", "mama_core.model", "mama_core.model.Kind"} <= found


def test_recall_never_imports_memory() -> None:
    files = sorted((REPO_ROOT / "mama_core" / "recall").rglob("*.py"))
    assert files
    # Positive control: recall does import the bottom vocabulary, so the reader sees imports.
    assert any("mama_core.model" in _core_imported_modules(f) for f in files)
    offenders = {
        str(f.relative_to(REPO_ROOT)): sorted(
            n for n in _core_imported_modules(f) if _core_within(n, ("mama_core.memory",))
        )
        for f in files
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_bottom_of_mama_core_imports_nothing_above_it() -> None:
    files = [
        f
        for f in sorted((REPO_ROOT / "mama_core").rglob("*.py"))
        if _core_within(_core_module_name(f), CORE_BOTTOM)
    ]
    assert len(files) >= len(CORE_BOTTOM)
    offenders: dict[str, list[str]] = {}
    for f in files:
        above = sorted(
            n
            for n in _core_imported_modules(f)
            if n.startswith("mama_core.") and not _core_within(n, CORE_BOTTOM)
        )
        if above:
            offenders[str(f.relative_to(REPO_ROOT))] = above
    assert offenders == {}


def _core_folded_cycles(imports: dict[str, set[str]], depth: int) -> list[set[str]]:
    """Strongly connected groups (more than one member) of the import graph
    ``imports`` (module -> names it imports) folded into ``depth``-part names."""

    def fold(name: str) -> str:
        return ".".join(name.split(".")[:depth])

    def known(name: str) -> str:
        while name and name not in imports:
            name = name.rpartition(".")[0]
        return name

    edges: dict[str, set[str]] = {fold(m): set() for m in imports}
    for name, targets in imports.items():
        for target in map(known, targets):
            if target and fold(target) != fold(name):
                edges[fold(name)].add(fold(target))

    def reach(start: str) -> set[str]:
        seen, todo = set[str](), [start]
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reached = {n: reach(n) for n in edges}
    groups = {frozenset({n} | {m for m in reached[n] if n in reached[m]}) for n in edges}
    return [set(g) for g in groups if len(g) > 1]


def test_mama_core_packages_import_without_cycles() -> None:
    imports = {
        _core_module_name(f): _core_imported_modules(f)
        for f in sorted((REPO_ROOT / "mama_core").rglob("*.py"))
    }
    # Positive control: a cycle between two packages is found.
    fake = {
        "mama_core.a.x": {"mama_core.b.y.name"},
        "mama_core.b.y": {"mama_core.a.x"},
        "mama_core.c": {"mama_core.a.x"},
    }
    assert _core_folded_cycles(fake, 2) == [{"mama_core.a", "mama_core.b"}]
    assert _core_folded_cycles(imports, 2) == []


_SQL_WORDS = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", " JOIN ", "FROM ")


def _core_sql_naming(path: Path, table: str) -> list[int]:
    """Lines of string literals in ``path`` that are SQL naming ``table``."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if table in text and any(w in text.upper() for w in _SQL_WORDS):
                lines.append(node.lineno)
    return lines


def test_scope_bindings_is_named_in_sql_by_one_module() -> None:
    """The confidentiality boundary (which scopes see which judgments) is written once:
    ``mama_core/scope_bindings.py`` is the only module whose SQL names the table
    (migrations are SQL files; lists of table names are not SQL)."""
    home = REPO_ROOT / "mama_core" / "scope_bindings.py"
    # Positive control: the one module is found naming it.
    assert _core_sql_naming(home, "scope_bindings")
    offenders = {
        str(f.relative_to(REPO_ROOT)): _core_sql_naming(f, "scope_bindings")
        for package in ("mama_core", "app", "ui")
        for f in sorted((REPO_ROOT / package).rglob("*.py"))
        if f != home
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def _core_name_copies(source: str, names: frozenset[str]) -> list[int]:
    """Lines of literal tuples, lists or sets of three or more strings, all from ``names``."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 3:
            values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(values) == len(node.elts) and all(v in names for v in values):
                lines.append(node.lineno)
    return lines


def test_kinds_and_statuses_are_spelled_once() -> None:
    """The kinds and statuses are listed in ``mama_core/model.py`` only; every other
    module imports them rather than keeping its own copy."""
    from mama_core.model import KINDS, STATUSES

    home = REPO_ROOT / "mama_core" / "model.py"
    vocabularies = (frozenset(KINDS), frozenset(STATUSES))
    # Positive control: copies like the ones recall and the review window kept are found.
    assert _core_name_copies(f"KINDS = {KINDS!r}\n", vocabularies[0]) == [1]
    assert _core_name_copies('RETIRED = ["stale", "rejected", "purged"]\n', vocabularies[1])
    offenders = {
        str(f.relative_to(REPO_ROOT)): [
            line for names in vocabularies for line in _core_name_copies(f.read_text(), names)
        ]
        for package in ("mama_core", "app", "ui")
        for f in sorted((REPO_ROOT / package).rglob("*.py"))
        if f != home
    }
    assert {k: v for k, v in offenders.items() if v} == {}
