"""commitment.close and commitment.reschedule: the owner's word on an open commitment.

Neither edits a row: each appends a new commitment record (the same "what", scopes and
sources, with the new state or due) that supersedes the open one, in one event, so the
log tells the commitment's whole life. Only the owner, or an agent in a turn the owner
started, may do either (``commitments.require_owner_turn``); a proposed commitment is
confirmed with review.approve or refused with review.reject instead. In a turn that
carried or read words the owner did not write ("Bob cancelled, says the mail") the
agent's close or reschedule is a proposed change the owner decides (``taint``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mama_core.json_types import JsonObject
from mama_core.memory import commitments, proposed_changes
from mama_core.memory.commitments import Terms
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import CommitmentCloseInput, CommitmentRescheduleInput
from mama_core.memory.lifecycle import supersede
from mama_core.memory.provenance import involvement_of, provenance_of
from mama_core.memory.records import load_visible
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.model import Judgment, Status
from mama_core.scopes.bindings import bind_scopes, scopes_of
from mama_core.scopes.reach import require_writable


@mutation(
    "commitment.close",
    CommitmentCloseInput,
    description=(
        "Mark an open commitment done or dropped (dropping needs a reason). Only in a "
        "turn the owner started."
    ),
)
def close_command(call: Call[CommitmentCloseInput], env: Env) -> Command:
    inp = call.input
    commitments.require_owner_turn(call.session, call.spec.name)
    doing = f"marking it {inp.outcome}"

    def new_terms(old: Terms) -> Terms:
        return Terms(old.owed_by, old.owed_to, old.due_at, old.due_tz, inp.outcome, old.sources)

    def apply(tx: Tx) -> Applied:
        if call.session.owner_confirms:
            return _propose(tx, call, inp.id, doing)
        return _succeed(tx, env, inp.id, doing, new_terms, inp.reason)

    return command_for(call, apply)


@mutation(
    "commitment.reschedule",
    CommitmentRescheduleInput,
    description=(
        "Give an open commitment a new due time (with its timezone) or none. Only in a "
        "turn the owner started."
    ),
)
def reschedule_command(call: Call[CommitmentRescheduleInput], env: Env) -> Command:
    inp = call.input
    commitments.require_owner_turn(call.session, call.spec.name)
    due_at, due_tz = commitments.due_fields(inp.due)

    def new_terms(old: Terms) -> Terms:
        return Terms(old.owed_by, old.owed_to, due_at, due_tz, commitments.OPEN, old.sources)

    def apply(tx: Tx) -> Applied:
        if call.session.owner_confirms:
            return _propose(tx, call, inp.id, "rescheduling it")
        return _succeed(tx, env, inp.id, "rescheduling it", new_terms, inp.reason)

    return command_for(call, apply)


def _propose(tx: Tx, call: Call[Any], target_id: int, doing: str) -> Applied:
    """In a tainted turn: keep the change, with the agent's reason, for the owner to
    approve (it then runs as the owner's own) or reject; the commitment stays open."""
    target = load_visible(tx.conn, target_id, tx.grant)
    commitments.open_terms(tx.conn, target, doing)  # refused now if it is not open
    require_writable(tx.grant, scopes_of(tx.conn, target.id), f"commitment {target.id}")
    return proposed_changes.propose(tx, call.spec.name, target, call.input)


def _succeed(
    tx: Tx,
    env: Env,
    target_id: int,
    doing: str,
    new_terms: Callable[[Terms], Terms],
    reason: str | None,
) -> Applied:
    """Append the record that follows open commitment ``target_id`` and supersede it."""
    target = load_visible(tx.conn, target_id, tx.grant)
    terms = new_terms(commitments.open_terms(tx.conn, target, doing))
    scopes = scopes_of(tx.conn, target.id)
    require_writable(tx.grant, scopes, f"commitment {target.id}")
    successor, digest = _append_successor(tx, env, target, scopes)
    commitments.write_terms(tx, successor, terms)
    tx.add_edge(successor, target.id, "supersedes")
    supersede(tx, target, successor, tx.at)
    payload: JsonObject = {
        "kind": target.kind,
        "content_hash": digest,
        "scopes": scopes,
        "replaces": [target.id],
        "state": terms.state,
        "due_at": terms.due_at,
    }
    if reason is not None:
        payload["reason_hmac"] = tx.record_text("reason", reason)
    return Applied(successor, payload, {"replaces": target.id, "state": terms.state})


def _append_successor(tx: Tx, env: Env, target: Judgment, scopes: list[str]) -> tuple[int, str]:
    """A new active commitment judgment with ``target``'s words, scopes and vectors (the
    same text has the same vectors: copied, not computed again), and its content hash."""
    session = tx.session
    provenance = provenance_of(session)
    involvement = involvement_of(session)
    successor, digest = tx.append_judgment(
        kind=target.kind,
        topic=target.topic,
        summary=target.summary,
        details=target.details,
        applies_when=target.applies_when,
        steps=target.steps,
        confidence=target.confidence,
        status=Status.ACTIVE.value,
        valid_from=tx.at,
        provenance=provenance,
        involvement=involvement.value,
    )
    bind_scopes(tx.conn, successor, scopes)
    tx.conn.execute(
        "INSERT INTO embeddings (judgment_id, model_id, dim, vector) "
        "SELECT ?, model_id, dim, vector FROM embeddings WHERE judgment_id = ?",
        (successor, target.id),
    )
    has_vector = tx.conn.execute(
        "SELECT 1 FROM embeddings WHERE judgment_id = ? AND model_id = ?",
        (successor, env.model_id),
    ).fetchone()
    if has_vector is None:  # saved under another model: never leave a record unembedded
        vector = env.embed(target.text_for_embedding())
        tx.conn.execute(
            "INSERT INTO embeddings (judgment_id, model_id, dim, vector) VALUES (?, ?, ?, ?)",
            (successor, env.model_id, int(vector.shape[0]), vector.astype("<f4").tobytes()),
        )
    tx.record_added(successor, Status.ACTIVE.value, involvement.value)
    return successor, digest
