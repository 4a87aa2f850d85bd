"""Provenance and involvement, derived from the session facts alone.

Whether the owner stated, approved or never saw a judgment is recorded from
what happened in the session, never from a constant or from the caller's
payload; the initial review status follows from the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mama_core.json_types import JsonObject
from mama_core.model import GUIDANCE_KINDS, Involvement, Kind, Status
from mama_core.session import SessionFacts


def provenance_of(session: SessionFacts) -> JsonObject:
    """The provenance JSON stamped on a record written in ``session`` (``tainted`` and
    ``origin`` only when the turn carried outside words)."""
    out: JsonObject = {
        "actor_kind": session.actor_kind.value,
        "actor_name": session.actor_name,
        "actor_version": session.actor_version,
        "turn": session.turn.value,
        "source_refs": list(session.source_refs),
        "backend": session.backend,
        "message_ref": session.message_ref,
    }
    if session.tainted:
        out["tainted"] = True
    if session.origin:
        out["origin"] = session.origin
    return out


def involvement_of(session: SessionFacts) -> Involvement:
    """How the owner was involved in a save made in ``session``.

    A turn driven by outside content or a timer is source-derived whoever acts
    in it; otherwise the owner's own saves in an owner turn are owner-stated and
    everyone else's (a coding agent over MCP included) are agent-inferred.
    """
    if session.is_source_turn:
        return Involvement.SOURCE_DERIVED
    if session.acts_as_owner:
        return Involvement.OWNER_STATED
    return Involvement.AGENT_INFERRED


def initial_status(session: SessionFacts, kind: Kind, replaces_owner_record: bool) -> Status:
    """Where a new record lands. The owner's own word: ``active``. What a source says is
    a claim, not the owner's belief: anything saved in a source or scheduled turn, or in
    a turn that carried or read outside words, lands ``proposed``; so do guidance and a
    revision of the owner's record by anyone but the owner. Everything else ``active``."""
    if session.acts_as_owner:
        return Status.ACTIVE
    if session.is_source_turn or session.tainted:
        return Status.PROPOSED
    if kind in GUIDANCE_KINDS or replaces_owner_record:
        return Status.PROPOSED
    return Status.ACTIVE


_TURN_WORDS = {
    "source_delta": "via source delta",
    "scheduled": "in a scheduled run",
    "owner_message": "in the owner's chat",
    "mcp": "in a coding session",
    "ui": "in the app",
    "cli": "at the command line",
}
_INVOLVEMENT_WORDS = {
    "owner_stated": "stated by the owner",
    "owner_approved": "approved by the owner",
    "agent_inferred": "inferred by {actor}",
    "source_derived": "from outside content",
}


def turn_words(turn: str) -> str:
    """Where a turn happened, in words: ``in a coding session``, ``via source delta``."""
    return _TURN_WORDS.get(turn, turn.replace("_", " "))


def origin_line(provenance: Mapping[str, Any], involvement: str, status: str) -> str:
    """Where a record came from, for every read: ``from #ops (slack) via source delta,
    proposed``; ``stated by the owner at the command line, active``."""
    where = turn_words(str(provenance.get("turn") or ""))
    origin = provenance.get("origin")
    if origin:
        head = f"from {origin} {where}"
    else:
        actor = str(provenance.get("actor_name") or "the agent")
        head = f"{_INVOLVEMENT_WORDS.get(involvement, involvement).format(actor=actor)} {where}"
    if provenance.get("tainted") and not origin:
        head += " after reading outside content"
    if origin and involvement == "owner_approved":
        head += ", approved by the owner"
    return f"{head.strip()}, {status}"
