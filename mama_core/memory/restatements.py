"""Restatements: a save that says again what a live memory already says.

Saving "We ship on Thursdays" twice and then "We ship on Thursday" should leave one
memory, not three. A save restates a live record when both have the same kind and
exactly the same scopes, and their texts mean the same: the same normalised text,
or vectors at least the model's ``restatement_threshold`` cosine-close while the
words (``tombstone_match``: polarity, opposites, numbers, dates, names, a swapped
word) do not tell them apart. It is the tombstone matcher applied to live records,
with its own threshold measured on ``bench/data/duplicate_pairs.json``
(``python -m bench.duplicates``).

The same test groups search results at read time (``group_hits``), so stores that
already hold near-same records show them as one result with "also said as".
Two records the owner linked (``relates_to``, as an insisted save does) are never
grouped: the owner said they are two things.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from mama_core.memory.tombstone_match import near_duplicate, numbers_in_order
from mama_core.normal_text import normalise, said
from mama_core.recall.lexical_arm import TRIGRAM_TABLE, WORD_TABLE
from mama_core.recall.lexical_query import build_lexical_query, quote_fts
from mama_core.recall.stopwords import STOPWORDS
from mama_core.recall.vector_cache import VectorCache
from mama_core.scopes.bindings import bound_up_to, first_scope_rows, same_scopes_predicate
from mama_core.store.connection import Connection

NEVER_MERGED_KINDS: frozenset[str] = frozenset({"commitment"})
"""A commitment's terms (who, to whom, by when) are its meaning, not its words: two
"send the deck" commitments are two promises."""


WORD_OVERLAP = 0.5
"""The share of the shorter summary's content words the other must also say. A close
cosine alone merged unrelated rules of one shape: e5 scored "Quote the ticket number"
and "Sign with initials" (both "when writing to the owner") above its threshold, and
MiniLM's held-out precision was 0.917 without this (``bench.duplicates``). A restatement
rewords a little and keeps most of its words; a translation shares none, but e5 scores
translations below the threshold anyway."""

_TOKEN = re.compile(r"[^\W_]+")
_UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
STEM = 5
"""Words are compared by their first letters ("Thursdays"/"Thursday", "commence"/
"commencer"): a gate that lets a few different words pass costs nothing, as the
cosine and the word checks still decide."""


def content_words(text: str) -> frozenset[str]:
    """The words of ``text`` that carry meaning: folded, English function words dropped,
    each cut to its first ``STEM`` letters; a script written without spaces gives its
    character pairs instead."""
    found: set[str] = set()
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _UNSPACED.search(token):
            found.update(token[i : i + 2] for i in range(max(1, len(token) - 1)))
        elif token not in STOPWORDS:
            found.add(token[:STEM])
    return frozenset(found)


def words_overlap(first: str, second: str) -> float:
    """The share of the shorter text's content words the other says too (1.0 when
    either has none: then the words cannot tell)."""
    a, b = content_words(first), content_words(second)
    if not a or not b:
        return 1.0
    return len(a & b) / min(len(a), len(b))


def same_meaning(
    first: str,
    second: str,
    similarity: float | None,
    threshold: float,
    swap_same_meaning: float = 0.0,
    summaries: tuple[str, str] | None = None,
) -> bool:
    """Whether two texts (``said``) say the same: the same normalised text, or
    ``similarity`` (None: no vectors to compare) at or above ``threshold`` with most
    words shared (``WORD_OVERLAP``, on ``summaries`` when given: a shared "when it
    applies" is no evidence) and no word telling them apart."""
    if normalise(first) == normalise(second):
        return True
    return close_meaning(first, second, similarity, threshold, swap_same_meaning, summaries)


def close_meaning(
    first: str,
    second: str,
    similarity: float | None,
    threshold: float,
    swap_same_meaning: float = 0.0,
    summaries: tuple[str, str] | None = None,
) -> bool:
    """``same_meaning`` past its first test (the same normalised text): the vectors and
    the words. Split out so a caller comparing one text with many normalises it once."""
    if similarity is None or similarity < threshold:
        return False
    if numbers_in_order(first) != numbers_in_order(second):
        return False  # "thread 1 item 0" is not "thread 0 item 1"
    if words_overlap(*(summaries or (first, second))) < WORD_OVERLAP:
        return False
    return near_duplicate(first, second, similarity, threshold, swap_same_meaning)


@dataclass(frozen=True)
class Restatement:
    """The live record a save restates."""

    judgment_id: int
    status: str
    summary: str
    similarity: float | None
    """None: the same text after normalising; else the cosine of the two vectors."""


SCAN_ALL = 200
"""Up to this many live records in a save's neighbourhood (same kind, same scopes),
every one's vector is compared; beyond it only ``LEXICAL_CANDIDATES`` found by the
words, so a save's cost does not grow with the store (nor an import's with its square:
reading 2,000 made ``bench.write``'s import 5x slower). The words lose little: e5
scores translations, which share none, below the threshold anyway."""
SCAN_SCOPE_PER_RECORD = 4
"""A neighbourhood is read whole only when its first scope holds at most
``SCAN_ALL * SCAN_SCOPE_PER_RECORD`` records: finding a small neighbourhood reads its
whole scope (no index has kind and scopes together), which grew with the store."""
LEXICAL_CANDIDATES = 100
RANKED_MATCHES = 300
"""At most about this many full-text matches are ranked per save. FTS5 scores every
match before its ``LIMIT``, and a sentence's common words match a share of the whole
store (16 ms a save at 10k, growing with it), so the save's rarest words are kept while
their matches fit: they carry nearly all of BM25's weight, and a restatement keeps
most of its words, the rare ones among them."""


def find_restatement(
    conn: Connection,
    *,
    kind: str,
    scopes: Sequence[str],
    summary: str,
    applies_when: str | None,
    vector: np.ndarray | None,
    model_id: str,
    threshold: float,
    swap_same_meaning: float,
    statuses: Sequence[str],
    scan_all: int = SCAN_ALL,
    ranked_matches: int = RANKED_MATCHES,
) -> Restatement | None:
    """The live record (one of ``statuses``) of ``kind`` in exactly ``scopes`` that a
    save of ``summary`` restates, the closest first; None if there is none.

    A neighbourhood of at most ``scan_all`` records, in a first scope of at most
    ``SCAN_SCOPE_PER_RECORD`` times as many, is read whole (a translation shares no
    words with its original); otherwise it is narrowed to the records the full-text
    indexes rank highest for the save's rarest words, then compared the same way."""
    if kind in NEVER_MERGED_KINDS or not scopes:
        return None
    same_scopes, scope_params = same_scopes_predicate("j", scopes)
    live = f"j.kind = ? AND j.status IN (SELECT value FROM json_each(?)) AND {same_scopes}"
    live_params: list[object] = [kind, json.dumps(list(statuses)), *scope_params]
    neighbourhood, neighbourhood_params = first_scope_rows("j", scopes)
    # A neighbourhood is found by reading its first scope's records: past SCAN_SCOPE
    # of them the words narrow it instead, or a small neighbourhood in a large scope
    # (decisions in "global") would read the whole scope on every save.
    crowded = (
        bound_up_to(conn, min(scopes), scan_all * SCAN_SCOPE_PER_RECORD + 1)
        > scan_all * SCAN_SCOPE_PER_RECORD
        or conn.execute(
            f"SELECT 1 FROM {neighbourhood} WHERE {live} LIMIT 1 OFFSET ?",
            [*neighbourhood_params, *live_params, scan_all],
        ).fetchone()
        is not None
    )
    source, source_params = neighbourhood, neighbourhood_params
    if crowded:
        # The candidates drive the read: each is looked up by id and tested.
        candidates = _worded_candidates(conn, said(summary, applies_when), ranked_matches)
        source = "json_each(?) AS c CROSS JOIN judgments AS j ON j.id = c.value"
        source_params = [json.dumps(candidates)]
    rows = conn.execute(
        "SELECT j.id, j.status, j.summary, j.applies_when, e.vector "
        f"FROM {source} LEFT JOIN embeddings e ON e.judgment_id = j.id AND e.model_id = ? "
        f"WHERE {live} ORDER BY j.id",
        [*source_params, model_id, *live_params],
    ).fetchall()
    return _closest(rows, summary, applies_when, vector, threshold, swap_same_meaning)


def _closest(
    rows: Sequence[Any],
    summary: str,
    applies_when: str | None,
    vector: np.ndarray | None,
    threshold: float,
    swap_same_meaning: float,
) -> Restatement | None:
    """Of ``rows`` ``(id, status, summary, applies_when, vector blob)``, in id order, the
    one the save restates, the closest first."""
    text = said(summary, applies_when)
    normal = normalise(text)  # once, not once per candidate: it was most of a save's time
    best: Restatement | None = None
    for jid, status, old_summary, old_when, blob in rows:
        similarity = _cosine(vector, blob)
        old_text = said(str(old_summary), old_when)
        if normalise(old_text) != normal and not close_meaning(
            old_text,
            text,
            similarity,
            threshold,
            swap_same_meaning,
            summaries=(str(old_summary), summary),
        ):
            continue
        found = Restatement(int(jid), str(status), str(old_summary), similarity)
        if best is None or _closer(found, best):
            best = found
    return best


NEAR_SCAN = 1_000
"""A neighbourhood of up to this many records is scored whole from the vector cache
(copying 1,000 vectors and one product: well under a millisecond)."""
CACHE_MARGIN = 0.02
"""How far below the threshold the in-memory vectors' cosine may fall and the record
still be read to compare (a float16 cache rounds; the comparison uses the stored
float32 vector)."""


class NearRecords:
    """Where a save finds the records it may restate without reading its neighbourhood:
    the engine's vector cache (every committed record, kept current from the writer's
    change-sets) and the records the open transaction saved before it (a bulk import
    saves hundreds in one, and each must see the ones before).

    Used on the writer thread only. ``begin`` is called at each transaction's start
    (a rolled-back transaction's records are forgotten with it)."""

    def __init__(self, cache: Callable[[], VectorCache | None]) -> None:
        self._cache = cache
        self._ids: set[int] = set()
        self._places: dict[tuple[str, frozenset[str]], tuple[list[int], list[np.ndarray]]] = {}

    def cache(self) -> VectorCache | None:
        """The loaded vector cache, or None (no search or import loaded it yet)."""
        return self._cache()

    def begin(self) -> None:
        self._ids.clear()
        self._places.clear()

    def wrote(self, judgment_id: int, kind: str, scopes: Iterable[str], vector: np.ndarray) -> None:
        """A save of the open transaction wrote this record."""
        ids, vectors = self._places.setdefault((kind, frozenset(scopes)), ([], []))
        ids.append(judgment_id)
        vectors.append(np.asarray(vector, dtype=np.float32).reshape(-1))
        self._ids.add(judgment_id)

    @property
    def written(self) -> AbstractSet[int]:
        """The records the open transaction saved."""
        return self._ids

    def close(
        self, vector: np.ndarray, kind: str, scopes: frozenset[str], floor: float, after: int
    ) -> list[int]:
        """The open transaction's records of ``kind`` in exactly ``scopes``, newer than
        ``after``, whose cosine with ``vector`` is at least ``floor``."""
        place = self._places.get((kind, scopes))
        if place is None:
            return []
        ids, vectors = place
        shaped = [i for i, v in enumerate(vectors) if ids[i] > after and v.shape == vector.shape]
        if not shaped:
            return []
        scores = np.stack([vectors[i] for i in shaped]) @ vector
        return [ids[shaped[j]] for j in np.flatnonzero(scores >= floor)]


def find_restatement_near(
    conn: Connection,
    near: NearRecords,
    cache: VectorCache,
    *,
    kind: str,
    scopes: Sequence[str],
    summary: str,
    applies_when: str | None,
    said_key: str,
    vector: np.ndarray,
    model_id: str,
    threshold: float,
    swap_same_meaning: float,
    statuses: Sequence[str],
    scan_up_to: int = NEAR_SCAN,
    ranked_matches: int = RANKED_MATCHES,
) -> Restatement | None:
    """``find_restatement``'s answer found without reading the neighbourhood: the
    records to compare are those whose vector the cache (or this transaction's earlier
    saves) puts within ``CACHE_MARGIN`` of ``threshold``, those with the save's exact
    words (``said_keys``, one index lookup), and any record newer than the cache that
    this transaction did not write (another process's latest commit). Only those rows
    are read, with their stored vectors, and compared as ``find_restatement`` does.

    A neighbourhood of up to ``scan_up_to`` records is scored whole (``SCAN_ALL``
    rows were read whole before); a larger one only among the records the words find
    (``_worded_candidates``, as ``find_restatement`` does past ``SCAN_ALL``)."""
    if kind in NEVER_MERGED_KINDS or not scopes:
        return None
    wanted = frozenset(scopes)
    floor = threshold - CACHE_MARGIN
    ids, known = cache.close_rows(vector, kind, wanted, floor, scan_up_to)
    if ids is None:
        # Too many to score on every save (a product over 40k rows is 5-10 ms): the
        # words narrow it first, as find_restatement narrows a crowded neighbourhood.
        words = _worded_candidates(conn, said(summary, applies_when), ranked_matches)
        ids, known = cache.close_rows(vector, kind, wanted, floor, scan_up_to, among=words)
    chosen = set(ids or ())
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    chosen.update(near.close(query, kind, wanted, floor, known))
    written = near.written
    # Newer than the cache and not this transaction's: another process's latest commit.
    for (jid,) in conn.execute(
        "SELECT id FROM judgments WHERE id > ? AND kind = ?", (known, kind)
    ).fetchall():
        if int(jid) not in written:
            chosen.add(int(jid))
    for (jid,) in conn.execute(
        "SELECT judgment_id FROM said_keys WHERE said_key = ?", (said_key,)
    ).fetchall():
        chosen.add(int(jid))
    if not chosen:
        return None
    same_scopes, scope_params = same_scopes_predicate("j", scopes)
    rows = conn.execute(
        "SELECT j.id, j.status, j.summary, j.applies_when, e.vector "
        "FROM json_each(?) AS c CROSS JOIN judgments AS j ON j.id = c.value "
        "LEFT JOIN embeddings e ON e.judgment_id = j.id AND e.model_id = ? "
        "WHERE j.kind = ? AND j.status IN (SELECT value FROM json_each(?)) "
        f"AND {same_scopes} ORDER BY j.id",
        [json.dumps(sorted(chosen)), model_id, kind, json.dumps(list(statuses)), *scope_params],
    ).fetchall()
    return _closest(rows, summary, applies_when, vector, threshold, swap_same_meaning)


def _worded_candidates(
    conn: Connection, text: str, ranked_matches: int = RANKED_MATCHES
) -> list[int]:
    """The records the word and trigram indexes rank highest for ``text``'s rarest
    words, whoever's they are: admitting each by status, kind and scope first would
    read every match's (encrypted) row; the caller's own query keeps only the live
    ones of the neighbourhood.

    Each word's matches are counted up to ``ranked_matches`` (an index read that stops
    there); the rarest words are ranked together while their matches fit. When even the
    rarest word is that common, its latest matches stand in for a ranking."""
    lexical = build_lexical_query(text)
    # Words where the text has them; trigrams only for scripts written without spaces
    # (a long sentence's trigrams match nearly every record).
    table, terms = WORD_TABLE, lexical.words
    if not terms:
        table, terms = TRIGRAM_TABLE, lexical.trigrams
    if not terms:
        return []
    counted = sorted(
        (_matches_up_to(conn, table, term, ranked_matches + 1), index, term)
        for index, term in enumerate(terms)
    )
    chosen: list[str] = []
    matches = 0
    for count, _, term in counted:
        if chosen and matches + count > ranked_matches:
            break
        chosen.append(term)
        matches += count
    order = "rank" if matches <= ranked_matches else "rowid DESC"
    rows = conn.execute(
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY {order} LIMIT ?",
        (" OR ".join(quote_fts(t) for t in chosen), LEXICAL_CANDIDATES),
    ).fetchall()
    return sorted(int(r[0]) for r in rows)


def _matches_up_to(conn: Connection, table: str, term: str, limit: int) -> int:
    """How many records of ``table`` match ``term``, counted no further than ``limit``."""
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
        (quote_fts(term), limit),
    ).fetchone()
    return int(row[0])


