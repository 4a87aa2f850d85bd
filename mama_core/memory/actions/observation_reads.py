"""observation.list / observation.read: the kept observations — the owner's
messages, MAMA's replies and notices, connector items.

The owner sees every one (to see what is kept and purge it). An agent sees only
connector items whose scope (``observation_facets.scope``) its grant holds: the
same rule as for judgments, applied in the query before the limit, so a foreign
item never takes a place in the page. Observations without a scope (the owner's
messages, replies) are the owner's alone here.
"""

from __future__ import annotations

import json
from typing import Any

from mama_core.errors import NotFoundError
from mama_core.memory.dispatcher import Call, Env, query
from mama_core.memory.inputs import (
    ObservationCountsInput,
    ObservationListInput,
    ObservationReadInput,
)
from mama_core.memory.results import (
    Observation,
    ObservationCount,
    ObservationCountsResult,
    ObservationListResult,
    ObservationReadResult,
)
from mama_core.scopes.grants import Grant
from mama_core.store.connection import Connection

COLUMNS = "o.id, o.source, o.external_id, o.author, o.text, o.received_at, o.purged_at"
FACET_COLUMNS = "f.channel, f.scope, f.metadata"
FACETS_JOIN = "LEFT JOIN observation_facets f ON f.observation_id = o.id"


def visible_clause(grant: Grant) -> tuple[str, list[Any]]:
    """The predicate (on ``o``, with ``f`` joined) limiting observations to ``grant``."""
    if grant.all_scopes:
        return "1", []
    scopes = sorted(grant.scopes)
    if not scopes:
        return "0", []
    return f"f.scope IN ({', '.join('?' for _ in scopes)})", list(scopes)


def observation_of(row: tuple[Any, ...]) -> Observation:
    """One observation row as callers see it (a purged one has empty text); with
    ``FACET_COLUMNS`` after ``COLUMNS``, its channel, scope and metadata too."""
    item: dict[str, Any] = {
        "id": int(row[0]),
        "source": str(row[1]),
        "external_id": str(row[2]),
        "author": str(row[3]),
        "text": str(row[4]),
        "received_at": str(row[5]),
        "purged_at": None if row[6] is None else str(row[6]),
        "purged": row[6] is not None,
    }
    if len(row) > 7:
        item["channel"] = None if row[7] is None else str(row[7])
        item["scope"] = None if row[8] is None else str(row[8])
        item["metadata"] = {} if row[9] is None else json.loads(str(row[9]))
    return Observation(**item)


def load_observation(
    conn: Connection, observation_id: int, grant: Grant | None = None
) -> Observation:
    """The observation ``observation_id`` (if ``grant`` sees it), or ``not_found``."""
    visible, params = visible_clause(grant or Grant.owner())
    row = conn.execute(
        f"SELECT {COLUMNS}, {FACET_COLUMNS} FROM observations o {FACETS_JOIN} "
        f"WHERE o.id = ? AND {visible}",
        (observation_id, *params),
    ).fetchone()
    if row is None:
        raise NotFoundError(
            f"No observation {observation_id}.", details={"observation_id": observation_id}
        )
    return observation_of(row)


@query(
    "observation.list",
    ObservationListInput,
    description="List kept observations (messages, replies, connector items) within your "
    "scopes, newest first.",
)
def observation_list(
    conn: Connection, call: Call[ObservationListInput], env: Env
) -> ObservationListResult:
    inp = call.input
    visible, params = visible_clause(call.grant)
    where: list[str] = [visible]
    if not inp.include_purged:
        where.append("o.purged_at IS NULL")
    if inp.before_id is not None:
        where.append("o.id < ?")
        params.append(inp.before_id)
    if inp.source is not None:
        where.append("o.source = ?")
        params.append(inp.source)
    clause = f"WHERE {' AND '.join(where)}"
    rows = conn.execute(
        f"SELECT {COLUMNS}, {FACET_COLUMNS} FROM observations o {FACETS_JOIN} {clause} "
        "ORDER BY o.id DESC LIMIT ?",
        (*params, inp.limit),
    ).fetchall()
    return ObservationListResult(observations=[observation_of(r) for r in rows])


@query(
    "observation.read",
    ObservationReadInput,
    description="Read one observation (e.g. obs:12 from a source delta) with its text, "
    "if it is within your scopes.",
)
def observation_read(
    conn: Connection, call: Call[ObservationReadInput], env: Env
) -> ObservationReadResult:
    inp = call.input
    return ObservationReadResult(observation=load_observation(conn, inp.id, call.grant))


@query(
    "observation.counts",
    ObservationCountsInput,
    description="Count kept connector items (not purged) per source and channel, after an "
    "observation id, within your scopes; with the newest observation id you may see.",
)
def observation_counts(
    conn: Connection, call: Call[ObservationCountsInput], env: Env
) -> ObservationCountsResult:
    visible, params = visible_clause(call.grant)
    rows = conn.execute(
        "SELECT o.source, f.channel, count(*), max(o.id) FROM observations o "
        f"JOIN observation_facets f ON f.observation_id = o.id WHERE {visible} "
        "AND o.id > ? AND o.purged_at IS NULL GROUP BY o.source, f.channel "
        "ORDER BY o.source, f.channel",
        (*params, call.input.after_id),
    ).fetchall()
    newest = conn.execute(
        f"SELECT max(o.id) FROM observations o {FACETS_JOIN} WHERE {visible}", params
    ).fetchone()
    return ObservationCountsResult(
        counts=[
            ObservationCount(
                source=str(r[0]), channel=str(r[1]), count=int(r[2]), last_id=int(r[3])
            )
            for r in rows
        ],
        newest_id=None if newest is None or newest[0] is None else int(newest[0]),
    )
