"""checkpoint.save and checkpoint.list: where a piece of work stands, per scope."""

from __future__ import annotations

import json

from mama_core.memory.dispatcher import Call, Env, command_for, mutation, query
from mama_core.memory.inputs import CheckpointListInput, CheckpointSaveInput
from mama_core.memory.provenance import provenance_of
from mama_core.memory.results import CheckpointEntry, CheckpointListResult
from mama_core.memory.writer import Applied, Command, Tx
from mama_core.scopes.bindings import ensure_scope_ids
from mama_core.scopes.reach import read_scopes, write_scopes
from mama_core.store.connection import Connection


@mutation(
    "checkpoint.save",
    CheckpointSaveInput,
    description="Save where a piece of work stands, to resume it later.",
)
def checkpoint_save_command(call: Call[CheckpointSaveInput], env: Env) -> Command:
    inp = call.input
    (scope,) = write_scopes(call.grant, None if inp.scope is None else [inp.scope])

    def apply(tx: Tx) -> Applied:
        (scope_id,) = ensure_scope_ids(tx.conn, [scope])
        cursor = tx.conn.execute(
            "INSERT INTO checkpoints (scope_id, summary, state, created_at, provenance, event_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                scope_id,
                inp.summary,
                json.dumps(inp.state, sort_keys=True),
                tx.at,
                json.dumps(provenance_of(tx.session), sort_keys=True),
                tx.event_id,
            ),
        )
        checkpoint_id = int(cursor.lastrowid or 0)
        payload = {
            "checkpoint_id": checkpoint_id,
            "scope": scope,
            "content_hash": tx.keyed_hash({"summary": inp.summary, "state": inp.state}),
        }
        return Applied(None, payload, {"checkpoint_id": checkpoint_id})

    return command_for(call, apply)


@query(
    "checkpoint.list",
    CheckpointListInput,
    description="List recent checkpoints, newest first.",
)
def checkpoint_list(
    conn: Connection, call: Call[CheckpointListInput], env: Env
) -> CheckpointListResult:
    inp = call.input
    grant = read_scopes(call.grant, None if inp.scope is None else [inp.scope])
    if grant.all_scopes:
        where, params = "1", []
    else:
        where, params = (
            "s.name IN (SELECT value FROM json_each(?))",
            [json.dumps(sorted(grant.scopes))],
        )
    rows = conn.execute(
        "SELECT c.id, s.name, c.summary, c.state, c.created_at, c.provenance FROM checkpoints c "
        f"JOIN scopes s ON s.id = c.scope_id WHERE {where} ORDER BY c.id DESC LIMIT ?",
        (*params, inp.limit),
    ).fetchall()
    checkpoints = [
        CheckpointEntry(
            id=int(r[0]),
            scope=str(r[1]),
            summary=str(r[2]),
            state=json.loads(r[3]),
            created_at=str(r[4]),
            provenance=json.loads(r[5]),
        )
        for r in rows
    ]
    return CheckpointListResult(checkpoints=checkpoints, count=len(checkpoints))
