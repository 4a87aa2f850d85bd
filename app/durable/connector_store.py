"""Where a connector's batches land: observations, the cursor and one source delta,
in one transaction.

``store_batch`` runs one ``BEGIN IMMEDIATE``: each item becomes an immutable
observation (de-duplicated by ``(source, external_id)``) with its channel, scope
and metadata (``observation_facets``), the connector's cursor moves past the
batch, and — if any item was new — one mailbox input of kind ``source_delta``
names the new observations (their ids in its ``meta``, never their text: the
text stays only in the observations, so a purge reaches it). A kill at any
moment leaves either all of that or none of it; a batch read again after a crash
finds its items already there and posts nothing twice.

Also the connectors' health (last poll, items stored, last error, paused or
waiting for the owner), which any process may read or change (the CLI pauses a
connector the daemon runs).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.connectors.base import DELETES, REVISES, Batch, Item, PartProblem, Problem
from app.durable.clock import Clock, SystemClock, stamp, unstamp
from app.durable.evidence import SCOPES_KEY
from app.durable.mailbox import InputKind, insert_pending
from app.durable.transaction import RuntimeDb
from mama_core.memory.observations import IfHeld, NewObservation, record_observations
from mama_core.store.connection import Connection

DELTA_SOURCE_PREFIX = "connector"
"""Mailbox inputs of a connector are ``connector:<name>:<first id>-<last id>``."""

OBSERVATIONS_KEY = "observations"
CONNECTOR_KEY = "connector"
CHANNELS_KEY = "channels"
AUTHORS_KEY = "authors"
"""In a source delta's ``meta``: where its items were said (``#ops``, ``INBOX``) and by
whom, so what the agent saves from it can say where it came from."""


@dataclass(frozen=True)
class Stored:
    """What one batch wrote: the new observations (ids) and the mailbox input, if any."""

    new_ids: tuple[int, ...]
    seen: int
    """Items in the batch (new or already stored)."""
    input_id: int | None


@dataclass(frozen=True)
class Health:
    """One connector's state as the owner sees it (doctor, list, tray)."""

    name: str
    kind: str
    state: str
    """``idle`` (not polled yet), ``ok``, ``failing`` (retrying), ``blocked`` (the owner
    must act), ``paused`` (the owner paused it)."""
    owner_paused: bool
    last_poll_at: datetime | None
    last_ok_at: datetime | None
    items_stored: int
    failures: int
    last_error_code: str | None
    last_error: str | None
    next_poll_at: datetime | None
    blocked_settings: str | None
    parts: tuple[PartProblem, ...] = ()
    """Picked parts the last poll could not read while it read the others."""

    @property
    def needs_owner(self) -> bool:
        """Whether the owner must act: the whole source, or one of its parts."""
        return self.state == "blocked" or bool(self.parts)

    def problem_text(self) -> str:
        """The source's problem and each broken part's, for one line ("" when none)."""
        found = []
        if self.last_error_code and self.state in ("failing", "blocked"):
            found.append(f"{self.last_error_code}: {self.last_error}")
        found.extend(f"{p.part} {p.problem.value}: {p.message}" for p in self.parts)
        return "; ".join(found)

    def to_wire(self) -> dict[str, Any]:
        def when(value: datetime | None) -> str | None:
            return None if value is None else value.isoformat()

        return {
            "name": self.name,
            "kind": self.kind,
            "state": self.state,
            "paused": self.owner_paused,
            "last_poll_at": when(self.last_poll_at),
            "last_ok_at": when(self.last_ok_at),
            "items_stored": self.items_stored,
            "failures": self.failures,
            "last_error_code": self.last_error_code,
            "last_error": self.last_error,
            "next_poll_at": when(self.next_poll_at),
            "parts": [
                {"part": p.part, "code": p.problem.value, "message": p.message} for p in self.parts
            ],
        }

    def line(self) -> str:
        """One line for a person: ``work-trello (trello): ok, 120 items, last poll …``."""
        parts = [f"{self.name} ({self.kind}): {self.state}", f"{self.items_stored} items"]
        if self.last_poll_at is not None:
            parts.append(f"last poll {self.last_poll_at.strftime('%Y-%m-%d %H:%M:%S')}")
        if self.last_error_code and self.state in ("failing", "blocked"):
            parts.append(f"{self.last_error_code}: {self.last_error}")
        line = ", ".join(parts)
        if self.parts:
            broken = "; ".join(f"{p.part} {p.problem.value}: {p.message}" for p in self.parts)
            line += f"; cannot read {broken}"
        return line


