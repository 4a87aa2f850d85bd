"""A real store written through the real engine, with recall over it, for tests.

``World`` saves, retires, approves, rejects and purges through
``Engine.dispatch`` (the one writer), keeps a ``VectorCache`` current from the
engine's change-sets and searches with ``Recall`` on a read connection of its
own, as the app does. Subscribers run before ``dispatch`` returns, so a search
right after a save sees it: no waiting, no sleeps.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from mama_core.embeddings import Embedder
from mama_core.memory import Engine, Grant, SessionFacts
from mama_core.recall import Recall, RecallConfig, RecallHit, RecallQuery, VectorCache
from mama_core.session import ActorKind, TurnKind
from mama_core.store import Store

OWNER = SessionFacts.owner_cli()
OWNER_GRANT = Grant.owner()
AGENT = SessionFacts(
    actor_kind=ActorKind.AGENT, actor_name="claude-code", turn=TurnKind.OWNER_MESSAGE
)
GUIDANCE = ("preference", "constraint", "lesson", "workflow")


class World:
    """One store, its engine, a change-set-fed vector cache and recall."""

    def __init__(self, store: Store, engine: Engine, embedder: Embedder) -> None:
        self.store = store
        self.engine = engine
        self.embedder = embedder
        self._cache_conn = store.new_connection()
        self.cache = VectorCache.load(self._cache_conn, embedder.model_id, embedder.dim)
        self._unsubscribe = engine.subscribe(
            lambda changes: self.cache.apply_changeset(self._cache_conn, changes)
        )
        self.recall = Recall(store.new_connection, embedder, self.cache)
        self.reader = store.new_connection()

    def close(self) -> None:
        self._unsubscribe()
        self.recall.close()
        self._cache_conn.close()
        self.reader.close()

    def dispatch(
        self,
        action: str,
        payload: dict[str, Any],
        session: SessionFacts = OWNER,
        grant: Grant = OWNER_GRANT,
    ) -> dict[str, Any]:
        return self.engine.dispatch(action, payload, session, grant)

    def save(
        self,
        summary: str,
        kind: str = "fact",
        scopes: Collection[str] = ("global",),
        *,
        session: SessionFacts = OWNER,
        grant: Grant = OWNER_GRANT,
        **fields: Any,
    ) -> int:
        """Save one judgment; returns its id."""
        payload: dict[str, Any] = {"kind": kind, "summary": summary, "scopes": list(scopes)}
        payload.update(fields)
        if kind in GUIDANCE:
            payload.setdefault("applies_when", "always")
        if kind == "workflow":
            payload.setdefault("steps", ["do it"])
        return int(self.dispatch("memory.save", payload, session, grant)["judgment_id"])

    def retire(self, judgment_id: int, reason: str = "no longer true", **fields: Any) -> None:
        self.dispatch("memory.retire", {"id": judgment_id, "reason": reason, **fields})

    def approve(self, judgment_id: int) -> None:
        self.dispatch("review.approve", {"id": judgment_id})

    def reject(self, judgment_id: int, reason: str = "not what I want") -> None:
        self.dispatch("review.reject", {"id": judgment_id, "reason": reason})

    def purge(self, judgment_id: int, reason: str = "forget it") -> None:
        self.dispatch("memory.purge", {"id": judgment_id, "reason": reason})

    def search(
        self,
        text: str,
        scopes: Collection[str] = ("global",),
        *,
        config: RecallConfig | None = None,
        **fields: Any,
    ) -> list[RecallHit]:
        return self.recall.search(RecallQuery(text, scopes=scopes, **fields), config=config)

    def ids(self, text: str, scopes: Collection[str] = ("global",), **fields: Any) -> list[int]:
        return [h.id for h in self.search(text, scopes, **fields)]

    def status(self, judgment_id: int) -> str:
        row = self.reader.execute("SELECT status FROM judgments WHERE id = ?", (judgment_id,))
        return str(row.fetchone()[0])
