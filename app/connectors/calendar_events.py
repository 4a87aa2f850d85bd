"""Calendar data as items: iCalendar text in, one item per occurrence *change* out.

``occurrences`` expands an iCalendar document (``icalendar`` parses it,
``recurring-ical-events`` expands its recurrences, exceptions and EXDATEs) into
the occurrences inside a window, each as an ``Occurrence`` with the item
metadata another part of MAMA reads (the brief, the person view): times are kept
in the zone the event was written in. ``Changes`` compares them with what the
cursor remembers and makes an item for each new, moved, edited or cancelled
occurrence; an occurrence that vanished from a calendar read in full (deleted
at the source) becomes a cancelled item too. Every later item names the one
before it (``revises``), so the newest item of an occurrence is its state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any

import icalendar
import recurring_ical_events

from app.connectors.base import REVISES, Item

MAX_TEXT = 4000
MAX_NOTES = 1500
STATUSES = ("confirmed", "tentative", "cancelled")


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of an event inside the window, as the source says it now."""

    calendar: str
    """The calendar's name as the owner knows it (``Work``)."""
    key: str
    """``<calendar>/<uid>/<recurrence id or ->``: stable across moves and edits."""
    title: str
    at: datetime | None
    """LAST-MODIFIED, else CREATED, else DTSTAMP (aware), if the event has any."""
    metadata: Mapping[str, Any]
    notes: str = ""

    @property
    def fingerprint(self) -> str:
        """What identifies this state: a changed time, place, status or guest list
        changes it, so it becomes a new item."""
        data = {"meta": dict(self.metadata), "title": self.title, "notes": self.notes}
        raw = json.dumps(data, sort_keys=True, default=str).encode()
        return hashlib.sha256(raw).hexdigest()[:12]


class CalendarDataError(ValueError):
    """The text is not iCalendar data (the message says what it is instead)."""


def parse_calendar(data: str | bytes) -> icalendar.Calendar:
    """The calendar in ``data``, or CalendarDataError."""
    try:
        return icalendar.Calendar.from_ical(data)
    except ValueError as exc:
        raise CalendarDataError(f"not iCalendar data ({exc})") from None


def occurrences(
    calendar: icalendar.Calendar, calendar_name: str, start: datetime, end: datetime
) -> list[Occurrence]:
    """The VEVENT occurrences of ``calendar`` that overlap ``[start, end)``."""
    masters: dict[str, Any] = {}
    recurring: set[str] = set()
    for component in calendar.walk("VEVENT"):
        uid = str(component.get("UID", ""))
        if component.get("RRULE") or component.get("RDATE") or component.get("RECURRENCE-ID"):
            recurring.add(uid)
        if component.get("RECURRENCE-ID") is None:
            masters.setdefault(uid, component)
    found: list[Occurrence] = []
    expanded: Iterable[Any] = recurring_ical_events.of(calendar).between(start, end)
    for event in expanded:
        uid = str(event.get("UID", ""))
        found.append(_occurrence(event, masters.get(uid), uid in recurring, calendar_name))
    return found


def _occurrence(event: Any, master: Any, recurring: bool, calendar_name: str) -> Occurrence:
    uid = str(event.get("UID", ""))
    start_prop, end_prop = event.get("DTSTART"), event.get("DTEND")
    start_value: date = start_prop.dt
    end_value: date
    if end_prop is not None:
        end_value = end_prop.dt
    elif event.get("DURATION") is not None:
        end_value = start_value + event.get("DURATION").dt
    else:  # RFC 5545: a day for an all-day event, an instant otherwise
        end_value = start_value if isinstance(start_value, datetime) else start_value + timedelta(1)
    all_day = not isinstance(start_value, datetime)
    recurrence = event.get("RECURRENCE-ID") if recurring else None
    recurrence_id = None if recurrence is None else _iso(recurrence.dt)
    # An exception (a moved instance) often carries only what changed: the rest is the
    # series' own.
    organizer = _person(event.get("ORGANIZER") or (master or {}).get("ORGANIZER"))
    attendees = [
        p for p in (_person(a) for a in _listed(_inherited(event, master, "ATTENDEE"))) if p
    ]
    location = str(_inherited(event, master, "LOCATION") or "") or None
    status = str(event.get("STATUS") or "CONFIRMED").lower()
    metadata: dict[str, Any] = {
        "kind": "event",
        "uid": uid,
        "recurrence_id": recurrence_id,
        "start": _iso(start_value),
        "end": _iso(end_value),
        "all_day": all_day,
        "tzid": _tzid(start_prop),
        "location": location,
        "organizer": organizer,
        "attendees": attendees,
        "status": status if status in STATUSES else "confirmed",
    }
    stamp = event.get("LAST-MODIFIED") or event.get("CREATED") or event.get("DTSTAMP")
    notes = str(_inherited(event, master, "DESCRIPTION") or "").strip()
    return Occurrence(
        calendar=calendar_name,
        key=f"{calendar_name}/{uid}/{recurrence_id or '-'}",
        title=str(_inherited(event, master, "SUMMARY") or "").strip() or "(no title)",
        at=_aware(stamp.dt) if stamp is not None else None,
        metadata=metadata,
        notes=notes[:MAX_NOTES],
    )


