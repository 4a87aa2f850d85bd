"""Turn fetched mail into readable text with the standard library's ``email`` package.

Everything here is pure (bytes in, text out) so it is tested without a server. Broken
mail never raises: a wrong or unknown charset, invalid UTF-8, raw 8-bit headers and
truncated base64 all come out as readable text (U+FFFD where a byte made no sense).
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.header import decode_header, make_header
from email.message import Message
from email.utils import decode_rfc2231, getaddresses, parsedate_to_datetime
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote

# compat32, not policy.default: measured ten times faster on ordinary mail (policy.default
# re-parses every header through the header registry on each access, ~100 messages/s),
# and the pieces we need are the same stdlib functions: decode_header/make_header for
# RFC 2047, getaddresses, parsedate_to_datetime, get_filename (RFC 2231), get_payload.
_POLICY = email.policy.compat32


@dataclass(frozen=True)
class Attachment:
    """A part MAMA lists but never keeps: its name and (decoded) size in bytes."""

    name: str
    size: int

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size}


@dataclass(frozen=True)
class Envelope:
    """The header fields an item needs, already cleaned to readable ``str``."""

    sender: str
    to: str
    cc: str
    subject: str
    date: datetime | None
    date_text: str
    message_id: str


@dataclass
class Body:
    """The readable body of a message and what it carried."""

    text: str = ""
    attachments: list[Attachment] = field(default_factory=list)


def _has_surrogates(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def clean(text: str) -> str:
    """Make a header or body string safe to store: surrogate-escaped bytes decoded."""
    if not _has_surrogates(text):
        return text
    raw = text.encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", "replace")


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode a body with its declared charset, falling back to UTF-8, then cp1252.

    A wrong declaration (latin-1 bytes labelled utf-8) is common; cp1252 reads those
    bytes as the sender most likely meant them, and ``replace`` keeps anything else.
    """
    for candidate in (charset, "utf-8"):
        if not candidate:
            continue
        try:
            return data.decode(candidate)
        except (LookupError, ValueError):  # unknown or malformed name, or undecodable
            continue
    return data.decode("cp1252", "replace")


def parse_headers(raw_header: bytes) -> Envelope:
    """Read From/To/Cc/Subject/Date/Message-ID from a header block."""
    return envelope(email.message_from_bytes(raw_header, policy=_POLICY))


def envelope(msg: Message) -> Envelope:
    """The header fields of ``msg``, each read so that a malformed one cannot raise."""
    raw = _raw_headers(msg)
    date_text = _decoded(raw.get("date", ""))
    date: datetime | None = None
    if date_text:
        try:
            date = parsedate_to_datetime(date_text)
        except (TypeError, ValueError, IndexError):
            date = None
        if date is not None and date.tzinfo is None:
            date = date.replace(tzinfo=UTC)
    return Envelope(
        sender=_addresses(raw.get("from", "")),
        to=_addresses(raw.get("to", "")),
        cc=_addresses(raw.get("cc", "")),
        subject=_decoded(raw.get("subject", "")),
        date=date,
        date_text=date_text,
        message_id=_decoded(raw.get("message-id", "")).strip(),
    )


def _raw_headers(msg: Message) -> dict[str, str]:
    """The first value of each header as written (8-bit bytes surrogate-escaped)."""
    found: dict[str, str] = {}
    for key, value in msg.raw_items():
        found.setdefault(key.lower(), value if isinstance(value, str) else str(value))
    return found


def _decoded(value: str) -> str:
    """RFC 2047 encoded-words decoded; raw 8-bit text guessed; one line."""
    text = value
    if "=?" in value:
        try:
            text = str(make_header(decode_header(value)))
        except Exception:  # a malformed encoded-word or unknown charset stays as written
            text = value
    return clean(" ".join(text.split()))


def _addresses(value: str) -> str:
    """``Name <addr>, ...``; the header's text when it does not parse as addresses."""
    if not value.strip():
        return ""
    pairs = [(_decoded(n), _decoded(a)) for n, a in getaddresses([value]) if a]
    if not pairs:
        return _decoded(value)
    return ", ".join(f"{n} <{a}>" if n else a for n, a in pairs)


def parse_message(raw: bytes) -> tuple[Envelope, Body]:
    """Parse a whole message: its envelope, its best text part, its attachments."""
    msg = email.message_from_bytes(raw, policy=_POLICY)
    body = Body()
    plain: str | None = None
    html: str | None = None
    for part in msg.walk():
        if part.is_multipart():
            continue
        name = _part_filename(part)
        ctype = part.get_content_type()
        disposition = (part.get_content_disposition() or "").lower()
        if disposition == "attachment" or name or not ctype.startswith("text/"):
            payload = part.get_payload(decode=True)
            size = len(payload) if isinstance(payload, bytes) else 0
            body.attachments.append(Attachment(name or f"(unnamed {ctype})", size))
            continue
        if ctype == "text/plain" and plain is None:
            plain = _part_text(part)
        elif ctype == "text/html" and html is None:
            html = _part_text(part)
    if plain is not None and plain.strip():
        body.text = plain
    elif html is not None:
        body.text = html_to_text(html)
    return envelope(msg), body


