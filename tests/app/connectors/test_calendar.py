"""The calendar connector against a real CalDAV server (Radicale, started here) and an
``.ics`` file served on 127.0.0.1: recurrences with a moved and a struck-out instance,
an event moved, one cancelled, one deleted, an all-day day and a New York call — and
nothing ever written to the server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any

import pytest

from app.connectors import kinds
from app.connectors.base import REVISES, Batch, ConnectorError, Item, Problem
from app.connectors.calendar import Calendar, build, calendar_scope
from app.connectors.calendar_events import changes, occurrences, parse_calendar
from tests.app.connectors import calendar_data as data
from tests.app.connectors.calendar_servers import (
    PASSWORD,
    Account,
    IcsFile,
    Radicale,
    running_radicale,
)


@pytest.fixture(scope="module")
def radicale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Radicale]:
    """One server for the module; each test takes its own account on it."""
    with running_radicale(tmp_path_factory.mktemp("radicale")) as server:
        yield server


@pytest.fixture
def account(radicale: Radicale) -> Account:
    return radicale.account()


@pytest.fixture
def work(account: Account) -> str:
    """A calendar "Work Stuff" holding the owner's week."""
    path = account.make_calendar("work", "Work Stuff")
    for uid, make in data.WEEK.items():
        account.put(path, uid, make())
    return path


def caldav(account: Account, password: str = PASSWORD, **options: Any) -> Calendar:
    secrets = {"password": password}
    connector = build("cal", {"url": account.url, "username": account.user, **options}, secrets.get)
    connector.clock = lambda: data.NOW
    return connector


def poll(connector: Calendar, cursor: str | None = None, limit: int = 500) -> Batch:
    async def run() -> Batch:
        try:
            return await connector.poll(cursor, limit)
        finally:
            await connector.aclose()

    return asyncio.run(run())


def by_uid(items: tuple[Item, ...]) -> dict[str, list[Item]]:
    found: dict[str, list[Item]] = {}
    for item in items:
        found.setdefault(item.metadata["uid"], []).append(item)
    return found


def test_caldav_events_become_items_in_their_own_zones(
    radicale: Radicale, account: Account, work: str
) -> None:
    writes_before = radicale.writes(account.user)
    assert writes_before == 1 + len(data.WEEK)  # positive control: the log shows writes
    batch = poll(caldav(account))
    events = by_uid(batch.items)
    assert {i.source for i in batch.items} == {f"calendar:{account.user}"}
    assert {i.scope for i in batch.items} == {"channel:calendar/Work-Stuff"}
    assert {i.channel for i in batch.items} == {"Work Stuff"}

    # The weekly stand-up, expanded over the window (18 Nov to 31 Jan): today's instance
    # at its new time under its original recurrence id; 9 Dec struck out, 16 Dec there.
    standups = {i.metadata["recurrence_id"]: i.metadata for i in events["standup"]}
    assert sorted(standups) == [
        f"2026-{d}T09:30:00+01:00" for d in ("11-18", "11-25", "12-02", "12-16", "12-23", "12-30")
    ] + ["2027-01-06T09:30:00+01:00"]
    today = standups["2026-12-02T09:30:00+01:00"]
    assert (today["start"], today["end"]) == (
        "2026-12-02T11:00:00+01:00",
        "2026-12-02T11:30:00+01:00",
    )
    assert standups["2026-12-16T09:30:00+01:00"]["start"] == "2026-12-16T09:30:00+01:00"
    # The moved instance still names the series' organizer and guests.
    assert today["organizer"] == {"name": "Anna K", "email": "anna@corp.example"}
    assert today["attendees"] == [{"name": "Bob Li", "email": "bob@corp.example"}]

    (review,) = events["review"]
    assert review.author == "Anna K"
    assert review.at.isoformat() == "2026-11-20T08:00:00+00:00"
    assert review.text.splitlines() == [
        "Meeting: Quarterly review",
        "When: 2026-12-02 14:00-15:00 (Europe/Berlin)",
        "Where: Room 4",
        "Organizer: Anna K <anna@corp.example>",
        "With: Anna K <anna@corp.example>, Bob Li <bob@corp.example>",
        "Notes: Bring the numbers.",
    ]
    assert review.metadata == {
        "kind": "event",
        "uid": "review",
        "recurrence_id": None,
        "start": "2026-12-02T14:00:00+01:00",
        "end": "2026-12-02T15:00:00+01:00",
        "all_day": False,
        "tzid": "Europe/Berlin",
        "location": "Room 4",
        "organizer": {"name": "Anna K", "email": "anna@corp.example"},
        "attendees": [
            {"name": "Anna K", "email": "anna@corp.example"},
            {"name": "Bob Li", "email": "bob@corp.example"},
        ],
        "status": "confirmed",
    }

    # All day: a date, not a time shifted into some zone.
    (day,) = events["company-day"]
    assert (day.metadata["start"], day.metadata["end"]) == ("2026-12-02", "2026-12-03")
    assert day.metadata["all_day"] is True and day.metadata["tzid"] is None
    assert "When: 2026-12-02 (all day)" in day.text

    # Written in New York time, kept in New York time.
    (call,) = events["nyc"]
    assert call.metadata["start"] == "2026-12-02T09:00:00-05:00"
    assert call.metadata["tzid"] == "America/New_York"
    assert call.author == "Carl M"
    (offsite,) = events["offsite"]
    assert offsite.metadata["tzid"] == "UTC" and offsite.metadata["start"].endswith("+00:00")

    assert [i.at for i in batch.items] == sorted(i.at for i in batch.items)  # oldest first
    assert not batch.more and batch.problems == ()
    assert radicale.writes(account.user) == writes_before  # read only


