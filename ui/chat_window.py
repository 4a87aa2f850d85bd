"""The chat window: talk to MAMA at the desk, the same conversation as Telegram's.

What the owner sends is an owner message in the mailbox (``app.durable.desk``),
answered by the runtime of this app or — when a ``mama daemon`` runs the agent —
by that process, which sees it at its next commit check. The bubbles are the
stored conversation, read again whenever the store changes (a turn here, a
commit of another process, a purge), so a Telegram message shows here, a reply
appears as soon as it is recorded, and a purged message disappears at once.

Keys: Enter sends, Shift+Enter starts a new line, Up in an empty box brings back
the last message to edit, Esc closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.durable.desk import ChatLine, conversation, desk_input, proposal_cards
from app.durable.mailbox import InputState, Mailbox
from app.durable.schema import open_runtime_db
from mama_core.errors import MamaError
from mama_core.memory.verbs import Verb, may
from mama_core.model import Status
from ui.qt import Qt, QtGui, QtWidgets, Signal
from ui.review.actions import ReviewActions
from ui.tasks import TaskGroup

if TYPE_CHECKING:
    from app.durable.transaction import RuntimeDb
    from app.runtime.owner_runtime import OwnerRuntime
    from mama_core.model import ChangeSet
    from mama_core.store import Store
    from ui.bridge import EngineBridge

log = logging.getLogger(__name__)

HISTORY_LIMIT = 200
"""Messages and replies the window shows (the oldest drop off)."""


class MessageBox(QtWidgets.QPlainTextEdit):
    """The box the owner types in: Enter sends, Shift+Enter a new line, Up (when
    empty) recalls the last message, Esc closes the window."""

    send_requested = Signal()
    recall_requested = Signal()
    close_requested = Signal()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.send_requested.emit()
            return
        if key == Qt.Key.Key_Up and not self.toPlainText():
            self.recall_requested.emit()
            return
        if key == Qt.Key.Key_Escape:
            self.close_requested.emit()
            return
        super().keyPressEvent(event)


class ProposalCard(QtWidgets.QFrame):
    """A proposal in the conversation: what it says, and Approve / Reject."""

    def __init__(self, record: dict[str, Any]) -> None:
        super().__init__()
        self.setObjectName("chat_proposal")
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        change = record.get("pending_change") if record.get("status") != Status.PROPOSED else None
        what = (
            f"MAMA proposes to {change.get('description', 'change')} #{record['id']}"
            if change
            else f"New {record.get('kind', 'memory')} #{record['id']}, waiting for you"
        )
        self.label = QtWidgets.QLabel(f"{what}:\n{record.get('summary', '')}")
        self.label.setWordWrap(True)
        self.approve = QtWidgets.QPushButton("Approve")
        self.reject = QtWidgets.QPushButton("Reject…")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.approve)
        buttons.addWidget(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addLayout(buttons)


class ChatWindow(QtWidgets.QWidget):
    """The conversation with MAMA, as stored, and a box to add to it."""

    reloaded = Signal()
    """The bubbles were redrawn from the store (for tests)."""
    store_changed = Signal()
    """Something was committed (here or by another process): read the conversation again."""
    dialog_opened = Signal(object)
    """A dialog of the window is open (Reject asks for a reason)."""

    def __init__(
        self,
        bridge: EngineBridge,
        store: Store,
        runtime: Callable[[], OwnerRuntime | None],
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("chat_window")
        self.setWindowTitle("Chat with MAMA")
        self.bridge = bridge
        engine = bridge.engine
        self.review_actions = ReviewActions(bridge, self, self.dialog_opened.emit)
        self._runtime = runtime
        """This app's runtime while it runs the agent (None: a daemon does, or none)."""
        self.db: RuntimeDb = open_runtime_db(store)
        self._tasks = TaskGroup(self._show_error)
        self._lines: list[ChatLine] = []
        self.proposals: dict[int, ProposalCard] = {}
        self._notice = ""
        """The last decision made here, shown until the next message."""
        self._partial: tuple[int, str] | None = None
        """(input id, the reply so far) while the agent writes one."""
        self._partial_item: QtWidgets.QListWidgetItem | None = None
        """The proposal cards shown, by judgment id."""
        self._last_sent: str | None = None

        self.history = QtWidgets.QListWidget()
        self.history.setObjectName("chat_history")
        self.history.setWordWrap(True)
        self.history.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
        self.history.setVerticalScrollMode(QtWidgets.QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.history.setSpacing(4)
        self.status = QtWidgets.QLabel("")
        self.status.setObjectName("chat_status")
        self.status.setWordWrap(True)
        self.box = MessageBox()
        self.box.setObjectName("chat_box")
        self.box.setPlaceholderText("Write to MAMA — Enter sends, Shift+Enter for a new line")
        self.box.setFixedHeight(self.box.fontMetrics().lineSpacing() * 4)
        self.send_button = QtWidgets.QPushButton("&Send")
        self.send_button.setObjectName("chat_send")

        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.box, 1)
        row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.history, 1)
        layout.addWidget(self.status)
        layout.addLayout(row)
        self.resize(520, 640)

        self.box.send_requested.connect(self.send)
        self.send_button.clicked.connect(self.send)
        self.box.recall_requested.connect(self.recall_last)
        self.box.close_requested.connect(self.close)
        self.store_changed.connect(self.reload_soon, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = engine.subscribe(self._on_change)
        self._unwatch = engine.watch_store(self.store_changed.emit)
        self._listening: OwnerRuntime | None = None

    # --- reading --------------------------------------------------------

    def _on_change(self, _changes: ChangeSet) -> None:
        # On the engine's writer thread: a purge, or a memory a turn saved.
        self.store_changed.emit()

    def reload_soon(self) -> None:
        self._follow_runtime()
        self._tasks.spawn(self.reload())

    async def reload(self) -> None:
        """Redraw the bubbles from the stored conversation, with the review cards (as
        Telegram shows them) of the proposals that still wait for the owner."""
        lines = await asyncio.to_thread(conversation, self.db, HISTORY_LIMIT)
        cards = await asyncio.to_thread(proposal_cards, self.db, HISTORY_LIMIT)
        waiting: list[tuple[datetime, dict[str, Any]]] = []
        for card in cards:
            record = await self._waiting_record(card.judgment_id)
            if record is not None:
                waiting.append((card.at, record))
        self._lines = lines
        self.history.clear()
        self.proposals = {}
        for line in lines:
            while waiting and waiting[0][0] < line.at:
                self._add_proposal(waiting.pop(0)[1])
            self._add_bubble(line)
        for _at, record in waiting:
            self._add_proposal(record)
        self._partial_item = None  # cleared with the list
        if self._partial is not None:
            answered = {line.input_id for line in lines if not line.from_owner}
            if self._partial[0] in answered or self._partial[0] not in {
                line.input_id for line in lines if line.state is not InputState.DONE
            }:
                self._partial = None  # the stored reply (or a failure) replaces it
        self._draw_partial()
        self.history.scrollToBottom()
        unanswered = [
            line for line in lines if line.from_owner and line.state is not InputState.DONE
        ]
        self.status.setText(_waiting_text(unanswered, self._runtime()) or self._notice)
        self.reloaded.emit()

    def _add_bubble(self, line: ChatLine) -> None:
        item = QtWidgets.QListWidgetItem(_bubble_text(line))
        item.setData(Qt.ItemDataRole.UserRole, (line.from_owner, line.text))
        align = Qt.AlignmentFlag.AlignRight if line.from_owner else Qt.AlignmentFlag.AlignLeft
        item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
        if line.from_owner:  # the owner's side, as chat apps tint it
            item.setBackground(self.palette().brush(QtGui.QPalette.ColorRole.AlternateBase))
        self.history.addItem(item)

    def _add_proposal(self, record: dict[str, Any]) -> None:
        """A proposal waiting for the owner, inline, with Approve / Reject."""
        card = ProposalCard(record)
        card.approve.clicked.connect(lambda: self._tasks.spawn(self._decide(record, True)))
        card.reject.clicked.connect(lambda: self._tasks.spawn(self._decide(record, False)))
        item = QtWidgets.QListWidgetItem()
        item.setData(Qt.ItemDataRole.UserRole, None)
        item.setSizeHint(card.sizeHint())
        self.history.addItem(item)
        self.history.setItemWidget(item, card)
        self.proposals[int(record["id"])] = card

    async def _waiting_record(self, judgment_id: int) -> dict[str, Any] | None:
        try:
            found = await self.bridge.dispatch("memory.read", {"id": judgment_id})
        except MamaError:
            return None
        record = dict(found.get("record") or {})
        if may(record, Verb.APPROVE):  # a proposal, or a change waiting on the record
            return record
        return None

    async def _decide(self, record: dict[str, Any], approve: bool) -> None:
        if approve:
            receipt = await self.review_actions.approve(record)
        else:
            receipt = await self.review_actions.reject(record)
        if receipt is not None:
            verb = "Approved" if approve else "Rejected"
            self._notice = f"{verb} #{record['id']}."
        await self.reload()

    def bubbles(self) -> list[tuple[bool, str]]:
        """(from the owner, text) of each stored message and reply shown, oldest first
        (not the proposal cards, nor a reply still being written)."""
        items = (self.history.item(i) for i in range(self.history.count()))
        found = [item.data(Qt.ItemDataRole.UserRole) for item in items]
        return [bubble for bubble in found if bubble is not None]

    def _follow_runtime(self) -> None:
        """Hear this app's turns as they end (the runtime may have started since)."""
        runtime = self._runtime()
        if runtime is not None and runtime is not self._listening:
            runtime.turn_listeners.append(self._turn_ended)
            runtime.text_listeners.append(self._text_written)
            self._listening = runtime

    def _text_written(self, input_id: int, text: str) -> None:
        """The agent wrote more of a reply (a backend that streams): show it as it grows."""
        self._partial = (input_id, text)
        self._draw_partial()

    def _draw_partial(self) -> None:
        if self._partial_item is not None:
            row = self.history.row(self._partial_item)
            if row >= 0:
                self.history.takeItem(row)
            self._partial_item = None
        if self._partial is None:
            return
        item = QtWidgets.QListWidgetItem(f"MAMA · writing…\n{self._partial[1]}")
        item.setData(Qt.ItemDataRole.UserRole, None)
        self.history.addItem(item)
        self._partial_item = item
        self.history.scrollToBottom()

    def partial_text(self) -> str | None:
        """The reply being written now, as far as it is (None when none is)."""
        return None if self._partial is None else self._partial[1]

    def _turn_ended(self, _claimed: object, _reply: object) -> None:
        self.store_changed.emit()

    # --- writing --------------------------------------------------------

    def send(self) -> None:
        text = self.box.toPlainText().strip()
        if not text:
            return
        self.box.clear()
        self._notice = ""
        self._last_sent = text
        self._tasks.spawn(self._post(text))

    async def _post(self, text: str) -> None:
        self._follow_runtime()
        runtime = self._runtime()
        if runtime is not None:
            await runtime.post(desk_input(text))  # wakes this app's agent at once
        else:
            # Another process runs the agent: it sees the new input at its next
            # commit check; with none running, the message waits for one.
            await asyncio.to_thread(Mailbox(self.db).post, desk_input(text))
        await self.reload()

    def recall_last(self) -> None:
        """Up in an empty box: the last message sent, to edit and send again."""
        last = self._last_sent
        if last is None:
            mine = [line.text for line in self._lines if line.from_owner]
            last = mine[-1] if mine else None
        if last is not None:
            self.box.setPlainText(last)
            self.box.moveCursor(QtGui.QTextCursor.MoveOperation.End)

    def _show_error(self, exc: BaseException) -> None:
        log.warning("chat window: %s", exc)
        self.status.setText(f"Could not do that: {exc}")

    # --- life cycle -----------------------------------------------------

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        self.box.setFocus()
        self.reload_soon()

    async def aclose(self) -> None:
        """Stop following the store and close the window's connection."""
        self._unsubscribe()
        self._unwatch()
        if self._listening is not None:
            with contextlib.suppress(ValueError):
                self._listening.turn_listeners.remove(self._turn_ended)
            with contextlib.suppress(ValueError):
                self._listening.text_listeners.remove(self._text_written)
        await self._tasks.aclose()
        await asyncio.to_thread(self.db.close)


def _bubble_text(line: ChatLine) -> str:
    at = line.at.astimezone().strftime("%H:%M")
    if line.from_owner:
        where = "at the desk" if line.via == "desk" else f"in {line.via.capitalize()}"
        return f"You ({where}) · {at}\n{line.text}"
    return f"MAMA · {at}\n{line.text}"


def _waiting_text(waiting: list[ChatLine], runtime: OwnerRuntime | None) -> str:
    if not waiting:
        return ""
    if runtime is not None and runtime.paused:
        return "The agent is paused: your message waits until you resume it."
    if any(line.state is InputState.DEAD for line in waiting):
        return "MAMA gave up on a message; send it again when the agent works."
    return "MAMA is answering…"
