"""memory.read: one judgment with provenance, the items it rests on, outcome, a change
waiting for the owner's review, what this reader may do with it (``allowed``), the
record it says again (``restates``, when its save matched one), its replaced
predecessors (labelled, under the same scope predicate) and the events that touched it
(redacted to the caller's scopes)."""

from __future__ import annotations

from typing import TypedDict

from mama_core.errors import NotFoundError
from mama_core.json_types import JsonObject
from mama_core.memory import verbs
from mama_core.memory.commitments import terms_view
from mama_core.memory.dispatcher import Call, Env, query
from mama_core.memory.event_view import visible_events
from mama_core.memory.events import EVENT_COLUMNS, event_from_row
from mama_core.memory.evidence import evidence_ids, evidence_items
from mama_core.memory.inputs import ReadInput
from mama_core.memory.lifecycle import FROM_SAVE
from mama_core.memory.proposed_changes import pending_for
from mama_core.memory.records import load_visible, summary_of
from mama_core.memory.results import (
    CommitmentTermsView,
    HistoryEntry,
    MemoryReadResult,
    MemoryRecord,
    Restated,
)
from mama_core.model import Judgment, Kind
from mama_core.scopes.bindings import scopes_of
from mama_core.scopes.grants import Grant
from mama_core.scopes.reach import scope_filter
from mama_core.store.connection import Connection

MAX_HISTORY = 200


@query(
    "memory.read",
    ReadInput,
    description="Read one judgment with its provenance, replaced predecessors and events.",
)
def read(conn: Connection, call: Call[ReadInput], env: Env) -> MemoryReadResult:
    inp = call.input
    judgment = load_visible(conn, inp.id, call.grant)
    successor = judgment.superseded_by
    if successor is not None and not _visible(conn, successor, call.grant):
        successor = None
    optional = OptionalRecordFields()
    restated = restated_by_save(conn, judgment.id)
    if restated is not None and _visible(conn, restated, call.grant):
        original = load_visible(conn, restated, call.grant)
        optional["restates"] = Restated(id=original.id, summary=original.summary)
    change = pending_for(conn, judgment.id)
    commitment = judgment.kind == Kind.COMMITMENT  # who owes whom by when, at each step
    if commitment:
        optional["commitment"] = terms_view(conn, judgment.id)
    summary = summary_of(judgment, scopes_of(conn, judgment.id), call.grant)
    return MemoryReadResult(
        record=MemoryRecord(
            **summary.model_dump(),
            superseded_by=successor,
            outcome=judgment.outcome,
            provenance=judgment.provenance,
            command_id=judgment.command_id,
            content_hash=judgment.content_hash,
            pending_change=(
                None if change is None else change.shown(for_owner=call.grant.all_scopes)
            ),
            # What this reader may do with it now (the core's table, not each front end's guess).
            allowed=verbs.allowed(
                judgment.status, owner=call.session.is_owner, waiting_change=change is not None
            ),
            # What it rests on: the cited items as the reader may see them (a review shows them).
            evidence=evidence_items(conn, evidence_ids(judgment.provenance), call.grant),
            **optional,
        ),
        history=history(conn, judgment, call.grant, with_terms=commitment),
        events=events_touching(conn, judgment.id, call.grant),
    )


class OptionalRecordFields(TypedDict, total=False):
    """The record's fields only some records carry (left out of the wire when unset)."""

    restates: Restated
    commitment: CommitmentTermsView | None


def history(
    conn: Connection, judgment: Judgment, grant: Grant, *, with_terms: bool = False
) -> list[HistoryEntry]:
    """Predecessors through ``supersedes`` edges, nearest first, never through a record
    the caller cannot see. ``replaced`` when the successor did replace it,
    ``proposed_replacement`` while the successor is only a proposal; ``with_terms``
    adds a commitment's terms at each step."""
    predicate, params = scope_filter("j", grant)
    out: list[HistoryEntry] = []
    seen = {judgment.id}
    frontier = [judgment]
    while frontier and len(out) < MAX_HISTORY:
        successor = frontier.pop(0)
        rows = conn.execute(
            f"SELECT j.id, {FROM_SAVE} FROM edges e JOIN judgments j ON j.id = e.dst_id "
            f"WHERE e.src_id = ? AND e.kind = 'supersedes' AND {predicate} ORDER BY j.id DESC",
            (successor.id, *params),
        ).fetchall()
        for pred_id, from_save in rows:
            if pred_id in seen:
                continue
            pred = load_visible(conn, int(pred_id), grant)
            if pred.superseded_by == successor.id:
                relation = "replaced"
            elif successor.status == "proposed" and from_save:
                relation = "proposed_replacement"
            else:
                continue
            seen.add(pred.id)
            entry = summary_of(pred, scopes_of(conn, pred.id), grant).model_dump()
            if with_terms:
                entry["commitment"] = terms_view(conn, pred.id)
            out.append(HistoryEntry(**entry, relation=relation, replaced_by=successor.id))
            frontier.append(pred)
    return out


def events_touching(
    conn: Connection, judgment_id: int, grant: Grant, until: str | None = None
) -> list[JsonObject]:
    """The events that created or changed a judgment (ids, reasons while they exist; no
    text of a judgment), as ``grant`` may see them (``event_view``: nothing from foreign scopes)."""
    bound = "" if until is None else "AND e.at <= ?"
    rows = conn.execute(
        f"SELECT {', '.join('e.' + c.strip() for c in EVENT_COLUMNS.split(','))} FROM events e "
        "WHERE (e.judgment_id = ? OR EXISTS (SELECT 1 FROM json_each(e.payload, '$.touched') "
        f"WHERE value = ?)) {bound} ORDER BY e.id",
        (judgment_id, judgment_id, *(() if until is None else (until,))),
    ).fetchall()
    return visible_events(conn, [event_from_row(r)[0] for r in rows], grant)


def restated_by_save(conn: Connection, judgment_id: int) -> int | None:
    """The live record a judgment's own save said again (its event names it as
    ``restates``: an agent's proposed merge, or the owner's save kept anyway)."""
    row = conn.execute(
        "SELECT json_extract(payload, '$.restates') FROM events "
        "WHERE judgment_id = ? AND action = 'memory.save' ORDER BY id LIMIT 1",
        (judgment_id,),
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _visible(conn: Connection, judgment_id: int, grant: Grant) -> bool:
    try:
        load_visible(conn, judgment_id, grant)
    except NotFoundError:
        return False
    return True
