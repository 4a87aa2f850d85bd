"""The review window's record buttons and what they say: each is enabled when the core's
``allowed`` for the record shown (or for every selected row) holds its verb
(``mama_core.memory.verbs``), with a tooltip saying what it does or why it is not
available. The states are computed without Qt (``single_states``, ``several_states``);
``RecordButtons`` only shows them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mama_core.memory.verbs import Verb, may
from mama_core.model import Status
from ui.qt import QtWidgets

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
