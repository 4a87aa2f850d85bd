"""memory.search through hybrid recall (BM25 + exact vectors, fused by RRF).

Records within the top-k that say the same thing (``restatements``: same kind,
status and scopes, the same meaning by vectors and words) come back as one result,
the best-ranked, listing the others under ``also_said_as``; so ``count`` is the
number of groups, at most ``limit``.

The action's rules stay the plain search's: beliefs only unless the owner
asks for other statuses, scopes bounded by the grant (a foreign scope is
refused, never narrowed). Recall then applies the same predicate before any
top-K. An empty query has no words to rank by, so it lists the newest
records through the plain search — without loading the vector cache, which
the first ranked search pays for.
"""

from __future__ import annotations

import json
from typing import Any

from mama_core.errors import NotGrantedError
from mama_core.memory import plain_search, proposed_changes, verbs
from mama_core.memory.commitments import terms_view
from mama_core.memory.dispatcher import Call, Env, query
from mama_core.memory.inputs import SearchInput
from mama_core.memory.provenance import origin_line
from mama_core.memory.restatements import HitFacts, group_hits, said
from mama_core.memory.results import SearchHit, SearchResult
from mama_core.recall import RecallHit, RecallQuery
from mama_core.scopes.bindings import all_scope_names
from mama_core.scopes.grants import Grant
from mama_core.scopes.reach import read_scopes, visible_scopes
from mama_core.store.connection import Connection


@query(
    "memory.search",
    SearchInput,
    description=(
        "Search believed (active) judgments in your scopes by words; records that say the "
        "same thing come back as one result listing the others under `also_said_as`."
    ),
)
def search(conn: Connection, call: Call[SearchInput], env: Env) -> SearchResult:
    """Run memory.search for ``call``; ``env.recall()`` gives hybrid recall (made on first use)."""
    inp = call.input
    if not inp.query.strip():
        listed = [hit.model_dump() for hit in plain_search.search(conn, call)]
        return _result(conn, listed, call)
    statuses = ["active"]
    if inp.statuses is not None:
        statuses = sorted({s.value for s in inp.statuses})
        if statuses != ["active"] and not call.session.is_owner:
            raise NotGrantedError(
                "Only the owner may search records that are not active.",
                details={"statuses": statuses},
            )
    grant = read_scopes(call.grant, inp.scopes)
    scopes = all_scope_names(conn) if grant.all_scopes else sorted(grant.scopes)
    query = RecallQuery(
        text=inp.query,
        scopes=scopes,
        kinds=None if inp.kinds is None else sorted({k.value for k in inp.kinds}),
        statuses=statuses,
        limit=inp.limit,
        include_history=inp.include_history,
    )
    hits = env.recall().search(query)
    provenance = _provenance(conn, [hit.id for hit in hits])
    groups = group_hits(
        conn,
        hits,
        _facts,
        env.model_id,
        env.restatement_threshold,
        env.swap_same_meaning,
    )
    results: list[dict[str, Any]] = []
    for lead, *others in groups:
        result = _hit_dict(lead, grant, provenance.get(lead.id, {}))
        if others:
            result["also_said_as"] = [{"id": h.id, "summary": h.summary} for h in others]
        results.append(result)
    return _result(conn, results, call)


def _result(conn: Connection, hits: list[dict[str, Any]], call: Call[SearchInput]) -> SearchResult:
    """The hits as results: each commitment with its terms (``_with_terms``), each hit
    with what this reader may do with it now (``verbs.allowed``), as ``memory.read``
    gives it: the lists' buttons follow it without reading each record."""
    waiting = proposed_changes.waiting_on(conn, [int(hit["id"]) for hit in hits])
    results = [
        SearchHit(
            **_with_terms(conn, hit),
            allowed=verbs.allowed(
                str(hit["status"]),
                owner=call.session.is_owner,
                waiting_change=hit["id"] in waiting,
            ),
        )
        for hit in hits
    ]
    return SearchResult(results=results, count=len(results))


def _facts(hit: RecallHit) -> HitFacts:
    """What grouping compares: a search shows records that say the same as one result."""
    return HitFacts(
        id=hit.id,
        kind=hit.kind,
        status=hit.status,
        scopes=frozenset(hit.scopes),
        text=said(hit.summary, hit.applies_when),
        summary=hit.summary,
        groupable=hit.label == "match",
    )


def _with_terms(conn: Connection, hit: dict[str, Any]) -> dict[str, Any]:
    """A commitment hit with its terms (who owes whom by when, open, done or
    dropped), as ``memory.read`` gives them: a done commitment's status is ``active``,
    and only its state says it is closed."""
    if hit.get("kind") == "commitment":
        hit["commitment"] = terms_view(conn, int(hit["id"]))
    return hit


def _provenance(conn: Connection, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Each hit's provenance, for its origin line."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT id, provenance FROM judgments WHERE id IN ({marks})", ids
    ).fetchall()
    return {int(jid): json.loads(str(raw)) for jid, raw in rows}


def _hit_dict(hit: RecallHit, grant: Grant, provenance: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": hit.id,
        "kind": hit.kind,
        "topic": hit.topic,
        "summary": hit.summary,
        "details": hit.details,
        "applies_when": hit.applies_when,
        "steps": list(hit.steps),
        "status": hit.status,
        "scopes": visible_scopes(hit.scopes, grant),
        "valid_from": hit.valid_from,
        "valid_until": hit.valid_until,
        "recorded_at": hit.recorded_at,
        "involvement": hit.involvement,
        "origin": origin_line(provenance, hit.involvement, hit.status),
        "label": hit.label,
        "score": round(hit.score, 6),
        "found_by": list(hit.found_by),
    }
    if hit.replaced_by is not None:
        out["replaced_by"] = hit.replaced_by
    return out
