"""How the desktop app shows errors: a dialog for a fatal start, a tray notification
for anything later, and the traceback in the rotating log, never on screen.

A start failure (wrong key, store held by another process, newer schema,
unreadable data folder…) is a ``MamaError``: its one-line message goes in a
dialog and the app exits with the same code the CLI would.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from mama_core.errors import MamaError
from ui.qt import QtWidgets

log = logging.getLogger(__name__)

INTERNAL_ERROR_EXIT = 70
"""Exit code for a failure that is not a ``MamaError`` (as the CLI uses)."""


def exit_code_of(exc: BaseException) -> int:
    return exc.exit_code if isinstance(exc, MamaError) else INTERNAL_ERROR_EXIT


def one_line(exc: BaseException, log_path: Path | None = None) -> str:
    """What a person reads: a ``MamaError``'s message, else where the details are."""
    if isinstance(exc, MamaError):
        return exc.message
    where = f" The details are in {log_path}." if log_path else ""
    return f"Something went wrong inside MAMA ({type(exc).__name__}).{where}"


def fatal_dialog(message: str) -> QtWidgets.QMessageBox:
    box = QtWidgets.QMessageBox(
        QtWidgets.QMessageBox.Icon.Critical,
        "Cannot start",  # the window manager adds " — MAMA"
        message,
        QtWidgets.QMessageBox.StandardButton.Close,
    )
    box.setObjectName("fatal_dialog")
    return box


Notify = Callable[[str, str], None]


class RuntimeErrors:
    """Routes errors after start-up to the log and a tray notification."""

    def __init__(self, notify: Notify, log_path: Path | None) -> None:
        self._notify = notify
        self._log_path = log_path
        self._previous_hook = sys.excepthook

    def report(self, exc: BaseException, what: str = "") -> None:
        """Log ``exc`` with its traceback and tell the owner in one line."""
        if isinstance(exc, MamaError):
            log.warning("%s: %s: %s", what or "error", exc.code, exc.message)
        else:
            log.error("%s", what or "unexpected error", exc_info=exc)
        self._notify("MAMA ran into a problem", one_line(exc, self._log_path))

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Catch what escapes tasks and Qt slots."""
        loop.set_exception_handler(self._loop_exception)
        sys.excepthook = self._excepthook

    def uninstall(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.set_exception_handler(None)
        sys.excepthook = self._previous_hook

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, BaseException):
            self.report(exc, str(context.get("message") or ""))
        else:
            log.error("event loop: %s", context.get("message"))

    def _excepthook(
        self,
        kind: type[BaseException],
        exc: BaseException,
        tb: TracebackType | None,
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            self._previous_hook(kind, exc, tb)
            return
        self.report(exc.with_traceback(tb), "uncaught exception")
