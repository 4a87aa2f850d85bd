"""The changes to the owner's settings an agent proposed, above the Proposed list.

In a turn that read words the owner did not write, the agent's timezone or daily
brief change waits for the owner (``mama_core.memory.proposed_changes``). Such a
change has no record, so it cannot be a row of the judgment table: it is a line of
its own here, with Approve (applied as the owner's own change) and Reject (the
settings stay as they are), through the catalog like every review action. The panel
reads the waiting changes again after every commit, and hides when none waits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from mama_core.errors import MamaError
from mama_core.json_types import JsonObject
from ui.qt import QtWidgets, Signal
from ui.review.dialogs import ReasonDialog
from ui.tasks import TaskGroup, await_dialog

if TYPE_CHECKING:
    from mama_core.memory.proposed_changes import ChangeProposal
    from mama_core.memory.results import PendingChange
    from mama_core.store.connection import Connection
    from ui.bridge import EngineBridge

log = logging.getLogger(__name__)


def waiting_setting_changes(conn: Connection) -> list[ChangeProposal]:
    """The changes to the owner's settings that wait for a decision, oldest first."""
    from mama_core.memory.proposed_changes import pending_after

    return [change for change in pending_after(conn) if change.setting_key is not None]


def change_line(change: PendingChange) -> str:
    """``claude-code proposes to set your timezone to Asia/Tokyo: Bob moved``."""
    by = change.proposed_by or {}
    who = by.get("name") or "the agent"
    return f"{who} proposes to {change.description or ''}"


class SettingsChangesPanel(QtWidgets.QFrame):
    """One line per waiting settings change, each with Approve and Reject."""

    updated = Signal()
    """The lines were drawn again from the store."""
    acted = Signal(str, object)
    """(action, receipt) after the owner decided a change."""
    failed = Signal(str, str)
    """(action, message) when a decision was refused."""
    dialog_opened = Signal(object)
    """Reject's reason dialog is open (tests and automation fill it in)."""

    def __init__(
        self,
        bridge: EngineBridge,
        tasks: TaskGroup,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settings_changes")
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self._bridge = bridge
        self._tasks = tasks
        self._generation = 0
        self.changes: list[PendingChange] = []
        self.rows: dict[int, dict[str, QtWidgets.QPushButton]] = {}
        """Each shown change's buttons by change id (``approve``, ``reject``)."""
        self._layout = QtWidgets.QVBoxLayout(self)
        title = QtWidgets.QLabel("<b>Changes to your settings, waiting for you</b>")
        self._layout.addWidget(title)
        self.setVisible(False)
        bridge.changed.connect(lambda _changes: self.refresh())

    def refresh(self) -> None:
        self._tasks.spawn(self.load())

    async def load(self) -> None:
        """Read the waiting changes and draw a line for each (a newer read wins)."""
        self._generation += 1
        generation = self._generation
        found = await self._bridge.read(waiting_setting_changes)
        if generation != self._generation:
            return
        self.changes = [change.shown(for_owner=True) for change in found]
        self._draw()
        self.updated.emit()

    def _draw(self) -> None:
        while self._layout.count() > 1:  # keep the title
            item = self._layout.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.rows = {}
        for change in self.changes:
            self._layout.addWidget(self._row(change))
        self.setVisible(bool(self.changes))

    def _row(self, change: PendingChange) -> QtWidgets.QWidget:
        row = QtWidgets.QWidget()
        layout = QtWidgets.QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        label = QtWidgets.QLabel(change_line(change))
        label.setWordWrap(True)
        label.setToolTip(
            "Proposed in a turn that read words you did not write. Approve applies it as "
            "your own change; Reject leaves your settings as they are."
        )
        layout.addWidget(label, 1)
        buttons: dict[str, QtWidgets.QPushButton] = {}
        for name, text, slot in (
            ("approve", "Approve", self._approve),
            ("reject", "Reject…", self._reject),
        ):
            button = QtWidgets.QPushButton(text)
            button.setObjectName(f"settings_{name}_{change.id}")
            button.clicked.connect(_bound(slot, change))
            layout.addWidget(button)
            buttons[name] = button
        self.rows[change.id] = buttons
        return row

    def _approve(self, change: PendingChange) -> None:
        self._tasks.spawn(self._decide("review.approve", {"change_id": change.id}))

    def _reject(self, change: PendingChange) -> None:
        self._tasks.spawn(self._ask_and_reject(change))

    async def _ask_and_reject(self, change: PendingChange) -> None:
        dialog = ReasonDialog(
            self,
            title="Reject a proposed change",
            prompt=f"Reject the proposal to {change.description or ''}",
            ok_text="Reject",
        )
        self.dialog_opened.emit(dialog)
        accepted = await await_dialog(dialog) == QtWidgets.QDialog.DialogCode.Accepted
        reason, _ = dialog.values()
        dialog.deleteLater()
        if accepted:
            payload: JsonObject = {"change_id": change.id, "reason": reason}
            await self._decide("review.reject", payload)

    async def _decide(self, action: str, payload: JsonObject) -> None:
        for buttons in self.rows.values():
            for button in buttons.values():
                button.setEnabled(False)
        try:
            receipt = await self._bridge.mutate(action, payload)
        except MamaError as exc:
            log.info("%s of settings change refused: %s", action, exc.code)
            self.failed.emit(action, exc.message)
            await self.load()
            return
        self.acted.emit(action, receipt)
        await self.load()


def _bound(slot: Callable[[PendingChange], None], change: PendingChange) -> Callable[[], None]:
    return lambda: slot(change)


__all__ = ["SettingsChangesPanel", "change_line", "waiting_setting_changes"]
