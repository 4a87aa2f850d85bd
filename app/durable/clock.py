"""The runtime's notion of now, injectable so tests move time by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

from mama_core import clock as store_clock


class Clock(Protocol):
    """Something that says what time it is (UTC, aware)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


def stamp(moment: datetime) -> str:
    """The store's fixed-width text form, so SQL compares times as strings."""
    return store_clock.iso(moment)


def unstamp(text: str) -> datetime:
    return store_clock.parse(text)
