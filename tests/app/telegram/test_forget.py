"""/forget in Telegram: the owner purges a stored message (theirs or the bot's) or a
memory after tapping Purge; Cancel, a stranger's tap and a forwarded /forget purge
nothing; the bot deletes the Telegram message too where Telegram allows it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from app.backends.command_mode import CommandModeBackend
from app.telegram.forget import DELETE_WINDOW
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.store import Store
from tests.app.runtime.support import ScriptedAgent
from tests.app.telegram.stack import OWNER_CHAT, OWNER_USER, STRANGER, Stack, messenger

OWNER = {"id": OWNER_USER, "is_bot": False, "first_name": "owner", "username": "owner"}


def chat_message(message_id: int, text: str, *, age: float = 0.0) -> dict[str, Any]:
    """The owner's message ``message_id`` as Telegram repeats it in a reply."""
    return {
        "message_id": message_id,
        "date": int(time.time() - age),
        "chat": {"id": OWNER_CHAT, "type": "private"},
        "from": OWNER,
        "text": text,
    }


def observation(s: Stack, source_ref: str) -> tuple[int, str, str | None]:
    """(id, text, purged_at) of the observation behind a mailbox input or a delivery."""
    with s.runtime.db.read() as conn:
        row = conn.execute(
            "SELECT o.id, o.text, o.purged_at FROM observations o WHERE o.id = coalesce("
            "(SELECT observation_id FROM mailbox WHERE source_ref = ?), "
            "(SELECT observation_id FROM deliveries WHERE external_ref = ?))",
            (source_ref, source_ref),
        ).fetchone()
    return int(row[0]), str(row[1]), row[2]


async def ask_forget(
    s: Stack, extra: dict[str, Any] | None, text: str = "/forget"
) -> dict[str, Any]:
    """The owner sends /forget; returns the question (with its buttons) the bot answers."""
    before = len(s.api.texts_to(OWNER_CHAT))
    s.api.push_message(OWNER_CHAT, OWNER_USER, text, extra=extra)
    await s.api.signal.until(lambda: len(s.api.texts_to(OWNER_CHAT)) > before)
    question = s.last_to_owner()
    assert question.get("reply_markup"), question["text"]
    return question


async def tap(s: Stack, question: dict[str, Any], label: str, user: int = OWNER_USER) -> None:
    buttons = question["reply_markup"]["inline_keyboard"][0]
    data = next(b["callback_data"] for b in buttons if b["text"] == label)
    answered = len(s.api.answers)
    card = {k: v for k, v in question.items() if k != "params"}
    s.api.push_callback(user, card, data)
    await s.api.signal.until(lambda: len(s.api.answers) > answered)
    if user == OWNER_USER:
        await s.api.signal.until(
            lambda: any(e["message_id"] == question["message_id"] for e in s.api.edits)
        )


def last_edit_of(s: Stack, question: dict[str, Any]) -> str:
    return [e["text"] for e in s.api.edits if e["message_id"] == question["message_id"]][-1]


def test_forget_purges_the_owners_message_and_the_bots_reply_after_purge_is_tapped(
    engine: Engine, store: Store
) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            said = "/remember fact The door code is 4711"
            mine = await s.owner_says(said)
            bot_reply = s.last_to_owner()
            assert bot_reply["text"].startswith("Saved #1")
            mine_ref = f"telegram:{OWNER_CHAT}:{mine}"
            reply_ref = f"telegram:{OWNER_CHAT}:{bot_reply['message_id']}"
            assert observation(s, mine_ref)[1] == said

            # Cancel purges nothing (and a stranger's tap on Purge does nothing).
            question = await ask_forget(s, {"reply_to_message": chat_message(mine, said)})
            assert "Purge this message from MAMA's memory?" in question["text"]
            await tap(s, question, "Purge", user=STRANGER)
            await tap(s, question, "Cancel")
            assert last_edit_of(s, question) == "Kept: nothing was purged."
            assert observation(s, mine_ref)[1] == said and s.api.deleted == []

            # Purge: the stored text is erased and the Telegram message deleted.
            question = await ask_forget(s, {"reply_to_message": chat_message(mine, said)})
            await tap(s, question, "Purge")
            obs_id, text, purged_at = observation(s, mine_ref)
            assert (text, purged_at is not None) == ("", True)
            assert s.api.deleted == [(OWNER_CHAT, mine)]
            assert last_edit_of(s, question).startswith("Purged the message (event #")
            # The purge is the engine's, by the owner, with its event.
            with s.runtime.db.read() as conn:
                row = conn.execute(
                    "SELECT e.action, json_extract(e.actor, '$.kind') FROM events e, "
                    "json_each(e.payload, '$.observations') o "
                    "WHERE json_extract(o.value, '$.id') = ?",
                    (obs_id,),
                ).fetchone()
            assert tuple(row) == ("memory.purge", "owner")
            # The bot's reply is still stored (the control) until the owner forgets it too.
            assert observation(s, reply_ref)[1].startswith("Saved #1")
            bot_message = {k: v for k, v in bot_reply.items() if k != "params"}
            question = await ask_forget(s, {"reply_to_message": bot_message})
            await tap(s, question, "Purge")
            assert observation(s, reply_ref)[1] == ""
            assert s.api.deleted[-1] == (OWNER_CHAT, bot_reply["message_id"])

            # Already purged: said so, no second question.
            s.api.push_message(
                OWNER_CHAT,
                OWNER_USER,
                "/forget",
                extra={"reply_to_message": chat_message(mine, "")},
            )
            await s.api.signal.until(
                lambda: s.last_to_owner()["text"] == "That message is already purged from MAMA."
            )

    asyncio.run(scenario())


