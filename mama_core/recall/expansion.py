"""Query expansion from the store itself (``prf-v1``): pseudo-relevance feedback on BM25.

A question and the memory that answers it often share no word ("what do the
kids like?" against "they were stoked for the dinosaur exhibit"), while the
memories the first pass found do share words with that memory. RM3 (Lavrenko
and Croft 2001; Abdul-Jaleel et al. 2004) takes the best terms of the top
hits and searches again. Here, without a model:

1. the top ``docs`` fused hits are read (through the same predicate as any hit);
2. each word of three or more letters in them that is not a stopword and not
   already in the query scores ``sum over hits of tf/len * 1/(k + rank)``
   (the hit's own RRF vote, as RM3 weights a document by its query
   likelihood) times its IDF in the store, and words found in fewer than two
   memories are dropped (they could only find the hit they came from);
3. the best ``terms`` words become one more BM25 query over the word index,
   and its ranked list is fused like any arm with weight ``weight``.

With ``names_only`` the candidate words are limited to capitalised words not
at a sentence start (names, places, products: "entity expansion").

FTS5 cannot weight query terms, so the expansion runs as its own arm instead
of being merged into the original query; the original arms are untouched.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from mama_core.recall.fusion import Fused, Ranked
from mama_core.recall.lexical_arm import WORD_TABLE, bm25_search
from mama_core.recall.lexical_query import quote_fts, split_runs
from mama_core.recall.predicate import Predicate
from mama_core.recall.rows import fetch_rows
from mama_core.recall.stopwords import STOPWORDS
from mama_core.recall.vector_cache import RowMask
from mama_core.store.connection import Connection

STAGE = "prf-v1"
STAGE_ARM = "prf"
# Document frequency is counted up to this many matches: beyond it a word is
# common enough that its exact IDF does not matter, and counting stops early.
DF_CAP = 200
# How many candidate words (by feedback weight) get their IDF looked up.
CANDIDATES = 20
MIN_LENGTH = 3

# A capitalised word that does not open a sentence (after . ! ? or a quote).
_NAME = re.compile(
    r"(?<![.!?\"“]\s)(?<![.!?\"“])(?<!^)\b([A-Z][\w'\u2019-]*[a-z][\w'\u2019-]*)", re.M
)


def _words(text: str) -> list[str]:
    return [run for script, run in split_runs(text) if script == "spaced"]


def _names(text: str) -> set[str]:
    return {m.group(1).casefold() for m in _NAME.finditer(text)}


def _document_frequency(conn: Connection, word: str) -> int:
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT rowid FROM {WORD_TABLE} "
        f"WHERE {WORD_TABLE} MATCH ? LIMIT {DF_CAP})",
        [quote_fts(word)],
    ).fetchone()
    return int(row[0]) if row else 0


def expansion_terms(
    conn: Connection,
    query_text: str,
    fused: Sequence[Fused],
    predicate: Predicate,
    *,
    docs: int,
    terms: int,
    k: int,
    total: int,
    names_only: bool = False,
) -> list[str]:
    """The best ``terms`` words of the top ``docs`` hits to search for again."""
    top = [f.id for f in fused[:docs]]
    rows = fetch_rows(conn, top, predicate)
    asked = {w for w in _words(query_text)}
    weight: dict[str, float] = {}
    for rank, jid in enumerate(top, start=1):
        row = rows.get(jid)
        if row is None:
            continue
        text = " ".join(part for part in (row.topic, row.summary, row.details) if part)
        words = _words(text)
        if not words:
            continue
        allowed = _names(text) if names_only else None
        counts = Counter(
            w
            for w in words
            if len(w) >= MIN_LENGTH
            and w not in STOPWORDS
            and w not in asked
            and not w.isdigit()
            and (allowed is None or w in allowed)
        )
        for word, n in counts.items():
            weight[word] = weight.get(word, 0.0) + n / len(words) / (k + rank)
    scored: list[tuple[float, str]] = []
    for word, w in sorted(weight.items(), key=lambda p: (-p[1], p[0]))[:CANDIDATES]:
        df = _document_frequency(conn, word)
        if df < 2:
            continue
        idf = math.log((max(total, df) + 1) / (df + 0.5))
        if idf > 0:
            scored.append((w * idf, word))
    scored.sort(key=lambda p: (-p[0], p[1]))
    return [word for _, word in scored[:terms]]


def expansion_arm(
    conn: Connection,
    query_text: str,
    fused: Sequence[Fused],
    predicate: Predicate,
    *,
    docs: int,
    terms: int,
    k: int,
    depth: int,
    weights: tuple[float, float, float],
    rows: RowMask | None,
    names_only: bool = False,
) -> list[Ranked]:
    """The ranked list of a BM25 search for the feedback words (empty if none)."""
    total = int(rows.mask.size) if rows is not None else DF_CAP * 10
    words = expansion_terms(
        conn,
        query_text,
        fused,
        predicate,
        docs=docs,
        terms=terms,
        k=k,
        total=total,
        names_only=names_only,
    )
    if not words:
        return []
    match = " OR ".join(quote_fts(w) for w in words)
    return bm25_search(conn, WORD_TABLE, match, predicate, depth, weights, rows)
