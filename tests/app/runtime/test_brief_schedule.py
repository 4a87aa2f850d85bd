"""The brief's schedule with a hand-moved clock: due times in the owner's zone, once each,
a missed day fired once after a restart, daylight-saving changes, re-arming on a
settings change — and the loop on the runtime's event loop, never sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from app.durable.mailbox import InputKind, Mailbox
from app.durable.schema import open_runtime_db
from app.durable.transaction import RuntimeDb
from app.runtime.schedule import (
    BriefSchedule,
    BriefScheduler,
    OwnerSchedule,
    latest_due,
    next_due,
)
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.memory.owner_settings import DAYS, BriefSettings
from mama_core.store import Store
from tests.app.runtime.support import ManualClock

BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS_0830 = OwnerSchedule(BriefSettings(enabled=True, time="08:30"), BERLIN)
DAILY_0230 = OwnerSchedule(BriefSettings(enabled=True, days=list(DAYS), time="02:30"), BERLIN)


def berlin(*args: int) -> datetime:
    return datetime(*args, tzinfo=BERLIN).astimezone(UTC)  # type: ignore[misc]


@pytest.fixture
def app_db(store: Store) -> Iterator[RuntimeDb]:
    db = open_runtime_db(store)
    yield db
    db.close()


def scheduled(db: RuntimeDb) -> list[str]:
    """The scheduled inputs' source references, in order."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT source_ref FROM mailbox WHERE kind = 'scheduled' ORDER BY id"
        ).fetchall()
    return [str(r[0]) for r in rows]


def ref(moment: datetime) -> str:
    return f"mama:schedule:brief:{moment.astimezone(UTC):%Y-%m-%dT%H:%M:%S}.000000Z"


