"""The review window's Work tab: the open commitments (who owes what to whom, by when),
soonest due first, overdue ones marked in words and colour; Done, Drop and Edit due
with a reason; and the message a commitment was found in, one click away.

Every action is an owner action through the catalog (``commitment.close``,
``commitment.reschedule``), as the other review buttons are: each appends a new
record that supersedes the open one, so the list is read again afterwards.
Whether a commitment is overdue is decided here against ``now`` (injected), and the
list is drawn again every minute, so the mark follows the clock while the window
stays open.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from html import escape
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mama_core.errors import MamaError
from mama_core.json_types import JsonObject
from ui.palette import ATTENTION, DANGER, MUTED
from ui.qt import QtCore, QtGui, QtWidgets, Signal
from ui.review.dialogs import fit_placeholder, ok_cancel_buttons
from ui.review.models import SORT_ROLE
from ui.review.table_views import (
    current_record,
    make_table_view,
    select_record,
    select_row,
    time_sample,
)
from ui.tasks import TaskGroup, await_dialog

if TYPE_CHECKING:
    from ui.bridge import EngineBridge

log = logging.getLogger(__name__)

LIST_LIMIT = 500
TICK_MS = 60_000
"""How often the overdue marks are brought up to the clock."""
HEADERS = ("#", "State", "Due", "What", "Who")
"""State comes early: "Overdue" stays in view in a narrow window."""
STATE_COLUMN = 1
DUE_COLUMN = 2
WHAT_COLUMN = 3
OWNER = "owner"
VERBS = {"done": "Done", "dropped": "Dropped", "reschedule": "Moved", "confirm": "Confirmed"}
ACTIONS = {
    "done": "commitment.close",
    "dropped": "commitment.close",
    "reschedule": "commitment.reschedule",
    "confirm": "review.approve",
}
"""Each Work button's catalog action (a proposed commitment is confirmed by approving it)."""

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def local_zone() -> tzinfo:
    """The desktop's time zone, by its IANA name when Qt knows it (so the due keeps it)."""
    name = bytes(QtCore.QTimeZone.systemTimeZoneId().data()).decode("ascii", "replace")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        zone = datetime.now().astimezone().tzinfo
        return zone if zone is not None else UTC


def zone_name(zone: tzinfo, when: datetime) -> str:
    """``Europe/Berlin (CET)``: the zone by name and as the clock shows it then."""
    short = when.astimezone(zone).strftime("%Z")
    name = str(getattr(zone, "key", "") or short)
    return name if short in ("", name) else f"{name} ({short})"


def due_text(row: dict[str, Any]) -> str:
    """A commitment's due in the zone it was given in (as ``mama work`` shows it), with
    the zone named; without one, in the desktop's."""
    due = parse_due(row.get("due_at"))
    if due is None:
        return ""
    name = str(row.get("due_tz") or "")
    try:
        if name:
            return f"{due.astimezone(ZoneInfo(name)):%Y-%m-%d %H:%M} {name}"
    except (ZoneInfoNotFoundError, ValueError):
        pass
    return due.astimezone(local_zone()).strftime("%Y-%m-%d %H:%M %Z")


def parse_due(value: object) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def is_overdue(row: dict[str, Any], now: datetime) -> bool:
    """An open commitment whose due time has passed at ``now``."""
    due = parse_due(row.get("due_at"))
    return row.get("state", "open") == "open" and due is not None and due < now


def party(name: object) -> str:
    text = str(name or "")
    return "you" if text.casefold() == OWNER else text


def who(row: dict[str, Any]) -> str:
    """``you → Dana``, ``Sam → you``, ``you`` (to no one named)."""
    owed_by, owed_to = party(row.get("owed_by")), party(row.get("owed_to"))
    return f"{owed_by} → {owed_to}" if owed_to else owed_by


def state_word(row: dict[str, Any], overdue: bool) -> str:
    """The State column in words (never colour alone): Overdue, Proposed, Open."""
    words = ["Proposed" if row.get("status") == "proposed" else "Open"]
    if overdue:
        words.insert(0, "Overdue")
    return " · ".join(words) if overdue and words[1] == "Proposed" else words[0]


