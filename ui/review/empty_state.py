"""What an empty list of the review window says: what will appear there, and how.

An empty table is a grey void that tells a new owner nothing. Each list gets a
placeholder drawn over its empty view (as Anki's browser and Syncthing do):
one or two sentences on what the list holds and what puts something there.
It shows once the list has been filled at least once, so a list still loading
never claims to be empty, and hides as soon as a row arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ui.palette import MUTED
from ui.qt import Qt, QtCore, QtGui, QtWidgets
from ui.review.data import TAB_ALL, TAB_AUDIT, TAB_GUIDANCE, TAB_PROPOSED, TAB_RETIRED
from ui.review.lists import ALL_MEMORIES

if TYPE_CHECKING:
    from ui.review.lists import JudgmentList, ListSpec
    from ui.review.messages_panel import MessagesPanel
    from ui.review.people_panel import PeoplePanel
    from ui.review.work_panel import WorkPanel

EMPTY_PROPOSED = (
    "No proposals waiting.\n\nWhen an agent proposes guidance (a preference, constraint, "
    "lesson or workflow) or a change to one of your memories, it appears here for you to "
    "approve or reject."
)
EMPTY_GUIDANCE = (
    "No active guidance yet.\n\nThe preferences, constraints, lessons and workflows that "
    "steer the agent appear here once you state one (tell MAMA in Telegram, or "
    "mama remember … --kind preference) or approve a proposal."
)
EMPTY_ALL = (
    "Nothing remembered yet.\n\nWhat you ask MAMA to remember (in Telegram, or with "
    "mama remember) and what the agent saves appears here, searchable."
)
EMPTY_SEARCH = "No memory matches these words and filters.\n\nTry other words or widen the filters."
EMPTY_RETIRED = (
    "Nothing retired.\n\nMemories you retire, replace or purge, and proposals you reject, "
    "move here with who did it and why."
)
EMPTY_AUDIT = (
    "No events yet.\n\nEvery change to the memory (a save, an approval, a retirement, a "
    "purge) is logged here, newest first."
)
EMPTY_MESSAGES = (
    "No messages kept yet.\n\nWhat you send MAMA on Telegram and its replies, and what "
    "your connectors read from Slack, mail or Trello (Settings → Connectors), are kept "
    "here as they arrived; you can purge any of them for good."
)

EMPTY_WORK = (
    "Nothing open.\n\nWhat you promised and what others owe you appear here, soonest due "
    "first, once you tell MAMA about one or approve one the agent found in your messages."
)

EMPTY_PEOPLE = (
    "No one known yet.\n\nThe people named in your commitments, the authors of what your "
    "connectors read and the people in your meetings appear here; select one to see "
    "what MAMA knows about them."
)


class EmptyState(QtCore.QObject):
    """A placeholder label over ``view`` while its model has no rows."""

    def __init__(self, view: QtWidgets.QAbstractItemView, text: str | Callable[[], str]) -> None:
        super().__init__(view)
        self._view = view
        self._text = text if callable(text) else (lambda: text)
        self._filled = False
        self._label: QtWidgets.QLabel | None = None
        view.viewport().installEventFilter(self)
        model = view.model()
        model.modelReset.connect(self.filled)
        model.rowsInserted.connect(self.filled)
        model.rowsRemoved.connect(self.filled)
        model.layoutChanged.connect(self.update)

    @property
    def label(self) -> QtWidgets.QLabel:
        """The placeholder, made the first time a list is empty (most lists never are)."""
        if self._label is None:
            label = QtWidgets.QLabel(self._view.viewport())
            label.setObjectName("empty_state")
            label.setWordWrap(True)
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            label.setContentsMargins(24, 24, 24, 24)
            label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            label.hide()
            self._label = label
        return self._label

    @property
    def shown(self) -> bool:
        """The placeholder is what the list shows now."""
        return self._label is not None and self._label.isVisibleTo(self._view)

    def text(self) -> str:
        return "" if self._label is None else self._label.text()

    def filled(self, *_args: object) -> None:
        """The list was filled (perhaps with nothing): from now on, empty means empty."""
        self._filled = True
        self.update()

    def update(self, *_args: object) -> None:
        """Show the placeholder, with its current text, if the list is empty."""
        empty = self._filled and self._view.model().rowCount() == 0
        if not empty:
            if self._label is not None:
                self._label.hide()
            return
        label = self.label
        label.setText(self._text())
        self._colour(label)
        label.setGeometry(self._view.viewport().rect())
        label.show()

    def _colour(self, label: QtWidgets.QLabel) -> None:
        palette = label.palette()
        colour = QtGui.QColor(MUTED.on(self._view.palette()))
        for role in (QtGui.QPalette.ColorRole.WindowText, QtGui.QPalette.ColorRole.Text):
            palette.setColor(role, colour)  # over a list's Base it draws with Text
        label.setPalette(palette)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if self._label is None:
            return False
        if event.type() == QtCore.QEvent.Type.Resize:
            self._label.setGeometry(self._view.viewport().rect())
        elif event.type() == QtCore.QEvent.Type.PaletteChange:
            self.update()
        return False


def add_empty_states(
    views: dict[int, QtWidgets.QTableView],
    everything: JudgmentList,
    messages: MessagesPanel,
    messages_tab: int,
) -> dict[int, EmptyState]:
    """A placeholder for every list of the review window, by tab: ``views`` are the
    memory lists, ``everything`` the All memories list (its search decides the text)."""
    texts: dict[int, str | Callable[[], str]] = {
        TAB_PROPOSED: EMPTY_PROPOSED,
        TAB_GUIDANCE: EMPTY_GUIDANCE,
        TAB_ALL: lambda: EMPTY_SEARCH if narrowed(everything.spec) else EMPTY_ALL,
        TAB_RETIRED: EMPTY_RETIRED,
        TAB_AUDIT: EMPTY_AUDIT,
    }
    states = {tab: EmptyState(views[tab], text) for tab, text in texts.items()}
    kept = EmptyState(messages.view, EMPTY_MESSAGES)
    messages.loaded.connect(kept.filled)
    states[messages_tab] = kept
    return states


def narrowed(spec: ListSpec) -> bool:
    """Whether search words or a filter narrow All memories (so empty means no match)."""
    plain = spec.with_filters(query="", statuses=ALL_MEMORIES.statuses, kinds=None, scopes=None)
    return bool(spec.query.strip()) or plain != spec


def work_empty_state(work: WorkPanel) -> EmptyState:
    """The Work tab's placeholder, shown once its list has been read."""
    state = EmptyState(work.view, EMPTY_WORK)
    work.loaded.connect(state.filled)
    return state


def people_empty_state(people: PeoplePanel) -> EmptyState:
    """The People tab's placeholder, shown once its list has been read."""
    state = EmptyState(people.view, EMPTY_PEOPLE)
    people.loaded.connect(state.filled)
    return state
