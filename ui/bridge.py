"""The UI's one door to the memory engine: owner actions, reads and change-sets.

``EngineBridge`` lives on the UI thread. Owner actions go through the action
catalog (``engine.dispatch_async`` as ``SessionFacts.owner_ui()`` with the
owner's grant), so they get the same validation, receipt and event as any
other front end. Change-sets arrive on the engine's writer thread and are
re-emitted as ``changed`` on the UI thread through a queued signal, so views
redraw from what actually changed instead of polling. Reads the catalog lacks
(``ui.queries``) run on one dedicated reader thread with its own connection.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from mama_core.store.connection import end_read
from ui.qt import QtCore, Signal, Slot

if TYPE_CHECKING:
    from mama_core.memory import Engine
    from mama_core.model import ChangeSet
    from mama_core.store import Store
    from mama_core.store.connection import Connection

log = logging.getLogger(__name__)

T = TypeVar("T")


class EngineBridge(QtCore.QObject):
    """Owner actions and reads for the windows; ``changed`` after every commit."""

    changed = Signal(object)
    """A ``ChangeSet``, delivered on the UI thread."""

    _arrived = Signal(object)

    def __init__(self, engine: Engine, store: Store, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        from mama_core.memory import Grant, SessionFacts

        self._engine = engine
        self._store = store
        self._session = SessionFacts.owner_ui()
        self._grant = Grant.owner(default_scope="global")
        self._reader_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mama-ui-reader")
        self._reader_conn: Connection | None = None
        self._reader_lock = threading.Lock()
        self._closed = False
        # Queued: the writer thread only posts; the slot runs on this object's thread.
        self._arrived.connect(self._deliver, QtCore.Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = engine.subscribe(self._on_commit)

    @property
    def engine(self) -> Engine:
        return self._engine

    def replace_engine(self, engine: Engine) -> None:
        """Follow a new engine over the same store (after an embedding model change)."""
        self._unsubscribe()
        self._engine = engine
        self._unsubscribe = engine.subscribe(self._on_commit)

    async def dispatch(self, action: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Run ``action`` as the owner in the desktop app; returns the receipt or result."""
        return await self._engine.dispatch_async(action, dict(payload), self._session, self._grant)

    async def read(self, query: Callable[[Connection], T]) -> T:
        """Run a read-only ``query`` on the UI's reader connection, off the UI thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reader_thread, self._run_read, query)

    def _run_read(self, query: Callable[[Connection], T]) -> T:
        with self._reader_lock:
            if self._reader_conn is None:
                self._reader_conn = self._store.new_connection()
            conn = self._reader_conn
            try:
                return query(conn)
            finally:
                end_read(conn)

    def _on_commit(self, changes: ChangeSet) -> None:
        # Writer thread: post and return at once.
        if not self._closed:
            self._arrived.emit(changes)

    @Slot(object)
    def _deliver(self, changes: ChangeSet) -> None:
        if not self._closed:
            self.changed.emit(changes)

    def close(self) -> None:
        """Stop listening and close the reader connection (the engine is closed elsewhere)."""
        if self._closed:
            return
        self._closed = True
        self._unsubscribe()
        self._reader_thread.shutdown(wait=True)
        with self._reader_lock:
            if self._reader_conn is not None:
                self._reader_conn.close()
                self._reader_conn = None
