"""Which reads put words the owner did not write into a turn (taint, not trust).

A turn is tainted once it carried or read outside words: a forwarded or quoted
message, a source digest (the host knows those when the turn starts), or a tool
read whose result holds them — an observation (a connector item, a mail, a
message), or a record saved from outside content (``source_derived``), or one
still waiting for the owner (``proposed``: no one has believed it yet). After
that, whatever the agent would change that is the owner's (settings,
commitments, the owner's records) needs the owner's approval first, and what it
saves lands ``proposed``: the content may be what steers it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OUTSIDE_READS: frozenset[str] = frozenset({"observation.list", "observation.read", "memory.quotes"})
"""Reads that return observations: words from outside, whatever they say."""

OUTSIDE_PARTS: dict[str, tuple[str, ...]] = {"person.about": ("messages", "meetings")}
"""Reads whose named parts, when not empty, hold observations (a person's messages,
the calendar events they attend): outside words, as an ``observation.read`` is."""

_OUTSIDE_INVOLVEMENT = "source_derived"
_UNBELIEVED_STATUS = "proposed"


def carries_outside_words(action: str, result: Mapping[str, Any]) -> bool:
    """Whether the result of read ``action`` puts outside words into the turn."""
    if action in OUTSIDE_READS:
        return True
    if any(_not_empty(result.get(part)) for part in OUTSIDE_PARTS.get(action, ())):
        return True
    return _holds_claim(result)


def _not_empty(value: object) -> bool:
    """A part with at least one item (a dict of lists counts its lists' items)."""
    if isinstance(value, Mapping):
        parts: Mapping[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return any(_not_empty(v) for v in parts.values())  # pyright: ignore[reportUnknownArgumentType]
    return bool(value)


def _holds_claim(value: object) -> bool:
    if isinstance(value, Mapping):
        record: Mapping[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if record.get("involvement") == _OUTSIDE_INVOLVEMENT:
            return True
        if record.get("status") == _UNBELIEVED_STATUS and "summary" in record:
            return True
        return any(_holds_claim(v) for v in record.values())  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, list | tuple):
        items: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return any(_holds_claim(v) for v in items)
    return False


def origin_of_read(action: str, result: Mapping[str, Any]) -> str:
    """Where the outside words a read brought in came from, for a person: the first
    observation's channel and source (``#ops (slack:T1)``), or the read itself."""
    found = _first_observation(result)
    if found is not None:
        channel, source = found.get("channel"), found.get("source")
        if channel:
            return f"{channel} ({source})" if source else str(channel)
        if source:
            return str(source)
    return f"outside content read with {action}"


def _first_observation(value: object) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        record: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if "external_id" in record and "source" in record:
            return record
        for inner in record.values():
            found = _first_observation(inner)
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        items: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        for inner in items:
            found = _first_observation(inner)
            if found is not None:
                return found
    return None
