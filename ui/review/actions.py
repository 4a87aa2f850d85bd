"""The owner's review actions: ask what is needed, then one catalog call as the owner.

Approve, Edit & approve (an owner save that replaces the proposal), Reject
(a reason, optionally a tombstone), Retire (a reason, optionally "don't let it
come back"), Purge (a confirmation naming what is erased) and Lift a tombstone
(a confirmation naming the text it lets back, and why). Each returns the
catalog's receipt, or None when the owner cancelled its dialog; a refusal
arrives as the ``MamaError`` the catalog raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mama_core.json_types import JsonObject
from mama_core.model import Status
from mama_core.receipt import Receipt
from ui.qt import QtWidgets
from ui.review.dialogs import EditDialog, PurgeDialog, ReasonDialog
from ui.tasks import await_dialog
from ui.words import action_word, status_word

if TYPE_CHECKING:
    from mama_core.memory.results import TombstoneEntry
    from ui.bridge import EngineBridge

FORBID_TEXT = "Don't let it come back (refuse saving it again)"

VERBS: dict[str, str] = {
    "review.approve": "Approved",
    "review.reject": "Rejected",
    "memory.retire": "Retired",
    "memory.purge": "Erased",
    "memory.save": "Saved and approved",
    "tombstone.lift": "Lifted the tombstone on",
}


def receipt_line(action: str, receipt: Receipt) -> str:
    """``Approved #12 (active)``: what the message line says after an action (the event
    number is the log's, not the owner's: the Audit log tab shows it)."""
    status = receipt.status
    extra = ""
    if receipt.observations_purged:
        extra += f" · {len(receipt.observations_purged)} message(s) erased"
    if receipt.backups_removed:
        extra += f" · {len(receipt.backups_removed)} backup(s) deleted"
    if receipt.wal == "pending":
        extra += " · the write-ahead log is cleared once another process stops reading"
    return (
        f"{VERBS.get(action, action_word(action).capitalize())} #{receipt.judgment_id}"
        + (f" ({status_word(status)})" if status else "")
        + extra
    )


class ReviewActions:
    """Owner actions on one record, with their dialogs parented to ``parent``."""

    def __init__(
        self,
        bridge: EngineBridge,
        parent: QtWidgets.QWidget,
        on_dialog: Callable[[QtWidgets.QDialog], None],
    ) -> None:
        self._bridge = bridge
        self._parent = parent
        self._on_dialog = on_dialog

    async def _ask(self, dialog: QtWidgets.QDialog) -> bool:
        self._on_dialog(dialog)
        accepted = await await_dialog(dialog) == QtWidgets.QDialog.DialogCode.Accepted
        dialog.deleteLater()
        return accepted

    async def approve(self, record: dict[str, Any]) -> Receipt:
        return await self._bridge.mutate("review.approve", decision_payload(record))

    async def edit_and_approve(self, record: dict[str, Any]) -> Receipt | None:
        dialog = EditDialog(self._parent, record)
        if not await self._ask(dialog):
            return None
        return await self._bridge.mutate("memory.save", dialog.payload())

    async def reject(self, record: dict[str, Any]) -> Receipt | None:
        change = record.get("pending_change") if record.get("status") != Status.PROPOSED else None
        prompt = f"Reject #{record['id']}: {record.get('summary', '')}"
        if change:
            prompt = f"Reject the proposal to {change.get('description', '')}"
        dialog = ReasonDialog(
            self._parent,
            title="Reject a proposal",
            prompt=prompt,
            ok_text="Reject",
            forbid_text=None if change else FORBID_TEXT,
        )
        if not await self._ask(dialog):
            return None
        reason, forbid = dialog.values()
        payload: JsonObject = {**decision_payload(record), "reason": reason}
        if forbid:
            payload["forbid_resave"] = True
        return await self._bridge.mutate("review.reject", payload)

    async def retire(self, record: dict[str, Any]) -> Receipt | None:
        dialog = ReasonDialog(
            self._parent,
            title="Retire a memory",
            prompt=f"Stop believing #{record['id']}: {record.get('summary', '')}",
            ok_text="Retire",
            forbid_text=FORBID_TEXT,
        )
        if not await self._ask(dialog):
            return None
        reason, forbid = dialog.values()
        return await self._bridge.mutate("memory.retire", retire_payload(record, reason, forbid))

    async def lift(self, record: dict[str, Any], tombstone: TombstoneEntry) -> Receipt | None:
        from ui.review.models import tombstone_note

        dialog = ReasonDialog(
            self._parent,
            title="Lift a tombstone",
            prompt=(
                f"Allow #{record['id']} to be saved again: {record.get('summary', '')}\n\n"
                f"{tombstone_note(tombstone)}"
            ),
            ok_text="Lift",
        )
        if not await self._ask(dialog):
            return None
        reason, _ = dialog.values()
        payload = {"tombstone_id": tombstone.id, "reason": reason}
        return await self._bridge.mutate("tombstone.lift", payload)

    async def purge(self, record: dict[str, Any], older: int) -> Receipt | None:
        found = await self._bridge.dispatch("memory.quotes", {"id": int(record["id"])})
        dialog = PurgeDialog(self._parent, record, older, list(found["observations"]))
        if not await self._ask(dialog):
            return None
        reason, include_chain = dialog.values()
        payload: JsonObject = {"id": int(record["id"]), "reason": reason}
        if include_chain:
            payload["include_chain"] = True
        quoting = dialog.observation_ids()
        if quoting:
            payload["observation_ids"] = quoting
        return await self._bridge.mutate("memory.purge", payload)


def retire_payload(record: dict[str, Any], reason: str, forbid: bool) -> JsonObject:
    """The ``memory.retire`` input of an owner's Retire (single or several at once)."""
    payload: JsonObject = {"id": int(record["id"]), "reason": reason, "status": "stale"}
    if forbid:
        payload["forbid_resave"] = True
    return payload


def decision_payload(record: dict[str, Any]) -> JsonObject:
    """The record an approve or reject decides, and the proposed change shown with it
    (so a change made after the owner looked is not decided unseen)."""
    payload: JsonObject = {"id": int(record["id"])}
    change = record.get("pending_change") if record.get("status") != Status.PROPOSED else None
    if change:
        payload["change_id"] = int(change["id"])
    return payload
