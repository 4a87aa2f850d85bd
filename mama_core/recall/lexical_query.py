"""Turning a person's text into safe FTS5 queries.

User text never reaches FTS5's query syntax: we split it into tokens ourselves
(runs of letters, digits and combining marks, as FTS5's ``unicode61`` tokenizer
sees words), drop stopwords, and hand FTS5 each token as a double-quoted string,
OR-ed together. Inside double quotes FTS5 only tokenizes, so ``NEAR``, ``*``,
``^``, ``:``, parentheses or quotes in the text are just characters.

Scripts written without spaces (Chinese, Japanese, Thai, …) are not split into
words by ``unicode61``: a whole clause becomes one token. Runs of those scripts,
and Korean words (whose particles attach to the noun), go to the trigram index
instead, as their sliding three-character pieces, so a memory that shares part
of the text is found and ranked by how much it shares. Runs shorter than three
characters cannot use the trigram index; they are kept as substrings for a
plain ``LIKE`` scan, used only when nothing else could be asked.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from mama_core.recall.stopwords import STOPWORDS

# Bounds on the work one query may cause, whatever its length.
MAX_WORD_TERMS = 64
MAX_TRIGRAM_TERMS = 64
MAX_SHORT_TERMS = 8

# Scripts written without spaces between words (their runs go to trigrams).
_UNSEGMENTED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3000, 0x303F),  # CJK symbols (the iteration mark 々 is a letter)
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x31A0, 0x31FF),  # Bopomofo ext., Katakana phonetic ext.
    (0x3400, 0x4DBF),  # CJK ext. A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3FFFF),  # CJK ext. B and later
)
_HANGUL = ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7AF), (0xD7B0, 0xD7FF))


def quote_fts(token: str) -> str:
    """``token`` as an FTS5 string: double quotes, inner quotes doubled."""
    return '"' + token.replace('"', '""') + '"'


def _in_ranges(code: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= code <= hi for lo, hi in ranges)


def _is_token_char(ch: str) -> bool:
    # unicode61's token characters: letters, numbers, private use; marks stay
    # attached to their letter (Devanagari, Arabic vowels) so words are not cut.
    cat = unicodedata.category(ch)
    return cat[0] in "LNM" or cat == "Co"


def _script(ch: str) -> str:
    code = ord(ch)
    if code < 0x0E00:
        return "spaced"
    if _in_ranges(code, _UNSEGMENTED):
        return "unsegmented"
    if _in_ranges(code, _HANGUL):
        return "hangul"
    return "spaced"


def split_runs(text: str) -> list[tuple[str, str]]:
    """``(script, run)`` pairs: maximal runs of token characters of one script class.

    The text is NFKC-normalised and case-folded first (full-width Latin becomes
    Latin, ligatures split), so the runs compare as the index's tokens do.
    """
    norm = unicodedata.normalize("NFKC", text).casefold()
    runs: list[tuple[str, str]] = []
    current: list[str] = []
    current_script = ""
    for ch in norm:
        if not _is_token_char(ch):
            if current:
                runs.append((current_script, "".join(current)))
                current = []
            continue
        script = _script(ch)
        # A combining mark continues whatever run it follows.
        if current and (script == current_script or unicodedata.category(ch)[0] == "M"):
            current.append(ch)
            continue
        if current:
            runs.append((current_script, "".join(current)))
        current, current_script = [ch], script
    if current:
        runs.append((current_script, "".join(current)))
    # A run that is only marks has no letter FTS5 could index.
    return [(s, r) for s, r in runs if any(unicodedata.category(c)[0] != "M" for c in r)]


def _dedupe(items: list[str], limit: int) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        if item not in seen:
            seen[item] = None
            if len(seen) >= limit:
                break
    return tuple(seen)


@dataclass(frozen=True)
class LexicalQuery:
    """The tokens of one query, sorted by the index that can find them.

    ``words`` go to the word index (Porter-stemmed by FTS5 itself), ``trigrams``
    to the trigram index, ``short`` (one or two characters of an unsegmented
    script) to a ``LIKE`` scan, and ``partials`` (Latin words of three or more
    characters) to the trigram index as substrings when the word index found
    nothing (a partial word such as "postgre").
    """

    words: tuple[str, ...] = ()
    trigrams: tuple[str, ...] = ()
    short: tuple[str, ...] = ()
    partials: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.words or self.trigrams or self.short)

    def word_match(self) -> str | None:
        """The FTS5 MATCH expression for the word index, or None."""
        return " OR ".join(quote_fts(t) for t in self.words) if self.words else None

    def trigram_match(self) -> str | None:
        """The FTS5 MATCH expression for the trigram index, or None."""
        return " OR ".join(quote_fts(t) for t in self.trigrams) if self.trigrams else None

    def partial_match(self) -> str | None:
        """The trigram MATCH expression for the partial-word fallback, or None."""
        return " OR ".join(quote_fts(t) for t in self.partials) if self.partials else None


def build_lexical_query(text: str) -> LexicalQuery:
    """Split ``text`` into the tokens each index can use; never raises on any string."""
    words: list[str] = []
    kept_stopwords: list[str] = []
    trigrams: list[str] = []
    short: list[str] = []
    for script, run in split_runs(text):
        if script == "spaced":
            (kept_stopwords if run in STOPWORDS else words).append(run)
            continue
        if script == "hangul":
            # Whole-word matches work for Korean too; pieces catch attached particles.
            words.append(run)
        if len(run) >= 3:
            trigrams.extend(run[i : i + 3] for i in range(len(run) - 2))
        else:
            short.append(run)
    if not words and not trigrams and not short:
        # Only stopwords ("who was it"): better to match them than nothing.
        words = kept_stopwords
    partials = [w for w in words if len(w) >= 3 and _script(w[0]) == "spaced"]
    return LexicalQuery(
        words=_dedupe(words, MAX_WORD_TERMS),
        trigrams=_dedupe(trigrams, MAX_TRIGRAM_TERMS),
        short=_dedupe(short, MAX_SHORT_TERMS),
        partials=_dedupe(partials, MAX_WORD_TERMS),
    )
