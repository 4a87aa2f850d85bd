"""Export the whole store as JSON lines, for backup inspection and portability.

Each line is one record ``{"table": …, "row": {…}}``; vectors are left out
(they are rebuilt from the text by ``mama reindex``). Read-only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TypeAlias, TypedDict

from mama_core.store.connection import Connection

EXPORTED_TABLES = (
    "meta",
    "scopes",
    "judgments",
    "scope_bindings",
    "edges",
    "events",
    "receipts",
    "tombstones",
    "tombstone_scopes",
    "checkpoints",
    "observations",
    "change_proposals",
    "commitment_terms",
    "commitment_sources",
)
_SKIPPED_COLUMNS = {"tombstones": {"vector"}}


SqlValue: TypeAlias = str | int | float | bytes | None
"""A column's value as SQLite returns it."""


class ExportRecord(TypedDict):
    """One exported row: its table and its columns' values (one JSON line)."""

    table: str
    row: dict[str, SqlValue]


def export_rows(conn: Connection) -> Iterator[ExportRecord]:
    """Every row of every exported table, in a stable order, in one read snapshot."""
    conn.execute("BEGIN")
    try:
        for table in EXPORTED_TABLES:
            cursor = conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
            names = [d[0] for d in cursor.description]
            skipped = _SKIPPED_COLUMNS.get(table, set())
            for values in cursor:
                row = {n: v for n, v in zip(names, values, strict=True) if n not in skipped}
                yield {"table": table, "row": row}
    finally:
        conn.execute("COMMIT")


def export_lines(conn: Connection) -> Iterator[str]:
    for record in export_rows(conn):
        yield json.dumps(record, ensure_ascii=False, sort_keys=True)
