"""Edit and approve: the owner's corrected words become the active record.

The proposal is never edited (judgments are append-only): the owner saves a new
record with the proposal's kind, scopes, terms and evidence and the owner's text,
``replaces`` naming the proposal. Being the owner's own save it lands active and
supersedes the proposal in the same transaction, with its event; the proposal stays
readable as the history of what was proposed. The review window's Edit & approve
builds the same save from its form.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mama_core.json_types import JsonObject
from mama_core.memory import verbs
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.evidence import evidence_ids
from mama_core.memory.inputs import SaveInput
from mama_core.memory.verbs import Verb


def edited_save(record: Mapping[str, Any], summary: str) -> SaveInput:
    """The owner's save replacing the proposal ``record`` (as ``memory.read`` returns it)
    with ``summary`` as its text; ``invalid_transition`` unless it is still proposed."""
    verbs.require(Verb.EDIT_APPROVE, record.get("id"), str(record.get("status")))
    fields: dict[str, Any] = {
        "kind": record["kind"],
        "topic": record.get("topic") or "",
        "summary": summary,
        "details": record.get("details") or "",
        "replaces": [int(record["id"])],
        "valid_from": record.get("valid_from"),
    }
    for key in ("applies_when", "steps", "scopes"):
        if record.get(key):
            fields[key] = record[key]
    fields.update(carried(record, str(record["kind"])))
    return parse_input(SaveInput, **fields)


def carried(record: Mapping[str, Any], kind: str) -> JsonObject:
    """What the owner's edit keeps of proposal ``record`` beyond its words, as
    ``memory.save`` fields: the items it rests on, and (still a commitment) its terms,
    its due in the zone it was given in."""
    out: JsonObject = {}
    cited = evidence_ids(record.get("provenance") or {})
    terms: Mapping[str, Any] | None = record.get("commitment")
    listed: list[Any] = list((terms or {}).get("source_observations") or [])
    sources = [int(i) for i in listed]
    if terms is not None and kind == "commitment":
        out["commitment"] = {
            "owed_by": terms.get("owed_by") or "owner",
            "owed_to": terms.get("owed_to") or "",
            "due": _due(terms.get("due_at"), terms.get("due_tz")),
            "source_observations": sources,
        }
        cited = [i for i in cited if i not in sources]
    else:  # not (or no longer) a commitment: where it was found is still its evidence
        cited = list(dict.fromkeys([*cited, *sources]))
    if cited:
        out["evidence"] = [f"obs:{i}" for i in cited]
    return out


def _due(due_at: object, due_tz: object) -> datetime | None:
    """The stored due instant back in the zone it was given in (so the zone is kept)."""
    if not due_at:
        return None
    moment = datetime.fromisoformat(str(due_at).replace("Z", "+00:00"))
    if due_tz:
        try:
            return moment.astimezone(ZoneInfo(str(due_tz)))
        except (ZoneInfoNotFoundError, ValueError):
            return moment
    return moment
