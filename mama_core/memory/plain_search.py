"""memory.search, plain version: FTS5 words, filtered in SQL before the LIMIT.

User text never reaches FTS5 syntax: every token is quoted (inner quotes
doubled) and the tokens are OR-ed, ranked by BM25. The scope, status and kind
predicates sit in the same statement as the LIMIT, so foreign or retired rows
never crowd out believable ones. Hybrid recall replaces this behind the same
action later.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from mama_core.memory.dispatcher import Call
from mama_core.memory.errors import NotGrantedError
from mama_core.memory.grants import Grant
from mama_core.memory.inputs import SearchInput
from mama_core.memory.records import Judgment, select_columns, summary_dict
from mama_core.memory.scopes import read_scopes, scope_filter
from mama_core.store.connection import Connection

MAX_TOKENS = 64


def quote_fts(text: str) -> str | None:
    """An FTS5 query matching any of the words of ``text``, each quoted; None if empty."""
    # FTS5 reads a NUL as the end of the query; control characters are never words.
    cleaned = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    tokens = cleaned.split()[:MAX_TOKENS]
    if not tokens:
        return None
    return " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)


def search(conn: Connection, call: Call[SearchInput]) -> dict[str, Any]:
    """Run memory.search for ``call`` on a read connection."""
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
    judgments = find(conn, grant, inp.query, statuses, kinds, inp.limit)
    scopes = scopes_by_id(conn, [j.id for j in judgments])
    results = [summary_dict(j, scopes.get(j.id, []), grant) for j in judgments]
    return {"results": results, "count": len(results)}


def find(
    conn: Connection,
    grant: Grant,
    query: str,
    statuses: list[str],
    kinds: list[str] | None,
    limit: int,
) -> list[Judgment]:
    """Judgments matching ``query`` under the grant, statuses and kinds, best first."""
    predicate, params = scope_filter("j", grant)
    where = [predicate, "j.status IN (SELECT value FROM json_each(?))"]
    params.append(json.dumps(statuses))
    if kinds is not None:
        where.append("j.kind IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(kinds))
    match = quote_fts(query)
    if match is None:
        sql = (
            f"SELECT {select_columns('j')} FROM judgments j WHERE {' AND '.join(where)} "
            "ORDER BY j.recorded_at DESC, j.id DESC LIMIT ?"
        )
        rows = conn.execute(sql, (*params, limit)).fetchall()
    else:
        sql = (
            f"SELECT {select_columns('j')} FROM judgments_fts "
            "JOIN judgments j ON j.id = judgments_fts.rowid "
            f"WHERE judgments_fts MATCH ? AND {' AND '.join(where)} "
            "ORDER BY bm25(judgments_fts), j.id DESC LIMIT ?"
        )
        rows = conn.execute(sql, (match, *params, limit)).fetchall()
    return [Judgment.from_row(r) for r in rows]


def scopes_by_id(conn: Connection, ids: Iterable[int]) -> dict[int, list[str]]:
    """Scope names of several judgments at once."""
    out: dict[int, list[str]] = {}
    rows = conn.execute(
        "SELECT sb.judgment_id, s.name FROM scope_bindings sb JOIN scopes s ON s.id = sb.scope_id "
        "WHERE sb.judgment_id IN (SELECT value FROM json_each(?)) ORDER BY s.name",
        (json.dumps(list(ids)),),
    ).fetchall()
    for judgment_id, name in rows:
        out.setdefault(int(judgment_id), []).append(str(name))
    return out
