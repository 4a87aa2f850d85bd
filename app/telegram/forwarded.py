"""Which Telegram messages carry someone else's words: forwards and quoting replies.

A message with a forward origin is someone else's message, whatever it says.
A reply carries someone else's words when it quotes a message from another
chat (``external_reply``), or replies to (or quotes) a message that was itself
forwarded or written by someone other than the owner and the bot. A reply to
the owner's own message or to the bot's is an ordinary owner message.
"""

from __future__ import annotations

from dataclasses import dataclass

from telegram import (
    Chat,
    Message,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    User,
)

from app.durable.evidence import Delivered


@dataclass(frozen=True)
class OutsideContent:
    """Someone else's words in an owner's message, and the owner's own words with them."""

    how: Delivered
    origin: str
    """Who the outside words are from, as Telegram says (for the agent; may be empty)."""
    own: str
    content: str


def outside_content(message: Message, owner_id: int, bot_id: int) -> OutsideContent | None:
    """The outside content ``message`` carries, or None when it is only the owner's words."""
    text = message.text or message.caption or ""
    if message.forward_origin is not None:
        return OutsideContent(Delivered.FORWARDED, origin_name(message.forward_origin), "", text)
    quote = message.quote.text if message.quote is not None else ""
    external = message.external_reply
    if external is not None:
        content = quote or "(a message from another chat, without text)"
        return OutsideContent(Delivered.QUOTED, origin_name(external.origin), text, content)
    replied = message.reply_to_message
    if replied is None:
        return None
    author = replied.from_user.id if replied.from_user is not None else None
    if replied.forward_origin is None and author in (owner_id, bot_id):
        return None
    origin = (
        origin_name(replied.forward_origin)
        if replied.forward_origin is not None
        else _user_name(replied.from_user)
    )
    content = quote or replied.text or replied.caption or "(a message without text)"
    return OutsideContent(Delivered.QUOTED, origin, text, content)


def origin_name(origin: MessageOrigin) -> str:
    """A short name for where a forwarded or quoted message came from."""
    if isinstance(origin, MessageOriginUser):
        return _user_name(origin.sender_user)
    if isinstance(origin, MessageOriginHiddenUser):
        return origin.sender_user_name
    if isinstance(origin, MessageOriginChat):
        return _chat_name(origin.sender_chat)
    if isinstance(origin, MessageOriginChannel):
        return _chat_name(origin.chat)
    return ""


def _user_name(user: User | None) -> str:
    if user is None:
        return ""
    return f"{user.full_name} (@{user.username})" if user.username else user.full_name


def _chat_name(chat: Chat) -> str:
    name = chat.title or chat.full_name or ""
    return f"{name} (@{chat.username})" if chat.username else name
