"""Re-embedding: give every judgment a vector from the configured model.

When the embedding model changes, each judgment needs a vector of the new
``model_id`` (vectors of different models are never compared). ``reembed``
embeds, in batches, every judgment that is not purged and lacks one, and commits
each batch in its own transaction, so an interrupted run keeps what it finished
and the next call continues from there. It only ever inserts ``embeddings``
rows.

Each batch takes ``BEGIN IMMEDIATE`` on the connection it was given, so another
process's writer waits for it; it must not run on a connection an ``Engine``'s
writer thread is using at the same time. A row purged meanwhile gets no vector.
A running engine catches up with ``Engine.catch_up_vectors`` instead, which uses
the pieces below (``lacking_rows``, ``embed_rows``, ``write_vectors``) and commits
each batch on its writer thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mama_core.embeddings.base import PASSAGE, Embedder
from mama_core.model import embedding_text
from mama_core.store.connection import Connection

Progress = Callable[[int, int, str], None]

_LACKING = (
    "FROM judgments AS j WHERE j.status != 'purged' AND NOT EXISTS "
    "(SELECT 1 FROM embeddings AS e WHERE e.judgment_id = j.id AND e.model_id = ?)"
)


@dataclass(frozen=True)
class ReembedResult:
    """What a run did: vectors written, and judgments still lacking one afterwards."""

    model_id: str
    embedded: int
    remaining: int


def count_missing(conn: Connection, model_id: str) -> int:
    """Judgments (not purged) with no vector of ``model_id``."""
    return int(conn.execute(f"SELECT count(*) {_LACKING}", (model_id,)).fetchone()[0])


def reembed(
    store_or_conn: Any,
    embedder: Embedder,
    progress: Progress | None = None,
    batch: int = 64,
) -> ReembedResult:
    """Embed every judgment lacking a ``embedder.model_id`` vector; resumable.

    ``store_or_conn`` is a ``Store`` (its write connection is used) or a connection.
    ``progress(done, total, message)`` is called after each batch.
    """
    if batch < 1:
        raise ValueError("batch must be >= 1")
    conn: Connection = getattr(store_or_conn, "conn", store_or_conn)
    model_id, dim = embedder.model_id, embedder.dim
    total = count_missing(conn, model_id)
    done = 0
    if progress is not None:
        progress(0, total, f"embedding {total} judgments with {model_id}")
    last_id = 0
    while True:
        rows = conn.execute(
            f"SELECT j.id, j.topic, j.summary, j.details, j.applies_when {_LACKING} "
            "AND j.id > ? ORDER BY j.id LIMIT ?",
            (model_id, last_id, batch),
        ).fetchall()
        if not rows:
            break
        last_id = int(rows[-1][0])
        done += write_vectors(conn, model_id, dim, embed_rows(embedder, rows))
        if progress is not None:
            progress(min(done, total), total, f"embedded up to judgment {last_id}")
    return ReembedResult(model_id, done, count_missing(conn, model_id))


def lacking_rows(conn: Connection, model_id: str, ids: list[int]) -> list[tuple[Any, ...]]:
    """``(id, topic, summary, details, applies_when)`` of those of ``ids`` that still
    lack a ``model_id`` vector (and are not purged), oldest first."""
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    return conn.execute(
        f"SELECT j.id, j.topic, j.summary, j.details, j.applies_when {_LACKING} "
        f"AND j.id IN ({marks}) ORDER BY j.id",
        (model_id, *ids),
    ).fetchall()


def embed_rows(embedder: Embedder, rows: list[tuple[Any, ...]]) -> list[tuple[int, bytes]]:
    """``(judgment id, float32 little-endian vector)`` for rows as ``lacking_rows`` gives them."""
    texts = [embedding_text(r[1], r[2], r[3], r[4]) for r in rows]
    vectors = np.ascontiguousarray(embedder.embed(texts, PASSAGE), dtype="<f4")
    if vectors.shape != (len(rows), embedder.dim):
        raise ValueError(f"{embedder.model_id} returned vectors of shape {vectors.shape}")
    return [(int(r[0]), vectors[i].tobytes()) for i, r in enumerate(rows)]


def insert_vectors(
    conn: Connection, model_id: str, dim: int, items: list[tuple[int, bytes]]
) -> int:
    """Insert vectors inside the caller's open transaction; returns how many were new.

    Idempotent: a vector another process (or an earlier run) already wrote for the
    same ``(judgment_id, model_id)`` — the table's primary key — is left as it is,
    and its seal with it (``INSERT OR IGNORE`` fires no trigger). A row purged
    meanwhile gets no vector.
    """
    written = 0
    for judgment_id, blob in items:
        cur = conn.execute(
            "INSERT OR IGNORE INTO embeddings (judgment_id, model_id, dim, vector) "
            "SELECT id, ?, ?, ? FROM judgments WHERE id = ? AND status != 'purged'",
            (model_id, dim, blob, judgment_id),
        )
        written += max(int(getattr(cur, "rowcount", 0)), 0)
    return written


def write_vectors(conn: Connection, model_id: str, dim: int, items: list[tuple[int, bytes]]) -> int:
    """Insert one batch in its own ``BEGIN IMMEDIATE`` transaction (``insert_vectors``)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        written = insert_vectors(conn, model_id, dim, items)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return written