def test_moves_cancellations_and_deletions_are_followed(
    radicale: Radicale, account: Account, work: str
) -> None:
    first = poll(caldav(account))
    before = {i.metadata["uid"]: i for i in first.items if i.metadata["recurrence_id"] is None}
    # Nothing changed: the sync token is the cursor's, so the events are not even fetched
    # (no calendar-query REPORT) and nothing is made again.
    reports = radicale.requests(account.user, ("REPORT",))
    assert reports >= 1  # positive control: the first poll's query is logged
    assert poll(caldav(account), first.cursor).items == ()
    assert radicale.requests(account.user, ("REPORT",)) == reports

    account.put(work, "review", data.review("160000", "170000", modified="20261201T090000Z"))
    account.put(work, "lunch", data.lunch("CANCELLED", modified="20261201T091000Z"))
    account.delete(work, "offsite")
    writes = radicale.writes(account.user)
    second = poll(caldav(account), first.cursor)
    assert radicale.requests(account.user, ("REPORT",)) > reports
    changed = {i.metadata["uid"]: i for i in second.items}
    assert sorted(changed) == ["lunch", "offsite", "review"]

    moved = changed["review"]
    assert moved.metadata["start"] == "2026-12-02T16:00:00+01:00"
    assert moved.metadata[REVISES] == before["review"].external_id
    assert moved.external_id != before["review"].external_id
    assert "When: 2026-12-02 16:00-17:00 (Europe/Berlin)" in moved.text

    cancelled = changed["lunch"]
    assert cancelled.metadata["status"] == "cancelled"
    assert cancelled.metadata[REVISES] == before["lunch"].external_id
    assert cancelled.text.startswith("Cancelled meeting: Lunch with Dana")

    deleted = changed["offsite"]
    assert deleted.metadata["status"] == "cancelled"
    assert deleted.metadata[REVISES] == before["offsite"].external_id
    assert deleted.metadata["start"] == "2026-12-02T17:00:00+00:00"
    assert deleted.text.startswith("Cancelled meeting: Team offsite planning")

    assert poll(caldav(account), second.cursor).items == ()
    # Moved back: a third state of its own (not the first item's id, which is kept).
    account.put(work, "review", data.review(modified="20261201T100000Z"))
    third = poll(caldav(account), second.cursor)
    (back,) = third.items
    assert back.metadata["start"] == "2026-12-02T14:00:00+01:00"
    assert back.metadata[REVISES] == moved.external_id
    assert back.external_id not in (moved.external_id, before["review"].external_id)
    assert radicale.writes(account.user) == writes + 1  # only the fixture's own PUT


