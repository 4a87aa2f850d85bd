"""Cross-script abstention (``script-v1``): the word arms do not vote on what they cannot read.

The word arms (BM25 over words and trigrams) match the query's own words, so for a
question in English a note written in Korean, Russian or Hebrew is invisible to
them, however well it answers. Reciprocal rank fusion counts an arm's silence as a
vote against: with two word arms and one vector arm, an English note on the same
topic (found by the words and second by the vectors) outranks the Korean note the
vectors put first. The multilingual benchmark showed it: English questions found
their note first in 56 % of cases by vectors alone and 26 % fused.

So for a candidate of the vector arm whose letters are mostly of another script
than the query's, each word arm that did not find it abstains: it is counted at
the rank the vector arm gave it, neither for nor against. Texts in the query's own
script are untouched (an English query over English notes ranks exactly as
before); within one script (English and German) the word arms still vote, since
they can read both and shared names and numbers are real evidence.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

from mama_core.recall.fusion import Ranked

_FAMILIES = {
    "HIRAGANA": "CJK",
    "KATAKANA": "CJK",
    "CJK": "CJK",
    "HANGUL": "HANGUL",
}


def _script(ch: str) -> str | None:
    if not ch.isalpha():
        return None
    try:
        first = unicodedata.name(ch).split(" ", 1)[0]
    except ValueError:
        return None
    return _FAMILIES.get(first, first)


def dominant_script(text: str) -> str | None:
    """The script most of ``text``'s letters are written in (``LATIN``, ``CYRILLIC``,
    ``CJK`` for Han and kana, ``HANGUL``…), or None for a text without letters."""
    counts = Counter(s for s in map(_script, text) if s is not None)
    return counts.most_common(1)[0][0] if counts else None


WORD_ARMS = ("bm25", "trigram")


def with_abstention(
    arms: Mapping[str, Sequence[Ranked]],
    query_script: str | None,
    scripts: Mapping[int, str | None],
) -> dict[str, list[Ranked]]:
    """``arms`` where each word arm counts a vector candidate in another script than
    the query's (``scripts``: candidate id -> its script) at its vector rank, unless the
    word arm found it itself."""
    out = {arm: list(ranked) for arm, ranked in arms.items()}
    vector = arms.get("vector")
    if query_script is None or not vector:
        return out
    foreign = [r for r in vector if scripts.get(r.id) not in (None, query_script)]
    if not foreign:
        return out
    for arm in WORD_ARMS:
        if arm not in out:
            continue
        seen = {r.id for r in out[arm]}
        out[arm].extend(Ranked(r.id, 0.0, r.rank) for r in foreign if r.id not in seen)
    return out
