"""review.approve and review.reject: the owner's word on a proposal.

Approving makes it active and owner-approved, and only now do the supersessions
it proposed take effect: an agent's revision never retires the owner's rule
before the owner agrees. Rejecting keeps the reason and may leave a tombstone.
"""

from __future__ import annotations

from typing import Any

from mama_core.memory.calls import Call, Env, command_for
from mama_core.memory.inputs import ApproveInput, RejectInput
from mama_core.memory.lifecycle import FROM_SAVE, require_status, supersede
from mama_core.memory.records import Judgment, load_visible, select_columns
from mama_core.memory.tombstones import create_tombstone
from mama_core.memory.writer import Applied, Command, Tx


def approve_command(call: Call, env: Env) -> Command:
    inp = call.input
    assert isinstance(inp, ApproveInput)

    def apply(tx: Tx) -> Applied:
        proposal = load_visible(tx.conn, inp.id, tx.grant)
        require_status(proposal, ("proposed",), "approving it")
        tx.change_status(proposal.id, "proposed", "active", involvement="owner_approved")
        superseded: list[int] = []
        for predecessor in _proposed_predecessors(tx, proposal.id):
            if predecessor.status in ("active", "proposed"):
                supersede(tx, predecessor, proposal.id, proposal.valid_from)
                superseded.append(predecessor.id)
        return Applied(proposal.id, {"superseded": superseded})

    return command_for(call, apply)


def reject_command(call: Call, env: Env) -> Command:
    inp = call.input
    assert isinstance(inp, RejectInput)

    def apply(tx: Tx) -> Applied:
        proposal = load_visible(tx.conn, inp.id, tx.grant)
        require_status(proposal, ("proposed",), "rejecting it")
        tx.change_status(proposal.id, "proposed", "rejected")
        payload: dict[str, Any] = {"reason_hmac": tx.record_text("reason", inp.reason)}
        receipt: dict[str, Any] = {}
        if inp.forbid_resave:
            receipt["tombstone_id"] = create_tombstone(tx, proposal, inp.reason, env.model_id)
            payload["tombstone_id"] = receipt["tombstone_id"]
        return Applied(proposal.id, payload, receipt)

    return command_for(call, apply)


def _proposed_predecessors(tx: Tx, proposal_id: int) -> list[Judgment]:
    rows = tx.conn.execute(
        f"SELECT {select_columns('j')} FROM edges e JOIN judgments j ON j.id = e.dst_id "
        f"WHERE e.src_id = ? AND e.kind = 'supersedes' AND {FROM_SAVE} ORDER BY j.id",
        (proposal_id,),
    ).fetchall()
    return [Judgment.from_row(r) for r in rows]
