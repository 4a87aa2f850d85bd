"""memory.purge: the owner erases the text of a judgment (and optionally the ones it
replaced) and/or of observations (e.g. the messages that quote it), in one transaction.

The row stays with its status ``purged`` and empty text; the FTS triggers drop
its tokens (secure-delete), its vectors are deleted, tombstones made from it
keep their fingerprint but lose their vector, the reasons given about it
(retire, reject, link, outcome, tombstone) and a commitment's terms (names, due)
are erased too, and the event keeps only the keyed hash (HMAC under the store
secret) of what was erased, who, when and why. After the commit the store's
backups are deleted and the WAL is truncated (``purge_pending``), retried until no reader blocks it.
"""

from __future__ import annotations

import json
from typing import NotRequired, TypedDict

from mama_core.json_types import JsonObject
from mama_core.memory import commitments, proposed_changes, verbs
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.events import ERASED
from mama_core.memory.inputs import PurgeInput
from mama_core.memory.observation_erasure import erase_observations
from mama_core.memory.purge_pending import mark_pending, settle
from mama_core.memory.records import load_visible, predecessors
from mama_core.memory.tombstones import fingerprint
from mama_core.memory.verbs import Verb
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.model import Judgment, Kind
from mama_core.store.connection import Connection


@mutation(
    "memory.purge",
    PurgeInput,
    description="Erase the text of a judgment and/or observations; the fact of it stays.",
    owner_only=True,
)
def purge_command(call: Call[PurgeInput], env: Env) -> Command:
    inp = call.input
    wal_and_backups = env.config.checkpoint_wal_after_purge

    def apply(tx: Tx) -> Applied:
        applied = _purge_judgment(tx, inp) if inp.id is not None else None
        observations = erase_observations(tx, inp.all_observation_ids())
        if wal_and_backups:
            mark_pending(tx.conn, tx.event_id, tx.at)
        receipt: JsonObject = {"observations_purged": [o["id"] for o in observations]}
        if applied is None:
            if len(observations) == 1:
                receipt["observation_id"] = observations[0]["id"]
            return Applied(None, {"reason": inp.reason, "observations": observations}, receipt)
        payload = {**applied.payload}
        if observations:
            payload["observations"] = observations
        return Applied(applied.judgment_id, payload, {**applied.receipt, **receipt})

    return command_for(call, apply, after_commit=_settle if wal_and_backups else None)


def _settle(conn: Connection) -> JsonObject:
    """``settle``'s report as the receipt's post-commit (wire) fields."""
    return {**settle(conn)}


def _purge_judgment(tx: Tx, inp: PurgeInput) -> Applied:
    assert inp.id is not None
    target = load_visible(tx.conn, inp.id, tx.grant)
    verbs.require(Verb.PURGE, target.id, target.status)
    chain = [target]
    if inp.include_chain:
        chain += [load_visible(tx.conn, pid, tx.grant) for pid in predecessors(tx.conn, target.id)]
    erased = [{"id": j.id, "hmac": erase_judgment(tx, j)} for j in chain if j.status != "purged"]
    erase_reasons(tx, [int(e["id"]) for e in erased])
    payload = {"reason": inp.reason, "erased": erased, "include_chain": inp.include_chain}
    return Applied(target.id, payload, {"purged": [e["id"] for e in erased]})


class ErasedText(TypedDict):
    """The fields a purge erases of a judgment (and a commitment's terms), as hashed
    into its event."""

    topic: str
    summary: str
    details: str
    applies_when: str | None
    steps: list[str]
    outcome: str | None
    terms: NotRequired[commitments.ErasedTerms]


def erased_text(j: Judgment) -> ErasedText:
    """The fields a purge erases, as hashed into its event."""
    return {
        "topic": j.topic,
        "summary": j.summary,
        "details": j.details,
        "applies_when": j.applies_when,
        "steps": j.steps,
        "outcome": j.outcome,
    }


