"""Small durable values of the runtime (cursors, agent session ids), by key."""

from __future__ import annotations

from app.runtime.transaction import RuntimeDb


def get_state(db: RuntimeDb, key: str) -> str | None:
    """The value stored under ``key``, or None."""
    with db.read() as conn:
        row = conn.execute("SELECT value FROM runtime_state WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_state(db: RuntimeDb, key: str, value: str) -> None:
    """Store ``value`` under ``key`` (replacing any)."""
    with db.write() as conn:
        conn.execute(
            "INSERT INTO runtime_state (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def delete_state(db: RuntimeDb, key: str) -> None:
    with db.write() as conn:
        conn.execute("DELETE FROM runtime_state WHERE key = ?", (key,))
