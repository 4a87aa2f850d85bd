"""Proposed changes to the owner's records: kept until the owner decides.

When ``ownership.decide`` says a non-owner may only *propose* a retire, outcome
or link on the owner's record — or a tainted turn's agent closes or reschedules a
commitment (``taint``) — the validated input is kept in
``change_proposals`` (one waiting change per record) under the proposer's
event. The owner approves or rejects it with the same verbs as a proposed
judgment (``review.approve`` / ``review.reject`` with the record's id): approving
runs the stored action as the owner, in the owner's own event; rejecting leaves
the record as it was.

A settings change (``owner.set_timezone``, ``owner.set_brief``) from a tainted
turn has no record: its row names the setting instead (``setting_key``), and the
owner decides it by its change id alone. One per setting waits at a time; a newer
one takes the older one's place, closing it as ``superseded`` in its own event.
``pending_after`` lists every waiting change, records' and settings' alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from mama_core.errors import InvalidTransitionError
from mama_core.json_types import JsonObject
from mama_core.memory.dispatcher import REGISTRY, Call, Env
from mama_core.memory.results import PendingChange
from mama_core.memory.writer import Applied, Tx
from mama_core.model import Judgment
from mama_core.store.connection import Connection

CHANGE_ACTIONS: frozenset[str] = frozenset(
    {
        "memory.retire",
        "memory.update_outcome",
        "memory.link",
        "commitment.close",
        "commitment.reschedule",
        "owner.set_timezone",
        "owner.set_brief",
    }
)
"""The actions whose input a proposed change may keep (the table's CHECK lists the
same): a commit of one of them may have left a change waiting for the owner."""

_COLUMNS = "id, action, judgment_id, payload, proposed_by, state, created_at, event_id, setting_key"


@dataclass(frozen=True)
class ChangeProposal:
    """One proposed change to an owner's record (``judgment_id``) or to one of the
    owner's settings (``setting_key``): exactly one of the two is set."""

    id: int
    action: str
    judgment_id: int | None
    payload: JsonObject
    proposed_by: JsonObject
    state: str
    created_at: str
    event_id: int
    setting_key: str | None = None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> ChangeProposal:
        return cls(
            id=int(row[0]),
            action=str(row[1]),
            judgment_id=None if row[2] is None else int(row[2]),
            payload=json.loads(row[3]),
            proposed_by=json.loads(row[4]),
            state=str(row[5]),
            created_at=str(row[6]),
            event_id=int(row[7]),
            setting_key=None if row[8] is None else str(row[8]),
        )

    def describe(self) -> str:
        """The change in a few words, for a review card or ``mama show``."""
        p = self.payload
        if self.setting_key is not None:
            return describe_setting_change(self.action, p)
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

    def shown(self, for_owner: bool) -> PendingChange:
        """The change as a read shows it; an agent sees only that one is waiting."""
        if not for_owner:
            return PendingChange(id=self.id, action=self.action, state=self.state)
        return PendingChange(
            id=self.id,
            action=self.action,
            state=self.state,
            judgment_id=self.judgment_id,
            setting=self.setting_key,
            input=self.payload,
            proposed_by=self.proposed_by,
            created_at=self.created_at,
            description=self.describe(),
        )


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


def describe_setting_change(action: str, payload: JsonObject) -> str:
    """``set your timezone to Pacific/Kiritimati: Bob asked`` or ``change the daily
    brief: off``: a proposed settings change in words."""
    why = f": {payload['reason']}" if payload.get("reason") else ""
    if action == "owner.set_timezone":
        return f"set your timezone to {payload.get('timezone')}{why}"
    parts: list[str] = []
    if payload.get("enabled") is not None:
        parts.append("on" if payload["enabled"] else "off")
    if payload.get("days") is not None:
        parts.append("days " + (", ".join(payload["days"]) or "none"))
    if payload.get("time") is not None:
        parts.append(f"at {payload['time']}")
    if payload.get("covers") is not None:
        parts.append("covering " + (", ".join(payload["covers"]) or "nothing"))
    return f"change the daily brief: {'; '.join(parts) or 'no change'}{why}"


