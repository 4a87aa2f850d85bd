"""In Telegram's command mode, ``/remember`` of what MAMA already remembers is answered
with that memory's id, ``| anyway`` keeps it, and ``/search`` shows the restatement
under the memory it restates: the real python-telegram-bot client against a fake Bot
API on 127.0.0.1."""

from __future__ import annotations

import asyncio

from app.backends.command_mode import CommandModeBackend, parse_remember
from mama_core.memory import Engine
from mama_core.store import Store
from tests.app.telegram.stack import messenger


def test_remember_again_is_answered_and_anyway_keeps_it(engine: Engine, store: Store) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            await s.owner_says("/remember fact We ship on Thursdays")
            assert s.last_to_owner()["text"].startswith("Saved #1 (fact, active)")

            await s.owner_says("/remember fact We ship on Thursdays")
            again = s.last_to_owner()["text"]
            assert again.startswith("Already remembered as #1; nothing new saved.")
            assert "| anyway" in again
            # Positive control: another day is saved as its own memory.
            await s.owner_says("/remember fact We ship on Tuesdays")
            assert s.last_to_owner()["text"].startswith("Saved #2 (fact, active)")

            await s.owner_says("/remember fact We ship on Thursdays | anyway")
            assert s.last_to_owner()["text"].startswith("Saved #3 (fact, active)")

    asyncio.run(scenario())


def test_parse_remember_reads_anyway_only_at_the_end() -> None:
    assert parse_remember("fact We ship on Thursdays | anyway") == {
        "kind": "fact",
        "summary": "We ship on Thursdays",
        "even_if_duplicate": True,
    }
    assert "even_if_duplicate" not in parse_remember("fact Ship it anyway")
    with_when = parse_remember("preference Short answers | when: chatting | ANYWAY")
    assert with_when["applies_when"] == "chatting"
    assert with_when["even_if_duplicate"] is True
