"""``/today`` in Telegram, answered by the bot itself from the calendar a real CalDAV
server (Radicale) gave: the day's meetings in the owner's zone, a moved one at its new
time, a cancelled one left out — and nothing for anyone but the owner."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.backends.command_mode import CommandModeBackend
from app.connectors.calendar import build
from app.durable.connector_store import ConnectorStore
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.connectors import calendar_data as data
from tests.app.connectors.calendar_servers import PASSWORD, running_radicale
from tests.app.runtime.support import ManualClock
from tests.app.telegram.stack import OWNER_CHAT, STRANGER, messenger


def test_today_lists_the_days_meetings_from_caldav_for_the_owner_only(
    engine: Engine, store: Store, tmp_path: Path
) -> None:
    engine.dispatch(
        "owner.set_timezone",
        {"timezone": "Europe/Berlin"},
        SessionFacts.owner_cli(),
        Grant.owner(),
    )
    clock = ManualClock(data.NOW)
    with running_radicale(tmp_path) as radicale:
        account = radicale.account()
        work = account.make_calendar("work", "Work Stuff")
        for uid, make in data.WEEK.items():
            account.put(work, uid, make())

        async def poll_into(stored: ConnectorStore, cursor: str | None) -> str:
            connector = build(
                "work-cal",
                {"url": radicale.url, "username": account.user},
                {"password": PASSWORD}.get,
            )
            connector.clock = clock.now
            try:
                batch = await connector.poll(cursor, 500)
            finally:
                await connector.aclose()
            await asyncio.to_thread(stored.store_batch, "work-cal", "calendar", batch)
            return batch.cursor

        async def scenario() -> None:
            async with messenger(engine, store, CommandModeBackend()) as s:
                s.runtime.briefs.clock = clock
                await s.pair()
                await s.owner_says("/today")
                assert "mama connectors add calendar" in s.api.texts_to(OWNER_CHAT)[-1]

                stored = ConnectorStore(s.runtime.db, clock)
                cursor = await poll_into(stored, None)
                await s.owner_says("/today")
                lines = s.api.texts_to(OWNER_CHAT)[-1].splitlines()
                assert lines[0] == "Today, Wed 2 Dec 2026 (08:00 Europe/Berlin)"
                assert "• 12:30-13:30 Lunch with Dana" in lines
                assert "• 14:00-15:00 Quarterly review (Room 4)" in lines

                account.put(work, "review", data.review("160000", "170000", "20261201T090000Z"))
                account.put(work, "lunch", data.lunch("CANCELLED", "20261201T091000Z"))
                await poll_into(stored, cursor)
                s.api.push_message(OWNER_CHAT, STRANGER, "/today")  # not the owner
                await s.owner_says("/today")
                lines = s.api.texts_to(OWNER_CHAT)[-1].splitlines()
                assert lines[1:] == [
                    "Meetings today (5):",
                    "• all day Company day",
                    "• 11:00-11:30 Standup",
                    "• 15:00-16:00 Call with the New York office",
                    "• 16:00-17:00 Quarterly review (Room 4)",
                    "• 18:00-19:00 Team offsite planning",
                    "Tomorrow first: 08:00-08:30 Early sync",
                ]
                assert not any("Meetings" in t for t in s.api.texts_to(STRANGER))

        asyncio.run(scenario())
