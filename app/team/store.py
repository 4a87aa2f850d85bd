"""The team store's write and read paths, on one member's own connection.

A save is one transaction: the memory row, its scope bindings and a hash-chained event
(the chain head's row lock orders concurrent writers), all or nothing. Recall has two
arms under the member's row-level security: exact vector search with pgvector
(``ORDER BY embedding <=> q LIMIT k``) and PostgreSQL full text, fused by the core's
reciprocal rank fusion (``rrf-v1``), as the personal store's recall fuses its arms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, LiteralString

import numpy as np
import psycopg

from app.team.connection import first_line
from app.team.errors import (
    ScopeNotGrantedError,
    TeamError,
    TeamModelMismatchError,
    TeamUnreachableError,
)
from app.team.schema import GENESIS_HASH, TEXT_SEARCH_CONFIG, read_meta
from app.team.scopes import check_team_scope, covers
from mama_core import clock
from mama_core.canonical import canonical, canonical_hash, sha256_hex
from mama_core.embeddings.base import PASSAGE, QUERY, Embedder, score_scale
from mama_core.memory.secrets_scan import refuse_secrets
from mama_core.recall.config import Arm, RecallConfig
from mama_core.recall.fusion import rank_list, rrf

Conn = psycopg.Connection[tuple[Any, ...]]
REMEMBER = "team.remember"


@dataclass(frozen=True)
class TeamSave:
    """What a member saves into team scopes."""

    kind: str
    summary: str
    scopes: tuple[str, ...]
    topic: str = ""
    details: str = ""

    def content(self, author: str) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "summary": self.summary,
            "topic": self.topic,
            "details": self.details,
            "scopes": sorted(self.scopes),
            "author": author,
        }


@dataclass(frozen=True)
class TeamReceipt:
    memory_id: int
    event_id: int
    scopes: tuple[str, ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "store": "team",
            "memory_id": self.memory_id,
            "event_id": self.event_id,
            "scopes": list(self.scopes),
            "status": "active",
        }


@dataclass(frozen=True)
class TeamHit:
    id: int
    kind: str
    summary: str
    topic: str
    scopes: tuple[str, ...]
    author: str
    score: float

    def to_wire(self) -> dict[str, Any]:
        return {
            "store": "team",
            "id": self.id,
            "kind": self.kind,
            "summary": self.summary,
            "topic": self.topic,
            "scopes": list(self.scopes),
            "author": self.author,
            "score": self.score,
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> TeamHit:
        return cls(
            int(data["id"]),
            str(data["kind"]),
            str(data["summary"]),
            str(data["topic"]),
            tuple(data["scopes"]),
            str(data["author"]),
            float(data["score"]),
        )


def event_hash(fields: dict[str, Any], prev_hash: str) -> str:
    """sha256(prev_hash + canonical JSON of the fields): the SQLite store's chain rule."""
    return sha256_hex(prev_hash.encode("ascii") + canonical(fields))


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form of a float32 vector."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


