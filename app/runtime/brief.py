"""The daily brief as MAMA writes it without a model: a pure function over plain inputs.

What the owner who lives in Slack, mail, Trello and a calendar wants first thing:
today's meetings (with what falls due during them), what came in since the last
brief (per connector and channel), which promises are overdue or
due today and which new ones wait for a yes, and how many proposals wait for
review. The inputs are what the catalog reads return (``observation.counts``,
``commitment.list``, ``memory.search`` over proposals); the gatherer
(``app.runtime.brief_gather``) fetches them, this module only words them, so
every line can be tested from fixed dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from app.runtime.meetings import Meeting, agenda_lines
from mama_core import clock as store_clock

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MAX_LINES = 10
"""Items shown per section; the rest are counted with where to see them."""
OWNER = "owner"


@dataclass(frozen=True)
class BriefInputs:
    """Everything one brief says, as plain values."""

    now: datetime
    """When it is written (aware)."""
    timezone: str
    """The owner's IANA timezone: days and times are shown in it."""
    since: datetime | None = None
    """When the previous brief was written; None for the first one."""
    covers: tuple[str, ...] = ("observations", "commitments", "proposals")
    observation_counts: Sequence[Mapping[str, Any]] = ()
    """``observation.counts`` rows: source, channel, count (items after the last brief)."""
    commitments: Sequence[Mapping[str, Any]] = ()
    """``commitment.list`` rows (open, proposed included)."""
    proposals: Sequence[Mapping[str, Any]] = ()
    """Judgments waiting for review (``memory.search`` rows: id, kind, summary)."""
    proposals_more: bool = False
    """More proposals wait than ``proposals`` holds."""
    commitments_error: str | None = None
    """Why the commitments could not be read (then the section says so, not "nothing")."""
    meetings: Sequence[Meeting] = ()
    """Every kept calendar occurrence's latest state; none (no calendar): no section."""


def build_brief(inputs: BriefInputs) -> str:
    """The brief's text, one section per thing it covers, in a fixed order."""
    zone = ZoneInfo(inputs.timezone)
    now = inputs.now.astimezone(zone)
    lines = [f"Your brief for {_day(now)}, {now:%H:%M} ({inputs.timezone})"]
    if inputs.meetings:
        lines += ["", *agenda_lines(inputs.meetings, inputs.now, zone, inputs.commitments)]
    if "observations" in inputs.covers:
        lines += ["", *_observations(inputs, zone)]
    if "commitments" in inputs.covers:
        lines += ["", *_commitments(inputs, zone, now)]
    if "proposals" in inputs.covers:
        lines += ["", *_proposals(inputs)]
    return "\n".join(lines)


# --- sections -----------------------------------------------------------


def _observations(inputs: BriefInputs, zone: ZoneInfo) -> list[str]:
    if inputs.since is None:
        head = "From your connectors so far:"
    else:
        head = f"New from your connectors since the last brief ({_when(inputs.since, zone)}):"
    by_source: dict[str, list[Mapping[str, Any]]] = {}
    for row in inputs.observation_counts:
        if int(row["count"]) > 0:
            by_source.setdefault(str(row["source"]), []).append(row)
    if not by_source:
        return [head, "• nothing new"]
    lines = [head]
    for source in sorted(by_source, key=lambda s: (-_total(by_source[s]), s)):
        rows = sorted(by_source[source], key=lambda r: (-int(r["count"]), str(r["channel"])))
        channels = ", ".join(f"{_channel(r)} {int(r['count'])}" for r in rows[:5])
        if len(rows) > 5:
            channels += f", {len(rows) - 5} more channels"
        lines.append(f"• {source}: {_total(rows)} new ({channels})")
    return lines


