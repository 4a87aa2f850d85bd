"""The Telegram gateway: python-telegram-bot 22 inside the app's own loop.

``start`` connects in the background (``initialize``, ``start``,
``updater.start_polling`` — never ``run_polling``, which would own the loop)
and retries with backoff while the Bot API cannot be reached. Only the paired
owner's chat and user are served: their messages become mailbox inputs, their
button taps owner actions with receipts. Everything else is ignored and
logged, and never reaches the agent.

Pairing takes a private chat only, and never while an owner is paired; the
bot answers nobody but the owner, except that an unpaired bot answers a
well-formed ``/pair CODE`` sent in a private chat (the person setting it up
needs to know whether the code worked). The owner's message that forwards or
quotes someone else's words goes to the mailbox as evidence, not as the
owner's words (``app.telegram.forwarded``); ``/forget`` is handled here
(``app.telegram.forget``), and so is ``/approve ID [your words]`` (approve, or edit and
approve in one message).

The gateway is also the runtime's ``OwnerChannel``: it formats replies as
Telegram HTML, splits them under 4,096 characters, adds the review buttons to
proposal cards, and tells the journal whether a failed send may have arrived.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime as dt
import functools
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx
from telegram import (
    Bot,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)
from telegram.warnings import PTBDeprecationWarning

from app.durable.clock import Clock
from app.durable.evidence import evidence_meta, evidence_text
from app.durable.mailbox import InputKind, NewInput
from app.durable.proposals import proposal_group
from app.local.log_redaction import register_secret
from app.present.cards import card_text, commitment_line, record_text, settings_line
from app.runtime.channel import (
    DeliveryRefused,
    DeliveryRetry,
    DeliveryUncertain,
    OutgoingMessage,
)
from app.runtime.owner_runtime import OwnerRuntime, owner_facts
from app.telegram.forget import CALLBACK_PREFIX as FORGET_PREFIX
from app.telegram.forget import ForgetFlow
from app.telegram.formatting import split_html, to_html, to_plain
from app.telegram.forwarded import outside_content
from app.telegram.pairing import PairedOwner, Pairing, PairOutcome, PairResult, looks_like_code
from mama_core.errors import MamaError
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.memory.dispatcher import parse_input
from mama_core.memory.edit_approval import edited_save
from mama_core.memory.inputs import ApproveInput, RejectInput
from mama_core.memory.results import OwnerSettingsResult
from mama_core.model import Kind, Status

log = logging.getLogger(__name__)

REJECT_REASON = "Rejected by the owner in Telegram."
DROP_REASON = "Dropped by the owner in Telegram."

BUTTONS: dict[str, tuple[str, str]] = {
    "approve": ("Approve", "Approved"),
    "reject": ("Reject", "Rejected"),
    "confirm": ("Confirm", "Confirmed"),
    "drop": ("Drop", "Dropped"),
}
"""A review card's verbs: the button's label and the word for it done. A proposed
commitment is confirmed or dropped; the verbs are review.approve and review.reject."""

SETTINGS_IDENT = "settings"
"""What a settings card's buttons name instead of a record: ``approve:settings:<change>``."""

APPROVE_ALL = "approveall"
REVIEW_EACH = "revieweach"
"""A group card's verbs (one card for what a source-delta turn proposed)."""

APPROVE_USAGE = "Usage: /approve ID, or /approve ID and your own words to approve it as you put it."

WORK_LIST_LIMIT = 30
"""At most this many commitments in a /work answer; the rest: ``mama work list``."""


@dataclass(frozen=True)
class TelegramPart:
    """One Telegram message: HTML text, its plain fallback, buttons, reply target."""

    chat_id: int
    html: str
    plain: str
    review_id: int | None = None
    reply_to_message_id: int | None = None
    review_change_id: int | None = None
    review_kind: str | None = None
    review_group: int | None = None


@dataclass(frozen=True)
class Ignored:
    """An update that was not served, and why (kept for the tray and the log)."""

    chat_id: int | None
    user_id: int | None
    reason: str


