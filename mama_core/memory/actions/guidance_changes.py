"""guidance.changes: the whole of a guidance delta, when its text did not fit.

A turn's guidance delta is bounded by the guidance budget; what did not fit is
counted in its last line, which names this action with the delta's ``since`` and
``until``. The result lists every change in that range (in the caller's scopes),
retirements first, then revisions, then additions, paged with ``offset``.
"""

from __future__ import annotations

from mama_core.guidance.delta import render_delta
from mama_core.guidance.items import GuidanceItem
from mama_core.memory.dispatcher import Call, Env, query
from mama_core.memory.inputs import GuidanceChangesInput
from mama_core.memory.results import GuidanceChange, GuidanceChangesResult
from mama_core.scopes.bindings import all_scope_names
from mama_core.store.connection import Connection


@query(
    "guidance.changes",
    GuidanceChangesInput,
    description=(
        "Every guidance change (retired, revised, added) between two event ids: what a "
        "turn's guidance delta counted but did not show."
    ),
)
def guidance_changes(
    conn: Connection, call: Call[GuidanceChangesInput], env: Env
) -> GuidanceChangesResult:
    inp = call.input
    scopes = all_scope_names(conn) if call.grant.all_scopes else sorted(call.grant.scopes)
    delta = render_delta(conn, scopes, inp.since, until_event_id=inp.until)
    changes = [
        GuidanceChange(change="retired", id=r.id, kind=r.kind, status=r.status, summary=r.summary)
        for r in delta.retired
    ]
    changes += [
        _item("revised", r.item).model_copy(update={"replaces": list(r.replaces)})
        for r in delta.revised
    ]
    changes += [_item("added", item) for item in delta.added]
    page = changes[inp.offset : inp.offset + inp.limit]
    return GuidanceChangesResult(
        since=delta.since,
        until=delta.watermark,
        total=len(changes),
        offset=inp.offset,
        changes=page,
        more=inp.offset + len(page) < len(changes),
    )


def _item(change: str, item: GuidanceItem) -> GuidanceChange:
    return GuidanceChange(
        change=change,
        id=item.id,
        kind=item.kind,
        topic=item.topic,
        summary=item.summary,
        applies_when=item.applies_when,
        steps=list(item.steps),
    )
