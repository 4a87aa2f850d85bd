"""The owner's meetings, from the calendar items kept: today's (and tomorrow's first).

A calendar connector keeps one item per change of each occurrence (see
``app.connectors.calendar_events``), so the newest item of an occurrence is its
state now: a moved meeting shows at its new time, a cancelled one not at all.
Times are shown in the owner's zone; an all-day event keeps its date (a day is
not shifted by zones); a floating time is read in the owner's zone. An open
commitment due while a meeting runs is marked under it — the owner cannot both
sit in the meeting and deliver.

``read_meetings`` takes any owner read (``engine.dispatch`` bound to the owner,
or the CLI's ``owner_dispatch``), so the brief, Telegram's ``/today`` and
``mama ask /today`` say the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from mama_core import clock as store_clock

Read = Callable[[str, dict[str, Any]], dict[str, Any]]
CALENDAR_SOURCE = "calendar:"
PAGE = 500
TITLE_HEADS = ("Meeting: ", "Cancelled meeting: ")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Meeting:
    """One occurrence as its newest item says it is."""

    title: str
    start: datetime | date
    """Aware (a floating time already placed in the owner's zone), or a date (all day)."""
    end: datetime | date
    all_day: bool
    status: str
    location: str | None
    calendar: str

    def on(self, day: date, zone: ZoneInfo) -> bool:
        """Whether it runs during the owner's local ``day`` (an all-day event: whether
        ``day`` is one of its dates, whatever the zone)."""
        if isinstance(self.start, datetime) and isinstance(self.end, datetime):
            first = datetime.combine(day, time(), zone)
            last = datetime.combine(day + timedelta(days=1), time(), zone)
            return self.start < last and max(self.end, self.start + timedelta(minutes=1)) > first
        start_day, end_day = _day_of(self.start), _day_of(self.end)
        return start_day <= day < max(end_day, start_day + timedelta(days=1))


def read_meetings(read: Read, zone: ZoneInfo) -> list[Meeting]:
    """Every kept occurrence's newest state (all calendar sources, purged items left out)."""
    counts = read("observation.counts", {})
    sources = sorted({str(r["source"]) for r in counts["counts"]})
    rows: list[Mapping[str, Any]] = []
    for source in (s for s in sources if s.startswith(CALENDAR_SOURCE)):
        before: int | None = None
        while True:
            payload: dict[str, Any] = {"source": source, "limit": PAGE}
            if before is not None:
                payload["before_id"] = before
            page = list(read("observation.list", payload)["observations"])
            rows += page
            if len(page) < PAGE:
                break
            before = int(page[-1]["id"])
    return latest(rows, zone)


def latest(rows: Iterable[Mapping[str, Any]], zone: ZoneInfo) -> list[Meeting]:
    """The newest item (highest id) of each occurrence, as meetings."""
    newest: dict[tuple[str, str, str, str], Mapping[str, Any]] = {}
    for row in rows:
        meta = row.get("metadata") or {}
        if meta.get("kind") != "event" or not meta.get("uid"):
            continue
        key = (
            str(row.get("source")),
            str(row.get("channel") or ""),
            str(meta["uid"]),
            str(meta.get("recurrence_id") or ""),
        )
        if key not in newest or int(row["id"]) > int(newest[key]["id"]):
            newest[key] = row
    meetings = []
    for row in newest.values():
        meeting = _meeting(row, zone)
        if meeting is not None:
            meetings.append(meeting)
    return meetings


def _meeting(row: Mapping[str, Any], zone: ZoneInfo) -> Meeting | None:
    meta = row["metadata"]
    try:
        start, end = _moment(str(meta["start"]), zone), _moment(str(meta["end"]), zone)
    except (KeyError, ValueError):
        return None
    first_line = str(row.get("text") or "").split("\n", 1)[0]
    title = next((first_line[len(h) :] for h in TITLE_HEADS if first_line.startswith(h)), "")
    return Meeting(
        title=title or first_line or "(no title)",
        start=start,
        end=end,
        all_day=bool(meta.get("all_day")) or not isinstance(start, datetime),
        status=str(meta.get("status") or "confirmed"),
        location=meta.get("location") or None,
        calendar=str(row.get("channel") or ""),
    )


def _moment(text: str, zone: ZoneInfo) -> datetime | date:
    if "T" not in text:
        return date.fromisoformat(text)
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=zone)  # floating: the owner's


