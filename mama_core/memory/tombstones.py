"""Tombstones: "don't let this come back".

Retiring or rejecting with ``forbid_resave`` (or ``memory.tombstone``) keeps a
fingerprint of the record's normalised summary and its vector, bound to the
record's scopes. A later save into an overlapping scope whose fingerprint
matches, or whose vector is at least ``tombstone_threshold`` cosine-close while
its words say the same thing (``tombstone_match``), is refused with
``tombstoned``, naming the tombstone, who made it and its reason. The owner
lists tombstones (``tombstone.list``) and lifts them (``tombstone.lift``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from mama_core.canonical import sha256_hex
from mama_core.errors import InvalidTransitionError, NotFoundError, TombstonedError
from mama_core.json_types import JsonObject
from mama_core.memory.tombstone_match import near_duplicate
from mama_core.memory.writer import Tx
from mama_core.model import Judgment
from mama_core.normal_text import normalise
from mama_core.scopes.bindings import ensure_scope_ids, scopes_of
from mama_core.store.connection import Connection
from mama_core.store.secret import StoreSecret


def fingerprint(text: str, secret: StoreSecret | None = None) -> str:
    """The normalised text's keyed hash under the store's secret (what a tombstone
    keeps, so a short purged text cannot be found by trying every value), or with
    no secret its bare sha256 (the form of tombstones made before keyed hashes)."""
    normal = normalise(text)
    if secret is None:
        return sha256_hex(normal)
    return secret.hash_bytes(b"tombstone\x00" + normal.encode("utf-8"))


@dataclass(frozen=True)
class TombstoneMatch:
    """A tombstone a save ran into, and who made it."""

    tombstone_id: int
    reason: str
    similarity: float | None
    """None: the same text after normalising; else the cosine of the two vectors."""
    created_by: JsonObject
    """The actor of the event that made the tombstone (kind, name, turn)."""
    made_by_action: str


def find_match(
    conn: Connection,
    scopes: Sequence[str],
    summary: str,
    vector: np.ndarray | None,
    model_id: str | None,
    threshold: float,
    secret: StoreSecret | None = None,
    swap_same_meaning: float = 0.0,
) -> TombstoneMatch | None:
    """The first unlifted tombstone in an overlapping scope that ``summary`` matches:
    the same normalised text, or a cosine-close vector whose words do not tell the
    two apart (``tombstone_match``: a negation, other numbers, dates or names pass).

    A tombstone keeps the vector of the model it was made under; after the model
    changes, the retired judgment's vector of ``model_id`` (the catch-up gives every
    unpurged judgment one) stands in for it, so an update does not quietly turn the
    near-duplicate check off. A tombstone whose judgment was purged matches by text
    only once the model has changed."""
    rows = conn.execute(
        "SELECT t.id, t.fingerprint, CASE WHEN t.model_id = :model THEN t.vector ELSE "
        "(SELECT v.vector FROM embeddings v WHERE v.judgment_id = t.judgment_id "
        "AND v.model_id = :model) END, t.reason, e.actor, e.action, "
        "CASE WHEN j.status = 'purged' THEN NULL ELSE j.summary END FROM tombstones t "
        "LEFT JOIN events e ON e.id = t.event_id LEFT JOIN judgments j ON j.id = t.judgment_id "
        "WHERE t.lifted_at IS NULL AND EXISTS (SELECT 1 FROM tombstone_scopes ts "
        "JOIN scopes s ON s.id = ts.scope_id WHERE ts.tombstone_id = t.id "
        "AND s.name IN (SELECT value FROM json_each(:scopes))) ORDER BY t.id",
        {"model": model_id, "scopes": json.dumps(sorted(set(scopes)))},
    ).fetchall()
    if not rows:  # the usual case: no tombstone in these scopes, nothing to normalise
        return None
    prints = {fingerprint(summary), fingerprint(summary, secret)}
    for row in rows:
        if row[1] in prints:
            return _match(row, None)
    if vector is None:
        return None
    for row in rows:
        if row[2] is None:
            continue
        stored = np.frombuffer(row[2], dtype="<f4")
        if stored.shape != vector.shape:
            continue
        similarity = float(np.dot(stored, vector))
        retired = None if row[6] is None else str(row[6])
        if near_duplicate(retired, summary, similarity, threshold, swap_same_meaning):
            return _match(row, similarity)
    return None


def _match(row: tuple[Any, ...], similarity: float | None) -> TombstoneMatch:
    actor: Any = json.loads(row[4]) if row[4] else {}
    return TombstoneMatch(
        tombstone_id=int(row[0]),
        reason=str(row[3]),
        similarity=similarity,
        created_by=cast(JsonObject, actor) if isinstance(actor, dict) else {},
        made_by_action=str(row[5] or ""),
    )


def describe_actor(actor: JsonObject) -> str:
    """Who an event's actor was, for a person: ``the owner``, ``the agent claude-code``."""
    kind = str(actor.get("kind") or "")
    name = str(actor.get("name") or "")
    if kind == "owner":
        return "the owner"
    label = {"agent": "the agent", "mcp_client": "the MCP client", "connector": "the connector"}
    who = label.get(kind, f"a {kind}" if kind else "an unknown actor")
    return f"{who} {name}" if name and name != kind else who


