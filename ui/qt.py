"""The one place MAMA imports Qt (and the Qt-bound asyncio loop) from.

Every other module in ``ui/`` writes ``from ui.qt import QtCore, QtWidgets``,
so the binding can be pinned, swapped or patched here alone (qutebrowser's
``qutebrowser/qt`` does the same). A test fails if any other module imports
PySide6, shiboken6 or qasync directly.
"""

from __future__ import annotations

import os

# qasync picks a binding by QT_API first; pin it so it never wanders off to
# another binding that happens to be installed.
os.environ.setdefault("QT_API", "pyside6")

import qasync
from PySide6 import QtCore, QtGui, QtNetwork, QtWidgets
from PySide6.QtCore import Qt, Signal, Slot

QEventLoop = qasync.QEventLoop
"""asyncio event loop running on the Qt event loop."""

QT_VERSION = QtCore.qVersion()

__all__ = [
    "QEventLoop",
    "QT_VERSION",
    "Qt",
    "QtCore",
    "QtGui",
    "QtNetwork",
    "QtWidgets",
    "Signal",
    "Slot",
]
