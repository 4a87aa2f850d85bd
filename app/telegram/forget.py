"""``/forget`` in Telegram: the owner purges a stored message or a memory, after a tap.

``/forget`` sent as a reply to a message of the chat purges what MAMA stored
of it: the owner's message or the bot's reply (its observation), or, for a
review card, the judgment it shows. ``/forget ID`` purges memory #ID. Each asks
first, with Purge / Cancel buttons, and only the owner's own typed command
counts (the gateway never passes a forwarded one here). The purge is the
engine's ``memory.purge`` as the owner; then the bot deletes the Telegram
message too (for a memory: the review cards that showed it) where Telegram
allows it (a bot cannot delete messages older than 48 hours), and says so
where it cannot.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from telegram import Bot, CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.error import TelegramError

from app.durable.clock import unstamp
from app.durable.journal import sent_card_judgment, sent_cards, sent_observation
from app.durable.mailbox import input_observation
from app.durable.transaction import RuntimeDb
from app.runtime.owner_runtime import OwnerRuntime, owner_facts
from mama_core.errors import MamaError
from mama_core.memory import Engine, Grant
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.inputs import PurgeInput
from mama_core.memory.verbs import Verb, may

log = logging.getLogger(__name__)

PURGE_REASON = "Purged by the owner in Telegram (/forget)."
DELETE_WINDOW = dt.timedelta(hours=48)
"""Telegram lets a bot delete a message of a private chat only this long after it was sent."""
CALLBACK_PREFIX = "forget"


@dataclass(frozen=True)
class Stored:
    """What MAMA keeps of one Telegram message: its observation, or the judgment on its card."""

    observation_id: int | None = None
    judgment_id: int | None = None
    purged: bool = False


def stored_for_message(db: RuntimeDb, chat_id: int, message_id: int) -> Stored | None:
    """What is stored of Telegram message ``message_id`` in ``chat_id``, if anything.

    The owner's messages are mailbox inputs (``telegram:CHAT:MESSAGE``); the
    bot's messages are deliveries whose last part was sent as that message.
    """
    ref = f"telegram:{chat_id}:{message_id}"
    with db.read() as conn:
        kept = input_observation(conn, ref) or sent_observation(conn, ref)
        if kept is not None:
            observation_id, purged = kept
            return Stored(observation_id=observation_id, purged=purged)
        judgment_id = sent_card_judgment(conn, ref)
    return Stored(judgment_id=judgment_id) if judgment_id is not None else None


def card_messages(db: RuntimeDb, chat_id: int, judgment_id: int) -> list[tuple[int, datetime]]:
    """The review cards that showed ``judgment_id`` in ``chat_id``: (message id, sent at)."""
    with db.read() as conn:
        rows = sent_cards(conn, judgment_id)
    found: list[tuple[int, datetime]] = []
    for ref, sent_at in rows:
        _, chat, message = ref.rsplit(":", 2)
        if chat == str(chat_id) and message.isdigit():
            found.append((int(message), unstamp(sent_at)))
    return found


class ForgetFlow:
    """Asks before purging, purges on the owner's tap, deletes the Telegram message."""

    def __init__(self, runtime: OwnerRuntime, engine: Engine, bot: Bot) -> None:
        self.runtime = runtime
        self.engine = engine
        self.bot = bot

    # --- /forget --------------------------------------------------------

    async def ask(self, message: Message, argument: str) -> None:
        """Answer the owner's ``/forget`` with a question and Purge / Cancel buttons."""
        chat_id = message.chat.id
        ident = argument.strip().lstrip("#")
        if ident:
            if not ident.isdigit() or int(ident) < 1 or int(ident) >= 2**53:
                await self._say(message, "Usage: /forget ID, or /forget as a reply to a message.")
                return
            await self._ask_memory(message, int(ident))
            return
        target = message.reply_to_message
        if target is None:
            await self._say(
                message,
                "Send /forget as a reply to the message to forget, or /forget ID for memory #ID.",
            )
            return
        stored = await self.runtime.run_db(
            stored_for_message, self.runtime.db, chat_id, target.message_id
        )
        if stored is None:
            await self._say(message, "I have nothing stored for that message.")
            return
        if stored.judgment_id is not None:
            await self._ask_memory(message, stored.judgment_id)
            return
        if stored.purged:
            await self._say(message, "That message is already purged from MAMA.")
            return
        assert stored.observation_id is not None
        old = _age(target) > DELETE_WINDOW
        note = (
            " Telegram does not let me delete a message older than 48 hours, so delete it "
            "from the chat yourself."
            if old
            else " I will delete it from this chat too."
        )
        await self._confirm(
            message,
            f"Purge this message from MAMA's memory? Its text is erased for good.{note}",
            f"obs:{stored.observation_id}:{target.message_id if not old else 0}",
        )

    async def _ask_memory(self, message: Message, judgment_id: int) -> None:
        record = await self._read(judgment_id)
        if record is None:
            await self._say(message, f"There is no memory #{judgment_id}.")
            return
        if not may(record, Verb.PURGE):  # the core says there is nothing left to erase
            await self._say(message, f"#{judgment_id} is already purged.")
            return
        summary = " ".join(str(record.get("summary", "")).split())
        short = summary if len(summary) <= 80 else summary[:79] + "…"
        await self._confirm(
            message,
            f"Purge memory #{judgment_id} ({record.get('kind')}: {short})? "
            "Its text is erased for good.",
            f"mem:{judgment_id}",
        )

    async def _confirm(self, message: Message, question: str, target: str) -> None:
        markup = InlineKeyboardMarkup(
            [
                [
                    InlineKeyboardButton("Purge", callback_data=f"{CALLBACK_PREFIX}:{target}"),
                    InlineKeyboardButton("Cancel", callback_data=f"{CALLBACK_PREFIX}:cancel"),
                ]
            ]
        )
        with contextlib.suppress(TelegramError):
            await message.reply_text(question, reply_markup=markup)

    # --- the buttons ----------------------------------------------------

    async def answer(self, query: CallbackQuery, chat_id: int) -> None:
        """The owner tapped Purge or Cancel on a ``/forget`` question."""
        parts = (query.data or "").split(":")[1:]
        if parts == ["cancel"]:
            await _answer(query, "Kept.")
            await _edit(query, "Kept: nothing was purged.")
            return
        numbers = [int(p) for p in parts[1:] if p.isdigit()]
        if not parts or parts[0] not in ("obs", "mem") or len(numbers) != len(parts) - 1:
            await _answer(query, "I don't know that button.")
            return
        card_id = query.message.message_id if query.message is not None else 0
        facts = replace(
            owner_facts(self.runtime.settings.owner_name),
            source_refs=(f"telegram:callback:{query.id}",),
            message_ref=f"telegram:{chat_id}:{card_id}",
        )
        payload: dict[str, Any] = {"reason": PURGE_REASON, "command_id": f"telegram:cb:{query.id}"}
        if parts[0] == "obs":
            payload["observation_id"] = numbers[0]
            what = "the message"
        else:
            payload["id"] = numbers[0]
            what = f"memory #{numbers[0]}"
        try:
            purge = parse_input(PurgeInput, **payload)
            receipt = await self.engine.mutate_async(purge, facts, Grant.owner())
        except MamaError as exc:
            log.info("purge from telegram refused: %s", exc.code)
            await _answer(query, exc.message[:190], alert=True)
            await _edit(query, f"Not purged: {exc.message}")
            return
        done = f"Purged {what} (event #{receipt.event_id})."
        await _answer(query, f"Purged {what}.")
        message_id = numbers[1] if len(numbers) > 1 else 0
        if parts[0] == "obs" and message_id:
            done += " " + await self._delete(chat_id, message_id)
        elif parts[0] == "obs":
            done += " Delete the message from this chat yourself (it is older than 48 hours)."
        else:
            done += await self._delete_cards(chat_id, numbers[0])
        await _edit(query, done)

    async def _delete_cards(self, chat_id: int, judgment_id: int) -> str:
        """Delete the review cards that showed the purged memory's text, where allowed."""
        cards = await self.runtime.run_db(card_messages, self.runtime.db, chat_id, judgment_id)
        now = dt.datetime.now(dt.UTC)
        left = 0
        for message_id, sent_at in cards:
            if now - sent_at > DELETE_WINDOW:
                left += 1
                continue
            try:
                await self.bot.delete_message(chat_id, message_id)
            except TelegramError as exc:
                log.info("could not delete review card %s: %s", message_id, exc)
                left += 1
        deleted = len(cards) - left
        said = " Its review card is deleted from this chat too." if deleted else ""
        if left:
            said += f" Delete its older review card{'s' if left > 1 else ''} yourself."
        return said

    async def _delete(self, chat_id: int, message_id: int) -> str:
        try:
            await self.bot.delete_message(chat_id, message_id)
        except TelegramError as exc:
            log.info("could not delete telegram message %s: %s", message_id, exc)
            return (
                "Telegram did not let me delete it from this chat (a bot cannot delete "
                "messages older than 48 hours); delete it yourself."
            )
        return "It is deleted from this chat too."

    async def _read(self, judgment_id: int) -> dict[str, Any] | None:
        try:
            found = await self.engine.dispatch_async(
                "memory.read",
                {"id": judgment_id},
                owner_facts(self.runtime.settings.owner_name),
                Grant.owner(),
            )
        except MamaError:
            return None
        return dict(found.get("record") or {})

    async def _say(self, message: Message, text: str) -> None:
        with contextlib.suppress(TelegramError):
            await message.reply_text(text)


def _age(message: Message) -> dt.timedelta:
    return dt.datetime.now(dt.UTC) - message.date


async def _answer(query: CallbackQuery, text: str, *, alert: bool = False) -> None:
    with contextlib.suppress(TelegramError):
        await query.answer(text, show_alert=alert)


async def _edit(query: CallbackQuery, text: str) -> None:
    with contextlib.suppress(TelegramError):
        await query.edit_message_text(text)
