"""Table views as the review window uses them: whole rows, one at a time, read-only."""

from __future__ import annotations

from ui.qt import QtCore, QtGui, QtWidgets

COLUMN_WIDTHS = (44, 84, 0, 110, 80, 120)
"""Pixels per column; 0 stretches (the summary)."""


def make_table_view(model: QtCore.QAbstractItemModel, name: str) -> QtWidgets.QTableView:
    """A read-only, row-selecting view over ``model``."""
    view = QtWidgets.QTableView()
    view.setObjectName(name)
    view.setModel(model)
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
    view.verticalHeader().setDefaultSectionSize(24)
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setStretchLastSection(False)
    for column, width in enumerate(COLUMN_WIDTHS):
        if width:
            view.setColumnWidth(column, width)
    header.setSectionResizeMode(2, QtWidgets.QHeaderView.ResizeMode.Stretch)
    return view


def select_row(view: QtWidgets.QTableView, row: int) -> None:
    """Make ``row`` current *and* selected (focus alone only makes it current)."""
    index = view.model().index(row, 0)
    flags = (
        QtCore.QItemSelectionModel.SelectionFlag.ClearAndSelect
        | QtCore.QItemSelectionModel.SelectionFlag.Rows
    )
    view.selectionModel().setCurrentIndex(index, flags)
    view.scrollTo(index)
