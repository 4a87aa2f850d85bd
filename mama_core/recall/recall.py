"""Hybrid recall: exact vector scoring and FTS5 BM25, fused by reciprocal rank.

``Recall.search`` runs, for one query and one read predicate:

1. the lexical arms (``lexical_arm``): quoted-token BM25 over the word index,
   and over the trigram index for scripts without spaces, keeping only rows
   that pass the predicate (evaluated once over the cache's metadata);
2. the vector arm (``VectorCache.search``): cosine against *every* row passing
   the predicate, then top-K;
3. fusion under the config's versioned formula (``fusion.rrf``), optional
   boosts, and a final fetch that re-checks the predicate in SQL;
4. on request, the visible predecessors of each hit, labelled ``replaced``.

Recall reads only ``judgments`` (and their bindings, edges and vectors): events
and audit records are never candidates.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, cast

import numpy as np

from mama_core.clock import to_utc
from mama_core.embeddings.base import QUERY, Embedder, score_scale
from mama_core.recall.config import PRESETS, RecallConfig
from mama_core.recall.episode import with_episode_neighbours
from mama_core.recall.expansion import STAGE_ARM as PRF_ARM
from mama_core.recall.expansion import expansion_arm
from mama_core.recall.fusion import Fused, Ranked, rrf
from mama_core.recall.history import predecessors
from mama_core.recall.lexical_arm import lexical_arms
from mama_core.recall.lexical_query import build_lexical_query, split_runs
from mama_core.recall.predicate import Predicate
from mama_core.recall.query import RecallHit, RecallQuery
from mama_core.recall.rows import Row, fetch_rows
from mama_core.recall.scripts import dominant_script, with_abstention
from mama_core.recall.temporal import asks_when, with_time_bonus
from mama_core.recall.vector_cache import RowMask, VectorCache
from mama_core.store.connection import Connection

ConnectionSource = Connection | Callable[[], Connection]


class Recall:
    """Searches one store for the judgments a caller may read.

    ``source`` is a connection (used under a lock) or a factory of connections
    (one per thread, for concurrent readers). ``embedder`` embeds query text when
    no vector is passed; ``cache`` holds the vectors of the embedder's model.
    Without a cache recall runs the lexical arms only; without an embedder the
    vector arm runs only for calls that pass ``query_vector``.
    """

    def __init__(
        self,
        source: ConnectionSource,
        embedder: Embedder | None = None,
        cache: VectorCache | None = None,
        config: RecallConfig | None = None,
    ) -> None:
        if embedder is not None and cache is not None and embedder.model_id != cache.model_id:
            raise ValueError(
                f"the vector cache holds {cache.model_id} vectors but the embedder is "
                f"{embedder.model_id}; re-embed or load the cache for this model"
            )
        self.embedder = embedder
        self.cache = cache
        self.config = config or PRESETS["default"]
        if hasattr(source, "execute"):
            self._shared: Connection | None = cast(Connection, source)
            self._factory: Callable[[], Connection] | None = None
        else:
            self._shared = None
            self._factory = cast(Callable[[], Connection], source)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._opened: list[Connection] = []
        self._executor: ThreadPoolExecutor | None = None
        self._script_of: dict[int, str | None] = {}
        # Its own lock: a search over a shared connection holds ``_lock`` throughout.
        self._script_lock = threading.Lock()

    @contextlib.contextmanager
    def _connection(self) -> Generator[Connection, None, None]:
        if self._shared is not None:
            with self._lock:
                yield self._shared
            return
        conn = getattr(self._local, "conn", None)
        if conn is None:
            assert self._factory is not None
            conn = self._factory()
            self._local.conn = conn
            with self._lock:
                self._opened.append(conn)
        yield conn

    def close(self) -> None:
        """Close the connections this recall opened (not one it was given)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        with self._lock:
            for conn in self._opened:
                with contextlib.suppress(Exception):
                    cast(Any, conn).close()
            self._opened.clear()

    def embed_query(self, text: str) -> np.ndarray | None:
        """The query's vector (as a query, not a passage), or None when there is no embedder."""
        return None if self.embedder is None else self.embedder.embed_one(text, QUERY)

    def search(
        self,
        query: RecallQuery,
        *,
        query_vector: np.ndarray | None = None,
        config: RecallConfig | None = None,
    ) -> list[RecallHit]:
        """The best ``query.limit`` judgments the caller may read, best first.

        ``query_vector`` skips embedding (benchmarks time it separately);
        ``config`` overrides the recall's own for this call (e.g. a preset).
        """
        cfg = config or self.config
        predicate = query.predicate()
        if predicate.selects_nothing or not query.text.strip():
            return []
        depth = max(cfg.arm_depth, query.limit)
        # The predicate over the cache's rows, once, for every arm and stage.
        rows = self.cache.predicate_mask(predicate) if self.cache is not None else None
        with self._connection() as conn:
            arms = self._arms(conn, query.text, predicate, depth, cfg, query_vector, rows)
            if cfg.cross_script and arms.get("vector") and len(arms) > 1:
                candidates = [r.id for r in arms["vector"]]
                arms = with_abstention(
                    arms, dominant_script(query.text), self._scripts(conn, candidates)
                )
            weights = {
                "bm25": cfg.bm25_weight,
                "trigram": cfg.trigram_weight,
                "vector": cfg.vector_weight,
            }
            fused = rrf(arms, weights, cfg.rrf_k)
            if cfg.prf_weight > 0 and fused and cfg.bm25_weight > 0:
                extra = expansion_arm(
                    conn,
                    query.text,
                    fused,
                    predicate,
                    docs=cfg.prf_docs,
                    terms=cfg.prf_terms,
                    k=cfg.rrf_k,
                    depth=depth,
                    weights=cfg.bm25_weights,
                    rows=rows,
                    names_only=cfg.prf_names_only,
                )
                if extra:
                    arms[PRF_ARM] = extra
                    fused = rrf(arms, {**weights, PRF_ARM: cfg.prf_weight}, cfg.rrf_k)
            if cfg.episode_weight > 0 and self.cache is not None and rows is not None:
                fused = with_episode_neighbours(
                    fused,
                    self.cache,
                    rows,
                    weight=cfg.episode_weight,
                    seeds=cfg.episode_seeds,
                    width=cfg.episode_width,
                    k=cfg.rrf_k,
                )
            if cfg.when_weight > 0 and fused and asks_when(query.text):
                fused = with_time_bonus(
                    conn,
                    fused,
                    predicate,
                    weight=cfg.when_weight,
                    depth=cfg.when_depth,
                    k=cfg.rrf_k,
                )
            if cfg.recency_weight > 0 or cfg.topic_weight > 0:
                fused = self._boost(conn, fused, query, predicate, cfg)
            hits = _materialise(conn, fused, predicate, query.limit)
            if query.include_history and hits:
                hits = _with_history(conn, hits, predicate)
        return hits

    def _arms(
        self,
        conn: Connection,
        text: str,
        predicate: Predicate,
        depth: int,
        cfg: RecallConfig,
        query_vector: np.ndarray | None,
        rows: RowMask | None,
    ) -> dict[str, list[Ranked]]:
        """Every enabled arm's ranked list, in a fixed order (bm25, trigram, vector).

        With per-thread connections the lexical arms run on a worker thread while
        this one embeds the query and scores vectors: SQLite and numpy both release
        the GIL, so the two halves overlap on a second core.
        """
        lexical = build_lexical_query(text) if cfg.lexical_enabled else None
        vector_arm = cfg.vector_enabled and self.cache is not None

        def lexical_job(c: Connection) -> dict[str, list[Ranked]]:
            if lexical is None or lexical.is_empty:
                return {}
            return lexical_arms(
                c,
                lexical,
                predicate,
                depth,
                cfg.bm25_weights,
                words=cfg.bm25_weight > 0,
                trigrams=cfg.trigram_weight > 0,
                partial_fallback=cfg.trigram_fallback,
                rows=rows,
            )

        arms: dict[str, list[Ranked]] = {}
        pending: Future[dict[str, list[Ranked]]] | None = None
        if vector_arm and self._factory is not None and lexical is not None:
            pending = self._worker().submit(self._with_own_connection, lexical_job)
        else:
            arms.update(lexical_job(conn))
        try:
            if vector_arm and self.cache is not None:
                vector = query_vector if query_vector is not None else self.embed_query(text)
                if vector is not None:
                    matches = self.cache.search(vector, predicate, depth, rows=rows)
                    floor = cfg.vector_min_score
                    if floor is None:
                        floor = score_scale(self.embedder).relevance_floor
                    arms["vector"] = [
                        Ranked(m.id, m.score, m.rank)
                        for m in matches
                        if floor <= 0 or m.score >= floor
                    ]
        finally:
            if pending is not None:
                arms.update(pending.result())
        return {arm: arms[arm] for arm in ("bm25", "trigram", "vector") if arm in arms}

    def _scripts(self, conn: Connection, ids: Sequence[int]) -> dict[int, str | None]:
        """Each judgment's dominant script (``recall.scripts``), kept per id: a judgment's
        text never changes (a purge empties it, and the predicate then drops it)."""
        with self._script_lock:
            missing = [i for i in ids if i not in self._script_of]
        if missing:
            marks = ",".join("?" * len(missing))
            found = conn.execute(
                f"SELECT id, summary FROM judgments WHERE id IN ({marks})", missing
            ).fetchall()
            with self._script_lock:
                for jid, summary in found:
                    self._script_of[int(jid)] = dominant_script(str(summary or ""))
        with self._script_lock:
            return {i: self._script_of.get(i) for i in ids}

    def _worker(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="mama-recall")
            return self._executor

    def _with_own_connection(
        self, job: Callable[[Connection], dict[str, list[Ranked]]]
    ) -> dict[str, list[Ranked]]:
        with self._connection() as conn:
            return job(conn)

    def _boost(
        self,
        conn: Connection,
        fused: list[Fused],
        query: RecallQuery,
        predicate: Predicate,
        cfg: RecallConfig,
    ) -> list[Fused]:
        """Add the optional recency and topic bonuses, in units of a rank-1 RRF term."""
        rows = fetch_rows(conn, [f.id for f in fused], predicate)
        unit = 1.0 / (cfg.rrf_k + 1)
        now = to_utc(query.valid_at) if query.valid_at is not None else datetime.now(UTC)
        words = {run for _, run in split_runs(query.text)}
        boosted: list[Fused] = []
        for item in fused:
            row = rows.get(item.id)
            if row is None:
                continue
            bonus = 0.0
            if cfg.recency_weight > 0:
                age_days = max((now - to_utc(row.valid_from)).total_seconds() / 86_400, 0.0)
                decay = math.pow(0.5, age_days / cfg.recency_half_life_days)
                bonus += cfg.recency_weight * unit * decay
            if cfg.topic_weight > 0 and words & {run for _, run in split_runs(row.topic)}:
                bonus += cfg.topic_weight * unit
            boosted.append(Fused(item.id, item.score + bonus, item.arms))
        boosted.sort(key=lambda f: (-round(f.score, 12), -f.id))
        return boosted