def propose_setting(tx: Tx, action: str, key: str, inp: BaseModel) -> Applied:
    """Keep settings ``action`` (input ``inp``, on setting ``key``) for the owner's
    review. A change already waiting on ``key`` is closed as ``superseded`` by this
    one, in this event: the owner decides the latest proposal, not a queue of them."""
    older = pending_setting(tx.conn, key)
    if older is not None:
        _resolve(tx, older, "superseded")
    payload = inp.model_dump(mode="json", exclude={"command_id"}, exclude_none=True)
    cursor = tx.conn.execute(
        "INSERT INTO change_proposals (action, setting_key, payload, proposed_by, state, "
        "created_at, event_id) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
        (
            action,
            key,
            json.dumps(payload, sort_keys=True),
            json.dumps(tx.session.actor_json(), sort_keys=True),
            tx.at,
            tx.event_id,
        ),
    )
    change_id = int(cursor.lastrowid or 0)
    event: JsonObject = {
        "proposed_change": change_id,
        "setting": key,
        "change_hash": tx.keyed_hash({"action": action, "input": payload}),
    }
    receipt: JsonObject = {"proposed": True, "change_id": change_id, "setting": key}
    if older is not None:
        event["supersedes_change"] = older.id
        receipt["supersedes_change"] = older.id
    return Applied(None, event, receipt)


def pending_setting(conn: Connection, key: str) -> ChangeProposal | None:
    """The change waiting for the owner on setting ``key``, if any."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM change_proposals WHERE setting_key = ? AND state = 'pending'",
        (key,),
    ).fetchone()
    return None if row is None else ChangeProposal.from_row(row)


def pending_by_id(conn: Connection, change_id: int) -> ChangeProposal | None:
    """Change ``change_id`` if it still waits for the owner."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM change_proposals WHERE id = ? AND state = 'pending'",
        (change_id,),
    ).fetchone()
    return None if row is None else ChangeProposal.from_row(row)


def pending_for(conn: Connection, judgment_id: int) -> ChangeProposal | None:
    """The change waiting for the owner on ``judgment_id``, if any."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM change_proposals WHERE judgment_id = ? AND state = 'pending'",
        (judgment_id,),
    ).fetchone()
    return None if row is None else ChangeProposal.from_row(row)


def waiting_on(conn: Connection, judgment_ids: list[int]) -> set[int]:
    """Which of ``judgment_ids`` a change waits on (each read row's ``allowed``)."""
    if not judgment_ids:
        return set()
    rows = conn.execute(
        "SELECT judgment_id FROM change_proposals WHERE state = 'pending' "
        "AND judgment_id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(judgment_ids))),),
    ).fetchall()
    return {int(r[0]) for r in rows}


def pending_after(conn: Connection, after_id: int = 0) -> list[ChangeProposal]:
    """Every change waiting for the owner with an id above ``after_id``, oldest first:
    to records and to settings (``setting_key``) alike (review lists, cards, the
    list of what waits)."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM change_proposals WHERE state = 'pending' AND id > ? ORDER BY id",
        (after_id,),
    ).fetchall()
    return [ChangeProposal.from_row(r) for r in rows]


def changes_after(conn: Connection, after_id: int) -> list[tuple[int, int | None, str]]:
    """Every proposed change with an id above ``after_id``, whatever its state, oldest
    first: (id, the judgment it changes or None for a setting, state)."""
    rows = conn.execute(
        "SELECT id, judgment_id, state FROM change_proposals WHERE id > ? ORDER BY id",
        (after_id,),
    ).fetchall()
    return [(int(r[0]), None if r[1] is None else int(r[1]), str(r[2])) for r in rows]


def approve(tx: Tx, change: ChangeProposal, env: Env) -> Applied:
    """Apply ``change`` as the caller of ``tx`` (the owner), in this transaction's event."""
    spec = REGISTRY.spec(change.action)
    call = Call(spec, spec.input_model.model_validate(change.payload), tx.session, tx.grant)
    inner = spec.command(call, env).apply(tx)
    _resolve(tx, change, "approved")
    if change.judgment_id is not None:
        tx.touch(change.judgment_id)
    payload = {"change_id": change.id, "change_action": change.action, **inner.payload}
    # The event is about the record the action names (a commitment's close appends its
    # successor, whose creation the event's content hash records), as if run directly.
    main = inner.judgment_id if inner.judgment_id is not None else change.judgment_id
    return Applied(main, payload, {**inner.receipt, "change_id": change.id})


def reject(tx: Tx, change: ChangeProposal, reason: str) -> Applied:
    """Decline ``change``: the owner's record stays exactly as it was."""
    _resolve(tx, change, "rejected")
    if change.judgment_id is not None:
        tx.touch(change.judgment_id)
    payload: JsonObject = {
        "change_id": change.id,
        "change_action": change.action,
        "reason_hmac": tx.record_text("reason", reason),
    }
    if change.setting_key is not None:
        payload["setting"] = change.setting_key
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
            if change.judgment_id is not None:
                tx.touch(change.judgment_id)


def _resolve(tx: Tx, change: ChangeProposal, state: str) -> None:
    tx.conn.execute(
        "UPDATE change_proposals SET state = ?, resolved_at = ?, resolved_event_id = ? "
        "WHERE id = ? AND state = 'pending'",
        (state, tx.at, tx.event_id, change.id),
    )
