"""The daily brief reaches the paired owner's chat through the real Telegram client and
a fake Bot API on 127.0.0.1 (command mode: MAMA writes it itself)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from app.backends.command_mode import CommandModeBackend
from app.durable.connector_store import ConnectorStore
from app.runtime.schedule import BriefSchedule, OwnerSchedule
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.memory.owner_settings import BriefSettings
from mama_core.store import Store
from tests.app.connectors.items import batch, item
from tests.app.runtime.support import ManualClock
from tests.app.telegram.stack import OWNER_CHAT, STRANGER, messenger

BERLIN = ZoneInfo("Europe/Berlin")


def test_the_brief_is_sent_to_the_paired_owners_chat(engine: Engine, store: Store) -> None:
    owner = SessionFacts.owner_cli()
    engine.dispatch("owner.set_timezone", {"timezone": "Europe/Berlin"}, owner, Grant.owner())
    engine.dispatch("owner.set_brief", {"enabled": True}, owner, Grant.owner())
    clock = ManualClock(datetime(2026, 12, 1, 7, 0, tzinfo=BERLIN).astimezone(UTC))

    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            runtime = s.runtime
            connector = ConnectorStore(runtime.db, runtime.clock)
            await runtime.run_db(
                connector.store_batch, "work-trello", "trello", batch(item(1), item(2))
            )
            schedule = BriefSchedule(runtime.db, runtime.mailbox, clock)
            owner_schedule = OwnerSchedule(BriefSettings(enabled=True), BERLIN)
            await runtime.run_db(schedule.tick, owner_schedule)  # arms
            clock.current = datetime(2026, 12, 1, 8, 30, tzinfo=BERLIN).astimezone(UTC)
            assert await runtime.run_db(schedule.tick, owner_schedule) is not None
            runtime.wake()

            def brief() -> list[str]:
                return [t for t in s.api.texts_to(OWNER_CHAT) if t.startswith("Your brief for")]

            await s.api.signal.until(lambda: len(brief()) == 1)
            lines = brief()[0].splitlines()
            assert lines[0].endswith("(Europe/Berlin)")
            assert "• trello:me: 2 new (Roadmap 2)" in lines
            assert s.api.texts_to(STRANGER) == []

    asyncio.run(scenario())
