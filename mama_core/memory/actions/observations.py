"""observation.record: raw inputs (messages, mails, cards) kept as they arrived,
de-duplicated by source and external id, so they can be cited and purged."""

from __future__ import annotations

from mama_core import clock
from mama_core.memory.dispatcher import Call, Env, command_for, mutation
from mama_core.memory.errors import CommandConflictError
from mama_core.memory.inputs import ObservationInput
from mama_core.memory.observation_erasure import find_observation
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
        existing = find_observation(tx.conn, inp.source, inp.external_id)
        if existing is not None:
            raise CommandConflictError(
                f"Observation {inp.source}/{inp.external_id} is already recorded (id {existing}).",
                details={"observation_id": existing},
            )
        received = clock.iso(inp.received_at) if inp.received_at is not None else tx.at
        cursor = tx.conn.execute(
            "INSERT INTO observations (source, external_id, author, text, received_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (inp.source, inp.external_id, inp.author, inp.text, received),
        )
        observation_id = int(cursor.lastrowid or 0)
        payload = {
            "observation_id": observation_id,
            "source": inp.source,
            # keyed: a mail's external id names it, and a purge cannot edit the chained log
            "external_id_hmac": tx.keyed_hash({"external_id": inp.external_id}),
            "content_hash": tx.keyed_hash({"author": inp.author, "text": inp.text}),
        }
        return Applied(None, payload, {"observation_id": observation_id})

    return command_for(call, apply)
