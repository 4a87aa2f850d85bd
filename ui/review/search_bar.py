"""The All memories tab's search row: words, kind, scope and status, debounced.

Typing or changing a filter restarts a short timer; when it fires, ``changed``
asks the window to search again, so a search runs once per pause in typing,
not once per key.
"""

from __future__ import annotations

from mama_core.model import KINDS, RETIRED_STATUSES, STATUSES
from ui.qt import QtCore, QtWidgets, Signal
from ui.review.lists import ListSpec

SEARCH_DEBOUNCE_MS = 250

STATUS_FILTERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Any status", STATUSES),
    ("Active", ("active",)),
    ("Proposed", ("proposed",)),
    ("Retired", RETIRED_STATUSES),
)


class SearchBar(QtWidgets.QWidget):
    """A search field and three filters; ``changed`` after the owner pauses."""

    changed = Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.search = QtWidgets.QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search memories (words or meaning)…")
        self.search.setClearButtonEnabled(True)
        self.kind_filter = QtWidgets.QComboBox()
        self.kind_filter.setObjectName("kind_filter")
        self.kind_filter.addItem("Any kind", None)
        for kind in KINDS:
            self.kind_filter.addItem(kind, kind)
        self.scope_filter = QtWidgets.QComboBox()
        self.scope_filter.setObjectName("scope_filter")
        self.scope_filter.addItem("Any scope", None)
        self.status_filter = QtWidgets.QComboBox()
        self.status_filter.setObjectName("status_filter")
        for label, statuses in STATUS_FILTERS:
            self.status_filter.addItem(label, statuses)
        row.addWidget(self.search, 1)
        row.addWidget(self.kind_filter)
        row.addWidget(self.scope_filter)
        row.addWidget(self.status_filter)

        self._timer = QtCore.QTimer(self, singleShot=True, interval=SEARCH_DEBOUNCE_MS)
        self._timer.timeout.connect(self.changed)
        self.search.textChanged.connect(lambda _text: self._timer.start())
        for combo in (self.kind_filter, self.scope_filter, self.status_filter):
            combo.currentIndexChanged.connect(lambda _i: self._timer.start())

    def spec_for(self, base: ListSpec) -> ListSpec:
        """``base`` with the words and filters shown here."""
        kind = self.kind_filter.currentData()
        scope = self.scope_filter.currentData()
        return base.with_filters(
            query=self.search.text().strip(),
            statuses=tuple(self.status_filter.currentData() or STATUSES),
            kinds=None if kind is None else (kind,),
            scopes=None if scope is None else (scope,),
        )

    def set_scopes(self, names: list[str]) -> None:
        """Offer these scopes, keeping the one chosen if it is still there."""
        current = self.scope_filter.currentData()
        self.scope_filter.blockSignals(True)
        self.scope_filter.clear()
        self.scope_filter.addItem("Any scope", None)
        for name in names:
            self.scope_filter.addItem(name, name)
        self.scope_filter.setCurrentIndex(max(self.scope_filter.findData(current), 0))
        self.scope_filter.blockSignals(False)

    def flush(self) -> None:
        """Search now instead of after the pause."""
        self._timer.stop()
        self.changed.emit()

    def stop(self) -> None:
        self._timer.stop()

    def focus(self) -> None:
        self.search.setFocus()
        self.search.selectAll()