def _part_filename(part: Message) -> str:
    try:
        name = part.get_filename()
    except Exception:
        name = None
    return clean(str(name)) if name else ""


def _part_text(part: Message) -> str:
    payload = part.get_payload(decode=True)
    data = payload if isinstance(payload, bytes) else b""
    return decode_bytes(data, part.get_content_charset())


def part_text(mime_header: bytes, body: bytes) -> str:
    """Decode one fetched part from its MIME header and (possibly truncated) body."""
    msg = email.message_from_bytes(mime_header.rstrip(b"\r\n") + b"\r\n\r\n", policy=_POLICY)
    encoding = str(msg.get("Content-Transfer-Encoding", "")).strip().lower()
    if encoding == "base64":
        body = _whole_base64(body)
    msg.set_payload(body.decode("ascii", "surrogateescape"))
    text = _part_text(msg)
    return html_to_text(text) if msg.get_content_type() == "text/html" else text


def _whole_base64(body: bytes) -> bytes:
    """A partial fetch may end mid-quantum: keep only complete 4-character groups."""
    compact = re.sub(rb"[^A-Za-z0-9+/=]", b"", body)
    return compact[: len(compact) - len(compact) % 4]


# --- BODYSTRUCTURE (for messages too large to fetch whole) ---------------------------


@dataclass(frozen=True)
class Structure:
    """Where a large message's text is, and what else it carries (from BODYSTRUCTURE)."""

    text_section: str | None
    """IMAP section of the text/plain part (``TEXT`` for a single-part message)."""
    html_section: str | None
    attachments: tuple[Attachment, ...]


def read_structure(bs: Any) -> Structure:
    """Walk an imapclient BODYSTRUCTURE into text sections and listed attachments."""
    found: dict[str, str] = {}
    attachments: list[Attachment] = []

    def leaf(part: Sequence[Any], section: str) -> None:
        ctype = f"{_s(part[0]).lower()}/{_s(part[1]).lower()}"
        params = _params(part[2])
        encoding = _s(part[5]).lower()
        size = int(part[6] or 0)
        disposition = _leaf_disposition(part, ctype)
        disp_kind = _s(disposition[0]).lower() if disposition else ""
        disp_params = _params(disposition[1]) if disposition and len(disposition) > 1 else {}
        name = disp_params.get("filename") or params.get("name") or ""
        if disp_kind == "attachment" or name or not ctype.startswith("text/"):
            decoded = size * 57 // 78 if encoding == "base64" else size
            attachments.append(Attachment(name or f"(unnamed {ctype})", decoded))
        elif ctype in ("text/plain", "text/html") and ctype not in found:
            found[ctype] = section

    def walk(part: Any, section: str) -> None:
        if getattr(part, "is_multipart", False):
            for index, child in enumerate(part[0], start=1):
                walk(child, f"{section}.{index}" if section else str(index))
        else:
            leaf(part, section or "TEXT")

    walk(bs, "")
    return Structure(found.get("text/plain"), found.get("text/html"), tuple(attachments))


def _leaf_disposition(part: Sequence[Any], ctype: str) -> Any:
    """The disposition sits after type-specific fields (RFC 3501 body-ext-1part)."""
    index = {"message/rfc822": 11}.get(ctype, 9 if ctype.startswith("text/") else 8)
    value = part[index] if len(part) > index else None
    return value if isinstance(value, tuple) and value else None


def _s(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def _rfc2231(text: str) -> str:
    """``utf-8''r%C3%A9sum%C3%A9.pdf`` -> ``résumé.pdf`` (an unknown charset read as UTF-8)."""
    parts = decode_rfc2231(text)
    if len(parts) != 3:
        return text
    charset, _, encoded = parts
    try:
        return unquote(encoded, encoding=charset or "utf-8", errors="replace")
    except LookupError:
        return unquote(encoded, errors="replace")


def _params(value: Any) -> dict[str, str]:
    """Body parameters as text, RFC 2231 (``filename*``) and encoded-words decoded."""
    if not isinstance(value, tuple):
        return {}
    out: dict[str, str] = {}
    items = list(value)
    for key, raw in zip(items[::2], items[1::2], strict=False):
        name = _s(key).lower()
        text = _s(raw)
        if name.endswith("*"):
            name = name[:-1]
            text = _rfc2231(text)
        elif "=?" in text:
            with contextlib.suppress(Exception):  # a malformed encoded-word stays as written
                text = str(make_header(decode_header(text)))
        out[name] = clean(text)
    return out


# --- HTML -> text ---------------------------------------------------------------------

_BLOCK = frozenset(
    {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol"}
    | {"blockquote", "pre", "hr", "section", "article", "header", "footer", "title"}
)


class _TextExtractor(HTMLParser):
    """Visible text of an HTML body: script/style dropped, link text kept, blocks as lines."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head"):
            self._hidden += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head"):
            self._hidden = max(0, self._hidden - 1)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Readable text from HTML, whitespace collapsed (one blank line at most)."""
    parser = _TextExtractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; this guards the rare assertion it raises
        return " ".join(re.sub(r"<[^>]*>", " ", html).split())
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
