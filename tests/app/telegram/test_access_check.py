"""One access check stops strangers before any handler runs: every command and every
kind of button, from a stranger's chat or a stranger in the owner's chat, is ignored
(noted, unanswered in text, nothing changed), while the owner's same command works.
A command inside someone else's words (forwarded) never runs. The real
python-telegram-bot client against the fake Bot API on 127.0.0.1."""

from __future__ import annotations

import asyncio

from app.backends.command_mode import CommandModeBackend
from mama_core.memory import Engine
from mama_core.store import Store
from tests.app.telegram.stack import OWNER_CHAT, OWNER_USER, STRANGER, messenger
from tests.app.telegram.test_approve_in_words import answer_to, proposed_commitment, read

STRANGER_CHAT = 9090


def test_strangers_stop_at_the_access_check_whatever_they_send_or_tap(
    engine: Engine, store: Store
) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            promise = proposed_commitment(engine)
            card = {
                "message_id": 1,
                "date": 0,
                "chat": {"id": OWNER_CHAT, "type": "private"},
                "text": "card",
            }
            commands = [
                "/work",
                "/today",
                f"/approve {promise}",
                f"/approve {promise} in my words",
                "/forget",
                "/help",
                "hello MAMA",
            ]
            buttons = [
                f"approve:{promise}",
                f"confirm:{promise}",
                f"show:{promise}",
                "approveall:1",
                "revieweach:1",
                "approve:settings:1",
                "forget:1:yes",
                "nonsense",
            ]
            ignored, answered = len(s.gateway.ignored), len(s.api.answers)
            for text in commands:
                s.api.push_message(STRANGER_CHAT, STRANGER, text, "mallory")
                s.api.push_message(OWNER_CHAT, STRANGER, text, "mallory")
            for data in buttons:
                s.api.push_callback(STRANGER, card, data)
            total = 2 * len(commands) + len(buttons)
            await s.api.signal.until(lambda: len(s.gateway.ignored) >= ignored + total)
            reasons = [i.reason for i in list(s.gateway.ignored)[ignored:]]
            assert reasons.count("not the paired owner") == 2 * len(commands)
            assert reasons.count("a button tap from someone else") == len(buttons)
            # Each tap is answered (Telegram's spinner stops) with no text; nothing is
            # sent to the stranger's chat and the proposal still waits.
            await s.api.signal.until(lambda: len(s.api.answers) >= answered + len(buttons))
            assert all(not a.get("text") for a in s.api.answers[answered:])
            assert s.api.texts_to(STRANGER_CHAT) == []
            assert s.api.edits == []
            assert read(engine, promise)["record"]["status"] == "proposed"

            # The owner forwarding someone's "/approve" does not run it: it is a message.
            forwarded = {
                "forward_origin": {"type": "hidden_user", "sender_user_name": "x", "date": 0}
            }
            s.api.push_message(OWNER_CHAT, OWNER_USER, f"/approve {promise}", extra=forwarded)
            # Positive control: the owner's own /approve approves it (and is the next
            # reply, so the forwarded one above was taken and did not approve).
            reply = await answer_to(s, OWNER_CHAT, OWNER_USER, f"/approve {promise}", "Approved")
            assert reply.startswith(f"Approved #{promise}")
            assert read(engine, promise)["record"]["status"] == "active"
            approvals = [
                e for e in read(engine, promise)["events"] if e["action"] == "review.approve"
            ]
            assert len(approvals) == 1

    asyncio.run(scenario())
