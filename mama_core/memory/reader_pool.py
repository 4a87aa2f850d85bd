"""A small pool of read connections, one borrowed per read, so reads on caller
threads never touch the writer's connection."""

from __future__ import annotations

import threading
from collections.abc import Generator
from contextlib import contextmanager

from mama_core.store import Store, sqlcipher
from mama_core.store.connection import Connection, translate_error


class ReaderPool:
    """Read connections from ``store.new_connection()``, reused up to ``size`` idle ones."""

    def __init__(self, store: Store, size: int) -> None:
        self._store = store
        self._size = size
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def borrow(self) -> Generator[Connection, None, None]:
        """A read connection for the duration of one read."""
        conn = self._take()
        try:
            yield conn
        except sqlcipher.Error as exc:
            raise translate_error(exc, self._store.path) from exc
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self._give_back(conn)

    def close(self) -> None:
        """Close every idle connection; borrowed ones close when returned."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _take(self) -> Connection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._store.new_connection()

    def _give_back(self, conn: Connection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self._size:
                self._idle.append(conn)
                return
        conn.close()