def _inherited(event: Any, master: Any, name: str) -> Any:
    value = event.get(name)
    return value if value is not None or master is None else master.get(name)


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _person(value: Any) -> dict[str, str] | None:
    """``{"name", "email"}`` of an ORGANIZER/ATTENDEE (the address without ``mailto:``)."""
    if value is None:
        return None
    address = str(value)
    email = address[7:] if address.lower().startswith("mailto:") else address
    params = getattr(value, "params", {}) or {}
    name = str(params.get("CN") or "").strip()
    return {"name": name or email, "email": email}


def _tzid(prop: Any) -> str | None:
    """The TZID the event was written with (as given), ``UTC`` for UTC times, None for
    all-day and floating times."""
    given = prop.params.get("TZID") if getattr(prop, "params", None) else None
    if given:
        return str(given)
    value = prop.dt
    if isinstance(value, datetime) and value.tzinfo is not None:
        offset = value.utcoffset()
        return "UTC" if offset == timedelta(0) else _zone_name(value.tzinfo)
    return None


def _zone_name(zone: tzinfo) -> str | None:
    return getattr(zone, "key", None) or getattr(zone, "zone", None)


def _iso(value: date) -> str:
    """ISO text with the event's own offset; a date alone for an all-day event."""
    if isinstance(value, datetime):
        return value.isoformat()
    return value.isoformat()


