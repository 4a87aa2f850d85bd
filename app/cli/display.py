"""Stored text made safe to print on a terminal.

Memories, reasons and names come from people, agents and chats; printed raw,
an escape sequence in them (ESC, CSI, OSC, any C0 or C1 control) would drive
the owner's terminal, and a bidi override would make a line read other than
it is. Every command prints stored text through ``terminal_text``, which shows
such characters as visible escapes (``\\x1b``, ``\\u202e``); ``--json`` output
goes through ``json_text``, which keeps it exact JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
"""C0 and C1 controls, DEL, soft hyphen, bidi marks, embeddings, overrides and
isolates, zero-width characters, line and paragraph separators, interlinear
annotation marks and lone surrogates."""

_JSON_UNSAFE = re.compile(
    "[\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(value: object) -> str:
    """``value`` as text with every control and invisible mark shown as an escape."""
    return _UNSAFE.sub(_escape, str(value))


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: Any) -> str:
    """``value`` as JSON; characters a terminal would act on are ``\\u`` escapes.

    ``json.dumps`` already escapes C0 controls; DEL, C1 controls and invisible
    marks are escaped here. They occur only inside JSON strings, where ``\\uXXXX``
    decodes to the same character, so the document means exactly the same.
    """
    return json_line_text(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))


def json_line_text(dumped: str) -> str:
    """A line of JSON made by ``json.dumps`` with the same escapes as ``json_text``."""
    return _JSON_UNSAFE.sub(_json_escape, dumped)
