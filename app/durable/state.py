"""Small durable values of the runtime (cursors, agent session ids), by key."""

from __future__ import annotations

from app.durable.transaction import RuntimeDb
from mama_core.store.runtime_state import drop_values, put_value, value_of


def get_state(db: RuntimeDb, key: str) -> str | None:
    """The value stored under ``key``, or None."""
    with db.read() as conn:
        return value_of(conn, key)


def set_state(db: RuntimeDb, key: str, value: str) -> None:
    """Store ``value`` under ``key`` (replacing any)."""
    with db.write() as conn:
        put_value(conn, key, value)


def delete_state(db: RuntimeDb, key: str) -> None:
    with db.write() as conn:
        drop_values(conn, [key])


PAUSED_KEY = "agent_paused"


def stored_pause(db: RuntimeDb) -> bool:
    """Whether the owner paused the agent (in the tray or with ``mama agent pause``)."""
    return get_state(db, PAUSED_KEY) is not None


def store_pause(db: RuntimeDb, paused: bool) -> None:
    """Keep the owner's pause (or its end), for every runtime on this store."""
    if paused:
        set_state(db, PAUSED_KEY, "1")
    else:
        delete_state(db, PAUSED_KEY)
