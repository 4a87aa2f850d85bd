"""Does a reworded save say what a tombstoned text said, or something else?

A sentence embedding scores "Deploy on Fridays" and "Never deploy on Fridays"
as near-duplicates (cosine 0.93 with all-MiniLM-L6-v2), so a cosine threshold
alone refuses the negation of a retired rule. Before a cosine-close save is
refused, ``difference`` compares the two texts on the cues an embedding blurs:
polarity (negation words), opposite words, numbers, calendar words and names.
Any difference means the save states something else and it is let through;
the same normalised text (the fingerprint) is refused without these checks.

The checks are word lists, local and explainable; each returns the reason it
found. They err towards letting a save through: a missed paraphrase can be
retired again, a refused negation cannot be said at all.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NEGATORS: frozenset[str] = frozenset(
    _words(
        "not no never cannot without nobody nothing none neither nor nowhere "
        "avoid avoids avoided avoiding forbid forbids forbidden forbidding "
        "prohibit prohibits prohibited ban bans banned disallow disallows disallowed"
    )
)
"""Words that flip what a sentence states; ``-n't`` contractions count too."""

NOT_NEGATING = re.compile(
    r"\b(?:no exceptions?|without (?:exception|fail)|no matter|not only|no doubt"
    r"|no (?:later|earlier|more|less|fewer) than|not (?:later|earlier|more|less|fewer) than)\b"
)
"""Phrases with a negation word that negate nothing ("no exceptions", "no later than");
without this, adding one would be a way around a tombstone."""

OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(_words(a)), frozenset(_words(b)))
    for a, b in (
        ("enable enabled enables enabling", "disable disabled disables disabling"),
        ("before", "after"),
        ("include included includes including", "exclude excluded excludes excluding"),
        ("short shorter shortest brief briefer", "long longer longest lengthy"),
        ("more most", "less least fewer fewest"),
        ("increase increased increases raise", "decrease decreased decreases reduce"),
        ("true", "false"),
        ("required mandatory", "optional"),
        ("public", "private"),
        ("early earlier earliest", "late later latest"),
        ("minimum min", "maximum max"),
        ("accept accepted accepts approve approved", "reject rejected rejects decline declined"),
        ("good better best", "bad worse worst"),
        ("safe", "unsafe dangerous"),
        ("add added adds", "remove removed removes"),
        ("start starts started", "stop stops stopped end ends"),
        ("first", "last"),
        ("open opened opens", "close closed closes"),
        ("uppercase", "lowercase"),
        ("sync synchronous synchronously", "async asynchronous asynchronously"),
    )
)
"""Pairs of word families: one side in the retired text and the other in the save."""

