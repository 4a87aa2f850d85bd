"""Slack's message markup made readable for a person (and for the agent that reads it).

Slack sends text with its own escapes: ``<@U123>`` for a mention, ``<#C1|name>``
for a channel, ``<https://x|label>`` for a link, ``<!here>`` for a broadcast, and
only ``&amp; &lt; &gt;`` HTML-escaped. This renders them as the Slack client shows
them (``@Ana``, ``#general``, ``label (https://x)``) and caps the length, so an
observation reads like the message the owner saw.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

TEXT_CAP = 20_000
"""The most characters of one message kept; the rest is cut with a marker."""

_ANGLE = re.compile(r"<([^<>\n]*)>")
_SPECIAL = {"here": "@here", "channel": "@channel", "everyone": "@everyone"}


def render(
    text: str,
    user_name: Callable[[str], str],
    channel_names: Mapping[str, str],
    cap: int = TEXT_CAP,
) -> str:
    """Return ``text`` with Slack markup rendered and at most ``cap`` characters.

    ``user_name`` maps a user id to the name to show (already cached by the caller);
    ``channel_names`` maps known channel ids to names without ``#``.
    """

    def one(match: re.Match[str]) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        if target.startswith("@"):
            return "@" + (label or user_name(target[1:]))
        if target.startswith("#"):
            channel_id = target[1:]
            return "#" + (label or channel_names.get(channel_id, channel_id))
        if target.startswith("!"):
            return _special(target[1:], label)
        if not target:
            return match.group(0)
        shown = target.removeprefix("mailto:")
        if not label or label in (target, shown):
            return _unescape(shown)
        return f"{_unescape(label)} ({_unescape(shown)})"

    rendered = _unescape_outside(_ANGLE, text, one)
    return cap_text(rendered, cap)


def mentioned_users(text: str) -> list[str]:
    """User ids mentioned without a label (``<@U123>``): their names must be looked up."""
    ids: list[str] = []
    for match in _ANGLE.finditer(text):
        target, _, label = match.group(1).partition("|")
        if target.startswith("@") and not label and target[1:] not in ids:
            ids.append(target[1:])
    return ids


def cap_text(text: str, cap: int = TEXT_CAP) -> str:
    """``text`` cut to ``cap`` characters with a marker saying how much was left out."""
    if len(text) <= cap:
        return text
    return text[:cap] + f" … [cut: {len(text) - cap} more characters]"


def _special(command: str, label: str) -> str:
    name = command.split("^", 1)[0]
    if name in _SPECIAL:
        return _SPECIAL[name]
    if label:  # <!subteam^S1|@team>, <!date^1700000000^{date}|Nov 14>
        return _unescape(label)
    return "@" + name


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _unescape_outside(
    pattern: re.Pattern[str], text: str, replace: Callable[[re.Match[str]], str]
) -> str:
    """Render each markup span with ``replace`` and unescape the text between them once.

    Unescaping after rendering would turn an escaped ``&lt;@U1&gt;`` the person typed
    into a mention; doing it piecewise keeps what they typed as they typed it.
    """
    parts: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        parts.append(_unescape(text[last : match.start()]))
        parts.append(replace(match))
        last = match.end()
    parts.append(_unescape(text[last:]))
    return "".join(parts)