def _closer(a: Restatement, b: Restatement) -> bool:
    """Same text beats any cosine; then the higher cosine; ties keep the older record."""
    if b.similarity is None:
        return False
    return a.similarity is None or a.similarity > b.similarity


def _cosine(vector: np.ndarray | None, blob: bytes | None) -> float | None:
    if vector is None or blob is None:
        return None
    stored = np.frombuffer(blob, dtype="<f4")
    if stored.shape != vector.shape:
        return None
    return float(np.dot(stored, vector))


H = TypeVar("H")


@dataclass(frozen=True)
class HitFacts:
    """What grouping compares of one search hit."""

    id: int
    kind: str
    status: str
    scopes: frozenset[str]
    text: str
    """``said(summary, applies_when)``."""
    summary: str
    groupable: bool = True
    """False for a hit shown for another reason (a replaced predecessor in history)."""


def group_hits(
    conn: Connection,
    hits: Sequence[H],
    facts: Callable[[H], HitFacts],
    model_id: str,
    threshold: float,
    swap_same_meaning: float = 0.0,
) -> list[list[H]]:
    """``hits`` (best first) in groups that say the same thing, each group led by its
    best-ranked hit, groups in the order of their leaders.

    A hit joins the first group whose leader it restates (same kind, status and scope
    set, ``same_meaning``), so a chain of small rewordings never drifts far from its
    leader. Only the hits given are compared (a search's top-k): grouping costs k
    vectors read and at most k² dot products, whatever the store's size."""
    described = [facts(h) for h in hits]
    vectors = _vectors(conn, [f.id for f in described], model_id)
    linked = _linked_pairs(conn, [f.id for f in described])
    groups: list[list[int]] = []
    for index, hit in enumerate(described):
        for group in groups:
            leader = described[group[0]]
            if _restates(leader, hit, vectors, linked, threshold, swap_same_meaning):
                group.append(index)
                break
        else:
            groups.append([index])
    return [[hits[i] for i in group] for group in groups]


