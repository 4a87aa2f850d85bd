"""Today's meetings from the calendar items: the newest state of each occurrence (moved:
its new time; cancelled or deleted: gone), in the owner's zone, all-day days never
shifted, commitments due during a meeting marked — read from the items a real poll of
an ``.ics`` address made, and through the store into the brief and ``/today``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from app.connectors.base import Batch
from app.connectors.calendar import Calendar, build
from app.durable.connector_store import ConnectorStore
from app.durable.desk import desk_input
from app.durable.schema import open_runtime_db
from app.durable.transaction import RuntimeDb
from app.runtime.brief_gather import BriefWriter
from app.runtime.meetings import agenda_lines, latest, on_day, today_text
from app.runtime.owner_runtime import OwnerRuntime
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.connectors import calendar_data as data
from tests.app.connectors.calendar_servers import IcsFile
from tests.app.runtime.support import ManualClock, RecordingChannel, ScriptedAgent, Signal
from tests.app.runtime.test_owner_runtime import run, texts

BERLIN = ZoneInfo("Europe/Berlin")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")
OWNER = SessionFacts.owner_cli()


@pytest.fixture
def ics() -> Iterator[IcsFile]:
    served = IcsFile(data.week_in_one())
    yield served
    served.close()


def address(served: IcsFile) -> Calendar:
    connector = build("google", {}, {"ics_url": served.url}.get)
    connector.clock = lambda: data.NOW
    return connector


def poll(served: IcsFile, cursor: str | None = None) -> Batch:
    async def run() -> Batch:
        connector = address(served)
        try:
            return await connector.poll(cursor, 500)
        finally:
            await connector.aclose()

    return asyncio.run(run())


def rows(*batches: Batch) -> list[Mapping[str, Any]]:
    """Items as ``observation.list`` rows (ids in arrival order)."""
    found: list[Mapping[str, Any]] = []
    for batch in batches:
        for item in batch.items:
            found.append(
                {
                    "id": len(found) + 1,
                    "source": item.source,
                    "channel": item.channel,
                    "text": item.text,
                    "metadata": dict(item.metadata),
                }
            )
    return found


def change_the_day(served: IcsFile) -> None:
    """The review moves from 14:00 to 16:00, the lunch is cancelled, the offsite deleted."""
    text = served.text
    text = text.replace("20261202T140000", "20261202T160000").replace(
        "20261202T150000", "20261202T170000"
    )
    text = text.replace("STATUS:CONFIRMED", "STATUS:CANCELLED")
    start = text.index("BEGIN:VEVENT\r\nUID:offsite")
    end = text.index("END:VEVENT", start) + len("END:VEVENT\r\n")
    served.text = text[:start] + text[end:]


def commitment(summary: str, due: str, id_: int) -> dict[str, Any]:
    return {"id": id_, "summary": summary, "due_at": due, "status": "active"}


DECK = commitment("Send Anna the deck", "2026-12-02T15:30:00.000000Z", 7)  # 16:30 Berlin
MEMO = commitment("Write the memo", "2026-12-02T13:30:00.000000Z", 8)  # 14:30 Berlin


def test_today_follows_moves_and_cancellations_in_the_owners_zone(ics: IcsFile) -> None:
    first = poll(ics)
    before = agenda_lines(latest(rows(first), BERLIN), data.NOW, BERLIN, [DECK, MEMO])
    assert before == [
        "Meetings today (6):",
        "• all day Company day",
        "• 11:00-11:30 Standup",
        "• 12:30-13:30 Lunch with Dana",
        "• 14:00-15:00 Quarterly review (Room 4)",
        "  ⚠ due during it: #8 Write the memo",
        "• 15:00-16:00 Call with the New York office",
        "• 18:00-19:00 Team offsite planning",
        "Tomorrow first: 08:00-08:30 Early sync",
    ]

    change_the_day(ics)
    second = poll(ics, first.cursor)
    assert len(second.items) == 3  # moved, cancelled, deleted
    after = agenda_lines(latest(rows(first, second), BERLIN), data.NOW, BERLIN, [DECK, MEMO])
    assert after == [
        "Meetings today (4):",
        "• all day Company day",
        "• 11:00-11:30 Standup",
        "• 15:00-16:00 Call with the New York office",
        "• 16:00-17:00 Quarterly review (Room 4)",
        "  ⚠ due during it: #7 Send Anna the deck",
        "Tomorrow first: 08:00-08:30 Early sync",
    ]


def test_an_all_day_day_keeps_its_date_west_of_utc(ics: IcsFile) -> None:
    meetings = latest(rows(poll(ics)), LOS_ANGELES)
    titles = {
        d: [m.title for m in on_day(meetings, date(2026, 12, d), LOS_ANGELES)] for d in (1, 2)
    }
    assert "Company day" in titles[2] and "Company day" not in titles[1]
    # Positive control for the zone: the New York call is 06:00 on the 2nd in Los Angeles,
    # and the 18:00-UTC-ish offsite (17:00Z) is 09:00 there.
    assert "Call with the New York office" in titles[2]
    text = today_text(meetings, datetime(2026, 12, 2, 14, 0, tzinfo=UTC), LOS_ANGELES)
    assert "• 06:00-07:00 Call with the New York office" in text.splitlines()
    assert "• 09:00-10:00 Team offsite planning" in text.splitlines()


def test_no_calendar_says_how_to_add_one() -> None:
    assert "mama connectors add calendar" in today_text([], data.NOW, BERLIN)


@pytest.fixture
def app_db(store: Store) -> Iterator[RuntimeDb]:
    db = open_runtime_db(store)
    yield db
    db.close()


def test_the_brief_and_today_read_the_newest_state_from_the_store(
    ics: IcsFile, engine: Engine, app_db: RuntimeDb
) -> None:
    clock = ManualClock(data.NOW)
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, OWNER, Grant.owner())
    deck = engine.dispatch(
        "memory.save",
        {
            "kind": "commitment",
            "summary": "Send Anna the deck",
            "commitment": {"owed_to": "Anna", "due": "2026-12-02T16:30:00+01:00"},
        },
        OWNER,
        Grant.owner(),
    )["judgment_id"]
    writer = BriefWriter(engine, app_db, clock)
    assert "Meetings" not in writer.compose()  # no calendar yet: no section
    store = ConnectorStore(app_db, clock)
    first = poll(ics)
    store.store_batch("google", "calendar", first)
    change_the_day(ics)
    store.store_batch("google", "calendar", poll(ics, first.cursor))

    today = writer.today().splitlines()
    assert today[0] == "Today, Wed 2 Dec 2026 (08:00 Europe/Berlin)"
    assert "• 16:00-17:00 Quarterly review (Room 4)" in today
    assert f"  ⚠ due during it: #{deck} Send Anna the deck" in today
    assert not any("Lunch" in line or "offsite" in line for line in today)
    assert "• 11:00-11:30 Standup" in today  # positive control beside the absences

    brief = writer.compose().splitlines()
    assert brief[0] == "Your brief for Wed 2 Dec 2026, 08:00 (Europe/Berlin)"
    assert brief[2:4] == ["Meetings today (4):", "• all day Company day"]
    assert "• 16:00-17:00 Quarterly review (Room 4)" in brief


def test_today_at_the_desk_is_answered_without_the_agent(
    ics: IcsFile, engine: Engine, store: Store, app_db: RuntimeDb
) -> None:
    """The chat window and ``mama ask`` post to the mailbox: ``/today`` there is read from
    the store, whatever agent runs (the scripted one here would answer otherwise)."""
    clock = ManualClock(data.NOW)
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, OWNER, Grant.owner())
    ConnectorStore(app_db, clock).store_batch("google", "calendar", poll(ics))
    # Two turns scripted: the calendar's own source delta, and the question below.
    agent = ScriptedAgent([[], []], reply="the agent's own words")

    async def scenario(runtime: OwnerRuntime, channel: RecordingChannel, _: Signal) -> None:
        # The calendar's delta is waiting when the runtime starts: its turn (and reply)
        # comes first. Waiting for it keeps the order fixed (a /today posted meanwhile
        # raced it for the first reply).
        await channel.signal.until(lambda: len(channel.sent) == 1)
        await runtime.post(desk_input("/today"))
        await channel.signal.until(lambda: len(channel.sent) == 2)
        await runtime.post(desk_input("what is on today?"))  # positive control: the agent
        await channel.signal.until(lambda: len(channel.sent) == 3)

    run(engine, store, agent, scenario, channel := RecordingChannel(), clock)
    delta_reply, first, second = texts(channel)
    assert delta_reply == "the agent's own words"
    assert "• 14:00-15:00 Quarterly review (Room 4)" in first.splitlines()
    assert "Today, Wed 2 Dec 2026 (08:00 Europe/Berlin)" in first
    assert second.endswith("the agent's own words")
    # /today was no turn of the agent's; the question was (the positive control).
    assert not any(p.rstrip().endswith("\n/today") for p in agent.prompts)
    assert any(p.rstrip().endswith("\nwhat is on today?") for p in agent.prompts)
