"""Undo, as mail clients offer it: after Approve, Reject or Retire a bar says what was
done and offers "Undo" for a few seconds (Ctrl+Z does the same while it shows).

The memory is append-only, so an undo never edits or deletes what was written: it is
one more owner action, ``memory.restore``, with its own event and receipt. It appends
a copy of the record (a new number) that keeps its words, scopes and provenance, so
an agent's proposal stays the agent's:

- undoing an **approve** or a **reject** puts the proposal back in Proposed, waiting
  for review (an approved one is taken out of belief in the same action, and a record
  its approval replaced is believed again);
- undoing a **retire** makes the record active again, as it was, and lifts the
  tombstone the retire (or reject) made, in the same action.

Not offered for a decision on a change an agent proposed to a record (a ``change_id``):
no verb reverses an applied retire, outcome or link of the owner's record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mama_core.receipt import Receipt
from ui.qt import QtCore, QtGui, QtWidgets, Signal

if TYPE_CHECKING:
    from ui.bridge import EngineBridge

UNDO_MS = 8000
"""How long the bar offers an undo (Gmail offers 5 to 30 s)."""
UNDO_REASON = "taken back with Undo"
"""The reason an undo records: the event reads "restored by you: taken back with Undo"."""
UNDO_ACTION = "memory.restore"
UNDOABLE: dict[str, str] = {
    "review.approve": "puts it back in Proposed",
    "review.reject": "puts it back in Proposed",
    "memory.retire": "makes it active again",
}
"""What Undo does after each action, as the bar says it."""

Done = list[tuple[dict[str, Any], Receipt]]
"""The (record, receipt) pairs an action wrote."""


def undoable(action: str, done: Done) -> bool:
    """Whether an undo is offered for ``done``: a plain approve, reject or retire."""
    return (
        action in UNDOABLE
        and bool(done)
        and not any(record.get("status") not in ("proposed", "active") for record, _ in done)
        and not any(record.get("pending_change") for record, _ in done)
    )


async def undo(bridge: EngineBridge, action: str, done: Done) -> list[Receipt]:
    """Append the owner actions (one ``memory.restore`` each) that undo ``done``; their
    receipts, in order."""
    receipts: list[Receipt] = []
    for record, receipt in done:
        judgment_id = int(receipt.judgment_id or record["id"])
        payload = {"id": judgment_id, "reason": UNDO_REASON}
        receipts.append(await bridge.mutate(UNDO_ACTION, payload))
    return receipts


def undone_line(receipts: list[Receipt]) -> str:
    """What the message line says after an undo, naming the records as they are now:
    ``Undone: #8 is back in Proposed as #11`` (the undo appends a copy, a new number)."""
    where = {"proposed": "back in Proposed", "active": "active again"}
    if len(receipts) == 1:
        (receipt,) = receipts
        state = where.get(str(receipt.status), "restored")
        return f"Undone: #{receipt.get('restored_from')} is {state} as #{receipt.judgment_id}"
    copies = ", ".join(f"#{r.judgment_id}" for r in receipts)
    return f"Undone: {len(receipts)} records restored, as {copies}"


class UndoBar(QtWidgets.QFrame):
    """A one-line, non-modal bar: what was done, Undo, and a close button."""

    offered = Signal(str)
    """The bar shows this text with an Undo."""
    expired = Signal()
    """The time ran out (or the bar was closed) without an undo."""

    def __init__(self, parent: QtWidgets.QWidget, timeout_ms: int = UNDO_MS) -> None:
        super().__init__(parent)
        self.setObjectName("undo_bar")
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.timeout_ms = timeout_ms
        self._undo: Callable[[], None] | None = None
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(8, 2, 2, 2)
        self.label = QtWidgets.QLabel()
        self.label.setObjectName("undo_text")
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.undo_button = QtWidgets.QPushButton("&Undo")
        self.undo_button.setObjectName("undo_button")
        self.undo_button.setToolTip("Undo it (Ctrl+Z); the undo is written as its own action")
        self.undo_button.clicked.connect(self.trigger)
        layout.addWidget(self.undo_button)
        self.close_button = QtWidgets.QToolButton()
        self.close_button.setObjectName("undo_close")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Keep it and close this bar")
        self.close_button.setAccessibleName("Close")
        self.close_button.clicked.connect(self.dismiss)
        layout.addWidget(self.close_button)
        self._timer = QtCore.QTimer(self, singleShot=True)
        self._timer.timeout.connect(self.dismiss)
        self.shortcut = QtGui.QShortcut(QtGui.QKeySequence.StandardKey.Undo, parent)
        self.shortcut.activated.connect(self.trigger)
        self.hide()

    @property
    def offering(self) -> bool:
        return self._undo is not None

    def offer(self, text: str, undo: Callable[[], None]) -> None:
        """Show ``text`` with an Undo that calls ``undo`` (once) until the time runs out."""
        self._undo = undo
        self.label.setText(text)
        self.show()
        self._timer.start(self.timeout_ms)
        self.offered.emit(text)

    def trigger(self) -> None:
        """Undo now, if the bar still offers it."""
        undo, self._undo = self._undo, None
        self._timer.stop()
        self.hide()
        if undo is not None:
            undo()

    def dismiss(self) -> None:
        """Keep what was done: the bar goes, Undo is no longer offered."""
        offering = self._undo is not None
        self._undo = None
        self._timer.stop()
        self.hide()
        if offering:
            self.expired.emit()
