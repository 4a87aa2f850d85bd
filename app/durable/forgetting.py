"""After a purge, no agent conversation that may have seen the erased text goes on.

Each backend has a watch in ``runtime_state`` (``purge_watch:<backend>``): the last
event id it checked. Before every turn the runtime looks for a ``memory.purge``
event past it (from any process: the CLI, the tray, Telegram). If there is one,
the conversation is ended and forgotten (``forget_session``: the session or
thread id is dropped so it is never resumed, and the CLI's transcript files are
deleted), and the next turn starts a fresh session whose context is rebuilt from
the store, where the text is gone. A backend seen for the first time starts
watching from the current head.
"""

from __future__ import annotations

from app.durable.transaction import RuntimeDb
from mama_core.memory.events import chain_head, purged_since
from mama_core.store.connection import Connection
from mama_core.store.runtime_state import put_value, value_of

WATCH_PREFIX = "purge_watch:"


def purge_since_watch(db: RuntimeDb, backend: str) -> int | None:
    """The event head if a purge happened since ``backend``'s watch (the watch is left
    for ``watch_from`` after the session is forgotten); else None, the watch moved on."""
    key = WATCH_PREFIX + backend
    with db.write() as conn:
        head = chain_head(conn).id
        watch = value_of(conn, key)
        purged = watch is not None and purged_since(conn, int(watch))
        if purged:
            return head
        _set_watch(conn, key, head)
        return None


def watch_from(db: RuntimeDb, backend: str, head: int) -> None:
    """The conversation of ``backend`` is clean of every purge up to event ``head``."""
    with db.write() as conn:
        _set_watch(conn, WATCH_PREFIX + backend, head)


def _set_watch(conn: Connection, key: str, head: int) -> None:
    put_value(conn, key, str(head))
