"""How a person's name is compared and found in text, without a model.

A name is compared by its *key*: its words with accents taken off and case folded
("Anna K." and "anna  k" share the key ``anna k``; "Ánna" is "anna"). An e-mail
address is its own key, compared whole ("anna@corp.example" is not
"anna@corp.example.org"). Text is cut into the same words, an address kept as one
word, so finding a name is finding its words in a row: "Anna" is found in "ask
Anna's team" but not in "Annabel", "Anna-Lena" or "anna@corp.example".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

_EMAIL = r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+"
_WORD = r"\w+(?:-\w+)*"
"""A hyphenated name ("Anna-Lena") is one word, so "Anna" alone is not found in it."""
_TOKEN = re.compile(f"{_EMAIL}|{_WORD}")
_EMAIL_ONLY = re.compile(f"^{_EMAIL}$")
_ANGLED = re.compile(r"^(?P<name>.*?)\s*<(?P<email>[^<>\s]+@[^<>\s]+)>\s*$")

MAX_ALIAS_WORDS = 6
"""Longer names are not looked for in text (nobody is called by seven words)."""


def folded(text: str) -> str:
    """``text`` with accents taken off and case folded ("Ángela" -> "angela")."""
    if text.isascii():  # most text: nothing to take off (and 10x faster)
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return plain.casefold()


def words(text: str) -> list[str]:
    """The folded words of ``text``, an e-mail address as one word."""
    return _TOKEN.findall(folded(text))


def is_email(name: str) -> bool:
    return bool(_EMAIL_ONLY.match(name.strip()))


@lru_cache(maxsize=65536)
def alias_key(name: str) -> str:
    """The key ``name`` is compared by ("" when it has no word at all)."""
    text = name.strip()
    if is_email(text):
        return folded(text)
    return " ".join(words(text))


@dataclass(frozen=True)
class Identity:
    """Who a source names: a display name and/or an address (either may be empty)."""

    name: str
    email: str

    def aliases(self) -> list[str]:
        return list(_aliases(self.name, self.email))


@lru_cache(maxsize=65536)
def _aliases(name: str, email: str) -> tuple[str, ...]:
    return tuple(a for a in (name, email) if alias_key(a))


def parse_author(author: str) -> Identity:
    """``Anna K <anna@corp.example>`` -> name and address; ``anna@corp.example`` -> the
    address alone; anything else is a display name ("Anna K", "U123 (Anna)")."""
    text = author.strip()
    angled = _ANGLED.match(text)
    if angled:
        name = angled["name"].strip().strip('"').strip()
        return Identity(name, angled["email"].strip())
    if is_email(text):
        return Identity("", text)
    return Identity(text, "")


def identity_of(entry: object) -> Identity:
    """An attendee or organiser as calendar metadata gives it: ``{"name", "email"}``
    (or a bare string, read as an author line)."""
    if isinstance(entry, str):
        return parse_author(entry)
    if isinstance(entry, dict):
        name = entry.get("name")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        email = entry.get("email")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        email_text = str(email).strip() if isinstance(email, str) else ""
        if email_text.lower().startswith("mailto:"):
            email_text = email_text[len("mailto:") :]
        return Identity(str(name).strip() if isinstance(name, str) else "", email_text)
    return Identity("", "")


class NameIndex:
    """Finds, in a text, which of many names it says (each name a run of words)."""

    def __init__(self, names: Iterable[tuple[str, str]]) -> None:
        """``names``: (alias key, what a match stands for, e.g. a person's key)."""
        self._by_words: dict[tuple[str, ...], set[str]] = {}
        self._lengths: set[int] = set()
        self._firsts: set[str] = set()
        for key, target in names:
            run = tuple(key.split(" ")) if not is_email(key) else (key,)
            if not key or len(run) > MAX_ALIAS_WORDS:
                continue
            self._by_words.setdefault(run, set()).add(target)
            self._lengths.add(len(run))
            self._firsts.add(run[0])

    def found_in(self, text_words: Sequence[str]) -> set[str]:
        """The targets whose names occur in ``text_words`` (from ``words``)."""
        found: set[str] = set()
        for at, word in enumerate(text_words):
            if word not in self._firsts:  # most words begin no name: one set lookup
                continue
            for length in self._lengths:
                run = tuple(text_words[at : at + length])
                if len(run) == length and run in self._by_words:
                    found |= self._by_words[run]
        return found
