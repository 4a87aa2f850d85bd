"""Timestamps as the store writes them: UTC, ISO 8601, fixed width.

A fixed width (microseconds, ``Z``) makes text order equal time order, so SQL
can compare times as strings (cheap, and exact to the microsecond like the
vector cache's integers). Every layer that stamps or compares a time uses this
one format.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def now() -> datetime:
    """The current instant, in UTC."""
    return datetime.now(UTC)


def to_utc(moment: datetime | str) -> datetime:
    """``moment`` in UTC; a naive datetime is taken to be UTC already, a string is
    read as ISO 8601."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment.strip())
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def iso(moment: datetime | str) -> str:
    """The store's text form of ``moment``, ``YYYY-MM-DDTHH:MM:SS.ffffffZ``."""
    m = to_utc(moment)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T"
        f"{m.hour:02d}:{m.minute:02d}:{m.second:02d}.{m.microsecond:06d}Z"
    )


def parse(text: str) -> datetime:
    """A stored timestamp back to an aware datetime."""
    return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)


def after(text: str) -> str:
    """The instant one microsecond after a stored timestamp."""
    return iso(parse(text) + timedelta(microseconds=1))


def to_epoch_us(moment: datetime | str) -> int:
    """Microseconds since the Unix epoch, the vector cache's unit of validity time."""
    delta = to_utc(moment) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
