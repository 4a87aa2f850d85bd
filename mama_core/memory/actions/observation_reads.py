"""observation.list / observation.read (owner): the kept observations — the owner's
messages, MAMA's replies and notices, connector items — so the owner can see
what is kept and purge it."""

from __future__ import annotations

from typing import Any

from mama_core.memory.dispatcher import Call, Env, query
from mama_core.memory.errors import NotFoundError
from mama_core.memory.inputs import ObservationListInput, ObservationReadInput
from mama_core.store.connection import Connection

COLUMNS = "o.id, o.source, o.external_id, o.author, o.text, o.received_at, o.purged_at"


def observation_dict(row: tuple[Any, ...]) -> dict[str, Any]:
    """One observation row as callers see it (a purged one has empty text)."""
    return {
        "id": int(row[0]),
        "source": str(row[1]),
        "external_id": str(row[2]),
        "author": str(row[3]),
        "text": str(row[4]),
        "received_at": str(row[5]),
        "purged_at": None if row[6] is None else str(row[6]),
        "purged": row[6] is not None,
    }


def load_observation(conn: Connection, observation_id: int) -> dict[str, Any]:
    """The observation ``observation_id``, or ``not_found``."""
    row = conn.execute(
        f"SELECT {COLUMNS} FROM observations o WHERE o.id = ?", (observation_id,)
    ).fetchone()
    if row is None:
        raise NotFoundError(
            f"No observation {observation_id}.", details={"observation_id": observation_id}
        )
    return observation_dict(row)


@query(
    "observation.list",
    ObservationListInput,
    description="List kept observations (messages, replies, items), newest first.",
    owner_only=True,
)
def observation_list(
    conn: Connection, call: Call[ObservationListInput], env: Env
) -> dict[str, Any]:
    inp = call.input
    where: list[str] = []
    params: list[Any] = []
    if not inp.include_purged:
        where.append("o.purged_at IS NULL")
    if inp.before_id is not None:
        where.append("o.id < ?")
        params.append(inp.before_id)
    if inp.source is not None:
        where.append("o.source = ?")
        params.append(inp.source)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM observations o {clause} ORDER BY o.id DESC LIMIT ?",
        (*params, inp.limit),
    ).fetchall()
    return {"observations": [observation_dict(r) for r in rows]}


@query(
    "observation.read",
    ObservationReadInput,
    description="Read one observation with its text.",
    owner_only=True,
)
def observation_read(
    conn: Connection, call: Call[ObservationReadInput], env: Env
) -> dict[str, Any]:
    inp = call.input
    return {"observation": load_observation(conn, inp.id)}
