"""One door per table: each table's INSERT/UPDATE/DELETE statements appear in one module
(as ``events`` in ``mama_core/memory/events.py``), and other code calls that module.

Read with ``ast`` over the string constants of mama_core, app and ui (an implicitly
joined string is one constant; an f-string is read whole, its run-time parts as
``{``), so a statement is found wherever it is written. Migrations are SQL files, not read here.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from tests.conftest import REPO_ROOT

WRITE = re.compile(
    # A table may be schema-qualified (the team store's ``mama_team.memories``).
    r"\b(?:INSERT(?:\s+OR\s+[A-Z]+)?\s+INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+(\w+(?:\.\w+)?|\{)"
    r"|\bUPDATE(?:\s+OR\s+[A-Z]+)?\s+(\w+(?:\.\w+)?)\s+SET\b"
)
"""A write statement and its table, in the upper case this code base writes SQL in
(``ON CONFLICT … DO UPDATE SET`` names no table and is part of its INSERT)."""

DYNAMIC = "<named at run time>"

EXCEPTIONS: dict[tuple[str, str], str] = {
    # --- the team store (PostgreSQL): init creates the chain with its first head row ---
    ("mama_team.chain_head", "app/team/schema.py"): (
        "team init puts the empty chain's head row when it creates the schema"
    ),
    # --- a purge erases text inside its own transaction, in the rows other doors wrote --
    ("event_texts", "mama_core/memory/actions/purge.py"): "a purge erases a reason's text",
    ("edges", "mama_core/memory/actions/purge.py"): "a purge erases an edge's reason",
    ("tombstones", "mama_core/memory/actions/purge.py"): (
        "a purge erases a tombstone's reason, fingerprint and vector"
    ),
    ("embeddings", "mama_core/memory/actions/purge.py"): "a purge deletes the vectors",
    ("observations", "mama_core/memory/observation_erasure.py"): (
        "a purge erases an observation's text, in the purge's transaction"
    ),
    ("observation_facets", "mama_core/memory/observation_erasure.py"): (
        "a purge erases a connector item's metadata with its observation"
    ),
    # --- not a write ----------------------------------------------------------------
    (DYNAMIC, "mama_core/memory/verify.py"): (
        "FTS5's 'integrity-check' command is written as an INSERT; it changes nothing"
    ),
    # --- remaining, to be given one door -----------------------------------------------
    # The vectors are sealed as they are written; the seals are being reworked on another
    # branch, so these inserts move after it merges (to the door left: recall/reembed.py,
    # the vector catch-up, or a writer method beside append_judgment).
    ("embeddings", "mama_core/memory/actions/commitment_changes.py"): "a successor's vectors",
    ("embeddings", "mama_core/memory/actions/restore.py"): "a restored copy's vectors",
    ("embeddings", "mama_core/memory/actions/saving.py"): "a new judgment's vector",
}
"""(table, module) pairs allowed beside the table's one door, each with why."""


def table_writes(path: Path) -> dict[str, list[int]]:
    """The tables ``path``'s SQL writes, each with the lines of its statements."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    in_fstring = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
    }
    found: dict[str, list[int]] = defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # a run-time part reads as "{"
            text = "".join(
                str(part.value) if isinstance(part, ast.Constant) else "{" for part in node.values
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in in_fstring:
                continue
            text = node.value
        else:
            continue
        for match in WRITE.finditer(text):
            table = match.group(1) or match.group(2)
            found[DYNAMIC if table == "{" else table].append(node.lineno)
    return {table: sorted(lines) for table, lines in found.items()}


def writers() -> dict[str, dict[str, list[int]]]:
    """Every table written in mama_core, app and ui: the modules, with their lines."""
    tables: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for package in ("mama_core", "app", "ui"):
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            for table, lines in table_writes(path).items():
                tables[table][str(path.relative_to(REPO_ROOT))] = lines
    return dict(tables)


def test_reader_sees_writes_not_prose_or_reads(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        'conn.execute("INSERT INTO judgments (kind) VALUES (?)")\n'
        'A = ("INSERT OR IGNORE INTO scopes (name) "\n    "VALUES (?)")\n'
        'B = f"UPDATE judgments SET {cols} WHERE id = ?"\n'
        'C = "DELETE FROM edges WHERE id = ?"\n'
        "D = f\"INSERT INTO {index} ({index}) VALUES ('integrity-check')\"\n"
        'E = "INSERT INTO t (a) VALUES (?) ON CONFLICT (a) DO UPDATE SET a = excluded.a"\n'
        'F = "SELECT id FROM mailbox WHERE state = ?"\n'
        'G = "Update the list, then delete from the disk"\n'
    )
    assert table_writes(sample) == {
        "judgments": [1, 4],
        "scopes": [2],
        "edges": [5],
        DYNAMIC: [6],
        "t": [7],
    }


def test_each_table_is_written_by_one_module() -> None:
    tables = writers()
    # Positive control: the model door and the doors of issue 28 item 1 are seen, and
    # are the ones left when the exceptions are set aside.
    assert set(tables["events"]) == {"mama_core/memory/events.py"}
    doors = {
        "judgments": "mama_core/memory/writer.py",
        "edges": "mama_core/memory/writer.py",
        "observations": "mama_core/memory/observations.py",
        "mailbox": "app/durable/mailbox.py",
        "deliveries": "app/durable/journal.py",
        "runtime_state": "mama_core/store/runtime_state.py",
    }
    for table, door in doors.items():
        assert {m for m in tables[table] if (table, m) not in EXCEPTIONS} == {door}, table
    assert len(tables) >= 25
    offenders = {
        table: writing
        for table, modules in tables.items()
        if len(writing := sorted(m for m in modules if (table, m) not in EXCEPTIONS)) > 1
    }
    assert offenders == {}


def test_every_exception_is_still_needed() -> None:
    """An exception that no longer applies is taken off the list (it only shrinks)."""
    tables = writers()
    stale = sorted(
        f"{table} in {module}"
        for table, module in EXCEPTIONS
        if module not in tables.get(table, {})
    )
    assert stale == []


APP_TABLES = frozenset({"mailbox", "deliveries"})
"""The runtime's tables (``app/durable``): the core calls the app's read functions for
them (``Engine(replies=...)``) and never names them in its own SQL."""

READ = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)")


def table_reads(path: Path) -> set[str]:
    """The tables ``path``'s SQL reads or joins (``FROM t`` / ``JOIN t``, upper case)."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(READ.findall(node.value))
    return found


def test_the_core_names_none_of_the_app_tables() -> None:
    # Positive control: the app's read of what was sent back joins both, and is seen.
    assert table_reads(REPO_ROOT / "app" / "durable" / "journal.py") >= APP_TABLES
    offenders = {
        str(path.relative_to(REPO_ROOT)): sorted(reads)
        for path in sorted((REPO_ROOT / "mama_core").rglob("*.py"))
        if (reads := table_reads(path) & APP_TABLES)
    }
    assert offenders == {}
