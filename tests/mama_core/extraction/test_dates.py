"""Due dates read by the rule table, resolved against the message's time in the owner's
zone (``mama_core.extraction.dates``)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from mama_core.extraction.dates import find_due

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
WEDNESDAY = datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN)
FRIDAY = datetime(2026, 12, 4, 16, 30, tzinfo=BERLIN)
SATURDAY = datetime(2026, 12, 5, 11, 0, tzinfo=BERLIN)


def due(text: str, lang: str, at: datetime = WEDNESDAY, zone: ZoneInfo = BERLIN) -> str | None:
    hit = find_due(text, lang, at, zone)
    return None if hit is None else hit.due.strftime("%a %Y-%m-%d %H:%M")


@pytest.mark.parametrize(
    ("text", "lang", "at", "expected"),
    [
        ("by Friday", "en", WEDNESDAY, "Fri 2026-12-04 17:00"),
        ("by Friday", "en", FRIDAY, "Fri 2026-12-11 17:00"),  # said on a Friday: next week's
        ("next Friday", "en", WEDNESDAY, "Fri 2026-12-11 17:00"),
        ("this Friday", "en", SATURDAY, "Fri 2026-12-11 17:00"),
        ("tomorrow morning", "en", WEDNESDAY, "Thu 2026-12-03 09:00"),
        ("the day after tomorrow", "en", WEDNESDAY, "Fri 2026-12-04 17:00"),
        ("on Monday at 10am", "en", FRIDAY, "Mon 2026-12-07 10:00"),
        ("by end of day", "en", WEDNESDAY, "Wed 2026-12-02 17:00"),
        ("next week", "en", WEDNESDAY, "Fri 2026-12-11 17:00"),
        ("by the end of the month", "en", WEDNESDAY, "Thu 2026-12-31 17:00"),
        ("in two days", "en", WEDNESDAY, "Fri 2026-12-04 17:00"),
        ("on March 3", "en", WEDNESDAY, "Wed 2027-03-03 17:00"),  # passed this year: next
        ("bis Montag", "de", WEDNESDAY, "Mon 2026-12-07 17:00"),
        ("übermorgen", "de", WEDNESDAY, "Fri 2026-12-04 17:00"),
        ("morgen früh", "de", WEDNESDAY, "Thu 2026-12-03 09:00"),
        ("am 10. Dezember um 14:30 Uhr", "de", FRIDAY, "Thu 2026-12-10 14:30"),
        ("bis 5.1.", "de", WEDNESDAY, "Tue 2027-01-05 17:00"),
        ("demain", "fr", WEDNESDAY, "Thu 2026-12-03 17:00"),
        ("lundi à 9h", "fr", FRIDAY, "Mon 2026-12-07 09:00"),
        ("d'ici la fin de la semaine", "fr", WEDNESDAY, "Fri 2026-12-04 17:00"),
        ("el viernes", "es", WEDNESDAY, "Fri 2026-12-04 17:00"),
        ("pasado mañana", "es", WEDNESDAY, "Fri 2026-12-04 17:00"),
        ("mañana por la mañana", "es", WEDNESDAY, "Thu 2026-12-03 09:00"),
        ("el martes que viene", "es", FRIDAY, "Tue 2026-12-08 17:00"),
    ],
)
def test_phrases_resolve_by_the_documented_conventions(
    text: str, lang: str, at: datetime, expected: str
) -> None:
    assert due(text, lang, at) == expected


def test_a_time_alone_is_today_or_tomorrow_if_it_has_passed() -> None:
    assert due("by 3pm", "en", WEDNESDAY) == "Wed 2026-12-02 15:00"
    assert due("by 9am", "en", WEDNESDAY) == "Thu 2026-12-03 09:00"


def test_tomorrow_is_the_owners_tomorrow_not_utcs() -> None:
    # 23:30 UTC on Wednesday is already Thursday in Berlin, still Wednesday in New York.
    late = datetime(2026, 12, 2, 23, 30, tzinfo=UTC)
    assert due("tomorrow", "en", late, BERLIN) == "Fri 2026-12-04 17:00"
    assert due("tomorrow", "en", late, NEW_YORK) == "Thu 2026-12-03 17:00"
    hit = find_due("tomorrow", "en", late, BERLIN)
    assert hit is not None and hit.due.tzinfo == BERLIN  # aware, in the owner's zone


def test_words_that_look_like_dates_are_not_read() -> None:
    # Each beside its control: the same word that is a date.
    assert due("Guten Morgen zusammen", "de") is None
    assert due("bis morgen", "de") == "Thu 2026-12-03 17:00"
    early = datetime(2026, 12, 2, 8, 0, tzinfo=BERLIN)
    assert due("por la mañana", "es", early) == "Wed 2026-12-02 09:00"  # a part of the day only
    assert due("mañana", "es") == "Thu 2026-12-03 17:00"
    assert due("the 31st of April", "en") is None  # no such day
    assert due("the 30th of April", "en") == "Fri 2027-04-30 17:00"
    assert due("I may send it", "en") is None and due("by May 4", "en") == "Tue 2027-05-04 17:00"


def test_the_span_covers_the_date_words() -> None:
    text = "I'll send it tomorrow at 3pm, thanks"
    hit = find_due(text, "en", WEDNESDAY, BERLIN)
    assert hit is not None and text[hit.start : hit.end].strip() == "tomorrow at 3pm"


def test_a_naive_message_time_is_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        find_due("tomorrow", "en", datetime(2026, 12, 2, 10, 0), BERLIN)
