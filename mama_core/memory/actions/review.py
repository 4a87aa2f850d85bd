"""review.approve and review.reject: the owner's word on a proposal.

Approving makes it active and owner-approved, and only now do the supersessions
it proposed take effect: an agent's revision never retires the owner's rule
before the owner agrees. The owner may say why, kept beside the event like any
reason (so a purge can erase it). Rejecting keeps the reason and may leave a tombstone.
A change proposed to one of the owner's records (``proposed_changes``) is
approved or rejected with the same verbs and the record's id; a change proposed to
the owner's settings, which has no record, with its ``change_id`` alone.
"""

from __future__ import annotations

from mama_core.errors import InvalidInputError, InvalidTransitionError
from mama_core.json_types import JsonObject
from mama_core.memory import proposed_changes, verbs
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import ApproveInput, RejectInput
from mama_core.memory.lifecycle import FROM_SAVE, supersede
from mama_core.memory.proposed_changes import ChangeProposal
from mama_core.memory.records import load_visible
from mama_core.memory.tombstones import create_tombstone
from mama_core.memory.verbs import Verb
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.model import Judgment, select_columns
from mama_core.store.connection import Connection


@mutation(
    "review.approve",
    ApproveInput,
    description=(
        "Approve a proposed judgment (it becomes active), or apply the change "
        "proposed to one of the owner's records as the owner's own."
    ),
    owner_only=True,
)
def approve_command(call: Call[ApproveInput], env: Env) -> Command:
    inp = call.input

    def apply(tx: Tx) -> Applied:
        applied = approve(tx)
        if inp.reason is None:
            return applied
        # A change's own action may have kept its reason under "reason" already.
        field = "approval_reason" if "reason_hmac" in applied.payload else "reason"
        payload = {**applied.payload, f"{field}_hmac": tx.record_text(field, inp.reason)}
        return Applied(applied.judgment_id, payload, applied.receipt)

    def approve(tx: Tx) -> Applied:
        if inp.id is None:
            return proposed_changes.approve(tx, _waiting_setting_change(tx.conn, inp), env)
        proposal = load_visible(tx.conn, inp.id, tx.grant)
        change = _waiting_change(tx.conn, proposal, inp.change_id)
        if change is not None:
            return proposed_changes.approve(tx, change, env)
        verbs.require(Verb.APPROVE, proposal.id, proposal.status)
        tx.change_status(proposal.id, "proposed", "active", involvement="owner_approved")
        superseded: list[int] = []
        for predecessor in _proposed_predecessors(tx, proposal.id):
            if predecessor.status in ("active", "proposed"):
                supersede(tx, predecessor, proposal.id, proposal.valid_from)
                superseded.append(predecessor.id)
        return Applied(proposal.id, {"superseded": superseded})

    return command_for(call, apply)


@mutation(
    "review.reject",
    RejectInput,
    description=(
        "Reject a proposed judgment, or the change proposed to a record, keeping the reason."
    ),
    owner_only=True,
)
def reject_command(call: Call[RejectInput], env: Env) -> Command:
    inp = call.input

    def apply(tx: Tx) -> Applied:
        if inp.id is None:
            change = _waiting_setting_change(tx.conn, inp)
            if inp.forbid_resave:
                raise InvalidInputError(
                    "forbid_resave does not apply to a change proposed to your settings: "
                    "rejecting it leaves them as they are.",
                    details={"errors": [], "fields": ["forbid_resave"]},
                )
            return proposed_changes.reject(tx, change, inp.reason)
        proposal = load_visible(tx.conn, inp.id, tx.grant)
        change = _waiting_change(tx.conn, proposal, inp.change_id)
        if change is not None:
            if inp.forbid_resave:
                raise InvalidInputError(
                    "forbid_resave does not apply to a proposed change: rejecting it "
                    f"leaves judgment {proposal.id} as it is.",
                    details={"errors": [], "fields": ["forbid_resave"]},
                )
            return proposed_changes.reject(tx, change, inp.reason)
        verbs.require(Verb.REJECT, proposal.id, proposal.status)
        tx.change_status(proposal.id, "proposed", "rejected")
        payload: JsonObject = {"reason_hmac": tx.record_text("reason", inp.reason)}
        receipt: JsonObject = {}
        if inp.forbid_resave:
            receipt["tombstone_id"] = create_tombstone(tx, proposal, inp.reason, env.model_id)
            payload["tombstone_id"] = receipt["tombstone_id"]
        return Applied(proposal.id, payload, receipt)

    return command_for(call, apply)


def _waiting_change(
    conn: Connection, judgment: Judgment, change_id: int | None
) -> ChangeProposal | None:
    """The change proposed to ``judgment`` that the owner is deciding, if any; with
    ``change_id``, exactly that one (a stale review card must not decide a newer change)."""
    change = proposed_changes.pending_for(conn, judgment.id)
    if change_id is not None and (change is None or change.id != change_id):
        raise InvalidTransitionError(
            f"Proposed change {change_id} to judgment {judgment.id} is no longer waiting.",
            details={"id": judgment.id, "change_id": change_id},
        )
    return change


def _waiting_setting_change(conn: Connection, inp: ApproveInput | RejectInput) -> ChangeProposal:
    """The change proposed to the owner's settings that ``inp`` names by its change id
    alone, if it still waits (a newer proposal or a decision may have closed it)."""
    assert inp.change_id is not None  # the input names an id or a change id
    change = proposed_changes.pending_by_id(conn, inp.change_id)
    if change is None or change.setting_key is None:
        why = "is no longer waiting" if change is None else "is a change to a record"
        raise InvalidTransitionError(
            f"Proposed change {inp.change_id} {why}"
            + ("." if change is None else f": name record {change.judgment_id} with it."),
            details={"change_id": inp.change_id},
        )
    return change


def _proposed_predecessors(tx: Tx, proposal_id: int) -> list[Judgment]:
    rows = tx.conn.execute(
        f"SELECT {select_columns('j')} FROM edges e JOIN judgments j ON j.id = e.dst_id "
        f"WHERE e.src_id = ? AND e.kind = 'supersedes' AND {FROM_SAVE} ORDER BY j.id",
        (proposal_id,),
    ).fetchall()
    return [Judgment.from_row(r) for r in rows]
