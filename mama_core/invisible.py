"""Characters a person cannot see: controls, bidi overrides, zero-width marks.

They let two names that look the same differ (``project:web`` and
``project:web`` with a zero-width space) or make text read backwards on screen
(a right-to-left override), so scope names refuse them and a summary must hold
at least one character that shows.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Bidirectional embeddings, overrides, isolates and marks (Trojan Source)."""

ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u180e")
"""Zero-width spaces and joiners, the word joiner and the byte-order mark."""

_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols that are drawn as nothing (Hangul fillers, the blank braille cell)."""

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"})


def hidden_char(text: str) -> str | None:
    """The first character of ``text`` that is a control, a format mark or a separator."""
    for char in text:
        if char in BIDI_CONTROLS or char in ZERO_WIDTH or char.isspace():
            return char
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"):
            return char
    return None


def has_visible_char(text: str) -> bool:
    """Whether ``text`` holds at least one character that is drawn on screen."""
    return any(
        char not in _BLANK_LETTERS
        and unicodedata.category(char) not in _HIDDEN_CATEGORIES
        and not char.isspace()
        for char in text
    )


def describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: a hidden character named for a message."""
    return f"U+{ord(char):04X} {unicodedata.name(char, 'control character')}"
