"""A text's normal form, and what of a record its meaning is compared on.

``normalise`` is what "the same text" means to tombstones, evidence and restatements
(NFKC, casefold, punctuation removed, whitespace collapsed). It lives here, below the
store, because the store keeps a keyed hash of each record's normalised words
(``said_keys``: the writer keeps it, ``mama_said_key`` fills it in an older store), so a
save finds a record that says exactly the same with one index lookup.
"""

from __future__ import annotations

import unicodedata


class _PunctuationToSpace(dict[int, str]):
    """``str.translate`` table mapping every punctuation character (Unicode category
    ``P*``) to a space, filled as characters are first seen: the lookups of characters
    seen before stay in C, where a per-character ``unicodedata.category`` call in Python
    was most of a save's restatement check (``bench.write``)."""

    def __missing__(self, code: int) -> str:
        value = " " if unicodedata.category(chr(code)).startswith("P") else chr(code)
        self[code] = value
        return value


_PUNCTUATION_TO_SPACE = _PunctuationToSpace()


def normalise(text: str) -> str:
    """NFKC, casefold, punctuation removed, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.translate(_PUNCTUATION_TO_SPACE).split())


def said(summary: str, applies_when: str | None) -> str:
    """The words a record's meaning is compared on: its summary and when it applies
    ("Use tabs" in Go files is not "Use tabs" in Python files)."""
    return f"{summary}. {applies_when}" if applies_when else summary


def said_normal(summary: str, applies_when: str | None) -> bytes:
    """What a record's ``said_keys`` key is the keyed hash of: its normalised ``said``,
    labelled so the hash is of no use anywhere else."""
    return b"said\x00" + normalise(said(summary, applies_when)).encode("utf-8")


__all__ = ["normalise", "said", "said_normal"]
