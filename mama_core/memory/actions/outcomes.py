"""memory.update_outcome and memory.link: amendments that are events and edges,
never new active judgments, so recall cannot return an audit record as a belief.
On the owner's records, anyone but the owner only proposes them (``ownership``)."""

from __future__ import annotations

from mama_core.errors import InvalidTransitionError
from mama_core.json_types import JsonObject
from mama_core.memory import ownership, proposed_changes
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import LinkInput, UpdateOutcomeInput
from mama_core.memory.records import load_visible
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.scopes.bindings import scopes_of
from mama_core.scopes.reach import require_writable


@mutation(
    "memory.update_outcome",
    UpdateOutcomeInput,
    description=(
        "Record how a judgment turned out; it stays what it was. On the owner's "
        "records this is proposed to the owner (refused in turns the owner did not start)."
    ),
)
def update_outcome_command(call: Call[UpdateOutcomeInput], env: Env) -> Command:
    inp = call.input

    def apply(tx: Tx) -> Applied:
        target = load_visible(tx.conn, inp.id, tx.grant)
        if target.status == "purged":
            raise InvalidTransitionError(
                f"Judgment {target.id} was purged.", details={"id": target.id, "status": "purged"}
            )
        require_writable(tx.grant, scopes_of(tx.conn, target.id), f"judgment {target.id}")
        if ownership.decide(tx.session, call.spec.name, [target]) is ownership.Decision.PROPOSE:
            return proposed_changes.propose(tx, call.spec.name, target, inp)
        tx.set_outcome(target.id, inp.outcome)
        payload: JsonObject = {"outcome_hash": tx.keyed_hash(inp.outcome)}
        if inp.reason:
            payload["reason_hmac"] = tx.record_text("reason", inp.reason)
        return Applied(target.id, payload)

    return command_for(call, apply)


@mutation(
    "memory.link",
    LinkInput,
    description=(
        "Relate two judgments (refines, contradicts, builds_on, ...). Touching the "
        "owner's records this is proposed to the owner (refused in turns the owner did not "
        "start)."
    ),
)
def link_command(call: Call[LinkInput], env: Env) -> Command:
    inp = call.input

    def apply(tx: Tx) -> Applied:
        src = load_visible(tx.conn, inp.src, tx.grant)
        dst = load_visible(tx.conn, inp.dst, tx.grant)
        if ownership.decide(tx.session, call.spec.name, [src, dst]) is ownership.Decision.PROPOSE:
            owners = ownership.protected([dst, src])
            return proposed_changes.propose(tx, call.spec.name, owners[0], inp)
        edge_id = tx.add_edge(src.id, dst.id, inp.kind.value, inp.reason)
        tx.touch(src.id)
        tx.touch(dst.id)
        payload: JsonObject = {"edge_id": edge_id, "src": src.id, "dst": dst.id}
        payload["kind"] = inp.kind.value
        if inp.reason:
            payload["reason_hmac"] = tx.record_text("reason", inp.reason)
        return Applied(src.id, payload, {"edge_id": edge_id})

    return command_for(call, apply)
