"""What the review window reads beside the action catalog, shaped for a person.

The queries themselves are below (``mama_core.memory.owner_reads``,
``mama_core.scopes.bindings``): this module holds no SQL. Each function runs on the
bridge's read connection (``EngineBridge.read``) and never writes: mutations go
through ``engine.dispatch`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mama_core.memory.events import ERASED
from mama_core.memory.owner_reads import LoggedEvent, event_page, events_since
from mama_core.scopes.bindings import bound_scope_names
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


def scope_names(conn: Connection) -> list[str]:
    """Every scope a judgment has been bound to, sorted."""
    return bound_scope_names(conn)


def audit_page(
    conn: Connection, before_id: int | None = None, limit: int = 200
) -> list[AuditEntry]:
    """Events newest first, ``limit`` of them older than ``before_id`` (if given)."""
    return [_entry(event) for event in event_page(conn, before_id, limit)]


def audit_since(conn: Connection, after_id: int) -> list[AuditEntry]:
    """Events newer than ``after_id``, newest first."""
    return [_entry(event) for event in events_since(conn, after_id)]


def _entry(event: LoggedEvent) -> AuditEntry:
    payload = dict(event.payload)
    if "reason_hmac" in payload:  # the reason is kept beside the event until a purge
        payload["reason"] = event.texts.get("reason") or ERASED
    return AuditEntry(
        id=event.id,
        at=event.at,
        action=event.action,
        actor=describe_actor(event.actor),
        judgment_id=event.judgment_id,
        summary=describe_payload(payload),
    )


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
