"""Read-only queries for the owner's own views (the desktop's review window): how many
records stand in each status, which wait on a proposed change, pages of the event log.

They take a connection, not a grant: only the owner's front ends, which see every
scope, call them (an agent reaches the store through the action catalog only). They
never write; the caller shapes what they return for a person.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from mama_core.json_types import JsonObject
from mama_core.memory.events import event_texts
from mama_core.store.connection import Connection

_EVENT_ROW = "SELECT id, at, action, actor, judgment_id, payload FROM events "


@dataclass(frozen=True)
class LoggedEvent:
    """One row of the event log, its JSON parsed (``{}`` where it is not an object) and
    with the reasons kept beside it (``None`` where a purge erased one)."""

    id: int
    at: str
    action: str
    actor: JsonObject
    judgment_id: int | None
    payload: JsonObject
    texts: dict[str, str | None]


def count_by_status(conn: Connection) -> dict[str, int]:
    """How many judgments stand in each status."""
    rows = conn.execute("SELECT status, count(*) FROM judgments GROUP BY status").fetchall()
    return {str(status): int(n) for status, n in rows}


def pending_change_ids(conn: Connection) -> list[int]:
    """The records a change proposed by an agent waits on, newest change first."""
    rows = conn.execute(
        "SELECT judgment_id FROM change_proposals WHERE state = 'pending' "
        "AND judgment_id IS NOT NULL ORDER BY id DESC"
    ).fetchall()
    return [int(r[0]) for r in rows]


def event_page(
    conn: Connection, before_id: int | None = None, limit: int = 200
) -> list[LoggedEvent]:
    """Events newest first, ``limit`` of them older than ``before_id`` (if given)."""
    if before_id is None:
        rows = conn.execute(_EVENT_ROW + "ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
    else:
        rows = conn.execute(
            _EVENT_ROW + "WHERE id < ? ORDER BY id DESC LIMIT ?", (before_id, limit)
        ).fetchall()
    return _logged(conn, rows)


def events_since(conn: Connection, after_id: int) -> list[LoggedEvent]:
    """Events newer than ``after_id``, newest first."""
    rows = conn.execute(_EVENT_ROW + "WHERE id > ? ORDER BY id DESC", (after_id,)).fetchall()
    return _logged(conn, rows)


def _logged(conn: Connection, rows: list[tuple[Any, ...]]) -> list[LoggedEvent]:
    texts = event_texts(conn, [int(r[0]) for r in rows])
    return [
        LoggedEvent(
            id=int(event_id),
            at=str(at),
            action=str(action),
            actor=_loads(actor_json),
            judgment_id=None if judgment_id is None else int(judgment_id),
            payload=_loads(payload_json),
            texts=texts.get(int(event_id), {}),
        )
        for event_id, at, action, actor_json, judgment_id, payload_json in rows
    ]


def _loads(text: str | None) -> JsonObject:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return cast(JsonObject, value) if isinstance(value, dict) else {}


def continued_by(conn: Connection, ids: list[int]) -> dict[int, int]:
    """Of ``ids``, the records a later record carries on with the same words, each with
    that record's id: a restore's copy (an undone approve, reject or retire) or a
    commitment's next state (Done, Edit due). Such a record is an earlier state of one
    memory, shown in its successor's history, not a memory of its own."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        "SELECT e.dst_id, max(e.src_id) FROM edges e "
        "JOIN judgments s ON s.id = e.src_id JOIN judgments j ON j.id = e.dst_id "
        f"WHERE e.kind = 'supersedes' AND e.dst_id IN ({marks}) AND s.kind = j.kind "
        "AND s.summary IS j.summary AND s.topic IS j.topic AND s.details IS j.details "
        "GROUP BY e.dst_id",
        [int(i) for i in ids],
    ).fetchall()
    return {int(old): int(new) for old, new in rows}


def proposed_among(conn: Connection, ids: list[int]) -> list[int]:
    """Those of ``ids`` that are proposals, in order (the tray counts what arrived)."""
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT id FROM judgments WHERE status = 'proposed' AND id IN ({marks}) ORDER BY id",
        [int(i) for i in ids],
    ).fetchall()
    return [int(r[0]) for r in rows]
