"""memory.restore: the owner takes back a reject, an approve or a retire.

The memory is append-only, so nothing goes back in place: the verb appends a NEW record
that copies the given one's words, scopes, vector and provenance (an agent's proposal
stays the agent's, with its source), linked to it by a ``supersedes`` edge written by
its own save, and puts it in the state the given record had before its last change:

- a **rejected** proposal comes back ``proposed``, waiting for review again;
- an **approved** proposal comes back ``proposed``: the approved record leaves belief
  in the same transaction, superseded by the copy (its world validity closes at its
  own start: it never held);
- a **retired** record (stale or contradicted) comes back ``active``, with the
  involvement it had (owner-stated or owner-approved stays so), holding from where
  the retired one stopped.

One owner action, one event, one receipt. Tombstones the record left (a reject or
retire with ``forbid_resave``) are lifted in the same action: restoring is the owner
allowing that text again, and two separate actions could leave half an undo. A
tombstone from another record still refuses it, as it refuses a save. The copied
words are scanned for secrets again, as a save's are. A record is restored at most
once; one already replaced, purged or never changed is refused (``invalid_transition``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.errors import InvalidTransitionError
from mama_core.memory.inputs import RestoreInput
from mama_core.memory.lifecycle import supersede
from mama_core.memory.records import load_visible
from mama_core.memory.scopes import require_writable
from mama_core.memory.secrets_scan import refuse_secrets
from mama_core.memory.tombstones import lift_tombstone, refuse_if_tombstoned
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.model import Judgment, content_fields
from mama_core.scope_bindings import bind_scopes, scopes_of
from mama_core.store.connection import Connection

RESTORABLE: dict[tuple[str, str], str] = {
    ("rejected", "proposed"): "proposed",
    ("active", "proposed"): "proposed",
    ("stale", "active"): "active",
    ("contradicted", "active"): "active",
}
"""(status now, status before its last change) -> the status of the restored copy."""


@dataclass(frozen=True)
class Earlier:
    """A record's state before its last status change, read from its events."""

    status: str
    involvement: str


@mutation(
    "memory.restore",
    RestoreInput,
    description=(
        "Take back a reject, an approve or a retire: a copy of the record, still its "
        "author's, is appended in the state it had before (proposed or active)."
    ),
    owner_only=True,
)
def restore_command(call: Call[RestoreInput], env: Env) -> Command:
    inp = call.input

    def apply(tx: Tx) -> Applied:
        source = load_visible(tx.conn, inp.id, tx.grant)
        scopes = scopes_of(tx.conn, source.id)
        require_writable(tx.grant, scopes, f"judgment {source.id}")
        status, earlier = _restored_state(tx.conn, source)
        refuse_secrets(_words(source))
        lifted = _own_tombstones(tx.conn, source.id)
        for tombstone_id in lifted:
            lift_tombstone(tx, tombstone_id)
        vector = _vector(tx.conn, source, env)
        refuse_if_tombstoned(
            tx.conn,
            scopes,
            source.summary,
            vector,
            env.model_id,
            env.config.tombstone_threshold,
            tx.secret,
        )
        if status == "proposed":
            valid_from = source.valid_from
        elif source.status == "stale":
            valid_from = source.valid_until or tx.at
        else:
            valid_from = source.valid_from
        restored_id, digest = _append_copy(
            tx, source, status, earlier.involvement, valid_from, scopes, vector, env
        )
        if source.status == "active":
            supersede(tx, source, restored_id, valid_from)
        else:
            tx.touch(source.id)
        payload: dict[str, Any] = {
            "restored_from": source.id,
            "reason_hmac": tx.record_text("reason", inp.reason),
            "content_hash": digest,
            "status": status,
            "scopes": scopes,
            "valid_from": valid_from,
            "lifted_tombstones": lifted,
        }
        receipt = {"restored_from": source.id, "lifted_tombstones": lifted}
        return Applied(restored_id, payload, receipt)

    return command_for(call, apply)


def _earlier_state(conn: Connection, judgment_id: int) -> Earlier | None:
    """The record's status and involvement before its last status change (None if it
    never changed), folded from its events' transitions."""
    rows = conn.execute(
        "SELECT t.value FROM events e, json_each(e.payload, '$.transitions') t "
        "WHERE json_extract(t.value, '$.id') = ? ORDER BY e.id, t.key",
        (judgment_id,),
    ).fetchall()
    states: list[Earlier] = []
    for (value,) in rows:
        change = json.loads(value)
        involvement = change.get("involvement") or (states[-1].involvement if states else "")
        states.append(Earlier(str(change["to"]), str(involvement)))
    return states[-2] if len(states) >= 2 else None


