"""tombstone.list: the owner sees every tombstone, what it blocks and who made it.

Each entry names the tombstone's scopes, when and by whom it was made (the
actor of the event that made it), the text it blocks while that text is not
purged, its reason, and whether (when, by whom, why) it was lifted, so the
owner can decide which to lift.
"""

from __future__ import annotations

import json
from typing import Any, cast

from mama_core.json_types import JsonObject
from mama_core.memory.dispatcher import Call, Env, query
from mama_core.memory.events import ERASED
from mama_core.memory.inputs import TombstoneListInput
from mama_core.memory.results import Actor, TombstoneEntry, TombstoneListResult
from mama_core.store.connection import Connection


@query(
    "tombstone.list",
    TombstoneListInput,
    description="List tombstones: what each blocks, who made it, whether it was lifted.",
    owner_only=True,
)
def list_tombstones(
    conn: Connection, call: Call[TombstoneListInput], env: Env
) -> TombstoneListResult:
    """Tombstones newest first, within the caller's scopes."""
    inp = call.input
    where: list[str] = []
    params: list[object] = []
    if not call.grant.all_scopes:
        where.append(
            "EXISTS (SELECT 1 FROM tombstone_scopes ts JOIN scopes s ON s.id = ts.scope_id "
            "WHERE ts.tombstone_id = t.id AND s.name IN (SELECT value FROM json_each(?)))"
        )
        params.append(json.dumps(sorted(call.grant.scopes)))
    if not inp.include_lifted:
        where.append("t.lifted_at IS NULL")
    if inp.judgment_id is not None:
        where.append("t.judgment_id = ?")
        params.append(inp.judgment_id)
    rows = conn.execute(
        "SELECT t.id, t.judgment_id, t.reason, t.created_at, t.lifted_at, e.actor, e.action, "
        "j.kind, j.status, CASE WHEN j.status = 'purged' THEN NULL ELSE j.summary END, "
        "le.actor, le.payload, (SELECT x.text FROM event_texts x WHERE x.event_id = "
        "t.lift_event_id AND x.field = 'reason') FROM tombstones t "
        "LEFT JOIN events e ON e.id = t.event_id "
        "LEFT JOIN judgments j ON j.id = t.judgment_id "
        "LEFT JOIN events le ON le.id = t.lift_event_id "
        f"WHERE {' AND '.join(where) or '1'} ORDER BY t.id DESC LIMIT ?",
        (*params, inp.limit),
    ).fetchall()
    return TombstoneListResult(tombstones=[_entry(conn, row, call) for row in rows])


def _entry(
    conn: Connection, row: tuple[Any, ...], call: Call[TombstoneListInput]
) -> TombstoneEntry:
    (tid, judgment_id, reason, created_at, lifted_at, actor, action) = row[:7]
    kind, status, text, lift_actor, lift_payload, lift_text = row[7:]
    scopes = [
        str(r[0])
        for r in conn.execute(
            "SELECT s.name FROM tombstone_scopes ts JOIN scopes s ON s.id = ts.scope_id "
            "WHERE ts.tombstone_id = ? ORDER BY s.name",
            (tid,),
        ).fetchall()
    ]
    if not call.grant.all_scopes:
        scopes = [s for s in scopes if s in call.grant.scopes]
    lift = _object(lift_payload)
    return TombstoneEntry(
        id=int(tid),
        judgment_id=None if judgment_id is None else int(judgment_id),
        kind=kind,
        status=status,
        text=text,
        text_erased=status == "purged",
        scopes=scopes,
        reason=str(reason),
        created_at=str(created_at),
        created_by=_actor(actor),
        made_by_action=None if action is None else str(action),
        lifted=lifted_at is not None,
        lifted_at=lifted_at,
        lifted_by=None if lift_actor is None else _actor(lift_actor),
        lift_reason=_lift_reason(lift, lift_text),
    )


def _lift_reason(payload: JsonObject, kept: str | None) -> str | None:
    """The lift's reason: kept beside its event (``(erased)`` once purged), or inside
    the payload of an event written before reasons were kept aside."""
    if "reason_hmac" in payload:
        return ERASED if kept is None else kept
    reason = payload.get("reason")
    return reason if isinstance(reason, str) else None


def _object(text: str | None) -> JsonObject:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return cast(JsonObject, value) if isinstance(value, dict) else {}


def _actor(text: str | None) -> Actor:
    actor = _object(text)
    return Actor(kind=actor.get("kind"), name=actor.get("name"), turn=actor.get("turn"))
