"""SIGTERM, SIGINT and SIGHUP quit the desktop app as its menu's Quit does.

A logout, ``systemctl --user stop`` or a package upgrade sends SIGTERM; a
terminal sends SIGINT or SIGHUP. Python runs a signal handler only between
bytecodes, and Qt's loop sleeps in C++, so the signal would wait for the next
mouse move. ``signal.set_wakeup_fd`` writes the signal's number to a socket
that a ``QSocketNotifier`` watches: Qt wakes at once and the quit runs on the
UI thread, where every other owner action runs (qasync's loop has no
``add_signal_handler``).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
from collections.abc import Callable

from ui.qt import QtCore

log = logging.getLogger(__name__)

QUIT_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)
)


class QuitOnSignals(QtCore.QObject):
    """While installed, each of ``QUIT_SIGNALS`` calls ``quit`` on the Qt thread."""

    def __init__(self, quit: Callable[[], None], parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._quit = quit
        self._reader, self._writer = socket.socketpair()
        for end in (self._reader, self._writer):
            end.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._previous = {sig: signal.signal(sig, _note) for sig in QUIT_SIGNALS}
        self._notifier = QtCore.QSocketNotifier(
            self._reader.fileno(), QtCore.QSocketNotifier.Type.Read, self
        )
        self._notifier.activated.connect(self._woken)

    def _woken(self) -> None:
        try:
            data = self._reader.recv(64)
        except (BlockingIOError, InterruptedError):
            return
        names = [signal.Signals(number).name for number in data if number in set(QUIT_SIGNALS)]
        if names:
            log.info("%s received: quitting", names[0])
            self._quit()

    def uninstall(self) -> None:
        """Give the signals back their previous handlers and close the socket pair."""
        self._notifier.setEnabled(False)
        for sig, handler in self._previous.items():
            with contextlib.suppress(TypeError, ValueError):
                signal.signal(sig, handler)
        signal.set_wakeup_fd(self._previous_fd)
        self._reader.close()
        self._writer.close()


def _note(_signum: int, _frame: object) -> None:
    """The C-level handler has already written the number to the wakeup socket."""
