"""The review window: the owner's view of the memory, and the main window of the app.

Tabs list the proposals waiting for review, the active guidance, every
memory (live search with kind, scope and status filters), the retired ones,
the audit log, the kept messages (``ui.review.messages_panel``) and the open
commitments (Work, ``ui.review.work_panel``); the detail pane
shows the selected record with its provenance, the records it replaced and
its events. Approve, Edit & approve, Reject, Retire, Purge and Lift tombstone
are owner actions through the catalog, enabled as each record's ``allowed`` says
and run one at a time (``ui.review.record_verbs``); their errors appear in the
message line, never as a traceback. The lists follow the
writer's change-sets (``ui.review.data``).
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mama_core.errors import MamaError
from ui.palette import MUTED, note_style
from ui.qt import Qt, QtGui, QtWidgets, Signal
from ui.review.data import (
    TAB_ALL,
    TAB_AUDIT,
    TAB_GUIDANCE,
    TAB_PROPOSED,
    TAB_RETIRED,
    ReviewData,
)
from ui.review.detail_html import record_html
from ui.review.empty_state import add_empty_states, people_empty_state, work_empty_state
from ui.review.messages_panel import MessagesPanel
from ui.review.models import ID_ROLE, RECORD_ROLE, JudgmentTableModel
from ui.review.people_panel import PeoplePanel
from ui.review.record_verbs import RecordButtons, RecordVerbs
from ui.review.row_menu import RowMenu
from ui.review.search_bar import SearchBar
from ui.review.settings_changes import SettingsChangesPanel
from ui.review.table_state import DEFAULT_SIZE, WindowState, fit_to_screen
from ui.review.table_views import (
    judgment_samples,
    make_table_view,
    select_row,
    source_row,
    time_sample,
)
from ui.review.undo_bar import UNDO_MS, UndoBar
from ui.review.work_panel import Clock, WorkPanel, system_clock
from ui.tasks import TaskGroup

if TYPE_CHECKING:
    from mama_core.memory.results import TombstoneEntry
    from mama_core.receipt import Receipt
    from ui.bridge import EngineBridge
    from ui.review.lists import JudgmentList

log = logging.getLogger(__name__)

__all__ = [
    "TAB_ALL",
    "TAB_AUDIT",
    "TAB_GUIDANCE",
    "TAB_MESSAGES",
    "TAB_PEOPLE",
    "TAB_PROPOSED",
    "TAB_RETIRED",
    "TAB_WORK",
    "ReviewWindow",
]

TAB_MESSAGES = TAB_AUDIT + 1
"""The kept messages (``ui.review.messages_panel``): not memories, so not in ``views``."""
TAB_WORK = TAB_MESSAGES + 1
"""The open commitments (``ui.review.work_panel``), with their own pane and buttons."""
TAB_PEOPLE = TAB_WORK + 1
"""Who MAMA knows of and what it holds about each (``ui.review.people_panel``)."""
OWN_PANE_TABS = (TAB_MESSAGES, TAB_WORK, TAB_PEOPLE)
"""Tabs that show their own detail pane instead of the memory one."""

TAB_TITLES: dict[int, str] = {
    TAB_PROPOSED: "Proposed",
    TAB_GUIDANCE: "Active guidance",
    TAB_ALL: "All memories",
    TAB_RETIRED: "Retired",
    TAB_AUDIT: "Audit log",
}

NO_CLOSE_MATCH = (
    "No close match: no memory has these words. Below are the nearest in meaning, which "
    "may be unrelated."
)

MULTI_SELECT_TABS = (TAB_PROPOSED, TAB_GUIDANCE, TAB_ALL)
"""Lists where several rows can be approved, rejected or retired at once."""
AUDIT_SAMPLES = ("000000", time_sample(), "tombstone lifted", "agent claude-code", "#000000", "")


class ReviewWindow(QtWidgets.QMainWindow):
    """Tabs of memories, a detail pane and the owner's review actions."""

    action_done = Signal(str, object)
    """(action, receipt) after an owner action succeeded."""
    action_failed = Signal(str, str)
    """(action, message) after an owner action was refused or failed."""
    action_finished = Signal(str)
    """(action) after every owner action: done, refused or cancelled."""
    dialog_opened = Signal(object)
    """A review dialog is open (tests and automation fill it in)."""
    detail_shown = Signal(int)
    """The detail pane shows this judgment."""
    lists_updated = Signal()
    """A load, a search or a batch of change-sets has been applied to the lists."""
    first_tab_loaded = Signal()
    """While loading: the tab in view is filled (the others follow)."""
    searched = Signal(str)
    """All memories was filled for its current words and filters (the words)."""
    refreshed = Signal()
    """The lists were read again from the store (F5)."""
    quit_requested = Signal()
    """The owner asked to quit the app from this window (Ctrl+Q), as from the tray."""
    batch_done = Signal(object)
    """A ``BatchResult`` after several records were approved, rejected or retired."""
    undone = Signal(str, object)
    """(action undone, the undo's receipts) after the owner took an action back."""
    buttons_updated = Signal()
    """The action buttons' enabled state and tooltips were brought up to date."""
    observation_shown = Signal(int)
    """The Messages tab was asked to show this message (a commitment's source)."""

    def __init__(
        self,
        bridge: EngineBridge,
        parent: QtWidgets.QWidget | None = None,
        *,
        state_file: Path | None = None,
        undo_ms: int = UNDO_MS,
        clock: Clock = system_clock,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("review_window")
        self.setWindowTitle("Review")
        fit_to_screen(self, *DEFAULT_SIZE)
        self._bridge = bridge
        self._tasks = TaskGroup(self._task_failed)
        self._current: dict[str, Any] | None = None
        self._detail_generation = 0
        self._kept: dict[QtWidgets.QTableView, int | None] = {}
        self._removed_at: dict[QtWidgets.QTableView, int | None] = {}
        self.data = ReviewData(bridge, self._tasks, self)
        self.lists: dict[int, JudgmentList] = self.data.lists
        self.audit = self.data.audit
        self.verbs = RecordVerbs(self, bridge, self._tasks)
        self._clock = clock
        self._build()
        # What each empty list says.
        self.empty_states = add_empty_states(
            self.views, self.lists[TAB_ALL], self.messages, TAB_MESSAGES
        )
        self.empty_states[TAB_WORK] = work_empty_state(self.work)
        self.empty_states[TAB_PEOPLE] = people_empty_state(self.people)
        self.undo_bar.timeout_ms = undo_ms
        self.window_state: WindowState | None = None
        if state_file is not None:
            self.window_state = WindowState(
                state_file,
                self,
                {
                    "review": self.splitter,
                    "messages": self.messages.splitter,
                    "work": self.work.splitter,
                    "people": self.people.splitter,
                },
                {
                    view.objectName(): view
                    for view in (
                        *self.views.values(),
                        self.messages.view,
                        self.work.view,
                        self.people.view,
                    )
                },
            )
            self.window_state.restore()
        self.data.first_loaded.connect(self.first_tab_loaded)
        self.data.updated.connect(self._data_updated)
        self.data.scopes_changed.connect(self.search_bar.set_scopes)
        for jlist in self.lists.values():
            jlist.updated.connect(self._refresh_titles)
        everything = self.lists[TAB_ALL]
        everything.updated.connect(self._update_search_note)
        everything.updated.connect(lambda: self.searched.emit(everything.spec.query))

    # --- layout -----------------------------------------------------------------

    def _build(self) -> None:
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setObjectName("tabs")
        # Every tab in view at any scale: narrower titles (elided) instead of scroll
        # arrows, behind which the Work tab hid at 150 %.
        self.tabs.setUsesScrollButtons(False)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)
        self.views: dict[int, QtWidgets.QTableView] = {}
        self.row_menus: dict[int, RowMenu] = {}
        for tab, title in TAB_TITLES.items():
            source = self.audit.model if tab == TAB_AUDIT else self.lists[tab].model
            samples = AUDIT_SAMPLES if tab == TAB_AUDIT else judgment_samples()
            if tab == TAB_RETIRED:
                samples = (*samples, "blocks resaving (#0000)")
            if tab == TAB_PROPOSED:
                samples = (*samples, "from #channel (connector) via source delta")
            view = make_table_view(source, f"view_{tab}", samples)
            if tab in MULTI_SELECT_TABS:
                view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
            view.selectionModel().currentRowChanged.connect(self._current_row_changed)
            view.selectionModel().selectionChanged.connect(self.update_buttons)
            # A reset (a new search or filter, a reload) drops the current row without
            # a signal: the pane and the buttons would stay on a record no longer listed.
            model = view.model()  # the sorting proxy over ``source``
            model.modelAboutToBeReset.connect(partial(self._keep_current, view))
            model.modelReset.connect(partial(self._follow_reset, view))
            # Approve, Reject or Retire removes the selected row: Qt moves the current
            # row elsewhere and leaves it unselected (shown, not highlighted).
            if isinstance(source, JudgmentTableModel):
                source.removing.connect(partial(self._note_removed_current, view))
                source.rowsRemoved.connect(partial(self._select_next_row, view))
            self.row_menus[tab] = RowMenu(view, self._row_buttons, self.buttons_updated)
            self.views[tab] = view
            page: QtWidgets.QWidget = view
            if tab == TAB_ALL:
                page = self._search_page(view)
            elif tab == TAB_PROPOSED:
                page = self._proposed_page(view)
            self.tabs.addTab(page, title)
        self.messages = MessagesPanel(self._bridge, self._tasks)
        self.tabs.insertTab(TAB_MESSAGES, self.messages, "Messages")
        self.work = WorkPanel(self._bridge, self._tasks, clock=self._clock)
        self.tabs.insertTab(TAB_WORK, self.work, "Work")
        self.work.loaded.connect(self._refresh_work_title)
        self.work.dialog_opened.connect(self.dialog_opened)
        self.work.acted.connect(self._work_done)
        self.work.failed.connect(self._work_failed)
        self.work.finished.connect(self.action_finished)
        self.work.source_requested.connect(self.show_observation)
        self._bridge.changed.connect(self._work_changed)
        self.people = PeoplePanel(self._bridge, self._tasks)
        self.tabs.insertTab(TAB_PEOPLE, self.people, "People")
        self.tabs.currentChanged.connect(self._tab_changed)

        self.detail = QtWidgets.QTextBrowser()
        self.detail.setObjectName("detail")
        self.detail.setOpenLinks(False)
        self.detail.setHtml(self._placeholder("Select a memory to see it here."))

        self.record_buttons = RecordButtons(
            {
                "approve": self.verbs.approve,
                "edit": self.verbs.edit_and_approve,
                "reject": self.verbs.reject,
                "retire": self.verbs.retire,
                "purge": self.verbs.purge,
                "lift": self.verbs.lift_tombstone,
            }
        )
        self.buttons = self.record_buttons.buttons

        self.right = right = QtWidgets.QWidget()
        right_layout = QtWidgets.QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.detail, 1)
        right_layout.addLayout(self.record_buttons.bar)

        self.splitter = splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("review_splitter")
        splitter.addWidget(self.tabs)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        central = QtWidgets.QWidget()
        central_layout = QtWidgets.QVBoxLayout(central)
        # The style's margin at the sides: the right-hand buttons must not touch the
        # window's edge (the style's metric follows the screen's scale).
        pm = QtWidgets.QStyle.PixelMetric
        side = max(self.style().pixelMetric(pm.PM_LayoutRightMargin), 6)
        central_layout.setContentsMargins(side, 0, side, 0)
        central_layout.addWidget(splitter, 1)
        self.undo_bar = UndoBar(self)
        central_layout.addWidget(self.undo_bar)
        self.setCentralWidget(central)
        self.row_menus[TAB_MESSAGES] = RowMenu(
            self.messages.view, lambda: [self.messages.purge_button], self.messages.changed
        )

        self.message = QtWidgets.QLabel()
        self.message.setObjectName("message")
        self.statusBar().addWidget(self.message, 1)
        self.list_note = QtWidgets.QLabel()
        self.list_note.setObjectName("list_note")
        self.statusBar().addPermanentWidget(self.list_note)

        # Down and Up move through the list in view natively (it keeps the focus).
        for keys, handler in (
            ("A", self.verbs.approve),
            ("R", self.verbs.reject),
            ("J", self.select_next),
            ("K", self.select_previous),
        ):
            shortcut = QtGui.QShortcut(QtGui.QKeySequence(keys), self)
            shortcut.activated.connect(handler)
        # The platform's standard keys (Ctrl+F, Ctrl+W, Esc, F5), with Ctrl+Q where the
        # platform names no Quit key (some Linux desktops do not).
        keys = QtGui.QKeySequence.StandardKey
        for key, fallback, handler in (
            (keys.Find, "Ctrl+F", self.focus_search),
            (keys.Close, "Ctrl+W", self.close),
            (keys.Cancel, "Esc", self.close),
            (keys.Quit, "Ctrl+Q", self.quit_requested.emit),
            (keys.Refresh, "F5", self.refresh),
        ):
            shortcut = QtGui.QShortcut(self)
            shortcut.setKeys(QtGui.QKeySequence.keyBindings(key) or [QtGui.QKeySequence(fallback)])
            shortcut.activated.connect(handler)

    def _proposed_page(self, view: QtWidgets.QTableView) -> QtWidgets.QWidget:
        """The Proposed list, under the changes to the owner's settings that wait (they
        have no record, so no row of the table)."""
        page = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        self.settings_changes = SettingsChangesPanel(self._bridge, self._tasks)
        self.settings_changes.dialog_opened.connect(self.dialog_opened)
        self.settings_changes.acted.connect(self._settings_change_done)
        self.settings_changes.failed.connect(self._work_failed)
        self.settings_changes.updated.connect(self._refresh_titles)
        layout.addWidget(self.settings_changes)
        layout.addWidget(view, 1)
        return page

    def _settings_change_done(self, action: str, receipt: Receipt) -> None:
        verb = "Approved" if action == "review.approve" else "Rejected"
        self.show_message(
            f"{verb} change {receipt.change_id} to your settings · event {receipt.event_id}"
        )
        self.action_done.emit(action, receipt)

    def _search_page(self, view: QtWidgets.QTableView) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(page)
        layout.setContentsMargins(0, 4, 0, 0)
        self.search_bar = SearchBar()
        self.search_bar.changed.connect(self._search)
        layout.addWidget(self.search_bar)
        self.search_note = QtWidgets.QLabel(NO_CLOSE_MATCH)
        self.search_note.setObjectName("search_note")
        self.search_note.setWordWrap(True)
        self.search_note.setStyleSheet(note_style("muted"))
        self.search_note.hide()
        layout.addWidget(self.search_note)
        layout.addWidget(view, 1)
        return page

    def _update_search_note(self) -> None:
        """Words that no memory contains still find the nearest in meaning, however far:
        say so, or nonsense shows an unrelated memory as if it matched."""
        jlist = self.lists[TAB_ALL]
        rows = [jlist.model.record(r) or {} for r in range(jlist.model.rowCount())]
        by_words = any({"bm25", "trigram"} & set(row.get("found_by") or ()) for row in rows)
        self.search_note.setVisible(jlist.spec.ranked and bool(rows) and not by_words)

    @staticmethod
    def _placeholder(text: str) -> str:
        return f"<p style='color:{MUTED.on()}'>{text}</p>"

    # --- loading, searching, following the store ------------------------------------

    async def load(self) -> None:
        """Fill the tab in view first (``first_tab_loaded``), then everything else."""
        self.data.first_loaded.connect(self._select_in_view)
        try:
            await self.data.load(self.tabs.currentIndex())
            await self.settings_changes.load()
        finally:
            self.data.first_loaded.disconnect(self._select_in_view)

    def _select_in_view(self) -> None:
        self._select_first_if_none(self.tabs.currentIndex())

    @property
    def settled(self) -> bool:
        """No change-set is waiting or being applied."""
        return self.data.settled

    def _data_updated(self, touched: set[int]) -> None:
        current = self._current_id()
        if current is not None and current in touched:
            self._tasks.spawn(self._show_detail(current))
        elif current is None:
            self._select_first_if_none(self.tabs.currentIndex())
        self.update_buttons()  # a lift changes no record, only whether one is blocked
        self.lists_updated.emit()

    def search_now(self) -> None:
        """Search with what the search row shows, without waiting for the pause."""
        self.search_bar.flush()

    def _search(self) -> None:
        self._tasks.spawn(self._run_search())

    async def _run_search(self) -> None:
        jlist = self.lists[TAB_ALL]
        spec = self.search_bar.spec_for(jlist.spec)
        try:
            current = await jlist.set_spec(spec)
        except MamaError as exc:
            self.show_message(f"Search failed: {exc.message}", error=True)
            return
        if current:
            self.lists_updated.emit()

    def refresh(self) -> None:
        """Read every list again from the store (``refreshed`` when done)."""
        self._tasks.spawn(self._refresh())

    async def _refresh(self) -> None:
        await self.data.load(self.tabs.currentIndex())
        await self.settings_changes.load()
        await self.messages.load()
        await self.work.load()
        self.refreshed.emit()

    def _refresh_titles(self) -> None:
        for tab in (TAB_PROPOSED, TAB_GUIDANCE, TAB_RETIRED):
            jlist = self.lists[tab]
            if jlist.loaded_once:
                count = jlist.model.rowCount()
                if tab == TAB_PROPOSED:  # the settings changes waiting above the list
                    count += len(self.settings_changes.changes)
                shown = f"{count}+" if jlist.truncated else str(count)
                self.tabs.setTabText(tab, f"{TAB_TITLES[tab]} ({shown})")
        self._update_list_note()

    def _refresh_work_title(self) -> None:
        """``Work (3)``: the open commitments (and proposed ones), as the lists count."""
        self.tabs.setTabText(TAB_WORK, f"Work ({len(self.work.ids())})")

    def _update_list_note(self) -> None:
        jlist = self.lists.get(self.tabs.currentIndex())
        if jlist is not None and jlist.truncated:
            self.list_note.setText(
                f"Showing the first {jlist.spec.limit}; search in All memories to narrow."
            )
        else:
            self.list_note.clear()

    # --- selection and detail -----------------------------------------------------

    def current_view(self) -> QtWidgets.QTableView:
        tab = self.tabs.currentIndex()
        if tab == TAB_PEOPLE:
            return self.people.view
        return self.views.get(tab, self.work.view if tab == TAB_WORK else self.messages.view)

    def _current_id(self) -> int | None:
        index = self.current_view().currentIndex()
        if not index.isValid():
            return None
        value = index.siblingAtColumn(0).data(ID_ROLE)
        return None if value is None else int(value)

    def _tab_changed(self, tab: int) -> None:
        self.right.setVisible(tab not in OWN_PANE_TABS)  # they have their own panes
        if tab == TAB_MESSAGES:
            self.messages.refresh()
        elif tab == TAB_WORK:
            self.work.refresh()
        elif tab == TAB_PEOPLE:
            self.people.refresh()
        self._select_first_if_none(tab)
        self._current_row_changed()
        self._update_list_note()
        self.current_view().setFocus()

    def _select_first_if_none(self, tab: int) -> None:
        view = self.views.get(tab)
        if view is None or view.selectionModel().hasSelection() or view.model().rowCount() == 0:
            return
        select_row(view, max(view.currentIndex().row(), 0))

    def _note_removed_current(self, view: QtWidgets.QTableView, at: int) -> None:
        """Before the model removes its row ``at``: where the current row was, if it is
        the one going (the selection model moves it away as the removal starts)."""
        index = view.currentIndex()
        removed = index.isValid() and source_row(view, index) == at
        self._removed_at[view] = index.row() if removed else None

    def _select_next_row(self, view: QtWidgets.QTableView, *_args: object) -> None:
        """The row that took the removed current one's place (the next record, as in a
        mail client), or the last, made current and highlighted."""
        at = self._removed_at.pop(view, None)
        rows = view.model().rowCount()
        if at is not None and rows:
            select_row(view, min(at, rows - 1))
        elif view.currentIndex().isValid() and not view.selectionModel().hasSelection():
            select_row(view, view.currentIndex().row())

    def _keep_current(self, view: QtWidgets.QTableView) -> None:
        index = view.currentIndex()
        value = index.siblingAtColumn(0).data(ID_ROLE) if index.isValid() else None
        self._kept[view] = None if value is None else int(value)

    def _follow_reset(self, view: QtWidgets.QTableView) -> None:
        """After a reset, keep the same record selected if it is still listed, else the
        first row; with nothing listed, the pane empties (no action on a hidden record)."""
        kept = self._kept.pop(view, None)
        model = view.model()
        rows = [model.index(r, 0).data(ID_ROLE) for r in range(model.rowCount())]
        if rows:
            select_row(view, rows.index(kept) if kept in rows else 0)
        elif view is self.current_view():
            self._current_row_changed()

    def _current_row_changed(self, *_args: object) -> None:
        judgment_id = self._current_id()
        if judgment_id is None:
            self._detail_generation += 1
            self._current = None
            self.detail.setHtml(self._placeholder("Select a memory to see it here."))
            self.update_buttons()
            return
        self._tasks.spawn(self._show_detail(judgment_id))

    async def _show_detail(self, judgment_id: int) -> None:
        self._detail_generation += 1
        generation = self._detail_generation
        try:
            result = await self._bridge.dispatch("memory.read", {"id": judgment_id})
        except MamaError as exc:
            if generation == self._detail_generation:
                self._current = None
                self.detail.setHtml(self._placeholder(f"#{judgment_id}: {exc.message}"))
                self.update_buttons()
            return
        if generation != self._detail_generation:
            return  # the owner has moved on to another row meanwhile
        self._current = result
        self.detail.setHtml(record_html(result))
        self.update_buttons()
        self.detail_shown.emit(judgment_id)

    def update_buttons(self, *_args: object) -> None:
        """The buttons as the core's ``allowed`` says for the record shown, or for every
        selected row (``ui.review.record_verbs``)."""
        self.record_buttons.show(self.verbs.states())
        self.buttons_updated.emit()

    def several_selected(self) -> bool:
        """More than one row is selected in the list in view (a batch)."""
        view = self.views.get(self.tabs.currentIndex())
        return view is not None and len(view.selectionModel().selectedRows(0)) > 1

    def selected_records(self) -> list[dict[str, Any]]:
        """The rows selected in the list in view, top to bottom (as listed)."""
        view = self.views.get(self.tabs.currentIndex())
        if view is None:
            return []
        rows = sorted(view.selectionModel().selectedRows(0), key=lambda i: i.row())
        records = [index.data(RECORD_ROLE) for index in rows]
        return [dict(r) for r in records if isinstance(r, dict)]

    def _row_buttons(self) -> list[QtWidgets.QPushButton]:
        return list(self.buttons.values())

    def current_record(self) -> dict[str, Any] | None:
        """The record in the detail pane (``memory.read``'s ``record``)."""
        if self._current is None:
            return None
        record = self._current.get("record")
        return record if isinstance(record, dict) else None

    def current_tombstone(self) -> TombstoneEntry | None:
        """The unlifted tombstone made from the record in the detail pane, if any."""
        record = self.current_record()
        return None if record is None else self.data.active_tombstone(int(record["id"]))

    def shown_history(self) -> list[dict[str, Any]]:
        """The records the one in the pane replaced (``memory.read``'s ``history``)."""
        return list((self._current or {}).get("history") or [])

    def target(self) -> dict[str, Any] | None:
        """The record in the pane, only while it is the row selected in the list."""
        record = self.current_record()
        if record is None or record.get("id") != self._current_id():
            return None
        return dict(record)

    def current_status(self) -> str | None:
        record = self.current_record()
        return None if record is None else str(record.get("status"))

    def select_id(self, judgment_id: int) -> bool:
        """Select ``judgment_id`` in the current tab; False if it is not listed there."""
        view = self.current_view()
        model = view.model()
        for row in range(model.rowCount()):
            if model.index(row, 0).data(ID_ROLE) == judgment_id:
                select_row(view, row)
                return True
        return False

    def select_next(self) -> None:
        self._move(1)

    def select_previous(self) -> None:
        self._move(-1)

    def _move(self, step: int) -> None:
        view = self.current_view()
        rows = view.model().rowCount()
        if rows == 0:
            return
        row = view.currentIndex().row()
        select_row(view, 0 if row < 0 else min(max(row + step, 0), rows - 1))
        view.setFocus()

    def show_tab(self, tab: int) -> None:
        self.tabs.setCurrentIndex(tab)

    def focus_search(self) -> None:
        """Show All memories with the cursor in the search field."""
        self.tabs.setCurrentIndex(TAB_ALL)
        self.search_bar.focus()

    # --- the Work tab ----------------------------------------------------------------

    def _work_done(self, action: str, receipt: Receipt) -> None:
        self.show_message(self.work.note.text())
        self.action_done.emit(action, receipt)

    def _work_failed(self, action: str, message: str) -> None:
        self.show_message(message, error=True)
        self.action_failed.emit(action, message)

    def _work_changed(self, _changes: object) -> None:
        """A commit may have added, closed or moved a commitment: read the list again
        once it has been shown (a hidden, never-opened tab waits until it is opened)."""
        if self.work.loaded_once:
            self.work.refresh()
        if self.people.loaded_once and self.tabs.currentIndex() == TAB_PEOPLE:
            self.people.refresh()

    def show_observation(self, observation_id: int) -> None:
        """The Messages tab with ``observation_id`` selected (a commitment's source)."""
        self.tabs.setCurrentIndex(TAB_MESSAGES)
        self._tasks.spawn(self._select_observation(observation_id))

    async def _select_observation(self, observation_id: int) -> None:
        await self.messages.load()
        if not self.messages.select(observation_id):
            self.show_message(
                f"Message #{observation_id} is not among the newest listed here; "
                "the Work tab shows its text.",
                error=True,
            )
        self.observation_shown.emit(observation_id)

    # --- messages and closing ---------------------------------------------------------

    def show_message(self, text: str, *, error: bool = False) -> None:
        """One line under the lists: what just happened, or why it did not."""
        self.message.setStyleSheet(note_style("error") if error else "")
        self.message.setText(text)

    def _task_failed(self, exc: BaseException) -> None:
        if isinstance(exc, MamaError):
            self.show_message(exc.message, error=True)
            return
        log.error("review window task failed", exc_info=exc)
        self.show_message(
            "Something went wrong inside MAMA; the details are in the log.", error=True
        )

    async def aclose(self) -> None:
        """Stop background work (before the engine closes)."""
        self.data.close()
        self.search_bar.stop()
        await self._tasks.aclose()
