"""Owner-delivered evidence: content the owner forwarded or quoted is not the owner speaking.

The owner's chat carries the owner's own words, but also messages forwarded
from someone else and replies that quote someone else. Such an input is still
posted as an owner message (it is urgent, and the owner is waiting for an
answer), but its mailbox ``meta`` says it carries evidence: the agent reads
the outside text wrapped as untrusted, the turn runs as a non-owner turn (it
may only propose), and command mode never executes a command found in it.

The observation keeps all of the text (so one purge erases it): the owner's
own words first, then the outside content; ``meta`` keeps only how many
characters are the owner's, never text.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

EVIDENCE_KEY = "evidence"
OWN_CHARS_KEY = "own_chars"
SCOPES_KEY = "scopes"
"""In a source delta's ``meta``: the memory scopes its content belongs to (a
connector's own scope, e.g. ``channel:slack/#eng``); its turn works only there."""


class Delivered(StrEnum):
    """How outside content came in with an owner message."""

    FORWARDED = "forwarded"
    QUOTED = "quoted"


def evidence_text(own: str, content: str) -> str:
    """The observation's text: the owner's own words (if any), then the outside content."""
    return f"{own}\n\n{content}" if own else content


def evidence_meta(how: Delivered, own: str) -> dict[str, Any]:
    """The mailbox meta that marks an input as carrying evidence."""
    return {EVIDENCE_KEY: how.value, OWN_CHARS_KEY: len(own)}


def delivered_as(meta: dict[str, Any]) -> Delivered | None:
    """How the input's outside content came in, or None for the owner's own words."""
    value = meta.get(EVIDENCE_KEY)
    if value is None:
        return None
    try:
        return Delivered(str(value))
    except ValueError:  # an unknown marker is still not the owner speaking
        return Delivered.FORWARDED


def split_evidence(text: str, meta: dict[str, Any]) -> tuple[str, str]:
    """(the owner's own words, the outside content) of an evidence input's text."""
    own_chars = max(0, int(meta.get(OWN_CHARS_KEY) or 0))
    return text[:own_chars], text[own_chars:].lstrip("\n")


def content_scopes(meta: dict[str, Any]) -> frozenset[str]:
    """The scopes an input's outside content belongs to (empty: none named)."""
    named = meta.get(SCOPES_KEY)
    if not isinstance(named, list):
        return frozenset()
    return frozenset(str(s) for s in named if isinstance(s, str) and s)  # pyright: ignore[reportUnknownVariableType]
