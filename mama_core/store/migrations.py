"""Numbered SQL migrations, applied in order on open.

Each file ``NNNN_name.sql`` in ``mama_core/store/sql/`` runs in its own
transaction together with the ``PRAGMA user_version`` bump, so a failure leaves
the store at the previous version. A database whose version is newer than this
code knows is refused, never "repaired".

A layer above the core keeps its own tables in a series of its own
(``MigrationSeries``: ``app/sql/`` for the app's): the same numbered files, each
in one transaction with its version, which lives in ``meta`` under
``schema:<name>`` since ``user_version`` is the core's. Applied migrations are
known by number only (no checksums), so an applied file is never edited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from mama_core.errors import MigrationError, NewerSchemaError
from mama_core.store import sqlcipher
from mama_core.store.connection import Connection

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


CORE_PACKAGE = "mama_core.store.sql"


def load_migrations(package: str = CORE_PACKAGE) -> list[Migration]:
    """All migrations shipped in ``package`` (the core's by default), in version order."""
    found: list[Migration] = []
    for entry in resources.files(package).iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise RuntimeError(f"migration numbering has a gap at {expected}")
    return found


def latest_version() -> int:
    migrations = load_migrations()
    return migrations[-1].version if migrations else 0


def schema_version(conn: Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def apply_migrations(conn: Connection, migrations: list[Migration]) -> list[int]:
    """Apply the migrations newer than the store's version; return those applied.

    Each runs as SQLite documents for schema changes it cannot make with ``ALTER
    TABLE`` (https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of
    Table Schema Changes"): foreign keys off outside the transaction (a table can then
    be rebuilt and renamed without its children's rows being checked against the
    dropped original), ``PRAGMA foreign_key_check`` before the commit (a migration
    that broke a reference is rolled back), and foreign keys on again afterwards.
    """
    applied: list[int] = []
    for migration in migrations:
        if migration.version <= schema_version(conn):
            continue
        script = f"BEGIN IMMEDIATE;\n{migration.sql}\n;\nPRAGMA user_version = {migration.version};"
        conn.execute("PRAGMA foreign_keys = OFF")
        try:
            conn.executescript(script)
            broken = conn.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                tables = sorted({str(row[0]) for row in broken})
                raise MigrationError(f"it left rows in {', '.join(tables)} pointing at nothing")
            conn.execute("COMMIT")
        except Exception as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise MigrationError(
                f"Updating the memory store to version {migration.version} "
                f"({migration.name}) failed: {exc}; the store was left at version "
                f"{schema_version(conn)} and a copy was kept beside it."
            ) from exc
        finally:
            conn.execute("PRAGMA foreign_keys = ON")
        applied.append(migration.version)
    return applied


@dataclass(frozen=True)
class MigrationSeries:
    """The numbered migrations of a layer above the core, for the tables it owns: files
    ``NNNN_name.sql`` in ``package``, applied after the core's, their version in ``meta``."""

    name: str
    package: str

    @property
    def version_key(self) -> str:
        return f"schema:{self.name}"


def series_version(conn: Connection, series: MigrationSeries) -> int:
    """The last migration of ``series`` applied to the store (0: none yet)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (series.version_key,)).fetchone()
    return 0 if row is None else int(row[0])


def pending_in_series(conn: Connection, series: MigrationSeries) -> list[Migration]:
    """The migrations of ``series`` the store lacks; a store that has more than this code
    knows is refused (``NewerSchemaError``), as for the core's."""
    migrations = load_migrations(series.package)
    latest = migrations[-1].version if migrations else 0
    current = series_version(conn, series)
    if current > latest:
        raise NewerSchemaError(
            f"The memory store was written by a newer MAMA (its {series.name} tables are at "
            f"version {current}, this one knows up to {latest}); update MAMA to open it."
        )
    return [m for m in migrations if m.version > current]


def apply_series(conn: Connection, series: MigrationSeries) -> list[int]:
    """Apply the pending migrations of ``series``, each with its version in one
    ``BEGIN IMMEDIATE`` transaction; return those applied. A migration another process
    applied meanwhile is skipped (the version is read again under the write lock)."""
    applied: list[int] = []
    for migration in pending_in_series(conn, series):
        try:
            conn.execute("BEGIN IMMEDIATE")
            if series_version(conn, series) >= migration.version:
                conn.execute("ROLLBACK")
                continue
            for statement in _statements(migration.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (series.version_key, str(migration.version)),
            )
            conn.execute("COMMIT")
        except Exception as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise MigrationError(
                f"Updating the memory store's {series.name} tables to version "
                f"{migration.version} ({migration.name}) failed: {exc}; they were left at "
                f"version {series_version(conn, series)}."
            ) from exc
        applied.append(migration.version)
    return applied


def _statements(script: str) -> list[str]:
    """The statements of ``script``, one by one (``executescript`` would commit the
    transaction they must run in)."""
    statements: list[str] = []
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlcipher.complete_statement(buffer):
            statements.append(buffer)
            buffer = ""
    if buffer.strip(" \t\n;"):
        statements.append(buffer)
    return [s for s in statements if _has_code(s)]


def _has_code(statement: str) -> bool:
    lines = (line.split("--", 1)[0] for line in statement.splitlines())
    return any(line.strip(" \t;") for line in lines)