class DueDialog(QtWidgets.QDialog):
    """Done, Drop or Edit due: a reason (required to drop) and, to move it, the new due."""

    def __init__(
        self,
        parent: QtWidgets.QWidget | None,
        *,
        title: str,
        prompt: str,
        ok_text: str,
        reason_required: bool,
        due: datetime | None = None,
        edit_due: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("work_dialog")
        self._required = reason_required
        layout = QtWidgets.QVBoxLayout(self)
        label = QtWidgets.QLabel(prompt)
        label.setWordWrap(True)
        layout.addWidget(label)
        self.due = QtWidgets.QDateTimeEdit()
        self.due.setObjectName("due")
        self.due.setCalendarPopup(True)
        self.due.setDisplayFormat("yyyy-MM-dd HH:mm")
        start = (due or datetime.now(UTC)).astimezone(local_zone())
        self.due.setDateTime(
            QtCore.QDateTime(
                QtCore.QDate(start.year, start.month, start.day),
                QtCore.QTime(start.hour, start.minute),
            )
        )
        self.zone = QtWidgets.QLabel(f"Time zone: {zone_name(local_zone(), start)}")
        self.zone.setObjectName("due_zone")
        self.no_due = QtWidgets.QCheckBox("No due time")
        self.no_due.setObjectName("no_due")
        self.no_due.toggled.connect(lambda off: self.due.setEnabled(not off))
        for widget in (self.due, self.zone, self.no_due):
            widget.setVisible(edit_due)
            layout.addWidget(widget)
        self.reason = QtWidgets.QLineEdit()
        self.reason.setObjectName("reason")
        self.reason.setPlaceholderText(
            "Reason (kept in the audit log)"
            if reason_required
            else "Reason, if you like (kept in the audit log)"
        )
        fit_placeholder(self.reason)
        layout.addWidget(self.reason)
        self.ok_button = ok_cancel_buttons(self, layout, ok_text)
        self.reason.textChanged.connect(self._check)
        self._check()

    def _check(self) -> None:
        ok = bool(self.reason.text().strip()) or not self._required
        self.ok_button.setEnabled(ok)
        self.ok_button.setToolTip("" if ok else "Write a reason first")

    def set_due(self, when: datetime) -> None:
        """Show ``when`` in the editor (in the desktop's zone)."""
        local = when.astimezone(local_zone())
        self.due.setDateTime(
            QtCore.QDateTime(
                QtCore.QDate(local.year, local.month, local.day),
                QtCore.QTime(local.hour, local.minute),
            )
        )

    def chosen_due(self) -> datetime | None:
        """The new due time in the desktop's zone, or None for no due time."""
        if self.no_due.isChecked():
            return None
        shown = self.due.dateTime()
        date, time = shown.date(), shown.time()
        return datetime(
            date.year(), date.month(), date.day(), time.hour(), time.minute(), tzinfo=local_zone()
        )

    def reason_text(self) -> str | None:
        return self.reason.text().strip() or None


class WorkPanel(QtWidgets.QWidget):
    """The open commitments, one in full with its source messages, and the actions."""

    loaded = Signal()
    """The list was (re)filled."""
    acted = Signal(str, object)
    """(action, receipt) after Done, Drop or Edit due succeeded."""
    failed = Signal(str, str)
    """(action, message) after the catalog refused one."""
    finished = Signal(str)
    """(action) after every action: done, refused or cancelled."""
    dialog_opened = Signal(object)
    """A Done / Drop / Edit due dialog is open (tests fill it in)."""
    source_requested = Signal(int)
    """The owner asked to see this source message (in the Messages tab)."""
    detail_shown = Signal(int)
    """The pane shows this commitment with its source messages."""

    def __init__(
        self,
        bridge: EngineBridge,
        tasks: TaskGroup,
        parent: QtWidgets.QWidget | None = None,
        *,
        clock: Clock = system_clock,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("work_panel")
        self._bridge = bridge
        self._tasks = tasks
        self._clock = clock
        self._rows: list[dict[str, Any]] = []
        self._generation = 0
        self._loading = False
        self._again = False
        self.loaded_once = False
        self._ticker = QtCore.QTimer(self, interval=TICK_MS)
        self._ticker.timeout.connect(self.tick)
        self._ticker.start()
        self.model = QtGui.QStandardItemModel(0, len(HEADERS), self)
        self.model.setHorizontalHeaderLabels(list(HEADERS))
        self.view = make_table_view(
            self.model, "view_work", ("000000", "Overdue", time_sample(), "", "someone → someone")
        )
        self.view.selectionModel().currentRowChanged.connect(self._show_current)
        self.detail = QtWidgets.QTextBrowser()
        self.detail.setObjectName("work_detail")
        self.detail.setOpenLinks(False)
        self.detail.anchorClicked.connect(self._link_clicked)
        self.note = QtWidgets.QLabel()
        self.note.setObjectName("work_note")
        self.note.setWordWrap(True)
        self.buttons: dict[str, QtWidgets.QPushButton] = {}
        bar = QtWidgets.QGridLayout()
        for at, (name, text, handler) in enumerate(
            (
                ("done", "&Done…", lambda: self.start("done")),
                ("drop", "Dro&p…", lambda: self.start("dropped")),
                ("due", "Edit d&ue…", lambda: self.start("reschedule")),
                ("confirm", "&Confirm", lambda: self.start("confirm")),
                ("source", "Show &source message", self.show_source),
            )
        ):
            button = QtWidgets.QPushButton(text)
            button.setObjectName(f"work_{name}_button")
            button.setEnabled(False)
            button.clicked.connect(handler)
            bar.addWidget(button, at // 3, at % 3)
            self.buttons[name] = button
        side = QtWidgets.QWidget()
        side_layout = QtWidgets.QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.detail, 1)
        side_layout.addLayout(bar)
        side_layout.addWidget(self.note)
        self.splitter = splitter = QtWidgets.QSplitter()
        splitter.setObjectName("work_splitter")
        splitter.addWidget(self.view)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(splitter)
        self._show_current()

    # --- the list ---------------------------------------------------------------------

    def ids(self) -> list[int]:
        """The commitment ids listed, in the list's order (soonest due first)."""
        return [int(row["id"]) for row in self._rows]

    def refresh(self) -> None:
        """Read the list again (after a change to the memory, or when the tab opens); a
        burst of changes while one read is running makes one more read, not one each."""
        if self._loading:
            self._again = True
            return
        self._tasks.spawn(self.load())

    def tick(self) -> None:
        """Bring the overdue marks up to the clock's now, keeping the selected row."""
        if not self.loaded_once:
            return
        current = self.current()
        self.redraw()
        if current is not None:
            self.select(int(current["id"]))

    async def load(self) -> None:
        self._loading = True
        try:
            while True:
                self._again = False
                await self._load_once()
                if not self._again:
                    return
        finally:
            self._loading = False

    async def _load_once(self) -> None:
        try:
            result = await self._bridge.dispatch("commitment.list", {"limit": LIST_LIMIT})
        except MamaError as exc:
            self.note.setText(exc.message)
            return
        current = self.current()
        position = max(self.view.currentIndex().row(), 0)
        self._rows = list(result["commitments"])
        self.redraw()
        self.loaded_once = True
        kept = None if current is None else int(current["id"])
        if kept is not None and kept in self.ids():
            self.select(kept)
        elif self._rows and not self.view.selectionModel().hasSelection():
            # The one closed is gone: the row that took its place, as a mail client does.
            select_row(self.view, min(position, self.view.model().rowCount() - 1))
        else:
            self._show_current()
        self.loaded.emit()

    def redraw(self) -> None:
        """Fill the table from the rows read last, with overdue as of the clock's now."""
        now = self._clock()
        self.model.removeRows(0, self.model.rowCount())
        for row in self._rows:
            overdue = is_overdue(row, now)
            due = parse_due(row.get("due_at"))
            cells = (
                str(row["id"]),
                state_word(row, overdue),
                due_text(row) if due else "no due time",
                str(row.get("summary") or ""),
                who(row),
            )
            items = [QtGui.QStandardItem(text) for text in cells]
            due_key = str(row.get("due_at") or "~")  # no due time sorts last
            keys = (
                int(row["id"]),
                cells[1].casefold(),
                due_key,
                *(c.casefold() for c in cells[3:]),
            )
            for item, key in zip(items, keys, strict=True):
                item.setData(key, SORT_ROLE)
            tone = DANGER if overdue else ATTENTION if row.get("status") == "proposed" else None
            if tone is not None:
                brush = QtGui.QBrush(QtGui.QColor(tone.on(self.view.palette())))
                items[STATE_COLUMN].setForeground(brush)
                if overdue:
                    items[DUE_COLUMN].setForeground(brush)
            if overdue:
                items[DUE_COLUMN].setToolTip("Overdue: its due time has passed")
            items[WHAT_COLUMN].setToolTip(str(row.get("summary") or ""))
            self.model.appendRow(items)

    def select(self, commitment_id: int) -> bool:
        return select_record(self.view, self.model, self.ids(), commitment_id)

    def current(self) -> dict[str, Any] | None:
        return current_record(self.view, self._rows)

    def state_text(self, commitment_id: int) -> str:
        """What the State column says for ``commitment_id`` ("" if not listed)."""
        if commitment_id not in self.ids():
            return ""
        item = self.model.item(self.ids().index(commitment_id), STATE_COLUMN)
        return "" if item is None else item.text()

    def state_colour(self, commitment_id: int) -> str | None:
        """The State column's colour for ``commitment_id`` (None: the palette's text)."""
        if commitment_id not in self.ids():
            return None
        item = self.model.item(self.ids().index(commitment_id), STATE_COLUMN)
        if item is None or item.data(QtCore.Qt.ItemDataRole.ForegroundRole) is None:
            return None
        return item.foreground().color().name()

    # --- the selected one ---------------------------------------------------------------

    def _show_current(self, *_args: object) -> None:
        row = self.current()
        proposed = row is not None and row.get("status") == "proposed"
        acts = row is not None and not proposed
        why = (
            "Select a commitment first"
            if row is None
            else "Confirm it first: approve it in Proposed (or reject it there)"
            if proposed
            else ""
        )
        for name, does in (
            ("done", "Mark it done"),
            ("drop", "Drop it, with a reason"),
            ("due", "Give it another due time, or none"),
        ):
            self.buttons[name].setEnabled(acts)
            self.buttons[name].setToolTip(does if acts else why)
        self.buttons["confirm"].setEnabled(proposed)
        self.buttons["confirm"].setToolTip(
            "The agent found it: confirm it as yours (Reject it in Proposed)"
            if proposed
            else "Only a proposed commitment needs confirming"
        )
        sources = [] if row is None else list(row.get("source_observations") or [])
        self.buttons["source"].setEnabled(bool(sources))
        self.buttons["source"].setToolTip(
            "Show the message it was found in, in Messages"
            if sources
            else "It was not found in a message"
        )
        if row is None:
            self._generation += 1
            self.detail.setHtml(
                f"<p style='color:{MUTED.on()}'>Select a commitment to see it here.</p>"
            )
            return
        self._tasks.spawn(self._show_detail(dict(row)))

    async def _show_detail(self, row: dict[str, Any]) -> None:
        self._generation += 1
        generation = self._generation
        sources: list[dict[str, Any]] = []
        for observation_id in row.get("source_observations") or []:
            try:
                found = await self._bridge.dispatch("observation.read", {"id": observation_id})
            except MamaError as exc:
                sources.append({"id": observation_id, "problem": exc.message})
            else:
                sources.append(dict(found.get("observation", found)))
        if generation != self._generation:
            return  # the owner moved on meanwhile
        self.detail.setHtml(self._detail_html(row, sources))
        self.detail_shown.emit(int(row["id"]))

    def _detail_html(self, row: dict[str, Any], sources: list[dict[str, Any]]) -> str:
        overdue = is_overdue(row, self._clock())
        due = parse_due(row.get("due_at"))
        when = "no due time" if due is None else due_text(row)
        if due is not None and row.get("due_tz"):
            when += f" (given in {escape(str(row['due_tz']))})"
        mark = f" <b style='color:{DANGER.on()}'>Overdue</b>" if overdue else ""
        parts = [
            f"<h3>#{row['id']} {escape(str(row.get('summary') or ''))}</h3>",
            f"<p><b>Who:</b> {escape(who(row))}<br><b>Due:</b> {escape(when)}{mark}<br>"
            f"<b>State:</b> {escape(state_word(row, overdue))}<br>"
            f"<b>Scopes:</b> {escape(', '.join(row.get('scopes') or []) or '—')}</p>",
        ]
        if sources:
            parts.append("<p><b>Found in:</b></p>")
        for source in sources:
            oid = int(source["id"])
            if "problem" in source:
                parts.append(f"<p>message #{oid}: {escape(str(source['problem']))}</p>")
                continue
            head = " · ".join(
                escape(str(source.get(k) or "")) for k in ("source", "author") if source.get(k)
            )
            parts.append(
                f"<p><a href='obs:{oid}'>message #{oid}</a> {head}</p>"
                f"<blockquote>{escape(str(source.get('text') or ''))}</blockquote>"
            )
        return "".join(parts)

    def _link_clicked(self, url: QtCore.QUrl) -> None:
        text = url.toString()
        if text.startswith("obs:") and text[4:].isdigit():
            self.source_requested.emit(int(text[4:]))

    def show_source(self) -> None:
        """Show the (first) message the selected commitment was found in."""
        row = self.current()
        sources = [] if row is None else list(row.get("source_observations") or [])
        if sources:
            self.source_requested.emit(int(sources[0]))

    # --- actions ------------------------------------------------------------------------

    def start(self, action: str) -> None:
        """Done (``done``), Drop (``dropped``), Edit due (``reschedule``) on the selected
        open commitment, or Confirm (``confirm``) a proposed one."""
        row = self.current()
        if row is None or (row.get("status") == "proposed") != (action == "confirm"):
            return
        self._tasks.spawn(self._act(action, dict(row)))

    async def _act(self, action: str, row: dict[str, Any]) -> None:
        name = ACTIONS[action]
        try:
            payload = (
                {"id": int(row["id"])} if action == "confirm" else await self._ask(action, row)
            )
            if payload is None:
                return
            try:
                receipt = await self._bridge.mutate(name, payload)
            except MamaError as exc:
                self.note.setText(f"Not done: {exc.message}")
                self.failed.emit(name, exc.message)
                return
            self.note.setText(f"{VERBS[action]}: #{row['id']} {row.get('summary', '')}")
            await self.load()
            if action == "reschedule" and receipt.judgment_id is not None:
                self.select(receipt.judgment_id)
            elif action == "confirm":
                self.select(int(row["id"]))
            self.acted.emit(name, receipt)
        finally:
            self.finished.emit(name)

    async def _ask(self, action: str, row: dict[str, Any]) -> JsonObject | None:
        what = f"#{row['id']} {row.get('summary', '')}"
        if action == "done":
            dialog = DueDialog(
                self,
                title="Done",
                prompt=f"Mark {what} done.",
                ok_text="Done",
                reason_required=False,
            )
        elif action == "dropped":
            dialog = DueDialog(
                self,
                title="Drop",
                prompt=f"Drop {what}: it will not be done. Say why.",
                ok_text="Drop",
                reason_required=True,
            )
        else:
            dialog = DueDialog(
                self,
                title="Edit due",
                prompt=f"When is {what} due now?",
                ok_text="Move",
                reason_required=False,
                due=parse_due(row.get("due_at")),
                edit_due=True,
            )
        self.dialog_opened.emit(dialog)
        accepted = await await_dialog(dialog) == QtWidgets.QDialog.DialogCode.Accepted
        reason, due = dialog.reason_text(), dialog.chosen_due()
        dialog.deleteLater()
        if not accepted:
            return None
        payload: JsonObject = {"id": int(row["id"])}
        if action == "reschedule":
            payload["due"] = due
        else:
            payload["outcome"] = action
        if reason is not None:
            payload["reason"] = reason
        return payload
