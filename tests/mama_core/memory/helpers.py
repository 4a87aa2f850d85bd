"""Sessions, grants and small helpers shared by the engine's tests."""

from __future__ import annotations

from typing import Any

from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.session import ActorKind, TurnKind

OWNER = SessionFacts.owner_cli()
OWNER_GRANT = Grant.owner()
AGENT = SessionFacts(
    actor_kind=ActorKind.AGENT,
    actor_name="claude-code",
    actor_version="2.1",
    turn=TurnKind.OWNER_MESSAGE,
    backend="claude",
    message_ref="tg:42",
)
SOURCE_TURN_AGENT = SessionFacts(
    actor_kind=ActorKind.AGENT,
    actor_name="claude-code",
    turn=TurnKind.SOURCE_DELTA,
    source_refs=("slack:C1/123",),
)
SCHEDULED_AGENT = SessionFacts(
    actor_kind=ActorKind.AGENT, actor_name="claude-code", turn=TurnKind.SCHEDULED
)
MCP_CLIENT = SessionFacts(actor_kind=ActorKind.MCP_CLIENT, actor_name="codex", turn=TurnKind.MCP)


def agent_grant(*scopes: str) -> Grant:
    return Grant.agent(scopes or ("global",))


def save(engine: Engine, summary: str, kind: str = "fact", **fields: Any) -> dict[str, Any]:
    """An owner save (unless ``session``/``grant`` given); returns the receipt."""
    session = fields.pop("session", OWNER)
    grant = fields.pop("grant", OWNER_GRANT)
    payload: dict[str, Any] = {"kind": kind, "summary": summary, **fields}
    if kind in ("preference", "constraint", "lesson", "workflow"):
        payload.setdefault("applies_when", "always")
    if kind == "workflow":
        payload.setdefault("steps", ["do it"])
    return engine.dispatch("memory.save", payload, session, grant)


def search_ids(
    engine: Engine,
    query: str,
    session: SessionFacts = OWNER,
    grant: Grant = OWNER_GRANT,
    **fields: Any,
) -> list[int]:
    found = engine.dispatch("memory.search", {"query": query, **fields}, session, grant)
    return [r["id"] for r in found["results"]]


def event_count(engine: Engine) -> int:
    return int(engine.store.conn.execute("SELECT count(*) FROM events").fetchone()[0])