def erase_judgment(tx: Tx, j: Judgment) -> str:
    """Erase one judgment's text and vectors (a commitment's terms too: who owes whom and
    the due are the owner's to forget); return the keyed hash of what was erased."""
    erased = erased_text(j)
    terms = commitments.erase_terms(tx, j.id) if j.kind == Kind.COMMITMENT else None
    if terms is not None:
        erased["terms"] = terms
    digest = erased_digest(tx, erased)
    tx.change_status(
        j.id,
        j.status,
        "purged",
        topic="",
        summary="",
        details="",
        applies_when=None,
        steps=None,
        outcome=None,
        content_hash="",  # rows saved before hashes were keyed held a bare sha256 here
    )
    tx.conn.execute("DELETE FROM embeddings WHERE judgment_id = ?", (j.id,))
    tx.conn.execute("UPDATE tombstones SET vector = NULL WHERE judgment_id = ?", (j.id,))
    rekey_tombstones(tx, j)
    proposed_changes.erase_for(tx, j.id)
    return digest


def erased_digest(tx: Tx, erased: ErasedText) -> str:
    """What the log keeps of erased text: its keyed hash, never a bare one (a bare
    sha256 of a PIN or a salary gives the text back to anyone who tries them all)."""
    return tx.keyed_hash(erased)


def rekey_tombstones(tx: Tx, j: Judgment) -> None:
    """A tombstone made before fingerprints were keyed holds the bare sha256 of the
    normalised summary; once the text is purged that would give a short text back
    to anyone who tries every value, so it becomes the keyed fingerprint (which
    still blocks the same text)."""
    bare, keyed = fingerprint(j.summary), fingerprint(j.summary, tx.secret)
    rows = tx.conn.execute(
        "SELECT id FROM tombstones WHERE judgment_id = ? AND fingerprint = ?", (j.id, bare)
    ).fetchall()
    for (tombstone_id,) in rows:
        tx.conn.execute("UPDATE tombstones SET fingerprint = ? WHERE id = ?", (keyed, tombstone_id))
        tx.wrote("tombstones", tombstone_id)


def erase_reasons(tx: Tx, judgment_ids: list[int]) -> None:
    """Erase the reasons given about the purged judgments: the texts kept beside the
    events that touched them, the reasons of their edges and of their tombstones.
    The chained events keep only the keyed hashes; each changed row is re-recorded
    by this purge's event so ``verify`` still holds."""
    if not judgment_ids:
        return
    ids = json.dumps(sorted(judgment_ids))
    texts = tx.conn.execute(
        "SELECT t.event_id, t.field FROM event_texts t JOIN events e ON e.id = t.event_id "
        "WHERE t.text IS NOT NULL AND (e.judgment_id IN (SELECT value FROM json_each(?1)) "
        "OR EXISTS (SELECT 1 FROM json_each(e.payload, '$.touched') "
        "WHERE value IN (SELECT value FROM json_each(?1))))",
        (ids,),
    ).fetchall()
    for event_id, field in texts:
        tx.conn.execute(
            "UPDATE event_texts SET text = NULL, erased_at = ? WHERE event_id = ? AND field = ?",
            (tx.at, event_id, field),
        )
        tx.wrote("event_texts", f"{event_id}:{field}")
    edges = tx.conn.execute(
        "SELECT id FROM edges WHERE reason IS NOT NULL AND (src_id IN (SELECT value FROM "
        "json_each(?1)) OR dst_id IN (SELECT value FROM json_each(?1)))",
        (ids,),
    ).fetchall()
    for (edge_id,) in edges:
        tx.conn.execute("UPDATE edges SET reason = NULL WHERE id = ?", (edge_id,))
        tx.wrote("edges", edge_id)
    tombstones = tx.conn.execute(
        "SELECT id FROM tombstones WHERE judgment_id IN (SELECT value FROM json_each(?))",
        (ids,),
    ).fetchall()
    for (tombstone_id,) in tombstones:
        tx.conn.execute("UPDATE tombstones SET reason = ? WHERE id = ?", (ERASED, tombstone_id))
        tx.wrote("tombstones", tombstone_id)