_HEALTH_COLUMNS = (
    "name, kind, state, owner_paused, last_poll_at, last_ok_at, items_stored, failures, "
    "last_error_code, last_error, next_poll_at, blocked_settings"
)


class ConnectorStore:
    """The connectors' cursors, stored batches and health, on the runtime connection."""

    def __init__(self, db: RuntimeDb, clock: Clock | None = None) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()

    # --- cursor and batches ---------------------------------------------

    def cursor(self, name: str) -> str | None:
        """The cursor stored with the last batch of ``name`` (None: never polled)."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT cursor FROM connector_cursors WHERE name = ?", (name,)
            ).fetchone()
        return None if row is None else str(row[0])

    def store_batch(self, name: str, kind: str, batch: Batch) -> Stored:
        """Items, cursor, source delta and health in one transaction (all or nothing)."""
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            stored = _store_items(conn, batch.items)
            new_ids = [oid for oid, _ in stored]
            scopes = sorted({item.scope for _, item in stored})
            conn.execute(
                "INSERT INTO connector_cursors (name, cursor, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor, "
                "updated_at = excluded.updated_at",
                (name, batch.cursor, now),
            )
            channels = sorted({item.channel for _, item in stored if item.channel})
            authors = sorted({item.author for _, item in stored if item.author})
            input_id = (
                _post_delta(conn, name, new_ids, scopes, channels, authors, now)
                if new_ids
                else None
            )
            _ensure_health(conn, name, kind, now)
            conn.execute(
                "UPDATE connector_health SET state = CASE WHEN owner_paused = 1 THEN 'paused' "
                "ELSE 'ok' END, last_poll_at = ?, last_ok_at = ?, "
                "items_stored = items_stored + ?, failures = 0, last_error_code = NULL, "
                "last_error = NULL, blocked_settings = NULL, updated_at = ? WHERE name = ?",
                (now, now, len(new_ids), now, name),
            )
            _replace_parts(conn, name, batch, now)
        return Stored(tuple(new_ids), len(batch.items), input_id)

    def forget_cursor(self, name: str) -> None:
        """Drop the cursor and health of a removed connector (its observations stay)."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM connector_cursors WHERE name = ?", (name,))
            conn.execute("DELETE FROM connector_health WHERE name = ?", (name,))
            conn.execute("DELETE FROM connector_parts WHERE name = ?", (name,))

    # --- health ---------------------------------------------------------

    def record_failure(
        self,
        name: str,
        kind: str,
        code: str,
        message: str,
        *,
        next_poll_at: datetime | None,
        blocked_settings: str | None = None,
    ) -> int:
        """A failed poll: ``failing`` (retried at ``next_poll_at``) or ``blocked`` (when
        ``blocked_settings`` names the settings the owner must change). Returns the
        failures in a row."""
        now = stamp(self.clock.now())
        state = "blocked" if blocked_settings is not None else "failing"
        with self.db.write() as conn:
            _ensure_health(conn, name, kind, now)
            conn.execute(
                "UPDATE connector_health SET state = CASE WHEN owner_paused = 1 THEN 'paused' "
                "ELSE ? END, last_poll_at = ?, failures = failures + 1, last_error_code = ?, "
                "last_error = ?, next_poll_at = ?, blocked_settings = ?, updated_at = ? "
                "WHERE name = ?",
                (
                    state,
                    now,
                    code,
                    message[:500],
                    None if next_poll_at is None else stamp(next_poll_at),
                    blocked_settings,
                    now,
                    name,
                ),
            )
            row = conn.execute(
                "SELECT failures FROM connector_health WHERE name = ?", (name,)
            ).fetchone()
        return int(row[0])

    def set_next_poll(self, name: str, kind: str, at: datetime | None) -> None:
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            _ensure_health(conn, name, kind, now)
            conn.execute(
                "UPDATE connector_health SET next_poll_at = ?, updated_at = ? WHERE name = ?",
                (None if at is None else stamp(at), now, name),
            )

    def set_paused(self, name: str, kind: str, paused: bool) -> None:
        """The owner's pause or resume (resume also lifts a ``blocked`` state: the owner
        says it is fixed, so the next poll tries again)."""
        now = stamp(self.clock.now())
        with self.db.write() as conn:
            _ensure_health(conn, name, kind, now)
            if paused:
                conn.execute(
                    "UPDATE connector_health SET owner_paused = 1, state = 'paused', "
                    "updated_at = ? WHERE name = ?",
                    (now, name),
                )
            else:
                conn.execute(
                    "UPDATE connector_health SET owner_paused = 0, blocked_settings = NULL, "
                    "failures = 0, next_poll_at = NULL, state = CASE WHEN last_poll_at IS NULL "
                    "THEN 'idle' WHEN last_error_code IS NULL THEN 'ok' ELSE 'failing' END, "
                    "updated_at = ? WHERE name = ?",
                    (now, name),
                )

    def health(self, name: str) -> Health | None:
        with self.db.read() as conn:
            row = conn.execute(
                f"SELECT {_HEALTH_COLUMNS} FROM connector_health WHERE name = ?", (name,)
            ).fetchone()
            parts = _parts(conn)
        return None if row is None else _health(row, parts)

    def all_health(self) -> list[Health]:
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_HEALTH_COLUMNS} FROM connector_health ORDER BY name"
            ).fetchall()
            parts = _parts(conn)
        return [_health(r, parts) for r in rows]


