"""The review window's Messages tab: what MAMA keeps as it arrived — the owner's
messages, MAMA's replies and notices, connector items — newest first, each
readable in full and erasable for good with Purge (``memory.purge`` with
``observation_ids``, through the catalog as the owner)."""

from __future__ import annotations

import logging
from html import escape
from typing import TYPE_CHECKING, Any

from mama_core.errors import MamaError
from ui.qt import QtGui, QtWidgets, Signal
from ui.review.dialogs import add_erase_controls
from ui.review.models import SORT_ROLE
from ui.review.table_views import (
    current_record,
    make_table_view,
    select_record,
    time_sample,
)
from ui.tasks import TaskGroup, await_dialog
from ui.words import local_time

if TYPE_CHECKING:
    from ui.bridge import EngineBridge

log = logging.getLogger(__name__)

LIST_LIMIT = 500
PREVIEW = 120
HEADERS = ("#", "Received", "Text", "From")
ID_COLUMN = 0


def preview(text: str, limit: int = PREVIEW) -> str:
    """One line of ``text``, shortened."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class MessagePurgeDialog(QtWidgets.QDialog):
    """Names the message a purge erases before anything happens."""

    def __init__(self, parent: QtWidgets.QWidget | None, observation: dict[str, Any]) -> None:
        super().__init__(parent)
        self.setWindowTitle("Erase a message for good")
        self.setObjectName("message_purge_dialog")
        layout = QtWidgets.QVBoxLayout(self)
        what = QtWidgets.QLabel(
            f"<p>Erase the text of message <b>#{observation['id']}</b> "
            f"({escape(str(observation['source']))}, {escape(str(observation['author']))}):</p>"
            f"<blockquote>{escape(preview(str(observation['text']), 400))}</blockquote>"
            "<p>Its text and author are removed from the database file, its write-ahead "
            "log and the backups, and the agent's conversation that saw it is ended. This "
            "cannot be undone. The audit log keeps only that it was erased, when and why.</p>"
        )
        what.setObjectName("purge_what")
        what.setWordWrap(True)
        layout.addWidget(what)
        self.reason, self.erase_button = add_erase_controls(self, layout)


class MessagesPanel(QtWidgets.QWidget):
    """The kept messages, one in full, and Purge."""

    loaded = Signal()
    """The list was (re)filled."""
    purged = Signal(object)
    """A purge of a message succeeded (its receipt)."""
    dialog_opened = Signal(object)
    """The purge confirmation is open (tests fill it in)."""
    changed = Signal()
    """The selection changed, and with it the Purge button's state and tooltip."""

    def __init__(
        self, bridge: EngineBridge, tasks: TaskGroup, parent: QtWidgets.QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("messages_panel")
        self._bridge = bridge
        self._tasks = tasks
        self._rows: list[dict[str, Any]] = []
        self.model = QtGui.QStandardItemModel(0, len(HEADERS), self)
        self.model.setHorizontalHeaderLabels(list(HEADERS))
        self.view = make_table_view(
            self.model, "view_messages", ("000000", time_sample(), "", "telegram · someone")
        )
        self.view.selectionModel().currentRowChanged.connect(self._show_current)
        self.text = QtWidgets.QTextBrowser()
        self.text.setObjectName("message_text")
        self.note = QtWidgets.QLabel()
        self.note.setObjectName("messages_note")
        self.purge_button = QtWidgets.QPushButton("Pur&ge message…")
        self.purge_button.setObjectName("purge_message_button")
        self.purge_button.setEnabled(False)
        self.purge_button.clicked.connect(self.purge_current)
        side = QtWidgets.QWidget()
        side_layout = QtWidgets.QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.text, 1)
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(self.note, 1)
        bar.addWidget(self.purge_button)
        side_layout.addLayout(bar)
        self.splitter = splitter = QtWidgets.QSplitter()
        splitter.setObjectName("messages_splitter")
        splitter.addWidget(self.view)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(splitter)

    def ids(self) -> list[int]:
        """The message ids listed, top to bottom."""
        return [int(row["id"]) for row in self._rows]

    def refresh(self) -> None:
        """Reload the list (messages arrive from the runtime without a change-set)."""
        self._tasks.spawn(self.load())

    async def load(self) -> None:
        try:
            result = await self._bridge.dispatch("observation.list", {"limit": LIST_LIMIT})
        except MamaError as exc:
            self.note.setText(exc.message)
            return
        current = self.current()
        self._rows = list(result["observations"])
        self.model.removeRows(0, self.model.rowCount())
        for row in self._rows:
            who = " · ".join(p for p in (str(row["source"]), str(row["author"])) if p)
            items = [
                QtGui.QStandardItem(str(row["id"])),
                QtGui.QStandardItem(local_time(str(row["received_at"]))),
                QtGui.QStandardItem(preview(str(row["text"]))),
                QtGui.QStandardItem(who),
            ]
            # Sorting follows what is shown: ids as numbers, times in time order.
            keys = (
                int(row["id"]),
                str(row["received_at"]),
                *(i.text().casefold() for i in items[2:]),
            )
            for item, key in zip(items, keys, strict=True):
                item.setData(key, SORT_ROLE)
            self.model.appendRow(items)
        kept = None if current is None else current["id"]
        if kept in self.ids():
            self.select(int(kept))
        else:
            self._show_current()
        self.loaded.emit()

    def select(self, observation_id: int) -> bool:
        """Make ``observation_id`` the current row; False if it is not listed."""
        return select_record(self.view, self.model, self.ids(), observation_id)

    def current(self) -> dict[str, Any] | None:
        return current_record(self.view, self._rows)

    def _show_current(self, *_args: object) -> None:
        row = self.current()
        self.purge_button.setEnabled(row is not None)
        self.purge_button.setToolTip(
            "Erase this message's text for good"
            if row is not None
            else "Select a message to purge it"
        )
        self.changed.emit()
        if row is None:
            self.text.setPlainText("")
            return
        when = local_time(str(row["received_at"]))
        head = f"#{row['id']} · {when} · {row['source']} · {row['author']}"
        self.text.setPlainText(f"{head}\n\n{row['text']}")

    def purge_current(self) -> None:
        row = self.current()
        if row is not None:
            self._tasks.spawn(self._purge(dict(row)))

    async def _purge(self, row: dict[str, Any]) -> None:
        dialog = MessagePurgeDialog(self, row)
        self.dialog_opened.emit(dialog)
        accepted = await await_dialog(dialog) == QtWidgets.QDialog.DialogCode.Accepted
        reason = dialog.reason.text().strip()
        dialog.deleteLater()
        if not accepted:
            return
        try:
            receipt = await self._bridge.mutate(
                "memory.purge", {"observation_ids": [int(row["id"])], "reason": reason}
            )
        except MamaError as exc:
            self.note.setText(exc.message)
            return
        self.note.setText(f"Erased message #{row['id']}")
        await self.load()
        self.purged.emit(receipt)
