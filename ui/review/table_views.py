"""Table views as the review window uses them: whole rows, sortable by any column,
read-only, with columns as wide as what they show."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ui.qt import Qt, QtCore, QtGui, QtWidgets
from ui.review.models import SORT_ROLE
from ui.words import local_time

SAMPLE_TIME = "2026-12-31T23:59:00+00:00"
"""A stored time whose local rendering is as wide as any the lists show."""


def time_sample() -> str:
    """The widest local time a list shows (the zone's name included)."""
    return local_time(SAMPLE_TIME) + "  "


def judgment_samples() -> tuple[str, ...]:
    """What the judgment columns hold at their widest; "" stretches (the summary)."""
    return ("00000", "preference", "", "project:name", "contradicted", time_sample())


COLUMN_PADDING = 24
"""Pixels beside a column's text (margins, the sort arrow)."""


def make_table_view(
    model: QtCore.QAbstractItemModel,
    name: str,
    samples: Sequence[str] | None = None,
) -> QtWidgets.QTableView:
    """A read-only, row-selecting view over ``model`` behind a sorting proxy.

    ``samples`` are the widest texts of each column ("" stretches that column);
    a header click sorts by the column's ``SORT_ROLE`` (stably, keeping the
    selection), a third click returns to the list's own order."""
    view = QtWidgets.QTableView()
    view.setObjectName(name)
    proxy = QtCore.QSortFilterProxyModel(view)
    proxy.setObjectName(f"{name}_sort")
    proxy.setSortRole(SORT_ROLE)
    proxy.setSourceModel(model)
    view.setModel(proxy)
    view.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
    # Tab leaves the list for the next control (arrows move between rows): no focus trap.
    view.setTabKeyNavigation(False)
    view.setAlternatingRowColors(True)
    # Keep the selected row visible while the focus is in the detail pane.
    palette = view.palette()
    for role in (QtGui.QPalette.ColorRole.Highlight, QtGui.QPalette.ColorRole.HighlightedText):
        palette.setColor(
            QtGui.QPalette.ColorGroup.Inactive,
            role,
            palette.color(QtGui.QPalette.ColorGroup.Active, role),
        )
    view.setPalette(palette)
    view.setWordWrap(False)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setStretchLastSection(False)
    header.setSortIndicatorClearable(True)
    header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    view.setSortingEnabled(True)
    size_columns(view, judgment_samples() if samples is None else samples)
    return view


def size_columns(view: QtWidgets.QTableView, samples: Sequence[str]) -> None:
    """Each column as wide as its widest sample or its title, at the view's font (so at
    any scale); the column with an empty sample takes the rest."""
    metrics = view.fontMetrics()
    header = view.horizontalHeader()
    model = view.model()
    floors: dict[int, int] = {}
    stretches = False
    for column, sample in enumerate(samples):
        if column >= model.columnCount():
            break
        if not sample:
            header.setSectionResizeMode(column, QtWidgets.QHeaderView.ResizeMode.Stretch)
            stretches = True
            continue
        title = str(model.headerData(column, Qt.Orientation.Horizontal) or "")
        width = max(metrics.horizontalAdvance(sample), metrics.horizontalAdvance(title))
        view.setColumnWidth(column, width + COLUMN_PADDING)
        # A time stays whole (a cut one reads as another time); a word may be elided.
        whole = sample == time_sample()
        floor = max(metrics.horizontalAdvance(title), metrics.height() * 2)
        floors[column] = (width if whole else min(width, floor)) + COLUMN_PADDING
    if stretches:
        ColumnFitter(view, floors)


STRETCH_SHARE = 0.4
"""The share of a list's width the stretching column (the summary, what is owed) keeps
when the window is narrow or the scale large: the other columns give way first."""


class ColumnFitter(QtCore.QObject):
    """Keeps the stretching column readable: at 200 % the fixed columns kept their
    widths and left the summary some 90 pixels ("custo…"). When they take more than
    their share, the widest give way first, each down to its floor (its title, or two
    lines' height), and get their widths back when there is room again. A width set by
    anyone else (the owner's drag, the restored window state) is the new one to keep."""

    def __init__(self, view: QtWidgets.QTableView, floors: dict[int, int]) -> None:
        super().__init__(view)
        self._view = view
        self._floors = floors
        self._natural = {c: view.columnWidth(c) for c in floors}
        self._set: dict[int, int] = dict(self._natural)
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.Resize:
            self.fit()
        return False

    def fit(self) -> None:
        view = self._view
        for column in self._floors:
            if view.columnWidth(column) != self._set.get(column):
                self._natural[column] = view.columnWidth(column)  # chosen elsewhere
        room = int(view.viewport().width() * (1 - STRETCH_SHARE))
        if room <= 0:
            return
        floors = {c: min(self._floors[c], w) for c, w in self._natural.items()}
        level = _level(self._natural, floors, room)
        for column, width in self._natural.items():
            target = min(width, max(floors[column], level))
            self._set[column] = target
            view.setColumnWidth(column, target)


def _level(natural: dict[int, int], floors: dict[int, int], room: int) -> int:
    """The width no column need exceed for all to fit in ``room`` (widest cut first):
    the largest level L with sum(min(natural, max(floor, L))) <= room."""
    if sum(natural.values()) <= room:
        return max(natural.values(), default=0)
    low, high = 0, max(natural.values(), default=0)
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(w, max(floors[c], mid)) for c, w in natural.items()) <= room:
            low = mid
        else:
            high = mid - 1
    return low


def select_row(view: QtWidgets.QTableView, row: int) -> None:
    """Make ``row`` current *and* selected (focus alone only makes it current)."""
    index = view.model().index(row, 0)
    flags = (
        QtCore.QItemSelectionModel.SelectionFlag.ClearAndSelect
        | QtCore.QItemSelectionModel.SelectionFlag.Rows
    )
    view.selectionModel().setCurrentIndex(index, flags)
    view.scrollTo(index)


def source_row(view: QtWidgets.QTableView, index: QtCore.QModelIndex) -> int:
    """The row of the view's ``index`` in the model under the sorting proxy."""
    model = view.model()
    if isinstance(model, QtCore.QSortFilterProxyModel):
        return model.mapToSource(index).row()
    return index.row()


def current_record(
    view: QtWidgets.QTableView, rows: Sequence[dict[str, Any]]
) -> dict[str, Any] | None:
    """The record of the view's current row (``rows`` in the model's order), or None."""
    index = view.currentIndex()
    row = source_row(view, index) if index.isValid() else -1
    return rows[row] if 0 <= row < len(rows) else None


def select_record(
    view: QtWidgets.QTableView,
    source: QtCore.QAbstractItemModel,
    ids: Sequence[int],
    record_id: int,
) -> bool:
    """Make the row of ``record_id`` (``ids`` in the model's order) current; False if
    it is not listed."""
    if record_id not in ids:
        return False
    select_row(view, view_row(view, list(ids).index(record_id), source))
    return True


def view_row(view: QtWidgets.QTableView, row: int, source: QtCore.QAbstractItemModel) -> int:
    """Where the model's ``row`` is shown in the (possibly sorted) view."""
    model = view.model()
    if isinstance(model, QtCore.QSortFilterProxyModel):
        return model.mapFromSource(source.index(row, 0)).row()
    return row
