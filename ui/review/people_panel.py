"""The review window's People tab: who MAMA knows of (``person.list``), and for the one
selected what it holds about them (``person.about``): the memories that name them,
commitments to and from them, their recent messages and meetings with them.

Joining names is the owner's ``person.join``: select two or more people and Join
them (the first selected keeps its name), or type another name or address for the
selected person. Split takes a name off again (``person.split``). Both go through the
catalog like every other review button, so the list is read again afterwards.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from mama_core.errors import MamaError
from ui.palette import MUTED
from ui.qt import QtGui, QtWidgets, Signal
from ui.review.models import SORT_ROLE
from ui.review.table_views import current_record, make_table_view, select_record, source_row
from ui.review.work_panel import who
from ui.tasks import TaskGroup
from ui.words import local_time

if TYPE_CHECKING:
    from mama_core.memory.results import Meeting, PersonAboutResult, PersonMemory
    from ui.bridge import EngineBridge

HEADERS = ("Name", "What MAMA has")
COUNTS = (
    ("memories", "memory", "memories"),
    ("commitments", "commitment", "commitments"),
    ("messages", "message", "messages"),
    ("meetings", "meeting", "meetings"),
)
"""Each count of ``person.list`` and its words, singular and plural."""


class PeoplePanel(QtWidgets.QWidget):
    """The people list, one person's page beside it, and Join / Split."""

    loaded = Signal()
    """The list was (re)filled."""
    detail_shown = Signal(str)
    """The page shows this person (by name)."""
    acted = Signal(str, object)
    """(action, receipt) after a join or split succeeded."""
    failed = Signal(str, str)
    """(action, message) after the catalog refused one."""

    def __init__(
        self, bridge: EngineBridge, tasks: TaskGroup, parent: QtWidgets.QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("people_panel")
        self._bridge = bridge
        self._tasks = tasks
        self._rows: list[dict[str, Any]] = []
        self._generation = 0
        self.loaded_once = False
        self.model = QtGui.QStandardItemModel(0, len(HEADERS), self)
        self.model.setHorizontalHeaderLabels(list(HEADERS))
        self.view = make_table_view(self.model, "view_people", ("Anna Kowalska", ""))
        self.view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.selectionModel().currentRowChanged.connect(self._show_current)
        self.view.selectionModel().selectionChanged.connect(self._update_buttons)
        self.detail = QtWidgets.QTextBrowser()
        self.detail.setObjectName("people_detail")
        self.alias = QtWidgets.QLineEdit()
        self.alias.setObjectName("people_alias")
        self.alias.setPlaceholderText("Another name or address for them")
        self.alias.textChanged.connect(self._update_buttons)
        self.buttons: dict[str, QtWidgets.QPushButton] = {}
        bar = QtWidgets.QHBoxLayout()
        for name, text, handler in (
            ("join", "&Join", self.join),
            ("split", "&Split off", self.split),
        ):
            button = QtWidgets.QPushButton(text)
            button.setObjectName(f"people_{name}_button")
            button.clicked.connect(handler)
            bar.addWidget(button)
            self.buttons[name] = button
        self.note = QtWidgets.QLabel()
        self.note.setObjectName("people_note")
        self.note.setWordWrap(True)
        side = QtWidgets.QWidget()
        side_layout = QtWidgets.QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.detail, 1)
        side_layout.addWidget(self.alias)
        side_layout.addLayout(bar)
        side_layout.addWidget(self.note)
        self.splitter = QtWidgets.QSplitter()
        self.splitter.setObjectName("people_splitter")
        self.splitter.addWidget(self.view)
        self.splitter.addWidget(side)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.splitter)
        self._show_current()

    # --- the list ---------------------------------------------------------------------

    def names(self) -> list[str]:
        """The people listed, in the list's order."""
        return [str(row["name"]) for row in self._rows]

    def refresh(self) -> None:
        self._tasks.spawn(self.load())

    async def load(self) -> None:
        try:
            result = await self._bridge.dispatch("person.list", {})
        except MamaError as exc:
            self.note.setText(exc.message)
            return
        current = self.current()
        self._rows = list(result["people"])
        self.model.removeRows(0, self.model.rowCount())
        for row in self._rows:
            others = [a for a in row["aliases"] if a != row["name"]]
            name = QtGui.QStandardItem(str(row["name"]))
            name.setData(str(row["name"]).casefold(), SORT_ROLE)
            name.setToolTip("Also: " + ", ".join(others) if others else "")
            held = QtGui.QStandardItem(held_text(row))
            held.setData(sum(int(row[key]) for key, _, _ in COUNTS), SORT_ROLE)
            self.model.appendRow([name, held])
        self.loaded_once = True
        if current is not None and str(current["name"]) in self.names():
            self.select(str(current["name"]))
        else:
            self._show_current()
        self.loaded.emit()

    def select(self, name: str) -> bool:
        """Make ``name``'s row current (False if not listed)."""
        ids = list(range(len(self._rows)))
        if name not in self.names():
            return False
        return select_record(self.view, self.model, ids, self.names().index(name))

    def current(self) -> dict[str, Any] | None:
        return current_record(self.view, self._rows)

    def selected_names(self) -> list[str]:
        """The selected people's names, the current one first."""
        rows = sorted({source_row(self.view, i) for i in self.view.selectionModel().selectedRows()})
        names = [str(self._rows[r]["name"]) for r in rows if 0 <= r < len(self._rows)]
        current = self.current()
        if current is not None and str(current["name"]) in names:
            names.remove(str(current["name"]))
            names.insert(0, str(current["name"]))
        return names

    # --- the selected one ---------------------------------------------------------------

    def _show_current(self, *_args: object) -> None:
        self._update_buttons()
        row = self.current()
        self._generation += 1
        if row is None:
            self.detail.setHtml(
                f"<p style='color:{MUTED.on()}'>Select someone to see what MAMA knows "
                "about them.</p>"
            )
            return
        self._tasks.spawn(self._show_page(str(row["name"]), self._generation))

    async def _show_page(self, name: str, generation: int) -> None:
        try:
            from mama_core.memory.results import PersonAboutResult

            page = await self._bridge.read_as(PersonAboutResult, "person.about", {"name": name})
        except MamaError as exc:
            page = None
            problem = exc.message
        else:
            problem = ""
        if generation != self._generation:
            return  # the owner moved on meanwhile
        self.detail.setHtml(page_html(page) if page is not None else escape(problem))
        self.detail_shown.emit(name)

    def _update_buttons(self, *_args: object) -> None:
        several = len(self.selected_names()) >= 2
        typed = bool(self.alias.text().strip())
        one = self.current() is not None
        self.buttons["join"].setEnabled(several or (one and typed))
        self.buttons["join"].setToolTip(
            "Join the selected people as one (the first keeps its name)"
            if several
            else "Join the typed name or address to the selected person"
            if one and typed
            else "Select two people, or one and type another name for them"
        )
        self.buttons["split"].setEnabled(typed)
        self.buttons["split"].setToolTip(
            "Take the typed name off the person it was joined to"
            if typed
            else "Type the name to split off"
        )

    # --- actions ------------------------------------------------------------------------

    def join(self) -> None:
        names = self.selected_names()
        typed = self.alias.text().strip()
        if len(names) < 2:
            names = names[:1] + ([typed] if typed else [])
        if len(names) >= 2:
            self._tasks.spawn(self._act("person.join", {"names": names}, names[0]))

    def split(self) -> None:
        typed = self.alias.text().strip()
        if typed:
            self._tasks.spawn(self._act("person.split", {"name": typed}, None))

    async def _act(self, action: str, payload: dict[str, Any], keep: str | None) -> None:
        try:
            receipt = await self._bridge.mutate(action, payload)
        except MamaError as exc:
            self.note.setText(f"Not done: {exc.message}")
            self.failed.emit(action, exc.message)
            return
        verb = "Joined" if action == "person.join" else "Split off"
        names = payload["names"] if "names" in payload else [payload["name"]]
        self.note.setText(f"{verb}: {', '.join(str(n) for n in names)}")
        self.alias.clear()
        await self.load()
        if keep is not None:
            self.select(keep)
        self.acted.emit(action, receipt)


