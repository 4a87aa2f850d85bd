"""The event history as a caller may see it: nothing from outside its scopes.

An event that touched a record the caller's grant does not see (a save that
replaced a foreign record, a link to one, a retire ``by`` one) is shown
redacted: its action, time and actor, and only the status changes of records
the caller sees, with ``redacted: true`` — no foreign ids, scope names or
reasons. Every event's ``scopes`` list is cut to the caller's scopes. The
owner's grant sees events as they are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from mama_core.json_types import JsonObject
from mama_core.memory.events import Event, event_texts, public_event
from mama_core.scopes.grants import Grant
from mama_core.scopes.reach import scope_filter, visible_scopes
from mama_core.store.connection import Connection


def visible_events(conn: Connection, events: list[Event], grant: Grant) -> list[JsonObject]:
    """``events`` as shown to a caller holding ``grant`` (see the module doc)."""
    texts = event_texts(conn, [e.id for e in events])  # reasons kept beside the chain
    if grant.all_scopes:
        return [public_event(e, texts.get(e.id)) for e in events]
    mentioned: set[int] = set()
    for event in events:
        mentioned |= _mentioned_ids(event)
    seen = _visible_ids(conn, mentioned, grant)
    return [_shown(event, seen, grant, texts.get(event.id)) for event in events]


def _mentioned_ids(event: Event) -> set[int]:
    """Every judgment an event names: its main record and all it touched (the writer
    lists each record a mutation reads or changes in ``touched``)."""
    ids = {int(i) for i in event.payload.get("touched", ()) if isinstance(i, int)}
    for change in event.payload.get("transitions", ()):
        for key in ("id", "superseded_by"):
            if isinstance(change.get(key), int):
                ids.add(int(change[key]))
    if event.judgment_id is not None:
        ids.add(event.judgment_id)
    return ids


def _visible_ids(conn: Connection, ids: Iterable[int], grant: Grant) -> set[int]:
    wanted = sorted(set(ids))
    if not wanted:
        return set()
    predicate, params = scope_filter("j", grant)
    rows = conn.execute(
        f"SELECT j.id FROM judgments j WHERE j.id IN (SELECT value FROM json_each(?)) "
        f"AND {predicate}",
        (json.dumps(wanted), *params),
    ).fetchall()
    return {int(r[0]) for r in rows}


def _shown(
    event: Event, seen: set[int], grant: Grant, texts: dict[str, str | None] | None
) -> JsonObject:
    shown = public_event(event, texts)
    if _mentioned_ids(event) <= seen:
        payload = dict(shown["payload"])
        if isinstance(payload.get("scopes"), list):
            payload["scopes"] = visible_scopes(payload["scopes"], grant)
        shown["payload"] = payload
        return shown
    transitions: list[dict[str, Any]] = []
    for change in event.payload.get("transitions", ()):
        if change.get("id") not in seen:
            continue
        kept = dict(change)
        if kept.get("superseded_by") is not None and kept["superseded_by"] not in seen:
            kept["superseded_by"] = None
        transitions.append(kept)
    touched = [i for i in event.payload.get("touched", ()) if i in seen]
    shown["judgment_id"] = event.judgment_id if event.judgment_id in seen else None
    shown["payload"] = {"transitions": transitions, "touched": touched, "redacted": True}
    return shown