_MADE_BY: dict[str, str] = {
    "memory.retire": "retired",
    "review.reject": "rejected",
    "memory.tombstone": "tombstoned",
}


def refuse_if_tombstoned(
    conn: Connection,
    scopes: Sequence[str],
    summary: str,
    vector: np.ndarray | None,
    model_id: str | None,
    threshold: float,
    secret: StoreSecret | None = None,
    swap_same_meaning: float = 0.0,
) -> None:
    """Raise ``tombstoned`` if a save of ``summary`` into ``scopes`` matches a tombstone;
    the message names who made it, and the details carry its id for lifting."""
    match = find_match(
        conn, scopes, summary, vector, model_id, threshold, secret, swap_same_meaning
    )
    if match is None:
        return
    how = "the same text" if match.similarity is None else "nearly the same meaning"
    who = describe_actor(match.created_by)
    verb = _MADE_BY.get(match.made_by_action, "retired")
    details: dict[str, object] = {
        "tombstone_id": match.tombstone_id,
        "reason": match.reason,
        "created_by": {k: match.created_by.get(k) for k in ("kind", "name")},
    }
    if match.similarity is not None:
        details["similarity"] = round(match.similarity, 4)
    raise TombstonedError(
        f"This has {how} as something {who} {verb} and forbade saving again "
        f"(tombstone {match.tombstone_id}: {match.reason}). The owner can lift it with "
        f"'mama tombstones lift {match.tombstone_id}' or in the review window's Retired tab.",
        details=details,
    )


def create_tombstone(tx: Tx, judgment: Judgment, reason: str, model_id: str) -> int:
    """A tombstone for ``judgment`` (its fingerprint, vector and scopes) in this mutation."""
    if judgment.status == "purged":
        raise InvalidTransitionError(
            f"Judgment {judgment.id} was purged; there is no text left to tombstone.",
            details={"id": judgment.id, "status": judgment.status},
        )
    vector_row = tx.conn.execute(
        "SELECT vector, model_id FROM embeddings WHERE judgment_id = ? AND model_id = ?",
        (judgment.id, model_id),
    ).fetchone()
    cursor = tx.conn.execute(
        "INSERT INTO tombstones (judgment_id, fingerprint, vector, model_id, reason, created_at, "
        "event_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            judgment.id,
            fingerprint(judgment.summary, tx.secret),
            None if vector_row is None else vector_row[0],
            None if vector_row is None else vector_row[1],
            reason,
            tx.at,
            tx.event_id,
        ),
    )
    tombstone_id = int(cursor.lastrowid or 0)
    for scope_id in ensure_scope_ids(tx.conn, scopes_of(tx.conn, judgment.id)):
        tx.conn.execute(
            "INSERT INTO tombstone_scopes (tombstone_id, scope_id) VALUES (?, ?)",
            (tombstone_id, scope_id),
        )
    tx.touch(judgment.id)
    return tombstone_id


def lift_tombstone(tx: Tx, tombstone_id: int) -> int | None:
    """Lift a tombstone; returns the judgment it was made from."""
    row = tx.conn.execute(
        "SELECT judgment_id, lifted_at FROM tombstones WHERE id = ?", (tombstone_id,)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"No tombstone {tombstone_id}.", details={"tombstone_id": tombstone_id})
    if row[1] is not None:
        raise InvalidTransitionError(
            f"Tombstone {tombstone_id} was already lifted.", details={"tombstone_id": tombstone_id}
        )
    tx.conn.execute(
        "UPDATE tombstones SET lifted_at = ?, lift_event_id = ? WHERE id = ?",
        (tx.at, tx.event_id, tombstone_id),
    )
    judgment_id = None if row[0] is None else int(row[0])
    if judgment_id is not None:
        tx.touch(judgment_id)
    return judgment_id