def _day_of(value: datetime | date) -> date:
    return value.date() if isinstance(value, datetime) else value


# --- one day ------------------------------------------------------------------


def on_day(meetings: Iterable[Meeting], day: date, zone: ZoneInfo) -> list[Meeting]:
    """The meetings (not cancelled) of the owner's local ``day``: all-day first, then by
    start."""
    found = [m for m in meetings if m.status != "cancelled" and m.on(day, zone)]
    return sorted(found, key=lambda m: (not m.all_day, _sort_key(m), m.title))


def _sort_key(meeting: Meeting) -> datetime:
    if isinstance(meeting.start, datetime):
        return meeting.start.astimezone(UTC)
    return datetime.combine(meeting.start, time(), UTC)


def during(meeting: Meeting, commitments: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The open commitments due while ``meeting`` runs (none for all-day events)."""
    if not isinstance(meeting.start, datetime) or not isinstance(meeting.end, datetime):
        return []
    found = []
    for item in commitments:
        due = item.get("due_at")
        if due and meeting.start <= store_clock.to_utc(str(due)) < meeting.end:
            found.append(item)
    return found


def agenda_lines(
    meetings: Sequence[Meeting],
    now: datetime,
    zone: ZoneInfo,
    commitments: Sequence[Mapping[str, Any]] = (),
) -> list[str]:
    """Today's meetings in the owner's zone, then tomorrow's first; each commitment due
    during one is marked beneath it."""
    today = now.astimezone(zone).date()
    todays = on_day(meetings, today, zone)
    lines = [f"Meetings today ({len(todays)}):" if todays else "Meetings today: none."]
    for meeting in todays:
        lines.append("• " + meeting_line(meeting, zone, today))
        for item in during(meeting, commitments):
            lines.append(f"  ⚠ due during it: #{item['id']} {_short(str(item.get('summary')))}")
    tomorrow = on_day(meetings, today + timedelta(days=1), zone)
    # The first meeting to be at tomorrow: a timed one before an all-day day.
    timed = [m for m in tomorrow if not m.all_day] or tomorrow
    if timed:
        lines.append("Tomorrow first: " + meeting_line(timed[0], zone, today + timedelta(1)))
    return lines


def meeting_line(meeting: Meeting, zone: ZoneInfo, day: date) -> str:
    """``09:00-10:00 Title (Where)`` in the owner's zone; ``all day`` for a day event."""
    if isinstance(meeting.start, datetime) and isinstance(meeting.end, datetime):
        start, end = meeting.start.astimezone(zone), meeting.end.astimezone(zone)
        head = f"{start:%H:%M}" if start.date() == day else f"(from {_date(start)}) {start:%H:%M}"
        tail = f"{end:%H:%M}" if end.date() == day else f"{_date(end)} {end:%H:%M}"
        when = f"{head}-{tail}"
    else:
        when = "all day"
    line = f"{when} {meeting.title}"
    if meeting.location:
        line += f" ({meeting.location})"
    if meeting.status == "tentative":
        line += " [tentative]"
    return line


def _date(moment: datetime) -> str:
    return f"{WEEKDAYS[moment.weekday()]} {moment.day}"


def _short(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def today_text(
    meetings: Sequence[Meeting],
    now: datetime,
    zone: ZoneInfo,
    commitments: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The ``/today`` answer: the day's meetings, with what is due during them."""
    local = now.astimezone(zone)
    day = f"{WEEKDAYS[local.weekday()]} {local.day} {MONTHS[local.month - 1]} {local.year}"
    head = f"Today, {day} ({local:%H:%M} {zone.key})"
    if not meetings:
        return (
            f"{head}\nNo calendar items are kept yet: add your calendar with "
            "`mama connectors add calendar NAME` (CalDAV or an iCalendar address)."
        )
    return "\n".join([head, *agenda_lines(meetings, now, zone, commitments)])


def today_answer(read: Read, now: datetime, zone: ZoneInfo) -> str:
    """``/today`` from the store as it is: the calendar's latest state and open commitments."""
    listed = read("commitment.list", {"include_proposed": True, "state": "open", "limit": 1000})
    return today_text(read_meetings(read, zone), now, zone, list(listed["commitments"]))