def command_of(message: Message) -> str:
    """The command a message starts with (``/work``), lower-cased and without a
    ``@botname``; whatever the first word is otherwise. Captions count as text."""
    text = message.text or message.caption or ""
    return text.strip().partition(" ")[0].lower().split("@", 1)[0]


def argument_of(message: Message) -> str:
    """What follows the command word (``/approve 12 in my words`` -> ``12 in my words``)."""
    text = message.text or message.caption or ""
    return text.strip().partition(" ")[2]


class Command(filters.MessageFilter):
    """Messages whose first word is the command ``name``. ``own``: only when the owner
    typed it here: not forwarded and not a reply quoting another chat's message, so a
    command inside someone else's words reaches the agent as a message, never runs."""

    __slots__ = ("command", "own")

    def __init__(self, name: str, *, own: bool = False) -> None:
        super().__init__(name=f"Command({name})")
        self.command = name
        self.own = own

    def filter(self, message: Message) -> bool:
        if command_of(message) != self.command or message.forward_origin is not None:
            return False
        return not (self.own and message.external_reply is not None)


def _tap(update: Update) -> tuple[CallbackQuery, int]:
    """The button tap of an update the access check let through, and its chat."""
    query = update.callback_query
    assert query is not None and query.message is not None  # TelegramGateway._admit
    return query, query.message.chat.id


