"""memory.tombstone and tombstone.lift: the owner forbids a judgment's text from
coming back, or allows it again (the matching itself is ``tombstones``)."""

from __future__ import annotations

from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import LiftInput, TombstoneInput
from mama_core.memory.records import load_visible
from mama_core.memory.tombstones import create_tombstone, lift_tombstone
from mama_core.memory.writer import Applied, Command, Tx


@mutation(
    "memory.tombstone",
    TombstoneInput,
    description="Forbid a judgment's text from being saved again.",
    owner_only=True,
)
def tombstone_command(call: Call[TombstoneInput], env: Env) -> Command:
    """memory.tombstone: forbid a judgment's text from coming back; its status stays."""
    inp = call.input

    def apply(tx: Tx) -> Applied:
        target = load_visible(tx.conn, inp.id, tx.grant)
        tombstone_id = create_tombstone(tx, target, inp.reason, env.model_id)
        payload = {
            "reason_hmac": tx.record_text("reason", inp.reason),
            "tombstone_id": tombstone_id,
        }
        return Applied(target.id, payload, {"tombstone_id": tombstone_id})

    return command_for(call, apply)


@mutation(
    "tombstone.lift",
    LiftInput,
    description="Lift a tombstone so the text may be saved again.",
    owner_only=True,
)
def lift_command(call: Call[LiftInput], env: Env) -> Command:
    """tombstone.lift: the owner allows the text again."""
    inp = call.input

    def apply(tx: Tx) -> Applied:
        judgment_id = lift_tombstone(tx, inp.tombstone_id)
        payload = {
            "reason_hmac": tx.record_text("reason", inp.reason),
            "tombstone_id": inp.tombstone_id,
        }
        return Applied(judgment_id, payload, {"tombstone_id": inp.tombstone_id})

    return command_for(call, apply)
