"""Provenance and involvement, derived from the session facts alone.

Whether the owner stated, approved or never saw a judgment is recorded from
what happened in the session, never from a constant or from the caller's
payload; the initial review status follows from the same facts.
"""

from __future__ import annotations

from typing import Any

from mama_core.memory.session import SessionFacts
from mama_core.model import GUIDANCE_KINDS, Involvement, Kind, Status


def provenance_of(session: SessionFacts) -> dict[str, Any]:
    """The provenance JSON stamped on a record written in ``session``."""
    return {
        "actor_kind": session.actor_kind.value,
        "actor_name": session.actor_name,
        "actor_version": session.actor_version,
        "turn": session.turn.value,
        "source_refs": list(session.source_refs),
        "backend": session.backend,
        "message_ref": session.message_ref,
    }


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
    """Where a new record lands: guidance (or a revision of the owner's record) by anyone
    but the owner in an owner turn lands ``proposed``; everything else ``active``."""
    if session.acts_as_owner:
        return Status.ACTIVE
    if kind in GUIDANCE_KINDS or replaces_owner_record:
        return Status.PROPOSED
    return Status.ACTIVE
