"""WHEN for the reads that look back (``mama timeline``): an ISO date or time, or a
few words relative to now.

ISO text goes through ``work.parse_when``, the rule ``mama work due`` already
follows; only the zone of a date or time written without an offset differs. A due
time cannot guess whose 17:00 it is, so ``work due`` asks for ``--tz``; a read asks
about the owner's own past, so here such a time is taken in ``--tz``, else the
owner's timezone (``mama settings timezone``), else this computer's, and what is
printed names the zone it used.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from app.cli.work import CLEAR_DUE, parse_when
from mama_core.errors import InvalidInputError

_DAYS = {"today": 0, "yesterday": -1, "tomorrow": 1}
_UNITS = {
    "m": "minutes",
    "min": "minutes",
    "mins": "minutes",
    "minute": "minutes",
    "minutes": "minutes",
    "h": "hours",
    "hour": "hours",
    "hours": "hours",
    "d": "days",
    "day": "days",
    "days": "days",
    "w": "weeks",
    "week": "weeks",
    "weeks": "weeks",
}
_AGO = re.compile(r"^(\d{1,5}) ?([a-z]+) ago$")

WHEN_FORMS = (
    "an ISO date or time (2026-11-01, 2026-11-01T09:00, 2026-11-01T09:00+01:00), "
    "'now', 'today', 'yesterday', or 'N minutes/hours/days/weeks ago' (e.g. '3 days ago')"
)
"""What WHEN may be, for help texts and errors."""


def parse_moment(text: str, option: str, zone: ZoneInfo, now: datetime) -> datetime:
    """``text`` (the value of ``option``) as an aware instant; a date or time without an
    offset is read in ``zone``, and 'today'/'yesterday' start at midnight there."""
    words = " ".join(text.strip().lower().split())
    if words == "now":
        return now
    if words in _DAYS:
        day = now.astimezone(zone).date() + timedelta(days=_DAYS[words])
        return datetime.combine(day, time(), zone)
    ago = _AGO.match(words)
    if ago and ago.group(2) in _UNITS:
        try:
            return now - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
        except OverflowError:
            raise _bad(text, option, "it is too far back") from None
    if words in CLEAR_DUE:
        raise _bad(text, option)
    try:
        moment = parse_when(text, zone.key)
    except InvalidInputError:
        raise _bad(text, option) from None
    if moment is None:
        raise _bad(text, option)
    return moment


def _bad(text: str, option: str, why: str = "") -> InvalidInputError:
    because = f" ({why})" if why else ""
    return InvalidInputError(
        f"{option} must be {WHEN_FORMS}, not {text!r}{because}.",
        details={"fields": [option.lstrip("-").replace("-", "_")]},
    )
