"""``/approve ID your words`` in Telegram: the owner edits and approves a proposal in one
message, through the same save the review window's Edit & approve makes (``edit_approval``);
``/approve ID`` alone approves it. Only the paired owner is served. The real
python-telegram-bot client against the fake Bot API on 127.0.0.1."""

from __future__ import annotations

import asyncio
from typing import Any

from app.backends.command_mode import CommandModeBackend
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.telegram.stack import OWNER_CHAT, OWNER_USER, STRANGER, Stack, messenger
from tests.mama_core.memory.helpers import AGENT, SOURCE_TURN_AGENT, agent_grant


def read(engine: Engine, jid: int) -> dict[str, Any]:
    return engine.dispatch("memory.read", {"id": jid}, SessionFacts.owner_cli(), Grant.owner())


def proposed_commitment(engine: Engine) -> int:
    """What an agent reading the owner's Slack found: proposed, with its terms."""
    saved = engine.dispatch(
        "memory.save",
        {
            "kind": "commitment",
            "summary": "Anna sends Bob the notes",
            "commitment": {"owed_by": "Anna", "owed_to": "Bob"},
        },
        SOURCE_TURN_AGENT,
        agent_grant(),
    )
    assert saved["status"] == "proposed"
    return int(saved["judgment_id"])


async def answer_to(s: Stack, chat_id: int, user_id: int, text: str, expect: str) -> str:
    """Send ``text`` and wait for the bot's reply to it that contains ``expect``."""
    before = len(s.api.texts_to(chat_id))
    s.api.push_message(chat_id, user_id, text)

    def reply() -> str | None:
        return next((t for t in s.api.texts_to(chat_id)[before:] if expect in t), None)

    await s.api.signal.until(lambda: reply() is not None)
    found = reply()
    assert found is not None
    return found


def test_approve_in_words_replaces_the_proposed_text_for_the_owner_only(
    engine: Engine, store: Store
) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            promise = proposed_commitment(engine)
            words = "Anna sends Bob the Q1 release notes by Friday"

            # Not the owner: a stranger's chat, and a stranger in the owner's chat.
            s.api.push_message(STRANGER, STRANGER, f"/approve {promise} {words}")
            s.api.push_message(OWNER_CHAT, STRANGER, f"/approve {promise} {words}")
            await s.api.signal.until(lambda: len(s.gateway.ignored) >= 2)
            assert {i.reason for i in s.gateway.ignored} == {"not the paired owner"}
            assert read(engine, promise)["record"]["status"] == "proposed"
            assert not any("Approved" in t for t in s.api.texts_to(STRANGER))

            # Positive control: the owner's same message edits and approves it.
            reply = await answer_to(
                s, OWNER_CHAT, OWNER_USER, f"/approve {promise} {words}", "Approved"
            )
            old = read(engine, promise)
            new_id = old["record"]["superseded_by"]
            assert reply.startswith(f"Approved #{promise} in your words as #{new_id} — now active")
            assert old["record"]["status"] == "superseded"
            new = read(engine, new_id)
            record = new["record"]
            assert (record["summary"], record["status"]) == (words, "active")
            assert record["involvement"] == "owner_stated"
            assert record["kind"] == "commitment"
            # The proposal's terms stay with the owner's words (the review window's rule).
            assert (record["commitment"]["owed_by"], record["commitment"]["owed_to"]) == (
                "Anna",
                "Bob",
            )
            assert [h["id"] for h in new["history"]] == [promise]

            # Approving it again: refused with the core's reason, in one line.
            refused = await answer_to(
                s, OWNER_CHAT, OWNER_USER, f"/approve {promise} other words", "needs it"
            )
            assert refused == (
                f"Judgment {promise} is superseded; editing and approving it needs it proposed."
            )

    asyncio.run(scenario())


def test_approve_without_words_approves_it_as_proposed(engine: Engine, store: Store) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            rule = engine.dispatch(
                "memory.save",
                {"kind": "preference", "summary": "Prefer short PRs", "applies_when": "coding"},
                AGENT,
                agent_grant(),
            )["judgment_id"]
            reply = await answer_to(s, OWNER_CHAT, OWNER_USER, f"/approve #{rule}", "Approved")
            assert reply.startswith(f"Approved #{rule} — now active")
            record = read(engine, rule)["record"]
            assert (record["summary"], record["status"]) == ("Prefer short PRs", "active")
            assert record["involvement"] == "owner_approved"
            usage = await answer_to(s, OWNER_CHAT, OWNER_USER, "/approve soon", "Usage")
            assert usage.startswith("Usage: /approve ID")

    asyncio.run(scenario())
