"""The tray's line while memories catch up on a new embedding model's vectors.

After an update changes the default model, the engine embeds the old memories
in the background (``Engine.catch_up_vectors``); search keeps working by words
meanwhile. This relays its progress from the catch-up thread to the tray's menu
and tooltip ("Updating memory search for the new model: 120 of 900") and hides
the line when it is done, so the owner sees it and keeps working.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ui.qt import Qt, QtCore, Signal

if TYPE_CHECKING:
    from mama_core.memory.catch_up import CatchUpProgress, VectorCatchUp
    from ui.tray import Tray

log = logging.getLogger(__name__)


class CatchUpStatus(QtCore.QObject):
    """Follows one engine's catch-up and shows it in the tray (queued to the UI thread)."""

    progressed = Signal(str)
    """The line to show, or "" when nothing is left to embed."""

    def __init__(self, tray: Tray, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._tray = tray
        self._unsubscribe: Callable[[], None] | None = None
        self.progressed.connect(self._show, Qt.ConnectionType.QueuedConnection)

    def follow(self, catch_up: VectorCatchUp) -> None:
        """Show ``catch_up``'s progress from now on (instead of an earlier one's)."""
        self.stop()
        self._unsubscribe = catch_up.subscribe(self._relay)

    def stop(self) -> None:
        """Stop following (the line stays as it is until the next ``follow``)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _relay(self, progress: CatchUpProgress) -> None:  # on the catch-up thread
        self.progressed.emit("" if progress.finished else progress.describe())

    def _show(self, text: str) -> None:
        self._tray.set_catch_up(text or None)
