"""Several records at once: approve, reject or retire each selected one as its own owner
action — the same catalog call, payload and receipt as the single-record action — and
then one summary line naming what was done and what was not (and why).

A refusal of one record does not stop or undo the others: each receipt already stands
in the store when the next call starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mama_core.errors import MamaError
from mama_core.receipt import Receipt
from ui.qt import QtWidgets
from ui.review.actions import FORBID_TEXT, VERBS, decision_payload, retire_payload
from ui.review.dialogs import ReasonDialog
from ui.tasks import await_dialog

if TYPE_CHECKING:
    from ui.bridge import EngineBridge

BATCH_ACTIONS: tuple[str, ...] = ("review.approve", "review.reject", "memory.retire")


@dataclass
class BatchResult:
    """What a batch did: each record with its receipt, or with why it was refused."""

    action: str
    done: list[tuple[dict[str, Any], Receipt]] = field(default_factory=list)
    failed: list[tuple[dict[str, Any], str]] = field(default_factory=list)

    def summary(self) -> str:
        """``Approved 2 of 3: #4, #5 · not done: #6: Judgment 6 is active; …``."""
        total = len(self.done) + len(self.failed)
        line = f"{VERBS[self.action]} {len(self.done)} of {total}"
        if self.done:
            line += ": " + ", ".join(f"#{record['id']}" for record, _ in self.done)
        if self.failed:
            line += " · not done: " + "; ".join(
                f"#{record['id']}: {message}" for record, message in self.failed
            )
        return line


class BatchActions:
    """One question for the whole batch (the reason), then one catalog call per record."""

    def __init__(
        self,
        bridge: EngineBridge,
        parent: QtWidgets.QWidget,
        on_dialog: Callable[[QtWidgets.QDialog], None],
    ) -> None:
        self._bridge = bridge
        self._parent = parent
        self._on_dialog = on_dialog

    async def run(self, action: str, records: list[dict[str, Any]]) -> BatchResult | None:
        """Do ``action`` on each of ``records``; None when the owner cancelled."""
        payloads: list[dict[str, Any]]
        if action == "review.approve":
            payloads = [decision_payload(record) for record in records]
        else:
            asked = await self._ask_reason(action, records)
            if asked is None:
                return None
            reason, forbid = asked
            if action == "review.reject":
                payloads = [{**decision_payload(r), "reason": reason} for r in records]
                if forbid:
                    for payload in payloads:
                        payload["forbid_resave"] = True
            else:
                payloads = [retire_payload(r, reason, forbid) for r in records]
        result = BatchResult(action)
        for record, payload in zip(records, payloads, strict=True):
            try:
                receipt = await self._bridge.mutate(action, payload)
            except MamaError as exc:
                result.failed.append((record, exc.message))
            else:
                result.done.append((record, receipt))
        return result

    async def _ask_reason(
        self, action: str, records: list[dict[str, Any]]
    ) -> tuple[str, bool] | None:
        ids = ", ".join(f"#{record['id']}" for record in records)
        changes = any("change_id" in decision_payload(record) for record in records)
        if action == "review.reject":
            title, prompt, ok = "Reject proposals", f"Reject {len(records)}: {ids}", "Reject all"
        else:
            title, ok = "Retire memories", "Retire all"
            prompt = f"Stop believing {len(records)}: {ids}"
        dialog = ReasonDialog(
            self._parent,
            title=title,
            prompt=prompt,
            ok_text=ok,
            forbid_text=None if changes else FORBID_TEXT,
        )
        self._on_dialog(dialog)
        accepted = await await_dialog(dialog) == QtWidgets.QDialog.DialogCode.Accepted
        values = dialog.values()
        dialog.deleteLater()
        return values if accepted else None
