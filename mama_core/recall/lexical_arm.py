"""The lexical arms: FTS5 BM25 over the word index and the trigram index.

Each arm ranks the matches of a quoted-token query (see ``lexical_query``) by
``bm25()`` with per-column weights and keeps only rows that pass the read
predicate *before* the cut to ``depth``, so a caller's depth is never spent on
rows it may not see. The predicate is applied from the vector cache's metadata
when recall has a cache (fast), else in the same SQL statement (a join).
"""

from __future__ import annotations

import numpy as np

from mama_core.recall.fusion import Ranked, rank_list
from mama_core.recall.lexical_query import LexicalQuery
from mama_core.recall.predicate import Predicate
from mama_core.recall.vector_cache import RowMask
from mama_core.store.connection import Connection

WORD_TABLE = "judgments_fts"
TRIGRAM_TABLE = "judgments_trigram"


def bm25_search(
    conn: Connection,
    table: str,
    match: str,
    predicate: Predicate,
    depth: int,
    weights: tuple[float, float, float],
    rows: RowMask | None = None,
) -> list[Ranked]:
    """Rows of ``table`` matching ``match`` that pass ``predicate``, best BM25 first.

    Scores are ``-bm25()`` (higher is better); ties go to the newer id. With
    ``rows`` (the predicate evaluated by the vector cache) matches are admitted
    from memory; otherwise each match is joined to its judgment in SQL.
    """
    if table not in (WORD_TABLE, TRIGRAM_TABLE):
        raise ValueError(f"not a full-text table: {table}")
    if predicate.selects_nothing:
        return []
    if rows is not None:
        return _admitted_by_mask(conn, table, match, predicate, depth, weights, rows)
    where, params = predicate.sql("j", by_id=True)
    found = conn.execute(
        f"SELECT m.id, m.score FROM ("
        f"  SELECT rowid AS id, bm25({table}, ?, ?, ?) AS score"
        f"  FROM {table} WHERE {table} MATCH ?"
        f") AS m JOIN judgments AS j ON j.id = m.id "
        f"WHERE {where} ORDER BY m.score ASC, m.id DESC LIMIT ?",
        [*weights, match, *params, depth],
    ).fetchall()
    return rank_list([(int(jid), -float(score)) for jid, score in found])


def _admitted_by_mask(
    conn: Connection,
    table: str,
    match: str,
    predicate: Predicate,
    depth: int,
    weights: tuple[float, float, float],
    rows: RowMask,
) -> list[Ranked]:
    """BM25 over every match, the predicate applied from memory before the cut.

    Reading each match's judgment row costs a decrypted page read per match
    (measured 35 ms for 5,000 matches in a 100k store); FTS5 alone ranks them in
    a few. So FTS5 returns matches in rank order, enough of them for ``depth``
    to pass at the predicate's share of rows, and the cache's mask admits them;
    if too few pass, the next round asks for four times as many, until the
    matches run out. The result is the same as filtering first: every match
    ranked above the last one kept was looked at.
    """
    share = max(float(rows.mask.mean()) if rows.mask.size else 1.0, 1e-3)
    limit = max(int(depth / share * 1.5), depth)
    while True:
        found = conn.execute(
            f"SELECT rowid, bm25({table}, ?, ?, ?) AS score FROM {table} "
            f"WHERE {table} MATCH ? ORDER BY score ASC, rowid DESC LIMIT ?",
            [*weights, match, limit],
        ).fetchall()
        if not found:
            return []
        ids = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
        passes, unknown = rows.admits(ids)
        if unknown.any():
            # Newer than the cache's last change-set: ask the store itself.
            visible = _visible(conn, [int(i) for i in ids[unknown]], predicate)
            passes[unknown] = np.fromiter((int(i) in visible for i in ids[unknown]), dtype=np.bool_)
        kept = np.flatnonzero(passes)[:depth]
        if kept.size >= depth or len(found) < limit:
            return rank_list([(int(found[i][0]), -float(found[i][1])) for i in kept])
        limit *= 4


def _visible(conn: Connection, ids: list[int], predicate: Predicate) -> set[int]:
    where, params = predicate.sql("j", by_id=True)
    out: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found = conn.execute(
            f"SELECT j.id FROM judgments AS j WHERE j.id IN ({', '.join('?' * len(chunk))}) "
            f"AND {where}",
            [*chunk, *params],
        ).fetchall()
        out.update(int(r[0]) for r in found)
    return out


def substring_search(
    conn: Connection, needles: tuple[str, ...], predicate: Predicate, depth: int
) -> list[Ranked]:
    """Rows containing any of ``needles`` (too short for trigrams), by matches then newest.

    A plain scan: used only when a query has nothing an index could look up
    (a one- or two-character Chinese or Japanese word, say).
    """
    if not needles or predicate.selects_nothing:
        return []
    where, params = predicate.sql("j")
    hits: list[str] = []
    like_params: list[object] = []
    for needle in needles:
        pattern = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        hits.append(
            "((j.topic LIKE ? ESCAPE '\\') + (j.summary LIKE ? ESCAPE '\\')"
            " + (j.details LIKE ? ESCAPE '\\') > 0)"
        )
        like_params.extend([pattern, pattern, pattern])
    score = " + ".join(hits)
    rows = conn.execute(
        f"SELECT id, score FROM (SELECT j.id AS id, ({score}) AS score FROM judgments AS j "
        f"WHERE {where}) WHERE score > 0 ORDER BY score DESC, id DESC LIMIT ?",
        [*like_params, *params, depth],
    ).fetchall()
    return rank_list([(int(jid), float(score)) for jid, score in rows])


def lexical_arms(
    conn: Connection,
    query: LexicalQuery,
    predicate: Predicate,
    depth: int,
    weights: tuple[float, float, float],
    *,
    words: bool = True,
    trigrams: bool = True,
    partial_fallback: bool = True,
    rows: RowMask | None = None,
) -> dict[str, list[Ranked]]:
    """The ranked lists of the word arm (``bm25``) and the trigram arm (``trigram``).

    The trigram arm takes the query's CJK/Thai/Korean pieces; when the word arm
    finds nothing it also tries Latin words as substrings (partial words), and
    when no index can be asked it falls back to a substring scan.
    """
    out: dict[str, list[Ranked]] = {}
    word_match = query.word_match()
    if words and word_match:
        out["bm25"] = bm25_search(conn, WORD_TABLE, word_match, predicate, depth, weights, rows)
    if not trigrams:
        return out
    trigram_match = query.trigram_match()
    if partial_fallback and not out.get("bm25") and query.partials:
        partial = query.partial_match()
        trigram_match = f"{trigram_match} OR {partial}" if trigram_match else partial
    if trigram_match:
        out["trigram"] = bm25_search(
            conn, TRIGRAM_TABLE, trigram_match, predicate, depth, weights, rows
        )
    elif query.short and not word_match:
        out["trigram"] = substring_search(conn, query.short, predicate, depth)
    return out