NUMBER_WORDS: dict[str, str] = {
    word: str(value)
    for value, word in enumerate(
        _words(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        )
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "ninety": "90"}

CALENDAR_WORDS: dict[str, str] = {
    word: word
    for word in _words(
        "monday tuesday wednesday thursday friday saturday sunday weekday weekend "
        "january february march april june july august september october november december "
        "second minute hour day week month quarter year "
        "morning afternoon evening night noon midnight"
    )
} | {
    "hourly": "hour",
    "daily": "day",
    "weekly": "week",
    "monthly": "month",
    "quarterly": "quarter",
    "yearly": "year",
    "annual": "year",
    "annually": "year",
}
"""Days, months, time units and parts of the day ("may" is left out: it is a verb too)."""

EMPHASIS_WORDS: frozenset[str] = frozenset(
    _words(
        "a all always and any are at be do every for important in is must of on only or the to use"
    )
)
"""Words written in capitals for emphasis ("you MUST"), which are not names."""

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_CAPITALISED = re.compile(r"(?<![\w'])([A-Z][\w-]*)")
_SENTENCE_END = re.compile(r"[.!?:;\n]\s*$")


@dataclass(frozen=True)
class Cues:
    """What ``difference`` compares in one text."""

    negations: int
    words: frozenset[str]
    numbers: frozenset[str]
    calendar: frozenset[str]
    names: frozenset[str]


def cues(text: str) -> Cues:
    """The polarity, words, numbers, calendar words and names of ``text``."""
    plain = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    tokens = _WORD.findall(plain.casefold())
    negating = _WORD.findall(NOT_NEGATING.sub(" ", plain.casefold()))
    negations = sum(1 for t in negating if t in NEGATORS or t.endswith("n't"))
    numbers = {_number(n) for n in _NUMBER.findall(plain)}
    numbers |= {NUMBER_WORDS[t] for t in tokens if t in NUMBER_WORDS}
    calendar = {c for c in (_calendar(t) for t in tokens) if c is not None}
    return Cues(
        negations=negations,
        words=frozenset(tokens),
        numbers=frozenset(numbers),
        calendar=frozenset(calendar),
        names=frozenset(_names(plain)),
    )


def difference(retired: str, candidate: str) -> str | None:
    """Why ``candidate`` states something other than ``retired``, or None if nothing
    tells them apart (then the cosine decides)."""
    old, new = cues(retired), cues(candidate)
    if old.negations % 2 != new.negations % 2:
        return "opposite polarity (a negation)"
    for side_a, side_b in OPPOSITES:
        if _opposed(old.words, new.words, side_a, side_b):
            return "opposite words"
    for what, before, after in (
        ("numbers", old.numbers, new.numbers),
        ("dates or times", old.calendar, new.calendar),
        ("names", old.names, new.names),
    ):
        if before and after and before != after:
            return f"different {what}"
    return None


def _opposed(
    old: frozenset[str], new: frozenset[str], a: frozenset[str], b: frozenset[str]
) -> bool:
    def side(words: frozenset[str]) -> str | None:
        has_a, has_b = bool(words & a), bool(words & b)
        return None if has_a == has_b else ("a" if has_a else "b")

    before, after = side(old), side(new)
    return before is not None and after is not None and before != after


def _number(raw: str) -> str:
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", raw):
        raw = raw.replace(",", "")
    raw = raw.replace(",", ".")
    if raw.endswith(":00"):
        raw = raw[:-3]  # 10:00 is 10
    if re.fullmatch(r"\d+\.0+", raw):
        raw = raw.split(".")[0]
    head, sep, tail = raw.partition(":")
    return (head.lstrip("0") or "0") + sep + tail


def _calendar(token: str) -> str | None:
    if token in CALENDAR_WORDS:
        return CALENDAR_WORDS[token]
    if token.endswith("s") and token[:-1] in CALENDAR_WORDS:
        return CALENDAR_WORDS[token[:-1]]
    return None


def _names(text: str) -> set[str]:
    """Capitalised words inside a sentence and all-capital words anywhere (AWS, EU),
    casefolded; a sentence's first word is not a name unless it is all capitals."""
    found: set[str] = set()
    for match in _CAPITALISED.finditer(text):
        word = match.group(1)
        folded = word.casefold()
        if (
            folded in NEGATORS
            or folded in NUMBER_WORDS
            or _calendar(folded) is not None
            or folded == "i"
            or folded in EMPHASIS_WORDS
        ):
            continue
        all_caps = len(word) > 1 and word.isupper()
        starts_sentence = match.start() == 0 or bool(_SENTENCE_END.search(text[: match.start()]))
        if all_caps or not starts_sentence:
            found.add(folded)
    return found


def near_duplicate(
    retired: str | None, candidate: str, similarity: float, threshold: float
) -> bool:
    """Whether a save whose vector is ``similarity``-close to a tombstone's is the
    retired text reworded: close enough, and nothing in the words tells them apart
    (``retired`` is None when its text is gone: the cosine alone decides)."""
    if similarity < threshold:
        return False
    return retired is None or difference(retired, candidate) is None
