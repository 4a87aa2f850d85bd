"""The team store's write and read paths, on one member's own connection.

A save is one call of the database's ``mama_team.remember`` (``app.team.write_functions``),
in one transaction: the memory row, its scope bindings and a hash-chained event (the
chain head's row lock orders concurrent writers), all or nothing; a member's role can
write no table itself. Recall has two
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
from psycopg import sql

from app.team.connection import first_line
from app.team.errors import (
    ScopeNotGrantedError,
    TeamBusyError,
    TeamError,
    TeamInputError,
    TeamMemoryNotFoundError,
    TeamModelMismatchError,
    TeamUnreachableError,
)
from app.team.schema import GENESIS_HASH, TEXT_SEARCH_CONFIG, read_meta
from app.team.scopes import check_team_scope, covers
from app.team.write_functions import PURGE, REMEMBER, RETIRE
from mama_core.canonical import canonical, canonical_hash, sha256_hex
from mama_core.embeddings.base import PASSAGE, QUERY, Embedder, score_scale
from mama_core.memory.secrets_scan import refuse_secrets
from mama_core.recall.config import Arm, RecallConfig
from mama_core.recall.fusion import rank_list, rrf

Conn = psycopg.Connection[tuple[Any, ...]]


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
class TeamRetirement:
    memory_id: int
    event_id: int

    def to_wire(self) -> dict[str, Any]:
        return {
            "store": "team",
            "memory_id": self.memory_id,
            "event_id": self.event_id,
            "status": "retired",
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


CHAIN_WAIT_SECONDS = 10
"""How long a save or retire waits for the chain head, which another member's open
transaction may hold (a save in progress, or a raw-SQL session left open): then it is
``team_busy``, not a hang."""


class TeamStore:
    """One member's view of the team store: what its role's grants let it see."""

    def __init__(
        self, conn: Conn, embedder: Embedder, *, chain_wait_seconds: int = CHAIN_WAIT_SECONDS
    ) -> None:
        self.conn = conn
        self.embedder = embedder
        self.chain_wait_seconds = chain_wait_seconds
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
        try:
            with self.conn.transaction():
                self._bound_chain_wait()
                memory_id, event_id = self._one(
                    "SELECT memory_id, event_id FROM mama_team.remember("
                    "%s, %s, %s, %s, %s, %s, %s::vector)",
                    (
                        save.kind,
                        save.summary,
                        save.topic,
                        save.details,
                        list(scopes),
                        self.model_id,
                        embedding,
                    ),
                )
        except psycopg.errors.InsufficientPrivilege as exc:
            raise ScopeNotGrantedError(
                f"the team store refused the write ({exc.diag.message_primary}); nothing was saved."
            ) from exc
        except psycopg.errors.LockNotAvailable as exc:
            raise self._busy("saved") from exc
        except psycopg.OperationalError as exc:  # the server went away mid-write
            raise TeamUnreachableError(
                f"the team store stopped answering ({first_line(exc)}); nothing was saved."
            ) from exc
        return TeamReceipt(int(memory_id), int(event_id), tuple(sorted(scopes)))

    def retire(self, memory_id: int) -> TeamRetirement:
        """Retire a memory in scopes this role holds (all of them): a new event and the
        row's status; its text stays, and search no longer returns it."""
        try:
            with self.conn.transaction():
                self._bound_chain_wait()
                (event_id,) = self._one("SELECT mama_team.retire(%s)", (memory_id,))
        except psycopg.errors.InsufficientPrivilege as exc:
            raise ScopeNotGrantedError(f"{exc.diag.message_primary}; nothing was retired.") from exc
        except psycopg.errors.NoDataFound as exc:
            raise TeamMemoryNotFoundError(str(exc.diag.message_primary)) from exc
        except psycopg.errors.ObjectNotInPrerequisiteState as exc:
            raise TeamInputError(str(exc.diag.message_primary)) from exc
        except psycopg.errors.LockNotAvailable as exc:
            raise self._busy("retired") from exc
        except psycopg.OperationalError as exc:
            raise TeamUnreachableError(
                f"the team store stopped answering ({first_line(exc)}); nothing was retired."
            ) from exc
        return TeamRetirement(memory_id, int(event_id))

    def _bound_chain_wait(self) -> None:
        """This transaction waits at most ``chain_wait_seconds`` for a lock (the chain head)."""
        self.conn.execute(
            sql.SQL("SET LOCAL lock_timeout = {}").format(
                sql.Literal(f"{int(self.chain_wait_seconds)}s")
            )
        )

    def _busy(self, what: str) -> TeamBusyError:
        return TeamBusyError(
            f"another member's session has held the team chain for over "
            f"{self.chain_wait_seconds} s; nothing was {what}. Try again; if it stays busy, "
            "the team admin can end that session (pg_terminate_backend)."
        )

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


