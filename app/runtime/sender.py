"""The sender: takes the journal's queue to the channel, part by part, in order.

Each part is recorded as sent before the next one leaves. A failure the
channel says surely did not deliver is retried with backoff (or after the wait
the channel asks for); a refusal is kept as failed; an uncertain part is never
sent again. Proposal cards are rendered when sent, from the record as it is
then: a proposal already decided (in the tray, say) is not shown any more.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from app.durable.desk import DESK_META_KEY, input_text
from app.durable.journal import Delivery, DeliveryJournal, DeliveryKind, DeliveryState
from app.durable.proposals import ProposalGroup, proposal_group, waiting_setting_change
from app.present.cards import card_text, group_card_text, setting_change_card_text
from app.runtime.channel import (
    DeliveryRefused,
    DeliveryRetry,
    DeliveryUncertain,
    OutgoingMessage,
    OwnerChannel,
)
from mama_core.memory.verbs import Verb, may
from mama_core.model import Status

log = logging.getLogger(__name__)

DESK_QUOTE_CHARS = 300
"""How much of a desk message a Telegram reply quotes."""

RunDb = Callable[..., Awaitable[Any]]
ReadJudgment = Callable[[int], Awaitable[dict[str, Any] | None]]


class Sender:
    """Sends what the journal holds, one delivery at a time."""

    def __init__(
        self,
        journal: DeliveryJournal,
        run_db: RunDb,
        read_judgment: ReadJudgment,
        retry_delays: tuple[float, ...],
    ) -> None:
        self.journal = journal
        self._db = run_db
        self._read_judgment = read_judgment
        self.retry_delays = retry_delays
        self.listeners: list[Callable[[int, DeliveryState], None]] = []
        """Called when a delivery settles or is put back (for the tray and tests)."""

    async def send_next(self, channel: OwnerChannel) -> bool:
        """Send the head of the queue if it is due; False when there was nothing to do."""
        delivery: Delivery | None = await self._db(self.journal.take_next)
        if delivery is None:
            return False
        message = await self._message(delivery)
        parts = channel.split(message) if message is not None else []
        for index in range(delivery.parts_sent, len(parts)):
            try:
                ref = await channel.send_part(parts[index])
            except DeliveryRetry as exc:
                delay = exc.after if exc.after is not None else self._backoff(delivery.attempts)
                log.info("delivery %s waits %.1fs: %s", delivery.id, delay, exc)
                await self._db(
                    self.journal.retry_later, delivery.id, str(exc), timedelta(seconds=delay)
                )
                self._settled(delivery.id, DeliveryState.QUEUED)
                return True
            except DeliveryRefused as exc:
                log.warning("delivery %s refused for good: %s", delivery.id, exc)
                await self._db(self.journal.give_up, delivery.id, str(exc))
                self._settled(delivery.id, DeliveryState.FAILED)
                return True
            except DeliveryUncertain as exc:
                log.warning("delivery %s part %s may have arrived: %s", delivery.id, index, exc)
                await self._db(self.journal.skip_uncertain_part, delivery.id, index, str(exc))
                continue
            except Exception as exc:  # a bug before the request left: keep it, retry later
                log.exception("delivery %s failed unexpectedly", delivery.id)
                await self._db(
                    self.journal.retry_later,
                    delivery.id,
                    f"internal error: {type(exc).__name__}",
                    timedelta(seconds=self._backoff(delivery.attempts)),
                )
                self._settled(delivery.id, DeliveryState.QUEUED)
                return True
            await self._db(self.journal.part_sent, delivery.id, index, ref)
        state = await self._db(self.journal.finish, delivery.id)
        self._settled(delivery.id, state)
        return True

    def _settled(self, delivery_id: int, state: DeliveryState) -> None:
        for listener in list(self.listeners):
            try:
                listener(delivery_id, state)
            except Exception:
                log.exception("a delivery listener failed")

    def _backoff(self, attempts: int) -> float:
        return self.retry_delays[min(max(attempts, 1), len(self.retry_delays)) - 1]

    async def _message(self, delivery: Delivery) -> OutgoingMessage | None:
        if delivery.kind is DeliveryKind.REPLY and delivery.input_meta.get(DESK_META_KEY):
            return await self._desk_reply(delivery)
        if delivery.kind is not DeliveryKind.PROPOSAL:
            return OutgoingMessage(delivery.text, reply_to=delivery.input_meta)
        if delivery.input_id is not None:
            return await self._group_message(delivery.input_id)
        if delivery.judgment_id is None:
            return await self._setting_change_message(delivery.key)
        record = await self._read_judgment(delivery.judgment_id)
        if record is None or not may(record, Verb.APPROVE):  # nothing left to decide
            log.info("proposal %s was decided before its card left", delivery.judgment_id)
            return None
        change = record.get("pending_change") if record.get("status") != Status.PROPOSED else None
        return OutgoingMessage(
            card_text(record),
            review_id=delivery.judgment_id,
            review_change_id=int(change["id"]) if change else None,
            review_kind=None if change else record.get("kind"),
        )

    async def _setting_change_message(self, key: str) -> OutgoingMessage | None:
        """The card of a change proposed to the owner's settings, if it still waits."""
        change = await self._db(waiting_setting_change, self.journal.db, key)
        if change is None:
            log.info("the settings change of card %s was decided before it left", key)
            return None
        return OutgoingMessage(
            setting_change_card_text(change.shown(for_owner=True)),
            review_change_id=change.id,
        )

    async def _desk_reply(self, delivery: Delivery) -> OutgoingMessage:
        """A reply to what the owner typed at the desk: the desk and Telegram are one
        conversation, so the chat shows the desk's words above the reply (left out
        once they are purged)."""
        assert delivery.input_id is not None
        asked = await self._db(input_text, self.journal.db, delivery.input_id)
        if asked is None:
            return OutgoingMessage(delivery.text)
        if len(asked) > DESK_QUOTE_CHARS:
            asked = asked[: DESK_QUOTE_CHARS - 1].rstrip() + "…"
        return OutgoingMessage(f"At the desk you wrote: “{asked}”\n\n{delivery.text}")

    async def _group_message(self, input_id: int) -> OutgoingMessage | None:
        """The one card for what a source-delta turn proposed, as it stands now."""
        group: ProposalGroup | None = await self._db(proposal_group, self.journal.db, input_id)
        if group is None or not group.ids:
            log.info("the proposals of input %s were decided before their card left", input_id)
            return None
        records = [r for r in [await self._read_judgment(j) for j in group.ids] if r]
        return OutgoingMessage(group_card_text(group.origin, records), review_group=input_id)
