"""Commitments in Telegram, with the real python-telegram-bot client against the fake
Bot API: a proposed commitment's card says who owes what to whom by when and has
Confirm / Drop / Show; /work lists what is open, overdue and waiting ones marked."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from app.backends.command_mode import CommandModeBackend
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.telegram.stack import OWNER_CHAT, OWNER_USER, STRANGER, Stack, messenger
from tests.mama_core.memory.helpers import SOURCE_TURN_AGENT, agent_grant

BERLIN = ZoneInfo("Europe/Berlin")


def found_in_a_message(engine: Engine, summary: str, due: datetime | None = None) -> int:
    """What an agent reading the owner's Slack records: the owner owes it, so proposed."""
    terms: dict[str, Any] = {"owed_by": "owner", "owed_to": "Dana"}
    if due is not None:
        terms["due"] = due
    saved = engine.dispatch(
        "memory.save",
        {"kind": "commitment", "summary": summary, "commitment": terms},
        SOURCE_TURN_AGENT,
        agent_grant(),
    )
    assert saved["status"] == "proposed"
    return int(saved["judgment_id"])


def read(engine: Engine, jid: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": jid}, SessionFacts.owner_cli(), Grant.owner())


async def card_for(s: Stack, jid: int) -> dict[str, Any]:
    def card() -> dict[str, Any] | None:
        return next(
            (
                m
                for m in s.api.sent
                if m.get("reply_markup")
                and m["reply_markup"]["inline_keyboard"][0][0]["callback_data"].endswith(f":{jid}")
            ),
            None,
        )

    await s.api.signal.until(lambda: card() is not None)
    found = card()
    assert found is not None
    return {k: v for k, v in found.items() if k != "params"}


def test_a_proposed_commitment_is_confirmed_or_dropped_with_one_tap(
    engine: Engine, store: Store
) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            deck = found_in_a_message(
                engine, "Send Dana the Q3 deck", datetime(2026, 12, 5, 17, 0, tzinfo=BERLIN)
            )
            card = await card_for(s, deck)
            buttons = card["reply_markup"]["inline_keyboard"][0]
            assert [b["text"] for b in buttons] == ["Confirm", "Drop", "Show"]
            assert "New commitment" in card["text"]
            assert (
                "You owe Dana: Send Dana the Q3 deck — due Sat 5 Dec 17:00 Europe/Berlin"
                in (card["text"])
            )

            # Someone else's tap decides nothing; the owner's confirms it.
            s.api.push_callback(STRANGER, card, f"confirm:{deck}")
            await s.api.signal.until(lambda: len(s.api.answers) == 1)
            assert read(engine, deck)["record"]["status"] == "proposed"
            s.api.push_callback(OWNER_USER, card, f"confirm:{deck}")
            await s.api.signal.until(lambda: len(s.api.edits) == 1)
            assert s.api.answers[-1]["text"] == f"Confirmed #{deck}."
            assert "Confirmed by you" in s.api.edits[0]["text"]
            record = read(engine, deck)["record"]
            assert (record["status"], record["involvement"]) == ("active", "owner_approved")
            assert record["commitment"]["state"] == "open"

            lunch = found_in_a_message(engine, "Book the team lunch")
            lunch_card = await card_for(s, lunch)
            s.api.push_callback(OWNER_USER, lunch_card, f"drop:{lunch}")
            await s.api.signal.until(lambda: len(s.api.edits) == 2)
            assert s.api.answers[-1]["text"] == f"Dropped #{lunch}."
            dropped = read(engine, lunch)
            assert dropped["record"]["status"] == "rejected"
            assert [e["action"] for e in dropped["events"]][-1] == "review.reject"

    asyncio.run(scenario())


def test_work_lists_open_commitments_overdue_and_waiting_marked_for_the_owner_only(
    engine: Engine, store: Store
) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            await s.owner_says("/work")
            assert "No open commitments" in s.api.texts_to(OWNER_CHAT)[-1]  # the empty state

            late = engine.dispatch(
                "memory.save",
                {
                    "kind": "commitment",
                    "summary": "Review Sam's contract",
                    "commitment": {"owed_to": "Sam", "due": "2020-03-02T09:00:00+00:00"},
                },
                SessionFacts.owner_cli(),
                Grant.owner(),
            )["judgment_id"]
            waiting = found_in_a_message(engine, "Send Dana the Q3 deck")
            await card_for(s, waiting)

            s.api.push_message(OWNER_CHAT, STRANGER, "/work")  # not the owner: no answer
            await s.owner_says("/work")
            answer = s.api.texts_to(OWNER_CHAT)[-1]
            lines = answer.splitlines()
            assert lines[0] == "Open commitments, by due time:"
            assert lines[1] == (
                f"#{late} You owe Sam: Review Sam's contract — due Mon 2 Mar 09:00 UTC [OVERDUE]"
            )
            assert lines[2] == (
                f"#{waiting} You owe Dana: Send Dana the Q3 deck [waiting for you to confirm]"
            )
            assert not any("Open commitments" in t for t in s.api.texts_to(STRANGER))

    asyncio.run(scenario())
