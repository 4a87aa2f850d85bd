"""A context menu on a list's rows: the same actions as the buttons beside the list,
enabled and explained by the same rules (each item mirrors its button's state and
tooltip, and follows it while the menu is open), triggering the same handler."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ui.qt import QtCore, QtGui, QtWidgets, Signal
from ui.review.table_views import select_row


class RowMenu(QtCore.QObject):
    """Right-click (or the Menu key) on a row of ``view`` opens the buttons as a menu."""

    shown = Signal(object)
    """The menu (a ``QMenu``) is open."""

    def __init__(
        self,
        view: QtWidgets.QTableView,
        buttons: Callable[[], Sequence[QtWidgets.QAbstractButton]],
        changed: QtCore.SignalInstance,
    ) -> None:
        super().__init__(view)
        self._view = view
        self._buttons = buttons
        self._changed = changed
        self._items: list[tuple[QtGui.QAction, QtWidgets.QAbstractButton]] = []
        self.menu: QtWidgets.QMenu | None = None
        self._following = False
        view.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self.open_at)

    def open_at(self, pos: QtCore.QPoint) -> QtWidgets.QMenu | None:
        """The menu for the row at ``pos`` (viewport coordinates); a row outside the
        selection becomes the selection first, as file managers do."""
        index = self._view.indexAt(pos)
        if not index.isValid():
            return None
        if not self._view.selectionModel().isRowSelected(index.row(), index.parent()):
            select_row(self._view, index.row())
        if self.menu is not None:
            self.menu.close()
        menu = QtWidgets.QMenu(self._view)
        menu.setObjectName("row_menu")
        menu.setToolTipsVisible(True)
        menu.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        self._items = []
        for button in self._buttons():
            action = menu.addAction(button.text())
            action.setObjectName(f"{button.objectName()}_item")
            action.triggered.connect(button.click)
            self._items.append((action, button))
        self._sync()
        if not self._following:
            self._changed.connect(self._sync)
            self._following = True
        menu.aboutToHide.connect(self._closed)
        self.menu = menu
        menu.popup(self._view.viewport().mapToGlobal(pos))
        self.shown.emit(menu)
        return menu

    def _sync(self) -> None:
        for action, button in self._items:
            action.setEnabled(button.isEnabled())
            action.setToolTip(button.toolTip())

    def _closed(self) -> None:
        if self._following:
            self._changed.disconnect(self._sync)
            self._following = False
        self.menu = None
