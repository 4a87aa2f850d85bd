"""What the owner reads instead of the store's internal names.

Statuses, event actions and actor kinds are stored as identifiers
(``stale``, ``memory.save``, ``mcp_client``); every place in the UI that shows
one goes through this module, so the words stay the same on every screen.
Stored values are never changed: only what is displayed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

STATUS_WORDS: dict[str, str] = {
    "proposed": "proposed",
    "active": "active",
    "superseded": "replaced",
    "stale": "retired",
    "contradicted": "contradicted",
    "rejected": "rejected",
    "purged": "erased",
}

ACTION_WORDS: dict[str, str] = {
    "memory.save": "saved",
    "memory.retire": "retired",
    "memory.purge": "erased",
    "memory.link": "linked",
    "memory.update_outcome": "outcome recorded",
    "memory.tombstone": "blocked from resaving",
    "memory.read": "read",
    "memory.search": "searched",
    "memory.quotes": "quoted",
    "memory.timeline": "timeline read",
    "memory.restore": "restored",
    "commitment.close": "marked done or dropped",
    "commitment.reschedule": "due time changed",
    "commitment.list": "commitments listed",
    "owner.set_brief": "brief set",
    "owner.set_timezone": "time zone set",
    "owner.settings": "settings read",
    "guidance.changes": "guidance changes read",
    "observation.counts": "messages counted",
    "review.approve": "approved",
    "review.reject": "rejected",
    "tombstone.lift": "resaving allowed again",
    "tombstone.list": "blocks listed",
    "checkpoint.save": "checkpoint saved",
    "checkpoint.list": "checkpoints listed",
    "observation.record": "message kept",
    "observation.list": "messages listed",
    "observation.read": "message read",
    "person.list": "people listed",
    "person.about": "person looked up",
    "person.join": "names joined as one person",
    "person.split": "name split off",
}

ACTOR_WORDS: dict[str, str] = {
    "owner": "you",
    "agent": "agent",
    "mcp_client": "coding agent (MCP)",
    "connector": "connector",
}


def _fallback(name: str) -> str:
    """An unknown identifier, made readable: no dots or underscores on screen."""
    return name.rsplit(".", 1)[-1].replace("_", " ")


def status_word(status: str | None) -> str:
    """``stale`` → ``retired``, ``superseded`` → ``replaced``…"""
    value = str(status or "")
    return STATUS_WORDS.get(value, _fallback(value))


def record_status_word(record: dict[str, Any]) -> str:
    """A record's status in words; a commitment's says open, done or dropped: Done keeps
    the record ``active`` (it is still true that it was done), so only its state tells."""
    status = record.get("status")
    terms = record.get("commitment")
    if status == "active" and isinstance(terms, dict) and terms.get("state"):
        return str(terms["state"])
    return status_word(status)


def action_word(action: str | None) -> str:
    """``memory.save`` → ``saved``, ``review.approve`` → ``approved``…"""
    value = str(action or "")
    return ACTION_WORDS.get(value, _fallback(value))


def actor_word(kind: str | None, name: str | None = None) -> str:
    """``owner`` → ``you``; ``agent`` + ``claude-code`` → ``agent claude-code``;
    ``mcp_client`` + ``codex`` → ``coding agent (MCP) codex``."""
    value = str(kind or "")
    who = ACTOR_WORDS.get(value, _fallback(value) or "someone")
    if value == "owner" or not name or name == value:
        return who
    return f"{who} {name}"


def actor_of(actor: Any) -> str:
    """An event's or provenance's actor (a dict with ``kind`` and ``name``) in words."""
    if isinstance(actor, dict):
        return actor_word(actor.get("kind"), actor.get("name"))
    return actor_word(str(actor or ""))


def counted(count: int, plural: str) -> str:
    """``1 board``, ``2 boards``: a count with its noun in the right number."""
    singular = plural[:-1] if plural.endswith("s") and not plural.endswith("ss") else plural
    return f"{count} {singular if count == 1 else plural}"


def listing(words: list[str]) -> str:
    """``API key``, ``API key and token``, ``a, b and c``."""
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def local_time(iso: str | None) -> str:
    """A stored ISO 8601 UTC time in the owner's local time with the zone shown:
    ``2026-11-30T17:04:00Z`` → ``2026-11-30 18:04 CET`` (in Europe/Berlin)."""
    if not iso:
        return ""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M %Z")
