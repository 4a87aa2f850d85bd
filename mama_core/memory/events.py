"""The event log: one hash-chained row per mutation.

Each event stores the hash of the one before it and its own hash over
``prev_hash`` plus the canonical JSON of its fields, so rewriting, dropping or
reordering history breaks the chain (``verify_store`` finds it). Events carry
ids and keyed hashes, never the text of a judgment.

Events of format ``EVENT_FORMAT`` keep reasons out of the chain: the payload has
``reason_hmac`` (the fact a reason was given, and its keyed hash) and the text
sits in ``event_texts`` until a purge erases it. Older events kept the reason in
the payload itself; they are read and verified as they are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from mama_core.canonical import canonical, sha256_hex
from mama_core.json_types import JsonObject
from mama_core.store.connection import Connection

GENESIS_HASH = "0" * 64
"""The ``prev_hash`` of the first event."""

EVENT_FORMAT = 2
"""``payload.format`` of events with keyed hashes, row digests and reasons kept aside."""

ERASED = "(erased)"
"""What readers show for a reason a purge erased."""


@dataclass(frozen=True)
class Event:
    """One event row as hashed."""

    id: int
    at: str
    action: str
    actor: JsonObject
    command_id: str | None
    judgment_id: int | None
    payload: JsonObject
    prev_hash: str

    def hashed_fields(self) -> JsonObject:
        return {
            "id": self.id,
            "at": self.at,
            "action": self.action,
            "actor": self.actor,
            "command_id": self.command_id,
            "judgment_id": self.judgment_id,
            "payload": self.payload,
        }

    def compute_hash(self) -> str:
        """sha256(prev_hash + canonical JSON of the fields)."""
        return sha256_hex(self.prev_hash.encode("ascii") + canonical(self.hashed_fields()))


@dataclass(frozen=True)
class ChainHead:
    """The last event: where the next one links to."""

    id: int
    at: str | None
    hash: str


def chain_head(conn: Connection) -> ChainHead:
    """The newest event's id, time and hash (id 0 and the genesis hash if none)."""
    row = conn.execute("SELECT id, at, hash FROM events ORDER BY id DESC LIMIT 1").fetchone()
    if row is None:
        return ChainHead(0, None, GENESIS_HASH)
    return ChainHead(int(row[0]), str(row[1]), str(row[2]))


def purged_since(conn: Connection, event_id: int) -> bool:
    """Whether a ``memory.purge`` event was appended after event ``event_id`` (a
    conversation that began before it may have seen the erased text)."""
    row = conn.execute(
        "SELECT 1 FROM events WHERE id > ? AND action = 'memory.purge' LIMIT 1", (event_id,)
    ).fetchone()
    return row is not None


def insert_event(conn: Connection, event: Event) -> str:
    """Write ``event`` (its id fixed in advance); return its hash."""
    digest = event.compute_hash()
    conn.execute(
        "INSERT INTO events (id, at, action, actor, command_id, judgment_id, payload, "
        "prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            event.id,
            event.at,
            event.action,
            json.dumps(event.actor, sort_keys=True),
            event.command_id,
            event.judgment_id,
            json.dumps(event.payload, sort_keys=True),
            event.prev_hash,
            digest,
        ),
    )
    return digest


def event_from_row(row: tuple[Any, ...]) -> tuple[Event, str]:
    """An event row (id, at, action, actor, command_id, judgment_id, payload, prev_hash,
    hash) as the hashed value and its stored hash."""
    event = Event(
        id=int(row[0]),
        at=str(row[1]),
        action=str(row[2]),
        actor=json.loads(row[3]),
        command_id=None if row[4] is None else str(row[4]),
        judgment_id=None if row[5] is None else int(row[5]),
        payload=json.loads(row[6]),
        prev_hash=str(row[7]),
    )
    return event, str(row[8])


EVENT_COLUMNS = "id, at, action, actor, command_id, judgment_id, payload, prev_hash, hash"


def public_event(event: Event, texts: dict[str, str | None] | None = None) -> JsonObject:
    """An event as shown to callers (no hashes or row digests: they are for verification),
    with its reasons from ``texts`` (``field -> text``, None once erased)."""
    payload = {k: v for k, v in event.payload.items() if k not in ("rows", "format")}
    for name in [k for k in payload if k.endswith("_hmac")]:
        field = name.removesuffix("_hmac")
        del payload[name]
        text = (texts or {}).get(field)
        payload[field] = ERASED if text is None else text
        if text is None:
            payload[f"{field}_erased"] = True
    return {
        "id": event.id,
        "at": event.at,
        "action": event.action,
        "actor": event.actor,
        "judgment_id": event.judgment_id,
        "payload": payload,
    }


def event_texts(conn: Connection, event_ids: list[int]) -> dict[int, dict[str, str | None]]:
    """The reasons kept beside the events ``event_ids`` (None where a purge erased them)."""
    rows = conn.execute(
        "SELECT event_id, field, text FROM event_texts "
        "WHERE event_id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(event_ids))),),
    ).fetchall()
    out: dict[int, dict[str, str | None]] = {}
    for event_id, field, text in rows:
        out.setdefault(int(event_id), {})[str(field)] = None if text is None else str(text)
    return out


def public_events(conn: Connection, events: list[Event]) -> list[JsonObject]:
    """``public_event`` of each, with the reasons that still exist."""
    texts = event_texts(conn, [e.id for e in events])
    return [public_event(e, texts.get(e.id)) for e in events]


@dataclass(frozen=True)
class RecordState:
    """A judgment's status, validity end and involvement as the events tell it."""

    status: str
    valid_until: str | None
    involvement: str | None


def fold_events(conn: Connection, until: str | None = None) -> dict[int, RecordState]:
    """Every judgment's state rebuilt from the events recorded at or before ``until``."""
    sql = "SELECT payload FROM events"
    params: tuple[str, ...] = ()
    if until is not None:
        sql += " WHERE at <= ?"
        params = (until,)
    states: dict[int, RecordState] = {}
    for (payload_json,) in conn.execute(sql + " ORDER BY id", params).fetchall():
        for change in json.loads(payload_json).get("transitions", ()):
            jid = int(change["id"])
            old = states.get(jid, RecordState(change["to"], None, None))
            states[jid] = replace(
                old,
                status=change["to"],
                valid_until=change.get("valid_until", old.valid_until),
                involvement=change.get("involvement", old.involvement),
            )
    return states
