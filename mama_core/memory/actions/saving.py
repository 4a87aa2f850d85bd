"""memory.save: a new judgment, possibly revising others through ``replaces``.

The vector is computed before the transaction; inside it the targets are
checked (visible, writable, whose they are), the tombstones consulted, and the
row, its scopes, vector and ``supersedes`` edges written. A proposal's
supersessions wait for the owner's approval: anyone but the owner replacing the
owner's record only proposes the replacement (``ownership``).

A save that restates a live memory in the same scopes (``restatements``) does not
pile up: the owner's is answered "already remembered as #N" (code
``already_remembered``) and writes only its event, naming #N; another actor's
becomes a proposed merge: a ``proposed`` record whose event names #N, which the
owner approves (kept beside #N, shown as one with it in search) or rejects. An
actor restating a waiting proposal is answered ``already_proposed``. The owner may
insist (``even_if_duplicate``): the record is saved as usual with a ``relates_to``
edge to #N, the owner's word that the two are two things.
"""

from __future__ import annotations

import numpy as np

from mama_core import clock
from mama_core.errors import NotGrantedError
from mama_core.memory import commitments, evidence, ownership, verbs
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import SaveInput
from mama_core.memory.lifecycle import supersede
from mama_core.memory.provenance import initial_status, involvement_of, provenance_of
from mama_core.memory.records import load_visible
from mama_core.memory.restatements import Restatement, find_restatement, find_restatement_near
from mama_core.memory.tombstones import refuse_if_tombstoned
from mama_core.memory.verbs import Verb
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.model import Kind, Status, embedding_text
from mama_core.scopes.bindings import bind_scopes, scopes_of
from mama_core.scopes.reach import require_writable, write_scopes


@mutation(
    "memory.save",
    SaveInput,
    description=(
        "Save a judgment (decision, fact, preference, constraint, lesson, workflow, "
        "task, schedule, commitment). Guidance you save is proposed for the owner's review; "
        "a commitment (with its terms in `commitment`) the owner owes, found outside a turn "
        "the owner started, too. Saying again what a memory in the same scopes says is "
        "answered with that memory's id (`duplicate_of`), or proposed to the owner as a merge."
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
    if inp.even_if_duplicate and not session.acts_as_owner:
        raise NotGrantedError(
            "Only the owner can save a memory beside one that says the same; leave "
            "even_if_duplicate out and the owner reviews it as a proposed merge.",
            details={"field": "even_if_duplicate"},
        )
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
    restated = _restated(tx, inp, scopes, vector, env)
    if restated is not None and not inp.even_if_duplicate:
        if session.acts_as_owner or restated.status == Status.PROPOSED.value:
            return _already_said(inp, scopes, restated, session.acts_as_owner)
        status = Status.PROPOSED  # another actor's restatement: a merge the owner reviews
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
    judgment_id, digest = tx.append_judgment(
        kind=inp.kind.value,
        topic=inp.topic,
        summary=inp.summary,
        details=inp.details,
        applies_when=inp.applies_when,
        steps=inp.steps,
        confidence=inp.confidence,
        status=status.value,
        valid_from=start,
        provenance=provenance,
        involvement=involvement.value,
    )
    bind_scopes(tx.conn, judgment_id, scopes)
    if env.near is not None:
        env.near.wrote(judgment_id, inp.kind.value, scopes, vector)
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
        tx.add_edge(judgment_id, pred.id, "supersedes")
        tx.touch(pred.id)
        if status.value == "active":
            supersede(tx, pred, judgment_id, start)
    payload: dict[str, object] = {
        "kind": inp.kind.value,
        "content_hash": digest,
        "scopes": list(scopes),
        "replaces": list(inp.replaces),
        "valid_from": start,
    }
    receipt: dict[str, object] = {}
    if restated is not None:
        payload["restates"] = restated.judgment_id
        receipt["duplicate_of"] = restated.judgment_id
        if inp.even_if_duplicate:  # the owner's word: two things, never grouped as one
            tx.add_edge(judgment_id, restated.judgment_id, "relates_to")
            tx.touch(restated.judgment_id)
            receipt["code"] = "saved_anyway"
        else:
            receipt["code"] = "proposed_merge"
            receipt["message"] = (
                f"Proposed as #{judgment_id} for the owner's review: it says what "
                f"#{restated.judgment_id} already says."
            )
    return Applied(judgment_id=judgment_id, payload=payload, receipt=receipt)


def _restated(
    tx: Tx, inp: SaveInput, scopes: tuple[str, ...], vector: np.ndarray, env: Env
) -> Restatement | None:
    """The live record this save restates, if any. A revision (``replaces``) says
    something new about its targets, and a commitment is its terms, so neither is
    matched. The owner's save is compared with beliefs only (a proposal the owner
    restates is the owner's own word now); anyone else's with waiting proposals too,
    so an agent saying a thing again does not fill the review queue.

    With the engine's vector cache loaded (a search or a large import loaded it) the
    candidates come from memory and an index of exact words (``find_restatement_near``);
    otherwise the neighbourhood is read from the store (``find_restatement``)."""
    if not env.check_restatements or inp.replaces or inp.kind is Kind.COMMITMENT:
        return None
    owner = tx.session.acts_as_owner
    statuses = ("active",) if owner else ("active", "proposed")
    cache = None if env.near is None else env.near.cache()
    if (
        env.near is not None
        and cache is not None
        and cache.model_id == env.model_id
        and cache.dim == vector.shape[0]
    ):
        return find_restatement_near(
            tx.conn,
            env.near,
            cache,
            kind=inp.kind.value,
            scopes=scopes,
            summary=inp.summary,
            applies_when=inp.applies_when,
            said_key=tx.secret.said_key(inp.summary, inp.applies_when),
            vector=vector,
            model_id=env.model_id,
            threshold=env.restatement_threshold,
            swap_same_meaning=env.swap_same_meaning,
            statuses=statuses,
        )
    return find_restatement(
        tx.conn,
        kind=inp.kind.value,
        scopes=scopes,
        summary=inp.summary,
        applies_when=inp.applies_when,
        vector=vector,
        model_id=env.model_id,
        threshold=env.restatement_threshold,
        swap_same_meaning=env.swap_same_meaning,
        statuses=statuses,
    )


def _already_said(
    inp: SaveInput, scopes: tuple[str, ...], restated: Restatement, by_owner: bool
) -> Applied:
    """Nothing new: the event names the record the save restates (a link in the log,
    never an edit of it), and the receipt says which and how to insist."""
    jid = restated.judgment_id
    if by_owner:
        code = "already_remembered"
        message = (
            f"Already remembered as #{jid}; nothing new was saved. To keep it as its own "
            "memory, save it again with even_if_duplicate."
        )
    else:
        code = "already_proposed"
        message = f"Already proposed as #{jid}, waiting for the owner's review; nothing new saved."
    payload: dict[str, object] = {
        "kind": inp.kind.value,
        "scopes": list(scopes),
        "restates": jid,
        "outcome": code,
    }
    if restated.similarity is not None:
        payload["similarity"] = round(restated.similarity, 4)
    return Applied(
        judgment_id=jid,
        payload=payload,
        receipt={"duplicate_of": jid, "code": code, "message": message},
    )