def _restored_state(conn: Connection, source: Judgment) -> tuple[str, Earlier]:
    """The status the copy gets and the state it returns to, or ``invalid_transition``
    saying why ``source`` cannot be restored."""
    earlier = _earlier_state(conn, source.id)
    status = None if earlier is None else RESTORABLE.get((source.status, earlier.status))
    if status is None or earlier is None:
        raise InvalidTransitionError(
            f"Judgment {source.id} is {source.status}; only a rejected, approved or "
            "retired record can be restored.",
            details={"id": source.id, "status": source.status},
        )
    done = conn.execute(
        "SELECT judgment_id FROM events WHERE action = 'memory.restore' "
        "AND json_extract(payload, '$.restored_from') = ? ORDER BY id LIMIT 1",
        (source.id,),
    ).fetchone()
    if done is not None:
        raise InvalidTransitionError(
            f"Judgment {source.id} was already restored as #{done[0]}.",
            details={"id": source.id, "status": source.status, "restored_as": int(done[0])},
        )
    if source.status == "active":
        replaced = [
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM judgments WHERE superseded_by = ? AND status = 'superseded' "
                "ORDER BY id",
                (source.id,),
            )
        ]
        if replaced:
            listed = ", ".join(f"#{i}" for i in replaced)
            raise InvalidTransitionError(
                f"Approving judgment {source.id} replaced {listed}; restoring it alone would "
                f"leave {listed} replaced. Retire #{source.id} or save {listed} again instead.",
                details={"id": source.id, "status": source.status, "replaced": replaced},
            )
    return status, earlier


def _words(source: Judgment) -> dict[str, Any]:
    """The copied text, for the same secret scan a save's payload gets."""
    return {
        "topic": source.topic,
        "summary": source.summary,
        "details": source.details,
        "applies_when": source.applies_when or "",
        "steps": list(source.steps),
    }


def _own_tombstones(conn: Connection, judgment_id: int) -> list[int]:
    rows = conn.execute(
        "SELECT id FROM tombstones WHERE judgment_id = ? AND lifted_at IS NULL ORDER BY id",
        (judgment_id,),
    ).fetchall()
    return [int(r[0]) for r in rows]


def _vector(conn: Connection, source: Judgment, env: Env) -> np.ndarray:
    """The record's vector under the current model (computed if it has none yet)."""
    row = conn.execute(
        "SELECT vector FROM embeddings WHERE judgment_id = ? AND model_id = ?",
        (source.id, env.model_id),
    ).fetchone()
    if row is None:
        return env.embed(source.text_for_embedding())
    return np.frombuffer(row[0], dtype="<f4")


def _append_copy(
    tx: Tx,
    source: Judgment,
    status: str,
    involvement: str,
    valid_from: str,
    scopes: list[str],
    vector: np.ndarray,
    env: Env,
) -> tuple[int, str]:
    """Insert the copy with its scopes, vectors and the edge to ``source``; its id and
    content hash."""
    content = content_fields(
        kind=source.kind,
        topic=source.topic,
        summary=source.summary,
        details=source.details,
        applies_when=source.applies_when,
        steps=list(source.steps),
        confidence=source.confidence,
        valid_from=valid_from,
        recorded_at=tx.at,
        provenance=source.provenance,
        command_id=tx.command_id,
    )
    digest = tx.keyed_hash(content)
    cursor = tx.conn.execute(
        "INSERT INTO judgments (kind, topic, summary, details, applies_when, steps, confidence, "
        "status, valid_from, recorded_at, provenance, involvement, command_id, content_hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            source.kind,
            source.topic,
            source.summary,
            source.details,
            source.applies_when,
            json.dumps(list(source.steps)) if source.steps else None,
            source.confidence,
            status,
            valid_from,
            tx.at,
            json.dumps(source.provenance, sort_keys=True),
            involvement,
            tx.command_id,
            digest,
        ),
    )
    restored_id = int(cursor.lastrowid or 0)
    bind_scopes(tx.conn, restored_id, scopes)
    tx.conn.execute(
        "INSERT INTO embeddings (judgment_id, model_id, dim, vector) "
        "SELECT ?, model_id, dim, vector FROM embeddings WHERE judgment_id = ? AND model_id != ?",
        (restored_id, source.id, env.model_id),
    )
    tx.conn.execute(
        "INSERT INTO embeddings (judgment_id, model_id, dim, vector) VALUES (?, ?, ?, ?)",
        (restored_id, env.model_id, int(vector.shape[0]), vector.astype("<f4").tobytes()),
    )
    tx.record_added(restored_id, status, involvement)
    tx.conn.execute(
        "INSERT INTO edges (src_id, dst_id, kind, reason, created_at, event_id) "
        "VALUES (?, ?, 'supersedes', NULL, ?, ?)",
        (restored_id, source.id, tx.at, tx.event_id),
    )
    return restored_id, digest