def _store_items(conn: Connection, items: Sequence[Item]) -> list[tuple[int, Item]]:
    """The new observations (id, item) of ``items``, in order. An item stored before (and
    purged since: a purged mail that arrives again stays purged) is left out, as is an
    item's second copy in the same batch (``IfHeld.SKIP``)."""
    ids = record_observations(
        conn,
        [
            NewObservation(item.source, item.external_id, item.author, item.text, stamp(item.at))
            for item in items
        ],
        if_held=IfHeld.SKIP,
    )
    stored = [
        (observation_id, item)
        for observation_id, item in zip(ids, items, strict=True)
        if observation_id is not None
    ]
    conn.executemany(
        "INSERT INTO observation_facets (observation_id, channel, scope, metadata) "
        "VALUES (?, ?, ?, ?)",
        [
            (
                observation_id,
                item.channel,
                item.scope,
                json.dumps(dict(item.metadata), sort_keys=True, default=str),
            )
            for observation_id, item in stored
        ],
    )
    return stored


def _post_delta(
    conn: Connection,
    name: str,
    new_ids: list[int],
    scopes: list[str],
    channels: list[str],
    authors: list[str],
    now: str,
) -> int:
    """One source-delta input naming the batch's new observations (ids only) and the
    scopes they belong to: the runtime narrows the turn's grant to those scopes, so
    hostile content cannot make the agent write into ``global`` or another source's
    scope (see ``OwnerRuntime.turn_grant``)."""
    source_ref = f"{DELTA_SOURCE_PREFIX}:{name}:{new_ids[0]}-{new_ids[-1]}"
    meta: dict[str, Any] = {
        CONNECTOR_KEY: name,
        OBSERVATIONS_KEY: new_ids,
        SCOPES_KEY: scopes,
        CHANNELS_KEY: channels,
        AUTHORS_KEY: authors,
    }
    return insert_pending(
        conn, InputKind.SOURCE_DELTA, source_ref, new_ids[0], meta, due=now, now=now
    )


def _ensure_health(conn: Connection, name: str, kind: str, now: str) -> None:
    conn.execute(
        "INSERT INTO connector_health (name, kind, state, updated_at) VALUES (?, ?, 'idle', ?) "
        "ON CONFLICT (name) DO NOTHING",
        (name, kind, now),
    )


