"""Python's cycle collector, run on the Qt thread only.

The tray app works on other threads (SQLite, the model, the runtime's executor, the
catch-up and commit-feed threads). CPython runs its cycle collector on whichever thread
happens to cross the allocation threshold — often the one loading the model, which
allocates a great deal — and a Qt object caught in a reference cycle is then destroyed
on that thread. Qt objects must die on their own thread: the best case is a warning
("QObject::~QObject: Timers cannot be stopped from another thread"), the worst a
segfault inside the event loop, both seen in this project's tests.

So while the app runs, automatic collection is off, and a timer on the Qt thread runs
the same generational collection CPython would have run, by the same thresholds (the
design pyqtgraph ships as ``GarbageCollector`` for the same reason). Reference counting
is untouched: only objects in cycles wait, for at most one interval.
"""

from __future__ import annotations

import gc

from ui.qt import QtCore

INTERVAL_MS = 500


class MainThreadCollector(QtCore.QObject):
    """While installed, cycles are collected on this (the Qt) thread only."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QtCore.QTimer(self, interval=INTERVAL_MS)
        self._timer.timeout.connect(self.check)
        self._was_enabled = False
        self.collections = 0

    @classmethod
    def install(cls, parent: QtCore.QObject | None = None) -> MainThreadCollector:
        collector = cls(parent)
        collector._was_enabled = gc.isenabled()
        gc.disable()
        collector._timer.start()
        return collector

    def uninstall(self) -> None:
        """Collect what is left here, then give collection back to CPython."""
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()

    def check(self) -> None:
        """One generation's collection when its count passed CPython's threshold."""
        counts = gc.get_count()
        thresholds = gc.get_threshold()
        generation = -1
        for level in range(3):
            if counts[level] <= thresholds[level]:
                break
            generation = level
        if generation >= 0:
            gc.collect(generation)
            self.collections += 1
