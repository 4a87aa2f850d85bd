"""memory.search without words: the newest records, filtered in SQL before the LIMIT.

Hybrid search (``hybrid_search``) hands a query with no words here. The scope,
status and kind predicates sit in the same statement as the LIMIT, so foreign or
retired rows never crowd out believable ones.
"""

from __future__ import annotations

import json

from mama_core.errors import NotGrantedError
from mama_core.memory.dispatcher import Call
from mama_core.memory.inputs import SearchInput
from mama_core.memory.records import summary_of
from mama_core.memory.results import JudgmentSummary
from mama_core.model import Judgment, select_columns
from mama_core.scopes.bindings import scopes_by_id
from mama_core.scopes.grants import Grant
from mama_core.scopes.reach import read_scopes, scope_filter
from mama_core.store.connection import Connection


def search(conn: Connection, call: Call[SearchInput]) -> list[JudgmentSummary]:
    """Run a memory.search with no words for ``call`` on a read connection."""
    inp = call.input
    statuses = ["active"]
    if inp.statuses is not None:
        statuses = sorted({s.value for s in inp.statuses})
        if statuses != ["active"] and not call.session.is_owner:
            raise NotGrantedError(
                "Only the owner may search records that are not active.",
                details={"statuses": statuses},
            )
    grant = read_scopes(call.grant, inp.scopes)
    kinds = None if inp.kinds is None else sorted({k.value for k in inp.kinds})
    judgments = find(conn, grant, statuses, kinds, inp.limit)
    scopes = scopes_by_id(conn, [j.id for j in judgments])
    return [summary_of(j, scopes.get(j.id, []), grant) for j in judgments]


def find(
    conn: Connection,
    grant: Grant,
    statuses: list[str],
    kinds: list[str] | None,
    limit: int,
) -> list[Judgment]:
    """The newest judgments under the grant, statuses and kinds."""
    predicate, params = scope_filter("j", grant)
    where = [predicate, "j.status IN (SELECT value FROM json_each(?))"]
    params.append(json.dumps(statuses))
    if kinds is not None:
        where.append("j.kind IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(kinds))
    sql = (
        f"SELECT {select_columns('j')} FROM judgments j WHERE {' AND '.join(where)} "
        "ORDER BY j.recorded_at DESC, j.id DESC LIMIT ?"
    )
    rows = conn.execute(sql, (*params, limit)).fetchall()
    return [Judgment.from_row(r) for r in rows]
