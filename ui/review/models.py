"""Qt table models over judgments and the audit log.

The models hold rows and answer Qt's questions; they do no I/O. Whoever owns
a model (``ui.review.lists``) fills it from catalog reads and updates it row by
row from the writer's change-sets: ``upsert`` and ``remove`` emit the precise
insert/change/remove notifications, so a view keeps its selection and scroll
position while the queue changes under it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ui.palette import status_colour
from ui.qt import Qt, QtCore, QtGui, Signal
from ui.queries import AuditEntry
from ui.words import action_word, local_time, record_status_word

if TYPE_CHECKING:
    from mama_core.memory.results import TombstoneEntry

ID_ROLE = Qt.ItemDataRole.UserRole + 1
"""The judgment (or event) id of a row."""

RECORD_ROLE = Qt.ItemDataRole.UserRole + 2
"""The whole row (a dict for judgments, an ``AuditEntry`` for events)."""

SORT_ROLE = Qt.ItemDataRole.UserRole + 3
"""What a column sorts by: the number for ids, the stored UTC time for times (in the
same order as the local times shown), else the shown text without case."""

_ROOT = QtCore.QModelIndex()
Index = QtCore.QModelIndex | QtCore.QPersistentModelIndex


class _ColumnsModel(QtCore.QAbstractTableModel):
    """A flat table whose columns are named by ``COLUMNS``."""

    COLUMNS: ClassVar[tuple[str, ...]] = ()

    def columnCount(self, parent: Index = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None


class JudgmentTableModel(_ColumnsModel):
    """Judgments as rows (dicts shaped like ``memory.search`` results), newest first."""

    COLUMNS: ClassVar[tuple[str, ...]] = ("#", "Kind", "Summary", "Scopes", "Status", "Recorded")

    removing = Signal(int)
    """This row is about to go (before any view's selection model moves its current
    row away from it, which ``rowsAboutToBeRemoved`` comes too late to see)."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[dict[str, Any]] = []

    # --- what the owner of the model calls --------------------------------

    def set_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        """Replace every row (a fresh load or a new search)."""
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def upsert(self, row: dict[str, Any]) -> None:
        """Update the row with ``row['id']`` in place, or insert it at the top."""
        at = self.row_of(int(row["id"]))
        if at is None:
            self.beginInsertRows(_ROOT, 0, 0)
            self._rows.insert(0, row)
            self.endInsertRows()
            return
        self._rows[at] = row
        self.dataChanged.emit(self.index(at, 0), self.index(at, len(self.COLUMNS) - 1))

    def remove(self, judgment_id: int) -> bool:
        """Drop the row of ``judgment_id``; False if it was not shown."""
        at = self.row_of(judgment_id)
        if at is None:
            return False
        self.removing.emit(at)
        self.beginRemoveRows(_ROOT, at, at)
        del self._rows[at]
        self.endRemoveRows()
        return True

    def row_of(self, judgment_id: int) -> int | None:
        for at, row in enumerate(self._rows):
            if int(row["id"]) == judgment_id:
                return at
        return None

    def record(self, at: int) -> dict[str, Any] | None:
        return self._rows[at] if 0 <= at < len(self._rows) else None

    def ids(self) -> list[int]:
        return [int(row["id"]) for row in self._rows]

    # --- QAbstractTableModel ----------------------------------------------

    def rowCount(self, parent: Index = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == Qt.ItemDataRole.ToolTipRole and column == 2:
            return row.get("summary", "")
        if role == Qt.ItemDataRole.ForegroundRole and column == 4:
            colour = status_colour(row.get("status"))  # light or dark, as the palette is
            return QtGui.QBrush(QtGui.QColor(colour)) if colour else None
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == ID_ROLE:
            return int(row["id"])
        if role == RECORD_ROLE:
            return row
        if role == SORT_ROLE:
            if column == 0:
                return int(row["id"])
            if column == 5:
                return str(row.get("recorded_at") or "")
            return self._display(row, column).casefold()
        return None

    def _display(self, row: dict[str, Any], column: int) -> str:
        if column == 0:
            return str(row["id"])
        if column == 1:
            return str(row.get("kind", ""))
        if column == 2:
            summary = str(row.get("summary", ""))
            if row.get("status") == "purged" and not summary:
                return "(text erased)"
            topic = str(row.get("topic") or "")
            return f"{topic}: {summary}" if topic else summary
        if column == 3:
            return ", ".join(row.get("scopes") or [])
        if column == 4:
            return record_status_word(row)
        return local_time(row.get("recorded_at"))


def tombstone_note(entry: TombstoneEntry) -> str:
    """One tombstone for a tooltip: its id, state, who made it, when and why."""
    from mama_core.memory.tombstones import describe_actor

    state = "lifted" if entry.lifted else "refuses saving this text again"
    who = describe_actor(entry.created_by.model_dump())
    return (
        f"Tombstone {entry.id} ({state}), made by {who} "
        f"{local_time(entry.created_at)}: {entry.reason}"
    )


class RetiredTableModel(JudgmentTableModel):
    """Retired judgments, with a column saying which ones a tombstone keeps from
    coming back (and which tombstones were lifted)."""

    COLUMNS: ClassVar[tuple[str, ...]] = (*JudgmentTableModel.COLUMNS, "Tombstone")
    TOMBSTONE_COLUMN = len(JudgmentTableModel.COLUMNS)

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._tombstones: dict[int, list[TombstoneEntry]] = {}

    def set_tombstones(self, by_judgment: dict[int, list[TombstoneEntry]]) -> None:
        """The tombstones of each judgment (``tombstone.list`` entries, newest first)."""
        if by_judgment == self._tombstones:
            return
        self._tombstones = dict(by_judgment)
        if self.rowCount():
            column = self.TOMBSTONE_COLUMN
            self.dataChanged.emit(self.index(0, column), self.index(self.rowCount() - 1, column))

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if index.isValid() and index.column() == self.TOMBSTONE_COLUMN:
            row = self.record(index.row())
            entries = [] if row is None else self._tombstones.get(int(row["id"]), [])
            if role == Qt.ItemDataRole.DisplayRole:
                return self._mark(entries)
            if role == Qt.ItemDataRole.ToolTipRole:
                return "\n".join(tombstone_note(e) for e in entries) or None
            if role == SORT_ROLE:
                return self._mark(entries).casefold()
            if role not in (ID_ROLE, RECORD_ROLE):
                return None
        return super().data(index, role)

    @staticmethod
    def _mark(entries: list[TombstoneEntry]) -> str:
        active = [e for e in entries if not e.lifted]
        if active:
            return f"blocks resaving (#{active[0].id})"
        if entries:
            return f"lifted (#{entries[0].id})"
        return ""


def origin_of(row: dict[str, Any]) -> str:
    """Where a record came from, without its status (``from #ops (work-slack) via
    source delta``): the review list groups a source's claims by it."""
    origin = str(row.get("origin") or "")
    return origin.rsplit(", ", 1)[0] if ", " in origin else origin


class ProposedTableModel(JudgmentTableModel):
    """Proposals, with a column saying where each came from: sorting by it puts what
    one source said together, to review in one pass."""

    COLUMNS: ClassVar[tuple[str, ...]] = (*JudgmentTableModel.COLUMNS, "From")
    FROM_COLUMN = len(JudgmentTableModel.COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if index.isValid() and index.column() == self.FROM_COLUMN:
            row = self.record(index.row())
            origin = "" if row is None else origin_of(row)
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                return origin
            if role == SORT_ROLE:
                return origin.casefold()
            if role not in (ID_ROLE, RECORD_ROLE):
                return None
        return super().data(index, role)


class AuditLogModel(_ColumnsModel):
    """The event log, newest first; older pages load when the view scrolls down."""

    COLUMNS: ClassVar[tuple[str, ...]] = ("Event", "When", "Action", "Actor", "Memory", "Change")

    more_wanted = Signal(int)
    """The view reached the end: load events older than this id."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._entries: list[AuditEntry] = []
        self._has_more = False
        self._loading = False

    def set_entries(self, entries: Sequence[AuditEntry], has_more: bool) -> None:
        self.beginResetModel()
        self._entries = list(entries)
        self._has_more = has_more
        self._loading = False
        self.endResetModel()

    def prepend(self, entries: Sequence[AuditEntry]) -> None:
        """Newer events (newest first) go on top."""
        known = {e.id for e in self._entries}
        fresh = [e for e in entries if e.id not in known]
        if not fresh:
            return
        self.beginInsertRows(_ROOT, 0, len(fresh) - 1)
        self._entries[0:0] = fresh
        self.endInsertRows()

    def append_page(self, entries: Sequence[AuditEntry], has_more: bool) -> None:
        """An older page (newest first) goes at the bottom."""
        self._loading = False
        self._has_more = has_more
        if not entries:
            return
        start = len(self._entries)
        self.beginInsertRows(_ROOT, start, start + len(entries) - 1)
        self._entries.extend(entries)
        self.endInsertRows()

    @property
    def newest_id(self) -> int:
        return self._entries[0].id if self._entries else 0

    def entry(self, at: int) -> AuditEntry | None:
        return self._entries[at] if 0 <= at < len(self._entries) else None

    def canFetchMore(self, parent: Index = _ROOT) -> bool:
        return not parent.isValid() and self._has_more and not self._loading

    def fetchMore(self, parent: Index = _ROOT) -> None:
        if self.canFetchMore(parent) and self._entries:
            self._loading = True
            self.more_wanted.emit(self._entries[-1].id)

    def rowCount(self, parent: Index = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._entries)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            values = (
                str(entry.id),
                local_time(entry.at),
                action_word(entry.action),
                entry.actor,
                "" if entry.judgment_id is None else f"#{entry.judgment_id}",
                entry.summary,
            )
            return values[index.column()]
        if role == SORT_ROLE:
            column = index.column()
            if column == 0:
                return entry.id
            if column == 1:
                return entry.at
            if column == 4:
                return -1 if entry.judgment_id is None else entry.judgment_id
            return str(self.data(index)).casefold()
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 5:
            return entry.summary
        if role == ID_ROLE:
            return entry.judgment_id
        if role == RECORD_ROLE:
            return entry
        return None