def polls(connector: Calendar, cursor: str | None, limit: int) -> list[Batch]:
    """Poll one connector from ``cursor`` until it says there is no more."""

    async def run() -> list[Batch]:
        batches: list[Batch] = []
        try:
            while not batches or batches[-1].more:
                batches.append(
                    await connector.poll(batches[-1].cursor if batches else cursor, limit)
                )
        finally:
            await connector.aclose()
        return batches

    return asyncio.run(run())


def test_a_batch_limit_leaves_the_rest_for_the_next_poll(
    radicale: Radicale, account: Account, work: str
) -> None:
    everything = poll(caldav(account))
    ids = sorted(i.external_id for i in everything.items)
    # A fresh connector each poll (as after a restart): the window is read again each time.
    first = poll(caldav(account), limit=5)
    assert len(first.items) == 5 and first.more
    rest: list[Item] = list(first.items)
    cursor = first.cursor
    while True:
        batch = poll(caldav(account), cursor, limit=5)
        rest += batch.items
        cursor = batch.cursor
        if not batch.more:
            break
    assert sorted(i.external_id for i in rest) == ids
    assert poll(caldav(account), cursor).items == ()

    # One connector polling on (as the runtime does): one read, the rest served from it.
    reports = radicale.requests(account.user, ("REPORT",))
    batches = polls(caldav(account), None, 5)
    assert len(batches) == -(-len(ids) // 5) and [len(b.items) for b in batches[:-1]] == [5] * (
        len(batches) - 1
    )
    assert sorted(i.external_id for b in batches for i in b.items) == ids
    assert radicale.requests(account.user, ("REPORT",)) == reports + 1


def test_the_window_moves_with_the_day(account: Account, work: str) -> None:
    first = poll(caldav(account))
    connector = caldav(account)
    connector.clock = lambda: data.NOW.replace(day=20)  # 18 days later
    later = poll(connector, first.cursor)
    # Nothing changed at the source: what left the window is forgotten without a word,
    # and no past stand-up is taken for a cancellation.
    assert later.items == ()
    state = json.loads(later.cursor)["events"]
    assert "Work Stuff/standup/2026-11-18T09:30:00+01:00" not in state
    assert "Work Stuff/standup/2026-12-16T09:30:00+01:00" in state


def test_picked_calendars_only_and_a_missing_one_named(account: Account, work: str) -> None:
    home = account.make_calendar("home", "Home")
    account.put(
        home,
        "dentist",
        data.calendar(
            data.vevent("dentist", "Dentist", "DTSTART:20261204T080000Z", "DTEND:20261204T090000Z")
        ),
    )
    both = poll(caldav(account))
    assert {i.channel for i in both.items} == {"Work Stuff", "Home"}
    only = poll(caldav(account, calendars="home, Gone"))
    assert {i.channel for i in only.items} == {"Home"}
    assert [(p.part, p.problem) for p in only.problems] == [("Gone", Problem.NOT_FOUND)]


def test_a_wrong_password_is_the_owners_to_fix(account: Account, work: str) -> None:
    with pytest.raises(ConnectorError) as caught:
        poll(caldav(account, password="wrong"))
    assert caught.value.problem is Problem.AUTH and caught.value.owner_must_act
    assert "wrong" not in str(caught.value)
    assert poll(caldav(account)).items  # positive control: the right one reads


def test_bad_options_say_what_to_do() -> None:
    with pytest.raises(ConnectorError) as caught:
        build("cal", {"url": "https://dav.example.com"}, lambda _k: None)
    assert caught.value.problem is Problem.CONFIG and "username=" in str(caught.value)
    with pytest.raises(ConnectorError) as caught:
        build("cal", {}, lambda _k: None)
    assert "ics_url" in str(caught.value)
    with pytest.raises(ConnectorError):
        build("cal", {"url": "ftp://x", "username": "u"}, {"password": "p"}.get)
    with pytest.raises(ConnectorError):
        build("cal", {"days_ahead": "soon"}, {"ics_url": "https://x/y.ics"}.get)
    assert kinds.secret_keys("calendar", {"url": "https://dav"}) == ["password"]
    assert kinds.secret_keys("calendar", {}) == ["ics_url"]


