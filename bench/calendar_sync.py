"""How fast the calendar connector syncs: 2,000 events from a real CalDAV server to items.

    python -m bench.calendar_sync [--events 2000] [--recurring 0.1] [--limit 500]

Starts the tests' throwaway Radicale (``tests/app/connectors/calendar_servers.py``)
and lays ``--events`` events into one calendar in Radicale's own storage layout (a
PUT costs Radicale ~0.2 s per event here; this is not counted): single meetings over
the connector's window (14 days back to 60 ahead, in three zones), and a share
``--recurring`` of weekly series, each expanding to about ten occurrences. Then
it polls from an empty cursor with ``--limit`` per poll until the connector says
there is no more (the first sync: CalDAV REPORT, parsing, recurrence expansion,
items; Radicale's own first parse of its files is done before, by one query of
the bench's, and reported apart), polls once more with nothing changed (the sync
token: nothing fetched), and once after one event moved (the window read again,
one item). Reported:
seconds for each, items, and occurrences per second. The runtime's storage of
the items is not included.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.connectors.base import Item
from app.connectors.calendar import Calendar, build, calendar_scope
from app.connectors.calendar_events import changes, occurrences, parse_calendar
from tests.app.connectors.calendar_servers import PASSWORD, running_radicale

NOW = datetime(2026, 12, 2, 7, 0, tzinfo=UTC)
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo")


def event(n: int, recurring: bool, moved: bool = False) -> str:
    start = NOW - timedelta(days=13) + timedelta(hours=(n * 7) % (24 * 72))
    if moved:
        start += timedelta(hours=2)
    zone = ZONES[n % 3]
    lines = [
        "BEGIN:VEVENT",
        f"UID:bench-{n}",
        "DTSTAMP:20261120T080000Z",
        f"LAST-MODIFIED:{'20261201T080000Z' if moved else '20261120T080000Z'}",
        f"SUMMARY:Meeting {n} about the {['api', 'ui', 'ops', 'docs'][n % 4]} track",
        f"DTSTART;TZID={zone}:{start:%Y%m%dT%H%M%S}",
        f"DTEND;TZID={zone}:{start + timedelta(minutes=30 + 15 * (n % 4)):%Y%m%dT%H%M%S}",
        f"LOCATION:Room {n % 12}",
        f"ORGANIZER;CN=Person {n % 37}:mailto:person{n % 37}@corp.example",
        f"ATTENDEE;CN=Person {(n + 1) % 37}:mailto:person{(n + 1) % 37}@corp.example",
        f"ATTENDEE;CN=Person {(n + 2) % 37}:mailto:person{(n + 2) % 37}@corp.example",
    ]
    if recurring:
        lines.append("RRULE:FREQ=WEEKLY;COUNT=12")
    return "\r\n".join([*lines, "END:VEVENT"])


WARM_UP = (
    '<?xml version="1.0" encoding="utf-8"?>'
    '<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
    "<D:prop><D:getetag/><C:calendar-data/></D:prop>"
    '<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT"/>'
    "</C:comp-filter></C:filter></C:calendar-query>"
)


def calendar(events: list[str]) -> str:
    return "\r\n".join(
        ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//MAMA bench//EN", *events, "END:VCALENDAR"]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Calendar connector sync time from Radicale.")
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--recurring", type=float, default=0.1)
    parser.add_argument("--limit", type=int, default=500)
    args = parser.parse_args()
    every = max(1, round(1 / args.recurring)) if args.recurring > 0 else 0

    def is_recurring(n: int) -> bool:
        return bool(every) and n % every == 0

    # The connector's own share, without a server: parse, expand and diff every document.
    documents = [calendar([event(n, is_recurring(n))]) for n in range(args.events)]
    t0 = time.perf_counter()
    start, end = NOW - timedelta(days=14), NOW + timedelta(days=60)
    found = [
        occ for text in documents for occ in occurrences(parse_calendar(text), "Bench", start, end)
    ]
    made = changes(
        found,
        {},
        {"Bench"},
        source="calendar:b",
        window_start=start,
        now=NOW,
        scope=calendar_scope,
    )
    local = time.perf_counter() - t0
    print(
        f"client side only (parse, expand, diff {args.events} events into {len(made)} items, "
        f"no server): {local:.2f} s"
    )

    with (
        tempfile.TemporaryDirectory(prefix="mama-bench-radicale-") as root,
        running_radicale(Path(root)) as server,
    ):
        account = server.account()
        started = time.perf_counter()
        path = account.make_calendar("bench", "Bench")
        # Radicale takes ~0.2 s per item on a PUT here, so the events are laid down in
        # its own storage layout (one .ics per event) instead; it reads them on demand.
        folder = Path(root) / "collections" / "collection-root" / account.user / "bench"
        for n in range(args.events):
            (folder / f"bench-{n}.ics").write_text(
                calendar([event(n, is_recurring(n))]), newline=""
            )
        uploaded = time.perf_counter() - started

        def connector() -> Calendar:
            made = build(
                "bench",
                {"url": server.url, "username": account.user},
                {"password": PASSWORD}.get,
            )
            made.clock = lambda: NOW
            return made

        async def sync(cursor: str | None) -> tuple[list[Item], str, int, float]:
            reader = connector()
            items: list[Item] = []
            polls = 0
            t0 = time.perf_counter()
            try:
                while True:
                    batch = await reader.poll(cursor, args.limit)
                    polls += 1
                    items.extend(batch.items)
                    cursor = batch.cursor
                    if not batch.more:
                        break
            finally:
                await reader.aclose()
            assert cursor is not None
            return items, cursor, polls, time.perf_counter() - t0

        # Radicale parses each file on its first read (~0.1-0.2 s an event here) and
        # caches it: warm it with one calendar-query of its own, not counted.
        t0 = time.perf_counter()
        warm = account.client.request(
            "REPORT",
            path,
            content=WARM_UP,
            headers={"Depth": "1", "Content-Type": "application/xml"},
            timeout=1800,
        )
        assert warm.status_code == 207, warm.status_code
        cold = time.perf_counter() - t0
        items, cursor, polls, first = asyncio.run(sync(None))
        first_cursor = cursor
        unchanged, cursor, _polls, idle = asyncio.run(sync(cursor))
        moved = 1 if every != 1 else 0
        account.put(path, f"bench-{moved}", calendar([event(moved, is_recurring(moved), True)]))
        changed, cursor, _polls, after = asyncio.run(sync(cursor))

    assert unchanged == [], len(unchanged)
    assert len(changed) >= 1, len(changed)
    assert len({i.external_id for i in items}) == len(items)
    series = sum(1 for n in range(args.events) if is_recurring(n))
    print(f"laid down {args.events} events ({series} weekly series) in {uploaded:.1f} s")
    print(f"Radicale's own first read of its files (warm-up, not counted): {cold:.1f} s")
    print(
        f"first sync, server warm: {len(items)} occurrences as items in {polls} polls "
        f"(limit {args.limit}): {first:.2f} s, {len(items) / first:.0f} items/s"
    )
    print(f"cursor after it: {len(first_cursor.encode()) / 1e3:.0f} kB (stored with each batch)")
    print(f"nothing changed (sync token): {idle:.3f} s, {len(unchanged)} items")
    print(f"one event moved (window read again): {after:.2f} s, {len(changed)} item(s)")


if __name__ == "__main__":
    main()
