"""The Audit log tab's data: pages of the event log, newest first, and new events
as change-sets announce them.

The catalog has no read for the event log yet, so pages come from
``ui.queries`` on the UI's reader connection (read-only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ui.qt import QtCore
from ui.queries import audit_page, audit_since
from ui.review.models import AuditLogModel

if TYPE_CHECKING:
    from ui.bridge import EngineBridge
    from ui.tasks import TaskGroup

PAGE = 200


class AuditList(QtCore.QObject):
    """Keeps an ``AuditLogModel`` filled: first page, older pages on scroll, new events."""

    def __init__(
        self, bridge: EngineBridge, tasks: TaskGroup, parent: QtCore.QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._tasks = tasks
        self.model = AuditLogModel(self)
        self.model.more_wanted.connect(self._more_wanted)

    async def reload(self) -> None:
        entries = await self._bridge.read(lambda conn: audit_page(conn, None, PAGE))
        self.model.set_entries(entries, has_more=len(entries) == PAGE)

    async def catch_up(self) -> None:
        """Put events newer than the newest shown on top."""
        newest = self.model.newest_id
        entries = await self._bridge.read(lambda conn: audit_since(conn, newest))
        self.model.prepend(entries)

    async def load_older(self, before_id: int) -> None:
        entries = await self._bridge.read(lambda conn: audit_page(conn, before_id, PAGE))
        self.model.append_page(entries, has_more=len(entries) == PAGE)

    def _more_wanted(self, before_id: int) -> None:
        self._tasks.spawn(self.load_older(before_id))
