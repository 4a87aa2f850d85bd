"""The UI's one door to the memory engine: owner actions, reads and change-sets.

``EngineBridge`` lives on the UI thread. Owner actions go through the action
catalog (``engine.dispatch_async`` as ``SessionFacts.owner_ui()`` with the
owner's grant), so they get the same validation, receipt and event as any
other front end. Change-sets arrive on the engine's writer thread and are
re-emitted as ``changed`` on the UI thread through a queued signal, so views
redraw from what actually changed instead of polling. Reads the catalog lacks
(``ui.queries``) are functions of a connection, handed to ``engine.query`` on one
dedicated thread: the UI keeps no connection of its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from ui.qt import QtCore, Signal, Slot

if TYPE_CHECKING:
    from mama_core.memory import Engine, Receipt
    from mama_core.memory.results import ActionResult
    from mama_core.model import ChangeSet
    from mama_core.store.connection import Connection

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R", bound="ActionResult")


class EngineBridge(QtCore.QObject):
    """Owner actions and reads for the windows; ``changed`` after every commit."""

    changed = Signal(object)
    """A ``ChangeSet``, delivered on the UI thread."""

    _arrived = Signal(object)

    def __init__(self, engine: Engine, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        from mama_core.memory import Grant, SessionFacts

        self._engine = engine
        self._session = SessionFacts.owner_ui()
        self._grant = Grant.owner(default_scope="global")
        # One thread: the windows' reads queue behind each other, never more than one
        # of the engine's read connections busy for the UI.
        self._reader_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mama-ui-reader")
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
        """Run the read ``action`` as the owner in the desktop app; returns its result."""
        return await self._engine.dispatch_async(action, dict(payload), self._session, self._grant)

    async def read_as(self, model: type[R], action: str, payload: Mapping[str, Any]) -> R:
        """Run the read ``action`` as the owner in the desktop app; its result model."""
        return await asyncio.to_thread(
            self._engine.read_as, model, action, dict(payload), self._session, self._grant
        )

    async def mutate(self, action: str, payload: Mapping[str, Any]) -> Receipt:
        """Run the mutation ``action`` as the owner in the desktop app; its typed receipt."""
        return await self._engine.mutate_action_async(
            action, dict(payload), self._session, self._grant
        )

    async def read(self, query: Callable[[Connection], T]) -> T:
        """Run the read-only ``query`` through the engine (``Engine.query``), off the UI
        thread; after ``replace_engine`` it reads through the new one."""
        loop = asyncio.get_running_loop()
        engine = self._engine
        return await loop.run_in_executor(self._reader_thread, engine.query, query)

    def _on_commit(self, changes: ChangeSet) -> None:
        # Writer thread: post and return at once.
        if not self._closed:
            self._arrived.emit(changes)

    @Slot(object)
    def _deliver(self, changes: ChangeSet) -> None:
        if not self._closed:
            self.changed.emit(changes)

    def close(self) -> None:
        """Stop listening and wait for a read in flight (the engine is closed elsewhere)."""
        if self._closed:
            return
        self._closed = True
        self._unsubscribe()
        self._reader_thread.shutdown(wait=True)
