"""One judgment as HTML for the review window's detail pane.

Input is what ``memory.read`` returns: the record (text, kind, scopes,
applies-when, steps, provenance, involvement), its history (predecessors,
shown labelled as replaced) and its events. Every value is escaped: the text
was written by an agent and may contain markup.
"""

from __future__ import annotations

from html import escape
from typing import Any

from mama_core.memory.evidence import evidence_line
from ui.palette import MUTED, WAITING_BACKGROUND, status_colour
from ui.words import (
    action_word,
    actor_of,
    actor_word,
    local_time,
    record_status_word,
    status_word,
)

TURN_WORDS: dict[str, str] = {
    "owner_message": "in a turn you started with a message",
    "source_delta": "in a turn started by new content from a source",
    "scheduled": "in a scheduled turn",
    "mcp": "in an MCP session",
    "ui": "in the desktop app",
    "cli": "at the command line",
}

INVOLVEMENT_WORDS: dict[str, str] = {
    "owner_stated": "you stated it",
    "owner_approved": "you approved it",
    "agent_inferred": "the agent inferred it; you have not approved it",
    "source_derived": "derived from a source (message, mail, card); not confirmed by you",
}


def _row(label: str, value: str) -> str:
    return f"<tr><td class='k'>{escape(label)}</td><td>{value}</td></tr>"


def _badge(text: str, colour: str) -> str:
    return (
        f"<span style='color:{colour}; font-weight:600'>{escape(text)}</span>"
        if colour
        else escape(text)
    )


def provenance_html(provenance: dict[str, Any]) -> str:
    """Who wrote it, in which turn, from which source and backend."""
    parts: list[str] = []
    who = actor_word(provenance.get("actor_kind"), provenance.get("actor_name"))
    version = provenance.get("actor_version")
    if version:
        who = f"{who} {version}"
    parts.append(f"written by <b>{escape(who)}</b>")
    turn = str(provenance.get("turn") or "")
    if turn:
        parts.append(escape(TURN_WORDS.get(turn, f"in a {turn.replace('_', ' ')} turn")))
    if provenance.get("backend"):
        parts.append(f"through {escape(str(provenance['backend']))}")
    refs = provenance.get("source_refs") or []
    if refs:
        parts.append("from " + ", ".join(escape(str(r)) for r in refs))
    if provenance.get("message_ref"):
        parts.append(f"(message {escape(str(provenance['message_ref']))})")
    return " ".join(parts)


def _pending_change_html(record: dict[str, Any]) -> list[str]:
    """A change an agent proposed to this record, waiting for the owner's decision."""
    change: dict[str, Any] = record.get("pending_change") or {}
    if not change:
        return []
    by: dict[str, Any] = change.get("proposed_by") or {}
    who = actor_word(by.get("kind"), by.get("name")) if by else "An agent"
    return [
        f"<p style='background:{WAITING_BACKGROUND.on()}; padding:6px'><b>Waiting for you:</b> "
        f"{escape(who)} proposes to {escape(str(change.get('description', '')))}. "
        "Approve applies it as your own change; Reject leaves this record as it is.</p>"
    ]


def record_html(result: dict[str, Any]) -> str:
    """The detail pane's document for one ``memory.read`` result."""
    record: dict[str, Any] = result.get("record") or {}
    status = str(record.get("status", ""))
    summary = str(record.get("summary") or "")
    if status == "purged" and not summary:
        summary = "(text erased by the owner)"
    muted = MUTED.on()
    out: list[str] = [
        "<html><head><style>"
        f"td.k{{color:{muted}; padding-right:10px; vertical-align:top; white-space:nowrap}}"
        f"h3{{margin:4px 0 8px 0}} .old{{color:{muted}}} ol{{margin-top:0}}"
        "</style></head><body>",
        f"<h3>{escape(summary)}</h3>",
        *_pending_change_html(record),
        "<table cellspacing='2'>",
        _row("Memory", f"#{escape(str(record.get('id', '')))}"),
        _row(
            "Kind / status",
            f"{escape(str(record.get('kind', '')))} · "
            f"{_badge(record_status_word(record), status_colour(status))}",
        ),
        _row("Scopes", escape(", ".join(record.get("scopes") or []) or "(none)")),
    ]
    if record.get("topic"):
        out.append(_row("Topic", escape(str(record["topic"]))))
    if record.get("applies_when"):
        out.append(_row("Applies when", escape(str(record["applies_when"]))))
    steps = record.get("steps") or []
    if steps:
        items = "".join(f"<li>{escape(str(s))}</li>" for s in steps)
        out.append(_row("Steps", f"<ol>{items}</ol>"))
    if record.get("details"):
        out.append(_row("Details", escape(str(record["details"])).replace("\n", "<br>")))
    if record.get("outcome"):
        out.append(_row("Outcome", escape(str(record["outcome"]))))
    if record.get("confidence") is not None:
        out.append(_row("Confidence", escape(f"{float(record['confidence']):.2f}")))
    out.append(_row("Provenance", provenance_html(record.get("provenance") or {})))
    cited: list[dict[str, Any]] = list(record.get("evidence") or [])
    if cited:
        items = "".join(f"<li>{escape(evidence_line(item))}</li>" for item in cited)
        out.append(_row("Rests on", f"<ul style='margin:0'>{items}</ul>"))
    involvement = str(record.get("involvement") or "")
    out.append(_row("Involvement", escape(INVOLVEMENT_WORDS.get(involvement, involvement or "?"))))
    out.append(_row("Recorded", escape(local_time(record.get("recorded_at")))))
    valid = local_time(record.get("valid_from"))
    if record.get("valid_until"):
        valid += f" until {local_time(record.get('valid_until'))}"
    out.append(_row("Valid from", escape(valid)))
    if record.get("superseded_by"):
        out.append(_row("Replaced by", f"#{escape(str(record['superseded_by']))}"))
    out.append("</table>")

    history: list[dict[str, Any]] = list(result.get("history") or [])
    if history:
        out.append("<h4>History</h4><ul>")
        for older in history:
            text = str(older.get("summary") or "(text erased)")
            out.append(
                f"<li class='old'>replaced: #{escape(str(older.get('id')))} "
                f"[{escape(status_word(older.get('status')))}] {escape(text)}</li>"
            )
        out.append("</ul>")

    events: list[dict[str, Any]] = list(result.get("events") or [])
    if events:
        out.append("<h4>Events</h4><table cellspacing='2'>")
        for event in events:
            who = actor_of(event.get("actor") or {})
            payload = event.get("payload") or {}
            reason = payload.get("reason") if isinstance(payload, dict) else None
            line = f"{escape(action_word(event.get('action')))} by {escape(who)}"
            if reason:
                line += f": {escape(str(reason))}"
            out.append(
                f"<tr><td class='k'>{escape(local_time(event.get('at')))}</td><td>{line}</td></tr>"
            )
        out.append("</table>")
    out.append("</body></html>")
    return "".join(out)
