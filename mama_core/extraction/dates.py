"""Due dates in a sentence, by an explicit rule table per language, resolved against the
message's time in the owner's timezone.

Why a table and not ``dateparser``: measured on the labelled corpus
(``tests/mama_core/extraction_corpus``), ``dateparser.search.search_dates`` found a
date in words that are none ("I'll send it **may**be", "**sec**", "**mar**di" read as
March) and resolved a bare weekday into the past by default; a wrong due costs the
owner more than none. The table below knows fewer phrases, each one exactly.

Conventions (each one a choice, written down so the corpus can be labelled by it):

- A day without a time is due at 17:00 local (the end of a working day); "EOD",
  "end of day", "COB", "bis Feierabend", "fin de journée" are that too.
- Parts of a day: morning 09:00, noon 12:00, afternoon 15:00, evening / tonight 19:00.
- A bare weekday ("Friday", "am Freitag", "vendredi", "el viernes") is its next
  occurrence after the message's day (said on a Friday: a week later).
- "next Friday", "nächsten Freitag", "vendredi prochain", "el viernes que viene" is
  the Friday of next week (weeks start on Monday); "this Friday" this week's.
- "this week" / "end of the week" is this week's Friday; "next week" next week's
  Friday; "end of the month" its last day.
- A time alone ("by 3pm", "um 15 Uhr") is today at that time, or tomorrow if the
  message was written after it.
- A day and month without a year ("5 December", "5.12.", "le 5 décembre", "el 5 de
  diciembre") is the next such day on or after the message's day. Numeric day/month
  is read day first (de, fr, es); English numeric dates are ambiguous and not read.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

DAY_END = time(17, 0)
MORNING, NOON, AFTERNOON, EVENING = time(9, 0), time(12, 0), time(15, 0), time(19, 0)
FRIDAY = 4

LANGS = ("en", "de", "fr", "es")


@dataclass(frozen=True)
class DueHit:
    """A due time found in a text: the instant (aware, in the owner's zone) and the
    span of the words it was read from (from the first date word to the last)."""

    due: datetime
    start: int
    end: int

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end


DayResolver = Callable[[re.Match[str], date], date | None]
TimeResolver = Callable[[re.Match[str]], time | None]


@dataclass(frozen=True)
class DayRule:
    pattern: re.Pattern[str]
    resolve: DayResolver
    part: time | None = None
    """The time this phrase names with its day ("tomorrow morning"), if any."""


@dataclass(frozen=True)
class TimeRule:
    pattern: re.Pattern[str]
    resolve: TimeResolver


def _re(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


# --- calendars ----------------------------------------------------------------------

WEEKDAYS: dict[str, tuple[str, ...]] = {
    "en": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "de": ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    "es": ("lunes", "martes", "mi[eé]rcoles", "jueves", "viernes", "s[aá]bado", "domingo"),
}
MONTHS: dict[str, tuple[str, ...]] = {
    "en": (
        "jan(?:uary)?",
        "feb(?:ruary)?",
        "march",
        "apr(?:il)?",
        "may",
        "june",
        "july",
        "aug(?:ust)?",
        "sept?(?:ember)?",
        "oct(?:ober)?",
        "nov(?:ember)?",
        "dec(?:ember)?",
    ),
    "de": (
        "januar",
        "februar",
        "m[äa]rz",
        "april",
        "mai",
        "juni",
        "juli",
        "august",
        "september",
        "oktober",
        "november",
        "dezember",
    ),
    "fr": (
        "janvier",
        "f[ée]vrier",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "ao[uû]t",
        "septembre",
        "octobre",
        "novembre",
        "d[ée]cembre",
    ),
    "es": (
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ),
}
COUNTS: dict[str, dict[str, int]] = {
    "en": {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5},
    "de": {"einem": 1, "einer": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5},
    "fr": {"un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5},
    "es": {"un": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5},
}


def _alternation(names: tuple[str, ...]) -> str:
    return "(" + "|".join(names) + ")"


def _index(names: tuple[str, ...], word: str) -> int:
    for i, name in enumerate(names):
        if re.fullmatch(name, word, re.IGNORECASE):
            return i
    raise ValueError(word)  # unreachable: the word was matched by the same names


def _count(lang: str, word: str) -> int | None:
    return int(word) if word.isdigit() else COUNTS[lang].get(word.lower())


# --- how phrases resolve ------------------------------------------------------------


def next_weekday(base: date, weekday: int) -> date:
    """The next ``weekday`` after ``base`` (a week later if ``base`` is one)."""
    return base + timedelta(days=(weekday - base.weekday()) % 7 or 7)


def next_week_day(base: date, weekday: int) -> date:
    """``weekday`` in the week after ``base``'s (weeks start on Monday)."""
    return base - timedelta(days=base.weekday()) + timedelta(days=7 + weekday)


def this_week_day(base: date, weekday: int) -> date:
    """``weekday`` of ``base``'s week, or the next one if it has passed."""
    day = base - timedelta(days=base.weekday()) + timedelta(days=weekday)
    return day if day >= base else next_weekday(base, weekday)


def month_end(base: date) -> date:
    return base.replace(day=calendar.monthrange(base.year, base.month)[1])


def day_of_year(base: date, day: int, month: int, year: int | None) -> date | None:
    """The date ``day``.``month``(.``year``); without a year the next on or after ``base``."""
    try:
        if year is not None:
            return date(year + 2000 if year < 100 else year, month, day)
        found = date(base.year, month, day)
        return found if found >= base else date(base.year + 1, month, day)
    except ValueError:
        return None  # 31 April: no such day


def _fixed(days: int) -> DayResolver:
    return lambda m, base: base + timedelta(days=days)


def _weekday(lang: str, how: Callable[[date, int], date]) -> DayResolver:
    return lambda m, base: how(base, _index(WEEKDAYS[lang], m.group("wd")))


def _this_friday(m: re.Match[str], base: date) -> date:
    return this_week_day(base, FRIDAY)


def _next_friday(m: re.Match[str], base: date) -> date:
    return next_week_day(base, FRIDAY)


def _month_end(m: re.Match[str], base: date) -> date:
    return month_end(base)


def _in_days(lang: str, per: int) -> DayResolver:
    def resolve(m: re.Match[str], base: date) -> date | None:
        n = _count(lang, m.group("n"))
        return None if n is None else base + timedelta(days=n * per)

    return resolve


def _named_date(lang: str) -> DayResolver:
    def resolve(m: re.Match[str], base: date) -> date | None:
        year = m.groupdict().get("y")
        return day_of_year(
            base, int(m.group("d")), _index(MONTHS[lang], m.group("m")) + 1, _int(year)
        )

    return resolve


def _numeric_date(m: re.Match[str], base: date) -> date | None:
    return day_of_year(base, int(m.group("d")), int(m.group("m")), _int(m.group("y")))


def _iso_date(m: re.Match[str], base: date) -> date | None:
    return day_of_year(base, int(m.group("d")), int(m.group("m")), int(m.group("y")))


def _int(text: str | None) -> int | None:
    return None if not text else int(text)


def _clock(hour_group: str = "h", minute_group: str = "min") -> TimeResolver:
    def resolve(m: re.Match[str]) -> time | None:
        hour = int(m.group(hour_group))
        minute = int(m.group(minute_group) or 0)
        meridiem = (m.groupdict().get("ampm") or "").lower()
        if meridiem == "pm" and hour < 12:
            hour += 12
        elif meridiem == "am" and hour == 12:
            hour = 0
        return time(hour, minute) if hour < 24 and minute < 60 else None

    return resolve


def _at(value: time) -> TimeResolver:
    return lambda m: value


# --- the tables -----------------------------------------------------------------------
# Longer phrases come first: a span taken by one rule is not read again by a later one
# ("day after tomorrow" before "tomorrow", "übermorgen" is one word anyway).

_ISO = DayRule(_re(r"\b(?P<y>20\d\d)-(?P<m>\d\d)-(?P<d>\d\d)\b"), _iso_date)
_NUMERIC_DM = DayRule(
    _re(r"(?<![\d/.])(?P<d>[0-3]?\d)[./](?P<m>[01]?\d)(?:[./](?P<y>(?:20)?\d\d))?(?![\d/])"),
    _numeric_date,
)


def _english() -> tuple[list[DayRule], list[TimeRule]]:
    wd, mo = _alternation(WEEKDAYS["en"]), _alternation(MONTHS["en"])
    n = r"(?P<n>\d+|an?|one|two|three|four|five)"
    days = [
        _ISO,
        DayRule(_re(r"\b(?:the\s+)?day\s+after\s+tomorrow\b"), _fixed(2)),
        DayRule(_re(r"\btomorrow\s+morning\b"), _fixed(1), MORNING),
        DayRule(_re(r"\btomorrow\s+afternoon\b"), _fixed(1), AFTERNOON),
        DayRule(_re(r"\btomorrow\s+(?:evening|night)\b"), _fixed(1), EVENING),
        DayRule(_re(r"\btomorrow\b"), _fixed(1)),
        DayRule(_re(r"\btonight\b|\bthis\s+evening\b"), _fixed(0), EVENING),
        DayRule(_re(r"\bthis\s+afternoon\b"), _fixed(0), AFTERNOON),
        DayRule(
            _re(
                r"\b(?:today|eod|cob|close\s+of\s+business|(?:the\s+)?end\s+of\s+(?:the\s+)?day)\b"
            ),
            _fixed(0),
        ),
        DayRule(_re(r"\b(?:the\s+)?end\s+of\s+next\s+week\b|\bnext\s+week\b"), _next_friday),
        DayRule(
            _re(r"\b(?:the\s+)?end\s+of\s+(?:the|this)\s+week\b|\bthis\s+week\b|\beow\b"),
            _this_friday,
        ),
        DayRule(_re(r"\b(?:the\s+)?end\s+of\s+(?:the|this)\s+month\b|\beom\b"), _month_end),
        DayRule(_re(rf"\bin\s+{n}\s+days?\b"), _in_days("en", 1)),
        DayRule(_re(rf"\bin\s+{n}\s+weeks?\b"), _in_days("en", 7)),
        DayRule(_re(rf"\bnext\s+(?P<wd>{wd[1:-1]})\b"), _weekday("en", next_week_day)),
        DayRule(_re(rf"\bthis\s+(?P<wd>{wd[1:-1]})\b"), _weekday("en", this_week_day)),
        DayRule(_re(rf"\b(?P<wd>{wd[1:-1]})\b"), _weekday("en", next_weekday)),
        DayRule(
            _re(
                rf"\b(?P<m>{mo[1:-1]})\.?\s+(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>20\d\d))?"
            ),
            _named_date("en"),
        ),
        DayRule(
            _re(
                rf"\b(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{mo[1:-1]})\b(?:\s+(?P<y>20\d\d))?"
            ),
            _named_date("en"),
        ),
    ]
    times = [
        TimeRule(
            _re(
                r"\b(?:at|by|before|around|until)?\s*(?P<h>[01]?\d)(?::(?P<min>[0-5]\d))?\s*(?P<ampm>am|pm)\b"
            ),
            _clock(),
        ),
        TimeRule(_re(r"\b(?:at|by|before|until)\s+(?P<h>[0-2]?\d):(?P<min>[0-5]\d)\b"), _clock()),
        TimeRule(
            _re(
                r"\b(?:(?:at|by|before)\s+)?(?:noon|midday)\b|\b(?:at|by|before)\s+lunch(?:time)?\b"
            ),
            _at(NOON),
        ),
        TimeRule(_re(r"\b(?:in\s+the\s+)?morning\b"), _at(MORNING)),
        TimeRule(_re(r"\b(?:in\s+the\s+)?afternoon\b"), _at(AFTERNOON)),
    ]
    return days, times


def _german() -> tuple[list[DayRule], list[TimeRule]]:
    wd, mo = _alternation(WEEKDAYS["de"]), _alternation(MONTHS["de"])
    n = r"(?P<n>\d+|einem|einer|zwei|drei|vier|fünf)"
    days = [
        _ISO,
        DayRule(_re(r"\bübermorgen\b"), _fixed(2)),
        DayRule(_re(r"\bmorgen\s+(?:früh|vormittag)\b"), _fixed(1), MORNING),
        DayRule(_re(r"\bmorgen\s+nachmittag\b"), _fixed(1), AFTERNOON),
        DayRule(_re(r"\bmorgen\s+abend\b"), _fixed(1), EVENING),
        DayRule(_re(r"\bheute\s+(?:morgen|früh|vormittag)\b"), _fixed(0), MORNING),
        DayRule(_re(r"\bheute\s+nachmittag\b"), _fixed(0), AFTERNOON),
        DayRule(_re(r"\bheute\s+abend\b"), _fixed(0), EVENING),
        DayRule(_re(r"(?<!guten\s)(?<!gestern\s)\bmorgen\b"), _fixed(1)),
        DayRule(_re(r"\bheute\b|\b(?:bis\s+)?feierabend\b|\bende\s+des\s+tages\b"), _fixed(0)),
        DayRule(
            _re(
                r"\b(?:ende\s+)?(?:der\s+)?(?:nächsten|kommenden)\s+woche\b|\b(?:nächste|kommende)\s+woche\b"
            ),
            _next_friday,
        ),
        DayRule(
            _re(r"\b(?:ende\s+(?:der|dieser)\s+woche|diese\s+woche|im\s+laufe\s+der\s+woche)\b"),
            _this_friday,
        ),
        DayRule(_re(r"\b(?:ende\s+(?:des|dieses)\s+monats|monatsende)\b"), _month_end),
        DayRule(_re(rf"\bin\s+{n}\s+tag(?:en)?\b"), _in_days("de", 1)),
        DayRule(_re(rf"\bin\s+{n}\s+wochen?\b"), _in_days("de", 7)),
        DayRule(
            _re(
                rf"\b(?:nächsten|kommenden)\s+(?P<wd>{wd[1:-1]})\b|\b(?P<wd2>{wd[1:-1]})\s+nächste\s+woche\b"
            ),
            lambda m, base: next_week_day(
                base, _index(WEEKDAYS["de"], m.group("wd") or m.group("wd2"))
            ),
        ),
        DayRule(_re(rf"\bdiesen\s+(?P<wd>{wd[1:-1]})\b"), _weekday("de", this_week_day)),
        DayRule(_re(rf"\b(?P<wd>{wd[1:-1]})(?:s)?\b"), _weekday("de", next_weekday)),
        DayRule(
            _re(rf"\b(?P<d>[0-3]?\d)\.\s*(?P<m>{mo[1:-1]})\b(?:\s+(?P<y>20\d\d))?"),
            _named_date("de"),
        ),
        _NUMERIC_DM,
    ]
    times = [
        TimeRule(
            _re(r"\b(?:um|bis|gegen|vor|ab)?\s*(?P<h>[0-2]?\d)(?:[:.](?P<min>[0-5]\d))?\s*uhr\b"),
            _clock(),
        ),
        TimeRule(_re(r"\b(?:um|bis|gegen)\s+(?P<h>[0-2]?\d):(?P<min>[0-5]\d)\b"), _clock()),
        TimeRule(_re(r"\b(?:bis\s+)?mittags?\b"), _at(NOON)),
        TimeRule(_re(r"\bvormittags?\b"), _at(MORNING)),
        TimeRule(_re(r"\bnachmittags?\b"), _at(AFTERNOON)),
    ]
    return days, times


def _french() -> tuple[list[DayRule], list[TimeRule]]:
    wd, mo = _alternation(WEEKDAYS["fr"]), _alternation(MONTHS["fr"])
    n = r"(?P<n>\d+|un|une|deux|trois|quatre|cinq)"
    days = [
        _ISO,
        DayRule(_re(r"\baprès-demain\b|\bapres-demain\b"), _fixed(2)),
        DayRule(_re(r"\bdemain\s+matin\b"), _fixed(1), MORNING),
        DayRule(_re(r"\bdemain\s+après-midi\b"), _fixed(1), AFTERNOON),
        DayRule(_re(r"\bdemain\s+soir\b"), _fixed(1), EVENING),
        DayRule(_re(r"\bdemain\b"), _fixed(1)),
        DayRule(_re(r"\bce\s+soir\b"), _fixed(0), EVENING),
        DayRule(_re(r"\bcet\s+après-midi\b"), _fixed(0), AFTERNOON),
        DayRule(
            _re(r"\baujourd'hui\b|\baujourd\u2019hui\b|\b(?:la\s+)?fin\s+de\s+(?:la\s+)?journée\b"),
            _fixed(0),
        ),
        DayRule(
            _re(r"\b(?:la\s+)?(?:fin\s+de\s+la\s+)?semaine\s+prochaine\b"),
            _next_friday,
        ),
        DayRule(
            _re(r"\b(?:la\s+)?fin\s+de\s+(?:la\s+|cette\s+)?semaine\b|\bcette\s+semaine\b"),
            _this_friday,
        ),
        DayRule(_re(r"\b(?:la\s+)?fin\s+(?:du|de\s+ce)\s+mois\b"), _month_end),
        DayRule(_re(rf"\bdans\s+{n}\s+jours?\b"), _in_days("fr", 1)),
        DayRule(_re(rf"\bdans\s+{n}\s+semaines?\b"), _in_days("fr", 7)),
        DayRule(_re(rf"\b(?P<wd>{wd[1:-1]})\s+prochain\b"), _weekday("fr", next_week_day)),
        DayRule(
            _re(rf"\b(?:le\s+)?(?P<d>[0-3]?\d)(?:er)?\s+(?P<m>{mo[1:-1]})\b(?:\s+(?P<y>20\d\d))?"),
            _named_date("fr"),
        ),
        DayRule(_re(rf"\bce\s+(?P<wd>{wd[1:-1]})\b"), _weekday("fr", this_week_day)),
        DayRule(_re(rf"\b(?P<wd>{wd[1:-1]})\b"), _weekday("fr", next_weekday)),
        _NUMERIC_DM,
    ]
    times = [
        TimeRule(
            _re(
                r"(?:\b(?:à|a|avant|vers|d'ici|pour)\s+)?\b(?P<h>[0-2]?\d)\s*h\s*(?P<min>[0-5]\d)?\b"
            ),
            _clock(),
        ),
        TimeRule(_re(r"\b(?:à|avant|vers)\s+midi\b"), _at(NOON)),
        TimeRule(_re(r"\b(?:dans\s+la\s+)?matinée\b"), _at(MORNING)),
        TimeRule(_re(r"\b(?:dans\s+l'|l')après-midi\b"), _at(AFTERNOON)),
    ]
    return days, times


def _spanish() -> tuple[list[DayRule], list[TimeRule]]:
    wd, mo = _alternation(WEEKDAYS["es"]), _alternation(MONTHS["es"])
    n = r"(?P<n>\d+|un|una|dos|tres|cuatro|cinco)"
    days = [
        _ISO,
        DayRule(_re(r"\bpasado\s+mañana\b"), _fixed(2)),
        DayRule(
            _re(r"\bmañana\s+(?:por|en)\s+la\s+mañana\b|\bmañana\s+temprano\b"), _fixed(1), MORNING
        ),
        DayRule(_re(r"\bmañana\s+(?:por|en)\s+la\s+tarde\b"), _fixed(1), AFTERNOON),
        DayRule(_re(r"\bmañana\s+(?:por|en)\s+la\s+noche\b"), _fixed(1), EVENING),
        DayRule(_re(r"\besta\s+mañana\b"), _fixed(0), MORNING),
        DayRule(_re(r"(?<!la\s)\bmañana\b"), _fixed(1)),
        DayRule(_re(r"\besta\s+noche\b"), _fixed(0), EVENING),
        DayRule(_re(r"\besta\s+tarde\b"), _fixed(0), AFTERNOON),
        DayRule(_re(r"\bhoy\b|\b(?:el\s+)?final\s+del\s+día\b|\bfin\s+del\s+día\b"), _fixed(0)),
        DayRule(
            _re(r"\b(?:la\s+)?(?:semana\s+que\s+viene|próxima\s+semana|semana\s+próxima)\b"),
            _next_friday,
        ),
        DayRule(
            _re(
                r"\b(?:el\s+|a\s+|al\s+)?(?:final|fin)(?:es)?\s+de\s+(?:esta\s+|la\s+)?semana\b|\besta\s+semana\b|\bfin\s+de\s+semana\b"
            ),
            _this_friday,
        ),
        DayRule(_re(r"\b(?:el\s+|a\s+)?(?:final|fin)(?:es)?\s+de(?:l)?\s+mes\b"), _month_end),
        DayRule(_re(rf"\ben\s+{n}\s+días?\b"), _in_days("es", 1)),
        DayRule(_re(rf"\ben\s+{n}\s+semanas?\b"), _in_days("es", 7)),
        DayRule(
            _re(
                rf"\b(?:el\s+)?(?P<wd>{wd[1:-1]})\s+(?:que\s+viene|próximo)\b|\bel\s+próximo\s+(?P<wd2>{wd[1:-1]})\b"
            ),
            lambda m, base: next_week_day(
                base, _index(WEEKDAYS["es"], m.group("wd") or m.group("wd2"))
            ),
        ),
        DayRule(
            _re(
                rf"\b(?:el\s+)?(?P<d>[0-3]?\d)\s+de\s+(?P<m>{mo[1:-1]})\b(?:\s+de\s+(?P<y>20\d\d))?"
            ),
            _named_date("es"),
        ),
        DayRule(_re(rf"\beste\s+(?P<wd>{wd[1:-1]})\b"), _weekday("es", this_week_day)),
        DayRule(_re(rf"\b(?P<wd>{wd[1:-1]})\b"), _weekday("es", next_weekday)),
        _NUMERIC_DM,
    ]
    times = [
        TimeRule(
            _re(r"\b(?:a|antes\s+de|hacia|para)\s+las\s+(?P<h>[0-2]?\d)(?::(?P<min>[0-5]\d))?\b"),
            _clock(),
        ),
        TimeRule(_re(r"\b(?:a|antes\s+del?|para\s+el)\s+mediodía\b"), _at(NOON)),
        TimeRule(_re(r"\bpor\s+la\s+mañana\b"), _at(MORNING)),
        TimeRule(_re(r"\bpor\s+la\s+tarde\b"), _at(AFTERNOON)),
    ]
    return days, times


TABLES: dict[str, tuple[list[DayRule], list[TimeRule]]] = {
    "en": _english(),
    "de": _german(),
    "fr": _french(),
    "es": _spanish(),
}


def find_due(
    text: str,
    lang: str,
    written_at: datetime,
    zone: ZoneInfo,
    start: int = 0,
    end: int | None = None,
) -> DueHit | None:
    """The due time stated in ``text[start:end]`` (``lang``'s table), resolved against
    ``written_at`` (aware) in ``zone``; None when it states none the table knows."""
    if written_at.tzinfo is None:
        raise ValueError("written_at must be timezone-aware")
    end = len(text) if end is None else end
    local = written_at.astimezone(zone)
    day_rules, time_rules = TABLES[lang]
    taken: list[tuple[int, int]] = []
    day_hit = _first_day(day_rules, text, start, end, local.date(), taken)
    time_hit = _first_time(time_rules, text, start, end, taken)
    if day_hit is None and time_hit is None:
        return None
    spans = [h[1] for h in (day_hit, time_hit) if h is not None]
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    if day_hit is not None:
        day, _, part = day_hit
        at = time_hit[0] if time_hit is not None else part or DAY_END
    else:
        assert time_hit is not None
        at = time_hit[0]
        day = local.date() if at > local.time() else local.date() + timedelta(days=1)
    return DueHit(datetime.combine(day, at, tzinfo=zone), lo, hi)


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < t_end and t_start < span[1] for t_start, t_end in taken)


def _first_day(
    rules: list[DayRule], text: str, start: int, end: int, base: date, taken: list[tuple[int, int]]
) -> tuple[date, tuple[int, int], time | None] | None:
    found: list[tuple[date, tuple[int, int], time | None]] = []
    for rule in rules:
        for m in rule.pattern.finditer(text, start, end):
            if _overlaps(m.span(), taken):
                continue
            taken.append(m.span())
            day = rule.resolve(m, base)
            if day is not None:
                found.append((day, m.span(), rule.part))
    return min(found, key=lambda f: f[1][0]) if found else None


def _first_time(
    rules: list[TimeRule], text: str, start: int, end: int, taken: list[tuple[int, int]]
) -> tuple[time, tuple[int, int]] | None:
    found: list[tuple[time, tuple[int, int]]] = []
    for rule in rules:
        for m in rule.pattern.finditer(text, start, end):
            span = (m.start() + len(m.group(0)) - len(m.group(0).lstrip()), m.end())
            if _overlaps(span, taken):
                continue
            taken.append(span)
            at = rule.resolve(m)
            if at is not None:
                found.append((at, span))
    return min(found, key=lambda f: f[1][0]) if found else None
