"""The text of a review card: what was proposed, by whom, in which turn."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mama_core.memory.evidence import evidence_line
from mama_core.memory.inputs import OWNER_PARTY
from mama_core.memory.results import OwnerSettingsResult, PendingChange
from mama_core.memory.verbs import Verb, may
from mama_core.model import Status

_TURNS = {
    "owner_message": "while answering you",
    "source_delta": "from outside content",
    "scheduled": "during a scheduled run",
    "mcp": "in a coding session",
    "ui": "in the app",
    "cli": "at the command line",
}


def card_text(record: dict[str, Any]) -> str:
    """A proposal as the owner reviews it (Markdown-ish; the channel formats it): a
    proposed judgment, or a change someone proposed to one of the owner's records."""
    if record.get("status") != Status.PROPOSED and record.get("pending_change"):
        return change_card_text(record)
    if record.get("commitment") is not None:
        return commitment_card_text(record)
    provenance: dict[str, Any] = record.get("provenance") or {}
    who = provenance.get("actor_name") or "the agent"
    when = _TURNS.get(str(provenance.get("turn")), "")
    lines = [f"**New proposal #{record.get('id')}** ({record.get('kind')})"]
    if record.get("status") not in (None, Status.PROPOSED):  # decided: say what it is now
        lines = [f"**#{record.get('id')}** ({record.get('kind')}, {record.get('status')})"]
    if record.get("topic"):
        lines.append(f"Topic: {record['topic']}")
    lines.append(str(record.get("summary", "")))
    if record.get("applies_when"):
        lines.append(f"Applies when: {record['applies_when']}")
    for i, step in enumerate(record.get("steps") or [], start=1):
        lines.append(f"{i}. {step}")
    lines += rests_on(record)
    restates: dict[str, Any] | None = record.get("restates")
    if restates and record.get("status") == "proposed":
        lines.append(
            f"Says again what #{restates.get('id')} says: {restates.get('summary', '')}\n"
            f"Approve to keep this wording beside #{restates.get('id')} (search shows them "
            "as one); reject to drop it."
        )
    scopes = ", ".join(record.get("scopes") or [])
    lines.append(
        f"_Proposed by {who} {when}{' in ' + scopes if scopes else ''}._".replace("  ", " ")
    )
    return "\n".join(lines)


def commitment_card_text(record: dict[str, Any]) -> str:
    """A commitment as the owner confirms or drops it: who owes what to whom by when,
    and where it was found."""
    provenance: dict[str, Any] = record.get("provenance") or {}
    who = provenance.get("actor_name") or "the agent"
    when = _TURNS.get(str(provenance.get("turn")), "")
    terms: dict[str, Any] = record["commitment"]
    if may(record, Verb.APPROVE):  # still to confirm or drop
        lines = [f"**New commitment #{record.get('id')}** (confirm it, or drop it)"]
    else:
        lines = [f"**Commitment #{record.get('id')}** ({record.get('status')}, {terms['state']})"]
    lines.append(f"{commitment_line(record.get('summary', ''), terms)}")
    sources = terms.get("source_observations") or []
    cited = rests_on(record)
    if cited:
        lines += cited
    elif sources:
        lines.append("Found in " + ", ".join(f"obs:{i}" for i in sources))
    lines.append(f"_Recorded by {who} {when}._".replace("  ", " ").replace(" ._", "._"))
    return "\n".join(lines)


def rests_on(record: dict[str, Any]) -> list[str]:
    """The items a proposal cites, one line each (``memory.read``'s ``evidence``), so the
    owner decides with what it rests on in view."""
    cited: list[dict[str, Any]] = list(record.get("evidence") or [])
    if not cited:
        return []
    return ["Rests on:", *(f"- {evidence_line(item)}" for item in cited)]


def commitment_line(summary: object, terms: dict[str, Any]) -> str:
    """ "You owe Dana: send the deck — due Fri 5 Dec 17:00 Europe/Berlin"."""
    owed_by, owed_to = str(terms.get("owed_by") or ""), str(terms.get("owed_to") or "")
    if owed_by == OWNER_PARTY:
        who = f"You owe {owed_to}" if owed_to and owed_to != OWNER_PARTY else "You will"
    else:
        to = "you" if owed_to in (OWNER_PARTY, "") else owed_to
        who = f"{owed_by or 'Someone'} owes {to}"
    line = f"{who}: {summary}"
    due = due_text(terms.get("due_at"), terms.get("due_tz"))
    return f"{line} — due {due}" if due else line