def _restates(
    leader: HitFacts,
    hit: HitFacts,
    vectors: dict[int, np.ndarray],
    linked: set[tuple[int, int]],
    threshold: float,
    swap_same_meaning: float,
) -> bool:
    if not (leader.groupable and hit.groupable):
        return False
    if (leader.kind, leader.status, leader.scopes) != (hit.kind, hit.status, hit.scopes):
        return False
    if leader.kind in NEVER_MERGED_KINDS or (min(leader.id, hit.id), max(leader.id, hit.id)) in (
        linked
    ):
        return False
    a, b = vectors.get(leader.id), vectors.get(hit.id)
    similarity = None if a is None or b is None else float(np.dot(a, b))
    return same_meaning(
        leader.text,
        hit.text,
        similarity,
        threshold,
        swap_same_meaning,
        summaries=(leader.summary, hit.summary),
    )


def _vectors(conn: Connection, ids: Sequence[int], model_id: str) -> dict[int, np.ndarray]:
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT judgment_id, vector FROM embeddings WHERE model_id = ? "
        "AND judgment_id IN (SELECT value FROM json_each(?))",
        (model_id, json.dumps(list(ids))),
    ).fetchall()
    return {int(jid): np.frombuffer(blob, dtype="<f4") for jid, blob in rows}


def _linked_pairs(conn: Connection, ids: Iterable[int]) -> set[tuple[int, int]]:
    """Pairs among ``ids`` the owner linked as related: two records, not one said twice."""
    wanted = json.dumps(sorted(set(ids)))
    rows = conn.execute(
        "SELECT src_id, dst_id FROM edges WHERE kind = 'relates_to' "
        "AND src_id IN (SELECT value FROM json_each(:ids)) "
        "AND dst_id IN (SELECT value FROM json_each(:ids))",
        {"ids": wanted},
    ).fetchall()
    return {(min(int(a), int(b)), max(int(a), int(b))) for a, b in rows}
