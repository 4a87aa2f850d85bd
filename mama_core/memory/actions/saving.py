"""memory.save: a new judgment, possibly revising others through ``replaces``.

The vector is computed before the transaction; inside it the targets are
checked (visible, writable, whose they are), the tombstones consulted, and the
row, its scopes, vector and ``supersedes`` edges written. A proposal's
supersessions wait for the owner's approval: anyone but the owner replacing the
owner's record only proposes the replacement (``ownership``).
"""

from __future__ import annotations

import json

import numpy as np

from mama_core import clock
from mama_core.memory import commitments, evidence, ownership, verbs
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import SaveInput
from mama_core.memory.lifecycle import supersede
from mama_core.memory.provenance import initial_status, involvement_of, provenance_of
from mama_core.memory.records import load_visible
from mama_core.memory.scopes import require_writable, write_scopes
from mama_core.memory.tombstones import refuse_if_tombstoned
from mama_core.memory.verbs import Verb
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.model import Kind, Status, content_fields, embedding_text
from mama_core.scope_bindings import bind_scopes, scopes_of


@mutation(
    "memory.save",
    SaveInput,
    description=(
        "Save a judgment (decision, fact, preference, constraint, lesson, workflow, "
        "task, schedule, commitment). Guidance you save is proposed for the owner's review; "
        "a commitment (with its terms in `commitment`) the owner owes, found outside a turn "
        "the owner started, too."
    ),
)
def save_command(call: Call[SaveInput], env: Env) -> Command:
    """Prepare a save: scopes resolved and the vector computed outside the transaction."""
    inp = call.input
    scopes = write_scopes(call.grant, inp.scopes)
    text = embedding_text(inp.topic, inp.summary, inp.details, inp.applies_when)
    vector = None if call.replay_known else env.embed(text)
    valid_from = clock.iso(inp.valid_from) if inp.valid_from is not None else None

    def apply(tx: Tx) -> Applied:
        return _apply_save(tx, inp, scopes, vector, valid_from, env)

    return command_for(call, apply)


def _apply_save(
    tx: Tx,
    inp: SaveInput,
    scopes: tuple[str, ...],
    vector: np.ndarray | None,
    valid_from: str | None,
    env: Env,
) -> Applied:
    if vector is None:  # unreachable (receipts are never deleted); never store a row unembedded
        vector = env.embed(embedding_text(inp.topic, inp.summary, inp.details, inp.applies_when))
    session = tx.session
    predecessors = [load_visible(tx.conn, pid, tx.grant) for pid in inp.replaces]
    for pred in predecessors:
        verbs.require(Verb.REPLACE, pred.id, pred.status)
        require_writable(tx.grant, scopes_of(tx.conn, pred.id), f"judgment {pred.id}")
    decision = ownership.decide(session, "memory.save", predecessors)
    proposes = decision is ownership.Decision.PROPOSE
    cited = inp.evidence_ids()
    evidence.check_evidence(tx.conn, cited, tx.grant)  # only items the caller sees
    terms = None
    if inp.kind is Kind.COMMITMENT:
        terms = commitments.terms_of_input(inp.commitment, cited)
        status = commitments.landing_status(session, terms, proposes, bool(predecessors))
    else:
        status = initial_status(session, inp.kind, proposes)
    if not session.is_owner_turn and any(p.kind == Kind.COMMITMENT for p in predecessors):
        status = Status.PROPOSED  # taking an open commitment's place would close it
    if inp.propose:
        status = Status.PROPOSED  # the caller asks for the owner's word on its guess
    involvement = involvement_of(session)
    refuse_if_tombstoned(
        tx.conn,
        scopes,
        inp.summary,
        vector,
        env.model_id,
        env.tombstone_threshold,
        tx.secret,
        env.swap_same_meaning,
    )
    if status is Status.PROPOSED and not session.acts_as_owner:
        evidence.refuse_if_rejected(
            tx.conn,
            scopes,
            inp.summary,
            vector,
            cited,
            env.model_id,
            env.tombstone_threshold,
            env.swap_same_meaning,
        )
    start = valid_from or tx.at
    provenance = evidence.stamp(provenance_of(session), cited)
    content = content_fields(
        kind=inp.kind.value,
        topic=inp.topic,
        summary=inp.summary,
        details=inp.details,
        applies_when=inp.applies_when,
        steps=list(inp.steps),
        confidence=inp.confidence,
        valid_from=start,
        recorded_at=tx.at,
        provenance=provenance,
        command_id=tx.command_id,
    )
    digest = tx.keyed_hash(content)  # keyed: a purge leaves no brute-forceable hash
    cursor = tx.conn.execute(
        "INSERT INTO judgments (kind, topic, summary, details, applies_when, steps, confidence, "
        "status, valid_from, recorded_at, provenance, involvement, command_id, content_hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            inp.kind.value,
            inp.topic,
            inp.summary,
            inp.details,
            inp.applies_when,
            json.dumps(list(inp.steps)) if inp.steps else None,
            inp.confidence,
            status.value,
            start,
            tx.at,
            json.dumps(provenance, sort_keys=True),
            involvement.value,
            content["command_id"],
            digest,
        ),
    )
    judgment_id = int(cursor.lastrowid or 0)
    bind_scopes(tx.conn, judgment_id, scopes)
    if terms is not None:
        commitments.write_terms(tx, judgment_id, terms)
    blob = vector.astype("<f4").tobytes()
    dim = int(vector.shape[0])
    # Sealed here, so the seal trigger has nothing to rewrite (it checks the seal).
    seal = tx.secret.seal("embeddings", judgment_id, env.model_id, dim, blob)
    tx.conn.execute(
        "INSERT INTO embeddings (judgment_id, model_id, dim, vector, seal) VALUES (?, ?, ?, ?, ?)",
        (judgment_id, env.model_id, dim, blob, seal),
    )
    tx.record_added(judgment_id, status.value, involvement.value)
    for pred in predecessors:
        tx.conn.execute(
            "INSERT INTO edges (src_id, dst_id, kind, reason, created_at, event_id) "
            "VALUES (?, ?, 'supersedes', NULL, ?, ?)",
            (judgment_id, pred.id, tx.at, tx.event_id),
        )
        tx.touch(pred.id)
        if status.value == "active":
            supersede(tx, pred, judgment_id, start)
    return Applied(
        judgment_id=judgment_id,
        payload={
            "kind": inp.kind.value,
            "content_hash": digest,
            "scopes": list(scopes),
            "replaces": list(inp.replaces),
            "valid_from": start,
        },
    )
