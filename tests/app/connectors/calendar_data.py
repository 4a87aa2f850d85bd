"""The owner's week as iCalendar text, for the calendar tests (and the sync benchmark).

"Now" is Wednesday 2 December 2026, 07:00 UTC (08:00 in Berlin). The events: a
weekly stand-up in Berlin with today's instance moved and next week's struck out, a
review with an organizer, guests and a room (moved later by a test), a lunch
(cancelled later), an offsite (deleted later), an all-day company day, and a call
written in New York time."""

from __future__ import annotations

from datetime import UTC, datetime

NOW = datetime(2026, 12, 2, 7, 0, tzinfo=UTC)
STAMP = "20261120T080000Z"


def calendar(*events: str, name: str | None = None) -> str:
    head = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//MAMA tests//EN"]
    if name:
        head.append(f"X-WR-CALNAME:{name}")
    return "\r\n".join([*head, *events, "END:VCALENDAR"]) + "\r\n"


def vevent(uid: str, summary: str, *lines: str, modified: str = STAMP) -> str:
    return "\r\n".join(
        [
            "BEGIN:VEVENT",
            f"UID:{uid}",
            f"DTSTAMP:{modified}",
            f"LAST-MODIFIED:{modified}",
            f"SUMMARY:{summary}",
            *lines,
            "END:VEVENT",
        ]
    )


def standup() -> str:
    """Weekly on Wednesdays 09:30 Berlin from 18 Nov; today's at 11:00; 9 Dec struck out."""
    return calendar(
        vevent(
            "standup",
            "Standup",
            "DTSTART;TZID=Europe/Berlin:20261118T093000",
            "DTEND;TZID=Europe/Berlin:20261118T100000",
            "RRULE:FREQ=WEEKLY;COUNT=8",
            "EXDATE;TZID=Europe/Berlin:20261209T093000",
            "ORGANIZER;CN=Anna K:mailto:anna@corp.example",
            "ATTENDEE;CN=Bob Li:mailto:bob@corp.example",
        ),
        vevent(
            "standup",
            "Standup",
            "RECURRENCE-ID;TZID=Europe/Berlin:20261202T093000",
            "DTSTART;TZID=Europe/Berlin:20261202T110000",
            "DTEND;TZID=Europe/Berlin:20261202T113000",
            "SEQUENCE:1",
            modified="20261125T090000Z",
        ),
    )


def review(start: str = "140000", end: str = "150000", modified: str = STAMP) -> str:
    return calendar(
        vevent(
            "review",
            "Quarterly review",
            f"DTSTART;TZID=Europe/Berlin:20261202T{start}",
            f"DTEND;TZID=Europe/Berlin:20261202T{end}",
            "LOCATION:Room 4",
            "ORGANIZER;CN=Anna K:mailto:anna@corp.example",
            "ATTENDEE;CN=Anna K;PARTSTAT=ACCEPTED:mailto:anna@corp.example",
            "ATTENDEE;CN=Bob Li;PARTSTAT=TENTATIVE:mailto:bob@corp.example",
            "DESCRIPTION:Bring the numbers.",
            modified=modified,
        )
    )


def lunch(status: str = "CONFIRMED", modified: str = STAMP) -> str:
    return calendar(
        vevent(
            "lunch",
            "Lunch with Dana",
            "DTSTART;TZID=Europe/Berlin:20261202T123000",
            "DTEND;TZID=Europe/Berlin:20261202T133000",
            f"STATUS:{status}",
            modified=modified,
        )
    )


def offsite() -> str:
    return calendar(
        vevent(
            "offsite",
            "Team offsite planning",
            "DTSTART:20261202T170000Z",
            "DTEND:20261202T180000Z",
        )
    )


def company_day() -> str:
    return calendar(
        vevent(
            "company-day",
            "Company day",
            "DTSTART;VALUE=DATE:20261202",
            "DTEND;VALUE=DATE:20261203",
        )
    )


def new_york_call() -> str:
    return calendar(
        vevent(
            "nyc",
            "Call with the New York office",
            "DTSTART;TZID=America/New_York:20261202T090000",
            "DTEND;TZID=America/New_York:20261202T100000",
            "ORGANIZER;CN=Carl M:mailto:carl@corp.example",
        )
    )


def early_sync() -> str:
    """Tomorrow's first meeting (08:00 Berlin)."""
    return calendar(
        vevent(
            "early",
            "Early sync",
            "DTSTART;TZID=Europe/Berlin:20261203T080000",
            "DTEND;TZID=Europe/Berlin:20261203T083000",
        )
    )


WEEK = {
    "standup": standup,
    "review": review,
    "lunch": lunch,
    "offsite": offsite,
    "company-day": company_day,
    "nyc": new_york_call,
    "early": early_sync,
}
"""Each event's uid and its document (one resource each on a CalDAV server)."""


def week_in_one(name: str = "Anna's calendar") -> str:
    """The whole week as one document (an iCalendar address serves one)."""
    bodies: list[str] = []
    for make in WEEK.values():
        text = make()
        inner = text.split("PRODID:-//MAMA tests//EN\r\n", 1)[1].rsplit("END:VCALENDAR", 1)[0]
        bodies.append(inner.strip("\r\n"))
    return calendar(*bodies, name=name)