def due_text(due_at: object, due_tz: object) -> str:
    """A due instant for a person, in the zone it was given in (else UTC); '' for none."""
    if not due_at:
        return ""
    try:
        moment = datetime.fromisoformat(str(due_at).replace("Z", "+00:00"))
    except ValueError:
        return str(due_at)
    zone = "UTC"
    if due_tz:
        with contextlib.suppress(ZoneInfoNotFoundError, ValueError):
            moment, zone = moment.astimezone(ZoneInfo(str(due_tz))), str(due_tz)
    return f"{moment.strftime('%a')} {moment.day} {moment.strftime('%b %H:%M')} {zone}"


def change_card_text(record: dict[str, Any]) -> str:
    """A proposed change (retire, outcome, link) to the owner's record ``record``."""
    change: dict[str, Any] = record["pending_change"]
    by: dict[str, Any] = change.get("proposed_by") or {}
    who = by.get("name") or "the agent"
    when = _TURNS.get(str(by.get("turn")), "")
    lines = [
        f"**Proposed change to your #{record.get('id')}** ({record.get('kind')})",
        f"{who} proposes to {change.get('description', '')}",
        "",
        "Your record now:",
        *record_body(record),
        f"_Proposed {when}. Approve applies it as your own change; Reject leaves it._".replace(
            "  ", " "
        ),
    ]
    return "\n".join(lines)


def setting_change_card_text(change: PendingChange) -> str:
    """A change the agent proposed to the owner's settings (a change proposal as the
    owner reads it): what it would set, who proposes it, and where it came from."""
    by = change.proposed_by or {}
    who = by.get("name") or "the agent"
    when = _TURNS.get(str(by.get("turn")), "")
    origin = " after reading words you did not write" if by.get("tainted") else ""
    lines = [
        f"**Proposed change to your settings** (change {change.id})",
        f"{who} proposes to {change.description or ''}",
        f"_Proposed {when}{origin}. Approve applies it as your own change; Reject leaves "
        "your settings as they are._".replace("  ", " "),
    ]
    return "\n".join(lines)


def settings_line(settings: OwnerSettingsResult) -> str:
    """``Now: timezone Europe/Berlin; daily brief on, mon, fri at 07:45.``"""
    brief = settings.brief
    state = "on" if brief.enabled else "off"
    days = ", ".join(brief.days) or "no days"
    zone = settings.timezone or "not set"
    return f"Now: timezone {zone}; daily brief {state}, {days} at {brief.time}."


def record_body(record: dict[str, Any]) -> list[str]:
    """A judgment's own words, line by line: topic, summary, when it applies, steps, details."""
    lines: list[str] = []
    if record.get("topic"):
        lines.append(f"Topic: {record['topic']}")
    lines.append(str(record.get("summary", "")))
    if record.get("applies_when"):
        lines.append(f"Applies when: {record['applies_when']}")
    for i, step in enumerate(record.get("steps") or [], start=1):
        lines.append(f"{i}. {step}")
    if record.get("details"):
        lines += ["", str(record["details"])]
    return lines


def record_text(record: dict[str, Any]) -> str:
    """A judgment in full, for the Show button."""
    lines = [f"**#{record.get('id')} {record.get('kind')}** ({record.get('status')})"]
    lines += record_body(record)
    lines += rests_on(record)
    provenance: dict[str, Any] = record.get("provenance") or {}
    meta = [f"recorded {record.get('recorded_at')}", f"involvement {record.get('involvement')}"]
    if provenance.get("actor_name"):
        meta.append(f"by {provenance['actor_name']}")
    if provenance.get("source_refs"):
        meta.append("sources " + ", ".join(map(str, provenance["source_refs"])))
    lines += ["", "_" + "; ".join(meta) + "_"]
    return "\n".join(lines)


GROUP_LINES = 10
"""At most this many proposals are listed on a group card (Review shows each)."""


def group_card_text(origin: str, records: list[dict[str, Any]]) -> str:
    """What one source-delta turn proposed, on one card: ``4 things found in #ops``, one
    line each. Nothing of it is believed until the owner approves."""
    count = len(records)
    lines = [f"**{count} thing{'' if count == 1 else 's'} found in {origin}** — Review"]
    for record in records[:GROUP_LINES]:
        summary = " ".join(str(record.get("summary", "")).split())
        if len(summary) > 160:
            summary = summary[:159] + "…"
        refs = (record.get("provenance") or {}).get("evidence") or []
        cited = f" ({', '.join(map(str, refs))})" if refs else ""
        lines.append(f"- #{record.get('id')} {record.get('kind')}: {summary}{cited}")
    if count > GROUP_LINES:
        lines.append(f"… and {count - GROUP_LINES} more (Review shows each).")
    lines.append(
        "_Claims from outside content, not your beliefs: nothing here is used until you "
        "approve it. Approve all takes them all; Review sends each for its own decision._"
    )
    return "\n".join(lines)
