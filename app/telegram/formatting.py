"""Agent text (light Markdown) to Telegram HTML, split under the message limit
without breaking formatting.

Telegram's HTML mode knows ``b i u s code pre a blockquote``; everything else
is escaped. ``split_html`` cuts at paragraph breaks, then line breaks, then
spaces, never inside a tag or an entity, and closes the tags open at a cut
and reopens them at the start of the next part, so each part is valid on its
own. Lengths are counted in UTF-16 code units with the tags included, which
is never less than what Telegram counts.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

TELEGRAM_LIMIT = 4096

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)\n(.*?)(?:\n)?```", re.DOTALL)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", re.DOTALL)
_ITALIC = re.compile(r"(?<![\w*])[*_](?=\S)([^*_\n]+?)(?<=\S)[*_](?![\w*])")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_TOKEN = re.compile(r"<[^>]+>|&[#A-Za-z0-9]+;|[^<&]+|[<&]")
_TAG = re.compile(r"<(/?)([a-z]+)[^>]*>")


def to_html(text: str) -> str:
    """Markdown-ish agent text as Telegram HTML (all other text escaped)."""
    out: list[str] = []
    pos = 0
    for match in _FENCE.finditer(text):
        out.append(_inline(text[pos : match.start()]))
        lang, body = match.group(1), html.escape(match.group(2), quote=False)
        attr = f' class="language-{lang}"' if lang else ""
        out.append(f"<pre><code{attr}>{body}</code></pre>")
        pos = match.end()
    out.append(_inline(text[pos:]))
    return "".join(out)


def _inline(text: str) -> str:
    """Inline Markdown in a stretch outside code blocks."""
    pieces: list[str] = []
    pos = 0
    for match in _INLINE_CODE.finditer(text):
        pieces.append(_emphasis(text[pos : match.start()]))
        pieces.append(f"<code>{html.escape(match.group(1), quote=False)}</code>")
        pos = match.end()
    pieces.append(_emphasis(text[pos:]))
    return "".join(pieces)


def _emphasis(text: str) -> str:
    escaped = html.escape(text, quote=False)
    escaped = _LINK.sub(
        lambda m: f'<a href="{html.escape(html.unescape(m.group(2)))}">{m.group(1)}</a>', escaped
    )
    escaped = _BOLD.sub(r"<b>\1</b>", escaped)
    return _ITALIC.sub(r"<i>\1</i>", escaped)


def to_plain(html_text: str) -> str:
    """The visible text of our HTML (the fallback if Telegram refuses the markup)."""
    return html.unescape(re.sub(r"<[^>]+>", "", html_text))


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class _Open:
    name: str
    tag: str


def split_html(text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """``text`` (our HTML) in parts of at most ``limit`` units, each well-formed."""
    if utf16_len(text) <= limit:
        return [text] if text.strip() else []
    parts: list[str] = []
    stack: list[_Open] = []
    current = ""

    def closing() -> str:
        return "".join(f"</{o.name}>" for o in reversed(stack))

    def opening() -> str:
        return "".join(o.tag for o in stack)

    def flush() -> None:
        nonlocal current
        body = current + closing()
        if to_plain(body).strip():
            parts.append(body)
        current = opening()

    for token in _TOKEN.findall(text):
        tag = _TAG.fullmatch(token)
        if tag:
            name = tag.group(2)
            if tag.group(1):  # a closing tag
                while stack:
                    if stack.pop().name == name:
                        break
                current += token
            else:
                if utf16_len(current + token + closing()) + len(f"</{name}>") > limit:
                    flush()
                stack.append(_Open(name, token))
                current += token
            continue
        if token.startswith("&") or len(token) == 1:
            if utf16_len(current + token + closing()) > limit:
                flush()
            current += token
            continue
        rest = token
        while rest:
            room = limit - utf16_len(current + closing())
            if utf16_len(rest) <= room:
                current += rest
                break
            cut = _cut_point(rest, room)
            if cut == 0:
                if to_plain(current).strip():
                    flush()
                    continue
                cut = _hard_cut(rest, max(room, 1))
            current += rest[:cut]
            rest = rest[cut:]
            flush()
    if to_plain(current).strip():
        parts.append(current + closing())
    return parts


def _cut_point(text: str, room: int) -> int:
    """Where to cut ``text`` within ``room`` units: after a paragraph break, a
    line break or a space, preferring one late in the window; 0 if none fits."""
    window = _prefix_within(text, room)
    for sep in ("\n\n", "\n", " "):  # a break in the second half of the window
        at = window.rfind(sep)
        if at >= len(window) // 2:
            return at + len(sep)
    for sep in ("\n", " "):  # else any break at all
        at = window.rfind(sep)
        if at > 0:
            return at + len(sep)
    return 0


def _hard_cut(text: str, room: int) -> int:
    return max(1, len(_prefix_within(text, room)))


def _prefix_within(text: str, room: int) -> str:
    """The longest prefix of ``text`` that is at most ``room`` UTF-16 units."""
    if utf16_len(text) <= room:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if utf16_len(text[:mid]) <= room:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]