def test_a_due_time_posts_one_scheduled_input_in_the_owners_zone(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    clock.current = berlin(2026, 12, 1, 8, 0)  # Tue
    schedule = BriefSchedule(app_db, Mailbox(app_db, clock), clock)
    assert schedule.tick(WEEKDAYS_0830) is None  # arms
    clock.current = berlin(2026, 12, 1, 8, 29, 59)
    assert schedule.tick(WEEKDAYS_0830) is None
    clock.current = berlin(2026, 12, 1, 8, 30)
    posted = schedule.tick(WEEKDAYS_0830)
    assert posted is not None and not posted.duplicate
    clock.current = berlin(2026, 12, 1, 9, 45)
    assert schedule.tick(WEEKDAYS_0830) is None  # once per due time
    assert scheduled(app_db) == [ref(berlin(2026, 12, 1, 8, 30))]

    claimed = Mailbox(app_db, clock).claim()
    assert claimed is not None and claimed.kind is InputKind.SCHEDULED
    assert claimed.meta == {"schedule": "brief", "due_at": "2026-12-01T07:30:00.000000Z"}
    assert claimed.text == "The daily brief is due (Tue 2026-12-01 08:30 Europe/Berlin)."

    # Friday fires; Saturday and Sunday are not in the default days: the next is Monday.
    clock.current = berlin(2026, 12, 4, 8, 30)
    assert schedule.tick(WEEKDAYS_0830) is not None
    clock.current = berlin(2026, 12, 5, 8, 30)
    assert schedule.tick(WEEKDAYS_0830) is None
    assert next_due(clock.current, WEEKDAYS_0830.brief, BERLIN) == berlin(2026, 12, 7, 8, 30)


def test_days_missed_while_closed_fire_once_on_the_next_start(
    store: Store, clock: ManualClock
) -> None:
    clock.current = berlin(2026, 11, 30, 7, 0)  # Mon
    first = open_runtime_db(store)
    BriefSchedule(first, Mailbox(first, clock), clock).tick(WEEKDAYS_0830)
    first.close()  # the app closes before Monday's brief

    clock.current = berlin(2026, 12, 3, 10, 0)  # Thu: Mon, Tue, Wed and Thu were missed
    again = open_runtime_db(store)
    try:
        schedule = BriefSchedule(again, Mailbox(again, clock), clock)
        assert schedule.tick(WEEKDAYS_0830) is not None
        assert schedule.tick(WEEKDAYS_0830) is None
        assert scheduled(again) == [ref(berlin(2026, 12, 3, 8, 30))]
        # Positive control: the next day's time still fires.
        clock.current = berlin(2026, 12, 4, 8, 30)
        assert schedule.tick(WEEKDAYS_0830) is not None
        assert len(scheduled(again)) == 2
    finally:
        again.close()


def test_a_restart_after_a_posted_brief_posts_nothing_again(
    store: Store, clock: ManualClock
) -> None:
    clock.current = berlin(2026, 12, 1, 8, 0)
    first = open_runtime_db(store)
    schedule = BriefSchedule(first, Mailbox(first, clock), clock)
    schedule.tick(WEEKDAYS_0830)
    clock.current = berlin(2026, 12, 1, 8, 30)
    assert schedule.tick(WEEKDAYS_0830) is not None
    first.close()

    clock.current = berlin(2026, 12, 1, 12, 0)
    again = open_runtime_db(store)
    try:
        assert BriefSchedule(again, Mailbox(again, clock), clock).tick(WEEKDAYS_0830) is None
        assert len(scheduled(again)) == 1
    finally:
        again.close()


def test_daylight_saving_keeps_the_local_time_and_fires_once(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    brief = WEEKDAYS_0830.brief
    # Spring forward (Sun 29 Mar 2026 in Berlin): 08:30 local is 07:30 UTC on Friday,
    # 06:30 UTC on Monday.
    assert next_due(berlin(2026, 3, 27, 9, 0), brief, BERLIN) == datetime(
        2026, 3, 30, 6, 30, tzinfo=UTC
    )
    assert latest_due(berlin(2026, 3, 27, 9, 0), brief, BERLIN) == datetime(
        2026, 3, 27, 7, 30, tzinfo=UTC
    )
    # Fall back (Sun 25 Oct 2026): back to 07:30 UTC on Monday.
    assert next_due(berlin(2026, 10, 23, 9, 0), brief, BERLIN) == datetime(
        2026, 10, 26, 7, 30, tzinfo=UTC
    )

    # 02:30 does not exist on 29 Mar: it fires once, at 03:30 summer time (01:30 UTC).
    clock.current = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
    schedule = BriefSchedule(app_db, Mailbox(app_db, clock), clock)
    schedule.tick(DAILY_0230)
    for hour in range(0, 5):
        clock.current = datetime(2026, 3, 29, hour, 30, tzinfo=UTC)
        schedule.tick(DAILY_0230)
    assert scheduled(app_db) == [ref(datetime(2026, 3, 29, 1, 30, tzinfo=UTC))]

    # 02:30 happens twice on 25 Oct: it fires at the first (00:30 UTC), not again.
    for hour in range(0, 5):
        clock.current = datetime(2026, 10, 25, hour, 30, tzinfo=UTC)
        schedule.tick(DAILY_0230)
    assert scheduled(app_db)[-1] == ref(datetime(2026, 10, 25, 0, 30, tzinfo=UTC))
    assert len(scheduled(app_db)) == 2  # Mar 29 and Oct 25 (the days between were not ticked)


def test_a_settings_change_rearms_instead_of_firing_for_a_time_never_set(
    app_db: RuntimeDb, clock: ManualClock
) -> None:
    clock.current = berlin(2026, 12, 1, 7, 0)
    schedule = BriefSchedule(app_db, Mailbox(app_db, clock), clock)
    schedule.tick(WEEKDAYS_0830)
    clock.current = berlin(2026, 12, 1, 7, 45)
    earlier = OwnerSchedule(BriefSettings(enabled=True, time="07:00"), BERLIN)
    assert schedule.tick(earlier) is None  # 07:00 today passed before it was chosen
    assert scheduled(app_db) == []
    clock.current = berlin(2026, 12, 2, 7, 0)
    assert schedule.tick(earlier) is not None
    # Turned off: nothing, even when due; positive control above.
    off = OwnerSchedule(BriefSettings(enabled=False, time="07:00"), BERLIN)
    clock.current = berlin(2026, 12, 3, 7, 0)
    assert schedule.tick(off) is None
    assert len(scheduled(app_db)) == 1


def test_the_loop_reads_the_owners_settings_and_waits_exactly_until_the_due_time(
    engine: Engine, store: Store, clock: ManualClock
) -> None:
    owner = SessionFacts.owner_cli()
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, owner, Grant.owner())
    engine.dispatch("owner.set_brief", {"enabled": True}, owner, Grant.owner())
    clock.current = berlin(2026, 12, 1, 8, 0)
    db = open_runtime_db(store)
    waits: list[float] = []
    posted: list[int] = []

    async def main() -> None:
        done = asyncio.Event()

        async def wait(seconds: float) -> None:
            waits.append(seconds)
            clock.advance(timedelta(seconds=seconds))
            if posted:
                done.set()
            await asyncio.sleep(0)

        async def run_db(fn, *args):  # type: ignore[no-untyped-def]
            return await asyncio.to_thread(fn, *args)

        loop = BriefScheduler(
            engine,
            BriefSchedule(db, Mailbox(db, clock), clock),
            run_db,
            on_posted=lambda p: posted.append(p.input_id),
            clock=clock,
            wait=wait,
            recheck_s=1000.0,
        )
        await loop.start()
        try:
            await asyncio.wait_for(done.wait(), 20)
        finally:
            await loop.stop()

    try:
        asyncio.run(main())
        assert waits[:2] == [1000.0, 800.0]  # 08:00 → 08:16:40 → 08:30 sharp
        assert len(posted) == 1
        assert scheduled(db) == [ref(berlin(2026, 12, 1, 8, 30))]
    finally:
        db.close()