def test_a_calendar_name_becomes_a_scope() -> None:
    assert calendar_scope("Work Stuff") == "channel:calendar/Work-Stuff"
    assert calendar_scope("Anna's calendar") == "channel:calendar/Anna's-calendar"
    odd = calendar_scope("\x00")
    assert odd.startswith("channel:calendar/") and len(odd) == len("channel:calendar/") + 12


# --- an iCalendar address (Google's secret address) -----------------------------------


@pytest.fixture
def ics() -> Iterator[IcsFile]:
    served = IcsFile(data.week_in_one())
    yield served
    served.close()


def address(served: IcsFile) -> Calendar:
    connector = build("google", {}, {"ics_url": served.url}.get)
    connector.clock = lambda: data.NOW
    return connector


def test_an_ics_address_is_read_with_its_etag(ics: IcsFile) -> None:
    first = poll(address(ics))
    assert {i.source for i in first.items} == {"calendar:anna@corp.example"}
    assert {i.channel for i in first.items} == {"Anna's calendar"}
    events = by_uid(first.items)
    assert len(events["standup"]) == 7 and len(events["nyc"]) == 1
    assert events["nyc"][0].metadata["start"] == "2026-12-02T09:00:00-05:00"
    assert events["company-day"][0].metadata["start"] == "2026-12-02"
    # The address is the credential: it is nowhere in what is kept.
    kept = json.dumps([[i.source, i.text, dict(i.metadata)] for i in first.items]) + first.cursor
    assert "private-5ecret" not in kept and "private-5ecret" in ics.url

    assert poll(address(ics), first.cursor).items == ()
    assert (ics.full, ics.not_modified) == (1, 1)

    ics.text = ics.text.replace("LOCATION:Room 4", "LOCATION:Room 7")
    changed = poll(address(ics), first.cursor)
    (review,) = changed.items
    assert review.metadata["location"] == "Room 7" and "Where: Room 7" in review.text
    assert review.metadata[REVISES] == events["review"][0].external_id
    assert (ics.full, ics.not_modified) == (2, 1)


def test_a_reset_address_is_refused_plainly(ics: IcsFile) -> None:
    gone = build("google", {}, {"ics_url": ics.url.replace("5ecret", "old")}.get)
    with pytest.raises(ConnectorError) as caught:
        poll(gone)
    assert caught.value.problem is Problem.AUTH and "reset" in str(caught.value)
    assert "private-old" not in str(caught.value)


def item_rows(*batches: Batch) -> list[Mapping[str, Any]]:
    """Items as ``observation.list`` rows (ids in arrival order), for the meeting reader."""
    rows = []
    for batch in batches:
        for item in batch.items:
            rows.append(
                {
                    "id": len(rows) + 1,
                    "source": item.source,
                    "channel": item.channel,
                    "text": item.text,
                    "metadata": dict(item.metadata),
                }
            )
    return rows


def test_only_a_calendar_read_in_full_can_say_an_event_is_gone() -> None:
    """Calendars "Team" and "Team/Ops": when only "Team" was read (the other's sync token
    unchanged), nothing of "Team/Ops" is taken for deleted."""
    start, end = data.NOW - timedelta(days=14), data.NOW + timedelta(days=60)
    found = occurrences(parse_calendar(data.review()), "Team/Ops", start, end)
    first = changes(
        found,
        {},
        {"Team/Ops"},
        source="calendar:x",
        window_start=start,
        now=data.NOW,
        scope=calendar_scope,
    )
    known = {c.key: c.known for c in first if c.known is not None}
    assert list(known) == ["Team/Ops/review/-"]

    def gone(read: set[str]) -> list[tuple[str, str]]:
        made = changes(
            [],
            known,
            read,
            source="calendar:x",
            window_start=start,
            now=data.NOW,
            scope=calendar_scope,
        )
        return [(c.item.channel, c.item.metadata["status"]) for c in made if c.item]

    assert gone({"Team"}) == []
    assert gone({"Team", "Team/Ops"}) == [("Team/Ops", "cancelled")]  # positive control
