"""The layers point down only: ui → app → mama_core. Read with ast, so a lazy
import inside a function is caught too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.import_graph import Graph, cycles, folded, import_graph

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


# --- inside app/: durable tables < backends, MCP < turn loop < Telegram < host ------------

INSIDE_APP_FORBIDDEN = {
    # The durable tables are SQL only: no agent, no transport, no turn loop above them.
    "app.durable": (
        "app.backends",
        "app.mcp",
        "app.runtime",
        "app.telegram",
        "app.serve.host",
        "app.serve.daemon",
        "app.cli",
    ),
    # The turn loop knows channels only through ``OwnerChannel``, never Telegram itself.
    "app.runtime": ("app.telegram", "app.serve.host", "app.serve.daemon", "app.cli"),
    "app.backends": (
        "app.runtime",
        "app.telegram",
        "app.serve.host",
        "app.serve.daemon",
        "app.cli",
    ),
    "app.telegram": ("app.serve.host", "app.serve.daemon", "app.cli"),
}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _forbidden_imports(graph: Graph, rules: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    return {
        module: sorted(t for t in targets if any(_within(t, f) for f in rules[package]))
        for module, targets in sorted(graph.items())
        for package in rules
        if _within(module, package) and any(_within(t, f) for t in targets for f in rules[package])
    }


def test_app_inside_layers_point_down() -> None:
    # TYPE_CHECKING imports count here: a type from above is still a dependency upward.
    graph = import_graph(REPO_ROOT, ["app"], type_checking=True)
    # Positive controls: the reader sees the turn loop use the durable tables and the
    # backends, and the gateway use the turn loop, so a forbidden edge would be seen too.
    assert "app.durable.mailbox" in graph["app.runtime.owner_runtime"]
    assert "app.backends.base" in graph["app.runtime.owner_runtime"]
    assert "app.runtime.owner_runtime" in graph["app.telegram.gateway"]
    assert "app.telegram.gateway" in graph["app.serve.host"]
    assert _forbidden_imports(graph, INSIDE_APP_FORBIDDEN) == {}


def test_import_graph_finds_cycles(tmp_path: Path) -> None:
    # Positive control for the cycle finder: a.x -> a.y -> a.x (one lazily), and a
    # TYPE_CHECKING-only edge that must not count.
    package = tmp_path / "a"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "x.py").write_text("from a import y\n")
    (package / "y.py").write_text("def f():\n    from .x import g\n")
    (package / "z.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a.x import X\n"
    )
    (package / "w.py").write_text("import a.z\n")
    graph = import_graph(tmp_path, ["a"])
    assert cycles(graph) == [["a.x", "a.y"]]
    assert graph["a.z"] == set()
    assert cycles(folded(graph, 1)) == []


def test_package_folders_have_no_cycles() -> None:
    graph = import_graph(REPO_ROOT, ["mama_core", "app", "ui"])
    folders = folded(graph, 2)
    assert {"app.durable", "app.runtime", "app.backends", "app.telegram"} <= set(folders)
    assert {"mama_core.memory", "mama_core.recall"} <= set(folders)
    assert cycles(folders) == []


def test_no_import_cycles_between_modules() -> None:
    assert cycles(import_graph(REPO_ROOT, ["mama_core", "app", "ui"])) == []


# --- no SQL in ui/: it reads and writes through app/ and mama_core ------------------------

SQL_SHAPES = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b"
    r"|\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b"
    r"|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b"
    r"|\b(?:CREATE|DROP)\s+(?:VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b"
    r"|\bALTER\s+TABLE\b"
    r"|\bPRAGMA\s+\w+"
    r"|^\s*(?:BEGIN(?:\s+(?:IMMEDIATE|DEFERRED|EXCLUSIVE))?|COMMIT|ROLLBACK|SAVEPOINT\b.*)\s*;?\s*$"
)
"""Statements as SQLite reads them, in the upper case this code base writes SQL in, so
that prose ("Update the list", "select from…") is not taken for SQL."""

SQL_CALLS = frozenset({"execute", "executemany", "executescript"})


def sql_sites(path: Path) -> list[int]:
    """Where ``path`` runs SQL (a ``.execute*(…)`` call) or holds an SQL statement: one
    line per site (an SQL string inside an ``execute`` call is that call's site)."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    sites: set[int] = set()
    in_call: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SQL_CALLS
        ):
            sites.add(node.lineno)
            in_call.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in in_call
            and SQL_SHAPES.search(node.value)
        ):
            sites.add(node.lineno)
    return sorted(sites)


