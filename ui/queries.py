"""Read-only queries the review window needs and the action catalog lacks (yet).

Everything here runs on a *reader* connection (``store.new_connection()``) and never
writes: mutations go through ``engine.dispatch`` only. Candidates to move into
the catalog: a count of records per status, a page of the audit log, the
names of the scopes in use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mama_core.memory.events import ERASED, event_texts
from mama_core.scope_bindings import bound_scope_names
from mama_core.store.connection import Connection
from ui.words import actor_of, status_word


@dataclass(frozen=True)
class AuditEntry:
    """One row of the event log, shaped for the Audit log tab."""

    id: int
    at: str
    action: str
    actor: str
    judgment_id: int | None
    summary: str


def count_by_status(conn: Connection) -> dict[str, int]:
    """How many judgments stand in each status."""
    rows = conn.execute("SELECT status, count(*) FROM judgments GROUP BY status").fetchall()
    return {str(status): int(n) for status, n in rows}


def pending_change_ids(conn: Connection) -> list[int]:
    """The records a change proposed by an agent waits on, newest change first."""
    rows = conn.execute(
        "SELECT judgment_id FROM change_proposals WHERE state = 'pending' ORDER BY id DESC"
    ).fetchall()
    return [int(r[0]) for r in rows]


def scope_names(conn: Connection) -> list[str]:
    """Every scope a judgment has been bound to, sorted."""
    return bound_scope_names(conn)


def audit_page(
    conn: Connection, before_id: int | None = None, limit: int = 200
) -> list[AuditEntry]:
    """Events newest first, ``limit`` of them older than ``before_id`` (if given)."""
    if before_id is None:
        rows = conn.execute(
            "SELECT id, at, action, actor, judgment_id, payload FROM events "
            "ORDER BY id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT id, at, action, actor, judgment_id, payload FROM events "
            "WHERE id < ? ORDER BY id DESC LIMIT ?",
            (before_id, limit),
        ).fetchall()
    return _entries(conn, rows)


def audit_since(conn: Connection, after_id: int) -> list[AuditEntry]:
    """Events newer than ``after_id``, newest first."""
    rows = conn.execute(
        "SELECT id, at, action, actor, judgment_id, payload FROM events "
        "WHERE id > ? ORDER BY id DESC",
        (after_id,),
    ).fetchall()
    return _entries(conn, rows)


def _entries(conn: Connection, rows: list[tuple[Any, ...]]) -> list[AuditEntry]:
    texts = event_texts(conn, [int(r[0]) for r in rows])
    return [_entry(row, texts.get(int(row[0]), {})) for row in rows]


def _entry(row: tuple[Any, ...], texts: dict[str, str | None]) -> AuditEntry:
    event_id, at, action, actor_json, judgment_id, payload_json = row
    payload = _loads(payload_json)
    if "reason_hmac" in payload:  # the reason is kept beside the event until a purge
        payload["reason"] = texts.get("reason") or ERASED
    return AuditEntry(
        id=int(event_id),
        at=str(at),
        action=str(action),
        actor=describe_actor(_loads(actor_json)),
        judgment_id=None if judgment_id is None else int(judgment_id),
        summary=describe_payload(payload),
    )


def _loads(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def describe_actor(actor: dict[str, Any]) -> str:
    """``you``, ``agent claude-code``, ``coding agent (MCP) codex``…"""
    return actor_of(actor)


def describe_payload(payload: dict[str, Any]) -> str:
    """A one-line account of an event: its status transitions and reason."""
    parts: list[str] = []
    for change in payload.get("transitions") or []:
        if not isinstance(change, dict):
            continue
        before = status_word(change.get("from")) if change.get("from") else "new"
        parts.append(f"#{change.get('id')} {before} → {status_word(change.get('to'))}")
    reason = payload.get("reason")
    if isinstance(reason, str) and reason:
        parts.append(f"reason: {reason}")
    return "; ".join(parts)
