"""Time-aware ranking for "when" questions (``when-v1``), without a model.

A question that asks *when* something happened is answered by the memory that
says when: "I went to the support group yesterday", "we signed on 3 March",
"last week the vendor called". Both that memory and a later one that merely
mentions the support group match the question's words; only the first carries
a time. So, when the query asks for a time (``asks_when``), each of the top
``depth`` fused hits whose text carries a time expression (``says_when``: a
date, a month or weekday name, a year, "yesterday", "last week", "two days
ago", …) gets ``weight`` rank-1 RRF units added, and the list is re-sorted.
Hits outside the top ``depth`` are never raised, so a question's words still
decide which memories compete; the stage only reorders among them.

English only (the cue words are English); a query in another language is
left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mama_core.recall.fusion import Fused
from mama_core.recall.predicate import Predicate
from mama_core.recall.query import ArmScore
from mama_core.recall.rows import fetch_rows
from mama_core.store.connection import Connection

STAGE = "when-v1"
STAGE_ARM = "when"

_ASKS = re.compile(
    r"\b(when|what (date|day|time|year|month|week)|which (date|day|year|month|week)"
    r"|how long|how many (days|weeks|months|years)|since when|until when)\b",
    re.IGNORECASE,
)

_MONTHS = (
    r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?"
    r"|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?"
)
_DAYS = r"mon|tues?|wed(nes)?|thu(rs)?|fri|sat(ur)?|sun"
_NUMBER = r"\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|several"
_UNIT = r"minutes?|hours?|days?|weeks?|weekends?|months?|years?|decades?"
_SAYS = re.compile(
    r"\b("
    # A month's full name counts when capitalised ("in March", not "march on").
    r"(?-i:January|February|March|April|June|July|August|September|October|November|December)"
    rf"|({_DAYS})day"
    rf"|({_MONTHS})\.? \d{{1,2}}(st|nd|rd|th)?\b|\d{{1,2}}(st|nd|rd|th)? (of )?({_MONTHS})\b"
    r"|(19|20)\d\d"
    r"|\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}"
    r"|yesterday|today|tonight|tomorrow|this morning|last night"
    r"|(last|next|this|past|coming) (week|weekend|month|year|summer|winter|spring|fall|autumn"
    rf"|{_DAYS}day|january|february|march|april|june|july|august|september|october|november"
    r"|december)"
    rf"|({_NUMBER}) ({_UNIT}) (ago|before|after|later|earlier|now|so far)"
    rf"|for ({_NUMBER}) ({_UNIT})"
    r"|recently|the other day|ago"
    r")\b",
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """Whether a query asks for a time ("when", "what date", "how long", …)."""
    return _ASKS.search(text) is not None


def says_when(text: str) -> bool:
    """Whether a memory's text carries a time expression."""
    return _SAYS.search(text) is not None


def with_time_bonus(
    conn: Connection,
    fused: Sequence[Fused],
    predicate: Predicate,
    *,
    weight: float,
    depth: int,
    k: int,
) -> list[Fused]:
    """``fused`` with the top ``depth`` hits that say when raised by ``weight`` units."""
    top = list(fused[:depth])
    rows = fetch_rows(conn, [f.id for f in top], predicate)
    bonus = weight / (k + 1)
    out: list[Fused] = []
    for item in top:
        row = rows.get(item.id)
        parts = () if row is None else (row.topic, row.summary, row.details)
        if says_when(" ".join(p for p in parts if p)):
            arms = {**item.arms, STAGE_ARM: ArmScore(1, bonus)}
            out.append(Fused(item.id, item.score + bonus, arms))
        else:
            out.append(item)
    out.sort(key=lambda f: (-round(f.score, 12), -f.id))
    return out + list(fused[depth:])
