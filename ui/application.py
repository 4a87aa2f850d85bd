"""``mama`` with no arguments: the Qt application, the qasync loop and one ``Desktop``.

``run()`` makes the QApplication (named ``mama``; windows titled MAMA), hands
over to an instance already running over the same data folder, and runs the
``Desktop`` on a qasync event loop, so the windows and every asyncio task share
one thread while SQLite and the model work on others. Without a display (SSH,
a server) it says so in one line instead of letting Qt abort.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys

from app.local.paths import resolve_paths
from ui.desktop import Desktop
from ui.icons import app_icon
from ui.main_thread_gc import MainThreadCollector
from ui.qt import QEventLoop, QtCore, QtWidgets
from ui.quit_signals import QuitOnSignals
from ui.single_instance import CHAT, SHOW, SingleInstance, server_name
from ui.startup_probe import StartupProbe
from ui.tray import APP_TITLE

APP_NAME = "mama"
NO_DISPLAY_EXIT = 2


def make_application(argv: list[str] | None = None) -> QtWidgets.QApplication:
    """The QApplication, named ``mama``; the tray app keeps running with no window open."""
    existing = QtWidgets.QApplication.instance()
    app = (
        existing
        if isinstance(existing, QtWidgets.QApplication)
        else QtWidgets.QApplication(argv or [sys.argv[0]])
    )
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_TITLE)
    app.setOrganizationName(APP_NAME)
    app.setDesktopFileName(APP_NAME)
    app.setQuitOnLastWindowClosed(False)
    app.setWindowIcon(app_icon())
    return app


def display_missing() -> bool:
    """On Linux with no X11 or Wayland display (e.g. over SSH) Qt would abort; say so."""
    if not sys.platform.startswith("linux"):
        return False
    return not any(os.environ.get(n) for n in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def run(argv: list[str] | None = None, show: str | None = None) -> int:
    """``mama`` with no arguments: the desktop app. Returns the process exit code.

    ``show="chat"`` (``mama open chat``) shows the chat window: the running app's,
    or this one's once the memory is open."""
    probe = StartupProbe.from_env()
    probe.mark("main")
    if display_missing():
        print(
            "mama: no_display: there is no graphical display here for the tray app; "
            "run a command instead (mama --help) or set DISPLAY.",
            file=sys.stderr,
        )
        return NO_DISPLAY_EXIT
    app = make_application(argv)
    paths = resolve_paths()
    instance = SingleInstance(server_name(paths.home))
    if instance.ask_running_instance(request=CHAT if show == "chat" else SHOW):
        return 0
    instance.listen()
    loop = QEventLoop(app)
    asyncio.set_event_loop(loop)
    collector = MainThreadCollector.install()
    desktop = Desktop(paths, instance=instance, probe=probe)
    if show == "chat":
        desktop.show_chat()  # before the memory is open: shown once it is
    signals = QuitOnSignals(desktop.quit)
    try:
        return loop.run_until_complete(desktop.run())
    finally:
        signals.uninstall()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        asyncio.set_event_loop(None)
        collector.uninstall()
        _release_qt(app, [desktop, signals, instance, collector])


def _release_qt(app: QtWidgets.QApplication, owned: list[QtCore.QObject]) -> None:
    """Delete the app's Qt objects now, on this thread and in order, and then the
    QApplication itself: left to the interpreter's exit, wrappers are torn down in
    no particular order, some after QApplication or on another thread."""
    for obj in owned:
        obj.deleteLater()
    owned.clear()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    gc.collect()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    app.shutdown()