def latest_memories(conn: psycopg.Connection[Any], limit: int) -> list[TeamHit]:
    """The newest ``limit`` active memories this role may read: a listing, which needs
    no model (each hit's score is 0)."""
    try:
        rows = conn.execute(
            "SELECT id, kind, summary, topic, scopes, author FROM mama_team.memories "
            "WHERE status = 'active' ORDER BY id DESC LIMIT %s",
            (limit,),
        ).fetchall()
        conn.commit()
    except psycopg.OperationalError as exc:  # the server went away mid-read
        raise TeamUnreachableError(f"the team store stopped answering ({first_line(exc)})") from exc
    return [
        TeamHit(int(r[0]), str(r[1]), str(r[2]), str(r[3]), tuple(r[4]), str(r[5]), 0.0)
        for r in rows
    ]


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


_STATUS_AFTER = {REMEMBER: "active", RETIRE: "retired", PURGE: "purged"}


def verify_chain(conn: Conn) -> ChainReport:
    """Walk the events this connection sees (all of them for the team's admin, who
    bypasses row-level security): ids 1..n without a gap, each ``prev_hash`` the hash
    before it, each hash recomputed, each memory's content hash its event's (recomputed
    from its text unless it was purged), each memory's status the one its last event
    gives it, and the chain head at the last event."""
    problems: list[str] = []
    prev = GENESIS_HASH
    count = 0
    expected: dict[int, str] = {}
    rows = conn.execute(
        "SELECT e.id, e.at, e.actor, e.action, e.memory_id, e.scopes, e.content_hash, "
        "e.prev_hash, e.hash, m.content_hash, m.kind, m.summary, m.topic, m.details, m.scopes, "
        "m.author, m.status FROM mama_team.events e "
        "LEFT JOIN mama_team.memories m ON m.id = e.memory_id ORDER BY e.id"
    ).fetchall()
    for row in rows:
        count += 1
        event_id = int(row[0])
        if event_id != count:
            problems.append(f"event {count} is missing (next is {event_id})")
            count = event_id
        if row[7] != prev:
            problems.append(f"event {event_id} does not follow the event before it")
        action, memory_id = str(row[3]), int(row[4])
        fields = event_fields(
            event_id, str(row[1]), str(row[2]), action, memory_id, list(row[5]), str(row[6])
        )
        if event_hash(fields, str(row[7])) != row[8]:
            problems.append(f"event {event_id} was changed after it was written")
        if action not in _STATUS_AFTER:
            problems.append(f"event {event_id} has an unknown action {action!r}")
        else:
            expected[memory_id] = _STATUS_AFTER[action]
        if row[9] is None:
            problems.append(f"event {event_id}'s memory #{memory_id} is gone")
        elif row[9] != row[6] or (
            row[16] != "purged"
            and canonical_hash(
                TeamSave(
                    str(row[10]), str(row[11]), tuple(row[14]), str(row[12]), str(row[13])
                ).content(str(row[15]))
            )
            != row[6]
        ):
            problems.append(f"memory #{memory_id} does not match its event {event_id}")
        prev = str(row[8])
    head = conn.execute("SELECT last_id, last_hash FROM mama_team.chain_head").fetchone()
    if head is None or int(head[0]) != count or head[1] != prev:
        problems.append("the chain head does not point at the last event")
    statuses = conn.execute("SELECT id, status FROM mama_team.memories ORDER BY id").fetchall()
    orphans = 0
    for memory_id, status in statuses:
        want = expected.get(int(memory_id))
        if want is None:
            orphans += 1
        elif status != want:
            problems.append(f"memory #{memory_id} is {status}, its events say {want}")
    if orphans:
        problems.append(f"{orphans} memories have no event")
    conn.commit()
    return ChainReport(count, tuple(problems))


def purge_memory(admin: Conn, memory_id: int) -> int:
    """The admin's purge: the memory's text and vector gone from its row (a ``purge``
    event in the chain), then ``VACUUM FULL`` of the memories table, so no copy of the
    text is left in the table's files (nor its TOAST table and indexes, which it rewrites).
    Returns the event's id. Needs a connection the admin may leave in autocommit."""
    try:
        with admin.transaction():
            row = admin.execute("SELECT mama_team.purge(%s)", (memory_id,)).fetchone()
    except psycopg.errors.NoDataFound as exc:
        raise TeamMemoryNotFoundError(str(exc.diag.message_primary)) from exc
    except psycopg.errors.ObjectNotInPrerequisiteState as exc:
        raise TeamInputError(str(exc.diag.message_primary)) from exc
    except psycopg.errors.InsufficientPrivilege as exc:
        raise ScopeNotGrantedError(
            f"only the team's admin purges ({exc.diag.message_primary})"
        ) from exc
    if row is None:
        raise TeamError("the team store answered nothing to the purge")
    autocommit = admin.autocommit
    admin.autocommit = True  # VACUUM runs outside a transaction
    try:
        # FULL: a plain VACUUM only marks the old row versions' space reusable, their
        # bytes stay in the file until overwritten. ANALYZE: the planner's statistics may
        # hold sample values of the text columns; new ones are taken from what is left,
        # and pg_statistic is rewritten so the old ones' bytes go too (a role that may not
        # vacuum that catalog, one that is not a superuser, gets a warning and it is
        # skipped: the README says so).
        admin.execute("VACUUM (FULL, ANALYZE) mama_team.memories")
        admin.execute("VACUUM (FULL) pg_catalog.pg_statistic")
    finally:
        admin.autocommit = autocommit
    return int(row[0])