class TeamStore:
    """One member's view of the team store: what its role's grants let it see."""

    def __init__(self, conn: Conn, embedder: Embedder) -> None:
        self.conn = conn
        self.embedder = embedder
        self._meta = read_meta(conn)
        conn.commit()

    @property
    def model_id(self) -> str:
        return self._meta["model_id"]

    def _check_model(self) -> None:
        if self.embedder.model_id != self.model_id:
            raise TeamModelMismatchError(
                f"the team store's vectors are from {self.model_id}, this MAMA embeds with "
                f"{self.embedder.model_id}; use the team's embedding model."
            )

    def granted(self) -> list[str]:
        rows = self.conn.execute(
            "SELECT scope FROM mama_team.grants WHERE role_name = current_user ORDER BY scope"
        ).fetchall()
        self.conn.commit()
        return [str(r[0]) for r in rows]

    def remember(self, save: TeamSave) -> TeamReceipt:
        """Save ``save`` in one transaction: row, bindings, event; or nothing at all."""
        scopes = tuple(dict.fromkeys(check_team_scope(s) for s in save.scopes))
        if not scopes:
            raise ScopeNotGrantedError("a team memory needs at least one team scope")
        refuse_secrets({"summary": save.summary, "topic": save.topic, "details": save.details})
        self._check_model()
        granted = self.granted()
        missing = [s for s in scopes if not any(covers(g, s) for g in granted)]
        if missing:
            raise ScopeNotGrantedError(
                f"your team role was not granted {', '.join(missing)} "
                f"(it holds: {', '.join(granted) or 'nothing'}); nothing was saved."
            )
        embedding = vector_literal(self.embedder.embed_one(self._passage(save), PASSAGE))
        at = clock.iso(clock.now())
        try:
            with self.conn.transaction():
                author = str(self._one("SELECT current_user")[0])
                content_hash = canonical_hash(save.content(author))
                head_id, head_hash = self._one(
                    "SELECT last_id, last_hash FROM mama_team.chain_head FOR UPDATE"
                )
                (memory_id,) = self._one(
                    "INSERT INTO mama_team.memories (kind, summary, topic, details, scopes, "
                    "created_at, content_hash, model_id, embedding) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::vector) RETURNING id",
                    (
                        save.kind,
                        save.summary,
                        save.topic,
                        save.details,
                        list(scopes),
                        at,
                        content_hash,
                        self.model_id,
                        embedding,
                    ),
                )
                with self.conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO mama_team.memory_scopes (memory_id, scope) VALUES (%s, %s)",
                        [(memory_id, s) for s in scopes],
                    )
                event_id = int(head_id) + 1
                fields = event_fields(
                    event_id, at, author, REMEMBER, int(memory_id), list(scopes), content_hash
                )
                digest = event_hash(fields, str(head_hash))
                self.conn.execute(
                    "INSERT INTO mama_team.events (id, at, actor, action, memory_id, scopes, "
                    "content_hash, prev_hash, hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        event_id,
                        at,
                        author,
                        REMEMBER,
                        memory_id,
                        list(scopes),
                        content_hash,
                        head_hash,
                        digest,
                    ),
                )
                self.conn.execute(
                    "UPDATE mama_team.chain_head SET last_id = %s, last_hash = %s",
                    (event_id, digest),
                )
        except psycopg.errors.InsufficientPrivilege as exc:
            raise ScopeNotGrantedError(
                f"the team store refused the write ({exc.diag.message_primary}); nothing was saved."
            ) from exc
        except psycopg.OperationalError as exc:  # the server went away mid-write
            raise TeamUnreachableError(
                f"the team store stopped answering ({first_line(exc)}); nothing was saved."
            ) from exc
        return TeamReceipt(int(memory_id), event_id, scopes)

    def search(
        self,
        query: str,
        limit: int,
        scopes: Sequence[str] = (),
        kinds: Sequence[str] = (),
        config: RecallConfig | None = None,
    ) -> list[TeamHit]:
        """The best ``limit`` active memories for ``query`` that this role may read."""
        try:
            return self._search(query, limit, scopes, kinds, config)
        except psycopg.OperationalError as exc:  # the server went away mid-read
            self.conn.close()
            raise TeamUnreachableError(
                f"the team store stopped answering ({first_line(exc)})"
            ) from exc

    def _search(
        self,
        query: str,
        limit: int,
        scopes: Sequence[str],
        kinds: Sequence[str],
        config: RecallConfig | None,
    ) -> list[TeamHit]:
        config = config or RecallConfig()
        self._check_model()
        wanted = [check_team_scope(s) for s in scopes]
        depth = max(config.arm_depth, limit)
        scope_sql = ""
        params: dict[str, Any] = {"depth": depth, "model": self.model_id}
        if wanted:
            # A row's reach is its scopes and their ancestors: team:eng finds team:eng/web.
            scope_sql = " AND m.reach && %(scopes)s::text[]"
            params["scopes"] = wanted
        if kinds:
            scope_sql += " AND m.kind = ANY(%(kinds)s::text[])"
            params["kinds"] = list(kinds)
        params["q"] = vector_literal(self.embedder.embed_one(query, QUERY))
        floor = (
            config.vector_min_score
            if config.vector_min_score is not None
            else score_scale(self.embedder).relevance_floor
        )
        vector_rows = self.conn.execute(
            "SELECT m.id, 1 - (m.embedding <=> %(q)s::vector) FROM mama_team.memories m "
            "WHERE m.status = 'active' AND m.model_id = %(model)s" + scope_sql + " "
            "ORDER BY m.embedding <=> %(q)s::vector LIMIT %(depth)s",
            params,
        ).fetchall()
        params["text"] = query
        word_rows = self.conn.execute(
            "SELECT m.id, ts_rank_cd(m.words, w.q) FROM mama_team.memories m, (SELECT "
            f"replace(plainto_tsquery('{TEXT_SEARCH_CONFIG}', %(text)s)::text, '&', '|')::tsquery"
            " AS q) AS w WHERE m.status = 'active' AND m.words @@ w.q" + scope_sql + " "
            "ORDER BY 2 DESC, m.id DESC LIMIT %(depth)s",
            params,
        ).fetchall()
        fused = rrf(
            {
                Arm.VECTOR.value: rank_list(
                    [(int(i), float(s)) for i, s in vector_rows if float(s) >= floor]
                ),
                Arm.BM25.value: rank_list([(int(i), float(s)) for i, s in word_rows]),
            },
            {Arm.VECTOR.value: config.vector_weight, Arm.BM25.value: config.bm25_weight},
            config.rrf_k,
        )[:limit]
        hits = self._hits([f.id for f in fused], {f.id: f.score for f in fused})
        self.conn.commit()
        return hits

    def _hits(self, ids: list[int], scores: dict[int, float]) -> list[TeamHit]:
        if not ids:
            return []
        rows = self.conn.execute(
            "SELECT id, kind, summary, topic, scopes, author FROM mama_team.memories "
            "WHERE id = ANY(%s)",
            (ids,),
        ).fetchall()
        by_id = {
            int(r[0]): TeamHit(
                int(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                tuple(r[4]),
                str(r[5]),
                scores[int(r[0])],
            )
            for r in rows
        }
        return [by_id[i] for i in ids if i in by_id]

    def _one(self, query: LiteralString, params: Sequence[Any] = ()) -> tuple[Any, ...]:
        row = self.conn.execute(query, params).fetchone()
        if row is None:
            raise TeamError(f"the team store answered nothing to {query.split(maxsplit=1)[0]}")
        return row

    @staticmethod
    def _passage(save: TeamSave) -> str:
        return " ".join(p for p in (save.topic, save.summary, save.details) if p)


def event_fields(
    event_id: int,
    at: str,
    actor: str,
    action: str,
    memory_id: int,
    scopes: list[str],
    content_hash: str,
) -> dict[str, Any]:
    """An event's hashed fields: ids and a content hash, never the text."""
    return {
        "id": event_id,
        "at": at,
        "actor": actor,
        "action": action,
        "memory_id": memory_id,
        "scopes": sorted(scopes),
        "content_hash": content_hash,
    }


@dataclass(frozen=True)
class ChainReport:
    events: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_chain(conn: Conn) -> ChainReport:
    """Walk the events this connection sees (all of them for the team's admin, who
    bypasses row-level security): ids 1..n without a gap, each ``prev_hash`` the hash
    before it, each hash recomputed, each memory's content hash its event's, and the
    chain head at the last event."""
    problems: list[str] = []
    prev = GENESIS_HASH
    count = 0
    rows = conn.execute(
        "SELECT e.id, e.at, e.actor, e.action, e.memory_id, e.scopes, e.content_hash, "
        "e.prev_hash, e.hash, m.content_hash, m.kind, m.summary, m.topic, m.details, m.scopes, "
        "m.author FROM mama_team.events e LEFT JOIN mama_team.memories m ON m.id = e.memory_id "
        "ORDER BY e.id"
    ).fetchall()
    for row in rows:
        count += 1
        event_id = int(row[0])
        if event_id != count:
            problems.append(f"event {count} is missing (next is {event_id})")
            count = event_id
        if row[7] != prev:
            problems.append(f"event {event_id} does not follow the event before it")
        fields = event_fields(
            event_id, str(row[1]), str(row[2]), str(row[3]), int(row[4]), list(row[5]), str(row[6])
        )
        if event_hash(fields, str(row[7])) != row[8]:
            problems.append(f"event {event_id} was changed after it was written")
        if row[9] is None:
            problems.append(f"event {event_id}'s memory #{row[4]} is gone")
        else:
            content = TeamSave(
                str(row[10]), str(row[11]), tuple(row[14]), str(row[12]), str(row[13])
            )
            if canonical_hash(content.content(str(row[15]))) != row[6] or row[9] != row[6]:
                problems.append(f"memory #{row[4]} does not match its event {event_id}")
        prev = str(row[8])
    head = conn.execute("SELECT last_id, last_hash FROM mama_team.chain_head").fetchone()
    if head is None or int(head[0]) != count or head[1] != prev:
        problems.append("the chain head does not point at the last event")
    orphans = conn.execute(
        "SELECT count(*) FROM mama_team.memories m "
        "WHERE NOT EXISTS (SELECT 1 FROM mama_team.events e WHERE e.memory_id = m.id)"
    ).fetchone()
    if orphans is not None and int(orphans[0]):
        problems.append(f"{orphans[0]} memories have no event")
    conn.commit()
    return ChainReport(count, tuple(problems))