def _replace_parts(conn: Connection, name: str, batch: Batch, now: str) -> None:
    """The batch's broken parts replace the last ones (a part that is back is dropped;
    one still broken keeps the time it broke)."""
    since = dict(
        conn.execute("SELECT part, since FROM connector_parts WHERE name = ?", (name,)).fetchall()
    )
    conn.execute("DELETE FROM connector_parts WHERE name = ?", (name,))
    for problem in batch.problems:
        conn.execute(
            "INSERT INTO connector_parts (name, part, code, message, since) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name, part) DO NOTHING",
            (
                name,
                problem.part,
                problem.problem.value,
                problem.message[:500],
                since.get(problem.part, now),
            ),
        )


def _parts(conn: Connection) -> dict[str, tuple[PartProblem, ...]]:
    found: dict[str, list[PartProblem]] = {}
    for name, part, code, message in conn.execute(
        "SELECT name, part, code, message FROM connector_parts ORDER BY name, part"
    ).fetchall():
        try:
            problem = Problem(str(code))
        except ValueError:
            problem = Problem.UNAVAILABLE
        found.setdefault(str(name), []).append(PartProblem(str(part), problem, str(message)))
    return {name: tuple(parts) for name, parts in found.items()}


def _health(row: tuple[Any, ...], parts: dict[str, tuple[PartProblem, ...]]) -> Health:
    def when(value: Any) -> datetime | None:
        return None if value is None else unstamp(str(value))

    return Health(
        name=str(row[0]),
        kind=str(row[1]),
        state=str(row[2]),
        owner_paused=bool(row[3]),
        last_poll_at=when(row[4]),
        last_ok_at=when(row[5]),
        items_stored=int(row[6]),
        failures=int(row[7]),
        last_error_code=None if row[8] is None else str(row[8]),
        last_error=None if row[9] is None else str(row[9]),
        next_poll_at=when(row[10]),
        blocked_settings=None if row[11] is None else str(row[11]),
        parts=parts.get(str(row[0]), ()),
    )


def delta_observations(meta: dict[str, Any]) -> list[int]:
    """The observation ids a source-delta input's ``meta`` names ([] for other inputs)."""
    ids = meta.get(OBSERVATIONS_KEY)
    if not isinstance(ids, list):
        return []
    return [int(i) for i in ids if isinstance(i, int)]  # pyright: ignore[reportUnknownVariableType]


def load_items(conn: Connection, ids: list[int]) -> list[dict[str, Any]]:
    """The observations ``ids`` with their facets, in id order (for the digest)."""
    rows: list[dict[str, Any]] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for r in conn.execute(
            "SELECT o.id, o.source, o.author, o.text, o.received_at, o.purged_at, "
            "f.channel, f.scope, f.metadata FROM observations o "
            "LEFT JOIN observation_facets f ON f.observation_id = o.id "
            f"WHERE o.id IN ({marks}) ORDER BY o.id",
            chunk,
        ):
            rows.append(
                {
                    "id": int(r[0]),
                    "source": str(r[1]),
                    "author": str(r[2]),
                    "text": str(r[3]),
                    "at": str(r[4]),
                    "purged": r[5] is not None,
                    "channel": "" if r[6] is None else str(r[6]),
                    "scope": "" if r[7] is None else str(r[7]),
                    "metadata": {} if r[8] is None else json.loads(str(r[8])),
                }
            )
    for row in rows:
        row["refers"] = _referred(conn, row)
    return rows


def _referred(conn: Connection, row: dict[str, Any]) -> dict[str, int]:
    """``{"revises"|"deletes": observation id}`` for an edit or deletion whose item is
    stored (so the agent can read what changed)."""
    found: dict[str, int] = {}
    for key in (REVISES, DELETES):
        external_id = row["metadata"].get(key) if isinstance(row["metadata"], dict) else None
        if not isinstance(external_id, str):
            continue
        hit = conn.execute(
            "SELECT id FROM observations WHERE source = ? AND external_id = ?",
            (row["source"], external_id),
        ).fetchone()
        if hit is not None:
            found[key] = int(hit[0])
    return found
