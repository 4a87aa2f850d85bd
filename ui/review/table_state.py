"""The review window's size, place, splitters and column widths, remembered across
restarts in ``window-state.ini`` beside ``settings.json`` in the data folder (never in
the encrypted store: they are the desktop's, not the memory's).

A window is sized to fit the screen it opens on (at any scale factor): a remembered
geometry from a larger screen, or the default size, is capped to the available area.
"""

from __future__ import annotations

from pathlib import Path

from ui.qt import QtCore, QtWidgets

STATE_FILE = "window-state.ini"
DEFAULT_SIZE = (1100, 680)
SCREEN_SHARE = 0.9
"""The most of the screen's available area a window takes when it first opens."""


def fit_to_screen(window: QtWidgets.QWidget, width: int, height: int) -> None:
    """Resize ``window`` to ``width`` x ``height``, capped to its screen's available
    area, and move it back onto that area if it lies outside."""
    screen = window.screen() or QtWidgets.QApplication.primaryScreen()
    if screen is None:
        window.resize(width, height)
        return
    area = screen.availableGeometry()
    width = min(width, int(area.width() * SCREEN_SHARE))
    height = min(height, int(area.height() * SCREEN_SHARE))
    window.resize(max(width, 1), max(height, 1))
    frame = window.frameGeometry()
    if not area.contains(frame.topLeft()) or not area.contains(frame.bottomRight()):
        x = min(max(frame.x(), area.x()), area.right() - frame.width())
        y = min(max(frame.y(), area.y()), area.bottom() - frame.height())
        window.move(max(x, area.x()), max(y, area.y()))


class WindowState(QtCore.QObject):
    """Restores a window's layout from ``path`` and saves it whenever it hides."""

    def __init__(
        self,
        path: Path,
        window: QtWidgets.QWidget,
        splitters: dict[str, QtWidgets.QSplitter],
        views: dict[str, QtWidgets.QTableView],
    ) -> None:
        super().__init__(window)
        self.path = path
        self._window = window
        self._splitters = splitters
        self._views = views
        window.installEventFilter(self)

    def _settings(self) -> QtCore.QSettings:
        return QtCore.QSettings(str(self.path), QtCore.QSettings.Format.IniFormat)

    def restore(self) -> bool:
        """Apply what was saved (False: nothing was); the window still fits its screen."""
        if not self.path.exists():
            return False
        settings = self._settings()
        geometry = settings.value("window/geometry")
        if isinstance(geometry, QtCore.QByteArray):
            self._window.restoreGeometry(geometry)
        size = self._window.size()
        fit_to_screen(self._window, size.width(), size.height())
        for name, splitter in self._splitters.items():
            state = settings.value(f"splitters/{name}")
            if isinstance(state, QtCore.QByteArray):
                splitter.restoreState(state)
        for name, view in self._views.items():
            state = settings.value(f"columns/{name}")
            if isinstance(state, QtCore.QByteArray):
                view.horizontalHeader().restoreState(state)
        return True

    def save(self) -> None:
        """Write the window's geometry, splitter sizes and column widths now."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        settings = self._settings()
        settings.setValue("window/geometry", self._window.saveGeometry())
        for name, splitter in self._splitters.items():
            settings.setValue(f"splitters/{name}", splitter.saveState())
        for name, view in self._views.items():
            settings.setValue(f"columns/{name}", view.horizontalHeader().saveState())
        settings.sync()

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if watched is self._window and event.type() in (
            QtCore.QEvent.Type.Close,
            QtCore.QEvent.Type.Hide,
        ):
            self.save()
        return False
