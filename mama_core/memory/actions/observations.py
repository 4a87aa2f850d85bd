"""observation.record: raw inputs (messages, mails, cards) kept as they arrived,
de-duplicated by source and external id, so they can be cited and purged."""

from __future__ import annotations

from mama_core import clock
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.inputs import ObservationInput
from mama_core.memory.observations import IfHeld, NewObservation, record_observation
from mama_core.memory.writer import Applied, Command, Tx


@mutation(
    "observation.record",
    ObservationInput,
    description="Keep a raw input (message, mail, card) exactly as it arrived.",
    scan_secrets=False,
    for_agents=False,
)
def observation_command(call: Call[ObservationInput], env: Env) -> Command:
    inp = call.input

    def apply(tx: Tx) -> Applied:
        received = clock.iso(inp.received_at) if inp.received_at is not None else tx.at
        observation_id = record_observation(
            tx.conn,
            NewObservation(inp.source, inp.external_id, inp.author, inp.text, received),
            if_held=IfHeld.REFUSE,
        )
        payload = {
            "observation_id": observation_id,
            "source": inp.source,
            # keyed: a mail's external id names it, and a purge cannot edit the chained log
            "external_id_hmac": tx.keyed_hash({"external_id": inp.external_id}),
            "content_hash": tx.keyed_hash({"author": inp.author, "text": inp.text}),
        }
        return Applied(None, payload, {"observation_id": observation_id})

    return command_for(call, apply)
