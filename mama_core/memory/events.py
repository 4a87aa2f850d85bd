"""The event log: one hash-chained row per mutation.

Each event stores the hash of the one before it and its own hash over
``prev_hash`` plus the canonical JSON of its fields, so rewriting, dropping or
reordering history breaks the chain (``verify_store`` finds it). Events carry
ids, content hashes and reasons, never the text of a judgment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mama_core.memory.canonical import canonical, sha256_hex
from mama_core.store.connection import Connection

GENESIS_HASH = "0" * 64
"""The ``prev_hash`` of the first event."""


@dataclass(frozen=True)
class Event:
    """One event row as hashed."""

    id: int
    at: str
    action: str
    actor: dict[str, Any]
    command_id: str | None
    judgment_id: int | None
    payload: dict[str, Any]
    prev_hash: str

    def hashed_fields(self) -> dict[str, Any]:
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


def public_event(event: Event) -> dict[str, Any]:
    """An event as shown to callers (no hashes: they are for verification)."""
    return {
        "id": event.id,
        "at": event.at,
        "action": event.action,
        "actor": event.actor,
        "judgment_id": event.judgment_id,
        "payload": event.payload,
    }
