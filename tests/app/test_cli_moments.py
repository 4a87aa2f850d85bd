"""WHEN for ``mama timeline``: ISO dates and times (a time without an offset in the
zone given), and the few relative words; anything else is ``invalid_input`` naming
the option."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from app.cli.moments import parse_moment
from mama_core.errors import InvalidInputError

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 2, 4, 30, tzinfo=UTC)  # 05:30 in Berlin


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        ("today", datetime(2026, 12, 1, 23, 0, tzinfo=UTC)),  # Berlin's midnight
        (" Yesterday ", datetime(2026, 11, 30, 23, 0, tzinfo=UTC)),
        ("3 days ago", datetime(2026, 11, 29, 4, 30, tzinfo=UTC)),
        ("2h ago", datetime(2026, 12, 2, 2, 30, tzinfo=UTC)),
        ("1 week ago", datetime(2026, 11, 25, 4, 30, tzinfo=UTC)),
        ("2026-11-01", datetime(2026, 10, 31, 23, 0, tzinfo=UTC)),
        ("2026-07-01T09:00", datetime(2026, 7, 1, 7, 0, tzinfo=UTC)),  # summer time
        ("2026-07-01T09:00+00:00", datetime(2026, 7, 1, 9, 0, tzinfo=UTC)),
        ("2026-07-01T09:00Z", datetime(2026, 7, 1, 9, 0, tzinfo=UTC)),
    ],
)
def test_when_forms(text: str, expected: datetime) -> None:
    assert parse_moment(text, "--from", BERLIN, NOW) == expected


def test_a_time_without_offset_follows_the_zone_given() -> None:
    assert parse_moment("2026-11-01", "--from", ZoneInfo("UTC"), NOW) == datetime(
        2026, 11, 1, tzinfo=UTC
    )


@pytest.mark.parametrize("text", ["garbage", "none", "3 fortnights ago", "next friday", ""])
def test_anything_else_is_invalid_input_naming_the_option(text: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        parse_moment(text, "--valid-at", BERLIN, NOW)
    assert raised.value.message.startswith("--valid-at must be an ISO date or time")
    assert raised.value.details["fields"] == ["valid_at"]
