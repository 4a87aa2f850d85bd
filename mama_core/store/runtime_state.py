"""The ``runtime_state`` table's one door: small values by key (cursors, session ids,
a purge's progress, the pairing's wrong-code counters).

The table is in the core's schema (``sql/0003_mailbox.sql``) and both sides keep values
in it: the core a pending purge (``memory/purge_pending``), the app its runtime's
(``app/durable/state``, ``forgetting``, ``telegram/pairing``). Each writes on its own
connection and transaction through these functions.
"""

from __future__ import annotations

from collections.abc import Iterable

from mama_core.store.connection import Connection


def value_of(conn: Connection, key: str) -> str | None:
    """The value stored under ``key``, or None."""
    row = conn.execute("SELECT value FROM runtime_state WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def put_value(conn: Connection, key: str, value: str) -> None:
    """Store ``value`` under ``key`` (replacing any)."""
    conn.execute(
        "INSERT INTO runtime_state (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def drop_values(conn: Connection, keys: Iterable[str]) -> None:
    """Remove the values stored under ``keys`` (a key not there is no error)."""
    conn.executemany("DELETE FROM runtime_state WHERE key = ?", [(key,) for key in keys])
