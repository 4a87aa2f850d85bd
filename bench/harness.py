"""A temporary encrypted store written through the real engine, and recall over it.

``BenchStore`` opens a fresh SQLCipher store in a temporary folder, saves
memories with ``Engine.dispatch("memory.save", …)`` as the owner (so every row
goes through the one writer: validation, secret scan, scopes, event, receipt,
vector), keeps a ``VectorCache`` current from the engine's change-sets, and
searches with ``Recall`` on its own read connection, exactly as the app does.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mama_core.embeddings.base import Embedder
from mama_core.errors import MamaError
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.model import embedding_text
from mama_core.recall import Recall, VectorCache
from mama_core.store import DbKey, Store

SUMMARY_MAX = 4000  # memory.save's limit on ``summary``; the rest goes to ``details``
DETAILS_MAX = 20000


@dataclass(frozen=True)
class Memory:
    """One memory to save: a key the benchmark scores by, its text and event time."""

    key: str
    text: str
    valid_from: datetime


def split_text(text: str) -> tuple[str, str]:
    """``(summary, details)`` for a text, within memory.save's field limits.

    Long turns keep their first 4,000 characters (cut at a space) as the
    summary and the rest as details, so the whole text is indexed and embedded.
    """
    text = text.strip()
    if len(text) <= SUMMARY_MAX:
        return text, ""
    cut = text.rfind(" ", SUMMARY_MAX // 2, SUMMARY_MAX)
    cut = cut if cut > 0 else SUMMARY_MAX
    return text[:cut].strip(), text[cut:].strip()[:DETAILS_MAX]


def stored_embedding_text(text: str) -> str:
    """The exact text the engine will embed for this memory (to prefetch vectors)."""
    summary, details = split_text(text)
    return embedding_text("", summary, details, None)


class BenchStore:
    """One temporary store, its engine, vector cache and recall."""

    def __init__(self, embedder: Embedder, scope: str = "global") -> None:
        self.embedder = embedder
        self.scope = scope
        self._dir = Path(tempfile.mkdtemp(prefix="mama-bench-"))
        self.store = Store.open(self._dir / "mama.db", DbKey.generate())
        self.engine = Engine(self.store, embedder)
        self._cache_conn = self.store.new_connection()
        self.cache = VectorCache(embedder.model_id, embedder.dim)
        self._unsubscribe = self.engine.subscribe(
            lambda changes: self.cache.apply_changeset(self._cache_conn, changes)
        )
        self._session = SessionFacts.owner_cli()
        self._grant = Grant.owner()
        self.key_of: dict[int, str] = {}
        self.refused: list[tuple[str, str]] = []
        self.save_seconds = 0.0
        self._recall: Recall | None = None

    def save(self, memory: Memory, kind: str = "fact") -> int | None:
        """Save one memory as the owner; None (and noted) if the engine refuses it."""
        summary, details = split_text(memory.text)
        if not summary:
            self.refused.append((memory.key, "empty"))
            return None
        payload: dict[str, Any] = {
            "kind": kind,
            "summary": summary,
            "details": details,
            "scopes": [self.scope],
            "valid_from": memory.valid_from.isoformat(),
        }
        began = time.perf_counter()
        try:
            receipt = self.engine.dispatch("memory.save", payload, self._session, self._grant)
        except MamaError as exc:
            self.refused.append((memory.key, exc.code))
            return None
        finally:
            self.save_seconds += time.perf_counter() - began
        judgment_id = int(receipt["judgment_id"])
        self.key_of[judgment_id] = memory.key
        return judgment_id

    def scopes(self) -> list[str]:
        """Every scope in the store: what the engine passes for the owner."""
        return [str(r[0]) for r in self.store.conn.execute("SELECT name FROM scopes").fetchall()]

    def recall(self) -> Recall:
        """Recall over the store, on a read connection of its own."""
        if self._recall is None:
            self._recall = Recall(self.store.new_connection, self.embedder, self.cache)
        return self._recall

    def close(self) -> None:
        self._unsubscribe()
        if self._recall is not None:
            self._recall.close()
        self.engine.close()
        self._cache_conn.close()
        self.store.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> BenchStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