def _materialise(
    conn: Connection, fused: list[Fused], predicate: Predicate, limit: int
) -> list[RecallHit]:
    """The first ``limit`` fused candidates that still pass the predicate, as hits."""
    hits: list[RecallHit] = []
    step = max(limit * 2, 20)
    for start in range(0, len(fused), step):
        chunk = fused[start : start + step]
        rows = fetch_rows(conn, [f.id for f in chunk], predicate)
        for item in chunk:
            row = rows.get(item.id)
            if row is not None:
                hits.append(row.hit(item.score, item.arms))
                if len(hits) == limit:
                    return hits
    return hits


def _with_history(conn: Connection, hits: list[RecallHit], predicate: Predicate) -> list[RecallHit]:
    """Each hit followed by its visible predecessors, labelled ``replaced``."""
    chains = predecessors(conn, [h.id for h in hits], predicate)
    out: list[RecallHit] = []
    shown = {h.id for h in hits}
    for hit in hits:
        out.append(hit)
        for row, successor in chains.get(hit.id, []):
            if row.id in shown:
                continue
            shown.add(row.id)
            out.append(_replaced(row, successor))
    return out


def _replaced(row: Row, successor: int) -> RecallHit:
    return row.hit(0.0, {}, label="replaced", replaced_by=successor)