class TelegramGateway:
    """The bot: pairing, owner messages into the mailbox, replies and review cards out."""

    def __init__(
        self,
        runtime: OwnerRuntime,
        engine: Engine,
        token: str,
        api_url: str,
        *,
        poll_timeout: float = 10.0,
        connect_retry_max: float = 60.0,
        clock: Clock | None = None,
    ) -> None:
        self.runtime = runtime
        self.engine = engine
        register_secret(token)  # in every Bot API URL: never in a log
        self.pairing = Pairing(runtime.db, clock or runtime.clock)
        self.poll_timeout = poll_timeout
        self.connect_retry_max = connect_retry_max
        self.ignored: collections.deque[Ignored] = collections.deque(maxlen=100)
        self.connected = asyncio.Event()
        self.paired_listeners: list[Callable[[PairedOwner], None]] = []
        """Called when a chat pairs (the tray closes its pairing window)."""
        self.fatal: str | None = None
        self._owner: PairedOwner | None = None
        self._initialized = False
        self._task: asyncio.Task[None] | None = None
        self.app: Application[Any, Any, Any, Any, Any, Any] = (
            ApplicationBuilder()
            .token(token)
            .base_url(f"{api_url}/bot")
            .base_file_url(f"{api_url}/file/bot")
            .connect_timeout(10.0)
            .read_timeout(20.0)
            .write_timeout(20.0)
            .pool_timeout(10.0)
            .get_updates_read_timeout(poll_timeout + 10.0)
            .build()
        )
        self.forget = ForgetFlow(runtime, engine, self.app.bot)
        # Group -1 runs first for every update: strangers stop there (the one access
        # check), so no handler below needs to ask who is writing.
        self.app.add_handler(TypeHandler(Update, self._admit), group=-1)
        message = filters.UpdateType.MESSAGE
        self.app.add_handler(MessageHandler(message & Command("/pair"), self._on_pair))
        for name, handler in (
            ("/work", self._on_work),
            ("/today", self._on_today),
            ("/approve", self._on_approve),
            # The owner's own command; as a reply it names the chat's message to forget
            # (a forwarded one included).
            ("/forget", self._on_forget),
        ):
            self.app.add_handler(MessageHandler(message & Command(name, own=True), handler))
        self.app.add_handler(MessageHandler(message, self._on_message))
        self.app.add_handler(
            CallbackQueryHandler(self._on_forget_tap, pattern=f"^{FORGET_PREFIX}:")
        )
        self.app.add_handler(
            CallbackQueryHandler(
                self._on_group_tap, pattern=f"^({APPROVE_ALL}|{REVIEW_EACH}):[0-9]+$"
            )
        )
        self.app.add_handler(
            CallbackQueryHandler(
                self._on_setting_tap, pattern=f"^(approve|reject):{SETTINGS_IDENT}:[0-9]+$"
            )
        )
        self.app.add_handler(CallbackQueryHandler(self._on_callback))
        self.app.add_error_handler(self._on_error)

    # --- life cycle -----------------------------------------------------

    async def start(self) -> None:
        """Load the pairing and connect in the background (retrying while offline)."""
        await self._current_owner()
        self._task = asyncio.create_task(self._connect(), name="mama-telegram-connect")

    async def stop_receiving(self) -> None:
        """Stop taking updates (first step of a shutdown); sending still works."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        updater = self.app.updater
        if updater is not None and updater.running:
            await updater.stop()

    async def stop(self) -> None:
        """Stop polling and close the client, in the reverse order of start."""
        await self.stop_receiving()
        self.runtime.attach_channel(None)
        if self.app.running:
            await self.app.stop()
        if self._initialized:
            await self.app.shutdown()
            self._initialized = False

    async def _connect(self) -> None:
        delay = 1.0
        while True:
            try:
                await self.app.initialize()
                break
            except InvalidToken:  # its text holds the token: not logged
                self.fatal = "Telegram refused the bot token; set a valid one in the settings."
                log.error(self.fatal)
                # The bot's HTTP clients were opened before the token was refused.
                with contextlib.suppress(Exception):
                    await self.app.bot.shutdown()
                return
            except TelegramError as exc:
                log.warning("Telegram not reachable (%s); retrying in %.0fs", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.connect_retry_max)
        self._initialized = True
        await self.app.start()
        updater = self.app.updater
        assert updater is not None
        await updater.start_polling(
            timeout=dt.timedelta(seconds=self.poll_timeout),
            bootstrap_retries=-1,
            allowed_updates=[Update.MESSAGE, Update.CALLBACK_QUERY],
            drop_pending_updates=False,
        )
        self.connected.set()
        self.runtime.attach_channel(self)
        log.info("Telegram connected as @%s", self.app.bot.username)

    async def wait_connected(self) -> bool:
        """Wait until the bot is connected (True) or Telegram refused the token (False)."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait([task])
        return self.connected.is_set()

    @property
    def owner(self) -> PairedOwner | None:
        return self._owner

    # --- incoming -------------------------------------------------------

    async def _admit(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        """Let through the paired owner's messages and taps, and ``/pair`` from anyone;
        stop everything else here (``ApplicationHandlerStop``), noted as ignored."""
        query = update.callback_query
        if query is not None:
            owner = await self._current_owner()
            chat_id = query.message.chat.id if query.message is not None else None
            if (
                owner is None
                or chat_id is None
                or query.from_user.id != owner.user_id
                or chat_id != owner.chat_id
            ):
                self._ignore(chat_id, query.from_user.id, "a button tap from someone else")
                with contextlib.suppress(TelegramError):
                    await query.answer()
                raise ApplicationHandlerStop
            return
        message, chat, user = update.message, update.effective_chat, update.effective_user
        if message is None or chat is None:
            raise ApplicationHandlerStop  # nothing MAMA asked Telegram for
        if user is None:
            self._ignore(chat.id, None, "no sender")
            raise ApplicationHandlerStop
        if command_of(message) == "/pair" and message.forward_origin is None:
            return
        owner = await self._current_owner()
        if owner is None or chat.id != owner.chat_id or user.id != owner.user_id:
            self._ignore(chat.id, user.id, "not the paired owner")
            raise ApplicationHandlerStop

    async def _on_pair(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        message, user = update.message, update.effective_user
        assert message is not None and user is not None  # _admit let it through
        await self._pair(
            message,
            message.chat.type,
            user.id,
            user.username or user.full_name,
            argument_of(message),
        )

    async def _on_work(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await self._work(update.message)

    async def _on_today(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await self._today(update.message)

    async def _on_approve(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await self._approve(update.message, argument_of(update.message))

    async def _on_forget(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await self.forget.ask(update.message, argument_of(update.message))

    async def _on_message(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        """Any other message of the owner's: into the mailbox for the agent's turn."""
        message, chat, user = update.message, update.effective_chat, update.effective_user
        owner = self._owner  # as _admit just read it
        assert message is not None and chat is not None and user is not None
        if owner is None:  # unpaired from the tray since
            self._ignore(chat.id, user.id, "not the paired owner")
            return
        text = message.text or message.caption or ""
        outside = outside_content(message, owner.user_id, self.app.bot.id)
        meta: dict[str, Any] = {"chat_id": chat.id, "message_id": message.message_id}
        author = user.username or user.full_name
        if outside is not None:  # someone else's words, delivered by the owner
            text = evidence_text(outside.own, outside.content)
            meta |= evidence_meta(outside.how, outside.own)
            author = outside.origin
        if not text:
            text = "(a message without text)"
        await self.runtime.post(
            NewInput(
                InputKind.OWNER_MESSAGE,
                "telegram",
                f"{chat.id}:{message.message_id}",
                text,
                author=author,
                meta=meta,
            )
        )

    async def _current_owner(self) -> PairedOwner | None:
        """The paired owner as the store says now: ``mama telegram unpair`` in another
        process takes effect with the next update, without a restart."""
        owner = await self.runtime.run_db(self.pairing.owner)
        if owner is not None and owner.chat_id < 0:  # a group paired by an older version
            log.warning("the paired chat %s is a group: not served; unpair it", owner.chat_id)
            owner = None
        self._owner = owner
        return owner

    async def _pair(
        self, message: Message, chat_type: str, user_id: int, username: str, code: str
    ) -> None:
        chat_id = message.chat.id
        private = chat_type == ChatType.PRIVATE
        result = await self.runtime.run_db(
            functools.partial(
                self.pairing.redeem, code.strip(), chat_id, user_id, username, private=private
            )
        )
        if not result.paired:
            self._ignore(chat_id, user_id, f"pairing refused: {result.outcome.value}")
            answer = _pair_answer(result, private=private, well_formed=looks_like_code(code))
            if answer:
                await self._quiet_reply(message, answer)
            return
        owner = await self._current_owner()
        log.info("paired with telegram chat %s user %s", chat_id, user_id)
        if owner is not None:
            for listener in list(self.paired_listeners):
                listener(owner)
        await self._quiet_reply(
            message, "Paired. This chat is now your line to MAMA. Send /help to see what I can do."
        )
        self.runtime.wake_sender()

    async def unpair(self) -> PairedOwner | None:
        """The owner on the machine unpairs: forget the owner, then tell the old chat."""
        old = await self.runtime.run_db(self.pairing.unpair)
        self._owner = None
        if old is not None and self._initialized:
            await notify_unpaired(self.app.bot, old.chat_id)
        return old

    async def _on_forget_tap(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        query, chat_id = _tap(update)
        await self.forget.answer(query, chat_id)

    async def _on_group_tap(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        query, chat_id = _tap(update)
        verb, _sep, ident = (query.data or "").partition(":")
        await self._on_group(query, verb, int(ident), chat_id)

    async def _on_setting_tap(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        query, chat_id = _tap(update)
        verb, _sep, change_id = (query.data or "").partition(f":{SETTINGS_IDENT}:")
        await self._on_setting_change(query, verb, int(change_id), chat_id)

    async def _on_callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A review card's button (``verb:ID`` or ``verb:ID:CHANGE``), or one MAMA
        does not know."""
        query, chat_id = _tap(update)
        verb, _, ident = (query.data or "").partition(":")
        ident, _, change_id = ident.partition(":")  # a card for a proposed change names it
        if (
            not (ident.isascii() and ident.isdigit())
            or verb not in (*BUTTONS, "show")
            or (change_id and not (change_id.isascii() and change_id.isdigit()))
        ):
            await query.answer("I don't know that button.")
            return
        judgment_id = int(ident)
        card_id = query.message.message_id if query.message is not None else 0
        facts = replace(
            owner_facts(self.runtime.settings.owner_name),
            source_refs=(f"telegram:callback:{query.id}",),
            message_ref=f"telegram:{chat_id}:{card_id}",
        )
        if verb == "show":
            await query.answer()
            await self._show(judgment_id, facts)
            return
        fields: dict[str, Any] = {"id": judgment_id, "command_id": f"telegram:cb:{query.id}"}
        if change_id:
            fields["change_id"] = int(change_id)
        approving = verb in ("approve", "confirm")
        action = "review.approve" if approving else "review.reject"
        reason = DROP_REASON if verb == "drop" else REJECT_REASON
        try:
            decision = (
                parse_input(ApproveInput, **fields)
                if approving
                else parse_input(RejectInput, **fields, reason=reason)
            )
            receipt = await self.engine.mutate_async(decision, facts, Grant.owner())
        except MamaError as exc:
            log.info("%s of #%s refused: %s", action, judgment_id, exc.code)
            await query.answer(exc.message[:190], show_alert=True)
            return
        done = BUTTONS[verb][1]
        await query.answer(f"{done} #{judgment_id}.")
        record = await self._read(judgment_id, facts)
        body = card_text(record) if record else f"#{judgment_id}"
        receipt_line = f"{done} by you — now {receipt.status}, event #{receipt.event_id}."
        with contextlib.suppress(TelegramError):
            await query.edit_message_text(
                to_html(f"{body}\n\n**{receipt_line}**"), parse_mode=ParseMode.HTML
            )

    async def _on_setting_change(
        self, query: CallbackQuery, verb: str, change_id: int, chat_id: int
    ) -> None:
        """A settings card's button: apply the proposed change as the owner's own, or
        decline it (the settings stay as they are)."""
        card_id = query.message.message_id if query.message is not None else 0
        facts = replace(
            owner_facts(self.runtime.settings.owner_name),
            source_refs=(f"telegram:callback:{query.id}",),
            message_ref=f"telegram:{chat_id}:{card_id}",
        )
        fields: dict[str, Any] = {"change_id": change_id, "command_id": f"telegram:cb:{query.id}"}
        try:
            decision = (
                parse_input(ApproveInput, **fields)
                if verb == "approve"
                else parse_input(RejectInput, **fields, reason=REJECT_REASON)
            )
            receipt = await self.engine.mutate_async(decision, facts, Grant.owner())
        except MamaError as exc:
            log.info("%s of settings change %s refused: %s", verb, change_id, exc.code)
            await query.answer(exc.message[:190], show_alert=True)
            return
        done = BUTTONS[verb][1]
        await query.answer(f"{done} change {change_id}.")
        settings = await asyncio.to_thread(
            self.engine.read_as, OwnerSettingsResult, "owner.settings", {}, facts, Grant.owner()
        )
        line = f"{done} by you, event #{receipt.event_id}. {settings_line(settings)}"
        with contextlib.suppress(TelegramError):
            await query.edit_message_text(
                to_html(f"**Change {change_id} to your settings: {line}**"),
                parse_mode=ParseMode.HTML,
            )

    async def _on_group(self, query: CallbackQuery, verb: str, input_id: int, chat_id: int) -> None:
        """A group card's button: approve every proposal the turn made that still waits,
        or send each as its own card (Approve / Reject / Show) to decide one by one."""
        group = await self.runtime.run_db(proposal_group, self.runtime.db, input_id)
        if group is None or not group.ids:
            await query.answer("Nothing from that delivery is waiting any more.")
            return
        if verb == REVIEW_EACH:
            for judgment_id in group.ids:
                await self.runtime.run_db(self.runtime.journal.enqueue_proposal, judgment_id)
            self.runtime.wake_sender()
            await query.answer(f"Sending {len(group.ids)} cards.")
            return
        card_id = query.message.message_id if query.message is not None else 0
        facts = replace(
            owner_facts(self.runtime.settings.owner_name),
            source_refs=(f"telegram:callback:{query.id}",),
            message_ref=f"telegram:{chat_id}:{card_id}",
        )
        approved: list[int] = []
        for judgment_id in group.ids:
            decision = parse_input(
                ApproveInput, id=judgment_id, command_id=f"telegram:cb:{query.id}:{judgment_id}"
            )
            try:
                await self.engine.mutate_async(decision, facts, Grant.owner())
            except MamaError as exc:
                log.info("approve-all: #%s refused: %s", judgment_id, exc.code)
                continue
            approved.append(judgment_id)
        await query.answer(f"Approved {len(approved)} of {len(group.ids)}.")
        done = ", ".join(f"#{i}" for i in approved) or "none"
        with contextlib.suppress(TelegramError):
            await query.edit_message_text(
                to_html(f"**{group.origin}: approved by you — {done}.**"),
                parse_mode=ParseMode.HTML,
            )

    async def _approve(self, message: Message, argument: str) -> None:
        """``/approve ID`` approves proposal #ID (or the change waiting on it), like its
        card's button; ``/approve ID your words`` edits and approves it in one message:
        the owner's words replace the proposed text and the result is the owner's active
        record, its kind, scopes, terms and evidence kept (``edit_approval``, the save the
        review window's Edit & approve and ``mama approve --text`` make)."""
        ident, _, words = argument.strip().partition(" ")
        ident, words = ident.removeprefix("#"), words.strip()
        if not ident.isdigit():
            await self._quiet_reply(message, APPROVE_USAGE)
            return
        judgment_id = int(ident)
        where = f"telegram:{message.chat.id}:{message.message_id}"
        facts = replace(
            owner_facts(self.runtime.settings.owner_name), source_refs=(where,), message_ref=where
        )
        try:
            if words:
                found = await self.engine.dispatch_async(
                    "memory.read", {"id": judgment_id}, facts, Grant.owner()
                )
                edited = edited_save(found["record"], words).model_copy(
                    update={"command_id": where}
                )
                receipt = await self.engine.mutate_async(edited, facts, Grant.owner())
                done = f"Approved #{judgment_id} in your words as #{receipt.judgment_id}"
            else:
                decision = parse_input(ApproveInput, id=judgment_id, command_id=where)
                receipt = await self.engine.mutate_async(decision, facts, Grant.owner())
                done = f"Approved #{judgment_id}"
        except MamaError as exc:
            log.info("/approve of #%s refused: %s", judgment_id, exc.code)
            await self._quiet_reply(message, exc.message)
            return
        await self._quiet_reply(
            message, f"{done} — now {receipt.status}, event #{receipt.event_id}."
        )

    async def _work(self, message: Message) -> None:
        """The owner's open commitments, by due time (answered by the bot itself, with
        any backend: a read of the owner's own ledger needs no model)."""
        facts = replace(
            owner_facts(self.runtime.settings.owner_name),
            source_refs=(f"telegram:{message.chat.id}:{message.message_id}",),
        )
        try:
            found = await self.engine.dispatch_async(
                "commitment.list", {"limit": WORK_LIST_LIMIT + 1}, facts, Grant.owner()
            )
        except MamaError as exc:
            await self._quiet_reply(message, exc.message)
            return
        for chunk in split_html(to_html(work_text(found.get("commitments") or []))):
            with contextlib.suppress(TelegramError):
                await message.reply_text(chunk, parse_mode=ParseMode.HTML)

    async def _today(self, message: Message) -> None:
        """Today's meetings in the owner's zone, from the calendar's latest state
        (answered by the bot itself, like /work: no model needed)."""
        try:
            text = await self.runtime.run_db(self.runtime.briefs.today)
        except MamaError as exc:
            await self._quiet_reply(message, exc.message)
            return
        for chunk in split_html(to_html(text)):
            with contextlib.suppress(TelegramError):
                await message.reply_text(chunk, parse_mode=ParseMode.HTML)

    async def _show(self, judgment_id: int, facts: SessionFacts) -> None:
        record = await self._read(judgment_id, facts)
        text = record_text(record) if record else f"#{judgment_id} is not there any more."
        owner = self._owner
        if owner is None:
            return
        for chunk in split_html(to_html(text)):
            with contextlib.suppress(TelegramError):
                await self.app.bot.send_message(owner.chat_id, chunk, parse_mode=ParseMode.HTML)

    async def _read(self, judgment_id: int, facts: SessionFacts) -> dict[str, Any] | None:
        try:
            found = await self.engine.dispatch_async(
                "memory.read", {"id": judgment_id}, facts, Grant.owner()
            )
        except MamaError:
            return None
        return dict(found.get("record") or {})

    async def _quiet_reply(self, message: Message, text: str) -> None:
        with contextlib.suppress(TelegramError):
            await message.reply_text(text)

    def _ignore(self, chat_id: int | None, user_id: int | None, reason: str) -> None:
        log.warning("ignored a telegram update from chat %s user %s: %s", chat_id, user_id, reason)
        self.ignored.append(Ignored(chat_id, user_id, reason))

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram handler failed", exc_info=context.error)

    # --- the OwnerChannel -----------------------------------------------

    def ready(self) -> bool:
        return self._owner is not None and self._initialized

    def split(self, message: OutgoingMessage) -> list[Any]:
        owner = self._owner
        if owner is None:
            return []
        chunks = split_html(to_html(message.text))
        reply_to = message.reply_to.get("message_id")
        same_chat = message.reply_to.get("chat_id") == owner.chat_id
        parts = [
            TelegramPart(
                owner.chat_id,
                chunk,
                to_plain(chunk),
                review_id=message.review_id if i == len(chunks) - 1 else None,
                review_change_id=message.review_change_id if i == len(chunks) - 1 else None,
                review_kind=message.review_kind if i == len(chunks) - 1 else None,
                review_group=message.review_group if i == len(chunks) - 1 else None,
                reply_to_message_id=int(reply_to) if (i == 0 and reply_to and same_chat) else None,
            )
            for i, chunk in enumerate(chunks)
        ]
        return list(parts)

    async def send_part(self, part: Any) -> str:
        assert isinstance(part, TelegramPart)
        owner = await self._current_owner()
        if owner is None or owner.chat_id != part.chat_id:  # unpaired since it was split
            raise DeliveryRetry("the Telegram chat was unpaired; held until a chat is paired")
        try:
            try:
                sent = await self._send(part, html=True)
            except BadRequest as exc:
                if "parse" not in exc.message.lower() and "entit" not in exc.message.lower():
                    raise
                log.warning("Telegram refused our HTML (%s); sending plain text", exc.message)
                sent = await self._send(part, html=False)
        except RetryAfter as exc:
            raise DeliveryRetry(str(exc), after=_retry_after_seconds(exc)) from exc
        except TimedOut as exc:
            if isinstance(exc.__cause__, httpx.ReadTimeout):
                raise DeliveryUncertain(f"no answer in time: {exc}") from exc
            raise DeliveryRetry(f"timed out: {exc}") from exc
        except (Forbidden, ChatMigrated) as exc:
            raise DeliveryRefused(str(exc)) from exc
        except BadRequest as exc:
            raise DeliveryRefused(str(exc)) from exc
        except (NetworkError, InvalidToken, TelegramError) as exc:
            raise DeliveryRetry(str(exc)) from exc
        return f"telegram:{sent.chat_id}:{sent.message_id}"

    async def _send(self, part: TelegramPart, *, html: bool) -> Message:
        markup = None
        if part.review_group is not None:
            group = part.review_group
            markup = InlineKeyboardMarkup(
                [
                    [
                        InlineKeyboardButton("Approve all", callback_data=f"{APPROVE_ALL}:{group}"),
                        InlineKeyboardButton("Review", callback_data=f"{REVIEW_EACH}:{group}"),
                    ]
                ]
            )
        elif part.review_id is None and part.review_change_id is not None:
            cb = f"{SETTINGS_IDENT}:{part.review_change_id}"  # a settings change: no record
            markup = InlineKeyboardMarkup(
                [
                    [
                        InlineKeyboardButton(BUTTONS["approve"][0], callback_data=f"approve:{cb}"),
                        InlineKeyboardButton(BUTTONS["reject"][0], callback_data=f"reject:{cb}"),
                    ]
                ]
            )
        elif part.review_id is not None:
            jid = part.review_id
            change = "" if part.review_change_id is None else f":{part.review_change_id}"
            yes, no = ("approve", "reject")
            if part.review_kind == Kind.COMMITMENT and not change:
                yes, no = ("confirm", "drop")
            markup = InlineKeyboardMarkup(
                [
                    [
                        InlineKeyboardButton(BUTTONS[yes][0], callback_data=f"{yes}:{jid}{change}"),
                        InlineKeyboardButton(BUTTONS[no][0], callback_data=f"{no}:{jid}{change}"),
                        InlineKeyboardButton("Show", callback_data=f"show:{jid}"),
                    ]
                ]
            )
        reply = (
            ReplyParameters(message_id=part.reply_to_message_id, allow_sending_without_reply=True)
            if part.reply_to_message_id is not None
            else None
        )
        return await self.app.bot.send_message(
            chat_id=part.chat_id,
            text=part.html if html else part.plain,
            parse_mode=ParseMode.HTML if html else None,
            reply_markup=markup,
            reply_parameters=reply,
            link_preview_options=LinkPreviewOptions(is_disabled=True),
        )

    async def typing(self) -> None:
        owner = self._owner
        if owner is not None and self._initialized:
            with contextlib.suppress(TelegramError):
                await self.app.bot.send_chat_action(owner.chat_id, ChatAction.TYPING)


UNPAIRED_NOTICE = (
    "MAMA was unpaired from this chat on the owner's computer. This chat no longer "
    "reaches MAMA; to pair again, make a new code in the tray or with "
    "mama telegram pair-code."
)


async def notify_unpaired(bot: Bot, chat_id: int) -> bool:
    """Tell the old owner's chat that it was unpaired; False if Telegram did not take it."""
    try:
        await bot.send_message(chat_id, UNPAIRED_NOTICE)
    except TelegramError as exc:
        log.warning("could not tell chat %s that it was unpaired: %s", chat_id, exc)
        return False
    return True


def work_text(commitments: list[dict[str, Any]]) -> str:
    """The /work answer: open commitments by due time, overdue and waiting ones marked."""
    if not commitments:
        return (
            "No open commitments. When a message or mail shows that someone owes something, "
            "the agent records it here; you can also tell me."
        )
    shown = commitments[:WORK_LIST_LIMIT]
    lines = ["Open commitments, by due time:"]
    for c in shown:
        marks = []
        if c.get("overdue"):
            marks.append("OVERDUE")
        if c.get("status") == Status.PROPOSED:
            marks.append("waiting for you to confirm")
        mark = f" [{', '.join(marks)}]" if marks else ""
        lines.append(f"#{c['id']} {commitment_line(c.get('summary', ''), c)}{mark}")
    if len(commitments) > WORK_LIST_LIMIT:
        lines.append("…and more: `mama work list` shows them all.")
    return "\n".join(lines)


def _pair_answer(result: PairResult, *, private: bool, well_formed: bool) -> str | None:
    """What the bot says to a refused ``/pair``: nothing to strangers or groups; a hint
    to a private chat pairing an unpaired bot with a code of the right shape."""
    if result.outcome is PairOutcome.ALREADY:
        return "This chat is already paired with MAMA."
    if not private or not well_formed:
        return None
    if result.outcome is PairOutcome.WRONG:
        return "That pairing code is wrong or has expired."
    if result.outcome is PairOutcome.LOCKED and result.locked_until is not None:
        until = result.locked_until.strftime("%H:%M")
        return f"Too many wrong codes from this chat. Try again after {until} UTC."
    return None  # TAKEN: silence, so nobody learns that an owner is paired


def _retry_after_seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value: Any = exc.retry_after
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value)
