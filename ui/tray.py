"""The tray icon and its menu: where MAMA lives on the desktop.

The icon shows the state (starting, idle, agent working, paused, trouble)
and a badge with the number of proposals waiting; the menu starts with a line
saying what the agent and Telegram are doing, then offers Review, Search
memory…, Pause/Resume agent, Pair Telegram…, Settings…, Open data folder and
Quit.
The tray only emits what the owner asked for; the desktop controller acts.

Some desktops have no system tray (stock GNOME, some Wayland sessions), and a
tray can go away while MAMA runs (the panel restarts). Qt has no public signal
for that, so the tray asks every few seconds and says when it changes.
"""

from __future__ import annotations

from collections.abc import Callable

from ui.icons import TrayState, state_icon
from ui.qt import QtCore, QtWidgets, Signal

APP_TITLE = "MAMA"
TRAY_POLL_MS = 3000
"""How often the tray checks that the desktop still has a system tray."""


class Tray(QtCore.QObject):
    """The system tray icon, its menu and its notifications."""

    review_requested = Signal()
    search_requested = Signal()
    chat_requested = Signal()
    pause_requested = Signal(bool)
    """True: pause the agent; False: resume it."""
    pair_requested = Signal()
    settings_requested = Signal()
    open_folder_requested = Signal()
    menu_opening = Signal()
    """The owner is opening the menu (a moment to refresh what it shows)."""
    quit_requested = Signal()
    changed = Signal()
    """The icon, tooltip or menu changed (state or count)."""
    availability_changed = Signal(bool)
    """The desktop's system tray appeared (True) or went away (False)."""
    message_clicked = Signal()
    """The owner clicked the last notification."""

    system_tray_available: Callable[[], bool] = staticmethod(
        QtWidgets.QSystemTrayIcon.isSystemTrayAvailable
    )
    """Whether the desktop shows tray icons (replaceable, for tests)."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._waiting = 0
        self._working = False
        self._paused = False
        self._starting = True
        self._trouble: str | None = None
        self.available = self.system_tray_available()
        self._poll = QtCore.QTimer(self, interval=TRAY_POLL_MS)
        self._poll.timeout.connect(self.check_available)

        self.menu = QtWidgets.QMenu()
        self.menu.setObjectName("tray_menu")
        self.menu.aboutToShow.connect(self.menu_opening)
        self.agent_status_action = self.menu.addAction("Agent: starting…")
        self.agent_status_action.setEnabled(False)
        self.catch_up_action = self.menu.addAction("")
        """A second status line while memories are re-embedded for a new model."""
        self.catch_up_action.setEnabled(False)
        self.catch_up_action.setVisible(False)
        self._catch_up: str | None = None
        self.menu.addSeparator()
        self.review_action = self.menu.addAction("&Review")
        self.review_action.triggered.connect(self.review_requested)
        self.search_action = self.menu.addAction("&Search memory…")
        self.search_action.triggered.connect(self.search_requested)
        self.chat_action = self.menu.addAction("&Chat…")
        self.chat_action.triggered.connect(self.chat_requested)
        self.pause_action = self.menu.addAction("&Pause agent")
        self.pause_action.triggered.connect(lambda: self.pause_requested.emit(not self._paused))
        self.pair_action = self.menu.addAction("Pair &Telegram…")
        self.pair_action.triggered.connect(self.pair_requested)
        self.pause_action.setEnabled(False)  # until the agent runs here
        self.pair_action.setEnabled(False)
        self.menu.addSeparator()
        self.settings_action = self.menu.addAction("S&ettings…")  # T is Pair Telegram's
        self.settings_action.triggered.connect(self.settings_requested)
        self.folder_action = self.menu.addAction("Open &data folder")
        self.folder_action.triggered.connect(self.open_folder_requested)
        self.menu.addSeparator()
        self.quit_action = self.menu.addAction("&Quit")
        self.quit_action.triggered.connect(self.quit_requested)

        self.icon = QtWidgets.QSystemTrayIcon(self)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.icon.messageClicked.connect(self.message_clicked)
        self._redraw()

    # --- state ------------------------------------------------------------------

    def show(self) -> None:
        self.icon.show()
        self._poll.start()

    def hide(self) -> None:
        self._poll.stop()
        self.icon.hide()

    def check_available(self) -> None:
        """Ask whether the desktop (still) has a system tray; say so if that changed."""
        available = self.system_tray_available()
        if available != self.available:
            self.available = available
            self.availability_changed.emit(available)

    def set_ready(self) -> None:
        """The memory is open: the menu's memory entries work now."""
        self._starting = False
        self._redraw()

    def set_waiting(self, count: int) -> None:
        """How many proposals wait for review."""
        if count != self._waiting:
            self._waiting = count
            self._redraw()

    def set_working(self, working: bool) -> None:
        self._working = working
        self._redraw()

    def set_paused(self, paused: bool) -> None:
        self._paused = paused
        self._redraw()

    def set_agent_status(self, text: str, *, available: bool = True) -> None:
        """The menu's first line (e.g. "Agent: command mode · Telegram: connected as @bot");
        ``available`` False greys out what needs the agent here (pause, pairing)."""
        self.agent_status_action.setText(text)
        self.pause_action.setEnabled(available)
        self.pair_action.setEnabled(available)
        self.changed.emit()

    def set_catch_up(self, text: str | None) -> None:
        """Show (or, with None, hide) how far re-embedding for a new model has got, e.g.
        "Updating memory search for the new model: 120 of 900"; MAMA works meanwhile."""
        self._catch_up = text or None
        self.catch_up_action.setText(text or "")
        self.catch_up_action.setVisible(bool(text))
        self._redraw()

    @property
    def catch_up_text(self) -> str | None:
        return self._catch_up

    def set_trouble(self, message: str | None) -> None:
        """Show (or clear) a lasting problem, e.g. the agent backend cannot start."""
        self._trouble = message
        self._redraw()

    @property
    def state(self) -> TrayState:
        if self._trouble:
            return TrayState.TROUBLE
        if self._starting:
            return TrayState.STARTING
        if self._paused:
            return TrayState.PAUSED
        if self._working:
            return TrayState.WORKING
        if self._waiting:
            return TrayState.ATTENTION
        return TrayState.IDLE

    @property
    def waiting(self) -> int:
        return self._waiting

    def tooltip(self) -> str:
        state = self.state
        if state is TrayState.TROUBLE:
            return f"{APP_TITLE} — {self._trouble}"
        if state is TrayState.STARTING:
            return f"{APP_TITLE} — opening the memory…"
        parts = [APP_TITLE]
        if self._paused:
            parts.append("agent paused")
        elif self._working:
            parts.append("agent working")
        if self._waiting:
            noun = "proposal" if self._waiting == 1 else "proposals"
            parts.append(f"{self._waiting} {noun} waiting")
        if len(parts) == 1:
            parts.append("idle")
        text = " — ".join([parts[0], ", ".join(parts[1:])])
        return f"{text}\n{self._catch_up}" if self._catch_up else text

    def _redraw(self) -> None:
        state = self.state
        count = 0 if state is TrayState.STARTING else self._waiting
        self.icon.setIcon(state_icon(state, count))
        self.icon.setToolTip(self.tooltip())
        ready = not self._starting
        self.review_action.setText(
            f"&Review ({self._waiting} waiting)" if self._waiting else "&Review"
        )
        self.review_action.setEnabled(ready)
        self.search_action.setEnabled(ready)
        self.chat_action.setEnabled(ready)
        self.pause_action.setText("Resume &agent" if self._paused else "&Pause agent")
        self.changed.emit()

    # --- owner input and notifications ----------------------------------------------

    def _activated(self, reason: QtWidgets.QSystemTrayIcon.ActivationReason) -> None:
        if (
            reason
            in (
                QtWidgets.QSystemTrayIcon.ActivationReason.Trigger,
                QtWidgets.QSystemTrayIcon.ActivationReason.DoubleClick,
            )
            and not self._starting
        ):
            self.review_requested.emit()

    def notify(self, title: str, message: str, *, critical: bool = False) -> None:
        """A desktop notification from the tray (a balloon where there is no daemon)."""
        kind = (
            QtWidgets.QSystemTrayIcon.MessageIcon.Critical
            if critical
            else QtWidgets.QSystemTrayIcon.MessageIcon.Information
        )
        self.icon.showMessage(title, message, kind, 8000)
