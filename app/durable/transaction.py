"""The runtime tables' writer discipline: one ``BEGIN IMMEDIATE`` per operation.

The mailbox, the delivery journal and the pairing tables are not judgments, so
they do not go through the engine's one writer. Each operation takes the write
lock itself on its own connection (from ``Store.new_connection()``), does all of its
work, and commits; SQLite serialises it with the engine's writer through the
lock and the busy timeout. A failure rolls the whole operation back.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

from mama_core.store import sqlcipher, translate_error
from mama_core.store.connection import Connection


class RuntimeDb:
    """A connection for the runtime tables, used by one thread at a time."""

    def __init__(self, conn: Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def write(self) -> Iterator[Connection]:
        """One ``BEGIN IMMEDIATE`` … ``COMMIT``; rolled back on any error."""
        with self._transaction("BEGIN IMMEDIATE") as conn:
            yield conn

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A consistent read (one deferred transaction)."""
        with self._transaction("BEGIN") as conn:
            yield conn

    @contextlib.contextmanager
    def _transaction(self, begin: str) -> Iterator[Connection]:
        with self._lock:
            conn = self.conn
            try:
                conn.execute(begin)
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    with contextlib.suppress(sqlcipher.Error):
                        conn.execute("ROLLBACK")
                if isinstance(exc, sqlcipher.Error):
                    raise translate_error(exc, self.path) from exc
                raise

    @contextlib.contextmanager
    def locked(self) -> Iterator[Connection]:
        """The connection for a caller that manages its own transaction (e.g. a
        guidance render that reads in one snapshot)."""
        with self._lock:
            try:
                yield self.conn
            except sqlcipher.Error as exc:
                raise translate_error(exc, self.path) from exc

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlcipher.Error):
            self.conn.close()
