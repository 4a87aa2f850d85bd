"""No secret reaches a log: every record is redacted when it is made, for every handler.

``install`` replaces the logging module's record factory, so a record of any
logger (ours, ``httpx``, ``httpcore``, ``telegram``, ``slack_sdk``, ``aiohttp``
…) is formatted once and redacted before any handler sees it: its message, its
exception text and its stack. The file handlers' formatter redacts the final
line again (``RedactingFormatter``), for a record made before ``install``.

What is redacted:

- the values of secret-looking parameters in URLs and forms (``key=``,
  ``token=``, ``access_token=``, ``password=``, ``secret=``, ``signature=`` …) and
  in ``key: value`` pairs (``"token": "…"``, ``Authorization: Bearer …``);
- a Telegram bot token in a Bot API path (``/bot<id>:<secret>/``), Slack tokens
  (``xox?-…``), ``Bearer``/``Basic`` credentials;
- every *live secret value* registered with ``register_secret`` wherever it
  appears, URL-encoded too: the connectors' secrets as they are read, the
  Telegram token, the store key, the agent bridge's token.
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
from typing import Any
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6
"""A shorter registered value is not replaced everywhere (it would mangle words)."""

_SECRET_NAMES = (
    r"(?:api[_-]?key|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth|"
    r"authorization|password|passwd|pwd|pass|secret|client[_-]?secret|signature|sig|"
    r"session|cookie|credentials?|private[_-]?key|x-api-key|x-auth-token)"
)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # ?token=… &key=… ;password=… in URLs and form bodies
    (re.compile(rf"(?i)([?&;]{_SECRET_NAMES}=)(?!\[redacted\])[^&;\s#'\"<>]+"), rf"\1{REDACTED}"),
    # Authorization: Bearer … / "token": "…" / password=… / 'secret': '…'
    (
        re.compile(
            rf"(?i)(\b{_SECRET_NAMES}\b['\"]?\s*[:=]\s*['\"]?)(?!\[redacted\])"
            r"(?:(?:bearer|basic|token|bot)\s+)?[^\s'\",;&}}\])]+"
        ),
        rf"\1{REDACTED}",
    ),
    # a Telegram bot token in a Bot API path: /bot123456:AA…/getUpdates, /file/bot…/
    (re.compile(r"(/bot)\d+:[A-Za-z0-9_-]+"), rf"\1{REDACTED}"),
    # a bare Telegram token (123456789:AA… 35 characters)
    (re.compile(r"\b\d{6,12}:[A-Za-z0-9_-]{30,}"), REDACTED),
    # Slack tokens
    (re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{6,}"), REDACTED),
    (re.compile(r"\bxapp-[A-Za-z0-9-]{6,}"), REDACTED),
    # credentials in a URL: scheme://user:password@host
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)[^\s@/]+@"), rf"\1{REDACTED}@"),
    # Bearer / Basic credentials anywhere
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
)


class _LiveSecrets:
    """The secret values this process holds (and their URL-encoded forms)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.values: set[str] = set()
        self.ordered: tuple[str, ...] = ()
        self.installed = False

    def add(self, value: str) -> None:
        forms = {value, quote(value, safe=""), quote_plus(value)}
        with self.lock:
            if forms <= self.values:
                return
            self.values.update(f for f in forms if len(f) >= MIN_SECRET_LENGTH)
            self.ordered = tuple(sorted(self.values, key=len, reverse=True))  # longest first


_live = _LiveSecrets()


def register_secret(value: str | None) -> None:
    """A secret this process holds: never write it to a log."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        _live.add(value)


def redact(text: str) -> str:
    """``text`` with every secret it shows replaced by ``[redacted]``."""
    if not text:
        return text
    for value in _live.ordered:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """Format the record's message and exception now, redacted; idempotent."""
    if getattr(record, "_mama_redacted", False):
        return record
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: keep what there is, redacted
        message = f"{record.msg} {record.args!r}"
    record.msg = redact(message)
    record.args = None
    if record.exc_info and not record.exc_text:
        record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    record._mama_redacted = True  # type: ignore[attr-defined]
    return record


class RedactingFormatter(logging.Formatter):
    """A formatter whose every line is redacted (the file handlers use it)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(redact_record(record)))


def install() -> None:
    """Redact every record of every logger from now on (idempotent)."""
    with _live.lock:
        if _live.installed:
            return
        _live.installed = True
    make = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return redact_record(make(*args, **kwargs))

    logging.setLogRecordFactory(factory)
