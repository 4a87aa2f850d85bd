"""memory.restore: the owner takes back a reject, an approve or a retire.

The memory is append-only, so nothing goes back in place: the verb appends a NEW record
that copies the given one's words, scopes, vector and provenance (an agent's proposal
stays the agent's, with its source), linked to it by a ``supersedes`` edge written by
its own save, and puts it in the state the given record had before its last change:

- a **rejected** proposal comes back ``proposed``, waiting for review again;
- an **approved** proposal comes back ``proposed``: the approved record leaves belief
  in the same transaction, superseded by the copy (its world validity closes at its
  own start: it never held); the records that approval replaced come back too, each a
  copy in the state it had (the owner's rule active again), and the proposal's copy
  replaces them again if the owner approves it again. Such an event creates more than
  one record; its payload's ``created`` gives ``verify`` each one's content hash;
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

from mama_core.errors import InvalidTransitionError
from mama_core.json_types import JsonObject
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import RestoreInput
from mama_core.memory.lifecycle import supersede
from mama_core.memory.records import load_visible
from mama_core.memory.secrets_scan import refuse_secrets
from mama_core.memory.tombstones import lift_tombstone, refuse_if_tombstoned
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.model import Judgment
from mama_core.scopes.bindings import bind_scopes, scopes_of
from mama_core.scopes.reach import require_writable
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
        status, earlier, last_event = _restored_state(tx.conn, source)
        replaced = _replaced_by(tx, source, last_event) if source.status == "active" else []
        lifted: list[int] = []
        restored_id, digest, valid_from, scopes = _restore_one(
            tx, source, status, earlier.involvement, env, lifted
        )
        if source.status == "active":
            supersede(tx, source, restored_id, valid_from)
        else:
            tx.touch(source.id)
        created: dict[str, str] = {}
        also: dict[str, int] = {}
        for predecessor, before in replaced:
            copy_id, copy_digest, _, _ = _restore_one(
                tx, predecessor, before.status, before.involvement, env, lifted
            )
            # The proposal replaces the copy again if the owner approves it again.
            _edge(tx, restored_id, copy_id)
            created[str(copy_id)] = copy_digest
            also[str(copy_id)] = predecessor.id
        payload: JsonObject = {
            "restored_from": source.id,
            "reason_hmac": tx.record_text("reason", inp.reason),
            "content_hash": digest,
            "status": status,
            "scopes": scopes,
            "valid_from": valid_from,
            "lifted_tombstones": lifted,
        }
        receipt: JsonObject = {"restored_from": source.id, "lifted_tombstones": lifted}
        if created:
            payload["created"] = created  # verify: the content hash of each other new record
            payload["also_restored"] = also
            receipt["also_restored"] = also
        return Applied(restored_id, payload, receipt)

    return command_for(call, apply)


def _restore_one(
    tx: Tx, source: Judgment, status: str, involvement: str, env: Env, lifted: list[int]
) -> tuple[int, str, str, list[str]]:
    """Append the copy of ``source`` in ``status``: its id, content hash, valid_from and
    scopes. Lifts ``source``'s own tombstones (noted in ``lifted``) and refuses what a save
    of the same words would be refused for (a secret, another record's tombstone)."""
    scopes = scopes_of(tx.conn, source.id)
    require_writable(tx.grant, scopes, f"judgment {source.id}")
    refuse_secrets(_words(source))
    for tombstone_id in _own_tombstones(tx.conn, source.id):
        lift_tombstone(tx, tombstone_id)
        lifted.append(tombstone_id)
    vector = _vector(tx.conn, source, env)
    refuse_if_tombstoned(
        tx.conn,
        scopes,
        source.summary,
        vector,
        env.model_id,
        env.tombstone_threshold,
        tx.secret,
        env.swap_same_meaning,
    )
    valid_from = source.valid_from
    if status == "active" and source.status in ("stale", "superseded"):
        valid_from = source.valid_until or tx.at  # it holds on from where it stopped
    copy_id, digest = _append_copy(tx, source, status, involvement, valid_from, scopes, vector, env)
    return copy_id, digest, valid_from, scopes


def _history(conn: Connection, judgment_id: int) -> list[tuple[int, Earlier]]:
    """The record's states, oldest first, each with the event that set it, folded from
    its events' transitions."""
    rows = conn.execute(
        "SELECT e.id, t.value FROM events e, json_each(e.payload, '$.transitions') t "
        "WHERE json_extract(t.value, '$.id') = ? ORDER BY e.id, t.key",
        (judgment_id,),
    ).fetchall()
    states: list[tuple[int, Earlier]] = []
    for event_id, value in rows:
        change = json.loads(value)
        involvement = change.get("involvement") or (states[-1][1].involvement if states else "")
        states.append((int(event_id), Earlier(str(change["to"]), str(involvement))))
    return states


def _restored_state(conn: Connection, source: Judgment) -> tuple[str, Earlier, int]:
    """The status the copy gets, the state it returns to and the event that left it, or
    ``invalid_transition`` saying why ``source`` cannot be restored."""
    history = _history(conn, source.id)
    earlier = history[-2][1] if len(history) >= 2 else None
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
    return status, earlier, history[-1][0]


def _replaced_by(tx: Tx, source: Judgment, approved_in: int) -> list[tuple[Judgment, Earlier]]:
    """The records the approval of ``source`` (event ``approved_in``) superseded and that
    are still superseded by it, each with the state it had before: undoing the approval
    brings them back too, or the owner's rule it was to replace would stay replaced."""
    row = tx.conn.execute("SELECT payload FROM events WHERE id = ?", (approved_in,)).fetchone()
    transitions: list[dict[str, Any]] = json.loads(row[0]).get("transitions", [])
    found: list[tuple[Judgment, Earlier]] = []
    for change in transitions:
        if change.get("to") != "superseded" or change.get("id") == source.id:
            continue
        predecessor = load_visible(tx.conn, int(change["id"]), tx.grant)
        if predecessor.status != "superseded" or predecessor.superseded_by != source.id:
            continue  # purged since: nothing left to bring back
        history = _history(tx.conn, predecessor.id)
        before = history[-2][1]
        if before.status in ("active", "proposed"):
            found.append((predecessor, before))
    return found


def _edge(tx: Tx, src_id: int, dst_id: int) -> None:
    """A ``supersedes`` edge written by ``src_id``'s own save (so approving it replaces)."""
    tx.add_edge(src_id, dst_id, "supersedes")


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
    restored_id, digest = tx.append_judgment(
        kind=source.kind,
        topic=source.topic,
        summary=source.summary,
        details=source.details,
        applies_when=source.applies_when,
        steps=source.steps,
        confidence=source.confidence,
        status=status,
        valid_from=valid_from,
        provenance=source.provenance,
        involvement=involvement,
    )
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
    _edge(tx, restored_id, source.id)
    return restored_id, digest
