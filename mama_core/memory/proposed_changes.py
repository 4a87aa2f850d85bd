"""Proposed changes to the owner's records: kept until the owner decides.

When ``ownership.decide`` says a non-owner may only *propose* a retire, outcome
or link on the owner's record — or a tainted turn's agent closes or reschedules a
commitment (``taint``) — the validated input is kept in
``change_proposals`` (one waiting change per record) under the proposer's
event. The owner approves or rejects it with the same verbs as a proposed
judgment (``review.approve`` / ``review.reject`` with the record's id): approving
runs the stored action as the owner, in the owner's own event; rejecting leaves
the record as it was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from mama_core.memory.dispatcher import REGISTRY, Call, Env
from mama_core.memory.errors import InvalidTransitionError
from mama_core.memory.writer import Applied, Tx
from mama_core.model import Judgment
from mama_core.store.connection import Connection

_COLUMNS = "id, action, judgment_id, payload, proposed_by, state, created_at, event_id"


@dataclass(frozen=True)
class ChangeProposal:
    """One proposed change to an owner's record."""

    id: int
    action: str
    judgment_id: int
    payload: dict[str, Any]
    proposed_by: dict[str, Any]
    state: str
    created_at: str
    event_id: int

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> ChangeProposal:
        return cls(
            id=int(row[0]),
            action=str(row[1]),
            judgment_id=int(row[2]),
            payload=json.loads(row[3]),
            proposed_by=json.loads(row[4]),
            state=str(row[5]),
            created_at=str(row[6]),
            event_id=int(row[7]),
        )

    def describe(self) -> str:
        """The change in a few words, for a review card or ``mama show``."""
        p = self.payload
        if self.action == "memory.retire":
            how = str(p.get("status", "stale"))
            by = f" by #{p['by']}" if p.get("by") is not None else ""
            return f"retire #{self.judgment_id} as {how}{by}: {p.get('reason', '')}"
        if self.action == "commitment.close":
            why = f": {p['reason']}" if p.get("reason") else ""
            return f"mark commitment #{self.judgment_id} {p.get('outcome', 'done')}{why}"
        if self.action == "commitment.reschedule":
            when = str(p["due"]) if p.get("due") else "no due time"
            why = f": {p['reason']}" if p.get("reason") else ""
            return f"move commitment #{self.judgment_id} to {when}{why}"
        if self.action == "memory.update_outcome":
            why = f" ({p['reason']})" if p.get("reason") else ""
            return f"record the outcome of #{self.judgment_id}: {p.get('outcome', '')}{why}"
        why = f": {p['reason']}" if p.get("reason") else ""
        return f"link #{p.get('src')} {p.get('kind')} #{p.get('dst')}{why}"

    def as_dict(self, for_owner: bool) -> dict[str, Any]:
        """The change as a read shows it; an agent sees only that one is waiting."""
        out: dict[str, Any] = {"id": self.id, "action": self.action, "state": self.state}
        if for_owner:
            out.update(
                {
                    "judgment_id": self.judgment_id,
                    "input": self.payload,
                    "proposed_by": self.proposed_by,
                    "created_at": self.created_at,
                    "description": self.describe(),
                }
            )
        return out


def propose(tx: Tx, action: str, target: Judgment, inp: BaseModel) -> Applied:
    """Keep ``action`` with input ``inp`` on the owner's ``target`` for the owner's review."""
    waiting = pending_for(tx.conn, target.id)
    if waiting is not None:
        raise InvalidTransitionError(
            f"A change to judgment {target.id} already waits for the owner's review "
            f"(proposed change {waiting.id}); wait for the owner's decision.",
            details={"id": target.id, "change_id": waiting.id},
        )
    payload = inp.model_dump(mode="json", exclude={"command_id"})
    cursor = tx.conn.execute(
        "INSERT INTO change_proposals (action, judgment_id, payload, proposed_by, state, "
        "created_at, event_id) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
        (
            action,
            target.id,
            json.dumps(payload, sort_keys=True),
            json.dumps(tx.session.actor_json(), sort_keys=True),
            tx.at,
            tx.event_id,
        ),
    )
    change_id = int(cursor.lastrowid or 0)
    tx.touch(target.id)
    event = {
        "proposed_change": change_id,
        "change_hash": tx.keyed_hash({"action": action, "input": payload}),
    }
    receipt = {"proposed": True, "change_id": change_id}
    return Applied(target.id, event, receipt)


def pending_for(conn: Connection, judgment_id: int) -> ChangeProposal | None:
    """The change waiting for the owner on ``judgment_id``, if any."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM change_proposals WHERE judgment_id = ? AND state = 'pending'",
        (judgment_id,),
    ).fetchone()
    return None if row is None else ChangeProposal.from_row(row)


def pending_after(conn: Connection, after_id: int = 0) -> list[ChangeProposal]:
    """Waiting changes with an id above ``after_id``, oldest first (review lists, cards)."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM change_proposals WHERE state = 'pending' AND id > ? ORDER BY id",
        (after_id,),
    ).fetchall()
    return [ChangeProposal.from_row(r) for r in rows]


def approve(tx: Tx, change: ChangeProposal, env: Env) -> Applied:
    """Apply ``change`` as the caller of ``tx`` (the owner), in this transaction's event."""
    spec = REGISTRY[change.action]
    call = Call(spec, spec.input_model.model_validate(change.payload), tx.session, tx.grant)
    inner = spec.command(call, env).apply(tx)
    _resolve(tx, change, "approved")
    payload = {"change_id": change.id, "change_action": change.action, **inner.payload}
    return Applied(change.judgment_id, payload, {**inner.receipt, "change_id": change.id})


def reject(tx: Tx, change: ChangeProposal, reason: str) -> Applied:
    """Decline ``change``: the owner's record stays exactly as it was."""
    _resolve(tx, change, "rejected")
    tx.touch(change.judgment_id)
    payload = {
        "change_id": change.id,
        "change_action": change.action,
        "reason_hmac": tx.record_text("reason", reason),
    }
    return Applied(change.judgment_id, payload, {"change_id": change.id})


ERASED_FIELDS = ("reason", "outcome")
"""The words a proposed change carries; a purge erases them with its record."""


def erase_for(tx: Tx, judgment_id: int) -> None:
    """Purging ``judgment_id``: erase the words of every change proposed to it or
    naming it (a link from it), and close those still waiting (nothing is left to
    decide on)."""
    rows = tx.conn.execute(
        f"SELECT {_COLUMNS} FROM change_proposals WHERE judgment_id = ? "
        "OR json_extract(payload, '$.src') = ? OR json_extract(payload, '$.dst') = ? "
        "OR json_extract(payload, '$.by') = ?",
        (judgment_id, judgment_id, judgment_id, judgment_id),
    ).fetchall()
    for change in (ChangeProposal.from_row(r) for r in rows):
        kept = {k: v for k, v in change.payload.items() if k not in ERASED_FIELDS}
        tx.conn.execute(
            "UPDATE change_proposals SET payload = ? WHERE id = ?",
            (json.dumps(kept, sort_keys=True), change.id),
        )
        tx.wrote("change_proposals", change.id)
        if change.state == "pending":
            _resolve(tx, change, "rejected")
            tx.touch(change.judgment_id)


def _resolve(tx: Tx, change: ChangeProposal, state: str) -> None:
    tx.conn.execute(
        "UPDATE change_proposals SET state = ?, resolved_at = ?, resolved_event_id = ? "
        "WHERE id = ? AND state = 'pending'",
        (state, tx.at, tx.event_id, change.id),
    )
