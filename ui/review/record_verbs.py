"""What the owner can do with the records the review window shows: its buttons, what
they say, and the owner actions they start.

Each button is enabled when the core's ``allowed`` for the record shown (or for every
selected row) holds its verb (``mama_core.memory.verbs``), with a tooltip saying what
it does or why it is not available. The states are computed without Qt
(``single_states``, ``several_states``); ``RecordButtons`` only shows them.
``RecordVerbs`` runs the verbs, one owner action at a time: the dialog and the catalog
call (``ui.review.actions``, ``ui.review.batch_actions``), the result in the window's
message line, and the offer to undo it (``ui.review.undo_bar``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from mama_core.errors import MamaError
from mama_core.memory.verbs import Verb, may
from mama_core.model import Status
from mama_core.receipt import Receipt
from ui.qt import QtWidgets
from ui.review.actions import ReviewActions, receipt_line
from ui.review.batch_actions import BatchActions, BatchResult
from ui.review.undo_bar import UNDOABLE, undo, undoable, undone_line

if TYPE_CHECKING:
    from ui.bridge import EngineBridge
    from ui.review.window import ReviewWindow
    from ui.tasks import TaskGroup

log = logging.getLogger(__name__)

Work = Callable[[], Awaitable[Receipt | None]]
Pairs = list[tuple[dict[str, Any], Receipt]]

States = dict[str, tuple[bool, str]]
"""Each button's (enabled, tooltip), by name."""

BUTTONS: tuple[tuple[str, str], ...] = (
    ("approve", "&Approve"),
    ("edit", "&Edit && approve…"),
    ("reject", "&Reject…"),
    ("retire", "Re&tire…"),
    ("purge", "&Purge…"),
    ("lift", "&Lift tombstone…"),
)
"""Each button's name and label, in the order they are laid out."""

BUTTON_VERBS: dict[str, Verb] = {
    "approve": Verb.APPROVE,
    "edit": Verb.EDIT_APPROVE,
    "reject": Verb.REJECT,
    "retire": Verb.RETIRE,
    "purge": Verb.PURGE,
}
"""The buttons that carry a verb of the core's table (Lift is about a tombstone)."""

BATCH_VERBS: dict[str, Verb] = {
    "review.approve": Verb.APPROVE,
    "review.reject": Verb.REJECT,
    "memory.retire": Verb.RETIRE,
}
"""The actions several selected rows can take at once, each row by its own ``allowed``."""

BUSY = "Wait for the action in progress to finish"

DOES: dict[str, str] = {
    "approve": "Approve the proposal (A)",
    "edit": "Change the proposal's text, then approve it",
    "reject": "Reject the proposal with a reason (R)",
    "retire": "Retire this memory with a reason; it stops guiding the agent",
    "purge": "Erase this memory's text for good",
    "lift": "Let this text be saved again",
}

WHY_NOT: dict[str, str] = {
    "approve": "Select a proposal to approve it",
    "edit": "Select a proposal to edit and approve it",
    "reject": "Select a proposal to reject it",
    "retire": "Select an active memory to retire it",
    "purge": "Select a memory to purge it",
    "lift": "Select a retired memory whose text is blocked to lift its tombstone",
}


def single_states(record: Mapping[str, Any] | None, *, busy: bool, tombstone: bool) -> States:
    """The buttons for one record shown (``memory.read``'s record, or None): a verb's
    button when its ``allowed`` has the verb, Lift when a tombstone made from it stands."""
    enabled = {
        name: record is not None and may(record, verb) for name, verb in BUTTON_VERBS.items()
    }
    enabled["lift"] = tombstone
    why = dict(WHY_NOT)
    if record is not None and record.get("status") == Status.PURGED:
        why["purge"] = "This memory is already purged"
    states: States = {}
    for name, _label in BUTTONS:
        on = not busy and enabled[name]
        states[name] = (on, DOES[name] if on else BUSY if busy else why[name])
    return states