def test_forget_id_purges_a_memory_and_old_messages_are_left_to_the_owner(
    engine: Engine, store: Store
) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            await s.owner_says("/remember fact Salary is 91000")
            await s.owner_says("/remember fact Lunch is at noon")

            question = await ask_forget(s, None, "/forget 1")
            assert question["text"].startswith("Purge memory #1 (fact: Salary is 91000)?")
            await tap(s, question, "Purge")
            assert last_edit_of(s, question).startswith("Purged memory #1 (event #")
            assert "91000" not in last_edit_of(s, question)
            read = engine.dispatch(
                "memory.read", {"id": 1}, SessionFacts.owner_cli(), Grant.owner()
            )
            assert read["record"]["status"] == "purged" and read["record"]["summary"] == ""
            # Positive control: the memory not named is untouched.
            other = engine.dispatch(
                "memory.read", {"id": 2}, SessionFacts.owner_cli(), Grant.owner()
            )
            assert other["record"]["summary"] == "Lunch is at noon"

            # A message older than 48 hours: purged from MAMA, left in the chat for the owner.
            old_id = await s.owner_says("An old note")
            age = DELETE_WINDOW.total_seconds() + 3600
            question = await ask_forget(
                s, {"reply_to_message": chat_message(old_id, "An old note", age=age)}
            )
            assert "older than 48 hours" in question["text"]
            await tap(s, question, "Purge")
            assert observation(s, f"telegram:{OWNER_CHAT}:{old_id}")[1] == ""
            assert "Delete the message from this chat yourself" in last_edit_of(s, question)
            assert s.api.deleted == []

    asyncio.run(scenario())


def test_a_forwarded_forget_is_evidence_not_a_purge(engine: Engine, store: Store) -> None:
    async def scenario() -> None:
        async with messenger(engine, store, CommandModeBackend()) as s:
            await s.pair()
            await s.owner_says("/remember fact Keep this")
            forwarded = {
                "forward_origin": {
                    "type": "hidden_user",
                    "date": int(time.time()),
                    "sender_user_name": "Mallory",
                }
            }
            before = len(s.api.texts_to(OWNER_CHAT))
            s.api.push_message(OWNER_CHAT, OWNER_USER, "/forget 1", extra=forwarded)
            await s.api.signal.until(lambda: len(s.api.texts_to(OWNER_CHAT)) > before)
            assert s.last_to_owner()["text"].startswith("I kept that forwarded message")
            assert not s.last_to_owner().get("reply_markup")
            # Positive control: the owner's own /forget 1 asks to purge it.
            question = await ask_forget(s, None, "/forget 1")
            assert question["text"].startswith("Purge memory #1 (fact: Keep this)?")

            # The owner's /forget as a reply to the forwarded message purges that message.
            forwarded_id = s.api.push_message(
                OWNER_CHAT, OWNER_USER, "Mallory's invoice text", extra=forwarded
            )
            await s.api.signal.until(
                lambda: (
                    s.last_to_owner()["text"].startswith("I kept that forwarded message")
                    and len(s.api.texts_to(OWNER_CHAT)) > before + 2
                )
            )
            ref = f"telegram:{OWNER_CHAT}:{forwarded_id}"
            assert observation(s, ref)[1] == "Mallory's invoice text"
            replied = chat_message(forwarded_id, "Mallory's invoice text") | forwarded
            question = await ask_forget(s, {"reply_to_message": replied})
            await tap(s, question, "Purge")
            assert observation(s, ref)[1] == ""

    asyncio.run(scenario())


def test_forget_a_proposal_deletes_its_review_card_too(engine: Engine, store: Store) -> None:
    guidance = {
        "kind": "preference",
        "summary": "Call the client Mr Secretname",
        "applies_when": "writing to the client",
    }
    agent = ScriptedAgent([[("memory_save", guidance)]], reply="I proposed it.")

    async def scenario() -> None:
        async with messenger(engine, store, agent) as s:
            await s.pair()
            s.api.push_message(OWNER_CHAT, OWNER_USER, "How do I address the client?")
            await s.api.signal.until(lambda: any(m.get("reply_markup") for m in s.api.sent))
            # The turn's reply may follow its card: wait for both, so the next text to
            # the owner is the answer to /forget.
            await s.api.signal.until(lambda: "I proposed it." in s.api.texts_to(OWNER_CHAT))
            card = next(m for m in s.api.sent if m.get("reply_markup"))
            jid = int(card["reply_markup"]["inline_keyboard"][0][0]["callback_data"].split(":")[1])
            # Replying /forget to the card asks about the memory it shows.
            card_message = {k: v for k, v in card.items() if k != "params"}
            question = await ask_forget(s, {"reply_to_message": card_message})
            assert question["text"].startswith(f"Purge memory #{jid} (preference: Call the")
            await tap(s, question, "Purge")
            assert "Its review card is deleted from this chat too." in last_edit_of(s, question)
            assert s.api.deleted == [(OWNER_CHAT, card["message_id"])]
            read = engine.dispatch(
                "memory.read", {"id": jid}, SessionFacts.owner_cli(), Grant.owner()
            )
            assert read["record"]["status"] == "purged"

    asyncio.run(scenario())
