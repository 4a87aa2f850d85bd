"""Numbered SQL migrations, applied in order on open.

Each file ``NNNN_name.sql`` in ``mama_core/store/sql/`` runs in its own
transaction together with the ``PRAGMA user_version`` bump, so a failure leaves
the store at the previous version. A database whose version is newer than this
code knows is refused, never "repaired".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from mama_core.errors import MigrationError
from mama_core.store.connection import Connection

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def load_migrations() -> list[Migration]:
    """All migrations shipped with this code, in version order."""
    found: list[Migration] = []
    for entry in resources.files("mama_core.store.sql").iterdir():
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
    """Apply the migrations newer than the store's version; return those applied."""
    applied: list[int] = []
    for migration in migrations:
        if migration.version <= schema_version(conn):
            continue
        script = (
            "BEGIN IMMEDIATE;\n"
            f"{migration.sql}\n;\n"
            f"PRAGMA user_version = {migration.version};\n"
            "COMMIT;"
        )
        try:
            conn.executescript(script)
        except Exception as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise MigrationError(
                f"Updating the memory store to version {migration.version} "
                f"({migration.name}) failed: {exc}; the store was left at version "
                f"{schema_version(conn)} and a copy was kept beside it."
            ) from exc
        applied.append(migration.version)
    return applied