def held_text(row: dict[str, Any]) -> str:
    """``2 memories · 1 commitment``: what there is about someone, leaving out nones."""
    parts = [
        f"{row[key]} {one if int(row[key]) == 1 else many}"
        for key, one, many in COUNTS
        if int(row[key])
    ]
    return " · ".join(parts) or "only your joins"


def page_html(page: PersonAboutResult) -> str:
    """One person's page (``person.about``) as HTML for the detail pane."""
    person = page.person
    others = [a for a in person.aliases if a != person.name]
    parts = [f"<h3>{escape(person.name)}</h3>"]
    if others:
        parts.append(f"<p><b>Also:</b> {escape(', '.join(others))}</p>")
    total = page.memories_total
    parts.append(
        _section(
            f"Memories naming them ({total})",
            [f"#{m.id} {escape(m.kind)}{_proposed(m)}: {escape(m.summary)}" for m in page.memories],
        )
    )
    for title, commitments in (
        ("They owe", page.commitments.owed_by),
        ("Owed to them", page.commitments.owed_to),
    ):
        parts.append(
            _section(
                f"{title} ({len(commitments)})",
                [f"#{c.id} {escape(c.summary)} — {escape(who(c.to_wire()))}" for c in commitments],
            )
        )
    parts.append(
        _section(
            f"Recent messages ({len(page.messages)})",
            [
                f"{escape(local_time(m.received_at))} · {escape(m.channel or m.source)}:"
                f" {escape(_one_line(m.text))}"
                for m in page.messages
            ],
        )
    )
    for title, meetings in (
        ("Upcoming meetings", page.meetings.upcoming),
        ("Recent meetings", page.meetings.recent),
    ):
        parts.append(
            _section(
                f"{title} ({len(meetings)})",
                [
                    f"{escape(_when(m))} {escape(m.title)}"
                    + (f" ({escape(m.status)})" if m.status not in ("", "confirmed") else "")
                    for m in meetings
                ],
            )
        )
    return "".join(parts)


def _proposed(memory: PersonMemory) -> str:
    return " (proposed)" if memory.status == "proposed" else ""


def _section(title: str, rows: list[str]) -> str:
    body = "".join(f"<li>{r}</li>" for r in rows) if rows else "<li>none</li>"
    return f"<p><b>{escape(title)}</b></p><ul>{body}</ul>"


def _one_line(text: str, width: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _when(meeting: Meeting) -> str:
    """A meeting's start in local time; an all-day one by its date as given."""
    return meeting.start if meeting.all_day else local_time(meeting.start)