def test_sql_reader_sees_statements_not_prose(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        'conn.execute("SELECT id FROM judgments")\n'
        'Q = "INSERT INTO t (a) VALUES (?)"\n'
        'R = ("UPDATE mailbox SET state = ? "\n    "WHERE id = ?")\n'
        'S = "ROLLBACK"\n'
        'label = "Update the list, then select from the results"\n'
        'tip = "Delete from disk? Begin again"\n'
    )
    assert sql_sites(sample) == [1, 2, 3, 5]
    # And the real thing: the durable tables' SQL is all seen.
    assert len(sql_sites(REPO_ROOT / "app" / "durable" / "mailbox.py")) >= 10


def test_no_sql_in_ui() -> None:
    found = {
        str(path.relative_to(REPO_ROOT)): sites
        for path in sorted((REPO_ROOT / "ui").rglob("*.py"))
        if (sites := sql_sites(path))
    }
    assert found == {}, f"SQL belongs in app/ or mama_core, not ui/: {found}"


# --- inside mama_core: the vocabulary and the scope filter at the bottom ---------------

CORE_BOTTOM = (
    "mama_core.model",
    "mama_core.clock",
    "mama_core.scopes.bindings",
    "mama_core.errors",
    "mama_core.store",
    "mama_core.normal_text",
    "mama_core.json_types",
)
"""Modules (or packages) at the bottom of mama_core: they import only each other
(``normal_text``: what "the same text" means, which the store keeps a keyed hash of)."""


def test_recall_never_imports_memory() -> None:
    # TYPE_CHECKING imports count: a type from memory would still tie recall to it.
    graph = import_graph(REPO_ROOT, ["mama_core"], type_checking=True)
    # Positive control: the reader sees recall use the bottom vocabulary and the
    # engine use recall, so an edge from recall up to memory would be seen too.
    assert "mama_core.model" in graph["mama_core.recall.vector_cache"]
    assert "mama_core.recall" in graph["mama_core.memory.engine"]
    into_memory = {
        module: sorted(t for t in targets if _within(t, "mama_core.memory"))
        for module, targets in graph.items()
        if _within(module, "mama_core.recall")
    }
    assert {m: t for m, t in into_memory.items() if t} == {}


def test_bottom_of_mama_core_imports_nothing_above_it() -> None:
    graph = import_graph(REPO_ROOT, ["mama_core"], type_checking=True)
    bottom = [m for m in graph if any(_within(m, b) for b in CORE_BOTTOM)]
    assert set(CORE_BOTTOM) <= set(bottom)
    # Positive control: the bottom does import within itself, and that is seen.
    assert "mama_core.store.connection" in graph["mama_core.scopes.bindings"]
    offenders = {
        module: sorted(t for t in graph[module] if not any(_within(t, b) for b in CORE_BOTTOM))
        for module in bottom
    }
    assert {m: t for m, t in offenders.items() if t} == {}


def _scope_binding_sql(path: Path) -> list[int]:
    """Lines of SQL statements in ``path`` that name the ``scope_bindings`` table."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "scope_bindings" in node.value
        and SQL_SHAPES.search(node.value)
    )


def test_scope_bindings_is_named_in_sql_by_one_module() -> None:
    """The confidentiality boundary (which scopes see which judgments) is written once:
    ``mama_core/scopes/bindings.py`` is the only module whose SQL names the table
    (migrations are SQL files; a list of table names is not SQL)."""
    home = REPO_ROOT / "mama_core" / "scopes" / "bindings.py"
    # Positive control: the predicate, the binding writes and reads are all seen there.
    assert len(_scope_binding_sql(home)) >= 6
    offenders = {
        str(path.relative_to(REPO_ROOT)): lines
        for package in ("mama_core", "app", "ui")
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        if path != home and (lines := _scope_binding_sql(path))
    }
    assert offenders == {}


def _name_copies(source: str, names: frozenset[str]) -> list[int]:
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
    assert _name_copies(f"KINDS = {KINDS!r}\n", vocabularies[0]) == [1]
    assert _name_copies('RETIRED = ["stale", "rejected", "purged"]\n', vocabularies[1])
    offenders = {
        str(path.relative_to(REPO_ROOT)): lines
        for package in ("mama_core", "app", "ui")
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        if path != home
        and (lines := [n for names in vocabularies for n in _name_copies(path.read_text(), names)])
    }
    assert offenders == {}