def _aware(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return None


# --- what changed since the cursor ----------------------------------------


@dataclass
class Known:
    """What the cursor remembers of an occurrence: enough to name the item it had last
    and to say what a deleted one was."""

    serial: int
    fingerprint: str
    end: str
    """Its end (ISO): a vanished occurrence that had ended before the window is not a
    cancellation, only out of sight."""
    title: str
    metadata: dict[str, Any]
    calendar: str
    """The calendar it is in (only a calendar read in full can say it is gone)."""

    @property
    def external_id(self) -> str:
        """The id of the last item made for it (the serial keeps A→B→A distinct)."""
        return f"#{self.serial}-{self.fingerprint}"

    def to_json(self) -> list[Any]:
        return [self.serial, self.fingerprint, self.end, self.title, self.metadata, self.calendar]

    @classmethod
    def from_json(cls, raw: list[Any]) -> Known:
        return cls(int(raw[0]), str(raw[1]), str(raw[2]), str(raw[3]), dict(raw[4]), str(raw[5]))


def external_id(key: str, known: Known) -> str:
    return f"{key}{known.external_id}"


@dataclass(frozen=True)
class Change:
    """One item to make, and the state the cursor keeps for it once it is returned."""

    key: str
    item: Item | None
    """None: the occurrence only left the window; it is forgotten without an item."""
    known: Known | None
    """None: the occurrence is forgotten (deleted at the source, or out of the window)."""


def changes(
    found: list[Occurrence],
    known: Mapping[str, Known],
    read_calendars: set[str],
    *,
    source: str,
    window_start: datetime,
    now: datetime,
    scope: Any,
) -> list[Change]:
    """The items for what is new or different in ``found`` against ``known``, plus a
    cancellation for each known occurrence of a calendar in ``read_calendars`` that is
    gone (while it had not yet ended before the window)."""
    made: list[Change] = []
    seen: set[str] = set()
    for occ in found:
        seen.add(occ.key)
        before = known.get(occ.key)
        if before is not None and before.fingerprint == occ.fingerprint:
            continue
        if before is None and occ.metadata["status"] == "cancelled":
            continue  # never seen before and already off: nothing the owner missed
        state = Known(
            serial=1 if before is None else before.serial + 1,
            fingerprint=occ.fingerprint,
            end=str(occ.metadata["end"]),
            title=occ.title,
            metadata={k: occ.metadata[k] for k in ("uid", "recurrence_id", "start", "end")},
            calendar=occ.calendar,
        )
        metadata = dict(occ.metadata)
        if before is not None:
            metadata[REVISES] = external_id(occ.key, before)
        made.append(
            Change(
                occ.key,
                Item(
                    source=source,
                    external_id=external_id(occ.key, state),
                    channel=occ.calendar,
                    scope=scope(occ.calendar),
                    author=_author(occ.metadata),
                    at=occ.at or now,
                    text=event_text(occ.title, occ.metadata, occ.notes),
                    metadata=metadata,
                ),
                state,
            )
        )
    for key, before in known.items():
        calendar = before.calendar
        if key in seen or calendar not in read_calendars:
            continue
        if _ended_before(before.end, window_start):
            made.append(Change(key, None, None))  # out of the window: forgotten quietly
            continue
        metadata = {
            "kind": "event",
            **before.metadata,
            "all_day": "T" not in before.end,
            "tzid": None,
            "location": None,
            "organizer": None,
            "attendees": [],
            "status": "cancelled",
            REVISES: external_id(key, before),
        }
        gone = replace(before, serial=before.serial + 1, fingerprint="deleted")
        made.append(
            Change(
                key,
                Item(
                    source=source,
                    external_id=external_id(key, gone),
                    channel=calendar,
                    scope=scope(calendar),
                    author="",
                    at=now,
                    text=event_text(before.title, metadata, "Removed from the calendar."),
                    metadata=metadata,
                ),
                None,
            )
        )
    return made


def _ended_before(end: str, moment: datetime) -> bool:
    try:
        if "T" not in end:
            return date.fromisoformat(end) <= moment.date()
        value = datetime.fromisoformat(end)
    except ValueError:
        return False
    return (value if value.tzinfo else value.replace(tzinfo=UTC)) <= moment


def _author(metadata: Mapping[str, Any]) -> str:
    organizer = metadata.get("organizer") or {}
    return str(organizer.get("name") or organizer.get("email") or "")


# --- the readable text ------------------------------------------------------


def event_text(title: str, metadata: Mapping[str, Any], notes: str = "") -> str:
    """``Meeting: …`` / ``When: …`` / ``Where: …`` / ``With: …`` lines, as kept."""
    status = metadata.get("status")
    head = "Cancelled meeting" if status == "cancelled" else "Meeting"
    lines = [f"{head}: {title}", f"When: {when_text(metadata)}"]
    if status == "tentative":
        lines.append("Status: tentative")
    if metadata.get("location"):
        lines.append(f"Where: {metadata['location']}")
    organizer = metadata.get("organizer")
    if organizer:
        lines.append(f"Organizer: {_named(organizer)}")
    attendees = metadata.get("attendees") or []
    if attendees:
        lines.append("With: " + ", ".join(_named(a) for a in attendees))
    if notes:
        lines.append(f"Notes: {notes}")
    text = "\n".join(lines)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def when_text(metadata: Mapping[str, Any]) -> str:
    """The time as written at the source: ``2026-12-02 09:00-10:00 (America/New_York)``,
    or ``2026-12-02 (all day)``."""
    start, end = str(metadata.get("start") or ""), str(metadata.get("end") or "")
    if metadata.get("all_day") or "T" not in start:
        last = _last_day(start, end)
        return f"{start} (all day)" if last in ("", start) else f"{start} to {last} (all day)"
    try:
        first, until = datetime.fromisoformat(start), datetime.fromisoformat(end)
    except ValueError:
        return start
    zone = metadata.get("tzid") or (first.strftime("UTC%z") if first.tzinfo else "floating")
    ends = f"{until:%H:%M}" if until.date() == first.date() else f"{until:%Y-%m-%d %H:%M}"
    return f"{first:%Y-%m-%d %H:%M}-{ends} ({zone})"


def _last_day(start: str, end: str) -> str:
    try:
        return (date.fromisoformat(end) - timedelta(days=1)).isoformat()
    except ValueError:
        return start


def _named(person: Mapping[str, Any]) -> str:
    name, email = str(person.get("name") or ""), str(person.get("email") or "")
    if name and email and name != email:
        return f"{name} <{email}>"
    return name or email
