"""What the review window shows, kept equal to the store: the four lists, the audit
log, the scope names and the tombstones, loaded once and then patched from change-sets.

Change-sets arrive on the UI thread (``EngineBridge.changed``). Several in quick
succession are gathered for a moment and applied as one batch; batches are
applied one at a time, in order, so a slow older batch never lands after a
newer one. The touched records are read back through the catalog
(``memory.read``) and each list decides whether they belong to it. The
tombstones (``tombstone.list``) are read again after every batch: a lift or a
tombstone changes no status, so no record id says it happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ui.qt import QtCore, Signal
from ui.queries import scope_names
from ui.review.audit_list import AuditList
from ui.review.lists import (
    ACTIVE_GUIDANCE,
    ALL_MEMORIES,
    PROPOSED,
    RETIRED,
    JudgmentList,
    mark_continued,
)
from ui.review.models import ProposedTableModel, RetiredTableModel

if TYPE_CHECKING:
    from mama_core.memory.results import TombstoneEntry
    from mama_core.model import ChangeSet
    from ui.bridge import EngineBridge
    from ui.tasks import TaskGroup

TAB_PROPOSED, TAB_GUIDANCE, TAB_ALL, TAB_RETIRED, TAB_AUDIT = range(5)
CHANGE_COALESCE_MS = 30
RELOAD_ABOVE = 50
"""A batch touching more records than this reloads the lists instead of patching them."""
TOMBSTONE_LIMIT = 1000


class ReviewData(QtCore.QObject):
    """The lists of the review window and how they follow the store."""

    first_loaded = Signal()
    """While loading: the first list asked for is filled (the others follow)."""
    updated = Signal(object)
    """A load or a batch of change-sets was applied: the set of judgment ids touched."""
    scopes_changed = Signal(list)
    """The scope names in use (for the scope filter)."""

    def __init__(
        self, bridge: EngineBridge, tasks: TaskGroup, parent: QtCore.QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._tasks = tasks
        self.lists: dict[int, JudgmentList] = {
            TAB_PROPOSED: JudgmentList(bridge, PROPOSED, self, ProposedTableModel),
            TAB_GUIDANCE: JudgmentList(bridge, ACTIVE_GUIDANCE, self),
            TAB_ALL: JudgmentList(bridge, ALL_MEMORIES, self),
            TAB_RETIRED: JudgmentList(bridge, RETIRED, self, RetiredTableModel),
        }
        self.tombstones: dict[int, list[TombstoneEntry]] = {}
        """``tombstone.list`` entries by the judgment they were made from, newest first."""
        self.audit = AuditList(bridge, tasks, self)
        self._pending_ids: set[int] = set()
        self._pending = False
        self._applying = False
        self._closed = False
        self._timer = QtCore.QTimer(self, singleShot=True, interval=CHANGE_COALESCE_MS)
        self._timer.timeout.connect(self._start_applying)
        bridge.changed.connect(self.on_changes)

    async def load(self, first: int) -> None:
        """Fill the list of tab ``first`` (then ``first_loaded``), the others, the audit
        log and the scope names."""
        if first in self.lists:
            await self.lists[first].reload()
        else:
            await self.audit.reload()
        self.first_loaded.emit()
        for tab, jlist in self.lists.items():
            if tab != first:
                await jlist.reload()
        if first in self.lists:
            await self.audit.reload()
        await self.refresh_scopes()
        await self.refresh_tombstones()
        self.updated.emit(set())

    async def refresh_scopes(self) -> None:
        self.scopes_changed.emit(await self._bridge.read(scope_names))

    async def refresh_tombstones(self) -> None:
        """Read the tombstones again and mark the retired records they block."""
        from mama_core.memory.results import TombstoneListResult

        result = await self._bridge.read_as(
            TombstoneListResult, "tombstone.list", {"limit": TOMBSTONE_LIMIT}
        )
        by_judgment: dict[int, list[TombstoneEntry]] = {}
        for entry in result.tombstones:
            if entry.judgment_id is not None:
                by_judgment.setdefault(entry.judgment_id, []).append(entry)
        self.tombstones = by_judgment
        model = self.lists[TAB_RETIRED].model
        if isinstance(model, RetiredTableModel):
            model.set_tombstones(by_judgment)

    def active_tombstone(self, judgment_id: int) -> TombstoneEntry | None:
        """The newest tombstone made from ``judgment_id`` that is not lifted, if any."""
        for entry in self.tombstones.get(judgment_id, []):
            if not entry.lifted:
                return entry
        return None

    # --- change-sets ------------------------------------------------------------

    def on_changes(self, changes: ChangeSet) -> None:
        """Note a change-set; it is applied with any others arriving just after it."""
        if self._closed:
            return
        self._pending_ids.update(
            changes.added, changes.status_changed, changes.purged, changes.touched
        )
        self._pending = True
        if not self._applying and not self._timer.isActive():
            self._timer.start()

    @property
    def settled(self) -> bool:
        """No change-set is waiting or being applied (the lists match the store)."""
        return not (self._applying or self._pending or self._timer.isActive())

    def _start_applying(self) -> None:
        if not self._applying and not self._closed:
            self._applying = True
            self._tasks.spawn(self._apply_pending())

    async def _apply_pending(self) -> None:
        touched: set[int] = set()
        try:
            while self._pending:
                ids, self._pending_ids = self._pending_ids, set()
                self._pending = False
                await self._apply(ids)
                touched |= ids
        finally:
            self._applying = False
        self.updated.emit(touched)

    async def _apply(self, ids: set[int]) -> None:
        if len(ids) > RELOAD_ABOVE:
            for jlist in self.lists.values():
                await jlist.reload()
        else:
            records = {i: await self._read(i) for i in sorted(ids)}
            await mark_continued(self._bridge, (r for r in records.values() if r is not None))
            for jlist in self.lists.values():
                if not jlist.apply(records):
                    await jlist.reload()  # ranked by search words: only recall can place it
        await self.audit.catch_up()
        if ids:
            await self.refresh_scopes()
        await self.refresh_tombstones()

    async def _read(self, judgment_id: int) -> dict[str, Any] | None:
        from mama_core.memory import NotFoundError

        try:
            result = await self._bridge.dispatch("memory.read", {"id": judgment_id})
        except NotFoundError:
            return None
        record = result.get("record")
        return dict(record) if isinstance(record, dict) else None

    def close(self) -> None:
        """Stop following the store."""
        self._closed = True
        self._timer.stop()