def _commitments(inputs: BriefInputs, zone: ZoneInfo, now: datetime) -> list[str]:
    if inputs.commitments_error is not None:
        return [f"Commitments: could not be read ({inputs.commitments_error})"]
    overdue: list[Mapping[str, Any]] = []
    today: list[Mapping[str, Any]] = []
    proposed: list[Mapping[str, Any]] = []
    for item in inputs.commitments:
        due = _due(item)
        # Overdue at the brief's own now (the list's ``overdue`` flag is at the reader's).
        if due is not None and due < inputs.now:
            overdue.append(item)
        elif due is not None and due.astimezone(zone).date() == now.date():
            today.append(item)
        elif item.get("status") == "proposed" and _new(item, inputs.since):
            proposed.append(item)
    if not (overdue or today or proposed):
        return ["Commitments: nothing overdue, nothing due today, nothing new to confirm."]
    lines: list[str] = []
    if overdue:
        lines += [f"Overdue ({len(overdue)}):"]
        lines += _listed(overdue, lambda c: _commitment_line(c, zone, "was due"))
    if today:
        lines += [f"Due today ({len(today)}):"]
        lines += _listed(today, lambda c: _commitment_line(c, zone, "at", time_only=True))
    if proposed:
        lines += [f"Newly proposed, to confirm or drop ({len(proposed)}):"]
        lines += _listed(proposed, lambda c: _commitment_line(c, zone, "due"))
    return lines


def _proposals(inputs: BriefInputs) -> list[str]:
    waiting = [p for p in inputs.proposals if p.get("kind") != "commitment"]
    if not waiting:
        return ["Proposals: none waiting for your review."]
    count = f"{len(waiting)}+" if inputs.proposals_more else str(len(waiting))
    lines = [f"Waiting for your review ({count}):"]
    lines += _listed(
        waiting,
        lambda p: f"• #{p['id']} {p['kind']}: {_short(str(p['summary']))}",
        more=inputs.proposals_more,
    )
    return lines


# --- pieces -------------------------------------------------------------


def _listed(items: Sequence[Mapping[str, Any]], line: Any, *, more: bool = False) -> list[str]:
    shown = [line(item) for item in items[:MAX_LINES]]
    rest = max(0, len(items) - MAX_LINES)
    if rest or more:
        shown.append(f"• … and {rest}{'+' if more else ''} more" if rest else "• … and more")
    return shown


def _commitment_line(
    item: Mapping[str, Any], zone: ZoneInfo, word: str, *, time_only: bool = False
) -> str:
    owed_by, owed_to = str(item.get("owed_by") or ""), str(item.get("owed_to") or "")
    if owed_by == OWNER and owed_to not in ("", OWNER):
        who = f"You owe {owed_to}"
    elif owed_by == OWNER:
        who = "You"
    elif owed_to == OWNER:
        who = f"{owed_by} owes you"
    else:
        who = f"{owed_by} owes {owed_to}"
    line = f"• #{item['id']} {who}: {_short(str(item.get('summary', '')))}"
    due = _due(item)
    if due is not None:
        local = due.astimezone(zone)
        line += f" — {word} {local:%H:%M}" if time_only else f" — {word} {_when(due, zone)}"
    if item.get("status") == "proposed":
        line += " (proposed)"
    return line


def _due(item: Mapping[str, Any]) -> datetime | None:
    value = item.get("due_at")
    return None if not value else store_clock.to_utc(str(value))


def _new(item: Mapping[str, Any], since: datetime | None) -> bool:
    recorded = item.get("recorded_at")
    if since is None or not recorded:
        return True
    return store_clock.to_utc(str(recorded)) > since


def _total(rows: Sequence[Mapping[str, Any]]) -> int:
    return sum(int(r["count"]) for r in rows)


def _channel(row: Mapping[str, Any]) -> str:
    return str(row.get("channel") or "") or "(no channel)"


def _day(moment: datetime) -> str:
    return f"{WEEKDAYS[moment.weekday()]} {moment.day} {MONTHS[moment.month - 1]} {moment.year}"


def _when(moment: datetime, zone: ZoneInfo) -> str:
    local = moment.astimezone(zone)
    return f"{WEEKDAYS[local.weekday()]} {local.day} {MONTHS[local.month - 1]} {local:%H:%M}"


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