def several_states(records: list[dict[str, Any]], *, busy: bool) -> States:
    """The buttons while several ``records`` are selected: Approve, Reject and Retire
    when every row's ``allowed`` has the verb, the rest one at a time."""
    count = len(records)
    enabled = {
        name: all(may(r, BUTTON_VERBS[name]) for r in records)
        for name in ("approve", "reject", "retire")
    }
    does = {
        "approve": f"Approve the {count} selected proposals, each on its own (A)",
        "reject": f"Reject the {count} selected proposals with one reason (R)",
        "retire": f"Retire the {count} selected memories with one reason",
    }
    why = {
        "approve": "Some of the selected rows are not proposals",
        "reject": "Some of the selected rows are not proposals",
        "retire": "Some of the selected memories are not active",
        "edit": "Select one proposal to edit and approve it",
        "purge": "Select one memory to purge it",
        "lift": "Select one retired memory to lift its tombstone",
    }
    states: States = {}
    for name, why_not in why.items():
        if not busy and enabled.get(name, False):
            states[name] = (True, does[name])
        elif busy and name in enabled:
            states[name] = (False, BUSY)
        else:
            states[name] = (False, why_not)
    return states


def qualifies(action: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a selected row may take batch ``action`` (its own ``allowed``)."""
    verb = BATCH_VERBS[action]
    return lambda record: may(record, verb)


class RecordButtons:
    """The six buttons under the detail pane, two rows of three (every button stays
    reachable in a narrow pane or at 200 %), showing the states they are given."""

    def __init__(self, handlers: Mapping[str, Callable[[], None]]) -> None:
        self.bar = QtWidgets.QGridLayout()
        self.buttons: dict[str, QtWidgets.QPushButton] = {}
        for at, (name, text) in enumerate(BUTTONS):
            button = QtWidgets.QPushButton(text)
            button.setObjectName(f"{name}_button")
            button.clicked.connect(handlers[name])
            button.setEnabled(False)
            self.bar.addWidget(button, at // 3, at % 3)
            self.buttons[name] = button

    def show(self, states: States) -> None:
        """Enable each button and set its tooltip as ``states`` say."""
        for name, (enabled, tooltip) in states.items():
            self.buttons[name].setEnabled(enabled)
            self.buttons[name].setToolTip(tooltip)


class RecordVerbs:
    """The owner's verbs on the record shown or the rows selected in ``window``, one
    action at a time: each on the record shown when it was asked for, its outcome said
    in the window's message line and signals, and an undo offered where there is one."""

    def __init__(self, window: ReviewWindow, bridge: EngineBridge, tasks: TaskGroup) -> None:
        self._window = window
        self._bridge = bridge
        self._tasks = tasks
        self.busy = False
        """An owner action (or an undo) is running: the buttons wait for it."""
        self.owner_actions = ReviewActions(bridge, window, window.dialog_opened.emit)
        self.batch_actions = BatchActions(bridge, window, window.dialog_opened.emit)

    def states(self) -> States:
        """The buttons for what the window shows now."""
        w = self._window
        if w.several_selected():
            return several_states(w.selected_records(), busy=self.busy)
        tombstone = w.current_tombstone() is not None
        return single_states(w.current_record(), busy=self.busy, tombstone=tombstone)

    def _may(self, verb: Verb) -> bool:
        """The record shown says the owner may ``verb`` it now (``memory.read``'s ``allowed``)."""
        record = self._window.current_record()
        return record is not None and may(record, verb)

    def approve(self) -> None:
        if self._window.several_selected():
            self._start_batch("review.approve")
        elif self._may(Verb.APPROVE) and (record := self._window.target()) is not None:
            self._start("review.approve", lambda: self.owner_actions.approve(record), record=record)

    def edit_and_approve(self) -> None:
        if self._may(Verb.EDIT_APPROVE) and (record := self._window.target()) is not None:
            self._start("memory.save", lambda: self.owner_actions.edit_and_approve(record))

    def reject(self) -> None:
        if self._window.several_selected():
            self._start_batch("review.reject")
        elif self._may(Verb.REJECT) and (record := self._window.target()) is not None:
            self._start("review.reject", lambda: self.owner_actions.reject(record), record=record)

    def retire(self) -> None:
        if self._window.several_selected():
            self._start_batch("memory.retire")
        elif self._may(Verb.RETIRE) and (record := self._window.target()) is not None:
            self._start("memory.retire", lambda: self.owner_actions.retire(record), record=record)

    def purge(self) -> None:
        if self._may(Verb.PURGE) and (record := self._window.target()) is not None:
            older = len(self._window.shown_history())
            self._start("memory.purge", lambda: self.owner_actions.purge(record, older))

    def lift_tombstone(self) -> None:
        tombstone = self._window.current_tombstone()
        if tombstone is not None and (record := self._window.target()) is not None:
            self._start("tombstone.lift", lambda: self.owner_actions.lift(record, tombstone))

    def _begin(self) -> None:
        self.busy = True
        self._window.undo_bar.dismiss()  # a new action keeps the last one
        self._window.update_buttons()

    def _end(self) -> None:
        self.busy = False
        self._window.update_buttons()

    def _start(self, action: str, work: Work, *, record: dict[str, Any] | None = None) -> None:
        """One owner action at a time, on the record shown when it was asked for."""
        if self.busy:
            return
        self._begin()
        self._tasks.spawn(self._run_action(action, work, record))

    def _start_batch(self, action: str) -> None:
        """Several selected records, each its own owner action (``ui.review.batch_actions``),
        when every one's ``allowed`` has its verb."""
        records = self._window.selected_records()
        if self.busy or not records or not all(map(qualifies(action), records)):
            return
        self._begin()
        self._tasks.spawn(self._run_batch(action, records))

    async def _run_batch(self, action: str, records: list[dict[str, Any]]) -> None:
        w = self._window
        try:
            result = await self.batch_actions.run(action, records)
        finally:
            self._end()
            w.action_finished.emit(action)
        if result is None:  # the owner cancelled the dialog
            return
        w.show_message(result.summary(), error=bool(result.failed))
        w.batch_done.emit(result)
        self._offer_undo(action, result)

    def _offer_undo(self, action: str, done: BatchResult) -> None:
        """Offer to take back what ``done`` wrote (``ui.review.undo_bar``)."""
        if not undoable(action, done.done):
            return
        pairs = list(done.done)
        single = len(pairs) == 1 and not done.failed
        text = receipt_line(action, pairs[0][1]) if single else done.summary()
        # No number after "Undo": the undo writes a copy under a new one (said after it).
        self._window.undo_bar.offer(
            f"{text} — Undo {UNDOABLE[action]}", partial(self._start_undo, action, pairs)
        )

    def _start_undo(self, action: str, pairs: Pairs) -> None:
        if self.busy:
            self._window.show_message("Wait for the action in progress to finish, then undo.")
            return
        self.busy = True
        self._window.update_buttons()
        self._tasks.spawn(self._run_undo(action, pairs))

    async def _run_undo(self, action: str, pairs: Pairs) -> None:
        w = self._window
        try:
            receipts = await undo(self._bridge, action, pairs)
        except MamaError as exc:
            log.info("undo of %s refused: %s: %s", action, exc.code, exc.message)
            w.show_message(f"Could not undo: {exc.message}", error=True)
            return
        finally:
            self._end()
        w.show_message(undone_line(receipts))
        w.undone.emit(action, receipts)

    async def _run_action(self, action: str, work: Work, record: dict[str, Any] | None) -> None:
        w = self._window
        try:
            receipt = await work()
        except MamaError as exc:
            log.info("%s refused: %s: %s", action, exc.code, exc.message)
            w.show_message(exc.message, error=True)
            w.action_failed.emit(action, exc.message)
            return
        finally:
            self._end()
            w.action_finished.emit(action)
        if receipt is None:  # the owner cancelled the dialog
            return
        w.show_message(receipt_line(action, receipt))
        w.action_done.emit(action, receipt)
        if record is not None:
            self._offer_undo(action, BatchResult(action, [(record, receipt)]))
