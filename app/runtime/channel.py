"""How the runtime reaches the owner: a channel (Telegram) it sends messages through.

The runtime decides *what* to say and keeps the journal; the channel decides
*how* it looks (formatting, splitting, buttons) and reports how a send failed,
because only it knows whether a failed request may have been delivered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class OutgoingMessage:
    """A message for the owner. ``review_id`` asks for Approve / Reject / Show
    buttons for that proposal (``review_change_id``: for the change proposed to that
    record, so a stale card cannot decide a newer change); ``reply_to`` is the
    input's transport metadata. ``review_kind`` is the proposal's kind: a proposed
    commitment is confirmed or dropped, so its buttons say so."""

    text: str
    review_id: int | None = None
    reply_to: dict[str, Any] = field(default_factory=dict)
    review_change_id: int | None = None
    review_kind: str | None = None
    review_group: int | None = None
    """The source-delta input whose proposals this one card shows (Approve all / Review)."""


class DeliveryError(Exception):
    """A send failed. Subclasses say what the journal must do about it."""


class DeliveryRetry(DeliveryError):
    """Surely not delivered (no connection, rate limited): send again later.

    ``after`` is the wait the channel asks for (e.g. Telegram's retry_after),
    None to use the runtime's backoff.
    """

    def __init__(self, message: str, after: float | None = None) -> None:
        super().__init__(message)
        self.after = after


class DeliveryRefused(DeliveryError):
    """Refused for good (e.g. the bot was blocked): keep it as failed."""


class DeliveryUncertain(DeliveryError):
    """It may have arrived (a read timeout): never send it again."""


class OwnerChannel(Protocol):
    """Where messages for the owner go."""

    def ready(self) -> bool:
        """Whether messages can be sent now (e.g. an owner is paired)."""
        ...

    def split(self, message: OutgoingMessage) -> list[Any]:
        """The message as the channel's parts, in order (deterministic)."""
        ...

    async def send_part(self, part: Any) -> str:
        """Send one part; return a reference to it. Raises ``DeliveryError``."""
        ...

    async def typing(self) -> None:
        """Show that the agent is working (best effort)."""
        ...
