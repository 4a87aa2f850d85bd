"""The schema the migrations create, to compare a store's ``sqlite_schema`` with.

A dropped trigger (the append-only guards, the seals), an index or table added
or changed behind MAMA's back is found by building the expected schema from the
shipped migrations in memory and comparing the two, object by object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from mama_core.store import sqlcipher
from mama_core.store.connection import Connection
from mama_core.store.migrations import (
    MigrationSeries,
    load_migrations,
    schema_version,
    series_version,
)
from mama_core.store.secret import SAID_KEY_FUNCTION, SEAL_FUNCTION

SchemaObjects = dict[tuple[str, str], str]
"""``(type, name) -> normalised SQL`` of each schema object."""

_SPACE = re.compile(r"\s+")


def schema_objects(conn: Connection) -> SchemaObjects:
    """The store's tables, indexes, triggers and views (SQLite's statistics excluded)."""
    rows = conn.execute(
        "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_stat%'"
    ).fetchall()
    return {(str(t), str(n)): _SPACE.sub(" ", str(sql or "")).strip() for t, n, sql in rows}


def expected_objects(
    version: int, series: Mapping[MigrationSeries, int] | None = None
) -> SchemaObjects:
    """What the migrations up to ``version`` create, then those of each ``series`` up to
    its version, built in a throwaway in-memory database."""
    conn = sqlcipher.connect(":memory:", isolation_level=None)
    try:
        conn.create_function(SEAL_FUNCTION, -1, lambda *_v: "")
        conn.create_function(SAID_KEY_FUNCTION, 2, lambda *_v: "")
        for migration in load_migrations():
            if migration.version > version:
                break
            conn.executescript(migration.sql)
        for owner, owner_version in (series or {}).items():
            for migration in load_migrations(owner.package):
                if migration.version <= owner_version:
                    conn.executescript(migration.sql)
        return schema_objects(conn)
    finally:
        conn.close()


def schema_problems(conn: Connection, series: Sequence[MigrationSeries] = ()) -> list[str]:
    """Each difference between the store's schema and the one its migrations make (the
    core's, and those of ``series`` at the versions the store records)."""
    actual = schema_objects(conn)
    expected = expected_objects(
        schema_version(conn), {owner: series_version(conn, owner) for owner in series}
    )
    problems: list[str] = []
    for (kind, name), sql in sorted(expected.items()):
        if (kind, name) not in actual:
            problems.append(f"the {kind} {name} is missing from the schema (dropped?)")
        elif actual[(kind, name)] != sql:
            problems.append(f"the {kind} {name} differs from the schema the migrations make")
    for kind, name in sorted(set(actual) - set(expected)):
        problems.append(f"the schema has a {kind} {name} that the migrations do not make")
    return problems


__all__ = ["expected_objects", "schema_objects", "schema_problems"]
