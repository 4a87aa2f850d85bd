"""memory.retire: stop believing a judgment, with a reason, without touching its text.

Superseded needs the successor (``by``); its world validity closes at the
successor's ``valid_from``. Stale closes it now; contradicted leaves it (it
never held). ``forbid_resave`` also leaves a tombstone (the owner's alone). Anyone
but the owner retiring the owner's record only proposes it (``ownership``).
"""

from __future__ import annotations

from mama_core.errors import InvalidTransitionError
from mama_core.json_types import JsonObject
from mama_core.memory import commitments, ownership, proposed_changes, verbs
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import RetireInput
from mama_core.memory.lifecycle import supersede
from mama_core.memory.records import load_visible
from mama_core.memory.tombstones import create_tombstone
from mama_core.memory.verbs import Verb
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.model import Kind, RetireStatus
from mama_core.scopes.bindings import scopes_of
from mama_core.scopes.reach import require_writable


@mutation(
    "memory.retire",
    RetireInput,
    description=(
        "Stop believing a judgment (stale, superseded or contradicted), with a reason. "
        "On the owner's records this only proposes it; the owner approves or rejects."
    ),
)
def retire_command(call: Call[RetireInput], env: Env) -> Command:
    inp = call.input

    def apply(tx: Tx) -> Applied:
        target = load_visible(tx.conn, inp.id, tx.grant)
        if target.kind == Kind.COMMITMENT:  # retiring one would close it: the owner's word
            commitments.require_owner_turn(tx.session, call.spec.name)
        verbs.require(Verb.RETIRE, target.id, target.status)
        require_writable(tx.grant, scopes_of(tx.conn, target.id), f"judgment {target.id}")
        successor = None if inp.by is None else load_visible(tx.conn, inp.by, tx.grant)
        if successor is not None and successor.status in ("purged", "rejected"):
            raise InvalidTransitionError(
                f"Judgment {successor.id} is {successor.status} and cannot replace another.",
                details={"id": successor.id, "status": successor.status},
            )
        involved = [target] if successor is None else [target, successor]
        if ownership.decide(tx.session, call.spec.name, involved) is ownership.Decision.PROPOSE:
            return proposed_changes.propose(tx, call.spec.name, target, inp)
        payload: JsonObject = {
            "reason_hmac": tx.record_text("reason", inp.reason),
            "status": inp.status.value,
        }
        if successor is not None:
            edge = "supersedes" if inp.status is RetireStatus.SUPERSEDED else "contradicts"
            tx.add_edge(successor.id, target.id, edge, inp.reason)
            tx.touch(successor.id)
            payload["by"] = successor.id
        if inp.status is RetireStatus.SUPERSEDED:
            assert successor is not None
            supersede(tx, target, successor.id, successor.valid_from)
        elif inp.status is RetireStatus.STALE:
            closes = max(target.valid_from, tx.at)
            if target.valid_until is not None:
                closes = min(target.valid_until, closes)
            tx.change_status(target.id, target.status, "stale", valid_until=closes)
        else:
            tx.change_status(target.id, target.status, "contradicted")
        receipt: JsonObject = {}
        if inp.forbid_resave:
            receipt["tombstone_id"] = create_tombstone(tx, target, inp.reason, env.model_id)
            payload["tombstone_id"] = receipt["tombstone_id"]
        return Applied(target.id, payload, receipt)

    return command_for(call, apply)
